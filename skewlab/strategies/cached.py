"""``cached``: the naive reduce over FLIP-325's write-back LRU cache in front of RocksDB.

Example::

    >>> Cached(cache_entries=500).parameters()
    {'cache_entries': 500}
    >>> run_strategy(views, Cached(cache_entries=500))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.operators.reduce import KeyedReduce
from skewlab.state.lru_cache import DEFAULT_MAX_ENTRIES
from skewlab.state.state_backend import StateBackend
from skewlab.strategies.keyed import run_single_stage
from skewlab.strategies.parameters import StrategyParameters, parameter
from skewlab.validation import check_whole

__all__ = ["Cached"]


@dataclass(frozen=True, kw_only=True)
class Cached(StrategyParameters):
    """The naive keyed reduce over an LRU cache of ``cache_entries`` objects over RocksDB."""

    name: ClassVar[str] = "cached"
    resumable: ClassVar[bool] = True
    periodic_checkpoints: ClassVar[bool] = True
    modelled_as: ClassVar[str | None] = "cached"

    cache_entries: int = parameter(DEFAULT_MAX_ENTRIES, "LRU cache entries in front of RocksDB")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole("cache_entries (--cache-entries)", self.cache_entries, 0)

    def run(self, spark, views, job):
        backend = StateBackend("cached", max_entries=self.cache_entries, serializer=StatsSerializer)
        operator = partial(KeyedReduce, state_backend=backend, precision=self.precision)
        return run_single_stage(spark, views, self, job, operator)
