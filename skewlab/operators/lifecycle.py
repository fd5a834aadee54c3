"""The salting lesson's order example as keyed operators: account events applied to each
user's status, through salting (two stages) or through seed 000's buffer (one stage).

* :class:`LatestEvent` -- salting's stage 1: ``keyBy (user, salt) -> reduce(latest)``;
* :class:`ApplyEvents` -- salting's stage 2: ``keyBy user``, apply each event as it arrives
  and count those that arrive after a later one;
* :class:`LifecycleBuffer` -- ``keyBy user`` -> the buffer, applying each user's events in
  their buffered order at flush.

Example::

    >>> from skewlab.inputs.lifecycle import apply_event
    >>> apply_event(apply_event(None, "deleted"), "created")   # out of order: resurrected
    'active'
"""

from __future__ import annotations

import time

from skewlab.engine.operator import IntervalTrigger, OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.inputs.lifecycle import apply_event
from skewlab.operators.running_count import SALTED_KEY
from skewlab.operators.stateful import StatefulOperator
from skewlab.state.api import PickleSerializer
from skewlab.state.state_backend import StateBackend

__all__ = ["ApplyEvents", "LatestEvent", "LifecycleBuffer"]


class LatestEvent(StatefulOperator):
    """Salting's stage 1 for events: ``keyBy (user, salt) -> reduce(latest)``.

    Keeps the sub-key's latest event and emits it, running, after every record (as Flink's
    ``reduce`` does) -- ``(user, (seq, event))`` for the next stage.
    """

    columns = (SALTED_KEY, "user_id", "event", KEY_GROUP, "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, users, events = cols[SALTED_KEY], cols["user_id"], cols["event"]
        groups, seqs = cols[KEY_GROUP], cols["seq"]
        put, emit = self.state.put, self.ctx.output.emit
        clock = time.time_ns
        for i in range(n):
            if keys[i] is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            latest = (seqs[i], events[i])
            put(groups[i], keys[i], latest)
            emit(users[i], latest, arrival, seqs[i])


class ApplyEvents(StatefulOperator):
    """Salting's stage 2: ``keyBy user``, apply each event to the account's status as it
    arrives, and count the events that arrive after a later one of the same user."""

    columns = ("key", "value", KEY_GROUP, "arrival_ns", "seq")

    def __init__(self, ctx: OperatorContext, state_backend: StateBackend) -> None:
        super().__init__(ctx, state_backend)
        self.loads = PickleSerializer().loads

    def process(self, cols, n, arrivals) -> None:
        keys, values, groups = cols["key"], cols["value"], cols[KEY_GROUP]
        arrived = cols["arrival_ns"]
        get, put, emit = self.state.get, self.state.put, self.ctx.output.emit
        check, loads = self.ctx.check_order, self.loads
        for i in range(n):
            key = keys[i]
            seq, event = loads(values[i])
            check(key, seq)
            status = apply_event(get(groups[i], key), event)
            put(groups[i], key, status)
            emit(key, status, arrived[i], seq)


class LifecycleBuffer(StatefulOperator):
    """Seed 000's buffer for events: ``keyBy user``, an operator-level buffer of each user's
    events in arrival order, flushed every ``trigger_interval_ms`` or ``max_count`` records;
    a flush applies each user's events, in their buffered order, to the user's status."""

    columns = ("user_id", "event", KEY_GROUP, "seq")

    def __init__(
        self,
        ctx: OperatorContext,
        state_backend: StateBackend,
        *,
        max_count: int,
        trigger_interval_ms: float,
    ) -> None:
        super().__init__(ctx, state_backend)
        self.max_count = max_count
        self.trigger = IntervalTrigger(ctx.timers, int(trigger_interval_ms * 1e6))
        self.count = 0
        self.buffer: dict[str, list[tuple[int, str, int]]] = {}
        self.groups: dict[str, int] = {}

    def on_timer(self, timestamp_ns: int) -> None:
        self.flush()
        self.trigger.fired(timestamp_ns)

    def process(self, cols, n, arrivals) -> None:
        self.trigger.start()
        users, events, groups, seqs = cols["user_id"], cols["event"], cols[KEY_GROUP], cols["seq"]
        clock = time.time_ns
        for i in range(n):
            key = users[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            self.buffer.setdefault(key, []).append((seqs[i], events[i], arrival))
            self.groups[key] = groups[i]
            self.count += 1
            if self.count >= self.max_count:
                self.flush()

    def flush(self) -> None:
        if not self.count:
            return
        get, put, check = self.state.get, self.state.put, self.ctx.check_order
        for key, buffered in self.buffer.items():
            group = self.groups[key]
            status = get(group, key)
            for seq, event, _ in buffered:
                check(key, seq)
                status = apply_event(status, event)
            put(group, key, status)
            self.ctx.output.emit_batch(key, status, [(arrival, 1) for _, _, arrival in buffered])
        self.buffer.clear()
        self.groups.clear()
        self.count = 0
        self.ctx.metrics.flushes += 1

    def finish(self) -> None:
        self.flush()
