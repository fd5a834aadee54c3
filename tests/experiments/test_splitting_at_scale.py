"""The simulated throughput model of key splitting, held against a record-by-record replay of
the same model (an independent oracle) and against what follows from its own premise."""

from __future__ import annotations

import numpy as np
import pytest

from skewlab.experiments.splitting import routed_loads, zipf_senders
from skewlab.experiments.splitting_at_scale import (
    calibration,
    check_against_runs,
    job_seconds,
    simulated_throughput,
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


def _run(side, net, stages):
    return {
        "workload": "w", "parallelism": 2, "strategy": side, "net_job_seconds": net,
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
    assert calibration(rows, "w", 4) is None
