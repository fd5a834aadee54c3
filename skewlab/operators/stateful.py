"""What every stateful operator shares: one keyed state backend per subtask, its access
counters reported when the subtask closes.

The backend is the subtask's own, for the key groups it owns
(:meth:`~skewlab.engine.operator.OperatorContext.create_keyed_state_backend`); ``self.state``
is its value state, the per-record hot path (bind ``get`` / ``put`` once per slice). On close,
the counters go to the driver; per-key counts are reported as *disk* accesses only when the
backend's storage is a disk, so the latency model prices RocksDB and a cache's misses and
write-backs, never heap or single-key state.

Example::

    >>> from skewlab.engine import JobConfig, OperatorContext, StageSpec
    >>> from skewlab.state import StateBackend
    >>> stage = StageSpec(name="1:x", key_col="k", operator=None, final=True, serializer=None)
    >>> ctx = OperatorContext(stage, JobConfig(parallelism=1).resolved(1), 0)
    >>> op = StatefulOperator(ctx, StateBackend("heap"))
    >>> op.state.put(0, "a", 1); op.close()["writes"]
    1
"""

from __future__ import annotations

from typing import Any

from skewlab.engine.operator import Operator, OperatorContext
from skewlab.state.api import KeyedStateBackend, PickleSerializer, Serializer
from skewlab.state.state_backend import StateBackend

__all__ = ["StatefulOperator", "backend_counters"]


def backend_counters(backend: KeyedStateBackend) -> dict[str, Any]:
    """A keyed backend's access counters as the driver receives them; per-key counts only
    for state on disk (what the latency model prices).

    Example::

        >>> from skewlab.state import create_backend
        >>> with create_backend("heap", track_keys=True) as heap:
        ...     heap.put(0, "a", 1)
        ...     counters = backend_counters(heap)
        >>> counters["writes"], "disk_writes_per_key" in counters
        (1, False)
    """
    stats = backend.stats
    out: dict[str, Any] = {
        "backend": backend.name,
        "reads": stats.reads,
        "writes": stats.writes,
        "bytes_serialized": stats.bytes_serialized,
        "cache_hits": stats.cache_hits,
        "cache_misses": stats.cache_misses,
        "evictions": stats.evictions,
        "on_disk": stats.on_disk,
    }
    if stats.on_disk and stats.reads_per_key is not None:
        out["disk_reads_per_key"] = dict(stats.reads_per_key)
        out["disk_writes_per_key"] = dict(stats.writes_per_key or {})
    return out


class StatefulOperator(Operator):
    """An operator with one keyed state backend per subtask, made from ``state_backend``.

    Its keyed state goes into a savepoint or checkpoint as keyed state ``"value"``, each value
    through :attr:`state_serializer`, and comes back for the key groups the (new) subtask owns.
    """

    #: the name of the operator's keyed state in a snapshot
    state_name = "value"

    def __init__(self, ctx: OperatorContext, state_backend: StateBackend) -> None:
        super().__init__(ctx)
        self.state_backend = state_backend
        self.backend = ctx.create_keyed_state_backend(state_backend)
        self.state = self.backend.value_state()

    @property
    def state_serializer(self) -> Serializer:
        """How a snapshot stores the values: the backend's serializer, else the stage's, else
        pickle (a heap and a RocksDB backend of one stage write the same snapshot)."""
        return self.state_backend.serializer or self.ctx.stage.serializer or PickleSerializer()

    def snapshot_state(self, context) -> None:
        context.write_keyed_state(self.state_name, self.backend, self.state_serializer)

    def initialize_state(self, context) -> None:
        self.backend.restore(context.keyed_state(self.state_name, self.state_serializer))

    def close(self) -> dict[str, Any]:
        out = backend_counters(self.backend)
        self.backend.close()
        return out
