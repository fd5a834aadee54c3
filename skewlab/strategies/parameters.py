"""What every strategy's parameters are: a small frozen dataclass that validates itself, knows
how to run, and carries the facts about its strategy.

A strategy module declares one subclass of :class:`StrategyParameters` with its own settings
(``Buffered(max_count=1000, trigger_interval_ms=100)``) and its ``run``, which composes engine
stages with operators given those settings as constructor arguments. Bad values raise
:class:`~skewlab.errors.SkewlabInputError` when the parameters are made, before Spark works.

Each setting is a :func:`parameter`: a dataclass field with a one-line help (and its choices),
from which ``skewlab run STRATEGY`` builds that strategy's own options (``max_count`` ->
``--max-count``). What a strategy *is* are class attributes, declared by every strategy class
(a class that leaves one out is refused when it is defined):

====================  ======================================================================
``name``              its name in :data:`~skewlab.strategies.STRATEGIES` and on the command
                      line
``resumable``         whether it can stop with a savepoint, resume from one and recover from
                      an injected failure (:mod:`skewlab.strategies.resume`)
``periodic_checkpoints``  whether a resumable strategy takes periodic checkpoints while it runs
                      (sorted input is a batch job: a failed task reruns its partition)
``modelled_as``       the name of its access pattern in the disk latency model
                      (:data:`skewlab.iomodel.model.MODELLED_STRATEGIES`), ``None`` when the
                      model has none
====================  ======================================================================

Example::

    >>> from skewlab.strategies import Buffered
    >>> Buffered(max_count=0)
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: max_count (--max-count) must be a whole number >= 1, got 0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import RunResult
from skewlab.errors import SkewlabInputError
from skewlab.state.lru_cache import CACHE_POLICIES, DEFAULT_MAX_ENTRIES
from skewlab.state.state_backend import StateBackend
from skewlab.validation import check_choice, check_whole

__all__ = [
    "KEYED_BACKENDS",
    "STRATEGY_FACTS",
    "KeyedStateParameters",
    "StrategyParameters",
    "parameter",
]

#: The state backends a keyed reduce of ``StatsState`` can run on (``--backend``).
KEYED_BACKENDS = ("heap", "rocksdb", "cached")

#: The class attributes every strategy class declares, and their types (see the module doc).
STRATEGY_FACTS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "resumable": bool,
    "periodic_checkpoints": bool,
    "modelled_as": (str, type(None)),
}


def parameter(default: Any, doc: str, *, choices: Sequence[str] | None = None) -> Any:
    """A strategy parameter: a dataclass field with a default, a one-line ``doc`` for its
    command-line option, and the ``choices`` it takes, if any (checked by the class itself).

    Example::

        >>> from dataclasses import fields
        >>> from skewlab.strategies import Salted
        >>> [f.metadata["doc"] for f in fields(Salted) if f.name == "salt_buckets"]
        ['sub-keys per key']
    """
    metadata: dict[str, Any] = {"doc": doc}
    if choices is not None:
        metadata["choices"] = tuple(choices)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True, kw_only=True)
class StrategyParameters:
    """The parameters every view strategy has: the HLL precision (register index bits).

    A subclass with a ``name`` is a strategy: it must declare every fact of
    :data:`STRATEGY_FACTS` (here or in a strategy class it extends).

    Example::

        >>> class Fastest(StrategyParameters):
        ...     name = "fastest"
        Traceback (most recent call last):
        ...
        TypeError: strategy class Fastest must declare resumable, periodic_checkpoints, modelled_as
    """

    #: the strategy's name in the registry and on the command line
    name: ClassVar[str] = ""
    #: whether it can stop with a savepoint and resume, and recover from a failure
    resumable: ClassVar[bool]
    #: whether it takes periodic checkpoints while it runs (when resumable)
    periodic_checkpoints: ClassVar[bool]
    #: its access pattern's name in the disk latency model (``skewlab latency``), or ``None``
    modelled_as: ClassVar[str | None]

    precision: int = parameter(
        DEFAULT_PRECISION, "HyperLogLog precision: register index bits, from 4 to 16"
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in vars(cls):
            return  # a shared base such as KeyedStateParameters, not a strategy
        missing = [fact for fact in STRATEGY_FACTS if not hasattr(cls, fact)]
        if missing:
            raise TypeError(f"strategy class {cls.__name__} must declare {', '.join(missing)}")
        wrong = [f for f, kind in STRATEGY_FACTS.items() if not isinstance(getattr(cls, f), kind)]
        if wrong:
            raise TypeError(f"strategy class {cls.__name__}: wrong type of {', '.join(wrong)}")

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
    cache's size and policy when that backend is ``cached`` (``--cache-entries``,
    ``--cache-policy``)."""

    backend: str = parameter("rocksdb", "state backend of the keyed reduce", choices=KEYED_BACKENDS)
    cache_entries: int = parameter(DEFAULT_MAX_ENTRIES, "LRU cache entries with --backend cached")
    cache_policy: str = parameter(
        "lru", "which entries the cache keeps with --backend cached", choices=CACHE_POLICIES
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("backend (--backend)", self.backend, KEYED_BACKENDS)
        check_whole("cache_entries (--cache-entries)", self.cache_entries, 0)
        check_choice("cache policy (--cache-policy)", self.cache_policy, CACHE_POLICIES)
        if self.cache_policy != "lru" and self.backend != "cached":
            raise SkewlabInputError(
                f"--cache-policy {self.cache_policy} chooses a cache's entries: only "
                f"--backend cached has a cache, not --backend {self.backend}"
            )

    def state_backend(self) -> StateBackend:
        """The keyed reduce's state backend; serialising backends store ``StatsState`` bytes."""
        if self.backend == "heap":
            return StateBackend("heap")
        cache = self.cache_entries if self.backend == "cached" else None
        return StateBackend(
            self.backend,
            max_entries=cache,
            serializer=StatsSerializer,
            cache_policy=self.cache_policy,
        )

    def parameters(self) -> dict[str, Any]:
        values = super().parameters()
        if self.backend != "cached":
            values.pop("cache_entries")
        if self.cache_policy == "lru":  # FLIP-325's, as every row before the option
            values.pop("cache_policy")
        return values
