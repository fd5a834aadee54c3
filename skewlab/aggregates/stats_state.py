"""Seed 000's aggregate: per tweet, a view-count and a viewer-count HyperLogLog.

``StatsState(tweet_id, views, viewers)`` holds two datasketch sketches (see
:mod:`skewlab.aggregates.hll`) and forms a semigroup under :func:`plus` (register-wise max:
associative, commutative and idempotent). Because HLL merge is exact and order-free, every
strategy fed the same views must end with *bit-identical registers per tweet*
(:func:`skewlab.aggregates.digest.result_digest` turns a result set into one string), and
:mod:`skewlab.aggregates.reference` computes the oracle.

Example::

    >>> a = StatsState.from_view("view-1", "user-1", "tweet-1")
    >>> b = StatsState.from_view("view-2", "user-1", "tweet-1")
    >>> plus(a, b).to_stats()
    TweetStats(tweet_id='tweet-1', view_count=2, viewer_count=1)
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from skewlab.aggregates.hll import DEFAULT_PRECISION, new_sketch, spark_register_columns

__all__ = [
    "SINGLE_VIEW_COLUMNS",
    "USER_RANK",
    "USER_REGISTER",
    "VIEW_RANK",
    "VIEW_REGISTER",
    "StatsSerializer",
    "StatsState",
    "TweetStats",
    "plus",
    "to_stats",
    "with_single_view_states",
]

# The upstream map's output: each view's register index and rank in its two sketches.
VIEW_REGISTER, VIEW_RANK = "_view_register", "_view_rank"
USER_REGISTER, USER_RANK = "_user_register", "_user_rank"
#: The columns :func:`with_single_view_states` adds, in the order ``StatsState.of_view`` takes.
SINGLE_VIEW_COLUMNS = (VIEW_REGISTER, VIEW_RANK, USER_REGISTER, USER_RANK)


def with_single_view_states(views, precision: int = DEFAULT_PRECISION):
    """Seed 000's upstream ``.map(StatsState.fromView(_))``, computed by Spark before ``keyBy``:
    each view's single-view state as the one register it sets in each sketch
    (:data:`SINGLE_VIEW_COLUMNS`: index and rank for the views sketch, then for the viewers
    sketch), with Spark's native ``xxhash64`` and bit arithmetic. Every keyed strategy starts
    from these columns, so none of them hashes views inside its operators' timed region.

    Example::

        >>> states = with_single_view_states(views)                      # doctest: +SKIP
        >>> row = states.first()                                         # doctest: +SKIP
        >>> StatsState.of_view(row.tweet_id, *row[-4:]) == StatsState.from_view(
        ...     row.view_id, row.user_id, row.tweet_id)                  # doctest: +SKIP
        True
    """
    from pyspark.sql import functions as F

    v_idx, v_rank = spark_register_columns(F.xxhash64("view_id"), precision)
    u_idx, u_rank = spark_register_columns(F.xxhash64("user_id"), precision)
    return views.select(
        "*",
        v_idx.alias(VIEW_REGISTER),
        v_rank.alias(VIEW_RANK),
        u_idx.alias(USER_REGISTER),
        u_rank.alias(USER_RANK),
    )


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
    def of_view(
        cls,
        tweet_id: str,
        view_register: int,
        view_rank: int,
        user_register: int,
        user_rank: int,
        precision: int = DEFAULT_PRECISION,
    ) -> StatsState:
        """The state of exactly one view, from the register it sets in each sketch (what
        :func:`with_single_view_states` computed upstream): the same registers as
        :meth:`from_view`, without hashing.

        Example::

            >>> from skewlab.aggregates.hll import hash64, register_index_and_rank
            >>> import numpy as np
            >>> (vi,), (vr,) = register_index_and_rank(np.array([hash64("v")], np.uint64), 10)
            >>> (ui,), (ur,) = register_index_and_rank(np.array([hash64("u")], np.uint64), 10)
            >>> StatsState.of_view("t", vi, vr, ui, ur) == StatsState.from_view("v", "u", "t")
            True
        """
        m = 1 << precision
        views, viewers = np.zeros(m, dtype=np.int8), np.zeros(m, dtype=np.int8)
        views[view_register] = view_rank
        viewers[user_register] = user_rank
        return cls(tweet_id, views, viewers)

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

    def add_view(self, view_register: int, view_rank: int, user_register: int, user_rank: int):
        """Fold in one view given as its registers (mutates): the register-wise max that
        ``merge`` of :meth:`of_view` would do, on the two registers it sets.

        Example::

            >>> a = StatsState.empty("t"); a.add_view(3, 5, 7, 2); a.add_view(3, 4, 7, 6)
            >>> int(a.views_reg[3]), int(a.viewers_reg[7])
            (5, 6)
        """
        views, viewers = self.views_reg, self.viewers_reg
        if view_rank > views[view_register]:
            views[view_register] = view_rank
        if user_rank > viewers[user_register]:
            viewers[user_register] = user_rank

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


def to_stats(results: Mapping[str, StatsState]) -> list[TweetStats]:
    """Every tweet's :class:`TweetStats`, sorted by tweet id."""
    return [results[k].to_stats() for k in sorted(results)]
