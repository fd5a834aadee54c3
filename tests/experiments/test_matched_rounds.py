"""Rounds matched in time: a short job's side runs more rounds, by a plan fixed from the first
rounds' times, on a real local Spark."""

from __future__ import annotations

import statistics

import pytest

from skewlab.doctor.catalog import strategies
from skewlab.engine.config import JobConfig
from skewlab.experiments.matched_rounds import measure_interleaved, rounds_matched
from skewlab.experiments.rounds import SlopeInput
from skewlab.inputs.views import ViewSpec


def test_a_faster_side_gets_rounds_in_proportion_up_to_the_cap():
    plan = rounds_matched({"slow": 6.0, "half": 3.0, "tenth": 0.6, "a bit": 5.0}, 5, 20)
    assert plan == {"slow": 5, "half": 10, "tenth": 20, "a bit": 6}
    # the same time everywhere: nothing further
    assert rounds_matched({"a": 1.0, "b": 1.0}, 3, 12) == {"a": 3, "b": 3}
    with pytest.raises(ValueError, match="fewer than rounds"):
        rounds_matched({"a": 1.0}, 5, 4)


def test_interleaved_rounds_run_every_input_in_turn_and_follow_the_plan(spark):
    compared = {k: v for k, v in strategies(2, 1_000).items() if k in ("naive_heap", "salted")}
    job = JobConfig(parallelism=2)
    with (
        SlopeInput(spark, ViewSpec(800, 200, 20, seed=3)) as few,
        SlopeInput(spark, ViewSpec(800, 200, 100, seed=3)) as many,
    ):
        inputs = {"20 keys": few, "100 keys": many}
        runs = list(measure_interleaved(spark, compared, job, inputs, 1, max_rounds=3))
    # each round goes round every input before the next round starts
    order = [(name, run.round) for name, run in runs[: 2 * 2]]
    assert order == [(n, 0) for n in inputs for _ in compared]
    assert [run.round for _, run in runs] == sorted(run.round for _, run in runs)
    for name in inputs:
        mine = [run for n, run in runs if n == name]
        first = {
            side: statistics.median(
                r.small.wall_seconds + r.large.wall_seconds
                for r in mine
                if r.side == side and r.round < 1
            )
            for side in compared
        }
        plan = rounds_matched(first, 1, 3)
        for side in compared:
            # numbered on without a gap, as many as the plan says, every digest Spark SQL's
            got = [r for r in mine if r.side == side]
            assert sorted(r.round for r in got) == list(range(plan[side]))
            assert all(r.digests_match for r in got)
            # each round's slope over the quarter and the whole of the views
            assert {(r.small.records_processed, r.large.records_processed) for r in got} == {
                (200, 800)
            }
