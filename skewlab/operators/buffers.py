"""Seed 000's remedy: an operator-level in-memory buffer, flushed every ``trigger_interval_ms``
or ``max_count`` records, chained with the keyed reduce of the partials.

Three buffers, all ending with the same registers:

* :class:`ListBuffer` -- the seed's buffer as written: a ``Vector[StatsState]`` per key, one
  ``StatsState.fromView`` per record, reduced at flush;
* :class:`PreaggregatingBuffer` -- one running ``StatsState`` per buffered key;
* :class:`VectorizedBuffer` -- Arrow slices whose register indexes and ranks Spark computed,
  folded into per-key register slots with numpy;
* :class:`HotKeyBuffer` -- the vectorized buffer for the hot keys only (seed 000's future work:
  "maintain a set of hot keys based on a rule set and emit other keys directly"): a
  frequent-items sketch per subtask finds them, every other record goes straight to the keyed
  reduce, one state access and one emission per record as the naive reduce.

The buffer is per subtask, for all its keys; a key's records never leave their subtask, so
per-key order is kept.

Example::

    >>> sorted(BUFFERS)
    ['hotkey', 'list', 'preaggregate', 'vectorized']
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.aggregates.stats_state import (
    SINGLE_VIEW_COLUMNS,
    USER_RANK,
    USER_REGISTER,
    VIEW_RANK,
    VIEW_REGISTER,
    StatsState,
)
from skewlab.engine.operator import IntervalTrigger, OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.operators.buffer_state import restore_buffer, snapshot_buffer
from skewlab.operators.reduce import reduce_each
from skewlab.operators.stateful import StatefulOperator
from skewlab.state.state_backend import StateBackend

#: The hot-key buffer's detector sketches one record in this many of its subtask's stream.
DETECTOR_SAMPLING = 8

__all__ = [
    "BUFFERS",
    "BUFFER_KINDS",
    "DETECTOR_SAMPLING",
    "HotKeyBuffer",
    "ListBuffer",
    "PreaggregatingBuffer",
    "VectorizedBuffer",
]


class _Buffer(StatefulOperator):
    """Seed 000's buffer: operator-level, flushed on ``max_count`` records or the timer, then
    the keyed reduce of the partials over ``state_backend``."""

    def __init__(
        self,
        ctx: OperatorContext,
        state_backend: StateBackend,
        *,
        max_count: int,
        trigger_interval_ms: float,
        precision: int = DEFAULT_PRECISION,
    ) -> None:
        super().__init__(ctx, state_backend)
        self.max_count = max_count
        self.trigger = IntervalTrigger(ctx.timers, int(trigger_interval_ms * 1e6))
        self.precision = precision
        self.count = 0
        self.groups: dict[str, int] = {}
        self.arrivals: dict[str, list[tuple[int, int]]] = {}

    def on_timer(self, timestamp_ns: int) -> None:
        self.flush()
        self.trigger.fired(timestamp_ns)

    def partials(self):
        """Yield ``(key, partial StatsState)`` for every buffered key, then clear the buffer."""
        raise NotImplementedError

    def flush(self) -> None:
        """Empty the buffer downstream: per key, merge the partial into keyed state and emit."""
        if not self.count:
            return
        get, put = self.state.get, self.state.put
        emit_batch = self.ctx.output.emit_batch
        for key, partial in self.partials():
            group = self.groups[key]
            state = get(group, key)
            state = partial if state is None else state.merge(partial)
            put(group, key, state)
            emit_batch(key, state, self.arrivals[key])
        self.groups.clear()
        self.arrivals.clear()
        self.count = 0
        self.ctx.metrics.flushes += 1

    def finish(self) -> None:
        self.flush()

    def snapshot_state(self, context) -> None:
        """In-flight records as the job's policy says, then the keyed state
        (:mod:`skewlab.operators.buffer_state`)."""
        snapshot_buffer(self, context)

    def initialize_state(self, context) -> None:
        restore_buffer(self, context)


class _PerRecordBuffer(_Buffer):
    """A buffer that takes views one at a time (Python objects), as the seed's operator does."""

    columns = ("tweet_id", *SINGLE_VIEW_COLUMNS, KEY_GROUP)

    def __init__(self, ctx: OperatorContext, state_backend: StateBackend, **settings) -> None:
        super().__init__(ctx, state_backend, **settings)
        self.buffer: dict[str, Any] = {}

    def add(self, key: str, view: tuple[int, int, int, int]) -> None:
        """Put one view of ``key`` (its registers: view index, rank, user index, rank) into the
        buffer."""
        raise NotImplementedError

    def process(self, cols, n, arrivals) -> None:
        self.trigger.start()
        keys, groups = cols["tweet_id"], cols[KEY_GROUP]
        views = list(zip(*(cols[c] for c in SINGLE_VIEW_COLUMNS), strict=True))
        clock, add = time.time_ns, self.add
        for i in range(n):
            key = keys[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            if key not in self.groups:
                self.groups[key] = groups[i]
                self.arrivals[key] = []
            add(key, views[i])
            self.arrivals[key].append((arrival, 1))
            self.count += 1
            if self.count >= self.max_count:
                self.flush()


class ListBuffer(_PerRecordBuffer):
    """The seed's buffer as written: a ``Vector[StatsState]`` per key (each record's single-view
    state), reduced at flush."""

    def add(self, key: str, view: tuple[int, int, int, int]) -> None:
        one = StatsState.of_view(key, *view, self.precision)
        vector = self.buffer.get(key)
        if vector is None:
            self.buffer[key] = [one]
        else:
            vector.append(one)

    def partials(self):
        for key, vector in self.buffer.items():
            partial = vector[0]
            for one in vector[1:]:
                partial.merge(one)
            yield key, partial
        self.buffer.clear()


class PreaggregatingBuffer(_PerRecordBuffer):
    """One running ``StatsState`` per buffered key: each view is folded in on arrival."""

    def add(self, key: str, view: tuple[int, int, int, int]) -> None:
        partial = self.buffer.get(key)
        if partial is None:
            partial = self.buffer[key] = StatsState.empty(key, self.precision)
        partial.add_view(*view)

    def partials(self):
        yield from self.buffer.items()
        self.buffer.clear()


class VectorizedBuffer(_Buffer):
    """The buffer over Arrow slices: the records' single-view registers (the upstream map, as
    every strategy gets them) are folded into per-key register slots with numpy, a slice at a
    time, instead of one Python call per record.

    Registers are identical to one datasketch ``update`` per view (same hash, same rank rule),
    so the result digest is the reference's. Slots are kept across flushes (zeroed, not freed)
    and recycled once they outnumber ``4 * max_count``, which bounds the buffer's memory. A
    record's latency runs from its own arrival (with a paced source, its release time).
    """

    arrow_columns = ("tweet_id",)
    numpy_columns = (KEY_GROUP, *SINGLE_VIEW_COLUMNS)

    def __init__(self, ctx: OperatorContext, state_backend: StateBackend, **settings) -> None:
        super().__init__(ctx, state_backend, **settings)
        self.m = 1 << self.precision
        self.slot_of: dict[str, int] = {}
        self.slot_keys: list[str] = []
        self.slot_groups: list[int] = []
        self.regs = np.zeros((64, 2 * self.m), dtype=np.int8)
        self.dirty = np.zeros(64, dtype=bool)
        self.pending: list[np.ndarray] = []  # arrival times of the buffered records

    def _slots_for(self, uniques, groups: np.ndarray, first: np.ndarray) -> np.ndarray:
        slots = np.empty(len(uniques), dtype=np.intp)
        slot_of = self.slot_of
        for j, key in enumerate(uniques):
            slot = slot_of.get(key)
            if slot is None:
                slot = slot_of[key] = len(self.slot_keys)
                self.slot_keys.append(key)
                self.slot_groups.append(int(groups[first[j]]))
            slots[j] = slot
        if len(self.slot_keys) > len(self.regs):
            grow = max(len(self.slot_keys), 2 * len(self.regs))
            regs = np.zeros((grow, 2 * self.m), dtype=np.int8)
            regs[: len(self.regs)] = self.regs
            dirty = np.zeros(grow, dtype=bool)
            dirty[: len(self.dirty)] = self.dirty
            self.regs, self.dirty = regs, dirty
        return slots

    def process(self, cols, n, arrivals) -> None:
        self.trigger.start()
        received = time.time_ns()  # unpaced: the whole slice arrives now
        encoded = cols["tweet_id"].dictionary_encode()
        codes = encoded.indices.fill_null(-1).to_numpy()
        uniques = encoded.dictionary.to_pylist()
        valid = codes >= 0
        rejected = n - int(valid.sum())
        if rejected:
            self.ctx.metrics.records_rejected += rejected
            codes = codes[valid]
            cols = {c: cols[c][valid] for c in self.numpy_columns}
            if arrivals is not None:
                arrivals = np.asarray(arrivals)[valid]
            n = len(codes)
        if n == 0:
            return
        first = np.full(len(uniques), -1, dtype=np.intp)
        first[codes[::-1]] = np.arange(n - 1, -1, -1)
        slots = self._slots_for(uniques, cols[KEY_GROUP], first)[codes]
        width = 2 * self.m
        view_at = slots * width + cols[VIEW_REGISTER]
        user_at = slots * width + self.m + cols[USER_REGISTER]  # after the views sketch
        view_rank, user_rank = cols[VIEW_RANK], cols[USER_RANK]
        flat = self.regs.reshape(-1)
        pos = 0
        while pos < n:
            hi = pos + min(n - pos, self.max_count - self.count)
            np.maximum.at(flat, view_at[pos:hi], view_rank[pos:hi])
            np.maximum.at(flat, user_at[pos:hi], user_rank[pos:hi])
            self.dirty[slots[pos:hi]] = True
            self.pending.append(
                np.full(hi - pos, received, np.int64)
                if arrivals is None
                else np.asarray(arrivals[pos:hi], dtype=np.int64)
            )
            self.count += hi - pos
            pos = hi
            if self.count >= self.max_count:
                self.flush()
        if len(self.slot_keys) > 4 * self.max_count and not self.count:
            self._recycle_slots()

    def _recycle_slots(self) -> None:
        self.slot_of.clear()
        self.slot_keys.clear()
        self.slot_groups.clear()

    def flush(self) -> None:
        if not self.count:
            return
        get, put, emit = self.state.get, self.state.put, self.ctx.output.emit_batch
        m, maximum = self.m, np.maximum
        slots = np.flatnonzero(self.dirty)
        views, viewers = self.regs[slots, :m], self.regs[slots, m:]
        keys, groups = self.slot_keys, self.slot_groups
        for j, slot in enumerate(slots.tolist()):
            key, group = keys[slot], groups[slot]
            state = get(group, key)
            if state is None:
                state = StatsState.from_registers(key, views[j], viewers[j])
            else:
                maximum(state.views_reg, views[j], out=state.views_reg)
                maximum(state.viewers_reg, viewers[j], out=state.viewers_reg)
            put(group, key, state)
            emit(key, state, ())
        self.regs[slots] = 0
        self.ctx.output.record_arrivals(np.concatenate(self.pending))
        self.pending = []
        self.dirty[:] = False
        self.count = 0
        self.ctx.metrics.flushes += 1


class HotKeyBuffer(VectorizedBuffer):
    """The vectorized buffer for hot keys only; every other record is reduced at once.

    A key is **hot** on this subtask once its share of the subtask's records so far (or of
    ``max_count`` records, while fewer were seen) *may* exceed ``1 / max_count`` -- the share at
    which it is expected once in every flush. A buffered record's own work (numpy folding, one
    emission per key and flush) is cheaper than a reduced one's (a ``StatsState`` per record,
    its merge, its emission), so a key pays its way through the buffer before a flush saves it
    a state access: in the buffering reference the vectorized buffer is well ahead of naive at
    1,000 keys, where each key is expected once per flush. The detector is a DataSketches
    ``frequent_strings_sketch`` (:mod:`skewlab.engine.heavy_hitters`' detector) fed a random
    sample: one record in :data:`DETECTOR_SAMPLING`, drawn by a generator seeded per subtask
    (so a run is repeatable, and a periodic stream, keys in turn, cannot hide a key from the
    sample as taking every 8th record would), the sampled counts of a slice added once per
    key. A key is hot once it was sampled at least twice and its upper bound, scaled by the
    sampling, is over the bar. Sampling keeps the detector's cost per record small where nearly
    every record is a new key (at 20,000 keys updating the sketch for every key of every slice
    cost several per cent of the operator); the price is that a key near the bar may be found a
    little early or late, which moves it between two paths that end in the same registers. A
    hot key stays hot, so each key's records are reduced in their order: straight to state
    while cold, through the buffer once hot. A cold record costs what a naive record costs
    (read, merge, write, emit); a hot one what a buffered record costs. The sketch is not in a
    savepoint: after a restore keys are found hot again as records arrive.
    """

    numpy_columns = (KEY_GROUP, *SINGLE_VIEW_COLUMNS, "seq")

    def __init__(self, ctx: OperatorContext, state_backend: StateBackend, **settings) -> None:
        from datasketches import frequent_strings_sketch

        from skewlab.engine.heavy_hitters import smallest_sketch_size

        super().__init__(ctx, state_backend, **settings)
        self.threshold = min(0.5, 1 / self.max_count)
        self.sketch = frequent_strings_sketch(smallest_sketch_size(self.threshold))
        self.seen = 0  # records with a key
        self.sampler = np.random.default_rng(ctx.subtask)
        self.hot: set[str] = set()

    def _detect(self, codes: np.ndarray, uniques: list, n: int) -> None:
        """Feed the sampled records of a slice to the sketch; mark the keys now hot."""
        stride = DETECTOR_SAMPLING
        sampled = codes[self.sampler.random(n) * stride < 1]
        counts = np.bincount(sampled[sampled >= 0], minlength=len(uniques))
        # the bar in sampled records: a share of the records seen, and no fewer than a
        # flush's worth (early on every key is a large share of few)
        bar = self.threshold * max(self.seen, self.max_count) / stride
        sketch, hot = self.sketch, self.hot
        for j in np.flatnonzero(counts).tolist():
            key = uniques[j]
            sketch.update(key, int(counts[j]))
            if (
                key not in hot
                and sketch.get_estimate(key) >= 2
                and sketch.get_upper_bound(key) > bar
            ):
                hot.add(key)

    def process(self, cols, n, arrivals) -> None:
        encoded = cols["tweet_id"].dictionary_encode()
        codes = encoded.indices.fill_null(-1).to_numpy()
        uniques = encoded.dictionary.to_pylist()
        present = codes >= 0
        self.seen += int(present.sum())
        self._detect(codes, uniques, n)
        if not self.hot:
            self._reduce_cold(cols, np.arange(n), codes, uniques, arrivals)
            return
        hot = self.hot
        is_hot = np.fromiter((k in hot for k in uniques), dtype=bool, count=len(uniques))
        to_buffer = np.zeros(n, dtype=bool)
        to_buffer[present] = is_hot[codes[present]]
        cold = np.flatnonzero(~to_buffer)
        if len(cold):
            self._reduce_cold(cols, cold, codes, uniques, arrivals)
        if to_buffer.any():
            import pyarrow as pa

            mask = pa.array(to_buffer)
            keep = {c: cols[c][to_buffer] for c in self.numpy_columns}
            keep["tweet_id"] = cols["tweet_id"].filter(mask)
            super().process(
                keep,
                int(to_buffer.sum()),
                None if arrivals is None else np.asarray(arrivals)[to_buffer],
            )

    def _reduce_cold(self, cols, rows: np.ndarray, codes, uniques, arrivals) -> None:
        """The naive reduce of ``rows`` (:func:`~skewlab.operators.reduce.reduce_each`)."""
        keys = [uniques[c] if c >= 0 else None for c in codes[rows].tolist()]
        reduce_each(
            self,
            keys,
            keys,
            cols[KEY_GROUP][rows].tolist(),
            cols["seq"][rows].tolist(),
            [cols[c][rows].tolist() for c in SINGLE_VIEW_COLUMNS],
            None if arrivals is None else np.asarray(arrivals)[rows].tolist(),
        )


#: The buffers by name (``--buffer``).
BUFFERS = {
    "list": ListBuffer,
    "preaggregate": PreaggregatingBuffer,
    "vectorized": VectorizedBuffer,
    "hotkey": HotKeyBuffer,
}
BUFFER_KINDS = tuple(BUFFERS)
