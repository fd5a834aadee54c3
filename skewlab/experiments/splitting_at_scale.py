"""Key splitting's job throughput beyond this machine, simulated from measured per-record costs.

Two cores cannot show what a hot key does to ``p = 128`` subtasks, so this module models it --
and every figure it gives is named *simulated*. The model, and where each of its numbers comes
from:

* **Loads**: the records each subtask of each keyed stage receives at ``p`` -- the very senders
  the runs use, routing the same views' keys (:func:`~skewlab.experiments.splitting.routed_loads`).
  Naive has one keyed stage. Salting and the splitting schemes have two: the partial stage the
  routing decides, and the merge, keyed by the tweet, which receives **one partial per input
  record** (the partial stage emits a running partial per record, as every stage here emits
  per record), so the merge's loads are naive's.
* **Per-record costs**, measured by the same bench at the smallest parallelism it ran (its
  *calibration point*), each by the slope between the bench's two input sizes (so set-up
  costs cancel): each stage's operator seconds per record (median over rounds), and one cost
  outside the operators, ``outside`` -- the source, the upstream map, the shuffle and the
  engine's floor per record -- taken from naive's runs there: its job time by slope over its
  busiest subtask's records, less its operator cost per record (naive's job time is its
  busiest subtask's). Every stage's record pays ``outside``.
* **Job time** at ``p``, one core per subtask slot: either the stages **in turn**, as Spark runs
  them (a shuffle is a stage barrier): the sum over stages of the busiest subtask's
  ``records * (operator cost + outside)``; or **pipelined**, as Flink runs them (each slot holds
  one subtask of every stage, sharing its core): the busiest slot's sum over stages.
* **Throughput**: the records over that job time; the speedup over naive's at the same ``p``.
  Beside it, the partial stage's alone (``partial_stage_only``: the merge costing nothing): the
  ceiling of a merge that received far fewer partials than records.

The model is checked where it can be: at the calibration point it predicts each side's job time
from that run's own stage loads, and :func:`check_against_runs` puts the prediction beside the
measured job time by slope (naive's is exact by construction).

**The costs' spread, carried through.** The costs are medians over the rounds, and the rounds
spread; :func:`resampled_calibrations` recalibrates over bootstrap resamples of each side's
rounds (each side resampled on its own), and :func:`simulated_with_intervals` repeats the
simulation at each, so that every simulated speedup carries the central 95 % of what the
resamples give (one round: no interval).

Example::

    >>> costs = {"naive": [2e-6], "pkg": [2e-6, 3e-6]}
    >>> naive = [np.array([90, 10])]
    >>> pkg = [np.array([50, 50]), np.array([90, 10])]
    >>> round(job_seconds(naive, costs["naive"], 1e-6), 6)
    0.00027
    >>> round(job_seconds(pkg, costs["pkg"], 1e-6), 6), round(job_seconds(pkg, costs["pkg"], 1e-6, pipelined=True), 6)
    (0.00051, 0.00051)
"""  # noqa: E501

from __future__ import annotations

from statistics import median
from typing import Any

import numpy as np

from skewlab.experiments.intervals import BOOTSTRAP, CONFIDENCE, Estimate

__all__ = [
    "MODES",
    "SIMULATION_RESAMPLES",
    "calibration",
    "check_against_runs",
    "job_seconds",
    "resampled_calibrations",
    "simulated_throughput",
    "simulated_with_intervals",
]

#: How the stages share the cores: one after the other (Spark) or pipelined in slots (Flink).
MODES = ("in_turn", "pipelined")
#: Resamples of the rounds the simulation is repeated over (fixed seed: reproducible).
SIMULATION_RESAMPLES = 1_000
#: The simulated figures that carry an interval.
SPREAD_FIGURES = (
    "speedup_over_naive_in_turn",
    "speedup_over_naive_pipelined",
    "speedup_over_naive_partial_stage_only",
    "over_pkg_in_turn",
)


def job_seconds(
    loads: list[np.ndarray], costs: list[float], outside: float, *, pipelined: bool = False
) -> float:
    """The modelled job time: ``loads[s][j]`` records reach subtask ``j`` of stage ``s``, each
    costing ``costs[s] + outside`` seconds; stages in turn (the sum of each stage's busiest
    subtask) or ``pipelined`` (the busiest slot's sum over stages).

    Example::

        >>> job_seconds([np.array([3, 1]), np.array([1, 3])], [1.0, 1.0], 0.0)
        6.0
        >>> job_seconds([np.array([3, 1]), np.array([1, 3])], [1.0, 1.0], 0.0, pipelined=True)
        4.0
    """
    if len(loads) != len(costs):
        raise ValueError(f"{len(loads)} stages' loads but {len(costs)} stages' costs")
    per_stage = [
        np.asarray(load, dtype=float) * (cost + outside)
        for load, cost in zip(loads, costs, strict=True)
    ]
    if pipelined:
        return float(np.sum(per_stage, axis=0).max())
    return float(sum(stage.max() for stage in per_stage))


def calibration(rows: list[dict], workload: str, parallelism: int) -> dict[str, Any] | None:
    """Per-record costs measured at ``parallelism`` on ``workload``: each side's operator
    seconds per record of each stage (median over rounds), and naive's cost outside the
    operators per record of its busiest subtask; ``runs``: the fewest rounds of a side;
    ``None`` when naive did not run there, or its job took no longer over the larger input than
    over the smaller (the median slope not positive: the two sizes' times within their noise).

    Example::

        >>> stage = {"subtask_records": [600, 400], "subtask_operator_seconds": [0.3, 0.2],
        ...          "operator_seconds_per_record": 0.0005}
        >>> row = {"workload": "w", "parallelism": 2, "strategy": "naive",
        ...        "job_seconds_by_slope": 1.0, "stages": [stage]}
        >>> c = calibration([row], "w", 2)
        >>> c["costs"]["naive"], round(c["outside_seconds_per_record"], 6), c["runs"]
        ([0.0005], 0.001167, 1)
    """
    mine = [r for r in rows if (r["workload"], r["parallelism"]) == (workload, parallelism)]
    naive = [r for r in mine if r["strategy"] == "naive"]
    if not naive or not median(r["job_seconds_by_slope"] or 0.0 for r in naive) > 0:
        return None
    outside = []
    for row in naive:
        busiest = max(row["stages"][0]["subtask_records"])
        spent = (row["job_seconds_by_slope"] or 0.0) / busiest if busiest else 0.0
        outside.append(max(spent - _operator_cost(row["stages"][0]), 0.0))
    costs, runs = {}, []
    for side in dict.fromkeys(r["strategy"] for r in mine):
        mine_side = [r for r in mine if r["strategy"] == side]
        runs.append(len(mine_side))
        costs[side] = [
            median(_operator_cost(run["stages"][s]) for run in mine_side)
            for s in range(len(mine_side[0]["stages"]))
        ]
    return {
        "workload": workload,
        "parallelism": parallelism,
        "costs": costs,
        "outside_seconds_per_record": median(outside),
        "runs": min(runs),
    }


def resampled_calibrations(
    rows: list[dict],
    workload: str,
    parallelism: int,
    *,
    resamples: int = SIMULATION_RESAMPLES,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """:func:`calibration` over ``resamples`` bootstrap resamples of the rounds at
    ``parallelism`` on ``workload``, each side's rounds resampled on their own (with
    replacement, as many as it ran); empty where a side ran one round (nothing to resample).

    Example::

        >>> stage = {"subtask_records": [600, 400], "subtask_operator_seconds": [0.3, 0.2]}
        >>> rows = [{"workload": "w", "parallelism": 2, "strategy": "naive", "run": i,
        ...          "job_seconds_by_slope": t, "stages": [stage]} for i, t in enumerate((1.0, 2.0))]
        >>> outside = [c["outside_seconds_per_record"] for c in resampled_calibrations(rows, "w", 2)]
        >>> len(outside), round(min(outside), 6), round(max(outside), 6)
        (1000, 0.001167, 0.002833)
    """  # noqa: E501
    mine = [r for r in rows if (r["workload"], r["parallelism"]) == (workload, parallelism)]
    by_side: dict[str, list[dict]] = {}
    for r in mine:
        by_side.setdefault(r["strategy"], []).append(r)
    if "naive" not in by_side or min(len(runs) for runs in by_side.values()) < 2:
        return []
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(resamples):
        picked = [
            runs[i] for runs in by_side.values() for i in rng.integers(0, len(runs), len(runs))
        ]
        out.append(calibration(picked, workload, parallelism))
    return out


def _operator_cost(stage: dict) -> float:
    """A stage's operator seconds per record: by slope where the row has it, else over all its
    subtasks' records."""
    slope = stage.get("operator_seconds_per_record")
    if slope is not None:
        return slope
    return sum(stage["subtask_operator_seconds"]) / max(sum(stage["subtask_records"]), 1)


def check_against_runs(rows: list[dict], calibrated: dict[str, Any]) -> list[dict]:
    """At the calibration point, each side's job time predicted (stages in turn, from each
    run's own stage loads) beside its measured job time by slope: medians over rounds and their
    ratio.

    Example::

        >>> stage = {"subtask_records": [600, 400], "subtask_operator_seconds": [0.3, 0.2]}
        >>> row = {"workload": "w", "parallelism": 2, "strategy": "naive",
        ...        "job_seconds_by_slope": 1.0, "stages": [stage]}
        >>> check = check_against_runs([row], calibration([row], "w", 2))
        >>> round(check[0]["predicted_over_measured"], 6)
        1.0
    """
    point = (calibrated["workload"], calibrated["parallelism"])
    mine = [r for r in rows if (r["workload"], r["parallelism"]) == point]
    out = []
    for side, costs in calibrated["costs"].items():
        runs = [r for r in mine if r["strategy"] == side]
        predicted = median(
            job_seconds(
                [np.array(s["subtask_records"]) for s in run["stages"]],
                costs,
                calibrated["outside_seconds_per_record"],
            )
            for run in runs
        )
        present = [r["job_seconds_by_slope"] for r in runs if r["job_seconds_by_slope"] is not None]
        measured = median(present) if present else 0.0
        out.append({
            "workload": point[0], "parallelism": point[1], "strategy": side,
            "predicted_seconds": predicted, "measured_seconds": measured,
            "predicted_over_measured": predicted / measured if measured > 0 else None,
        })  # fmt: skip
    return out


def simulated_throughput(
    loads: dict[str, list[np.ndarray]], calibrated: dict[str, Any], records: int
) -> dict[str, dict[str, float]]:
    """Per side and mode (:data:`MODES`): the simulated job throughput (records / s) of
    ``records`` routed as ``loads`` (per side, per stage, per subtask) at the calibrated costs,
    and its speedup over naive's; ``speedup_over_naive_partial_stage_only``: the routed stage
    alone against naive's.

    Example::

        >>> c = {"costs": {"naive": [1.0], "pkg": [1.0, 0.5]}, "outside_seconds_per_record": 0.0}
        >>> loads = {"naive": [np.array([8, 2])], "pkg": [np.array([5, 5]), np.array([8, 2])]}
        >>> round(simulated_throughput(loads, c, 10)["pkg"]["speedup_over_naive_in_turn"], 4)
        0.8889
    """
    out: dict[str, dict[str, float]] = {}
    outside = calibrated["outside_seconds_per_record"]
    for side, stages in loads.items():
        costs = calibrated["costs"].get(side)
        if costs is None:
            continue
        out[side] = {
            f"throughput_{mode}": records
            / job_seconds(stages, costs, outside, pipelined=mode == "pipelined")
            for mode in MODES
        }
    naive = out.get("naive")
    pkg = out.get("pkg")
    for side, figures in out.items():
        for mode in MODES:
            figures[f"speedup_over_naive_{mode}"] = (
                figures[f"throughput_{mode}"] / naive[f"throughput_{mode}"] if naive else None
            )
        alone = job_seconds(loads[side][:1], calibrated["costs"][side][:1], outside)
        figures["speedup_over_naive_partial_stage_only"] = (
            records / alone / naive["throughput_in_turn"] if naive else None
        )
        figures["over_pkg_in_turn"] = (
            figures["throughput_in_turn"] / pkg["throughput_in_turn"] if pkg else None
        )
    return out


def simulated_with_intervals(
    loads: dict[str, list[np.ndarray]],
    calibrated: dict[str, Any],
    resampled: list[dict[str, Any]],
    records: int,
) -> dict[str, dict[str, Any]]:
    """:func:`simulated_throughput` at the calibrated costs, each of its speedups
    (:data:`SPREAD_FIGURES`) also as ``<figure>_interval``: an
    :class:`~skewlab.experiments.intervals.Estimate` (JSON) whose interval is the central 95 %
    of the same figure simulated at every ``resampled`` calibration
    (:func:`resampled_calibrations`); without resamples (one round), no interval.

    Example::

        >>> c = {"costs": {"naive": [1.0], "pkg": [1.0, 0.5]}, "outside_seconds_per_record": 0.0,
        ...      "runs": 3}
        >>> loads = {"naive": [np.array([8, 2])], "pkg": [np.array([5, 5]), np.array([8, 2])]}
        >>> cheaper = {**c, "costs": {"naive": [1.0], "pkg": [0.5, 0.5]}}
        >>> out = simulated_with_intervals(loads, c, [c, cheaper], 10)
        >>> est = out["pkg"]["speedup_over_naive_in_turn_interval"]
        >>> round(est["value"], 4), est["low"] == est["value"] < 1 < est["high"]
        (0.8889, True)
    """
    out = simulated_throughput(loads, calibrated, records)
    samples = [simulated_throughput(loads, c, records) for c in resampled if c is not None]
    runs = calibrated.get("runs", 1)
    tail = (1 - CONFIDENCE) / 2 * 100
    for side, figures in out.items():
        for key in SPREAD_FIGURES:
            value = figures.get(key)
            if value is None:
                continue
            drawn = [s[side][key] for s in samples if s.get(side, {}).get(key) is not None]
            if not drawn:
                figures[f"{key}_interval"] = Estimate(value, runs=runs).to_json()
                continue
            low, high = np.percentile(drawn, [tail, 100 - tail])
            figures[f"{key}_interval"] = Estimate(
                value, min(float(low), value), max(float(high), value), runs, BOOTSTRAP
            ).to_json()
    return out
