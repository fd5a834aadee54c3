"""Chapter 02's claims: key salting (seed 000's "salting and its shortcomings").

The seed: salting spreads a hot key over several subtasks, but a running aggregate emitted per
salted sub-key double counts downstream, and a key's records no longer pass one subtask in
order. These claims read what the notebook computes (no benchmark, so no reference):
``subtask_loads`` (records per subtask, keyed by tweet and by (tweet, salt)), ``salted_counter``
and ``lifecycle`` (:func:`skewlab.experiments.salting.lifecycle_table`).

All three are exact: records per subtask and the salted sum are counts of a deterministic
routing and reduce; the order violations vary with the order the exchange delivers blocks in,
but what the claim checks (some in the salted run, none in the buffered one) rests on a share
of about 3/16 of thousands of users on one side and on a keyed path that cannot reorder on the
other.
"""

from __future__ import annotations

from skewlab.experiments.claims import Claim

__all__ = ["CLAIMS"]


def _max_over_mean(frame) -> float | None:
    mean = frame["records"].mean()
    return float(frame["records"].max() / mean) if mean else None


def _order(table, strategy: str):
    mine = table[table["strategy"] == strategy]
    return int(mine["order_violations"].sum()) if len(mine) else None


CLAIMS = (
    Claim(
        id="salting_spreads_the_load",
        source="subtask_loads",
        statement="Salting spreads a hot key's records: the busiest subtask's load falls.",
        measured=(
            "busiest subtask / mean: {by_tweet:.2f} keyed by tweet, {salted:.2f} keyed by "
            "(tweet, salt)"
        ),
        figures=lambda loads: {
            "by_tweet": _max_over_mean(loads["keyBy tweet"]),
            "salted": _max_over_mean(loads["keyBy (tweet, salt)"]),
        },
        check=lambda f: f["salted"] < f["by_tweet"],
        seed="salting spreads a key over subtasks (the article)",
        why="A key's salted sub-keys hash to different key groups; with few tweets they may "
        "still collide on a subtask.",
        exact=True,
    ),
    Claim(
        id="running_partials_double_count",
        source="salted_counter",
        statement=(
            "Summing salted sub-keys' running partials downstream double counts: the sum "
            "exceeds the true view count."
        ),
        measured="the salted sum over the true count: up to {worst:.1f}x (hottest tweet)",
        figures=lambda counter: {"worst": float(counter.table["over_count"].max())},
        check=lambda f: f["worst"] > 1,
        seed="the article: a naive sum of partials double counts",
        why="Every running partial is emitted and added again downstream.",
        exact=True,
    ),
    Claim(
        id="salting_loses_order",
        source="lifecycle",
        statement=(
            "Salting loses a key's order: some users' events arrive out of order, while the "
            "buffer (keyed by the user) keeps every one in order."
        ),
        measured="order violations: salted {salted:,}, buffered {buffered:,}",
        figures=lambda table: {
            "salted": _order(table, "salted"),
            "buffered": _order(table, "buffered"),
        },
        check=lambda f: f["salted"] > 0 and f["buffered"] == 0,
        seed="the article: salting breaks per-key ordering",
        why="A user's salted sub-keys run on different subtasks, which the exchange merges in "
        "whatever order they arrive; with parallelism 1 nothing can reorder.",
        exact=True,
    ),
)
