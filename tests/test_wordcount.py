"""Count state for FLIP-325 / FLIP-140 on the real keyed runtime (real Spark, real RocksDB).

Every strategy's counts are compared with independent oracles: :class:`collections.Counter`
over the same keys computed in plain Python, and Spark's own ``groupBy().count()``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from skewlab.errors import SkewlabInputError, UnsortedInputError
from skewlab.keygroups import assign_to_key_group
from skewlab.runtime import KEY_GROUP, RunConfig, StageSpec, SubtaskContext
from skewlab.state import PickleSerializer
from skewlab.wordcount import (
    STRATEGIES,
    CountDigest,
    DigestSink,
    KeyedCount,
    SortedCount,
    SortGroupCount,
    count_digest,
    flip325_input,
    flip325_key,
    hit_ratio_gauge,
    run_count,
    spark_count,
    validate_cache_size,
    validate_wordcount,
    wordcount_input,
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


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("n", "k", "key_type", "message"),
    [
        (0, 1, "int", "N \\(records\\) must be a whole number >= 1, got 0"),
        (10, 0, "int", "K \\(distinct keys\\) must be a whole number >= 1, got 0"),
        (10, 11, "int", "K=11 > N=10"),
        (10, 5, "float", "unknown key type 'float'"),
        (2.5, 1, "int", "got 2.5"),
    ],
)
def test_bad_wordcount_parameters_are_one_line_errors(n, k, key_type, message):
    with pytest.raises(SkewlabInputError, match=message) as info:
        validate_wordcount(n, k, key_type)
    assert "\n" not in str(info.value)


def test_negative_cache_size_is_refused_before_spark_runs(spark):
    with pytest.raises(SkewlabInputError, match="cache size must be a whole number >= 0"):
        validate_cache_size(-1)
    words = wordcount_input(spark, 10, 2)
    with pytest.raises(SkewlabInputError, match="got -5"):
        run_count(words, "cached", cache_entries=-5)
    with pytest.raises(SkewlabInputError, match="unknown count strategy 'mapdb'"):
        run_count(words, "mapdb")
    with pytest.raises(SkewlabInputError, match="does not match column"):
        run_count(words, "heap", key_type="string")
    with pytest.raises(SkewlabInputError, match="unknown input order"):
        run_count(words, "sorted", input_order="random")


# --------------------------------------------------------------------------- the counts


def test_wordcount_input_has_exactly_k_words(spark):
    from pyspark.sql import functions as F

    words = wordcount_input(spark, 1_000, 30, "string")
    per_word = words.groupBy("word").count()
    assert per_word.count() == 30
    assert {r["count"] for r in per_word.collect()} == {33, 34}
    assert words.agg(F.countDistinct("seq")).first()[0] == 1_000


@pytest.mark.parametrize(
    ("strategy", "key_type"),
    [(s, "int") for s in STRATEGIES] + [("heap", "string"), ("sorted", "string")],
)
def test_every_strategy_counts_exactly_like_counter(spark, strategy, key_type):
    words = _with_nulls(wordcount_input(spark, N, K, key_type), every=97)
    oracle = _oracle(N, K, key_type, null_every=97)
    run = run_count(words, strategy, parallelism=2, cache_entries=100)
    assert run.counts == dict(oracle)
    assert run.digest == count_digest(oracle)
    assert run.records == sum(oracle.values())
    assert run.rejected == N - sum(oracle.values())
    if strategy in ("rocksdb", "heap", "cached", "sorted"):
        # one state read and one write per record (sorted reads each key once more to emit)
        extra = len(oracle) if strategy == "sorted" else 0
        assert run.state_reads == run.records + extra or strategy == "cached"
        assert run.state_writes == run.records or strategy == "cached"
    if strategy == "cached":
        assert run.cache_hits + run.cache_misses == run.records
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


def test_digest_detects_a_single_wrong_count():
    counts = {"a": 3, "b": 4}
    assert count_digest(counts) != count_digest({"a": 4, "b": 3})
    sink = DigestSink()
    for key, count in counts.items():
        sink.add(key, count)
    assert sink.digest() == count_digest(counts)
    assert CountDigest(1, 2, 3) + CountDigest(1, 1, -3) == CountDigest(2, 3, 0)


# --------------------------------------------------------------------------- sorted input


@pytest.mark.parametrize("strategy", ["sorted", "sort_group"])
def test_sorted_strategies_refuse_unsorted_input_instead_of_miscounting(spark, strategy):
    words = wordcount_input(spark, 2_000, 70)
    with pytest.raises(Exception, match="UnsortedInputError: input is not sorted by key"):
        run_count(words, strategy, parallelism=2, input_order="arrival")


def _context(key_type: str = "bigint") -> SubtaskContext:
    config = RunConfig("sorted", parallelism=1, max_parallelism=128)
    stage = StageSpec(
        "1:test", config, "word", SortedCount, final=True, serializer=PickleSerializer(),
        key_type=key_type,
    )  # fmt: skip
    return SubtaskContext(stage, 0)


def _batch(keys):
    return {"word": list(keys), KEY_GROUP: [assign_to_key_group(k, 128) for k in keys]}


def test_single_key_backend_error_surfaces_from_the_sorted_operator():
    keys = sorted([5, 5, 9, 9, 9], key=lambda k: (assign_to_key_group(k, 128), k))
    ctx = _context()
    op = SortedCount(ctx)
    op.process(_batch(keys), len(keys), None)
    # key 5's run ended; seeing it again is an error, not a fresh count of 1
    with pytest.raises(UnsortedInputError, match="input is not sorted by key"):
        op.process(_batch([keys[0]]), 1, None)
    assert ctx.results == Counter(keys)  # the finished runs, counted right
    op.close()


def test_sort_group_raises_the_same_error():
    ctx = _context()
    op = SortGroupCount(ctx)
    first, second = sorted([1, 2], key=lambda k: (assign_to_key_group(k, 128), k))
    op.process(_batch([first, second]), 2, None)
    with pytest.raises(UnsortedInputError):
        op.process(_batch([first]), 1, None)


# --------------------------------------------------------------------------- FLIP-325


def test_flip325_key_selector_and_input(spark):
    assert [flip325_key(x) for x in (0, 1, 999, 1000, 1500, 2000)] == [0, 1, 499, 500, 500, 0]
    rows = flip325_input(spark, 3_000).collect()
    assert [r.word for r in rows] == [flip325_key(r.seq) for r in rows]


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
    assert run.hit_ratio_per_interval and 0.0 <= run.row()["state_cache_hit_ratio"] <= 1.0


def test_checkpoint_flushes_dirty_cache_entries_and_samples_the_gauge():
    ctx = _context()
    op = KeyedCount(ctx, backend="cached", cache_entries=10, emit="record")
    keys = [1, 2, 1, 1, 3]
    op.process(_batch(keys), len(keys), None)
    assert op.backend.stats.writes == 0  # write-back: nothing reached RocksDB yet
    op.checkpoint()
    assert op.backend.stats.writes == 3  # the three dirty keys
    assert op.gauge[-1][1] == pytest.approx(2 / 5)  # hits 2 of 5 lookups
    assert op.records_emitted == 5
    op.finish()
    assert ctx.results == {1: 3, 2: 1, 3: 1}
    stats = op.close()
    assert stats["checkpoints"] == 1


def test_hit_ratio_gauge_averages_the_per_second_samples():
    assert hit_ratio_gauge([(1.0, 0.0), (2.0, 1.0)]) == 0.5
    assert hit_ratio_gauge([(1.0, None)]) is None
