"""Java's ``hashCode`` of the keys Flink sees: ``String``, ``Integer`` and ``Long``.

Flink assigns a key to a key group by ``murmurHash(key.hashCode())``
(:mod:`skewlab.state.key_groups`), so the key's *Java type* decides its key group: the same
number is a different key as an ``Integer`` than as a ``Long`` (``Integer.hashCode(-1) == -1``,
``Long.hashCode(-1) == 0``). skewlab keeps the types apart the way Spark's column types do:

=================  ===============  =============================================
Spark column type  Java type        hash code
=================  ===============  =============================================
``string``         ``String``       :func:`java_string_hash` (UTF-16 code units)
``tinyint``,       ``Byte``,        :func:`java_int_hash` (the value itself)
``smallint``,      ``Short``,
``int``            ``Integer``
``bigint``         ``Long``         :func:`java_long_hash` (``value ^ value >>> 32``)
=================  ===============  =============================================

A Python ``int`` is a Java ``long`` (Spark's ``bigint``); a numpy ``int32`` / ``int16`` /
``int8`` is an ``Integer``. The ``*_array`` functions hash whole columns with numpy and give
exactly the scalar functions' numbers.

Example::

    >>> from skewlab.state.java_hash import key_hash
    >>> import numpy as np
    >>> key_hash("hello"), key_hash(-1), key_hash(np.int32(-1))
    (99162322, 0, -1)
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterable

import numpy as np

from skewlab.errors import SkewlabInputError

__all__ = [
    "JAVA_TYPES",
    "java_hash_array",
    "java_int_hash",
    "java_int_hash_array",
    "java_long_hash",
    "java_long_hash_array",
    "java_string_hash",
    "java_string_hash_array",
    "java_type_of_spark",
    "key_hash",
]

#: The Java key types skewlab hashes, by the name :func:`java_hash_array` takes.
JAVA_TYPES = ("String", "Integer", "Long")

_SPARK_TO_JAVA = {
    "string": "String",
    "tinyint": "Integer",
    "smallint": "Integer",
    "int": "Integer",
    "bigint": "Long",
}
_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_INT_MIN = -(1 << 31)
_INT_MAX = (1 << 31) - 1
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_INV31 = pow(31, -1, 1 << 32)  # 31 * _INV31 == 1 (mod 2**32)
# utf-16 in the machine's byte order, so that a uint16 view of the bytes gives the code units.
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"
_JAVA_INT_TYPES = (np.int8, np.int16, np.int32, np.uint8, np.uint16)


def _to_int32(value: int) -> int:
    """Reinterpret the low 32 bits of ``value`` as a signed Java ``int``."""
    value &= _MASK32
    return value - 0x100000000 if value & 0x80000000 else value


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units.

    The result is a signed 32-bit int, as in Java. Characters outside the Basic Multilingual
    Plane count as two code units (a surrogate pair), exactly as Java stores them.

    Example::

        >>> java_string_hash("hello")
        99162322
        >>> java_string_hash("")
        0
    """
    h = 0
    data = s.encode(_UTF16_NATIVE, "surrogatepass")
    for unit in memoryview(data).cast("H"):
        h = (31 * h + unit) & _MASK32
    return h - 0x100000000 if h & 0x80000000 else h


def java_int_hash(x: int) -> int:
    """Java's ``Integer.hashCode`` (and ``Short`` / ``Byte``'s): the value itself.

    ``x`` must fit in a signed 32-bit Java ``int``.

    Example::

        >>> java_int_hash(42), java_int_hash(-1), java_int_hash(-(2**31))
        (42, -1, -2147483648)
    """
    x = operator.index(x)
    if not _INT_MIN <= x <= _INT_MAX:
        raise SkewlabInputError(f"an Integer key must fit in a signed 32-bit Java int, got {x}")
    return x


def key_hash(key: str | int) -> int:
    """The Java ``hashCode`` Flink would see for ``key``.

    ``str`` keys hash as ``java.lang.String``; numpy ``int8`` / ``int16`` / ``int32`` (and
    ``uint8`` / ``uint16``) keys as ``java.lang.Integer``; every other integer (a Python
    ``int``, numpy ``int64``) as ``java.lang.Long``. Other types, ``bool`` included, are
    refused.

    Example::

        >>> import numpy as np
        >>> key_hash("hello"), key_hash(7), key_hash(-5), key_hash(np.int32(-5))
        (99162322, 7, 4, -5)
    """
    if type(key) is str:
        return java_string_hash(key)
    if isinstance(key, str):
        return java_string_hash(str(key))
    if isinstance(key, _JAVA_INT_TYPES):
        return java_int_hash(int(key))
    if isinstance(key, bool | np.bool_) or not hasattr(key, "__index__"):
        raise SkewlabInputError(f"keys must be str or int, got {type(key).__name__}: {key!r}")
    return java_long_hash(key)


def java_long_hash(x: int) -> int:
    """Java's ``Long.hashCode``: ``(int) (value ^ (value >>> 32))``.

    ``x`` must fit in a signed 64-bit Java ``long``. For ``0 <= x < 2**31`` the result equals
    ``x`` (and so equals ``Integer.hashCode``); for negative values it does not
    (``java_long_hash(-1) == 0`` while ``java_int_hash(-1) == -1``).

    Example::

        >>> java_long_hash(42)
        42
        >>> java_long_hash(1 << 32)
        1
        >>> java_long_hash(-1)
        0
    """
    x = operator.index(x)
    if not _LONG_MIN <= x <= _LONG_MAX:
        raise SkewlabInputError(f"an int key must fit in a signed 64-bit Java long, got {x}")
    v = x & _MASK64
    return _to_int32(v ^ (v >> 32))


def java_string_hash_array(strings: Iterable[str]) -> np.ndarray:
    """:func:`java_string_hash` of many strings at once, as an ``int32`` array.

    Vectorised with numpy: all strings are encoded to UTF-16 code units in one buffer. As 31 is
    odd it is invertible modulo 2**32, so each string's hash is
    ``31**(end - 1) * sum(unit[i] * 31**-i)`` over its global unit positions ``i`` -- one
    multiply and one segmented sum (``np.add.reduceat``) for the whole column.

    Example::

        >>> java_string_hash_array(["hello", "", "a"]).tolist()
        [99162322, 0, 97]
    """
    strings = strings if isinstance(strings, list) else list(strings)
    count = len(strings)
    try:
        joined = "".join(strings)
    except TypeError:
        bad = next(s for s in strings if not isinstance(s, str))
        raise SkewlabInputError(f"expected str values, got {type(bad).__name__}: {bad!r}") from None
    if joined.isascii():  # one code unit per character, and a cheap encode
        units = np.frombuffer(joined.encode("ascii"), dtype=np.uint8).astype(np.uint32)
    else:
        data = joined.encode(_UTF16_NATIVE, "surrogatepass")
        units = np.frombuffer(data, dtype=np.uint16).astype(np.uint32)
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=count)
    if int(lengths.sum()) != units.size:  # some characters are surrogate pairs
        lengths = np.fromiter(
            (len(s.encode(_UTF16_NATIVE, "surrogatepass")) // 2 for s in strings),
            dtype=np.int64,
            count=count,
        )
    hashes = np.zeros(count, dtype=np.uint32)
    if units.size == 0:
        return hashes.view(np.int32)
    powers = np.full(units.size, 31, dtype=np.uint32)
    powers[0] = 1
    powers = np.cumprod(powers, dtype=np.uint32)  # 31**i mod 2**32 (uint32 wraps)
    inverse_powers = np.full(units.size, _INV31, dtype=np.uint32)
    inverse_powers[0] = 1
    inverse_powers = np.cumprod(inverse_powers, dtype=np.uint32)  # 31**-i mod 2**32
    ends = np.cumsum(lengths)
    nonempty = lengths > 0
    sums = np.add.reduceat(units * inverse_powers, (ends - lengths)[nonempty], dtype=np.uint32)
    hashes[nonempty] = sums * powers[ends[nonempty] - 1]
    return hashes.view(np.int32)


def java_int_hash_array(values: np.ndarray | Iterable[int]) -> np.ndarray:
    """:func:`java_int_hash` of a whole integer array, as an ``int32`` array.

    Example::

        >>> java_int_hash_array([42, -1]).tolist()
        [42, -1]
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        raise SkewlabInputError(f"Integer keys must be integers, got dtype {arr.dtype}")
    if arr.size and (int(arr.min()) < _INT_MIN or int(arr.max()) > _INT_MAX):
        raise SkewlabInputError("Integer keys must fit in a signed 32-bit Java int")
    return arr.astype(np.int32)


def java_type_of_spark(spark_type: str) -> str:
    """The Java key type (:data:`JAVA_TYPES`) of a Spark column type, as ``DataFrame.dtypes``
    names it.

    Example::

        >>> java_type_of_spark("bigint"), java_type_of_spark("int")
        ('Long', 'Integer')
        >>> java_type_of_spark("double")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: a key column must be string, tinyint, smallint, int or bigint, not double
    """  # noqa: E501
    try:
        return _SPARK_TO_JAVA[spark_type]
    except KeyError:
        raise SkewlabInputError(
            f"a key column must be {', '.join(list(_SPARK_TO_JAVA)[:-1])} or bigint, "
            f"not {spark_type}"
        ) from None


def java_hash_array(values, java_type: str) -> np.ndarray:
    """The ``hashCode`` of each value as the Java type ``java_type`` (:data:`JAVA_TYPES`).

    Example::

        >>> java_hash_array([-1, 1], "Long").tolist(), java_hash_array([-1, 1], "Integer").tolist()
        ([0, 1], [-1, 1])
    """
    if java_type == "String":
        return java_string_hash_array(values)
    if java_type == "Integer":
        return java_int_hash_array(values)
    if java_type == "Long":
        return java_long_hash_array(values)
    raise SkewlabInputError(
        f"unknown Java key type {java_type!r}: use one of {', '.join(JAVA_TYPES)}"
    )


def java_long_hash_array(values: np.ndarray | Iterable[int]) -> np.ndarray:
    """:func:`java_long_hash` of a whole integer array, as an ``int32`` array.

    Example::

        >>> java_long_hash_array([42, 1 << 32, -1]).tolist()
        [42, 1, 0]
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        arr = arr.astype(np.int64)
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > _LONG_MAX:
        raise SkewlabInputError("int keys must fit in a signed 64-bit Java long")
    v = arr.astype(np.int64).view(np.uint64)
    return (v ^ (v >> np.uint64(32))).astype(np.uint32).view(np.int32)
