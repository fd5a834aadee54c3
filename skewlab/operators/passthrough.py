"""Operators that do nothing but pass their records on, each under its job's emission contract --
the measure of what the engine costs around an operator.

* :class:`PassThrough` -- seed 003's count job (below);
* :class:`ViewPassThrough` -- seed 000's view job: the columns the naive reduce reads, per
  record one emission into the final stage's sink (its latency recorded), no state.

Per record it emits ``(key, 1)`` as the FLIP-325 count job emits ``(key, count)``: the record's
key and value go into the emission lists, and each input batch's emissions reach an
:class:`~skewlab.aggregates.count.EmissionSink` as one Arrow record batch (a discarding sink
that keeps how many rows it read and the sum of their values). It keeps no state. At the end it
emits one result per subtask, ``(records emitted, sum of their values)``, so a run checks that
every record was emitted once.

Example::

    >>> from skewlab.engine.config import JobConfig
    >>> from skewlab.engine.operator import OperatorContext
    >>> from skewlab.engine.stage import StageSpec
    >>> stage = StageSpec(name="1:pass", key_col="word", operator=PassThrough, final=True,
    ...                   serializer=None)
    >>> op = PassThrough(OperatorContext(stage, JobConfig(parallelism=1).resolved(1), 0))
    >>> op.process({"word": [3, 4, 3]}, 3, None); op.sink.records, op.sink.count_sum
    (3, 3)
"""

from __future__ import annotations

import time
from typing import Any

from skewlab.aggregates.count import EmissionSink
from skewlab.aggregates.stats_state import SINGLE_VIEW_COLUMNS
from skewlab.engine.operator import Operator, OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.inputs.wordcount import WORD

__all__ = ["PassThrough", "ViewPassThrough"]


class PassThrough(Operator):
    """Emit every record's ``(key, 1)`` into the count job's emission sink; keep no state."""

    def __init__(self, ctx: OperatorContext, *, key_col: str = WORD) -> None:
        super().__init__(ctx)
        self.key_col = key_col
        self.columns = (key_col,)
        self.sink = EmissionSink()

    def process(self, cols: dict[str, Any], n: int, arrivals) -> None:
        keys: list = []
        values: list = []
        append_key, append_value = keys.append, values.append
        for key in cols[self.key_col]:
            append_key(key)
            append_value(1)
        self.sink.write_lists(keys, values)

    def finish(self) -> None:
        key: Any = self.ctx.subtask
        if self.ctx.stage.key_type == "string":
            key = str(key)
        self.ctx.output.emit_batch(key, (self.sink.records, self.sink.count_sum), ())

    def close(self) -> dict[str, Any]:
        return {"records_emitted": self.sink.records}


class ViewPassThrough(Operator):
    """Seed 000's view job with nothing in the operator: the columns
    :class:`~skewlab.operators.reduce.KeyedReduce` reads are handed over as Python objects, and
    per record one emission -- ``(tweet, seq)`` -- goes into the final stage's sink with its
    arrival time, as the naive reduce emits each updated state. No state is read or written;
    null keys are rejected and counted, as the reduce does.

    Example::

        >>> from skewlab.engine.config import JobConfig
        >>> from skewlab.engine.stage import StageSpec
        >>> stage = StageSpec(name="1:pass", key_col="tweet_id", operator=ViewPassThrough,
        ...                   final=True, serializer=None)
        >>> op = ViewPassThrough(OperatorContext(stage, JobConfig(parallelism=1).resolved(1), 0))
        >>> op.process({"tweet_id": ["a", "b", "a", None], "seq": [0, 1, 2, 3]}, 4, None)
        >>> op.ctx.output.results, op.ctx.metrics.records_rejected
        ({'a': 2, 'b': 1}, 1)
    """

    columns = ("tweet_id", *SINGLE_VIEW_COLUMNS, KEY_GROUP, "seq")

    def process(self, cols: dict[str, Any], n: int, arrivals) -> None:
        keys, seqs = cols["tweet_id"], cols["seq"]
        emit, clock = self.ctx.output.emit, time.time_ns
        rejected = 0
        for i in range(n):
            key = keys[i]
            if key is None:
                rejected += 1
                continue
            emit(key, seqs[i], clock() if arrivals is None else int(arrivals[i]), seqs[i])
        self.ctx.metrics.records_rejected += rejected
