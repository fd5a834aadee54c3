"""The operators strategies chain inside a subtask, over seed 000's views and ``StatsState``.

Each is a :class:`skewlab.runtime.Operator`: it gets slices of its partition's records in arrival
order and does the per-record (or per-flush) state work a Flink operator would:

* :class:`KeyedReduce` -- ``keyBy(tweet) -> reduce``: per record read state, merge, write, emit
  (naive, cached, and salting's first stage);
* :class:`PartialsReduce` -- the ``reduce`` after an exchange: merges serialised partials;
* :class:`ListBuffer` / :class:`PreaggregatingBuffer` / :class:`VectorizedBuffer` -- seed 000's
  operator-level buffer, flushed every ``trigger_interval_ms`` or ``max_count`` records, chained
  with the keyed reduce of the partials;
* :class:`SortedReduce` -- FLIP-140: sorted input, single-key state, one emission per key.

Example::

    >>> from skewlab.operators import KeyedReduce      # used through skewlab.strategies
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from skewlab.runtime import KEY_GROUP, Operator, SubtaskContext
from skewlab.state import create_backend
from skewlab.stats import StatsSerializer, StatsState

VIEW_COLUMNS = ("view_id", "user_id")
# register index and rank of each view's two sketch updates, computed by Spark
VIEW_REGISTER, VIEW_RANK = "_view_register", "_view_rank"
USER_REGISTER, USER_RANK = "_user_register", "_user_rank"


def state_backend(ctx: SubtaskContext, name: str | None = None, serializer: Any = StatsSerializer):
    """The subtask's state backend (``name`` or the config's); serialising backends use
    ``serializer`` (``None``: the backend's default, pickle)."""
    config = ctx.config
    name = name or config.backend
    options: dict[str, Any] = {"track_keys": config.tracks_keys}
    if name in ("rocksdb", "cached") and serializer is not None:
        options["serializer"] = serializer
    if name == "cached":
        options["max_entries"] = config.cache_entries
    return create_backend(name, **options)


class StatefulOperator(Operator):
    """An operator with one keyed state backend per subtask; reports its access stats on close.

    ``backend_name`` overrides the config's backend; ``serializer`` is what a serialising
    backend stores values with (``StatsSerializer``; ``None`` for pickle).
    """

    backend_name: str | None = None
    serializer: Any = StatsSerializer

    def __init__(self, ctx: SubtaskContext) -> None:
        super().__init__(ctx)
        self.backend = state_backend(ctx, self.backend_name, self.serializer)

    def close(self) -> dict[str, Any]:
        stats = self.backend.stats
        out = {
            "reads": stats.reads,
            "writes": stats.writes,
            "bytes_serialized": stats.bytes_serialized,
            "cache_hits": stats.cache_hits,
            "cache_misses": stats.cache_misses,
            "evictions": stats.evictions,
        }
        if stats.reads_per_key is not None:
            out["reads_per_key"] = dict(stats.reads_per_key)
            out["writes_per_key"] = dict(stats.writes_per_key or {})
        self.backend.close()
        return out


class KeyedReduce(StatefulOperator):
    """``keyBy(key) -> reduce(plus)``: one state read, merge and write per record, then emit.

    The emitted key is ``emit_key_col``'s value (salting emits the *unsalted* tweet id: the
    seed's ``map`` that strips the salt is chained here).
    """

    def __init__(
        self, ctx: SubtaskContext, key_col: str = "tweet_id", emit_key_col: str = ""
    ) -> None:
        super().__init__(ctx)
        self.key_col = key_col
        self.emit_key_col = emit_key_col or key_col
        self.columns = tuple(
            dict.fromkeys((key_col, self.emit_key_col, *VIEW_COLUMNS, KEY_GROUP, "seq"))
        )

    def process(self, cols, n, arrivals) -> None:
        keys, emit_keys = cols[self.key_col], cols[self.emit_key_col]
        view_ids, user_ids, groups, seqs = (
            cols["view_id"], cols["user_id"], cols[KEY_GROUP], cols["seq"]
        )  # fmt: skip
        get, put, emit = self.backend.get, self.backend.put, self.ctx.emit
        precision = self.ctx.config.precision
        check = self.ctx.check_order if self.ctx.config.check_order else None
        clock = time.time_ns
        rejected = 0
        for i in range(n):
            key = keys[i]
            if key is None:
                rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            out_key = emit_keys[i]
            one = StatsState.from_view(view_ids[i], user_ids[i], out_key, precision)
            state = get(groups[i], key)
            state = one if state is None else state.merge(one)
            put(groups[i], key, state)
            if check is not None:
                check(out_key, seqs[i])
            emit(out_key, state, arrival, seqs[i])
        self.ctx.metrics.records_rejected += rejected


class PartialsReduce(StatefulOperator):
    """The ``reduce`` downstream of an exchange: merges serialised partial ``StatsState``s."""

    columns = ("key", "value", KEY_GROUP, "arrival_ns", "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, values, groups = cols["key"], cols["value"], cols[KEY_GROUP]
        arrived, seqs = cols["arrival_ns"], cols["seq"]
        get, put, emit = self.backend.get, self.backend.put, self.ctx.emit
        loads = StatsSerializer.loads
        check = self.ctx.check_order if self.ctx.config.check_order else None
        for i in range(n):
            key = keys[i]
            partial = loads(values[i])
            state = get(groups[i], key)
            state = partial if state is None else state.merge(partial)
            put(groups[i], key, state)
            if check is not None:
                check(key, seqs[i])
            emit(key, state, arrived[i], seqs[i])


class _Buffer(StatefulOperator):
    """Seed 000's buffer: operator-level, flushed on ``max_count`` records or the timer."""

    def __init__(self, ctx: SubtaskContext) -> None:
        super().__init__(ctx)
        config = ctx.config
        self.max_count = config.max_count
        self.interval_ns = int(config.trigger_interval_ms * 1e6)
        self.count = 0
        self.timer: int | None = None
        self.groups: dict[str, int] = {}
        self.arrivals: dict[str, list[tuple[int, int]]] = {}

    def next_timer_ns(self) -> int | None:
        return self.timer

    def on_timer(self, now_ns: int) -> None:
        self.flush()
        # as the seed: the next timer is registered relative to the one that fired
        self.timer = (self.timer or now_ns) + self.interval_ns
        if self.timer <= now_ns:
            self.timer = now_ns + self.interval_ns

    def _start_timer(self) -> None:
        if self.timer is None and self.interval_ns > 0:
            self.timer = time.time_ns() + self.interval_ns

    def partials(self):
        """Yield ``(key, partial StatsState)`` for every buffered key, then clear the buffer."""
        raise NotImplementedError

    def flush(self) -> None:
        """Empty the buffer downstream: per key, merge the partial into keyed state and emit."""
        if not self.count:
            return
        get, put = self.backend.get, self.backend.put
        emit_batch = self.ctx.emit_batch
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


class _PerRecordBuffer(_Buffer):
    """A buffer that takes views one at a time (Python objects), as the seed's operator does."""

    columns = ("tweet_id", *VIEW_COLUMNS, KEY_GROUP)

    def __init__(self, ctx: SubtaskContext) -> None:
        super().__init__(ctx)
        self.precision = ctx.config.precision
        self.buffer: dict[str, Any] = {}

    def add(self, key: str, view_id: str, user_id: str) -> None:
        """Put one view of ``key`` into the buffer."""
        raise NotImplementedError

    def process(self, cols, n, arrivals) -> None:
        self._start_timer()
        keys, view_ids, user_ids, groups = (
            cols["tweet_id"], cols["view_id"], cols["user_id"], cols[KEY_GROUP]
        )  # fmt: skip
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
            add(key, view_ids[i], user_ids[i])
            self.arrivals[key].append((arrival, 1))
            self.count += 1
            if self.count >= self.max_count:
                self.flush()


class ListBuffer(_PerRecordBuffer):
    """The seed's buffer as written: a ``Vector[StatsState]`` per key, reduced at flush."""

    def add(self, key: str, view_id: str, user_id: str) -> None:
        one = StatsState.from_view(view_id, user_id, key, self.precision)
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

    def add(self, key: str, view_id: str, user_id: str) -> None:
        partial = self.buffer.get(key)
        if partial is None:
            partial = self.buffer[key] = StatsState.empty(key, self.precision)
        partial.add(view_id, user_id)

    def partials(self):
        yield from self.buffer.items()
        self.buffer.clear()


class VectorizedBuffer(_Buffer):
    """The buffer over Arrow slices: Spark computed each view's register index and rank
    (``xxhash64`` + bit arithmetic, natively), numpy folds them into per-key register slots.

    Registers are identical to one datasketch ``update`` per view (same hash, same rank rule),
    so the result digest is the reference's; only the per-record Python work is gone. Slots
    are kept across flushes (zeroed, not freed) and recycled once they outnumber
    ``4 * max_count``, which bounds the buffer's memory.
    """

    arrow_columns = ("tweet_id",)
    numpy_columns = (KEY_GROUP, VIEW_REGISTER, VIEW_RANK, USER_REGISTER, USER_RANK)

    def __init__(self, ctx: SubtaskContext) -> None:
        super().__init__(ctx)
        self.m = 1 << ctx.config.precision
        self.slot_of: dict[str, int] = {}
        self.slot_keys: list[str] = []
        self.slot_groups: list[int] = []
        self.regs = np.zeros((64, 2 * self.m), dtype=np.int8)
        self.dirty = np.zeros(64, dtype=bool)
        self.pending: list[tuple[int, int]] = []

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
        self._start_timer()
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
        user_at = slots * width + cols[USER_REGISTER]
        view_rank, user_rank = cols[VIEW_RANK], cols[USER_RANK]
        flat = self.regs.reshape(-1)
        pos = 0
        while pos < n:
            hi = pos + min(n - pos, self.max_count - self.count)
            np.maximum.at(flat, view_at[pos:hi], view_rank[pos:hi])
            np.maximum.at(flat, user_at[pos:hi], user_rank[pos:hi])
            self.dirty[slots[pos:hi]] = True
            arrival = time.time_ns() if arrivals is None else int(arrivals[pos])
            self.pending.append((arrival, hi - pos))
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
        get, put, emit = self.backend.get, self.backend.put, self.ctx.emit_batch
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
        self.ctx.record_latencies(self.pending)
        self.pending = []
        self.dirty[:] = False
        self.count = 0
        self.ctx.metrics.flushes += 1


BUFFERS = {"list": ListBuffer, "preaggregate": PreaggregatingBuffer, "vectorized": VectorizedBuffer}


class SortedReduce(StatefulOperator):
    """FLIP-140: input sorted by (key group, key); single-key state; one emission per key."""

    backend_name = "single_key"
    columns = ("tweet_id", *VIEW_COLUMNS, KEY_GROUP)

    def __init__(self, ctx: SubtaskContext) -> None:
        super().__init__(ctx)
        self.current: str | None = None
        self.current_group = -1
        self.run_arrivals: list[tuple[int, int]] = []

    def process(self, cols, n, arrivals) -> None:
        keys, view_ids, user_ids, groups = (
            cols["tweet_id"], cols["view_id"], cols["user_id"], cols[KEY_GROUP]
        )  # fmt: skip
        get, put = self.backend.get, self.backend.put
        precision = self.ctx.config.precision
        clock = time.time_ns
        for i in range(n):
            key = keys[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            if key != self.current:
                self._emit_run()
                self.current, self.current_group = key, groups[i]
            arrival = clock() if arrivals is None else int(arrivals[i])
            self.run_arrivals.append((arrival, 1))
            one = StatsState.from_view(view_ids[i], user_ids[i], key, precision)
            state = get(groups[i], key)
            put(groups[i], key, one if state is None else state.merge(one))

    def _emit_run(self) -> None:
        if self.current is None:
            return
        state = self.backend.get(self.current_group, self.current)
        self.ctx.emit_batch(self.current, state, self.run_arrivals)
        self.run_arrivals = []

    def finish(self) -> None:
        self._emit_run()
        self.current = None
