"""Routing by key group: Flink's ``keyBy`` on a Spark DataFrame.

1. every record gets its **key group**, Flink's way (``murmur(key.hashCode()) % maxP``, the
   Java type of the key following the column's Spark type: :mod:`skewlab.state.java_hash`),
   and the **operator index** that owns it (``key_group * p // maxP``);
2. records are shuffled so that partition *i* holds exactly the key groups of operator *i*
   (:func:`identity_partition`: a partition key chosen per operator index so that Spark's hash
   partitioning puts it on partition *i* -- Spark's hash of the index itself would not); at
   parallelism 1 they are not shuffled at all (Flink's forward partitioning).

Records with a null key get key group -1 and operator 0, where they are counted as rejected.

Example::

    >>> routed = with_key_groups(views, "tweet_id", max_parallelism=128, parallelism=4)  # doctest: +SKIP
    >>> identity_partition(routed, spark, 4)     # partition i == operator i  # doctest: +SKIP
"""  # noqa: E501

from __future__ import annotations

import numpy as np
import pandas as pd

from skewlab.engine.jvm_key_groups import JVM_HASHED_TYPES, with_jvm_key_group
from skewlab.errors import SkewlabInputError
from skewlab.state.java_hash import java_hash_array, java_type_of_spark
from skewlab.state.key_groups import (
    assign_to_key_group_array,
    check_parallelism,
    compute_default_max_parallelism,
)

__all__ = [
    "KEY_GROUP",
    "OPERATOR",
    "PARTITION_KEY",
    "identity_partition",
    "identity_partition_keys",
    "java_type_of_arrow",
    "key_groups_in_jvm",
    "key_groups_of",
    "subtask_load",
    "with_key_groups",
]

# column names the routing adds
KEY_GROUP = "_key_group"
OPERATOR = "_operator"
PARTITION_KEY = "_partition_key"


def with_key_groups(df, key_col: str, max_parallelism: int, parallelism: int):
    """Add Flink's key group and operator index of ``key_col`` (null keys: group -1, op 0).

    ``string`` keys hash as Java ``String``, ``int`` (and smaller) as ``Integer``, ``bigint``
    as ``Long`` -- then Flink's ``murmurHash``, so subtask numbers match a real Flink job.
    Integer keys are hashed by Spark in the JVM (:mod:`skewlab.engine.jvm_key_groups`), string
    keys in numpy through a pandas UDF.
    """
    from pyspark.sql import functions as F

    java_type = java_type_of_spark(dict(df.dtypes)[key_col])
    if java_type in JVM_HASHED_TYPES:
        df = with_jvm_key_group(df, key_col, java_type, max_parallelism, KEY_GROUP)
    else:
        df = df.withColumn(KEY_GROUP, _string_key_groups(max_parallelism)(F.col(key_col)))
    kg = F.col(KEY_GROUP)
    operator = F.when(kg < 0, F.lit(0)).otherwise(
        ((kg.cast("long") * parallelism) / F.lit(max_parallelism)).cast("int")
    )
    return df.withColumn(OPERATOR, operator)


def key_groups_in_jvm(stage, job) -> bool:
    """Whether Spark computes a stage's key groups (:func:`with_key_groups`) before its records
    reach Python: where the exchange routes by them (parallelism above 1) or the stage's order
    sorts by them. Elsewhere -- one subtask, records in arrival order -- nothing in the JVM
    reads them, and the subtask computes them itself from the keys (:func:`key_groups_of`),
    which spares each record a column's conversion to Arrow and, for string keys, a round trip
    through a pandas UDF.

    Example::

        >>> from types import SimpleNamespace as S
        >>> key_groups_in_jvm(S(order_by=("seq",)), S(parallelism=1))
        False
        >>> key_groups_in_jvm(S(order_by=("seq",)), S(parallelism=2))
        True
        >>> key_groups_in_jvm(S(order_by=(KEY_GROUP, "tweet_id")), S(parallelism=1))
        True
    """
    return job.parallelism > 1 or KEY_GROUP in stage.order_by


def key_groups_of(keys, java_type: str, max_parallelism: int) -> np.ndarray:
    """Flink's key group of each key (``int32``; -1 for a null key), the keys hashed as the Java
    type ``java_type``: the Python side of :func:`with_key_groups`, the same numbers.

    ``keys`` is a list (``None`` for a null key) or a numpy integer array.

    Example::

        >>> key_groups_of(["hello", None, "world"], "String", 128).tolist()
        [35, -1, 66]
        >>> key_groups_of(np.array([0, 42]), "Long", 128).tolist()
        [94, 29]
    """
    if isinstance(keys, np.ndarray):
        return assign_to_key_group_array(java_hash_array(keys, java_type), max_parallelism)
    out = np.full(len(keys), -1, dtype=np.int32)
    if None not in keys:
        if keys:
            out[:] = assign_to_key_group_array(java_hash_array(keys, java_type), max_parallelism)
        return out
    present = np.fromiter((k is not None for k in keys), dtype=bool, count=len(keys))
    if present.any():
        values = [k for k in keys if k is not None]
        out[present] = assign_to_key_group_array(
            java_hash_array(values, java_type), max_parallelism
        )
    return out


def java_type_of_arrow(arrow_type) -> str:
    """The Java key type of an Arrow column type, as :func:`with_key_groups` hashes its Spark
    type: ``int64`` as ``Long``, smaller integers as ``Integer``, strings as ``String``.

    Example::

        >>> import pyarrow as pa
        >>> java_type_of_arrow(pa.int64()), java_type_of_arrow(pa.string())
        ('Long', 'String')
    """
    import pyarrow as pa

    if pa.types.is_int64(arrow_type):
        return "Long"
    if (
        pa.types.is_int32(arrow_type)
        or pa.types.is_int16(arrow_type)
        or pa.types.is_int8(arrow_type)
    ):
        return "Integer"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "String"
    raise SkewlabInputError(
        f"a key column must be string, tinyint, smallint, int or bigint, not {arrow_type}"
    )


def _string_key_groups(max_parallelism: int):
    """A pandas UDF: the key group of each ``String`` key, hashed in numpy (Java's
    ``String.hashCode`` over UTF-16 units has no cheap form in Spark's expressions)."""
    from pyspark.sql import functions as F

    def key_groups(keys: pd.Series) -> pd.Series:
        out = np.full(len(keys), -1, dtype=np.int32)
        present = keys.notna().to_numpy()
        if present.any():
            out[present] = key_groups_of(keys[present].tolist(), "String", max_parallelism)
        return pd.Series(out)

    return F.pandas_udf(key_groups, "int")


def subtask_load(df, parallelism: int, max_parallelism: int | None = None, key_col="tweet_id"):
    """Records and keys per operator subtask after Flink's ``keyBy`` (pandas, one row each).

    Example::

        >>> subtask_load(views, parallelism=4)  # doctest: +SKIP
           subtask  records  keys  hottest_key  hottest_key_records
    """
    from pyspark.sql import functions as F

    max_p = max_parallelism or compute_default_max_parallelism(parallelism)
    check_parallelism(parallelism, max_p)
    per_key = (
        with_key_groups(df, key_col, max_p, parallelism)
        .groupBy(OPERATOR, key_col)
        .agg(F.count(F.lit(1)).alias("n"))
    )
    load = (
        per_key.groupBy(OPERATOR)
        .agg(
            F.sum("n").alias("records"),
            F.count(F.lit(1)).alias("keys"),
            F.max_by(key_col, "n").alias("hottest_key"),
            F.max("n").alias("hottest_key_records"),
        )
        .withColumnRenamed(OPERATOR, "subtask")
        .toPandas()
    )
    every = pd.DataFrame({"subtask": range(parallelism)})
    load = every.merge(load, on="subtask", how="left")
    load[["records", "keys", "hottest_key_records"]] = (
        load[["records", "keys", "hottest_key_records"]].fillna(0).astype("int64")
    )
    return load


_PARTITION_KEYS: dict[int, list[int]] = {}


def identity_partition_keys(spark, parallelism: int) -> list[int]:
    """For each operator index *i*, a long whose Spark hash partition (of ``parallelism``) is *i*.

    ``repartition(p, col)`` places a row on ``pmod(murmur3(col), p)``; asking Spark itself
    which small integers land where makes the placement exact for this Spark version.
    """
    if parallelism in _PARTITION_KEYS:
        return _PARTITION_KEYS[parallelism]
    from pyspark.sql import functions as F

    n = 64 * parallelism
    while True:
        rows = (
            spark.range(0, n)
            .select("id", F.expr(f"pmod(hash(id), {parallelism})").alias("p"))
            .groupBy("p")
            .agg(F.min("id").alias("id"))
            .collect()
        )
        found = {r.p: r.id for r in rows}
        if len(found) == parallelism:
            keys = [found[i] for i in range(parallelism)]
            _PARTITION_KEYS[parallelism] = keys
            return keys
        n *= 4


def identity_partition(df, spark, parallelism: int):
    """Shuffle so that partition *i* holds exactly the rows whose ``_operator`` is *i*.

    At parallelism 1 nothing needs to move: the records stay where they are and the one
    operator reads every input partition in turn (``coalesce(1)``, no exchange) -- Flink's
    forward partitioning, as where a keyed operator and its input both run one subtask.
    """
    if parallelism == 1:
        return df.coalesce(1)
    from pyspark.sql import functions as F

    keys = identity_partition_keys(spark, parallelism)
    lookup = F.array(*[F.lit(k).cast("long") for k in keys])
    return df.withColumn(PARTITION_KEY, F.element_at(lookup, F.col(OPERATOR) + 1)).repartition(
        parallelism, PARTITION_KEY
    )
