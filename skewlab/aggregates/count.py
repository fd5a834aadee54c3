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

__all__ = ["DIGEST_SEED", "CountDigest", "DigestSink", "EmissionSink", "count_digest"]

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


class EmissionSink:
    """The sink of a count that emits on every record (FLIP-325's ``output.collect((key,
    count))``): each batch of emissions arrives as an Arrow record batch (``key``, ``count``),
    and the sink keeps how many rows it read and the sum of their counts -- nothing per key.

    A count that emits every update of key ``k`` emits ``1, 2, ..., n_k``: the counts it
    emitted sum to ``n_k (n_k + 1) / 2`` (:meth:`expected_count_sum`), so a run checks that
    every emission reached the sink with the value it had.

    Example::

        >>> sink = EmissionSink()
        >>> sink.write_lists(["a", "b", "a"], [1, 1, 2])
        >>> sink.records, sink.count_sum, EmissionSink.expected_count_sum([2, 1])
        (3, 4, 4)
    """

    __slots__ = ("count_sum", "records")

    def __init__(self) -> None:
        self.records = 0
        self.count_sum = 0

    def write(self, batch) -> None:
        """Read one Arrow record batch of emissions (columns ``key``, ``count``)."""
        import pyarrow.compute as pc

        if batch.num_rows:
            self.records += batch.num_rows
            self.count_sum += pc.sum(batch.column("count")).as_py()

    def write_lists(self, keys: list, counts: list) -> None:
        """Build the Arrow record batch of ``keys`` / ``counts`` (as the collector hands it on)
        and :meth:`write` it."""
        import pyarrow as pa

        if keys:
            self.write(
                pa.RecordBatch.from_arrays(
                    [pa.array(keys), pa.array(counts, pa.int64())], names=["key", "count"]
                )
            )

    @staticmethod
    def expected_count_sum(final_counts) -> int:
        """``sum(n (n + 1) / 2)`` over the final counts: what every emission summed to."""
        return sum(n * (n + 1) // 2 for n in final_counts)
