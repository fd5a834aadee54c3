"""A paced source makes the buffer's trigger interval visible in latency (behaviour, not speed)."""

from __future__ import annotations

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.experiments.latency_sweep import latency_sweep, records_per_flush
from skewlab.inputs.views import ViewSpec, generate_views

RATE, MAX_COUNT, P = 2_000, 1_000, 2


@pytest.fixture(scope="module")
def views(spark):
    df = generate_views(spark, ViewSpec(2_000, 500, 20, seed=5)).cache()
    df.count()
    yield df
    df.unpersist()


def test_with_a_paced_source_latency_grows_with_the_trigger_interval(views):
    # a 200 ms interval gathers ~200 records per subtask: the timer flushes, not max_count
    assert records_per_flush(RATE, 200, P) < MAX_COUNT
    sweep = latency_sweep(
        views,
        source_rate=RATE,
        trigger_intervals=(20, 200),
        max_count=MAX_COUNT,
        parallelism=P,
        rounds=2,
    )
    assert list(sweep["trigger_interval_ms"]) == [20, 200, 20, 200]
    assert list(sweep["run"]) == [0, 0, 1, 1]
    assert sweep["digest_matches_reference"].all()
    assert (sweep["records"] == 2_000).all()
    by_interval = sweep.groupby("trigger_interval_ms")
    # a stall of a busy machine only adds latency (a subtask that falls behind its paced
    # source delays every record after it), so each interval is judged by its least-delayed
    # round
    fastest = by_interval["latency_p50_ms"].min()
    assert fastest[200] > fastest[20]
    # a record that arrives just after a flush waits out the whole interval: the 200 ms runs'
    # p99 is near 200 ms whatever the machine does (a stall only adds)
    long = sweep[sweep["trigger_interval_ms"] == 200]
    assert (long["latency_p99_ms"] >= 0.9 * long["trigger_interval_ms"]).all()
    # the source lasts ~1 s: a 20 ms timer flushes many more times than a 200 ms one
    flushes = by_interval["buffer_flushes"]
    assert flushes.min()[20] > flushes.max()[200]


def test_sweep_refuses_bad_parameters_before_running(views):
    with pytest.raises(SkewlabInputError, match="source_rate"):
        latency_sweep(views, source_rate=0, trigger_intervals=(20,))
    with pytest.raises(SkewlabInputError, match="trigger_interval_ms"):
        latency_sweep(views, source_rate=1_000, trigger_intervals=(-5,))
    with pytest.raises(SkewlabInputError, match="at least one"):
        latency_sweep(views, source_rate=1_000, trigger_intervals=())
