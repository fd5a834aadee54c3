"""The simulated throughput model of key splitting, held against a record-by-record replay of
the same model (an independent oracle) and against what follows from its own premise; the
costs' spread over the rounds carried through to the simulated speedups, and the claims over
them left inconclusive where that interval holds what they test."""

from __future__ import annotations

import numpy as np
import pytest

from skewlab.experiments.claims import HELD, INCONCLUSIVE, NOT_HELD, NOT_MEASURED, claim
from skewlab.experiments.splitting import routed_loads, zipf_senders
from skewlab.experiments.splitting_at_scale import (
    calibration,
    check_against_runs,
    job_seconds,
    resampled_calibrations,
    simulated_throughput,
    simulated_with_intervals,
)


def _replayed_seconds(stages, costs, outside, parallelism, pipelined):
    """Record by record: every record's cost added to the clock of its subtask in its stage;
    stages in turn wait for the slowest subtask, pipelined stages share each slot's clock."""
    clocks = [[0.0] * parallelism for _ in stages]
    for s, subtasks in enumerate(stages):
        for subtask in subtasks:
            clocks[s][subtask] += costs[s] + outside
    if pipelined:
        return max(sum(clocks[s][j] for s in range(len(stages))) for j in range(parallelism))
    return sum(max(c) for c in clocks)


@pytest.mark.parametrize("pipelined", [False, True])
def test_job_seconds_equals_the_record_by_record_replay(pipelined):
    rng = np.random.default_rng(7)
    stages = [rng.integers(0, 8, 500).tolist(), rng.zipf(1.6, 500).clip(1, 8) - 1]
    loads = [np.bincount(np.asarray(s), minlength=8) for s in stages]
    costs, outside = [2e-6, 5e-6], 1e-6
    expected = _replayed_seconds(stages, costs, outside, 8, pipelined)
    assert job_seconds(loads, costs, outside, pipelined=pipelined) == pytest.approx(expected)


def test_a_merge_as_costly_as_naive_never_lets_a_split_side_win():
    """The merge receives naive's loads: if a merged partial costs what a view does, no routing
    of the partial stage can make the job faster than naive's, at any p."""
    keys, salts = zipf_senders(20_000, 2_000, 1.2, senders=2)
    for p in (8, 32, 128):
        naive = routed_loads(keys, p, "naive")
        loads = {
            side: [routed_loads(keys, p, side, salt_hashes=salts)]
            + ([] if side == "naive" else [naive])
            for side in ("naive", "salted", "pkg", "wchoices")
        }
        costs = {"naive": [3e-6], **{s: [1e-6, 3e-6] for s in ("salted", "pkg", "wchoices")}}
        out = simulated_throughput(
            loads, {"costs": costs, "outside_seconds_per_record": 1e-6}, 20_000
        )
        assert out["naive"]["speedup_over_naive_in_turn"] == pytest.approx(1.0)
        for side in ("salted", "pkg", "wchoices"):
            assert out[side]["speedup_over_naive_in_turn"] < 1
            assert out[side]["speedup_over_naive_pipelined"] <= 1 + 1e-12
        # without the merge, W-Choices' balanced partial stage beats naive at scale
        if p == 128:
            assert out["wchoices"]["speedup_over_naive_partial_stage_only"] > 1


def _run(side, by_slope, stages):
    return {
        "workload": "w", "parallelism": 2, "strategy": side, "job_seconds_by_slope": by_slope,
        "stages": [
            {"subtask_records": r, "subtask_operator_seconds": o} for r, o in stages
        ],
    }  # fmt: skip


def test_calibration_takes_medians_and_is_checked_against_every_side():
    rows = [
        _run("naive", 1.0, [([600, 400], [0.3, 0.2])]),
        _run("naive", 3.0, [([600, 400], [0.3, 0.2])]),
        _run("naive", 2.0, [([600, 400], [0.3, 0.2])]),
        _run("pkg", 2.0, [([500, 500], [0.1, 0.1]), ([600, 400], [0.2, 0.2])]),
    ]
    c = calibration(rows, "w", 2)
    assert c["outside_seconds_per_record"] == pytest.approx((2.0 - 0.3) / 600)
    assert c["costs"]["naive"] == [pytest.approx(5e-4)]
    assert c["costs"]["pkg"] == [pytest.approx(2e-4), pytest.approx(4e-4)]
    checks = {r["strategy"]: r for r in check_against_runs(rows, c)}
    assert checks["naive"]["predicted_over_measured"] == pytest.approx(1.0)
    outside = c["outside_seconds_per_record"]
    predicted = 500 * (2e-4 + outside) + 600 * (4e-4 + outside)
    assert checks["pkg"]["predicted_seconds"] == pytest.approx(predicted)
    assert c["runs"] == 1  # pkg ran once
    assert calibration(rows, "w", 4) is None
    # a naive job no longer over the larger input than the smaller has no cost to calibrate on
    assert calibration([_run("naive", -0.2, [([600, 400], [0.3, 0.2])])], "w", 2) is None


def test_a_stages_cost_by_slope_is_used_where_the_row_has_it():
    rows = [_run("naive", 1.0, [([600, 400], [0.3, 0.2])])]
    assert calibration(rows, "w", 2)["costs"]["naive"] == [pytest.approx(5e-4)]  # 0.5 s / 1,000
    rows[0]["stages"][0]["operator_seconds_per_record"] = 2e-4  # by slope: set-up cancelled
    assert calibration(rows, "w", 2)["costs"]["naive"] == [2e-4]


def _spread_rows(naive_seconds, pkg_partial):
    """Naive and PKG at p = 2 over rounds whose costs spread: PKG's partial stage costs
    ``pkg_partial`` seconds per round over its 1,000 records."""
    rows = [_run("naive", t, [([600, 400], [0.3, 0.2])]) for t in naive_seconds]
    rows += [_run("pkg", 1.0, [([500, 500], [c / 2, c / 2]), ([600, 400], [0.3, 0.2])])
             for c in pkg_partial]  # fmt: skip
    for i, row in enumerate(rows):
        row["run"] = i
    return rows


def test_the_costs_spread_over_the_rounds_is_carried_through_the_simulation():
    rows = _spread_rows([0.9, 1.0, 1.1], [0.08, 0.10, 0.12])
    calibrated = calibration(rows, "w", 2)
    resampled = resampled_calibrations(rows, "w", 2)
    assert len(resampled) > 100
    outside = [c["outside_seconds_per_record"] for c in resampled]
    assert min(outside) < calibrated["outside_seconds_per_record"] < max(outside)
    keys, _ = zipf_senders(5_000, 200, 1.5, senders=2)
    naive = routed_loads(keys, 64, "naive")
    loads = {"naive": [naive], "pkg": [routed_loads(keys, 64, "pkg"), naive]}
    out = simulated_with_intervals(loads, calibrated, resampled, int(naive.sum()))
    est = out["pkg"]["speedup_over_naive_in_turn_interval"]
    assert est["low"] < est["value"] < est["high"] and est["runs"] == 3
    assert est["value"] == pytest.approx(out["pkg"]["speedup_over_naive_in_turn"])
    # one round: nothing to resample, no interval
    one = _spread_rows([1.0], [0.1])
    assert resampled_calibrations(one, "w", 2) == []
    bare = simulated_with_intervals(loads, calibration(one, "w", 2), [], int(naive.sum()))
    assert "low" not in bare["pkg"]["speedup_over_naive_in_turn_interval"]


def _at_scale(pkg, wchoices, over):
    intervals = {
        "simulated_speedup_over_naive_pkg": pkg,
        "simulated_speedup_over_naive_wchoices": wchoices,
        "simulated_partial_stage_only_over_naive_pkg": {"value": 5.0, "low": 4.0, "high": 6.0,
                                                        "runs": 3, "method": "bootstrap"},
        "simulated_over_pkg_wchoices": over,
    }  # fmt: skip
    summary = {"runs": 3, "simulated_at_parallelism": 128, "intervals": intervals}
    summary |= {key: value["value"] for key, value in intervals.items()}
    return {"experiment": "splitting", "summary": summary}


def _est(value, low, high):
    return {"value": value, "low": low, "high": high, "runs": 3, "method": "bootstrap"}


def test_a_simulated_speedup_is_held_only_where_its_interval_clears_the_claim():
    beats = claim("beyond_salting", "pkg_beats_naive_at_scale")
    w_over_pkg = claim("beyond_salting", "wchoices_beats_pkg_at_scale")
    clear = _at_scale(_est(1.3, 1.2, 1.4), _est(1.5, 1.3, 1.7), _est(1.15, 1.05, 1.25))
    assert beats.evaluate(clear).status == HELD
    assert w_over_pkg.evaluate(clear).status == HELD
    # PKG's interval holds 1; W-Choices over PKG below 1 throughout (paired over the resamples,
    # though the two speedups' own intervals overlap)
    mixed = _at_scale(_est(1.02, 0.95, 1.1), _est(0.98, 0.9, 1.08), _est(0.96, 0.94, 0.98))
    assert beats.evaluate(mixed).status == INCONCLUSIVE
    assert w_over_pkg.evaluate(mixed).status == NOT_HELD
    # one round: the simulated figures carry no interval and conclude nothing
    one = _at_scale(*({"value": v, "runs": 1} for v in (1.3, 1.5, 1.15)))
    one["summary"]["runs"] = 1
    assert beats.evaluate(one).status == INCONCLUSIVE
    assert beats.evaluate({"experiment": "splitting", "summary": {}}).status == NOT_MEASURED
