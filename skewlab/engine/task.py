"""The subtask loop: the body of one Spark task, replaying its partition through an operator.

For every Arrow batch of its partition the loop

1. sets aside the ``metrics`` rows of an upstream stage (they travel on to the driver);
2. checks that every record belongs to this subtask (routing is exact, or the run fails);
3. hands the operator the columns it asked for, in slices -- one slice when the source is
   unpaced; with a paced source (``JobConfig.source_rate``), slices of about 1 ms of records,
   each released at ``start + seq / rate``, firing timers that fall due while it waits;
4. fires the processing-time timers that are due before each slice.

After the last batch it calls ``finish`` and ``close``, and yields the final results or the
records for the next stage, then its metrics. Time spent inside the operator (``process``,
``on_timer``, ``finish``) is summed into ``operator_ns``; the cyclic garbage collector is off
meanwhile (operators make no reference cycles, and its full passes over millions of short-lived
states would only add noise to the timings; reference counting still frees).

Example::

    >>> next(_slices(10, None, None, 0))        # unpaced: one slice
    (0, 10, None)
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from skewlab.engine.config import JobConfig
from skewlab.engine.memory import TracedPeak
from skewlab.engine.operator import Operator, OperatorContext
from skewlab.engine.routing import KEY_GROUP, java_type_of_arrow, key_groups_of
from skewlab.engine.stage import (
    StageSpec,
    arrow_schema,
    metrics_batch,
    record_batch,
    result_batch,
    split_metrics_rows,
)
from skewlab.state.key_groups import compute_operator_index_for_key_group

__all__ = ["run_subtask"]

_PACING_SLICE_SECONDS = 0.001


def run_subtask(stage: StageSpec, job: JobConfig, batches: Iterator, subtask: int | None = None):
    """Replay one partition (``batches`` of Arrow records) through ``stage``'s operator chain;
    yield its output rows as Arrow batches. ``subtask`` defaults to the Spark task's partition.
    """
    if subtask is None:
        from pyspark import TaskContext

        subtask = TaskContext.get().partitionId()
    ctx = OperatorContext(stage, job, subtask)
    schema = arrow_schema(stage.key_type)
    operator = stage.operator(ctx)
    ctx.metrics.inputs = sorted(
        {*operator.columns, *operator.numpy_columns, *operator.arrow_columns}
    )
    rate = job.source_rate if stage.source else None
    start_ns = time.time_ns()
    passthrough: list = []
    with _cyclic_gc_off(), TracedPeak(job.trace_memory) as traced:
        try:
            for batch in batches:
                batch = split_metrics_rows(batch, schema, passthrough)
                if batch.num_rows:
                    _replay_batch(operator, ctx, batch, rate, start_ns)
            _timed(ctx, operator.finish)
        finally:
            ctx.metrics.state = operator.close()
    ctx.output.flush_latencies()
    ctx.metrics.latency = ctx.output.histogram.to_list()
    ctx.metrics.peak_memory_bytes = traced.peak
    yield from passthrough
    yield from _output_batches(ctx, schema)
    yield metrics_batch(schema, ctx.metrics)


@contextmanager
def _cyclic_gc_off():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _replay_batch(operator: Operator, ctx: OperatorContext, batch, rate, start_ns: int) -> None:
    """One Arrow batch through the operator, in slices, with timers and pacing."""
    n = batch.num_rows
    cols, groups = _columns(batch, operator, ctx)
    _check_routing(groups, ctx.subtask, ctx.job)
    ctx.metrics.records_in += n
    seqs = batch.column("seq").to_numpy() if rate is not None else None
    for lo, hi, release in _slices(n, seqs, rate, start_ns):
        part = cols if (lo, hi) == (0, n) else {k: v[lo:hi] for k, v in cols.items()}
        if release is not None:
            _wait_until(operator, ctx, int(release[0]))
        began = time.perf_counter_ns()
        _fire_due_timers(operator, ctx)
        operator.process(part, hi - lo, release)
        ctx.metrics.operator_ns += time.perf_counter_ns() - began


def _check_routing(groups: np.ndarray, subtask: int, job: JobConfig) -> None:
    """Every record's key group belongs to this subtask (Flink's operator index of it)."""
    groups = groups.astype(np.int64)
    ops = np.where(
        groups < 0,  # a null key: operator 0, where it is rejected
        0,
        compute_operator_index_for_key_group(job.max_parallelism, job.parallelism, groups),
    )
    if (ops != subtask).any():
        raise RuntimeError(
            f"routing error: subtask {subtask} received records of operator "
            f"{sorted(set(ops.tolist()) - {subtask})[:5]}"
        )


def _columns(batch, operator: Operator, ctx: OperatorContext) -> tuple[dict[str, Any], Any]:
    """The columns the operator asked for, as Python lists, numpy arrays or Arrow arrays, and
    each record's key group: the column Spark computed where it routed by it
    (:func:`~skewlab.engine.routing.key_groups_in_jvm`), else computed here from the keys --
    integer keys straight from their Arrow buffer, string keys (and keys with nulls) from the
    Python list the operator asked for, if it did -- and handed over in the form asked for."""
    from_spark = KEY_GROUP in batch.schema.names
    skip = set() if from_spark else {KEY_GROUP}  # computed below, not read
    cols: dict[str, Any] = {
        c: batch.column(c).to_pylist() for c in operator.columns if c not in skip
    }
    cols |= {
        c: batch.column(c).to_numpy(zero_copy_only=False)
        for c in operator.numpy_columns
        if c not in skip
    }
    cols |= {c: batch.column(c) for c in operator.arrow_columns if c not in skip}
    if from_spark:
        return cols, batch.column(KEY_GROUP).to_numpy(zero_copy_only=False)
    column = batch.column(ctx.stage.key_col)
    java_type = java_type_of_arrow(column.type)
    if java_type != "String" and not column.null_count:
        keys = column.to_numpy()
    else:
        keys = cols.get(ctx.stage.key_col)
        keys = keys if isinstance(keys, list) else column.to_pylist()
    groups = key_groups_of(keys, java_type, ctx.job.max_parallelism)
    if KEY_GROUP in operator.columns:
        cols[KEY_GROUP] = groups.tolist()
    elif KEY_GROUP in operator.numpy_columns:
        cols[KEY_GROUP] = groups
    elif KEY_GROUP in operator.arrow_columns:
        import pyarrow as pa

        cols[KEY_GROUP] = pa.array(groups)
    return cols, groups


def _slices(n: int, seqs: np.ndarray | None, rate: float | None, start_ns: int):
    """Split a batch into slices handed to the operator; with a source rate, their release times.

    Unpaced: one slice. Paced: slices of about 1 ms of records, released at
    ``start + seq / rate`` (the source emits record ``seq`` at that moment).
    """
    if rate is None or seqs is None:
        yield 0, n, None
        return
    step = max(1, int(rate * _PACING_SLICE_SECONDS))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        yield lo, hi, start_ns + (seqs[lo:hi] * (1e9 / rate)).astype(np.int64)


def _wait_until(operator: Operator, ctx: OperatorContext, release_ns: int) -> None:
    """Sleep until the source releases the next slice, firing timers that fall due meanwhile."""
    while True:
        now = time.time_ns()
        if now >= release_ns:
            return
        timer = ctx.timers.next_timer_ns()
        if timer is not None and timer <= release_ns:
            if timer > now:
                time.sleep((timer - now) / 1e9)
            began = time.perf_counter_ns()
            _fire_due_timers(operator, ctx)
            ctx.metrics.operator_ns += time.perf_counter_ns() - began
        else:
            time.sleep((release_ns - now) / 1e9)
            return


def _fire_due_timers(operator: Operator, ctx: OperatorContext) -> None:
    for timestamp in ctx.timers.pop_due(time.time_ns()):
        operator.on_timer(timestamp)


def _timed(ctx: OperatorContext, call) -> None:
    began = time.perf_counter_ns()
    call()
    ctx.metrics.operator_ns += time.perf_counter_ns() - began


def _output_batches(ctx: OperatorContext, schema) -> Iterator:
    """The final stage's results, or the records for the next stage."""
    output = ctx.output
    if output.final and output.results:
        dumps = output.serializer.dumps
        yield result_batch(
            schema, list(output.results), [dumps(v) for v in output.results.values()]
        )
    elif output.forward_keys:
        yield record_batch(
            schema,
            output.forward_keys,
            output.forward_values,
            output.forward_arrivals,
            output.forward_seqs,
        )
