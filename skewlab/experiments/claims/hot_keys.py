"""Chapter 00's claims: what a hot key does to per-key and per-subtask load (seed 000).

They read the notebook's ``subtask_loads``: ``{label: subtask_load(...)}`` for uniform views
first and Zipf views second (:func:`skewlab.engine.routing.subtask_load`).
"""

from __future__ import annotations

from skewlab.experiments.claims import Claim

__all__ = ["CLAIMS"]


def _busiest(loads):
    if len(loads) < 2:
        return None
    (uniform, u), (zipf, z) = list(loads.items())[:2]
    return {
        "uniform": float(u["records"].max() / u["records"].mean()),
        "zipf": float(z["records"].max() / z["records"].mean()),
        "hot_share": float(z["hottest_key_records"].max() / z["records"].sum()),
    }


CLAIMS = (
    Claim(
        id="hot_key_overloads_a_subtask",
        source="subtask_loads",
        statement=(
            "Skewed keys overload one subtask: its load over the mean is higher under Zipf "
            "views than under uniform views."
        ),
        measured=(
            "busiest subtask / mean: {zipf:.2f} under Zipf (hottest tweet {hot_share:.1%} of "
            "the views), {uniform:.2f} under uniform"
        ),
        figures=_busiest,
        check=lambda f: f["zipf"] > f["uniform"],
        seed="the article: a few hot tweets get most of the views, on one subtask each",
        why="Every record of a key goes to the one subtask that owns its key group.",
        exact=True,
    ),
)
