"""Running a job's stages on Spark: route, shuffle, sort, replay -- then collect.

:func:`run_stage` applies one keyed stage to a DataFrame, lazily: Flink's key groups are
computed (:mod:`skewlab.engine.routing`), records are shuffled so that partition *i* holds
operator *i*'s key groups, sorted within the partition in the stage's order, and replayed by
:func:`skewlab.engine.task.run_subtask` inside ``mapInArrow``. At parallelism 1 nothing is
shuffled: the one subtask reads the input's partitions in turn and computes the key groups
itself, unless the stage's order sorts by them; unless the runtime reads ``seq`` (a paced
source, savepoints, checkpoints), each partition is sorted into arrival order before they are
joined, a sort Spark drops where it knows the partition is in order already. Stages chain: a
stage's output is the next stage's input. :func:`collect_stage` runs the job and brings back
the final stage's results and every subtask's metrics.

Example::

    >>> from skewlab.engine import JobConfig
    >>> job = JobConfig(parallelism=2).resolved(2)
    >>> out = collect_stage(run_stage(views, spark, stage, job), StatsSerializer)  # doctest: +SKIP
    >>> sorted(out.results)[:2], len(out.metrics)                                  # doctest: +SKIP
    (['tweet-0', 'tweet-1'], 2)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from skewlab.engine.checkpointing import prepare_stage
from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import SubtaskMetrics
from skewlab.engine.routing import (
    KEY_GROUP,
    identity_partition,
    key_groups_in_jvm,
    with_key_groups,
)
from skewlab.engine.stage import KIND_METRICS, KIND_RESULT, StageSpec, decode_rows, spark_schema
from skewlab.engine.task import run_subtask

__all__ = ["StageOutput", "collect_stage", "python_columns", "run_stage"]


def run_stage(df, spark, stage: StageSpec, job: JobConfig):
    """Lazily apply one keyed stage to ``df`` under a resolved ``job``; returns the stage's
    output DataFrame (rows of kind ``record``, ``result`` and ``metrics``, see
    :mod:`skewlab.engine.stage`)."""
    if job.parallelism is None or job.max_parallelism is None:
        raise ValueError("run_stage needs a resolved JobConfig (JobConfig.resolved)")
    df, stage = prepare_stage(df, stage, job)  # savepoints and checkpoints, if the job has any
    routed = df
    if key_groups_in_jvm(stage, job):
        routed = with_key_groups(df, stage.key_col, job.max_parallelism, job.parallelism)
    columns = python_columns(stage, job, routed.columns)
    sort_first = _sorted_before_coalesce(stage, job)
    if sort_first:
        # one subtask reads the input's partitions in turn, each in arrival order (as a source
        # subtask reads its splits); Spark drops this sort where it already knows each
        # partition is in ``seq`` order, as for skewlab's generated inputs
        routed = routed.sortWithinPartitions(*stage.order_by)
    routed = identity_partition(routed, spark, job.parallelism)
    if stage.order_by and not sort_first:
        routed = routed.sortWithinPartitions(*stage.order_by)
    routed = routed.select(*columns)

    def subtask(batches):
        return run_subtask(stage, job, batches)

    return routed.mapInArrow(subtask, spark_schema(stage.key_type))


def _sorted_before_coalesce(stage: StageSpec, job: JobConfig) -> bool:
    """At parallelism 1, records in arrival order, where the runtime does not read ``seq``:
    the sort by ``seq`` goes before the partitions are joined into the one subtask's, so that
    Spark can drop it where each input partition is already in order. The rule is the job's,
    not the operator's, so both sides of a comparison sort alike."""
    return (
        job.parallelism == 1 and stage.order_by == ("seq",) and not _runtime_reads_seq(stage, job)
    )


def _runtime_reads_seq(stage: StageSpec, job: JobConfig) -> bool:
    """A paced source's release times and a savepoint's or checkpoint's position are read from
    ``seq``: they need the records in global arrival order."""
    return (job.source_rate is not None and stage.source) or job.recovery is not None


def python_columns(stage: StageSpec, job: JobConfig, columns) -> list[str]:
    """The columns a stage hands its Python subtasks (of ``columns``, the routed input's): the
    key, its key group where Spark computed it (else the subtask computes it from the key),
    the columns its operator reads (``stage.input_columns``), the source position ``seq``
    where the runtime itself reads it (a paced source's release times, a savepoint's or
    checkpoint's position), and an upstream stage's metrics rows. Nothing else crosses to
    Python: every column costs each record its Arrow conversion. The operator index stays in
    the JVM (the subtask checks routing from the key group).

    Example::

        >>> from skewlab.engine.stage import StageSpec
        >>> count = StageSpec(name="1:count", key_col="word", operator=None, final=True,
        ...                   serializer=None)
        >>> python_columns(count, JobConfig(parallelism=2).resolved(2), ["word", "seq", KEY_GROUP])
        ['word', '_key_group']
        >>> python_columns(count, JobConfig(parallelism=1).resolved(1), ["word", "seq"])
        ['word']
        >>> python_columns(count, JobConfig(parallelism=1, source_rate=1e3).resolved(1), [])
        ['word', 'seq']
    """
    keep = [stage.key_col, *([KEY_GROUP] if KEY_GROUP in columns else []), *stage.input_columns]
    if _runtime_reads_seq(stage, job):
        keep.append("seq")
    if "kind" in columns:
        keep += ["kind", "metrics"]
    return list(dict.fromkeys(keep))


@dataclass
class StageOutput:
    """What the driver collects from a final stage."""

    results: dict[Any, Any]
    metrics: list[SubtaskMetrics]
    wall_seconds: float


def collect_stage(out_df, serializer) -> StageOutput:
    """Run the job and collect final results (deserialised) and every subtask's metrics.

    ``wall_seconds`` is the job's wall time, from submitting it to the last row collected.
    """
    started = time.perf_counter()
    table = out_df.toArrow()
    wall = time.perf_counter() - started
    results: dict[Any, Any] = {}
    metrics: list[SubtaskMetrics] = []
    for kind, key, value in decode_rows(table, serializer):
        if kind == KIND_RESULT:
            if key in results:
                raise RuntimeError(f"key {key!r} was emitted as final by two subtasks")
            results[key] = value
        elif kind == KIND_METRICS:
            metrics.append(value)
    metrics.sort(key=lambda m: (m.stage, m.subtask))
    return StageOutput(results=results, metrics=metrics, wall_seconds=wall)
