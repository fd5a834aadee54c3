"""What Spark reports of each micro-batch (``StreamingQueryProgress``), as plain rows.

One :class:`BatchProgress` per micro-batch that read rows: its id, rows, duration and phases,
the source offsets it read, and its stateful operator's figures -- state rows total and updated,
commit time, memory, and the RocksDB state store's own custom metrics (gets, puts, commit
latencies). Progress events of idle triggers (no rows) are left out.

Example::

    >>> p = BatchProgress(batch_id=3, rows=500, duration_ms=120, start_offset=1000,
    ...                   end_offset=1500)
    >>> p.rows_per_second
    4166.666666666667
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BatchProgress", "batch_progress", "progress_rows", "source_offset"]

#: RocksDB custom metrics kept per batch (Spark's names).
ROCKSDB_METRICS = (
    "rocksdbGetCount",
    "rocksdbPutCount",
    "rocksdbCommitFlushLatency",
    "rocksdbCommitCompactLatency",
    "rocksdbCommitCheckpointLatency",
    "rocksdbCommitFileSyncLatencyMs",
    "rocksdbChangeLogWriterCommitLatencyMs",
    "rocksdbPinnedBlocksMemoryUsage",
    "rocksdbSstFileSize",
)


@dataclass
class BatchProgress:
    """One micro-batch as Spark reported it."""

    batch_id: int
    rows: int
    duration_ms: int
    start_offset: int
    end_offset: int
    timestamp: str = ""
    durations_ms: dict[str, int] = field(default_factory=dict)
    state_rows_total: int = 0
    state_rows_updated: int = 0
    state_commit_ms: int = 0
    state_memory_bytes: int = 0
    state_partitions: int = 0
    rocksdb: dict[str, int] = field(default_factory=dict)
    source_end: dict[str, Any] = field(default_factory=dict)

    @property
    def rows_per_second(self) -> float | None:
        return self.rows * 1000 / self.duration_ms if self.duration_ms else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _parsed(value) -> dict[str, Any]:
    parsed = json.loads(value) if isinstance(value, str) else value
    return dict(parsed) if parsed else {}


def source_offset(value) -> int:
    """A source offset (``'{"offset": 500}'``, or ``None``/``'null'`` before the first: 0)."""
    parsed = _parsed(value)
    return int(parsed["offset"]) if parsed else 0


def batch_progress(progress) -> BatchProgress:
    """A :class:`BatchProgress` from pyspark's ``StreamingQueryProgress`` (one source)."""
    source = progress.sources[0]
    state = progress.stateOperators[0] if progress.stateOperators else None
    custom = dict(state.customMetrics) if state is not None else {}
    return BatchProgress(
        batch_id=int(progress.batchId),
        rows=int(progress.numInputRows),
        duration_ms=int(progress.batchDuration),
        start_offset=source_offset(source.startOffset),
        end_offset=source_offset(source.endOffset),
        timestamp=str(progress.timestamp),
        durations_ms={k: int(v) for k, v in dict(progress.durationMs).items()},
        state_rows_total=int(state.numRowsTotal) if state else 0,
        state_rows_updated=int(state.numRowsUpdated) if state else 0,
        state_commit_ms=int(state.commitTimeMs) if state else 0,
        state_memory_bytes=int(state.memoryUsedBytes) if state else 0,
        state_partitions=int(state.numShufflePartitions) if state else 0,
        rocksdb={k: int(custom[k]) for k in ROCKSDB_METRICS if k in custom},
        source_end=_parsed(source.endOffset),
    )


def progress_rows(progresses) -> list[BatchProgress]:
    """The micro-batches that read rows, by batch id (idle triggers and repeats dropped)."""
    batches: dict[int, BatchProgress] = {}
    for progress in progresses:
        if int(progress.numInputRows) > 0:
            batch = batch_progress(progress)
            batches[batch.batch_id] = batch
    return [batches[b] for b in sorted(batches)]
