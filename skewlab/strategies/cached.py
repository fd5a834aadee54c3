"""``cached``: the naive reduce over FLIP-325's write-back LRU cache in front of RocksDB
(``cache_policy="tinylfu"``: W-TinyLFU's admission instead of LRU).

Example::

    >>> Cached(cache_entries=500).parameters()
    {'cache_entries': 500}
    >>> Cached(cache_entries=500, cache_policy="tinylfu").parameters()
    {'cache_entries': 500, 'cache_policy': 'tinylfu'}
    >>> run_strategy(views, Cached(cache_entries=500))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.operators.reduce import KeyedReduce
from skewlab.state.lru_cache import CACHE_POLICIES, DEFAULT_MAX_ENTRIES
from skewlab.state.state_backend import StateBackend
from skewlab.strategies.keyed import run_single_stage
from skewlab.strategies.parameters import StrategyParameters, parameter
from skewlab.validation import check_choice, check_whole

__all__ = ["Cached"]


@dataclass(frozen=True, kw_only=True)
class Cached(StrategyParameters):
    """The naive keyed reduce over an LRU cache of ``cache_entries`` objects over RocksDB."""

    name: ClassVar[str] = "cached"
    resumable: ClassVar[bool] = True
    periodic_checkpoints: ClassVar[bool] = True
    modelled_as: ClassVar[str | None] = "cached"

    cache_entries: int = parameter(DEFAULT_MAX_ENTRIES, "LRU cache entries in front of RocksDB")
    cache_policy: str = parameter(
        "lru", "which entries the cache keeps (lru: FLIP-325's)", choices=CACHE_POLICIES
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole("cache_entries (--cache-entries)", self.cache_entries, 0)
        check_choice("cache policy (--cache-policy)", self.cache_policy, CACHE_POLICIES)

    def parameters(self) -> dict[str, Any]:
        values = super().parameters()
        if values["cache_policy"] == "lru":  # FLIP-325's, as every row before the option
            values.pop("cache_policy")
        return values

    def run(self, spark, views, job):
        backend = StateBackend(
            "cached",
            max_entries=self.cache_entries,
            serializer=StatsSerializer,
            cache_policy=self.cache_policy,
        )
        operator = partial(KeyedReduce, state_backend=backend, precision=self.precision)
        return run_single_stage(spark, views, self, job, operator)
