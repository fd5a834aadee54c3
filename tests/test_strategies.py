"""Every strategy against the independent oracle, plus the runtime's routing and accounting."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.keygroups import assign_key_to_parallel_operator
from skewlab.latency import load_profile
from skewlab.runtime import (
    OPERATOR,
    RunConfig,
    StageSpec,
    collect_stage,
    identity_partition,
    run_stage,
    with_key_groups,
)
from skewlab.stats import StatsSerializer, result_digest, spark_reference_aggregate
from skewlab.strategies import run_strategy
from skewlab.views import ViewSpec, generate_views

N_NULL = 3

CONFIGS = [
    RunConfig("naive", backend="heap"),
    RunConfig("naive", backend="rocksdb"),
    RunConfig("naive", backend="cached", cache_entries=3),
    RunConfig("cached", cache_entries=2),
    RunConfig("buffered", buffer="vectorized", max_count=97),
    RunConfig("buffered", buffer="preaggregate", max_count=50),
    RunConfig("buffered", buffer="list", max_count=1000, trigger_interval_ms=0),
    RunConfig("sorted"),
    RunConfig("salted", salt_buckets=3),
    RunConfig("spark_sql"),
]


def _with_null_tweets(spark, views):
    from pyspark.sql import functions as F

    nulls = views.limit(N_NULL).select(
        (F.col("seq") + 10_000_000).alias("seq"),
        F.concat(F.lit("null-"), "view_id").alias("view_id"),
        "user_id",
        F.lit(None).cast("string").alias("tweet_id"),
        "event_time",
    )
    return views.unionByName(nulls)


@pytest.fixture(scope="module", params=["uniform", "zipf"])
def views_and_reference(request, spark):
    spec = ViewSpec(6_000, 700, 40, request.param, 1.3, seed=21)
    views = _with_null_tweets(spark, generate_views(spark, spec, num_partitions=3)).cache()
    reference = result_digest(spark_reference_aggregate(views))
    yield views, reference, spec.n_views
    views.unpersist()


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.strategy}-{c.parameters()}")
def test_every_strategy_equals_the_reference_and_accounts_for_every_record(
    views_and_reference, config
):
    views, reference, n = views_and_reference
    result, states = run_strategy(views, config)
    assert result.result_digest == reference
    assert result.records_in == n + N_NULL
    assert result.records_rejected == N_NULL
    assert result.records_processed + result.records_rejected == result.records_in
    assert result.keys == len(states) == len({s.tweet_id for s in states.values()})
    json.loads(result.to_json())  # serialisable


def test_accounting_of_naive_cached_and_buffered(spark):
    views = generate_views(spark, ViewSpec(5_000, 400, 30, "zipf", 1.2, seed=3))
    naive, _ = run_strategy(views, RunConfig("naive", parallelism=2))
    assert naive.records_out == naive.records_processed == 5_000
    assert naive.state_reads == naive.state_writes == 5_000
    assert naive.cache_hit_ratio is None and naive.buffer_flushes is None

    cached, _ = run_strategy(views, RunConfig("cached", parallelism=2, cache_entries=1_000))
    # a cache larger than the key space misses once per key, then always hits
    assert cached.cache_misses == cached.keys
    assert cached.cache_hits == 5_000 - cached.keys
    assert cached.cache_hit_ratio == pytest.approx((5_000 - cached.keys) / 5_000)
    assert cached.state_reads == cached.keys  # only misses reach RocksDB

    k = 64
    buffered, _ = run_strategy(
        views, RunConfig("buffered", parallelism=2, max_count=k, trigger_interval_ms=0)
    )
    per_subtask = [s["records"] for s in buffered.subtasks]
    assert sum(per_subtask) == 5_000
    assert buffered.buffer_flushes == sum(math.ceil(r / k) for r in per_subtask)
    assert buffered.state_reads == buffered.records_out < 5_000
    assert (
        buffered.latency_p50_ms is not None and buffered.latency_p99_ms >= buffered.latency_p50_ms
    )


def test_records_land_on_their_flink_subtask(spark):
    from pyspark.sql import functions as F

    p, max_p = 3, 128
    views = generate_views(spark, ViewSpec(3_000, 100, 200, seed=5))
    routed = identity_partition(with_key_groups(views, "tweet_id", max_p, p), spark, p)
    rows = routed.select("tweet_id", OPERATOR, F.spark_partition_id().alias("partition")).collect()
    assert all(r.partition == r[OPERATOR] for r in rows)
    for r in rows[:300]:
        assert r[OPERATOR] == assign_key_to_parallel_operator(r.tweet_id, max_p, p)
    assert {r.partition for r in rows} == {0, 1, 2}


def test_sorted_fed_unsorted_input_fails_with_the_single_key_error(spark):
    from skewlab.operators import SortedReduce
    from skewlab.runtime import validate_config

    views = generate_views(spark, ViewSpec(500, 50, 10, seed=2))
    config = RunConfig("sorted", parallelism=1, max_parallelism=128)
    validate_config(config)
    stage = StageSpec(
        name="1:sorted-unsorted",
        config=config,
        key_col="tweet_id",
        operator=SortedReduce,
        final=True,
        serializer=StatsSerializer,
        order_by=("seq",),  # arrival order, not key order
        input_columns=("seq", "view_id", "user_id"),
    )
    with pytest.raises(Exception, match="input is not sorted by key"):
        collect_stage(run_stage(views, spark, stage), StatsSerializer)


def test_modelled_io_of_a_naive_run_is_the_hand_computed_sum(spark):
    views = generate_views(spark, ViewSpec(2_000, 100, 7, seed=8))
    result, _ = run_strategy(views, RunConfig("naive", parallelism=1))
    ebs = load_profile("ebs-article")
    # one subtask does every record's read and write one after another
    expected = 2_000 * (ebs.read.mean_us + ebs.write.mean_us) / 1e6
    assert result.latency_profile == "ebs-article"
    assert result.modelled_io_seconds == pytest.approx(expected)
    assert result.modelled_records_per_second == pytest.approx(2_000 / expected)
    none, _ = run_strategy(views, RunConfig("naive", parallelism=1, latency_profile=None))
    assert none.modelled_io_seconds is None


def test_a_paced_source_releases_records_no_faster_than_the_rate(spark):
    views = generate_views(spark, ViewSpec(1_500, 100, 5, seed=4))
    result, _ = run_strategy(
        views, RunConfig("buffered", parallelism=1, source_rate=1_000, trigger_interval_ms=50)
    )
    # the last record is released 1.499 s after the first: the run cannot be shorter
    assert result.wall_seconds >= 1.4
    assert result.parameters["source_rate"] == 1_000


def test_salting_reorders_records_of_a_key_and_buffering_does_not(spark):
    views = generate_views(spark, ViewSpec(4_000, 300, 3, seed=6))
    salted, _ = run_strategy(views, RunConfig("salted", parallelism=2, check_order=True))
    buffered, _ = run_strategy(views, RunConfig("buffered", parallelism=2, check_order=True))
    assert salted.order_violations > 0
    assert buffered.order_violations == 0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (RunConfig("fastest"), "unknown strategy 'fastest'"),
        (RunConfig("naive", backend="memcached"), "unknown backend 'memcached'"),
        (RunConfig("buffered", max_count=0), "max_count (--max-count) must be a whole number >= 1"),
        (RunConfig("buffered", trigger_interval_ms=-1), "trigger_interval_ms"),
        (RunConfig("naive", parallelism=200, max_parallelism=128), "parallelism"),
        (RunConfig("naive", max_parallelism=40_000), "1..32768"),
        (RunConfig("salted", salt_buckets=0), "salt_buckets (--salt-buckets)"),
        (RunConfig("cached", cache_entries=-1), "cache_entries (--cache-entries)"),
        (RunConfig("naive", source_rate=0), "source_rate"),
        (RunConfig("naive", latency_profile="floppy"), "floppy"),
    ],
)
def test_bad_parameters_fail_before_spark_work(spark, config, message):
    views = generate_views(spark, ViewSpec(10, 5, 2))
    jobs_before = spark.sparkContext.statusTracker().getJobIdsForGroup()
    with pytest.raises(SkewlabInputError) as err:
        run_strategy(views, config)
    assert message in str(err.value)
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs_before


def test_views_missing_a_column_fail_before_spark_work(spark):
    bad = spark.createDataFrame([("v", "t")], "view_id string, tweet_id string")
    with pytest.raises(SkewlabInputError, match="missing column"):
        run_strategy(bad, RunConfig("naive"))


@pytest.mark.cluster
def test_every_strategy_equals_the_reference_on_a_local_cluster():
    """Separate executor JVMs and Python workers: nothing may rely on driver-side globals."""
    script = textwrap.dedent(
        """
        from skewlab.runtime import RunConfig
        from skewlab.spark import get_spark
        from skewlab.stats import result_digest, spark_reference_aggregate
        from skewlab.strategies import STRATEGIES, run_strategy
        from skewlab.views import ViewSpec, generate_views

        spark = get_spark()
        assert spark.sparkContext.master.startswith("local-cluster")
        views = generate_views(spark, ViewSpec(3_000, 300, 25, "zipf", 1.1, seed=9)).cache()
        reference = result_digest(spark_reference_aggregate(views))
        for name in STRATEGIES:
            result, _ = run_strategy(views, RunConfig(name, parallelism=2))
            print(name, result.result_digest == reference, result.records_in)
        spark.stop()
        """
    )
    env = {**os.environ, "SKEWLAB_SPARK_MASTER": "local-cluster[2,1,1024]"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    assert {ln[0] for ln in lines} >= {
        "naive",
        "salted",
        "buffered",
        "cached",
        "sorted",
        "spark_sql",
    }
    assert all(ln[1] == "True" and ln[2] == "3000" for ln in lines), proc.stdout


def test_subtask_load_counts_every_record_on_its_flink_subtask(spark):
    from skewlab.runtime import subtask_load

    views = generate_views(spark, ViewSpec(4_000, 100, 30, "zipf", 1.4, seed=12))
    load = subtask_load(views, parallelism=4)
    assert load["subtask"].tolist() == [0, 1, 2, 3]
    assert load["records"].sum() == 4_000
    per_tweet = views.groupBy("tweet_id").count().toPandas()
    expected = [0, 0, 0, 0]
    for tweet, count in zip(per_tweet["tweet_id"], per_tweet["count"], strict=True):
        expected[assign_key_to_parallel_operator(tweet, 128, 4)] += count
    assert load["records"].tolist() == expected
    hottest = load.loc[load["hottest_key_records"].idxmax(), "hottest_key"]
    assert hottest == "tweet-0"
