"""HyperLogLog register arithmetic shared by Python, numpy and Spark.

skewlab's sketches are datasketch's :class:`~datasketch.HyperLogLogPlusPlus` (64-bit hashes)
with :func:`hash64` — xxHash64 of the UTF-8 bytes, seed 42 — as the hash function. Spark's
``xxhash64(col)`` computes the same 64 bits (as a signed long), so a register can be updated
three ways with identical results:

* one value at a time, by datasketch itself (``HyperLogLogPlusPlus.update``) — the oracle;
* a whole batch of hashes with numpy (:func:`update_registers`) — the vectorised path;
* in Spark SQL with native functions (:func:`spark_register_columns`).

For a hash ``h`` and precision ``p`` the register index is ``h & (2**p - 1)`` and the rank is
``(64 - p) - bit_length(h >> p) + 1``, exactly as datasketch computes it.

Example::

    >>> import numpy as np
    >>> reg = np.zeros(1 << 10, dtype=np.int8)
    >>> update_registers(reg, hashes_of(["user-1", "user-2"]), 10)
    >>> int((reg > 0).sum())
    2
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import xxhash

#: the seed Spark's ``xxhash64`` uses
XXHASH_SEED = 42
#: register index bits: 2**10 = 1,024 registers per sketch (about 3.3% standard error)
DEFAULT_PRECISION = 10


def hash64(value: bytes | str) -> int:
    """xxHash64 (seed 42) of ``value`` (UTF-8 for str) as an unsigned 64-bit int.

    Equals Spark's ``xxhash64(value)`` modulo 2**64.

    Example::

        >>> hash64("tweet-1")
        1818382579277380414
    """
    if isinstance(value, str):
        value = value.encode("utf-8")
    return xxhash.xxh64_intdigest(value, seed=XXHASH_SEED)


def new_sketch(precision: int = DEFAULT_PRECISION, reg: np.ndarray | None = None):
    """A datasketch HyperLogLog++ over :func:`hash64` (empty, or over the given registers).

    Example::

        >>> s = new_sketch()
        >>> s.update("view-1")
        >>> round(s.count())
        1
    """
    # imported here: datasketch's package import pulls in scipy (its LSH), about 0.4 s that
    # every fresh Python worker running an operator would otherwise pay without making a sketch
    from datasketch import HyperLogLogPlusPlus

    if reg is None:
        return HyperLogLogPlusPlus(p=precision, hashfunc=hash64)
    return HyperLogLogPlusPlus(reg=reg, hashfunc=hash64)


def hashes_of(values: Iterable[str]) -> np.ndarray:
    """:func:`hash64` of each value, as a uint64 array (a loop: use Spark's hashes for bulk)."""
    return np.fromiter((hash64(v) for v in values), dtype=np.uint64)


def register_index_and_rank(hashes: np.ndarray, precision: int) -> tuple[np.ndarray, np.ndarray]:
    """Register index and rank of each 64-bit hash (signed or unsigned int64 arrays).

    Example::

        >>> idx, rank = register_index_and_rank(np.array([0], dtype=np.uint64), 10)
        >>> int(idx[0]), int(rank[0])
        (0, 55)
    """
    h = np.asarray(hashes).view(np.uint64) if np.asarray(hashes).dtype == np.int64 else hashes
    h = np.asarray(h, dtype=np.uint64)
    index = (h & np.uint64((1 << precision) - 1)).astype(np.intp)
    rest = h >> np.uint64(precision)
    return index, (64 - precision + 1 - _bit_length(rest)).astype(np.int8)


def _bit_length(x: np.ndarray) -> np.ndarray:
    """bit_length of each uint64, exactly (no float rounding)."""
    x = x.copy()
    out = np.zeros(x.shape, dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        big = x >= np.uint64(1 << shift)
        out[big] += shift
        x[big] >>= np.uint64(shift)
    out += (x > 0).astype(np.int64)
    return out


def update_registers(reg: np.ndarray, hashes: np.ndarray, precision: int) -> None:
    """Fold a batch of hashes into ``reg`` in place (register-wise max), like many ``update`` calls.

    Example::

        >>> reg = np.zeros(1 << 10, dtype=np.int8)
        >>> update_registers(reg, np.array([0], dtype=np.uint64), 10)
        >>> int(reg[0])
        55
    """
    if len(hashes) == 0:
        return
    index, rank = register_index_and_rank(hashes, precision)
    np.maximum.at(reg, index, rank)


def spark_register_columns(hash_col, precision: int):
    """Spark columns ``(index, rank)`` for a column of ``xxhash64`` values, native functions only.

    Example::

        >>> from pyspark.sql import functions as F
        >>> idx, rank = spark_register_columns(F.xxhash64("user_id"), 10)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    index = hash_col.bitwiseAND(F.lit((1 << precision) - 1)).cast("int")
    rest = F.shiftrightunsigned(hash_col, precision)
    # bin() of a non-negative long has no leading zeros, so its length is the bit length
    bit_length = F.when(rest == 0, F.lit(0)).otherwise(F.length(F.bin(rest)))
    rank = (F.lit(64 - precision + 1) - bit_length).cast("tinyint")
    return index, rank
