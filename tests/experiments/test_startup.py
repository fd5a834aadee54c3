"""The start-up subtracted from the view benchmarks' job times: empty runs of the same
strategy on a real Spark session, taken beside the measured runs."""

from __future__ import annotations

import statistics

import pytest

from skewlab.engine.config import JobConfig
from skewlab.experiments.startup import StartUp, net_rate
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Naive, run_strategy


def test_a_sides_start_up_is_the_median_of_the_empty_runs_taken_beside_its_runs(spark):
    job = JobConfig(parallelism=1)
    startup = StartUp(spark, {"naive": Naive()}, job, n_users=100)
    with pytest.raises(RuntimeError, match="no empty run of naive yet"):
        startup.seconds()
    views = generate_views(spark, ViewSpec(500, 100, 5, seed=3))
    taken = []
    for _ in range(3):
        taken.append(startup.sample("naive"))
        result, _ = run_strategy(views, Naive(), job, spark)
        assert result.records_in == 500
    startup.close()
    assert startup.samples() == {"naive": taken}
    assert startup.seconds() == {"naive": statistics.median(taken)}
    assert all(t > 0 for t in taken)


def test_a_side_not_compared_is_refused_with_the_sides_named(spark):
    startup = StartUp(spark, {"naive": Naive()}, JobConfig(parallelism=1), n_users=100)
    with pytest.raises(KeyError, match="no side 'salted' to start; sides: naive"):
        startup.sample("salted")
    startup.close()


@pytest.mark.parametrize(
    ("records", "job", "startup", "rate"),
    [(1_000, 0.6, 0.1, 2_000.0), (1_000, 0.1, 0.1, None), (1_000, 0.05, 0.1, None)],
)
def test_a_run_not_longer_than_its_start_up_has_no_net_throughput(records, job, startup, rate):
    assert net_rate(records, job, startup) == rate
