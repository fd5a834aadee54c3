"""Routing by key group: every record on its Flink subtask, partition i == operator i."""

from __future__ import annotations

import numpy as np
import pytest

from skewlab.engine.routing import (
    KEY_GROUP,
    OPERATOR,
    identity_partition,
    identity_partition_keys,
    java_type_of_arrow,
    key_groups_in_jvm,
    key_groups_of,
    subtask_load,
    with_key_groups,
)
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.state.java_hash import java_hash_array
from skewlab.state.key_groups import (
    assign_key_to_parallel_operator,
    assign_to_key_group,
    assign_to_key_group_array,
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


def test_identity_partition_keys_hash_to_their_own_partition(spark):
    from pyspark.sql import functions as F

    keys = identity_partition_keys(spark, 5)
    rows = spark.createDataFrame([(k,) for k in keys], "k long")
    found = rows.select(F.expr("pmod(hash(k), 5)").alias("p")).collect()
    assert [r.p for r in found] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(("spark_type", "numpy_type"), [("int", np.int32), ("bigint", np.int64)])
def test_integer_keys_hash_as_their_java_type(spark, spark_type, numpy_type):
    # was: every non-string key hashed as a Java Long; an int column is a Java Integer in Flink
    keys = [-123_456, -5, -1, 0, 7, 2**31 - 1]
    df = spark.createDataFrame([(k,) for k in keys], f"k {spark_type}")
    rows = with_key_groups(df, "k", 128, 4).orderBy("k").collect()
    assert [r[KEY_GROUP] for r in rows] == [
        assign_to_key_group(numpy_type(k), 128) for k in sorted(keys)
    ]
    if spark_type == "int":  # Integer.hashCode(-1) == -1, Long.hashCode(-1) == 0: other groups
        assert rows[2][KEY_GROUP] != assign_to_key_group(-1, 128)


@pytest.mark.parametrize("max_p", [128, 7, 32768])
@pytest.mark.parametrize(("spark_type", "java_type", "dtype"), [
    ("bigint", "Long", np.int64), ("int", "Integer", np.int32), ("smallint", "Integer", np.int16),
])  # fmt: skip
def test_the_jvm_key_group_equals_flinks_on_random_and_extreme_keys(
    spark, max_p, spark_type, java_type, dtype
):
    # integer keys are hashed by Spark's own expressions (with_jvm_key_group), no Python:
    # every 32-bit multiply and the abs of Integer.MIN_VALUE must wrap exactly as Java's
    import pandas as pd

    info = np.iinfo(dtype)
    rng = np.random.default_rng(28)
    keys = np.concatenate([
        rng.integers(info.min, info.max, 5_000, dtype=dtype, endpoint=True),
        np.array([info.min, info.min + 1, -1, 0, 1, info.max], dtype=dtype),
    ])  # fmt: skip
    df = spark.createDataFrame(pd.DataFrame({"k": keys}), f"k {spark_type}")
    got = np.array([r[KEY_GROUP] for r in with_key_groups(df, "k", max_p, 1).collect()])
    expected = assign_to_key_group_array(java_hash_array(keys, java_type), max_p)
    assert got.tolist() == expected.tolist()


def test_the_key_group_of_a_null_integer_key_is_minus_one(spark):
    df = spark.createDataFrame([(None,), (5,)], "k bigint")
    rows = {r.k: (r[KEY_GROUP], r[OPERATOR]) for r in with_key_groups(df, "k", 128, 4).collect()}
    assert rows[None] == (-1, 0) and rows[5][0] == assign_to_key_group(5, 128)


def test_one_subtask_reads_its_input_where_it_is_no_exchange(spark):
    # Flink's forward partitioning at p = 1: one partition, and no shuffle in the plan
    views = generate_views(spark, ViewSpec(2_000, 50, 40, seed=3))
    routed = identity_partition(with_key_groups(views, "tweet_id", 128, 1), spark, 1)
    plan = routed._jdf.queryExecution().executedPlan().toString()
    assert "Exchange" not in plan
    assert routed.rdd.getNumPartitions() == 1 and routed.count() == 2_000
    sharded = identity_partition(with_key_groups(views, "tweet_id", 128, 2), spark, 2)
    assert "Exchange" in sharded._jdf.queryExecution().executedPlan().toString()


def test_null_keys_go_to_operator_zero_with_key_group_minus_one(spark):
    df = spark.createDataFrame([("a",), (None,)], "k string")
    rows = {r.k: (r[KEY_GROUP], r[OPERATOR]) for r in with_key_groups(df, "k", 128, 4).collect()}
    assert rows[None] == (-1, 0)
    assert rows["a"][0] == assign_to_key_group("a", 128)


def test_subtask_load_counts_every_record_on_its_flink_subtask(spark):
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


@pytest.mark.parametrize("spark_type", ["bigint", "int", "string"])
def test_the_subtasks_key_groups_equal_the_ones_spark_computes(spark, spark_type):
    # at p = 1 the subtask computes the key groups from the keys (key_groups_of): the same
    # numbers as Spark's (JVM expressions for integers, the pandas UDF for strings), nulls -1
    rng = np.random.default_rng(7)
    values = [int(v) for v in rng.integers(-(2**31), 2**31 - 1, size=500)]
    if spark_type == "bigint":
        values += [-(2**63), 2**63 - 1, 1 << 32]
    keys = [str(v) if spark_type == "string" else v for v in values] + [None]
    if spark_type == "string":
        keys += ["", "é", "\U0001f600"]
    df = spark.createDataFrame([(k,) for k in keys], f"k {spark_type}")
    rows = with_key_groups(df, "k", 128, 2).select("k", KEY_GROUP).toArrow()
    java_type = java_type_of_arrow(rows.column("k").type)
    mine = key_groups_of(rows.column("k").to_pylist(), java_type, 128)
    assert mine.tolist() == rows.column(KEY_GROUP).to_pylist()
    assert mine[keys.index(None)] == -1
    if spark_type != "string":  # the numpy route too, where there is no null
        present = rows.filter(rows.column("k").is_valid())
        as_numpy = key_groups_of(present.column("k").to_numpy(), java_type, 128)
        assert as_numpy.tolist() == present.column(KEY_GROUP).to_pylist()


def test_key_groups_in_jvm_only_where_something_there_reads_them():
    from types import SimpleNamespace as S

    assert not key_groups_in_jvm(S(order_by=("seq",)), S(parallelism=1))
    assert not key_groups_in_jvm(S(order_by=()), S(parallelism=1))
    assert key_groups_in_jvm(S(order_by=("seq",)), S(parallelism=3))
    assert key_groups_in_jvm(S(order_by=(KEY_GROUP, "tweet_id")), S(parallelism=1))


def test_an_unsupported_key_type_is_named():
    import pyarrow as pa

    from skewlab.errors import SkewlabInputError

    with pytest.raises(SkewlabInputError, match="not double"):
        java_type_of_arrow(pa.float64())
