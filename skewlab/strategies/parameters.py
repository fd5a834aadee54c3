"""What every strategy's parameters are: a small frozen dataclass that validates itself and
knows how to run.

A strategy module declares one subclass of :class:`StrategyParameters` with its own settings
(``Buffered(max_count=1000, trigger_interval_ms=100)``) and its ``run``, which composes engine
stages with operators given those settings as constructor arguments. Bad values raise
:class:`~skewlab.errors.SkewlabInputError` when the parameters are made, before Spark works.

Example::

    >>> from skewlab.strategies import Buffered
    >>> Buffered(max_count=0)
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: max_count (--max-count) must be a whole number >= 1, got 0
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import RunResult
from skewlab.state.lru_cache import DEFAULT_MAX_ENTRIES
from skewlab.state.state_backend import StateBackend
from skewlab.validation import check_choice, check_whole

__all__ = ["KEYED_BACKENDS", "KeyedStateParameters", "StrategyParameters"]

#: The state backends a keyed reduce of ``StatsState`` can run on (``--backend``).
KEYED_BACKENDS = ("heap", "rocksdb", "cached")


@dataclass(frozen=True, kw_only=True)
class StrategyParameters:
    """The parameters every view strategy has: the HLL precision (register index bits)."""

    #: the strategy's name in the registry and on the command line
    name: ClassVar[str] = ""

    precision: int = DEFAULT_PRECISION

    def __post_init__(self) -> None:
        check_whole("precision", self.precision, 4, 16)

    def parameters(self) -> dict[str, Any]:
        """What a result row records of the strategy (the precision only when not default)."""
        values = asdict(self)
        if values.get("precision") == DEFAULT_PRECISION:
            values.pop("precision")
        return values

    def run(self, spark, views, job: JobConfig) -> tuple[RunResult, dict[str, Any]]:
        """Run over ``views`` under a resolved ``job``: ``(RunResult, results per tweet)``."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class KeyedStateParameters(StrategyParameters):
    """A strategy whose keyed reduce runs on a chosen state backend (``--backend``), with the
    LRU cache's size when that backend is ``cached`` (``--cache-entries``)."""

    backend: str = "rocksdb"
    cache_entries: int = DEFAULT_MAX_ENTRIES

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("backend (--backend)", self.backend, KEYED_BACKENDS)
        check_whole("cache_entries (--cache-entries)", self.cache_entries, 0)

    def state_backend(self) -> StateBackend:
        """The keyed reduce's state backend; serialising backends store ``StatsState`` bytes."""
        if self.backend == "heap":
            return StateBackend("heap")
        cache = self.cache_entries if self.backend == "cached" else None
        return StateBackend(self.backend, max_entries=cache, serializer=StatsSerializer)

    def parameters(self) -> dict[str, Any]:
        values = super().parameters()
        if self.backend != "cached":
            values.pop("cache_entries")
        return values
