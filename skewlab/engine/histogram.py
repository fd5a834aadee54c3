"""A latency histogram that merges across subtasks (different Python workers) exactly.

A :class:`LatencyHistogram` keeps counts in log-spaced buckets (40 per decade, 1 us .. 1e4 s),
so p50/p99 of millions of records cost a fixed few KB.

Example::

    >>> h = LatencyHistogram()
    >>> h.record_many(np.array([1_000, 2_000, 3_000]))      # nanoseconds
    >>> round(h.quantile_ms(0.5), 4)      # milliseconds
    0.0021
"""

from __future__ import annotations

import numpy as np

_BUCKETS_PER_DECADE = 40
_MIN_NS = 1_000.0  # 1 us
_DECADES = 10  # up to 1e4 s
_N = _BUCKETS_PER_DECADE * _DECADES + 2  # + underflow and overflow


class LatencyHistogram:
    """Counts of latencies (ns) in log buckets; mergeable; quantiles by bucket upper bound."""

    __slots__ = ("counts",)

    def __init__(self, counts: np.ndarray | None = None) -> None:
        self.counts = np.zeros(_N, dtype=np.int64) if counts is None else counts

    @staticmethod
    def _bucket(ns: np.ndarray) -> np.ndarray:
        ns = np.asarray(ns, dtype=np.float64)
        with np.errstate(divide="ignore"):
            pos = np.floor(np.log10(np.maximum(ns, 1.0) / _MIN_NS) * _BUCKETS_PER_DECADE) + 1
        return np.clip(pos, 0, _N - 1).astype(np.intp)

    def record_many(self, ns: np.ndarray) -> None:
        """Add many latencies at once."""
        if len(ns):
            np.add.at(self.counts, self._bucket(ns), 1)

    def record_weighted(self, ns: np.ndarray, weights: np.ndarray) -> None:
        """Add latency ``ns[i]`` ``weights[i]`` times."""
        if len(ns):
            np.add.at(self.counts, self._bucket(ns), np.asarray(weights, dtype=np.int64))

    def merge(self, other: LatencyHistogram) -> LatencyHistogram:
        self.counts += other.counts
        return self

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def quantile_ms(self, q: float) -> float | None:
        """The ``q`` quantile in milliseconds (the upper edge of its bucket; ~6% resolution)."""
        total = self.total
        if total == 0:
            return None
        index = int(np.searchsorted(np.cumsum(self.counts), q * total, side="left"))
        upper_ns = _MIN_NS * 10 ** (index / _BUCKETS_PER_DECADE)
        return upper_ns / 1e6

    def to_list(self) -> list[int]:
        return self.counts.tolist()

    @classmethod
    def from_list(cls, counts: list[int]) -> LatencyHistogram:
        return cls(np.asarray(counts, dtype=np.int64))
