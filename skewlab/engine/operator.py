"""The operator contract: what an operator chain of one subtask implements, and what it sees.

An :class:`Operator` gets its partition's records in slices, in arrival order, and does the
per-record (or per-flush) work a Flink operator would. It sees its subtask through an
:class:`OperatorContext`: the job's configuration, its subtask index and key-group range, the
:class:`~skewlab.engine.output.Output` it emits into, a :class:`TimerService` for processing-time
timers, and the subtask's metrics. Its own settings (a buffer size, a state backend) are
constructor arguments: a stage's operator factory is ``functools.partial(SomeOperator, ...)``.

==================  ==========================================================================
``process``         a slice of ``n`` records: ``cols`` by name (Python lists, or numpy / Arrow
                    arrays for the columns named in ``numpy_columns`` / ``arrow_columns``), and
                    with a paced source their release times (else ``None``)
``on_timer``        a processing-time timer registered with ``ctx.timers`` has fired
``finish``          end of (bounded) input: emit whatever is still held
``snapshot_state``  write its state into a savepoint or a checkpoint
``initialize_state`` restore its state before the first record (rescaled, or a checkpoint)
``close``           release resources; return the state backend's access counters
==================  ==========================================================================

Example::

    >>> from skewlab.engine.config import JobConfig
    >>> from skewlab.engine.stage import StageSpec
    >>> class Count(Operator):
    ...     columns = ("word",)
    ...     def __init__(self, ctx):
    ...         super().__init__(ctx); self.n = 0
    ...     def process(self, cols, n, arrivals):
    ...         self.n += n
    >>> stage = StageSpec(name="1:count", key_col="word", operator=Count, final=True,
    ...                   serializer=None)
    >>> ctx = OperatorContext(stage, JobConfig(parallelism=2).resolved(2), subtask=1)
    >>> op = stage.operator(ctx); op.process({"word": ["a", "b"]}, 2, None); op.n
    2
    >>> ctx.key_group_range
    KeyGroupRange(start_key_group=64, end_key_group=127)
"""

from __future__ import annotations

import heapq
import time
from typing import TYPE_CHECKING, Any

from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import SubtaskMetrics
from skewlab.engine.output import Output
from skewlab.errors import SkewlabInputError
from skewlab.state.api import KeyedStateBackend
from skewlab.state.state_backend import StateBackend

if TYPE_CHECKING:
    import numpy as np

    from skewlab.engine.stage import StageSpec

__all__ = ["IntervalTrigger", "Operator", "OperatorContext", "TimerService"]


class TimerService:
    """Processing-time timers of one subtask (Flink's ``TimerService``), in ``time.time_ns()``
    nanoseconds. An operator registers; the task loop fires the due ones in time order.

    Example::

        >>> timers = TimerService()
        >>> timers.register_processing_time_timer(20); timers.register_processing_time_timer(10)
        >>> timers.next_timer_ns(), timers.pop_due(15), timers.next_timer_ns()
        (10, [10], 20)
    """

    def __init__(self) -> None:
        self._timers: list[int] = []

    @staticmethod
    def current_processing_time() -> int:
        """Now, in nanoseconds since the epoch."""
        return time.time_ns()

    def register_processing_time_timer(self, time_ns: int) -> None:
        """Fire :meth:`Operator.on_timer` at ``time_ns`` (or as soon after as the loop can)."""
        heapq.heappush(self._timers, int(time_ns))

    def next_timer_ns(self) -> int | None:
        """When the earliest pending timer is due, or ``None``."""
        return self._timers[0] if self._timers else None

    def pop_due(self, now_ns: int) -> list[int]:
        """Remove and return the timers due at ``now_ns``, earliest first."""
        due = []
        while self._timers and self._timers[0] <= now_ns:
            due.append(heapq.heappop(self._timers))
        return due


class IntervalTrigger:
    """A processing-time timer every ``interval_ns`` (``0``: never), on a :class:`TimerService`:
    registered by :meth:`start` (once), and after each firing registered again an interval after
    the one that fired -- or an interval from now, when the loop fell behind (seed 000's buffer
    does it this way).

    Example::

        >>> timers = TimerService(); trigger = IntervalTrigger(timers, 10)
        >>> trigger.start(now_ns=100); trigger.start(now_ns=105); timers.pop_due(200)
        [110]
        >>> trigger.fired(110, now_ns=115); timers.pop_due(200)
        [120]
        >>> trigger.fired(120, now_ns=300); timers.pop_due(400)     # fell behind: from now
        [310]
    """

    def __init__(self, timers: TimerService, interval_ns: int) -> None:
        self.timers = timers
        self.interval_ns = int(interval_ns)
        self.started = False

    def start(self, now_ns: int | None = None) -> None:
        """Register the first timer, an interval from now (nothing after the first call)."""
        if self.started or self.interval_ns <= 0:
            return
        now = self.timers.current_processing_time() if now_ns is None else now_ns
        self.timers.register_processing_time_timer(now + self.interval_ns)
        self.started = True

    def fired(self, timestamp_ns: int, now_ns: int | None = None) -> None:
        """The timer for ``timestamp_ns`` fired: register the next one."""
        now = self.timers.current_processing_time() if now_ns is None else now_ns
        following = timestamp_ns + self.interval_ns
        self.timers.register_processing_time_timer(
            following if following > now else now + self.interval_ns
        )


class OperatorContext:
    """What an operator chain sees of its subtask. See the module doc.

    ``key_group_range`` is the key groups this subtask owns (Flink's
    ``computeKeyGroupRangeForOperatorIndex``); :meth:`create_keyed_state_backend` makes the
    subtask's keyed state for exactly those.
    """

    def __init__(self, stage: StageSpec, job: JobConfig, subtask: int) -> None:
        self.stage = stage
        self.job = job
        self.subtask = subtask
        self.key_group_range = job.key_group_range(subtask)
        self.metrics = SubtaskMetrics(stage=stage.name, subtask=subtask)
        self.output = Output(
            final=stage.final,
            serializer=stage.serializer,
            metrics=self.metrics,
            output_map=stage.output_map,
        )
        self.timers = TimerService()
        self._last_seq: dict[Any, int] = {}

    def create_keyed_state_backend(self, state_backend: StateBackend) -> KeyedStateBackend:
        """This subtask's keyed state backend, for its key groups.

        Accesses are counted per key when the job asks for it (``track_keys``), or when the job
        prices disk accesses (``disk_profile``) and this backend's state is on disk.
        """
        job = self.job
        track = job.track_keys or (job.disk_profile is not None and state_backend.on_disk)
        return state_backend.create_keyed_state_backend(self.key_group_range, track_keys=track)

    def check_order(self, key: Any, seq: int) -> None:
        """Count a violation when ``key``'s records reach this operator out of ``seq`` order."""
        last = self._last_seq.get(key, -1)
        if seq < last:
            self.metrics.order_violations += 1
        else:
            self._last_seq[key] = seq


class Operator:
    """An operator chain of one subtask. Subclasses implement :meth:`process`; see the
    module doc for the rest of the contract.

    ``columns`` names the input columns the operator needs as Python lists, ``numpy_columns``
    those it wants as numpy arrays, ``arrow_columns`` those it wants as Arrow arrays.
    """

    columns: tuple[str, ...] = ()
    numpy_columns: tuple[str, ...] = ()
    arrow_columns: tuple[str, ...] = ()

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx

    def process(self, cols: dict[str, Any], n: int, arrivals: np.ndarray | None) -> None:
        raise NotImplementedError

    def on_timer(self, timestamp_ns: int) -> None:  # noqa: B027 -- an optional hook
        """A timer registered for ``timestamp_ns`` has fired."""

    def finish(self) -> None:  # noqa: B027 -- an optional hook
        """End of (bounded) input: emit whatever is still held."""

    def snapshot_state(self, context: Any) -> None:  # noqa: B027 -- an optional hook
        """Write this chain's state into a savepoint or checkpoint (Flink's ``snapshotState``;
        ``context``: :class:`~skewlab.engine.checkpointing.StateSnapshotContext`). Stateless
        operators write nothing."""

    def initialize_state(self, context: Any) -> None:
        """Restore this chain's state before its first record (Flink's ``initializeState``;
        ``context``: :class:`~skewlab.engine.checkpointing.StateInitializationContext`). Called
        only when there is state to restore; an operator without state refuses it."""
        raise SkewlabInputError(
            f"operator {self.ctx.stage.name!r} ({type(self).__name__}) keeps no state and cannot "
            "restore any: the savepoint is another job's"
        )

    def close(self) -> dict[str, Any]:
        """Release resources; return the state access stats as a dict ({} if stateless)."""
        return {}
