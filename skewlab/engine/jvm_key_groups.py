"""Flink's key group of an integer key, computed by Spark in the JVM (no Python round trip).

``assignToKeyGroup(key, maxP) = murmurHash(key.hashCode()) % maxP`` written as Spark column
expressions, so Spark's generated code computes it next to the scan. A Java ``int`` is kept as
its unsigned 32 bits in a ``long``; a product of two such values would overflow a ``long``
(and Spark 4 fails on overflow), so each multiply by a constant is split into its 16-bit
halves. Every step is its own projection: a step reads the previous one twice, and one nested
expression would repeat the whole chain below it.

The key's Java type follows its Spark type: ``bigint`` hashes as ``Long``
(``(int) (v ^ (v >>> 32))``), ``int`` and smaller as ``Integer`` (the value itself). String
keys keep their vectorised numpy hash (:func:`skewlab.state.java_hash.java_string_hash_array`):
Java's ``String.hashCode`` over UTF-16 code units has no cheap form in Spark's expressions.

Example::

    >>> df = spark.createDataFrame([(0,), (42,)], "k bigint")                # doctest: +SKIP
    >>> [r.g for r in with_jvm_key_group(df, "k", "Long", 128, "g").collect()]  # doctest: +SKIP
    [94, 29]
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["JVM_HASHED_TYPES", "with_jvm_key_group"]

#: the Java key types whose key group Spark computes in the JVM
JVM_HASHED_TYPES = ("Long", "Integer")

_MASK32 = 0xFFFFFFFF
_STEP = "_key_group_hash"  # the working column, dropped at the end


def _steps() -> list[Callable]:
    """Flink's ``MathUtils.murmurHash(int)`` on an unsigned 32-bit value, one step each."""
    from pyspark.sql import functions as F

    mask = F.lit(_MASK32)

    def mul(constant: int):
        lo, hi = constant & 0xFFFF, constant >> 16

        def step(x):
            high = F.shiftleft((x * F.lit(hi)).bitwiseAND(F.lit(0xFFFF)), 16)
            return (x * F.lit(lo) + high).bitwiseAND(mask)

        return step

    def rotate_left(bits: int):
        return lambda x: F.shiftleft(x, bits).bitwiseOR(F.shiftright(x, 32 - bits)).bitwiseAND(mask)

    def xor_shift(bits: int):
        return lambda x: x.bitwiseXOR(F.shiftright(x, bits))

    def abs_int(x):  # Java's abs of the int, Integer.MIN_VALUE -> 0, as Flink does
        negative = (F.lit(1 << 32) - x).bitwiseAND(F.lit(0x7FFFFFFF))
        return F.when(x >= F.lit(1 << 31), negative).otherwise(x)

    return [
        mul(0xCC9E2D51),
        rotate_left(15),
        mul(0x1B873593),
        rotate_left(13),
        lambda x: (x * 5 + F.lit(0xE6546B64)).bitwiseAND(mask).bitwiseXOR(F.lit(4)),
        xor_shift(16),
        mul(0x85EBCA6B),
        xor_shift(13),
        mul(0xC2B2AE35),
        xor_shift(16),
        abs_int,
    ]


def with_jvm_key_group(df, key_col: str, java_type: str, max_parallelism: int, out_col: str):
    """``df`` with ``out_col``: the key group (``int``) of ``key_col`` as the Java type
    ``java_type`` (``Long`` or ``Integer``), -1 for a null key."""
    from pyspark.sql import functions as F

    if java_type not in JVM_HASHED_TYPES:
        raise ValueError(f"the JVM hashes {' and '.join(JVM_HASHED_TYPES)} keys, not {java_type}")
    value = F.col(key_col).cast("long")
    is_long = java_type == "Long"
    code = value.bitwiseXOR(F.shiftrightunsigned(value, 32)) if is_long else value
    df = df.withColumn(_STEP, code.bitwiseAND(F.lit(_MASK32)))
    for step in _steps():
        df = df.withColumn(_STEP, step(F.col(_STEP)))
    group = (F.col(_STEP) % F.lit(max_parallelism)).cast("int")
    group = F.when(F.col(key_col).isNull(), F.lit(-1)).otherwise(group)
    return df.withColumn(out_col, group).drop(_STEP)
