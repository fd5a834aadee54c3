"""The views as a bounded, rate-controlled stream for Spark Structured Streaming.

A view set is written once, in arrival order (``seq``), as a **source log**: a directory of
Arrow IPC *segments* of ``segment_rows`` rows each and a manifest, the way a Kafka topic
partition holds its records at offsets 0, 1, 2, ... A Python streaming data source
(:class:`ViewsStreamSource`, registered as ``skewlab_views`` with pyspark's DataSource API)
reads it:

* its **offset** is the number of rows handed out so far (``{"offset": n}``);
* each micro-batch reads at most ``max_rows_per_trigger`` rows: the source's default read
  limit is Spark's ``ReadMaxRows`` (admission control, pyspark 4.2+);
* the source's clock starts when the query first asks it for data (its first
  ``latestOffset``), at offset ``first``; with ``rows_per_second`` a row is not visible before
  it **arrives**: the row at offset ``o`` arrives at ``start_ns + (o - first) * 1e9 /
  rows_per_second`` (:func:`arrival_ns`). Without a rate the whole log is there when the clock
  starts: a backlog, read as fast as the engine goes.

Every offset the source hands out also carries its clock (``start_ns``, ``first``), so the
driver computes, afterwards, when each row of a micro-batch arrived (:func:`offset_clock`): the
end-to-end latency of a row is the delivery of its micro-batch minus its arrival.

The log must be on a file system every executor reads (true for ``local[*]`` and
``local-cluster``; a shared one on a real cluster, as for the checkpoint itself).

Example::

    >>> arrival_ns([0, 1, 2], start_ns=1_000, first_offset=0, rows_per_second=1_000.0).tolist()
    [1000, 1001000, 2001000]
    >>> log = write_source_log(views, "/tmp/views-log")                        # doctest: +SKIP
    >>> stream = read_views_stream(spark, log, max_rows_per_trigger=1_000)     # doctest: +SKIP
    >>> offset_clock({"offset": 900, "start_ns": 5, "first": 0})
    (5, 0)
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from skewlab.errors import SkewlabInputError
from skewlab.validation import check_number, check_whole

__all__ = [
    "SOURCE_FORMAT",
    "SOURCE_SCHEMA",
    "SourceLog",
    "ViewsStreamSource",
    "arrival_ns",
    "offset_clock",
    "read_views_stream",
    "views_fingerprint",
    "write_source_log",
]

#: The data source's short name (``spark.readStream.format(SOURCE_FORMAT)``).
SOURCE_FORMAT = "skewlab_views"
#: What the stream's rows hold.
SOURCE_SCHEMA = "seq bigint, view_id string, user_id string, tweet_id string"
_COLUMNS = ("seq", "view_id", "user_id", "tweet_id")
MANIFEST = "_source_log.json"
#: Rows per segment file unless told.
DEFAULT_SEGMENT_ROWS = 10_000


def arrival_ns(offsets, start_ns: int, first_offset: int, rows_per_second: float | None):
    """When the rows at ``offsets`` arrive (ns since the epoch): paced at ``rows_per_second``
    from ``start_ns`` on, the query's ``first_offset`` arriving first; all at ``start_ns``
    without a rate (a backlog).

    Example::

        >>> arrival_ns([5, 6], start_ns=0, first_offset=5, rows_per_second=2.0).tolist()
        [0, 500000000]
        >>> arrival_ns([5, 6], start_ns=7, first_offset=5, rows_per_second=None).tolist()
        [7, 7]
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    if rows_per_second is None:
        return np.full(offsets.shape, int(start_ns), dtype=np.int64)
    step = 1e9 / float(rows_per_second)
    return int(start_ns) + np.round((offsets - int(first_offset)) * step).astype(np.int64)


def offset_clock(offset: dict) -> tuple[int, int] | None:
    """The arrival clock ``(start_ns, first offset)`` an offset of the source carries."""
    if not offset or "start_ns" not in offset:
        return None
    return int(offset["start_ns"]), int(offset["first"])


def views_fingerprint(views) -> str:
    """An order-free fingerprint of a view set, computed by Spark: the row count and the XOR
    of every row's ``xxhash64(view_id, user_id, tweet_id)``. A query directory remembers it, so
    a resumed query is refused other views.

    Example::

        >>> views_fingerprint(views)                        # doctest: +SKIP
        '6000:5c2f0e3b7a1d9e44'
    """
    from pyspark.sql import functions as F

    row = views.agg(
        F.count(F.lit(1)).alias("n"),
        F.bit_xor(F.xxhash64("view_id", "user_id", "tweet_id")).alias("x"),
    ).first()
    return f"{int(row.n)}:{(int(row.x or 0)) & (2**64 - 1):016x}"


@dataclass(frozen=True)
class SourceLog:
    """A written source log: ``rows`` rows in segments of ``segment_rows`` under ``directory``.

    Example::

        >>> SourceLog("/tmp/log", rows=25, segment_rows=10).segments_for(8, 21)
        [0, 10, 20]
    """

    directory: str
    rows: int
    segment_rows: int
    fingerprint: str = ""

    @classmethod
    def open(cls, directory: str | Path) -> SourceLog:
        """The log written under ``directory`` (its manifest read)."""
        manifest = Path(directory) / MANIFEST
        if not manifest.exists():
            raise SkewlabInputError(f"no source log at {str(directory)!r} (no {MANIFEST})")
        meta = json.loads(manifest.read_text())
        return cls(str(directory), int(meta["rows"]), int(meta["segment_rows"]),
                   str(meta.get("fingerprint", "")))  # fmt: skip

    def segment_path(self, first: int) -> Path:
        return Path(self.directory) / f"segment-{first:012d}.arrow"

    def segments_for(self, start: int, end: int) -> list[int]:
        """First offsets of the segments holding offsets ``[start, end)``."""
        if end <= start:
            return []
        first = start - start % self.segment_rows
        return list(range(first, end, self.segment_rows))

    def read(self, start: int, end: int):
        """Rows ``[start, end)`` as a pyarrow Table (segments memory-mapped). A missing segment
        is an error naming it and its offsets."""
        import pyarrow as pa
        import pyarrow.ipc as ipc

        pieces = []
        for first in self.segments_for(start, end):
            path = self.segment_path(first)
            if not path.exists():
                raise FileNotFoundError(
                    f"source log {self.directory} has no segment {path.name} (offsets {first}.."
                    f"{first + self.segment_rows - 1}): it was removed after the log was written"
                )
            with pa.memory_map(str(path)) as source:
                table = ipc.open_file(source).read_all()
            lo = max(start, first) - first
            hi = min(end, first + table.num_rows) - first
            pieces.append(table.slice(lo, hi - lo))
        return pa.concat_tables(pieces) if pieces else None


def write_source_log(
    views, directory: str | Path, *, segment_rows: int = DEFAULT_SEGMENT_ROWS, fingerprint=None
) -> SourceLog:
    """Write ``views`` in arrival order (``seq``; the DataFrame's order without one) as a source
    log under ``directory`` (made; must not hold a log already).

    Example::

        >>> log = write_source_log(views, "/tmp/views-log", segment_rows=1_000)  # doctest: +SKIP
        >>> log.rows == views.count()                                            # doctest: +SKIP
        True
    """
    import pyarrow as pa
    import pyarrow.ipc as ipc

    check_whole("segment_rows", segment_rows, 1)
    directory = Path(directory)
    if (directory / MANIFEST).exists():
        raise SkewlabInputError(f"{str(directory)!r} already holds a source log")
    directory.mkdir(parents=True, exist_ok=True)
    ordered = views.orderBy("seq") if "seq" in views.columns else views
    columns = [c for c in _COLUMNS if c in views.columns]
    table = ordered.select(*columns).toArrow()
    if "seq" not in columns:
        table = table.add_column(0, "seq", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    table = table.select(list(_COLUMNS))
    # every column nullable, as the source's schema says (Spark checks the batches it reads)
    table = table.cast(pa.schema([pa.field(f.name, f.type, nullable=True) for f in table.schema]))
    log = SourceLog(str(directory), table.num_rows, segment_rows, fingerprint or "")
    for first in range(0, table.num_rows, segment_rows):
        piece = table.slice(first, segment_rows)
        path = str(log.segment_path(first))
        with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, piece.schema) as writer:
            writer.write_table(piece)
    meta = {"rows": log.rows, "segment_rows": segment_rows, "fingerprint": log.fingerprint}
    (directory / MANIFEST).write_text(json.dumps(meta) + "\n")
    return log


class OffsetRange(InputPartition):
    """One read task: offsets ``[start, end)`` of the log at ``directory``."""

    def __init__(self, directory: str, start: int, end: int) -> None:
        super().__init__((start, end))
        self.directory, self.start, self.end = directory, start, end


class ViewsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are rows; see the module doc for the read limit and the arrival clock."""

    def __init__(self, options) -> None:
        self.log = SourceLog.open(options["path"])
        self.max_rows = int(options.get("maxRowsPerTrigger", 0))
        rate = float(options.get("rowsPerSecond", 0))
        self.rate = rate if rate > 0 else None
        self.start_ns: int | None = None
        self.read_partitions = max(1, int(options.get("readPartitions", 2)))
        end = int(options.get("endOffset", 0))
        self.end = min(end, self.log.rows) if end > 0 else self.log.rows
        self.first: int | None = None
        self.target: int | None = None

    def initialOffset(self) -> dict:
        return {"offset": 0}

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.max_rows) if self.max_rows else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._arrived(time.time_ns())

    def _arrived(self, now_ns: int) -> int:
        """Rows arrived by ``now_ns``: the whole log, or the paced clock's share of it."""
        if self.rate is None or self.first is None or self.start_ns is None:
            return self.end
        elapsed = now_ns - self.start_ns
        if elapsed < 0:
            return self.first
        return min(self.end, self.first + math.floor(elapsed * self.rate / 1e9) + 1)

    def latestOffset(self, start: dict, limit) -> dict:
        begin = int(start["offset"])
        now = time.time_ns()
        if self.first is None:  # the clock starts when the query first asks
            self.first, self.start_ns = begin, now
        end = self._arrived(now)
        if self.target is not None:
            end = min(end, self.target)
        if isinstance(limit, ReadMaxRows):
            end = min(end, begin + limit.max_rows)
        return {"offset": max(begin, end), "start_ns": self.start_ns, "first": self.first}

    def partitions(self, start: dict, end: dict):
        begin, stop = int(start["offset"]), int(end["offset"])
        if stop <= begin:
            return []
        step = -(-(stop - begin) // self.read_partitions)
        return [
            OffsetRange(self.log.directory, a, min(stop, a + step))
            for a in range(begin, stop, step)
        ]

    def read(self, partition):
        table = SourceLog.open(partition.directory).read(partition.start, partition.end)
        if table is not None:
            yield from table.to_batches()


class ViewsStreamSource(DataSource):
    """``spark.readStream.format("skewlab_views").option("path", LOG)``: the views of a source
    log; options ``maxRowsPerTrigger``, ``rowsPerSecond``, ``readPartitions``, ``endOffset``
    (the log read as if it ended there)."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_FORMAT

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema):
        return ViewsStreamReader(self.options)


def read_views_stream(
    spark,
    log: SourceLog,
    *,
    max_rows_per_trigger: int | None = None,
    rows_per_second: float | None = None,
    read_partitions: int | None = None,
    end_offset: int | None = None,
):
    """A streaming DataFrame of the log's views (:data:`SOURCE_SCHEMA`).

    ``max_rows_per_trigger``: rows per micro-batch at most (None: all that have arrived);
    ``rows_per_second``: the arrival rate (None: a backlog); ``read_partitions``: read tasks per
    micro-batch (default Spark's default parallelism); ``end_offset``: hand out no row past
    this offset, as if the log ended there (a query then idles there and stops cleanly).

    Example::

        >>> stream = read_views_stream(spark, log, max_rows_per_trigger=500)  # doctest: +SKIP
        >>> stream.isStreaming                                               # doctest: +SKIP
        True
    """
    if max_rows_per_trigger is not None:
        check_whole("max_rows_per_trigger (--max-rows-per-trigger)", max_rows_per_trigger, 1)
    if rows_per_second is not None:
        check_number("rows_per_second (--rows-per-second)", rows_per_second, above=0)
    spark.dataSource.register(ViewsStreamSource)
    reader = (
        spark.readStream.format(SOURCE_FORMAT)
        .option("path", log.directory)
        .option("maxRowsPerTrigger", int(max_rows_per_trigger or 0))
        .option("rowsPerSecond", float(rows_per_second or 0))
        .option("readPartitions", int(read_partitions or spark.sparkContext.defaultParallelism))
        .option("endOffset", int(end_offset or 0))
    )
    return reader.load()
