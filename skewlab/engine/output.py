"""Where an operator's emissions go (Flink's ``Collector``), and the latency they measure.

A stage that is not final sends every emission to the next stage: its key, its value
serialised, and the arrival time and ``seq`` of the record it came from. The final stage keeps
each key's latest value -- the sink -- and, when the stage has an ``output_map`` (seed 000's
``.map(_.toStats)``), the mapped value too. Every emission at the final stage records the
latency of the records it includes: from their arrival at the first operator to now.

Example::

    >>> from skewlab.engine.metrics import SubtaskMetrics
    >>> out = Output(final=True, serializer=None, metrics=SubtaskMetrics("1:x", 0))
    >>> out.emit("a", 1, arrival_ns=0); out.emit("a", 2, arrival_ns=0); out.flush_latencies()
    >>> out.results, out.metrics.records_out, out.histogram.total
    ({'a': 2}, 2, 2)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from skewlab.engine.histogram import LatencyHistogram
from skewlab.engine.metrics import SubtaskMetrics

__all__ = ["Output"]

_PENDING_LATENCIES = 65_536  # latencies recorded one by one are folded in batches this large


class Output:
    """One subtask's collector. See the module doc.

    Attributes:
        results: the final stage's sink, ``{key: latest value}``.
        mapped: ``{key: output_map(latest value)}`` when the stage has an ``output_map``.
        forward_keys, forward_values, forward_arrivals, forward_seqs: what a non-final stage
            sends on, column by column.
    """

    def __init__(
        self,
        *,
        final: bool,
        serializer: Any,
        metrics: SubtaskMetrics,
        output_map: Callable[[Any], Any] | None = None,
    ) -> None:
        self.final = final
        self.serializer = serializer
        self.metrics = metrics
        self.output_map = output_map
        self.results: dict[Any, Any] = {}
        self.mapped: dict[Any, Any] = {}
        self.forward_keys: list[Any] = []
        self.forward_values: list[bytes] = []
        self.forward_arrivals: list[int] = []
        self.forward_seqs: list[int] = []
        self.histogram = LatencyHistogram()
        self._pending: list[int] = []

    def emit(self, key: Any, value: Any, arrival_ns: int, seq: int = -1) -> None:
        """Emit one value that came from one record (arrived at ``arrival_ns``)."""
        self.metrics.records_out += 1
        if self.final:
            latency = time.time_ns() - arrival_ns
            self._sink(key, value)
            pending = self._pending
            pending.append(latency)
            if len(pending) >= _PENDING_LATENCIES:
                self.flush_latencies()
        else:
            self._forward(key, value, arrival_ns, seq)

    def emit_batch(self, key: Any, value: Any, arrivals: list[tuple[int, int]]) -> None:
        """Emit one value that includes many records: ``arrivals`` are ``(arrival_ns, count)``
        (empty when the caller records the latencies of a whole flush itself)."""
        self.metrics.records_out += 1
        if self.final:
            now = time.time_ns()
            self._sink(key, value)
            self.record_latencies(arrivals, now)
        else:
            first = min((a for a, _ in arrivals), default=time.time_ns())
            self._forward(key, value, first, -1)

    def record_latencies(self, arrivals: list[tuple[int, int]], now: int | None = None) -> None:
        """Latencies of the records ``(arrival_ns, count)`` included in an emission made now."""
        if arrivals:
            table = np.asarray(arrivals, dtype=np.int64).reshape(-1, 2)
            now = time.time_ns() if now is None else now
            self.histogram.record_weighted(now - table[:, 0], table[:, 1])

    def record_arrivals(self, arrivals_ns: np.ndarray, now: int | None = None) -> None:
        """Latencies of records, one per arrival time, included in an emission made now."""
        if len(arrivals_ns):
            now = time.time_ns() if now is None else now
            self.histogram.record_many(now - np.asarray(arrivals_ns, dtype=np.int64))

    def flush_latencies(self) -> None:
        """Fold the latencies recorded one by one into the histogram."""
        if self._pending:
            self.histogram.record_many(np.asarray(self._pending, dtype=np.int64))
            self._pending = []

    def _sink(self, key: Any, value: Any) -> None:
        self.results[key] = value
        if self.output_map is not None:
            self.mapped[key] = self.output_map(value)

    def _forward(self, key: Any, value: Any, arrival_ns: int, seq: int) -> None:
        self.forward_keys.append(key)
        self.forward_values.append(self.serializer.dumps(value))
        self.forward_arrivals.append(arrival_ns)
        self.forward_seqs.append(seq)
