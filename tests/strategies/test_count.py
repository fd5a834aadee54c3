"""The count jobs of FLIP-325 / FLIP-140 on the real keyed runtime (real Spark, real RocksDB).

Every strategy's counts are compared with independent oracles: :class:`collections.Counter`
over the same keys computed in plain Python, and Spark's own ``groupBy().count()``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from skewlab.aggregates.count import count_digest
from skewlab.errors import SkewlabInputError
from skewlab.inputs.wordcount import flip325_input, flip325_key, wordcount_input
from skewlab.strategies.count import (
    COUNT_STRATEGIES,
    COUNT_STRATEGY_RECORDS,
    KEYED_COUNTS,
    CountJob,
    hit_ratio_gauge,
    run_count,
    spark_count,
)

N, K = 6_000, 700


def _oracle(n: int, k: int, key_type: str, null_every: int | None = None) -> Counter:
    words = Counter()
    for i in range(n):
        if null_every and i % null_every == 0:
            continue
        words[i % k if key_type == "int" else f"w{i % k}"] += 1
    return words


def _with_nulls(df, every: int):
    from pyspark.sql import functions as F

    return df.withColumn(
        "word", F.when(F.col("seq") % every == 0, F.lit(None)).otherwise(F.col("word"))
    )


def test_negative_cache_size_is_refused_before_spark_runs(spark):
    words = wordcount_input(spark, 10, 2)
    with pytest.raises(SkewlabInputError, match="got -5"):
        run_count(words, "cached", cache_entries=-5)
    with pytest.raises(SkewlabInputError, match="unknown count strategy 'mapdb'"):
        run_count(words, "mapdb")
    with pytest.raises(SkewlabInputError, match="does not match column"):
        run_count(words, "heap", key_type="string")
    with pytest.raises(SkewlabInputError, match="unknown input order"):
        run_count(words, "sorted", input_order="random")
    with pytest.raises(SkewlabInputError, match="cache size must be a whole number >= 0, got -1"):
        CountJob(strategy="cached", cache_entries=-1)


@pytest.mark.parametrize(
    ("strategy", "key_type"),
    [(s, "int") for s in COUNT_STRATEGIES] + [("heap", "string"), ("sorted", "string")],
)
def test_every_strategy_counts_exactly_like_counter(spark, strategy, key_type):
    words = _with_nulls(wordcount_input(spark, N, K, key_type), every=97)
    oracle = _oracle(N, K, key_type, null_every=97)
    run = run_count(words, strategy, parallelism=2, cache_entries=100)
    assert run.counts == dict(oracle)
    assert run.digest == count_digest(oracle)
    assert run.records == sum(oracle.values())
    assert run.rejected == N - sum(oracle.values())
    if strategy in ("rocksdb", "heap", "sorted"):
        # one state read and one write per record (sorted reads each key once more to emit)
        extra = len(oracle) if strategy == "sorted" else 0
        assert run.state_reads == run.records + extra
        assert run.state_writes == run.records
    if strategy == "cached":
        # keys cycle through 700 (about 350 per subtask), more than an LRU of 100 holds: no
        # access ever hits; every miss reads RocksDB, every record dirties its entry, and all
        # but the 100 entries each subtask still holds at the end were written back on eviction
        assert (run.cache_hits, run.cache_misses) == (0, run.records)
        assert run.state_reads == run.records
        assert run.state_writes == run.records - 2 * 100
    if strategy != "spark_sql":  # the operators' CPU time, besides the runtime's wall clock
        assert run.operator_cpu_seconds > 0 and run.operator_seconds > 0


@pytest.mark.parametrize("strategy", ["sorted"])  # every strategy: test_benchmarks_state.py
def test_digest_sink_matches_sparks_own_digest(spark, strategy):
    words = wordcount_input(spark, N, K, "string")
    spark_digest, counts, _, processed, _ = spark_count(words, collect=True)
    assert counts == dict(_oracle(N, K, "string"))
    assert spark_digest == count_digest(counts) and processed == N
    run = run_count(words, strategy, parallelism=2, sink="digest")
    assert run.counts is None
    assert run.digest == spark_digest


@pytest.mark.parametrize("strategy", ["sorted", "sort_group"])
def test_sorted_strategies_refuse_unsorted_input_instead_of_miscounting(spark, strategy):
    words = wordcount_input(spark, 2_000, 70)
    with pytest.raises(Exception, match="UnsortedInputError: input is not sorted by key"):
        run_count(words, strategy, parallelism=2, input_order="arrival")


def test_spark_counts_null_words_as_rejected_in_both_sinks(spark):
    words = _with_nulls(wordcount_input(spark, N, K), every=97)
    nulls = N - sum(_oracle(N, K, "int", null_every=97).values())
    for sink in ("collect", "digest"):  # the digest sink reported 0 rejected, whatever the input
        run = run_count(words, "spark_sql", sink=sink)
        assert run.rejected == nulls and run.records + run.rejected == N


@pytest.mark.parametrize(
    ("size", "low", "high"),
    [(500, 0.5, 0.5)],  # 250 and 1,000: test_benchmarks_state.py
)
def test_lru_hit_ratio_follows_the_seeds_key_pattern(spark, size, low, high):
    n = 20_000
    oracle = Counter(flip325_key(x) for x in range(n))
    run = run_count(
        flip325_input(spark, n),
        "cached",
        parallelism=1,
        cache_entries=size,
        emit="record",
        checkpoint_interval_ms=1000,
    )
    assert run.counts == dict(oracle)
    assert low <= run.hit_ratio <= high  # 1000: the first 1,000 accesses miss (warm-up)
    # every record emitted into the collector, and the emissions add up to the counts
    assert run.records_emitted == n and run.emissions_match


def test_the_hit_ratio_gauge_samples_cover_the_run_back_to_back(spark):
    n = 200_000
    run = run_count(
        flip325_input(spark, n),
        "cached",
        parallelism=1,
        cache_entries=500,
        emit="record",
        checkpoint_interval_ms=5,
    )
    samples = run.hit_ratio_per_interval
    assert len(samples) >= 2 and run.checkpoints == len(samples) - 1  # + the final partial one
    # each interval lasted from the previous sample to its own: no gap, no overlap
    ends = [0.0] + [end for end, _, _ in samples]
    for (end, _, duration), previous in zip(samples, ends, strict=False):
        assert duration == pytest.approx(end - previous, abs=1e-6)
    # 50% hits in every whole block of 1,000 records: the duration-weighted gauge is 0.5 too
    assert run.hit_ratio == 0.5
    assert run.row()["state_cache_hit_ratio"] == pytest.approx(0.5, abs=0.02)


def test_hit_ratio_gauge_weights_each_interval_by_its_duration():
    # a last, partial interval of 0.2 s weighs a fifth of a whole second
    assert hit_ratio_gauge([(1.0, 0.0, 1.0), (1.2, 1.0, 0.2)]) == pytest.approx(0.2 / 1.2)
    assert hit_ratio_gauge([(1.0, 0.0, 1.0), (2.0, 1.0, 1.0)]) == 0.5
    assert hit_ratio_gauge([(1.0, None, 1.0)]) is None


def test_each_count_strategy_is_a_record_of_its_own_facts():
    from skewlab.operators.count import KeyedCount, SortedCount, SortGroupCount

    assert COUNT_STRATEGIES == ("rocksdb", "heap", "cached", "sort_group", "sorted", "spark_sql")
    assert all(COUNT_STRATEGY_RECORDS[name].name == name for name in COUNT_STRATEGIES)
    facts = {
        name: (c.operator, c.backend, c.keyed, c.has_cache, c.in_spark, c.state_accesses)
        for name, c in COUNT_STRATEGY_RECORDS.items()
    }
    assert facts == {
        "rocksdb": (KeyedCount, "rocksdb", True, False, False, True),
        "heap": (KeyedCount, "heap", True, False, False, True),
        "cached": (KeyedCount, "cached", True, True, False, True),
        "sort_group": (SortGroupCount, None, False, False, False, False),
        "sorted": (SortedCount, None, False, False, False, True),
        "spark_sql": (None, None, False, False, True, False),
    }
    assert KEYED_COUNTS == ("rocksdb", "heap", "cached")


def test_a_count_jobs_order_and_operator_come_from_its_strategys_record():
    orders = {name: CountJob(strategy=name).order_by for name in COUNT_STRATEGIES}
    assert orders == {
        "rocksdb": ("seq",),
        "heap": ("seq",),
        "cached": ("seq",),
        "sort_group": ("_key_group", "word"),
        "sorted": ("_key_group", "word"),
        "spark_sql": ("seq",),
    }
    assert CountJob(strategy="sorted", input_order="exchange").order_by == ()
    cached = CountJob(strategy="cached", cache_entries=7, write_batch=4).operator()
    backend = cached.keywords["state_backend"]
    assert (backend.name, backend.cache_entries, backend.write_batch) == ("cached", 7, 4)
    heap = CountJob(strategy="heap", cache_entries=7).operator().keywords["state_backend"]
    assert (heap.name, heap.cache_entries) == ("heap", None)
    sort_group = CountJob(strategy="sort_group", sink="digest").operator()
    assert sort_group.keywords == {"sink": "digest"}
    with pytest.raises(ValueError, match="'spark_sql' runs no Python operator"):
        CountJob(strategy="spark_sql").operator()
    with pytest.raises(SkewlabInputError, match="only the 'cached' strategy has one, not 'heap'"):
        CountJob(strategy="heap", write_batch=2)
