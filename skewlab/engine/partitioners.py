"""Where a key's records land in three engines: Flink's key groups, Spark's hash partitioning and
Kafka's default partitioner, each computed the engine's own way over a column of keys.

==========  =====================================================  ==============================
engine      a key's place                                          checked against
==========  =====================================================  ==============================
Flink       key group ``murmurHash(key.hashCode()) % M``, then     real Flink jobs (chapter 06)
            the subtask owning the group's range
            (:mod:`skewlab.state.key_groups`)
Spark       ``repartition(n, key)``: ``pmod(murmur3(key, 42), n)``  ``spark_partition_id()`` of a
            (``HashPartitioning``), computed by Spark itself       real ``repartition``
Kafka       ``toPositive(murmur2(key bytes)) % n`` (the default     Kafka's own ``Utils.murmur2``
            partitioner for a keyed record), the key's bytes as    test vectors
            the standard serializer writes them
==========  =====================================================  ==============================

Kafka's key bytes follow the Spark column type the way Kafka's standard serializers write them:
``string`` as UTF-8 (``StringSerializer``), ``smallint`` / ``int`` / ``bigint`` as 2 / 4 / 8
bytes big-endian (``ShortSerializer``, ``IntegerSerializer``, ``LongSerializer``), ``binary``
as itself (``ByteArraySerializer``). Kafka has no serializer for a single byte, so ``tinyint``
keys are refused for Kafka.

Example::

    >>> murmur2(b"foobar")                       # Kafka's UtilsTest vector
    -790332482
    >>> kafka_partitions(["foobar"], "string", 4).tolist()
    [2]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from skewlab.errors import SkewlabInputError
from skewlab.state.java_hash import java_hash_array, java_type_of_spark
from skewlab.state.key_groups import assign_to_key_group_array

__all__ = [
    "ENGINES",
    "KAFKA_KEY_SERIALIZERS",
    "SPARK_HASH_SEED",
    "check_key_type",
    "flink_key_groups",
    "kafka_key_bytes",
    "kafka_partitions",
    "murmur2",
    "spark_partition_expression",
]

#: The engines whose routing skewlab computes.
ENGINES = ("flink", "spark", "kafka")
#: Spark's ``HashPartitioning`` hashes with ``Murmur3Hash(..., 42)``.
SPARK_HASH_SEED = 42
#: The Kafka serializer each Spark key type is written with, and its byte width (0: variable).
KAFKA_KEY_SERIALIZERS = {
    "string": ("StringSerializer (UTF-8)", 0),
    "smallint": ("ShortSerializer", 2),
    "int": ("IntegerSerializer", 4),
    "bigint": ("LongSerializer", 8),
    "binary": ("ByteArraySerializer", 0),
}

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK32 = 0xFFFFFFFF


def check_key_type(spark_type: str, engines: Iterable[str]) -> None:
    """Raise :class:`~skewlab.errors.SkewlabInputError` when a key column of ``spark_type``
    cannot be hashed as stated by one of ``engines``, naming the engine and what it takes.

    Example::

        >>> check_key_type("bigint", ENGINES)
        >>> check_key_type("double", ["spark", "kafka"])
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: kafka cannot hash a double key as stated: its standard serializers take string, smallint, int, bigint or binary keys
    """  # noqa: E501
    for engine in engines:
        if engine not in ENGINES:
            raise SkewlabInputError(f"unknown engine {engine!r}: use {', '.join(ENGINES)} or all")
        if engine == "flink":
            try:
                java_type_of_spark(spark_type)
            except SkewlabInputError as error:
                raise SkewlabInputError(f"flink cannot hash this key as stated: {error}") from None
        elif engine == "kafka" and spark_type not in KAFKA_KEY_SERIALIZERS:
            allowed = list(KAFKA_KEY_SERIALIZERS)
            raise SkewlabInputError(
                f"kafka cannot hash a {spark_type} key as stated: its standard serializers take "
                f"{', '.join(allowed[:-1])} or {allowed[-1]} keys"
            )


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` of ``data``: a signed 32-bit int, as Java returns it.

    Example::

        >>> murmur2(b"21"), murmur2(b"abc")
        (-973932308, 479470107)
    """
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK32
        k ^= k >> 24
        k = (k * _M) & _MASK32
        h = ((h * _M) & _MASK32) ^ k
    tail = length % 4
    if tail:
        if tail == 3:
            h ^= data[whole + 2] << 16
        if tail >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_key_bytes(value, spark_type: str) -> bytes:
    """The bytes Kafka's standard serializer writes for one key of ``spark_type``.

    Example::

        >>> kafka_key_bytes(1, "bigint"), kafka_key_bytes("é", "string")
        (b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01', b'\\xc3\\xa9')
    """
    return _serializer(spark_type)(value)


def _serializer(spark_type: str):
    """The function writing one key of ``spark_type`` as Kafka's standard serializer does
    (the type checked once, not per key)."""
    check_key_type(spark_type, ["kafka"])
    if spark_type == "string":
        return lambda value: value.encode("utf-8")
    if spark_type == "binary":
        return bytes
    width = KAFKA_KEY_SERIALIZERS[spark_type][1]
    return lambda value: int(value).to_bytes(width, "big", signed=True)


def kafka_partitions(values: Iterable, spark_type: str, partitions: int) -> np.ndarray:
    """Kafka's default partition of each key: ``toPositive(murmur2(bytes)) % partitions``.

    Example::

        >>> kafka_partitions([1, 2, 3], "int", 6).tolist()
        [0, 5, 1]
    """
    serialize = _serializer(spark_type)
    return np.fromiter(
        ((murmur2(serialize(v)) & 0x7FFFFFFF) % partitions for v in values), dtype=np.int32
    )


def flink_key_groups(values, spark_type: str, max_parallelism: int) -> np.ndarray:
    """Flink's key group of each key (``murmurHash(hashCode) % max_parallelism``), the key's Java
    type following its Spark type (:mod:`skewlab.state.java_hash`).

    Example::

        >>> flink_key_groups(["hello"], "string", 128).tolist()
        [35]
    """
    java_type = java_type_of_spark(spark_type)
    keys = list(values) if java_type == "String" else np.asarray(values, dtype=np.int64)
    return assign_to_key_group_array(java_hash_array(keys, java_type), max_parallelism)


def spark_partition_expression(column: str, partitions: int) -> str:
    """The SQL expression of the partition ``repartition(partitions, column)`` puts a row on
    (Spark's ``HashPartitioning``: ``pmod(murmur3_hash(column, seed 42), partitions)``; Spark's
    ``hash`` function is that hash with that seed).

    Example::

        >>> spark_partition_expression("user_id", 8)
        'pmod(hash(`user_id`), 8)'
    """
    return f"pmod(hash(`{column.replace('`', '``')}`), {int(partitions)})"
