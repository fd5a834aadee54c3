"""The count state of the WordCount-style experiments (FLIP-325, FLIP-140) and its digest.

Seed 000's strategies aggregate HLL sketches; the two FLIPs measure something plainer: a
``Long`` count per key. Results leave a count job through a sink; :class:`CountDigest` is an
order-free checksum of all per-key counts that adds over subtasks, so a job can keep nothing
per key and still be checked exactly against an oracle (:func:`count_digest` of a
:class:`collections.Counter`, or Spark computing the same digest natively).

Example::

    >>> sink = DigestSink(); sink.add("a", 2); sink.add("b", 1)
    >>> sink.digest() == count_digest({"a": 2, "b": 1})
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from xxhash import xxh64_intdigest

__all__ = ["DIGEST_SEED", "CountDigest", "DigestSink", "count_digest"]

#: The seed of Spark's ``xxhash64``, which the per-key hashes share.
DIGEST_SEED = 42
_TWO_63, _TWO_64 = 1 << 63, 1 << 64


class CountDigest(NamedTuple):
    """An order-free checksum of per-key counts: number of keys, sum of counts, and the sum of
    ``xxhash64("<key>:<count>", seed 42)`` (signed 64-bit, summed exactly).

    Spark's ``xxhash64(concat_ws(':', key, count))`` gives the same per-key values, so Spark can
    compute the digest natively (:func:`skewlab.strategies.count.spark_count`). Digests add over
    subtasks.

    Example::

        >>> count_digest({"a": 2, "b": 1}) == count_digest({"b": 1}) + count_digest({"a": 2})
        True
    """

    keys: int
    total: int
    fold: int

    def __add__(self, other: object) -> CountDigest:  # type: ignore[override]
        if not isinstance(other, CountDigest):
            return NotImplemented
        return CountDigest(self.keys + other.keys, self.total + other.total, self.fold + other.fold)


def _key_hash(key: object, count: int) -> int:
    value = xxh64_intdigest(f"{key}:{count}".encode(), DIGEST_SEED)
    return value - _TWO_64 if value >= _TWO_63 else value


def count_digest(counts: Mapping[Any, int]) -> CountDigest:
    """The :class:`CountDigest` of a ``{key: count}`` mapping (e.g. a ``Counter``).

    Example::

        >>> count_digest({"w0": 3}).total
        3
    """
    return CountDigest(
        len(counts), sum(counts.values()), sum(_key_hash(k, c) for k, c in counts.items())
    )


class DigestSink:
    """A discarding sink with a checksum: folds ``(key, count)`` emissions into a digest.

    Example::

        >>> sink = DigestSink(); sink.add("a", 2); sink.add("b", 1)
        >>> sink.digest() == count_digest({"a": 2, "b": 1})
        True
    """

    __slots__ = ("fold", "keys", "total")

    def __init__(self) -> None:
        self.keys = 0
        self.total = 0
        self.fold = 0

    def add(self, key: object, count: int) -> None:
        self.keys += 1
        self.total += count
        self.fold += _key_hash(key, count)

    def digest(self) -> CountDigest:
        return CountDigest(self.keys, self.total, self.fold)
