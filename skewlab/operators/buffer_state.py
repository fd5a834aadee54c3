"""A buffer's in-flight records in a savepoint -- seed 000's note 2, on real runs.

Seed 000's buffer kept its records in operator state (``ListCheckpointed``), and the seed adds
that "this stream couldn't be rescaled". Operator list state is redistributed by *position*
(:func:`skewlab.state.operator_state.repartition_list_state`), not by key, so after a rescale a
buffered key's records can land on a subtask that does not own the key's key group -- there
they would build a second, partial state of the key. Three policies
(:data:`~skewlab.engine.recovery.IN_FLIGHT_POLICIES`):

==================  =============================================================================
``flush``           the buffer is flushed into keyed state before the snapshot: nothing in flight
``operator_state``  the in-flight records are list state (the seed's way): fine at the same
                    parallelism, refused when a rescale would misroute them (:func:`misrouted`)
``keyed_state``     the in-flight records are keyed state ``"in-flight"``: they follow their key
                    group to the subtask that owns it
==================  =============================================================================

A restored in-flight record is flushed at once when its subtask starts (it is older than any
record still to come, so per-key order holds). The list buffer's elements are one per record
(its ``Vector[StatsState]``); the pre-aggregating and vectorized buffers' are one per buffered key.

Example::

    >>> from skewlab.aggregates.stats_state import StatsState
    >>> one = InFlight(3, "tweet-1", StatsState.from_view("v", "u", "tweet-1"), 1)
    >>> InFlight.from_bytes(one.to_bytes()).key, misrouted([one], KeyGroupRange(0, 2))
    ('tweet-1', 1)
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from skewlab.aggregates.stats_state import StatsSerializer, StatsState
from skewlab.operators.stateful import StatefulOperator
from skewlab.state.key_groups import KeyGroupRange

__all__ = [
    "IN_FLIGHT_STATE",
    "InFlight",
    "InFlightSerializer",
    "misrouted",
    "restore_buffer",
    "snapshot_buffer",
    "in_flight",
]

#: The name of the in-flight records' state in a snapshot (list or keyed).
IN_FLIGHT_STATE = "in-flight"


@dataclass(frozen=True)
class InFlight:
    """Buffered records of one key: their partial state and how many records it holds
    (``None`` where the buffer does not count them per key)."""

    key_group: int
    key: str
    partial: StatsState
    records: int | None

    def to_bytes(self) -> bytes:
        """One list-state element."""
        return pickle.dumps(
            (self.key_group, self.key, StatsSerializer.dumps(self.partial), self.records),
            protocol=5,
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> InFlight:
        key_group, key, partial, records = pickle.loads(data)
        return cls(key_group, key, StatsSerializer.loads(partial), records)


class InFlightSerializer:
    """Values of the ``keyed_state`` policy: ``(partial state, records)``."""

    name = "skewlab.operators.buffer_state.InFlightSerializer"

    @staticmethod
    def dumps(value: tuple[StatsState, int | None]) -> bytes:
        return pickle.dumps((StatsSerializer.dumps(value[0]), value[1]), protocol=5)

    @staticmethod
    def loads(data: bytes) -> tuple[StatsState, int | None]:
        partial, records = pickle.loads(data)
        return StatsSerializer.loads(partial), records


def misrouted(elements: list[InFlight], key_group_range: KeyGroupRange) -> int:
    """How many in-flight elements a subtask owning ``key_group_range`` would get for keys it
    does not own."""
    return sum(1 for e in elements if e.key_group not in key_group_range)


def in_flight(buffer: Any) -> list[InFlight]:
    """Everything ``buffer`` holds, as :class:`InFlight` elements (the buffer is unchanged: a
    snapshot copies its in-flight records, they stay in flight)."""
    if hasattr(buffer, "slot_keys"):  # the vectorized buffer: per-key register slots
        m = buffer.m
        return [
            InFlight(
                buffer.slot_groups[slot],
                buffer.slot_keys[slot],
                StatsState.from_registers(
                    buffer.slot_keys[slot],
                    buffer.regs[slot, :m].copy(),
                    buffer.regs[slot, m:].copy(),
                ),
                None,
            )
            for slot in np.flatnonzero(buffer.dirty).tolist()
        ]
    out = []
    for key, held in buffer.buffer.items():
        group = buffer.groups[key]
        if isinstance(held, list):  # the list buffer: one StatsState per record
            out += [InFlight(group, key, StatsState.from_bytes(one.to_bytes()), 1) for one in held]
        else:
            records = sum(count for _, count in buffer.arrivals[key])
            out.append(InFlight(group, key, StatsState.from_bytes(held.to_bytes()), records))
    return out


def snapshot_buffer(buffer: Any, context: Any) -> None:
    """The buffer's part of a savepoint or checkpoint, as ``context.in_flight`` says; then its
    keyed state (:meth:`~skewlab.operators.stateful.StatefulOperator.snapshot_state`)."""
    policy = context.in_flight
    if policy == "flush":
        buffer.flush()
    elif policy == "operator_state":
        elements = in_flight(buffer)
        context.add_list_state(
            IN_FLIGHT_STATE, [e.to_bytes() for e in elements], "split_distribute"
        )
    else:
        writer = context.keyed_writer(IN_FLIGHT_STATE, InFlightSerializer)
        for e in sorted(in_flight(buffer), key=lambda e: e.key_group):
            writer.add(e.key_group, e.key, (e.partial, e.records))
        writer.close()
    StatefulOperator.snapshot_state(buffer, context)


def restore_buffer(buffer: Any, context: Any) -> None:
    """Restore the keyed reduce's state, then the in-flight records the snapshot holds for this
    subtask, flushed at once. An element for a key the subtask does not own is refused."""
    StatefulOperator.initialize_state(buffer, context)
    elements = [InFlight.from_bytes(b) for b in context.list_state(IN_FLIGHT_STATE)]
    elements += [
        InFlight(kg, key, partial, records)
        for kg, key, (partial, records) in context.keyed_state(IN_FLIGHT_STATE, InFlightSerializer)
    ]
    wrong = misrouted(elements, buffer.ctx.key_group_range)
    if wrong:
        kgs = buffer.ctx.key_group_range
        raise RuntimeError(
            f"subtask {buffer.ctx.subtask} (key groups {kgs.start_key_group}-"
            f"{kgs.end_key_group}) restored {wrong} in-flight buffer elements of keys it does "
            "not own: a buffer kept as list state cannot be rescaled (seed 000, note 2)"
        )
    get, put = buffer.state.get, buffer.state.put
    now = time.time_ns()
    for e in elements:
        state = get(e.key_group, e.key)
        state = e.partial if state is None else state.merge(e.partial)
        put(e.key_group, e.key, state)
        buffer.ctx.output.emit_batch(e.key, state, [(now, e.records or 1)])
