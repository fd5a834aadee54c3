"""Rounds matched in time: a short job's side runs more rounds, by a plan fixed from the first
rounds' times, on a real local Spark."""

from __future__ import annotations

import statistics

import pytest

from skewlab.doctor.catalog import strategies
from skewlab.engine.config import JobConfig
from skewlab.experiments.matched_rounds import measure_matched_rounds, rounds_matched
from skewlab.experiments.rounds import SlopeInput
from skewlab.inputs.views import ViewSpec


def test_a_faster_side_gets_rounds_in_proportion_up_to_the_cap():
    plan = rounds_matched({"slow": 6.0, "half": 3.0, "tenth": 0.6, "a bit": 5.0}, 5, 20)
    assert plan == {"slow": 5, "half": 10, "tenth": 20, "a bit": 6}
    # the same time everywhere: nothing further
    assert rounds_matched({"a": 1.0, "b": 1.0}, 3, 12) == {"a": 3, "b": 3}
    with pytest.raises(ValueError, match="fewer than rounds"):
        rounds_matched({"a": 1.0}, 5, 4)


def test_matched_rounds_follow_the_plan_of_the_first_rounds_times(spark):
    compared = {k: v for k, v in strategies(2, 1_000).items() if k in ("naive_heap", "salted")}
    job = JobConfig(parallelism=2)
    with SlopeInput(spark, ViewSpec(2_000, 500, 20, seed=3)) as views:
        runs = list(measure_matched_rounds(spark, compared, job, views, 2, max_rounds=5))
    by_side = {side: [r for r in runs if r.side == side] for side in compared}
    first = {
        side: statistics.median(
            r.small.wall_seconds + r.large.wall_seconds for r in rs if r.round < 2
        )
        for side, rs in by_side.items()
    }
    plan = rounds_matched(first, 2, 5)
    for side, rs in by_side.items():
        # numbered on without a gap, as many as the plan says, every digest Spark SQL's
        assert sorted(r.round for r in rs) == list(range(plan[side]))
        assert all(r.digests_match for r in rs)
    # without a cap above the rounds, every side runs the rounds asked and no more
    with SlopeInput(spark, ViewSpec(2_000, 500, 20, seed=3)) as views:
        plain = list(measure_matched_rounds(spark, compared, job, views, 2, max_rounds=None))
    assert sorted((r.side, r.round) for r in plain) == sorted(
        (side, n) for side in compared for n in range(2)
    )
