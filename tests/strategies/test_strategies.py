"""Every strategy against the independent oracle, and what each run accounts for."""

from __future__ import annotations

import json
import math
import textwrap
from functools import partial

import pytest

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, run_stage
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.operators.reduce import SortedReduce
from skewlab.strategies import (
    STRATEGIES,
    Buffered,
    Cached,
    DChoices,
    Naive,
    Pkg,
    Salted,
    Sorted,
    SparkSql,
    WChoices,
    run_strategies,
    run_strategy,
    strategy_parameters,
)
from skewlab.strategies.keyed import VIEW_INPUT, upstream

N_NULL = 3

PARAMETERS = [
    Naive(backend="heap"),
    Naive(backend="rocksdb"),
    Naive(backend="cached", cache_entries=3),
    Cached(cache_entries=2),
    Buffered(buffer="vectorized", max_count=97),
    Buffered(buffer="preaggregate", max_count=50),
    Buffered(buffer="list", max_count=1000, trigger_interval_ms=0),
    Buffered(backend="heap", max_count=200),
    Sorted(),
    Salted(salt_buckets=3),
    Salted(salt_buckets=2, backend="heap"),
    Pkg(),
    DChoices(choices=2, hot_threshold=0.05),
    WChoices(backend="heap"),
    SparkSql(),
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


@pytest.mark.parametrize("params", PARAMETERS, ids=lambda p: f"{p.name}-{p.parameters()}")
def test_every_strategy_equals_the_reference_and_accounts_for_every_record(
    views_and_reference, params
):
    views, reference, n = views_and_reference
    result, states = run_strategy(views, params)
    assert result.result_digest == reference
    assert result.records_in == n + N_NULL
    assert result.records_rejected == N_NULL
    assert result.records_processed + result.records_rejected == result.records_in
    assert result.keys == len(states) == len({s.tweet_id for s in states.values()})
    json.loads(result.to_json())  # serialisable


def test_accounting_of_naive_cached_and_buffered(spark):
    views = generate_views(spark, ViewSpec(5_000, 400, 30, "zipf", 1.2, seed=3))
    job = JobConfig(parallelism=2)
    naive, _ = run_strategy(views, "naive", job)
    assert naive.records_out == naive.records_processed == 5_000
    assert naive.state_reads == naive.state_writes == 5_000
    assert naive.cache_hit_ratio is None and naive.buffer_flushes is None

    cached, _ = run_strategy(views, Cached(cache_entries=1_000), job)
    # a cache larger than the key space misses once per key, then always hits
    assert cached.cache_misses == cached.keys
    assert cached.cache_hits == 5_000 - cached.keys
    assert cached.cache_hit_ratio == pytest.approx((5_000 - cached.keys) / 5_000)
    assert cached.state_reads == cached.keys  # only misses reach RocksDB

    k = 64
    buffered, _ = run_strategy(views, Buffered(max_count=k, trigger_interval_ms=0), job)
    per_subtask = [s["records"] for s in buffered.subtasks]
    assert sum(per_subtask) == 5_000
    assert buffered.buffer_flushes == sum(math.ceil(r / k) for r in per_subtask)
    assert buffered.state_reads == buffered.records_out < 5_000
    # each record's latency from its own arrival: tests/operators/test_buffers.py


def test_sorted_fed_unsorted_input_fails_with_the_single_key_error(spark):
    views = generate_views(spark, ViewSpec(500, 50, 10, seed=2))
    job = JobConfig(parallelism=1, max_parallelism=128).resolved(1)
    stage = StageSpec(
        name="1:sorted-unsorted",
        key_col="tweet_id",
        operator=partial(SortedReduce, precision=10),
        final=True,
        serializer=StatsSerializer,
        order_by=("seq",),  # arrival order, not key order
        input_columns=VIEW_INPUT,
    )
    with pytest.raises(Exception, match="input is not sorted by key"):
        collect_stage(run_stage(upstream(views, Sorted()), spark, stage, job), StatsSerializer)


def test_modelled_io_of_a_naive_run_is_the_hand_computed_sum(spark):
    views = generate_views(spark, ViewSpec(2_000, 100, 7, seed=8))
    result, _ = run_strategy(views, "naive", JobConfig(parallelism=1))
    ebs = load_disk_profile("ebs-article")
    # one subtask does every record's read and write one after another
    expected = 2_000 * (ebs.read.mean_us + ebs.write.mean_us) / 1e6
    assert result.latency_profile == "ebs-article"
    assert result.modelled_io_seconds == pytest.approx(expected)
    assert result.modelled_records_per_second == pytest.approx(2_000 / expected)
    none, _ = run_strategy(views, "naive", JobConfig(parallelism=1, disk_profile=None))
    assert none.modelled_io_seconds is None


@pytest.mark.parametrize("params", [Sorted(), Naive(backend="heap"), Buffered(backend="heap")])
def test_state_in_memory_costs_the_latency_model_nothing(spark, params):
    # was: heap and single-key accesses priced as if each went to disk
    views = generate_views(spark, ViewSpec(2_000, 100, 7, seed=8))
    result, _ = run_strategy(views, params, JobConfig(parallelism=1))
    assert result.state_reads > 0 and result.latency_profile == "ebs-article"
    assert result.modelled_io_seconds == 0.0
    assert result.modelled_records_per_second is None  # no disk access: unbounded


def test_a_cache_is_priced_for_its_misses_and_write_backs_only(spark):
    views = generate_views(spark, ViewSpec(2_000, 100, 7, seed=8))
    result, _ = run_strategy(views, Cached(cache_entries=100), JobConfig(parallelism=1))
    ebs = load_disk_profile("ebs-article")
    # 7 keys in a cache of 100: one miss per key, and nothing is ever evicted
    assert (result.state_reads, result.state_writes) == (7, 0)
    assert result.modelled_io_seconds == pytest.approx(7 * ebs.read.mean_us / 1e6)


def test_a_paced_source_releases_records_no_faster_than_the_rate(spark):
    views = generate_views(spark, ViewSpec(1_500, 100, 5, seed=4))
    result, _ = run_strategy(
        views, Buffered(trigger_interval_ms=50), JobConfig(parallelism=1, source_rate=1_000)
    )
    # the last record is released 1.499 s after the first: the run cannot be shorter
    assert result.wall_seconds >= 1.4
    assert result.parameters["source_rate"] == 1_000


def test_salting_reorders_records_of_a_key_and_buffering_does_not(spark):
    views = generate_views(spark, ViewSpec(4_000, 300, 3, seed=6))
    job = JobConfig(parallelism=2, check_order=True)
    salted, buffered = run_strategies(views, ["salted", "buffered"], job)
    assert salted.order_violations > 0
    assert buffered.order_violations == 0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: strategy_parameters("fastest"), "unknown strategy 'fastest'"),
        (lambda: Naive(backend="memcached"), "unknown backend (--backend) 'memcached'"),
        (lambda: Buffered(max_count=0), "max_count (--max-count) must be a whole number >= 1"),
        (lambda: Buffered(trigger_interval_ms=-1), "trigger_interval_ms"),
        (lambda: Buffered(buffer="ring"), "unknown buffer (--buffer) 'ring'"),
        (lambda: JobConfig(parallelism=200, max_parallelism=128), "must not exceed"),
        (lambda: JobConfig(max_parallelism=40_000), "from 1 to 32768"),
        (lambda: Salted(salt_buckets=0), "salt_buckets (--salt-buckets)"),
        (lambda: Cached(cache_entries=-1), "cache_entries (--cache-entries)"),
        (lambda: Naive(precision=20), "precision must be a whole number from 4 to 16"),
        (lambda: JobConfig(source_rate=0), "source_rate"),
        (lambda: JobConfig(disk_profile="floppy"), "floppy"),
        (lambda: strategy_parameters("sorted", max_count=3), "'sorted' has no parameter"),
    ],
)
def test_bad_parameters_fail_before_spark_work(spark, make, message):
    jobs_before = spark.sparkContext.statusTracker().getJobIdsForGroup()
    with pytest.raises(SkewlabInputError) as err:
        make()
    assert message in str(err.value) and "\n" not in str(err.value)
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs_before


def test_the_registry_names_every_strategy_once():
    assert list(STRATEGIES) == [
        "naive",
        "salted",
        "buffered",
        "cached",
        "sorted",
        "spark_sql",
        "streaming",
        "pkg",
        "dchoices",
        "wchoices",
    ]
    assert all(cls.name == name for name, cls in STRATEGIES.items())
    assert strategy_parameters("buffered", max_count=7) == Buffered(max_count=7)


def test_views_missing_a_column_fail_before_spark_work(spark):
    bad = spark.createDataFrame([("v", "t")], "view_id string, tweet_id string")
    with pytest.raises(SkewlabInputError, match="missing column"):
        run_strategy(bad, "naive")


@pytest.mark.cluster
def test_every_strategy_equals_the_reference_on_a_local_cluster(local_cluster):
    """Separate executor JVMs and Python workers: nothing may rely on driver-side globals."""
    script = textwrap.dedent(
        """
        import skewlab

        spark = skewlab.get_spark()
        assert spark.sparkContext.master.startswith("local-cluster")
        views = skewlab.generate_views(spark, skewlab.ViewSpec(3_000, 300, 25, "zipf", 1.1, seed=9))
        views = views.cache()
        reference = skewlab.result_digest(skewlab.spark_reference_aggregate(views))
        for name in skewlab.STRATEGIES:
            result, _ = skewlab.run_strategy(views, name, skewlab.JobConfig(parallelism=2))
            print(name, result.result_digest == reference, result.records_in)
        """
    )
    proc = local_cluster.run(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    assert {ln[0] for ln in lines} >= {
        "naive",
        "salted",
        "buffered",
        "cached",
        "sorted",
        "spark_sql",
        "pkg",
        "dchoices",
        "wchoices",
    }
    assert all(ln[1] == "True" and ln[2] == "3000" for ln in lines), proc.stdout


def test_every_cache_has_the_one_default_size():
    import inspect

    from skewlab.state import DEFAULT_MAX_ENTRIES, StateBackend
    from skewlab.strategies.count import CountJob, run_count

    sizes = {
        "StateBackend('cached')": StateBackend("cached").cache_entries,
        "Cached()": Cached().cache_entries,
        "Naive(backend='cached')": Naive(backend="cached").cache_entries,
        "Buffered()": Buffered().cache_entries,
        "Salted()": Salted().cache_entries,
        "CountJob('cached')": CountJob(strategy="cached").cache_entries,
        "run_count": inspect.signature(run_count).parameters["cache_entries"].default,
    }
    assert sizes == dict.fromkeys(sizes, DEFAULT_MAX_ENTRIES)
    assert DEFAULT_MAX_ENTRIES == 1_000  # FLIP-325's largest size, the strategies' default


def test_every_strategy_class_declares_every_fact_with_its_type():
    from skewlab.strategies.parameters import STRATEGY_FACTS

    assert set(STRATEGY_FACTS) == {"name", "resumable", "periodic_checkpoints", "modelled_as"}
    for name, cls in STRATEGIES.items():
        for fact, kind in STRATEGY_FACTS.items():
            assert hasattr(cls, fact), f"{name} lacks {fact}"
            assert isinstance(getattr(cls, fact), kind), f"{name}.{fact}"


def test_a_strategy_class_without_a_fact_is_refused_when_defined():
    from dataclasses import dataclass
    from typing import ClassVar

    from skewlab.strategies.parameters import StrategyParameters

    with pytest.raises(TypeError, match="Fastest must declare periodic_checkpoints, modelled_as"):

        @dataclass(frozen=True, kw_only=True)
        class Fastest(StrategyParameters):
            name: ClassVar[str] = "fastest"
            resumable: ClassVar[bool] = False

    with pytest.raises(TypeError, match="Slowest: wrong type of resumable"):

        class Slowest(Naive):
            name = "slowest"
            resumable = "yes"

    class Naiver(Naive):  # a strategy extending another inherits its facts
        name = "naiver"

    assert (Naiver.resumable, Naiver.modelled_as) == (True, "naive")


def test_the_facts_say_what_the_lists_they_replace_said():
    from skewlab.iomodel.model import MODELLED_STRATEGIES
    from skewlab.strategies.resume import RESUMABLE

    assert RESUMABLE == ("naive", "salted", "buffered", "cached", "sorted")
    assert tuple(n for n, cls in STRATEGIES.items() if cls.resumable) == RESUMABLE
    modelled = {n: cls.modelled_as for n, cls in STRATEGIES.items() if cls.modelled_as}
    assert modelled == {"naive": "naive", "buffered": "buffered", "cached": "cached",
                        "sorted": "sorted"}  # fmt: skip
    # every pattern of the model models a strategy, every strategy's pattern exists
    assert sorted(modelled.values()) == sorted(MODELLED_STRATEGIES)
    assert [n for n, cls in STRATEGIES.items() if not cls.periodic_checkpoints] == [
        "sorted",
        "spark_sql",
        "streaming",
        "pkg",
        "dchoices",
        "wchoices",
    ]


def test_every_strategy_parameter_has_a_one_line_doc_for_its_option():
    from dataclasses import fields

    needs = {"cache_policy": {"backend": "cached"}}  # an option that only applies with another
    for name, cls in STRATEGIES.items():
        for f in fields(cls):
            doc = f.metadata.get("doc")
            assert doc and "\n" not in doc, f"{name}.{f.name} has no doc"
            for choice in f.metadata.get("choices", ()):
                # every choice the option shows is one the class takes
                own = {g.name for g in fields(cls)}
                extra = {k: v for k, v in needs.get(f.name, {}).items() if k in own}
                cls(**{f.name: choice, **extra})
    with pytest.raises(SkewlabInputError, match="only --backend cached has a cache"):
        Naive(cache_policy="tinylfu")  # on RocksDB alone: said, not ignored


def test_sorted_refuses_periodic_checkpoints_for_its_fact_not_its_name(spark):
    from skewlab.strategies.resume import run_with_failure

    views = generate_views(spark, ViewSpec(200, 20, 5, seed=1))
    jobs_before = spark.sparkContext.statusTracker().getJobIdsForGroup()
    with pytest.raises(SkewlabInputError, match="'sorted' runs as a batch job"):
        run_with_failure(views, Sorted(), fail_at=10, checkpoint_interval=5)
    with pytest.raises(SkewlabInputError, match="'spark_sql' cannot take savepoints here"):
        run_with_failure(views, SparkSql(), fail_at=10, checkpoint_interval=5)
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs_before
