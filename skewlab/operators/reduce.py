"""The keyed reduces of seed 000's strategies, over the views and ``StatsState``.

Each record arrives as its single-view state in register form (the upstream map
:func:`~skewlab.aggregates.stats_state.with_single_view_states`, computed by Spark before
``keyBy``, as the seed's ``.map(StatsState.fromView(_))`` runs before its ``keyBy``).

* :class:`KeyedReduce` -- ``keyBy(tweet) -> reduce``: per record read state, merge, write, emit
  (naive, cached, and salting's first stage);
* :class:`PartialsReduce` -- the ``reduce`` after an exchange: merges serialised partials;
* :class:`SortedReduce` -- FLIP-140: sorted input, single-key state, one emission per key.

Example::

    >>> from functools import partial
    >>> from skewlab.state import StateBackend
    >>> factory = partial(KeyedReduce, state_backend=StateBackend("rocksdb"), precision=10)
"""

from __future__ import annotations

import time

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.aggregates.stats_state import SINGLE_VIEW_COLUMNS, StatsSerializer, StatsState
from skewlab.engine.operator import OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.operators.stateful import StatefulOperator
from skewlab.state.state_backend import StateBackend

__all__ = ["KeyedReduce", "PartialsReduce", "SortedReduce", "reduce_each"]


class KeyedReduce(StatefulOperator):
    """``keyBy(key) -> reduce(plus)``: one state read, merge and write per record, then emit.

    The emitted key is ``emit_key_col``'s value (salting emits the *unsalted* tweet id: the
    seed's ``map`` that strips the salt is chained here).
    """

    def __init__(
        self,
        ctx: OperatorContext,
        state_backend: StateBackend,
        precision: int = DEFAULT_PRECISION,
        key_col: str = "tweet_id",
        emit_key_col: str = "",
    ) -> None:
        super().__init__(ctx, state_backend)
        self.precision = precision
        self.key_col = key_col
        self.emit_key_col = emit_key_col or key_col
        self.columns = tuple(
            dict.fromkeys((key_col, self.emit_key_col, *SINGLE_VIEW_COLUMNS, KEY_GROUP, "seq"))
        )

    def process(self, cols, n, arrivals) -> None:
        reduce_each(
            self,
            cols[self.key_col],
            cols[self.emit_key_col],
            cols[KEY_GROUP],
            cols["seq"],
            [cols[c] for c in SINGLE_VIEW_COLUMNS],
            arrivals,
        )


def reduce_each(
    operator: StatefulOperator, keys, emit_keys, groups, seqs, registers, arrivals
) -> None:
    """The seed's ``keyBy -> reduce(plus)`` over records in columns: per record read the key's
    state, merge the record's single view (``registers``: its view register and rank, its user
    register and rank), write, emit under ``emit_keys[i]``. A record whose key is ``None`` is
    rejected and counted. Its arrival is ``arrivals[i]`` (``None``: now). The naive reduce and
    the hot-key buffer's cold records run this same loop.

    Example::

        >>> reduce_each(naive, ["t1"], ["t1"], [17], [0], [[5], [3], [9], [1]], None)  # doctest: +SKIP
    """  # noqa: E501
    view_regs, view_ranks, user_regs, user_ranks = registers
    get, put, emit = operator.state.get, operator.state.put, operator.ctx.output.emit
    of_view, precision = StatsState.of_view, operator.precision
    check = operator.ctx.check_order if operator.ctx.job.check_order else None
    clock = time.time_ns
    rejected = 0
    for i in range(len(keys)):
        key = keys[i]
        if key is None:
            rejected += 1
            continue
        arrival = clock() if arrivals is None else int(arrivals[i])
        out_key = emit_keys[i]
        one = of_view(out_key, view_regs[i], view_ranks[i], user_regs[i], user_ranks[i], precision)
        state = get(groups[i], key)
        state = one if state is None else state.merge(one)
        put(groups[i], key, state)
        if check is not None:
            check(out_key, seqs[i])
        emit(out_key, state, arrival, seqs[i])
    operator.ctx.metrics.records_rejected += rejected


class PartialsReduce(StatefulOperator):
    """The ``reduce`` downstream of an exchange: merges serialised partial ``StatsState``s."""

    columns = ("key", "value", KEY_GROUP, "arrival_ns", "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, values, groups = cols["key"], cols["value"], cols[KEY_GROUP]
        arrived, seqs = cols["arrival_ns"], cols["seq"]
        get, put, emit = self.state.get, self.state.put, self.ctx.output.emit
        loads = StatsSerializer.loads
        check = self.ctx.check_order if self.ctx.job.check_order else None
        for i in range(n):
            key = keys[i]
            partial = loads(values[i])
            state = get(groups[i], key)
            state = partial if state is None else state.merge(partial)
            put(groups[i], key, state)
            if check is not None:
                check(key, seqs[i])
            emit(key, state, arrived[i], seqs[i])


class SortedReduce(StatefulOperator):
    """FLIP-140: input sorted by (key group, key); single-key state; one emission per key."""

    columns = ("tweet_id", *SINGLE_VIEW_COLUMNS, KEY_GROUP)

    def __init__(self, ctx: OperatorContext, precision: int = DEFAULT_PRECISION) -> None:
        super().__init__(ctx, StateBackend("single_key"))
        self.precision = precision
        self.current: str | None = None
        self.current_group = -1
        self.run_arrivals: list[tuple[int, int]] = []
        recovery = ctx.job.recovery
        #: finished keys' states, kept for a savepoint (only when the job stops with one)
        self.finished: list[tuple[int, str, StatsState]] | None = (
            [] if recovery is not None and recovery.stops else None
        )
        #: restored states by key, each seeding its key's run (``initialize_state``)
        self.restored: dict[str, tuple[int, StatsState]] = {}

    def process(self, cols, n, arrivals) -> None:
        keys, groups = cols["tweet_id"], cols[KEY_GROUP]
        view_regs, view_ranks, user_regs, user_ranks = (cols[c] for c in SINGLE_VIEW_COLUMNS)
        get, put = self.state.get, self.state.put
        of_view, precision = StatsState.of_view, self.precision
        clock = time.time_ns
        for i in range(n):
            key = keys[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            if key != self.current:
                self._emit_run()
                self.current, self.current_group = key, groups[i]
                if self.restored:
                    seed = self.restored.pop(key, None)
                    if seed is not None:
                        put(groups[i], key, seed[1])
            arrival = clock() if arrivals is None else int(arrivals[i])
            self.run_arrivals.append((arrival, 1))
            one = of_view(key, view_regs[i], view_ranks[i], user_regs[i], user_ranks[i], precision)
            state = get(groups[i], key)
            put(groups[i], key, one if state is None else state.merge(one))

    def _emit_run(self) -> None:
        if self.current is None:
            return
        state = self.state.get(self.current_group, self.current)
        self.ctx.output.emit_batch(self.current, state, self.run_arrivals)
        self.run_arrivals = []
        if self.finished is not None:
            self.finished.append((self.current_group, self.current, state))

    def finish(self) -> None:
        self._emit_run()
        self.current = None

    def snapshot_state(self, context) -> None:
        """The bounded input has ended: the last run ends, and every key's final state (with
        restored keys this job never saw) is written in key-group order -- the order the
        sorted input already has. Sorted input runs as a batch job: it takes no checkpoints."""
        if self.finished is None or context.kind != "savepoint":
            raise RuntimeError("sorted input takes savepoints at the end of its input only")
        self.finish()
        entries = self.finished + [(kg, key, state) for key, (kg, state) in self.restored.items()]
        writer = context.keyed_writer(self.state_name, StatsSerializer)
        for key_group, key, state in sorted(entries, key=lambda e: e[0]):
            writer.add(key_group, key, state)
        writer.close()

    def initialize_state(self, context) -> None:
        """Restored states wait for their key's run (a key the input never brings again keeps
        its state, and the sink already holds its result)."""
        for key_group, key, state in context.keyed_state(self.state_name, StatsSerializer):
            self.restored[key] = (key_group, state)
