"""Seed 000's aggregate: per tweet, a view-count and a viewer-count HyperLogLog.

``StatsState(tweet_id, views, viewers)`` holds two datasketch sketches (see :mod:`skewlab.hll`)
and forms a semigroup under :func:`plus` (register-wise max: associative, commutative and
idempotent). Because HLL merge is exact and order-free, every strategy fed the same views must
end with *bit-identical registers per tweet*; :func:`result_digest` turns a whole result set into
one string so that is a single comparison.

Two reference computations serve as the oracle:

* :func:`reference_aggregate` — plain Python, one ``datasketch`` ``update`` per view;
* :func:`spark_reference_aggregate` — Spark SQL with native functions only (``xxhash64``, bit
  arithmetic, ``max``), registers assembled on the driver.

Example::

    >>> a = StatsState.from_view("view-1", "user-1", "tweet-1")
    >>> b = StatsState.from_view("view-2", "user-1", "tweet-1")
    >>> plus(a, b).to_stats()
    TweetStats(tweet_id='tweet-1', view_count=2, viewer_count=1)
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from skewlab.hll import DEFAULT_PRECISION, new_sketch, spark_register_columns


@dataclass(frozen=True)
class TweetStats:
    """What a user reads off a tweet's state: estimated views and distinct viewers."""

    tweet_id: str
    view_count: int
    viewer_count: int


class StatsState:
    """Per-tweet state: two HyperLogLog sketches (views by ``view_id``, viewers by ``user_id``).

    The state *is* its two register arrays (``views_reg``, ``viewers_reg``, int8); the datasketch
    objects ``views`` / ``viewers`` wrap those same arrays and are made on first use, so reading
    a state from RocksDB costs no sketch construction until someone counts.

    Example::

        >>> s = StatsState.empty("tweet-1")
        >>> s.add("view-1", "user-7")
        >>> s.to_stats().view_count
        1
    """

    __slots__ = ("tweet_id", "views_reg", "viewers_reg", "_sketches")

    def __init__(self, tweet_id: str, views_reg: np.ndarray, viewers_reg: np.ndarray) -> None:
        self.tweet_id = tweet_id
        self.views_reg = views_reg
        self.viewers_reg = viewers_reg
        self._sketches = None

    @classmethod
    def empty(cls, tweet_id: str, precision: int = DEFAULT_PRECISION) -> StatsState:
        """A state that has seen no views."""
        m = 1 << precision
        return cls(tweet_id, np.zeros(m, dtype=np.int8), np.zeros(m, dtype=np.int8))

    @classmethod
    def from_view(
        cls, view_id: str, user_id: str, tweet_id: str, precision: int = DEFAULT_PRECISION
    ) -> StatsState:
        """The state of exactly one view (seed 000's ``StatsState.fromView``): two new sketches,
        one datasketch ``update`` each."""
        views, viewers = new_sketch(precision), new_sketch(precision)
        views.update(view_id)
        viewers.update(user_id)
        state = cls(tweet_id, views.reg, viewers.reg)
        state._sketches = (views, viewers)
        return state

    @classmethod
    def from_registers(cls, tweet_id: str, views_reg: np.ndarray, viewers_reg: np.ndarray):
        """A state over existing register arrays (int8, length a power of two; not copied)."""
        return cls(tweet_id, views_reg, viewers_reg)

    def _sketch_pair(self):
        if self._sketches is None:
            self._sketches = (new_sketch(reg=self.views_reg), new_sketch(reg=self.viewers_reg))
        return self._sketches

    @property
    def views(self):
        """The view-count sketch (datasketch ``HyperLogLogPlusPlus`` over ``views_reg``)."""
        return self._sketch_pair()[0]

    @property
    def viewers(self):
        """The viewer-count sketch (datasketch ``HyperLogLogPlusPlus`` over ``viewers_reg``)."""
        return self._sketch_pair()[1]

    @property
    def precision(self) -> int:
        return int(self.views_reg.size).bit_length() - 1

    def add(self, view_id: str, user_id: str) -> None:
        """Fold one view in (mutates): one datasketch ``update`` per sketch."""
        views, viewers = self._sketch_pair()
        views.update(view_id)
        viewers.update(user_id)

    def merge(self, other: StatsState) -> StatsState:
        """Fold ``other`` into this state (mutates, returns self): register-wise max."""
        if other.tweet_id != self.tweet_id:
            raise ValueError(f"cannot merge state of {other.tweet_id!r} into {self.tweet_id!r}")
        np.maximum(self.views_reg, other.views_reg, out=self.views_reg)
        np.maximum(self.viewers_reg, other.viewers_reg, out=self.viewers_reg)
        return self

    def copy(self) -> StatsState:
        return StatsState(self.tweet_id, self.views_reg.copy(), self.viewers_reg.copy())

    def to_stats(self) -> TweetStats:
        """Seed 000's ``toStats``: the two estimates, rounded."""
        views, viewers = self._sketch_pair()
        return TweetStats(self.tweet_id, round(views.count()), round(viewers.count()))

    def to_bytes(self) -> bytes:
        """Compact serialisation (what a RocksDB state backend stores).

        Example::

            >>> s = StatsState.from_view("v", "u", "tweet-9")
            >>> StatsState.from_bytes(s.to_bytes()) == s
            True
        """
        tid = self.tweet_id.encode("utf-8")
        return b"".join(
            (struct.pack(">HB", len(tid), self.precision), tid, self.views_reg.tobytes(),
             self.viewers_reg.tobytes())
        )  # fmt: skip

    @classmethod
    def from_bytes(cls, data: bytes) -> StatsState:
        """Inverse of :meth:`to_bytes`."""
        n, p = struct.unpack_from(">HB", data)
        start = 3 + n
        m = 1 << p
        regs = np.frombuffer(data, dtype=np.int8, count=2 * m, offset=start).copy()
        return cls(data[3:start].decode("utf-8"), regs[:m], regs[m:])

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StatsState)
            and self.tweet_id == other.tweet_id
            and np.array_equal(self.views_reg, other.views_reg)
            and np.array_equal(self.viewers_reg, other.viewers_reg)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        s = self.to_stats()
        return f"StatsState({s.tweet_id!r}, views~{s.view_count}, viewers~{s.viewer_count})"


def plus(x: StatsState, y: StatsState) -> StatsState:
    """The semigroup operation: a new state, the union of ``x`` and ``y`` (neither is changed).

    Example::

        >>> x = StatsState.from_view("v1", "u1", "t")
        >>> plus(x, x) == x   # idempotent
        True
    """
    return x.copy().merge(y)


class StatsSerializer:
    """``dumps``/``loads`` of :class:`StatsState` for serialising state backends."""

    @staticmethod
    def dumps(state: StatsState) -> bytes:
        return state.to_bytes()

    @staticmethod
    def loads(data: bytes) -> StatsState:
        return StatsState.from_bytes(data)


def reference_aggregate(
    views: Iterable[tuple[str, str, str]], precision: int = DEFAULT_PRECISION
) -> dict[str, StatsState]:
    """The oracle: one datasketch ``update`` per view, per tweet. ``views`` yields
    ``(view_id, user_id, tweet_id)``; rows whose ``tweet_id`` is None are skipped.

    Example::

        >>> res = reference_aggregate([("v1", "u1", "t1"), ("v2", "u1", "t1")])
        >>> res["t1"].to_stats()
        TweetStats(tweet_id='t1', view_count=2, viewer_count=1)
    """
    result: dict[str, StatsState] = {}
    for view_id, user_id, tweet_id in views:
        if tweet_id is None:
            continue
        state = result.get(tweet_id)
        if state is None:
            state = result[tweet_id] = StatsState.empty(tweet_id, precision)
        state.add(view_id, user_id)
    return result


def spark_reference_aggregate(df, precision: int = DEFAULT_PRECISION) -> dict[str, StatsState]:
    """The same registers as :func:`reference_aggregate`, computed by Spark SQL natively.

    Per view two (sketch, register index, rank) triples are made with ``xxhash64`` and bit
    arithmetic; ``max(rank)`` per (tweet, sketch, index) is Spark's hash aggregation (partial +
    final); the driver lays the maxima into register arrays. Null tweet ids are skipped.

    Example::

        >>> res = spark_reference_aggregate(views_df)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    v_idx, v_rank = spark_register_columns(F.xxhash64("view_id"), precision)
    u_idx, u_rank = spark_register_columns(F.xxhash64("user_id"), precision)
    entries = F.array(
        F.struct(F.lit(0).alias("sketch"), v_idx.alias("idx"), v_rank.alias("rank")),
        F.struct(F.lit(1).alias("sketch"), u_idx.alias("idx"), u_rank.alias("rank")),
    )
    maxima = (
        df.where(F.col("tweet_id").isNotNull())
        .select("tweet_id", F.inline(entries))
        .groupBy("tweet_id", "sketch", "idx")
        .agg(F.max("rank").alias("rank"))
        .toPandas()
    )
    return states_from_register_maxima(
        maxima["tweet_id"].to_numpy(),
        maxima["sketch"].to_numpy(),
        maxima["idx"].to_numpy(),
        maxima["rank"].to_numpy(),
        precision,
    )


def states_from_register_maxima(
    tweet_ids: np.ndarray,
    sketch: np.ndarray,
    idx: np.ndarray,
    rank: np.ndarray,
    precision: int = DEFAULT_PRECISION,
) -> dict[str, StatsState]:
    """Build states from rows ``(tweet_id, sketch 0=views/1=viewers, register index, rank)``."""
    m = 1 << precision
    keys, codes = np.unique(tweet_ids.astype(object), return_inverse=True)
    regs = np.zeros(len(keys) * 2 * m, dtype=np.int8)
    flat = (codes.astype(np.intp) * 2 + sketch.astype(np.intp)) * m + idx.astype(np.intp)
    np.maximum.at(regs, flat, rank.astype(np.int8))
    regs = regs.reshape(len(keys), 2, m)
    return {
        str(k): StatsState.from_registers(str(k), regs[i, 0].copy(), regs[i, 1].copy())
        for i, k in enumerate(keys)
    }


def result_digest(results: Mapping[str, StatsState]) -> str:
    """A stable digest of a per-tweet result set: same tweets and registers -> same digest.

    Independent of dict order; any register difference changes it.

    Example::

        >>> a = reference_aggregate([("v1", "u1", "t1")])
        >>> result_digest(a) == result_digest(dict(a))
        True
    """
    h = hashlib.sha256()
    for tweet_id in sorted(results):
        state = results[tweet_id]
        tid = tweet_id.encode("utf-8")
        h.update(struct.pack(">I", len(tid)))
        h.update(tid)
        h.update(state.views_reg.astype(np.int8, copy=False).tobytes())
        h.update(state.viewers_reg.astype(np.int8, copy=False).tobytes())
    return h.hexdigest()[:32]


def to_stats(results: Mapping[str, StatsState]) -> list[TweetStats]:
    """Every tweet's :class:`TweetStats`, sorted by tweet id."""
    return [results[k].to_stats() for k in sorted(results)]
