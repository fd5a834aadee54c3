"""Each benchmark's headline ratios, and a quick run's held against a full run's.

The headline ratios of a benchmark, with the seed's figure beside each, are its chapter record's
(:func:`skewlab.experiments.chapters.headline_ratios`). The quick size exists so that a first
``skewlab report`` takes minutes, not hours; :func:`compare_sizes` puts a quick and a full run
side by side from the result files ``skewlab bench BENCHMARK --size quick|full`` wrote
(``skewlab bench compare`` prints it), with :data:`TOLERANCE` as the mark; without a full
result file of one's own, the full side is the benchmark's shipped reference
(:mod:`skewlab.experiments.references`), and the row says whether that reference was measured
by the running code. Such a comparison
says something about the sizes only when one machine measured both files (``same_machine`` in
each row; see :mod:`skewlab.experiments.machine`): a file from another machine differs by that
machine too.

Example::

    >>> rows = compare_summaries("state_cache", {"speedup_1000": 20.0}, {"speedup_1000": 22.0})
    >>> row = next(r for r in rows if r["ratio"] == "speedup_1000")
    >>> round(row["difference"], 3), row["within"], row["same_direction"], row["seed"]
    (-0.091, True, True, 21.6)
    >>> next(r for r in rows if r["ratio"] == "speedup_250")["within"] is None  # not measured
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skewlab.experiments.chapters import BENCHMARKS, benchmark, headline_ratios
from skewlab.experiments.intervals import summary_estimate
from skewlab.experiments.machine import same_machine
from skewlab.experiments.references import load_reference, reference_status
from skewlab.experiments.results import latest_result

__all__ = ["TOLERANCE", "compare_sizes", "compare_summaries", "compared_benchmarks"]

#: How far a quick headline ratio may lie from the full one (relative).
TOLERANCE = 0.15


def compared_benchmarks() -> list[str]:
    """The benchmarks with headline ratios, in the registry's order."""
    return [b.id for b in BENCHMARKS.values() if headline_ratios(b.id)]


def compare_summaries(
    experiment: str,
    quick: dict[str, Any],
    full: dict[str, Any],
    tolerance: float = TOLERANCE,
) -> list[dict[str, Any]]:
    """One row per headline ratio of ``experiment``: its quick and full values, the seed's
    figure, the relative difference ``quick / full - 1`` and whether that is within
    ``tolerance``, each side's :class:`~skewlab.experiments.intervals.Estimate` (``None`` where
    not measured) and whether their intervals overlap."""
    rows = []
    for key, seed in headline_ratios(experiment).items():
        q, f = quick.get(key), full.get(key)
        difference = q / f - 1 if q is not None and f else None
        intervals = {
            side: summary_estimate({"summary": summary}, key)
            for side, summary in (("quick", quick), ("full", full))
        }
        rows.append({
            "experiment": benchmark(experiment).id, "ratio": key, "quick": q, "full": f,
            "seed": seed, "difference": difference,
            "within": None if difference is None else abs(difference) <= tolerance,
            # what a quick run is for: the lesson's direction (which side of 1 the ratio lies)
            "same_direction": None if difference is None else (q > 1) == (f > 1),
            "quick_interval": intervals["quick"], "full_interval": intervals["full"],
            # two sizes agree where their intervals overlap (None: one has no interval)
            "intervals_overlap": _overlap(intervals["quick"], intervals["full"]),
        })  # fmt: skip
    return rows


def _overlap(a, b) -> bool | None:
    if a is None or b is None or not a.has_interval or not b.has_interval:
        return None
    return a.low <= b.high and b.low <= a.high


def compare_sizes(
    experiments: list[str] | None = None,
    directory: Path | None = None,
    tolerance: float = TOLERANCE,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The newest quick and full result files of each benchmark, compared
    (:func:`compare_summaries`), each row with ``quick_machine``, ``full_machine`` and
    ``same_machine`` (``None``: not known); and the benchmarks missing a file, each with the
    command that writes it."""
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    for experiment in experiments or compared_benchmarks():
        found = {s: latest_result(experiment, directory, size=s) for s in ("quick", "full")}
        full_source = "result file"
        if found["full"] is None:  # no full run of one's own: the shipped reference
            found["full"] = load_reference(experiment)
            full_source = "reference"
        absent = [s for s, result in found.items() if result is None]
        if absent:
            missing += [f"skewlab bench {experiment} --size {s}" for s in absent]
            continue
        quick, full = found["quick"]["summary"], found["full"]["summary"]
        machines = {
            "quick_machine": quick.get("machine"),
            "full_machine": full.get("machine"),
            "same_machine": same_machine(quick.get("machine"), full.get("machine")),
            "full_source": full_source,
            "reference_status": reference_status(found["full"])
            if full_source == "reference"
            else None,
        }
        rows += [row | machines for row in compare_summaries(experiment, quick, full, tolerance)]
    return rows, missing
