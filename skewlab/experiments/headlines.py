"""Each benchmark's headline ratios, and a quick profile's held against the full profile's.

The quick profile exists so that a first ``skewlab report`` takes minutes, not hours; it must still
teach each lesson, which here means: every headline ratio of a quick run within
:data:`TOLERANCE` of the same ratio of a full run. :func:`compare_profiles` puts the two side
by side from the result files ``skewlab bench EXPERIMENT --profile quick|full`` wrote
(``skewlab bench compare`` prints it). Such a comparison says something about the profiles only
when one machine measured both files (``same_machine`` in each row; see
:mod:`skewlab.experiments.machine`): a file from another machine differs by that machine too.

Example::

    >>> rows = compare_summaries("cache", {"speedup_1000": 20.0}, {"speedup_1000": 22.0})
    >>> row = next(r for r in rows if r["ratio"] == "speedup_1000")
    >>> round(row["difference"], 3), row["within"]
    (-0.091, True)
    >>> next(r for r in rows if r["ratio"] == "speedup_250")["within"] is None  # not measured
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skewlab.experiments import cache, sorted_input, value_state
from skewlab.experiments.machine import same_machine
from skewlab.experiments.results import latest_result

__all__ = ["HEADLINE_RATIOS", "TOLERANCE", "compare_profiles", "compare_summaries"]

#: How far a quick headline ratio may lie from the full one (relative).
TOLERANCE = 0.15

#: experiment (as in ``skewlab bench EXPERIMENT``) -> its headline ratios (summary keys).
HEADLINE_RATIOS: dict[str, tuple[str, ...]] = {
    "buffering": ("speedup_at_20_keys", "speedup_at_20_keys_list"),
    "cache": tuple(
        f"speedup_{size}{suffix}" for suffix in ("", "_batched") for size in cache.SEED_SIZES
    ),
    "sorted": tuple(sorted_input.seed_ratios("int")),  # the ratios the seed published
    "value-state": tuple(
        f"{name}_{value_state.SHORT_NAMES[op]}"
        for name in value_state.RATIOS
        for op in value_state.OPERATIONS
    ),
    "rescale": ("bytes_read_ratio_naive_over_keygroups", "requests_ratio_index_over_keygroups"),
    "streaming": ("per_batch_over_per_record_at_20_keys", "builtin_over_per_batch_at_20_keys"),
}


def compare_summaries(
    experiment: str,
    quick: dict[str, Any],
    full: dict[str, Any],
    tolerance: float = TOLERANCE,
) -> list[dict[str, Any]]:
    """One row per headline ratio of ``experiment``: its quick and full values, the relative
    difference ``quick / full - 1`` and whether that is within ``tolerance``."""
    rows = []
    for key in HEADLINE_RATIOS[experiment]:
        q, f = quick.get(key), full.get(key)
        difference = q / f - 1 if q is not None and f else None
        rows.append({
            "experiment": experiment, "ratio": key, "quick": q, "full": f,
            "difference": difference,
            "within": None if difference is None else abs(difference) <= tolerance,
        })  # fmt: skip
    return rows


def compare_profiles(
    experiments: list[str] | None = None,
    directory: Path | None = None,
    tolerance: float = TOLERANCE,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The newest quick and full result files of each experiment, compared
    (:func:`compare_summaries`), each row with ``quick_machine``, ``full_machine`` and
    ``same_machine`` (``None``: not known); and the experiments missing a file, each with the
    command that writes it."""
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    for experiment in experiments or list(HEADLINE_RATIOS):
        found = {p: latest_result(experiment, directory, profile=p) for p in ("quick", "full")}
        absent = [p for p, result in found.items() if result is None]
        if absent:
            missing += [f"skewlab bench {experiment} --profile {p}" for p in absent]
            continue
        quick, full = found["quick"]["summary"], found["full"]["summary"]
        machines = {
            "quick_machine": quick.get("machine"),
            "full_machine": full.get("machine"),
            "same_machine": same_machine(quick.get("machine"), full.get("machine")),
        }
        rows += [row | machines for row in compare_summaries(experiment, quick, full, tolerance)]
    return rows, missing
