"""The count operators of FLIP-325 (seed 003) and FLIP-140 (seed 001): a ``Long`` count per
key, one state read and one state write per record.

* :class:`KeyedCount` -- a keyed count over any state backend (rocksdb, heap, cached), with a
  checkpoint every ``checkpoint_interval_ms`` and the cache's hit-ratio gauge sampled at each;
* :class:`SortGroupCount` -- sort-then-group with no state backend: the current run's count in
  a local variable ("DataSet, no combiner");
* :class:`SortedCount` -- FLIP-140: sorted input, a single-key state backend, one emission per
  key when its run ends.

The per-record loops are compiled (:mod:`skewlab.operators.count_loops`) and call each
backend's value state (:meth:`~skewlab.state.api.KeyedStateBackend.value_state`), so that what
the operators differ in -- the state access -- is what operator time measures, as in a JVM
operator. Each also keeps the CPU time of its worker process inside its calls (RocksDB's own
threads included): on a shared machine, the measure other processes do not inflate.

Results leave through one of two sinks: ``collect`` keeps every key's count, ``digest`` folds
them into a :class:`~skewlab.aggregates.count.CountDigest` and keeps nothing per key.

Example::

    >>> SINKS, EMITS
    (('collect', 'digest'), ('end', 'record'))
"""

from __future__ import annotations

import time
from time import process_time_ns
from typing import Any

from skewlab.aggregates.count import DigestSink, EmissionSink
from skewlab.engine.operator import Operator, OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.errors import UnsortedInputError
from skewlab.inputs.wordcount import WORD
from skewlab.operators.count_loops import keyed_count, sort_group_count, sorted_count
from skewlab.operators.stateful import backend_counters
from skewlab.state.state_backend import StateBackend
from skewlab.validation import check_choice

__all__ = ["EMITS", "SINKS", "KeyedCount", "SortGroupCount", "SortedCount"]

#: ``collect`` keeps every key's count; ``digest`` keeps only a checksum of them.
SINKS = ("collect", "digest")
#: ``end``: one emission per key at the end of input; ``record``: one per input record.
EMITS = ("end", "record")
_NO_KEY: Any = object()  # "no current key yet" (None is a key too: a null, to be rejected)


class _CountOperator(Operator):
    """What the count operators share: the key column, the sink and the rejected-key count."""

    def __init__(self, ctx: OperatorContext, *, key_col: str = WORD, sink: str = "collect") -> None:
        super().__init__(ctx)
        check_choice("sink", sink, SINKS)
        self.key_col = key_col
        self.columns = (key_col, KEY_GROUP)
        self.cpu_ns = 0
        self.sink = DigestSink() if sink == "digest" else None
        if self.sink is not None:
            self._emit = self.sink.add
        else:
            emit_batch = ctx.output.emit_batch

            def collect(key: object, count: int) -> None:
                emit_batch(key, count, ())  # no per-record latency: one result per key

            self._emit = collect

    # The runtime times the operator calls on the wall clock; the CPU time of the worker
    # process (RocksDB's own threads included) is kept too: on a shared machine it is the
    # measure other processes do not inflate.
    def process(self, cols, n, arrivals) -> None:
        began = process_time_ns()
        self._process(cols, n, arrivals)
        self.cpu_ns += process_time_ns() - began

    def finish(self) -> None:
        began = process_time_ns()
        self._finish()
        self.cpu_ns += process_time_ns() - began

    def on_timer(self, timestamp_ns: int) -> None:
        began = process_time_ns()
        self._on_timer(timestamp_ns)
        self.cpu_ns += process_time_ns() - began

    def _process(self, cols, n, arrivals) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        self._finish_sink()

    def _on_timer(self, timestamp_ns: int) -> None:
        pass

    def close(self) -> dict[str, Any]:
        return {"cpu_ns": self.cpu_ns}

    def _finish_sink(self) -> None:
        if self.sink is not None:
            # one record per subtask: its digest, keyed by the subtask (unique over subtasks)
            key: Any = self.ctx.subtask
            if self.ctx.stage.key_type == "string":
                key = str(key)
            self.ctx.output.emit_batch(key, tuple(self.sink.digest()), ())


# --------------------------------------------------------------------------- keyed count


class KeyedCount(_CountOperator):
    """``keyBy(word) -> count``: per record one state ``get`` and one ``put`` (seed 003's
    ``state.value()`` / ``update(value + 1)``), over ``state_backend``.

    ``emit="record"`` emits every updated count, as the FLIP-325 job's ``output.collect((key,
    count))`` does: the compiled loop appends each record's key and count to the collector's
    lists, which go to an :class:`~skewlab.aggregates.count.EmissionSink` as one Arrow record
    batch per input batch; at the end the sink's sum of counts is checked against the final
    counts (every emission, with its value). ``emit="end"`` emits once per key at the end of
    input (a global window, FLIP-140's WordCount). Either way, at the end every key's final
    count goes to the sink. With ``checkpoint_interval_ms`` a checkpoint
    (``backend.checkpoint()``) is taken that often, and the cache's hit ratio over each interval
    is recorded as ``(seconds since start, hit ratio, interval seconds)``.
    """

    def __init__(
        self,
        ctx: OperatorContext,
        state_backend: StateBackend,
        *,
        emit: str = "end",
        checkpoint_interval_ms: float | None = None,
        key_col: str = WORD,
        sink: str = "collect",
    ) -> None:
        super().__init__(ctx, key_col=key_col, sink=sink)
        check_choice("emit", emit, EMITS)
        self.backend = ctx.create_keyed_state_backend(state_backend)
        self._state = self.backend.value_state()
        self.emissions = EmissionSink() if emit == "record" else None
        self.emissions_match: bool | None = None
        self.interval_ns = (
            None if checkpoint_interval_ms is None else int(checkpoint_interval_ms * 1e6)
        )
        self.checkpoints = 0
        # (seconds since start, hit ratio, seconds the interval lasted)
        self.gauge: list[tuple[float, float | None, float]] = []
        self._started_ns: int | None = None
        self._sampled_ns = 0
        self._last_hits = self._last_misses = 0

    # -- checkpoints and the hit-ratio gauge
    def _on_timer(self, timestamp_ns: int) -> None:
        timers = self.ctx.timers
        now_ns = timers.current_processing_time()
        self.checkpoint(now_ns)
        assert self.interval_ns is not None
        timers.register_processing_time_timer(now_ns + self.interval_ns)

    def checkpoint(self, now_ns: int | None = None) -> None:
        """Checkpoint the backend (:meth:`~skewlab.state.api.KeyedStateBackend.checkpoint`) and
        sample the hit ratio."""
        now_ns = time.time_ns() if now_ns is None else now_ns
        self.backend.checkpoint()
        self.checkpoints += 1
        self._sample_gauge(now_ns)

    def _sample_gauge(self, now_ns: int) -> None:
        stats = self.backend.stats
        hits, misses = stats.cache_hits - self._last_hits, stats.cache_misses - self._last_misses
        self._last_hits, self._last_misses = stats.cache_hits, stats.cache_misses
        started = self._started_ns or now_ns
        duration = (now_ns - (self._sampled_ns or started)) / 1e9
        self._sampled_ns = now_ns
        if hits + misses:
            self.gauge.append(((now_ns - started) / 1e9, hits / (hits + misses), duration))

    # -- records
    def _process(self, cols, n, arrivals) -> None:
        if self._started_ns is None:
            self._started_ns = time.time_ns()
            if self.interval_ns is not None:
                self.ctx.timers.register_processing_time_timer(self._started_ns + self.interval_ns)
        if self.emissions is None:
            rejected = keyed_count(cols[self.key_col], cols[KEY_GROUP], self._state)
        else:  # every updated count to output.collect((key, count)), then to the sink
            keys: list = []
            counts: list = []
            rejected = keyed_count(cols[self.key_col], cols[KEY_GROUP], self._state, keys, counts)
            self.emissions.write_lists(keys, counts)
        if rejected:
            self.ctx.metrics.records_rejected += rejected

    def _finish(self) -> None:
        """End of input: every key's final count, read back from state, goes to the sink."""
        if self._started_ns is not None:
            self._sample_gauge(time.time_ns())  # the last (partial) interval
        emit = self._emit
        final_counts = []
        for _, key, count in self.backend.items():  # the subtask's own key groups
            emit(key, count)
            final_counts.append(count)
        if self.emissions is not None:
            self.emissions_match = self.emissions.count_sum == EmissionSink.expected_count_sum(
                final_counts
            ) and self.emissions.records == sum(final_counts)
        self._finish_sink()

    def close(self) -> dict[str, Any]:
        out = backend_counters(self.backend) | {
            "checkpoints": self.checkpoints,
            "hit_ratio_per_interval": self.gauge,
            "records_emitted": 0 if self.emissions is None else self.emissions.records,
            "emissions_match": self.emissions_match,
            "cpu_ns": self.cpu_ns,
        }
        self.backend.close()
        return out


# --------------------------------------------------------------------------- sorted input


def _unsorted(key: object, group: int, previous: object, previous_group: int) -> UnsortedInputError:
    return UnsortedInputError(
        f"input is not sorted by key: key {key!r} (key group {group}) came after key "
        f"{previous!r} (key group {previous_group}); sort-based grouping needs records "
        "sorted by (key_group, key)"
    )


class SortGroupCount(_CountOperator):
    """Sort-then-group, no state backend (DataSet's reduce without a combiner): the count of the
    current run of equal keys lives in a local variable; a key change emits it.

    A key that does not sort after the previous one raises
    :class:`~skewlab.errors.UnsortedInputError` (checked once per key, not per record).
    """

    def __init__(self, ctx: OperatorContext, *, key_col: str = WORD, sink: str = "collect") -> None:
        super().__init__(ctx, key_col=key_col, sink=sink)
        self.current: Any = _NO_KEY
        self.current_group = -1
        self.count = 0

    def _process(self, cols, n, arrivals) -> None:
        self.current, self.current_group, self.count, rejected = sort_group_count(
            cols[self.key_col],
            cols[KEY_GROUP],
            self._emit,
            _unsorted,
            self.current,
            self.current_group,
            self.count,
            _NO_KEY,
        )
        if rejected:
            self.ctx.metrics.records_rejected += rejected

    def _finish(self) -> None:
        if self.current is not _NO_KEY:
            self._emit(self.current, self.count)
            self.current = _NO_KEY
        self._finish_sink()


class SortedCount(_CountOperator):
    """FLIP-140: sorted input, a single-key state backend, per record one ``get`` + ``put``;
    when a key's run ends its count is read once more and emitted (the end-of-key timer).

    Unsorted input fails in the backend with :class:`~skewlab.errors.UnsortedInputError` as
    soon as a finished key comes back -- never with a wrong count.
    """

    def __init__(self, ctx: OperatorContext, *, key_col: str = WORD, sink: str = "collect") -> None:
        super().__init__(ctx, key_col=key_col, sink=sink)
        self.backend = ctx.create_keyed_state_backend(StateBackend("single_key"))
        self._state = self.backend.value_state()
        self.current: Any = _NO_KEY
        self.current_group = -1

    def _process(self, cols, n, arrivals) -> None:
        self.current, self.current_group, rejected = sorted_count(
            cols[self.key_col],
            cols[KEY_GROUP],
            self._state,
            self._emit,
            self.current,
            self.current_group,
            _NO_KEY,
        )
        if rejected:
            self.ctx.metrics.records_rejected += rejected

    def _finish(self) -> None:
        if self.current is not _NO_KEY:
            self._emit(self.current, self.backend.get(self.current_group, self.current))
            self.current = _NO_KEY
        self._finish_sink()

    def close(self) -> dict[str, Any]:
        out = backend_counters(self.backend) | {"cpu_ns": self.cpu_ns}
        self.backend.close()
        return out
