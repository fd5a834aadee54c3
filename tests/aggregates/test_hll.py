"""The three ways of updating HLL registers agree: datasketch, numpy, Spark SQL."""

from __future__ import annotations

import numpy as np
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from skewlab.aggregates.hll import (
    DEFAULT_PRECISION,
    hash64,
    hashes_of,
    new_sketch,
    register_index_and_rank,
    spark_register_columns,
    update_registers,
)


def _plain_register(value: str, p: int) -> tuple[int, int]:
    """Index and rank written out with Python ints, straight from the HLL definition."""
    h = xxhash.xxh64_intdigest(value.encode("utf-8"), seed=42)
    w = h >> p
    return h & ((1 << p) - 1), (64 - p) - w.bit_length() + 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=60), st.sampled_from([4, 8, 10, 14]))
def test_numpy_update_equals_datasketch_update(values, p):
    sketch = new_sketch(p)
    for v in values:
        sketch.update(v)
    reg = np.zeros(1 << p, dtype=np.int8)
    update_registers(reg, hashes_of(values), p)
    assert np.array_equal(reg, sketch.reg)
    for v in values:
        idx, rank = _plain_register(v, p)
        assert reg[idx] >= rank


def test_rank_of_extreme_hashes_is_exact():
    p = 10
    hashes = np.array([0, 1 << p, (1 << 64) - 1, 1 << 63, (1 << 53) + (1 << p)], dtype=np.uint64)
    idx, rank = register_index_and_rank(hashes, p)
    expected = [(int(h) & 1023, 65 - p - (int(h) >> p).bit_length()) for h in hashes]
    assert list(zip(idx.tolist(), rank.tolist(), strict=True)) == expected
    # signed int64 input (what Spark hands over) means the same bits
    idx2, rank2 = register_index_and_rank(hashes.view(np.int64), p)
    assert np.array_equal(idx, idx2) and np.array_equal(rank, rank2)


def test_spark_hash_and_registers_equal_python(spark):
    from pyspark.sql import functions as F

    values = ["", "a", "tweet-1", "user-24999", "é\U0001f600", "x" * 100] + [
        f"view-{i}" for i in range(200)
    ]
    df = spark.createDataFrame([(v,) for v in values], "v string")
    idx, rank = spark_register_columns(F.xxhash64("v"), DEFAULT_PRECISION)
    rows = df.select("v", F.xxhash64("v").alias("h"), idx.alias("i"), rank.alias("r")).collect()
    for row in rows:
        assert row.h % (1 << 64) == hash64(row.v)
        assert (row.i, row.r) == _plain_register(row.v, DEFAULT_PRECISION)


def test_hash64_matches_xxhash_reference():
    assert hash64("tweet-1") == xxhash.xxh64_intdigest(b"tweet-1", seed=42)
    assert hash64(b"abc") == hash64("abc")
