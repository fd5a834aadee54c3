"""Peak memory of a subtask: the most its Python allocations held at once (``tracemalloc``).

A Python worker is reused across jobs, so how much its resident set *grows* depends on what ran
in it before; the peak of the allocations traced while the subtask runs -- its batches, its
operators, its state objects -- does not. Tracing slows allocation-heavy code, so a job asks for
it (``JobConfig.trace_memory``) only in runs that measure memory, never in timed runs. Memory
outside Python's allocator (RocksDB's memtable and caches, Arrow buffers) is not in it.

Example::

    >>> with TracedPeak() as traced:
    ...     data = [object() for _ in range(100_000)]
    ...     del data
    >>> traced.peak > 100_000 * 16
    True
"""

from __future__ import annotations

import tracemalloc

__all__ = ["TracedPeak"]


class TracedPeak:
    """A context that traces Python allocations and keeps their peak (bytes) in :attr:`peak`.

    ``enabled=False`` traces nothing and leaves :attr:`peak` at 0 (what timed runs use).
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.peak = 0
        self._started = False

    def __enter__(self) -> TracedPeak:
        if self.enabled and not tracemalloc.is_tracing():
            tracemalloc.start()
            self._started = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._started:
            self.peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            self._started = False
