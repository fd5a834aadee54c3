"""Running one Structured Streaming query to the end of its source, and what it reports.

:func:`run_query` starts a streaming DataFrame into a sink (``foreachBatch``) on a
processing-time trigger of ``trigger_interval_ms``, with its checkpoint at ``checkpoint``, and
drives it until the source's committed offset reaches ``target_offset`` -- the end of a bounded
source, or the end a source was told to hand out rows to (a stop mid-stream: the query is then
idle between micro-batches, so the stop interrupts none, and it resumes from its checkpoint when
started again) -- then stops it and collects every micro-batch's progress
(:mod:`skewlab.engine.streaming.progress`).

A query that fails mid-stream raises :class:`StreamingQueryFailed` naming the micro-batch that
did not commit; the checkpoint is left as Spark left it, so the next start resumes there.

Example::

    >>> run = run_query(stream, sink=BatchSink("/tmp/s"), checkpoint="/tmp/c",
    ...                 trigger_interval_ms=100, target_offset=6_000)      # doctest: +SKIP
    >>> run.batches[-1].end_offset                                            # doctest: +SKIP
    6000
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skewlab.engine.streaming.checkpoint import committed_batches, uncommitted_batch
from skewlab.engine.streaming.failure import StreamingQueryFailed, failure_cause
from skewlab.engine.streaming.progress import BatchProgress, progress_rows, source_offset
from skewlab.engine.streaming.provider import STREAMING_SETTINGS, session_settings

__all__ = ["QueryRun", "StreamingQueryFailed", "failure_cause", "run_query"]


@dataclass
class QueryRun:
    """One run of a query: its micro-batches, and when it started and stopped."""

    query_id: str
    run_id: str
    batches: list[BatchProgress]
    started_ns: int
    finished_ns: int
    first_offset: int
    end_offset: int
    committed: list[int] = field(default_factory=list)

    @property
    def wall_seconds(self) -> float:
        return (self.finished_ns - self.started_ns) / 1e9

    @property
    def records_in(self) -> int:
        return sum(b.rows for b in self.batches)

    @property
    def batch_seconds(self) -> float:
        """Time the micro-batches took, summed (Spark's ``batchDuration``)."""
        return sum(b.duration_ms for b in self.batches) / 1000


def _end_offset(progress) -> int:
    if progress is None or not progress["sources"]:
        return -1
    end = progress["sources"][0].get("endOffset")
    return source_offset(end) if end not in (None, "null") else -1


def run_query(
    stream,
    *,
    sink,
    checkpoint: str | Path,
    trigger_interval_ms: float,
    target_offset: int,
    settings: Mapping[str, str | None] | None = None,
    output_mode: str = "update",
    timeout_seconds: float = 1800.0,
    query_name: str | None = None,
) -> QueryRun:
    """Run ``stream`` into ``sink`` until the source reaches ``target_offset`` (see the module
    doc). ``settings`` are session settings the query starts with, on top of
    :data:`~skewlab.engine.streaming.provider.STREAMING_SETTINGS`."""
    spark = stream.sparkSession
    writer = (
        stream.writeStream.foreachBatch(sink)
        .outputMode(output_mode)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime=f"{max(1, round(trigger_interval_ms))} milliseconds")
    )
    if query_name:
        writer = writer.queryName(query_name)
    committed_before = set(committed_batches(checkpoint))
    started = time.time_ns()
    with session_settings(spark, {**STREAMING_SETTINGS, **(settings or {})}):
        query = writer.start()
    deadline = time.monotonic() + timeout_seconds
    try:
        while query.isActive:
            if _end_offset(query.lastProgress) >= target_offset:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"streaming query did not finish in {timeout_seconds:g} s")
            time.sleep(0.02)
        error = query.exception()
    finally:
        query.stop()
    finished = time.time_ns()
    if error is not None:
        failed = uncommitted_batch(checkpoint)
        raise StreamingQueryFailed(failed, str(checkpoint), failure_cause(str(error)))
    batches = progress_rows(query.recentProgress)
    committed = [b for b in committed_batches(checkpoint) if b not in committed_before]
    batches = [b for b in batches if b.batch_id in set(committed)]
    return QueryRun(
        query_id=str(query.id),
        run_id=str(query.runId),
        batches=batches,
        started_ns=started,
        finished_ns=finished,
        first_offset=batches[0].start_offset if batches else 0,
        end_offset=batches[-1].end_offset if batches else 0,
        committed=committed,
    )
