"""The inputs of the FLIP-140 WordCount and of the FLIP-325 count job, generated in Spark.

Both have a ``word`` column (the key: ``bigint`` or ``string``) and a ``seq`` column (arrival
order, a source offset).

Example::

    >>> [flip325_key(x) for x in (0, 499, 500, 1000, 1999, 2000)]
    [0, 499, 0, 500, 999, 0]
"""

from __future__ import annotations

from skewlab.errors import SkewlabInputError
from skewlab.validation import check_choice, check_whole

__all__ = [
    "KEY_TYPES",
    "SEQ",
    "WORD",
    "flip325_input",
    "flip325_key",
    "validate_wordcount",
    "wordcount_input",
]

#: Key types of the WordCount input (the seed measured both): Java longs or strings.
KEY_TYPES = ("int", "string")
#: The input's columns: the key, and the arrival order.
WORD, SEQ = "word", "seq"


def validate_wordcount(n: object, k: object, key_type: object = "int") -> None:
    """Raise :class:`~skewlab.errors.SkewlabInputError` unless ``1 <= k <= n`` and
    ``key_type`` is one of :data:`KEY_TYPES`.

    Example::

        >>> validate_wordcount(10, 20)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: K (distinct keys) must not exceed N (records): K=20 > N=10
    """
    check_whole("N (records)", n, 1)
    check_whole("K (distinct keys)", k, 1)
    if k > n:  # type: ignore[operator]
        raise SkewlabInputError(f"K (distinct keys) must not exceed N (records): K={k} > N={n}")
    check_choice("key type", key_type, KEY_TYPES)


def wordcount_input(spark, n: int, k: int, key_type: str = "int", *, partitions: int | None = None):
    """``n`` records over exactly ``k`` distinct words: ``word = id % k`` (``"w<id % k>"`` for
    strings), ``seq = id``. Every word occurs ``n // k`` or ``n // k + 1`` times.

    Example::

        >>> wordcount_input(spark, 6, 3, "string").collect()       # doctest: +SKIP
        [Row(word='w0', seq=0), Row(word='w1', seq=1), Row(word='w2', seq=2), Row(word='w0', ...
    """
    from pyspark.sql import functions as F

    validate_wordcount(n, k, key_type)
    ids = spark.range(0, n, numPartitions=partitions) if partitions else spark.range(0, n)
    word = F.col("id") % F.lit(k)
    if key_type == "string":
        word = F.concat(F.lit("w"), word.cast("string"))
    return ids.select(word.alias(WORD), F.col("id").alias(SEQ))


def flip325_key(x: int) -> int:
    """FLIP-325's key selector: ``(x % 500) + 500 * ((x / 1000) % 2)``.

    Over consecutive ``x``, blocks of 1,000 records touch 500 keys twice each, alternating
    between keys 0..499 and 500..999: an LRU of 250 entries never hits, 500 hits every second
    access, 1,000 always hits (after warming up).

    Example::

        >>> [flip325_key(x) for x in (0, 499, 500, 1000, 1999, 2000)]
        [0, 499, 0, 500, 999, 0]
    """
    return (x % 500) + 500 * ((x // 1000) % 2)


def flip325_input(spark, n: int, *, partitions: int | None = None):
    """FLIP-325's input: longs ``0..n-1`` keyed by :func:`flip325_key` (``word``), ``seq = x``.

    Example::

        >>> flip325_input(spark, 3).collect()       # doctest: +SKIP
        [Row(word=0, seq=0), Row(word=1, seq=1), Row(word=2, seq=2)]
    """
    from pyspark.sql import functions as F

    check_whole("N (records)", n, 1)
    ids = spark.range(0, n, numPartitions=partitions) if partitions else spark.range(0, n)
    x = F.col("id")
    key = (x % 500) + F.lit(500) * (F.floor(x / 1000) % 2)
    return ids.select(key.cast("bigint").alias(WORD), x.alias(SEQ))
