"""``streaming``: the views through Spark Structured Streaming itself, keyed by tweet, with the
state in Spark's RocksDB state store -- three variants over the same stream.

The view set is written as a source log and read as a bounded, rate-controlled stream
(:mod:`skewlab.inputs.stream_source`): at most ``max_rows_per_trigger`` rows per micro-batch,
a processing-time trigger every ``trigger_interval_ms``, arriving at ``JobConfig.source_rate``
rows/s when paced (a backlog otherwise). Spark maps each view to its register entries
(``xxhash64``, bit arithmetic: the same upstream map for every variant), then:

=============  ==============================================================================
``per-record``  ``groupBy(tweet).transformWithStateInPandas(PerRecordStats)``: per row one
                ``ValueState`` read, merge, write, and a running ``TweetStats`` emitted
``per-batch``   the same with ``PerBatchStats``: all of a key's rows in the micro-batch folded
                into one state read, one write and one emission (the micro-batch is the buffer)
``builtin``     Spark's own streaming aggregation of the registers: ``max(rank)`` per (tweet,
                sketch, register), partial aggregate map-side, then the state store (JVM only)
=============  ==============================================================================

The state partitions are the job's parallelism (``--parallelism``), set as
``spark.sql.shuffle.partitions`` when the query first starts; Spark keeps that number in the
checkpoint. Every micro-batch goes to an idempotent sink by batch id. A run ends with two
digests, both equal to the reference when the query has read the whole source: one from the
sink (each tweet's latest registers) and one, independently, from the final state read with
``spark.read.format("statestore")``. Records in (Spark's input rows) = processed + rejected
(a null tweet id is counted by the operator, never folded).

What a run measures, beside the digests: per micro-batch its rows, duration and phases, the
state store's figures (rows updated, commit time, memory, RocksDB gets/puts and commit
latencies); per micro-batch and Spark partition the rows and the time inside the processor
(``subtasks``; per-record and per-batch only); end-to-end latency per row, from its arrival at
the source to the delivery of the micro-batch that emits it. Throughput is the rows processed
over the micro-batches' summed durations (Spark's ``processedRowsPerSecond`` over the run).

With ``checkpoint_dir`` the query's directory is kept: running again with the same directory
resumes the query from its checkpoint. ``stop_after_batches`` stops it mid-stream, cleanly: the
source hands out that many micro-batches of rows and the query is stopped once it idles, with no
micro-batch in flight (what Spark's offline repartition requires). A directory of another
query, strategy, variant or view set is refused before the query starts.

Example::

    >>> Streaming(variant="per-record", trigger_interval_ms=50).parameters()
    {'variant': 'per-record', 'trigger_interval_ms': 50, 'max_rows_per_trigger': 1000}
    >>> Streaming(variant="per-key")
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: unknown variant (--variant) 'per-key': use one of per-record, per-batch, builtin
    >>> result, states = run_strategy(views, Streaming(variant="per-batch"))  # doctest: +SKIP
"""  # noqa: E501

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.hll import spark_register_columns
from skewlab.aggregates.reference import states_from_register_maxima
from skewlab.aggregates.stats_state import StatsState
from skewlab.engine.histogram import LatencyHistogram
from skewlab.engine.metrics import RunResult
from skewlab.engine.streaming.checkpoint import (
    QueryIdentity,
    claim_query_directory,
    committed_offset,
)
from skewlab.engine.streaming.provider import SHUFFLE_PARTITIONS_KEY
from skewlab.engine.streaming.query import QueryRun, run_query
from skewlab.engine.streaming.sink import BatchSink
from skewlab.engine.streaming.state_store import read_state
from skewlab.errors import SkewlabInputError
from skewlab.inputs.stream_source import (
    SourceLog,
    arrival_ns,
    offset_clock,
    read_views_stream,
    views_fingerprint,
    write_source_log,
)
from skewlab.operators.streaming_stats import (
    OUTPUT_SCHEMA,
    STATE_NAME,
    PerBatchStats,
    PerRecordStats,
)
from skewlab.strategies.parameters import StrategyParameters, parameter
from skewlab.validation import check_choice, check_number, check_whole

__all__ = ["BUILTIN_SCHEMA", "VARIANTS", "Streaming", "hot_partitions"]

#: The three ways the same stream is aggregated.
VARIANTS = ("per-record", "per-batch", "builtin")
#: What the built-in aggregation emits per updated register (update mode).
BUILTIN_SCHEMA = "tweet_id string, sketch int, idx int, rank tinyint, records bigint"
_PROCESSORS = {"per-record": PerRecordStats, "per-batch": PerBatchStats}


@dataclass(frozen=True, kw_only=True)
class Streaming(StrategyParameters):
    """Spark Structured Streaming on its RocksDB state store: per-record or per-micro-batch
    ``transformWithStateInPandas``, or Spark's own streaming aggregation.

    See the module doc for what a run measures, and its checkpoint directory."""

    name: ClassVar[str] = "streaming"
    resumable: ClassVar[bool] = False
    periodic_checkpoints: ClassVar[bool] = False
    modelled_as: ClassVar[str | None] = None

    variant: str = parameter("per-batch", "how the stream is aggregated", choices=VARIANTS)
    trigger_interval_ms: float = parameter(100.0, "the processing-time trigger, in ms")
    max_rows_per_trigger: int | None = parameter(1000, "rows per micro-batch at most")
    checkpoint_dir: str | None = parameter(
        None, "keep the query's directory here; the same directory resumes it"
    )
    stop_after_batches: int | None = parameter(
        None, "stop the query after N micro-batches (resume with --checkpoint-dir)"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("variant (--variant)", self.variant, VARIANTS)
        check_number(
            "trigger_interval_ms (--trigger-interval-ms)", self.trigger_interval_ms, above=0
        )
        if self.max_rows_per_trigger is not None:
            check_whole("max_rows_per_trigger (--max-rows-per-trigger)",
                        self.max_rows_per_trigger, 1)  # fmt: skip
        if self.stop_after_batches is not None:
            check_whole("stop_after_batches (--stop-after-batches)", self.stop_after_batches, 1)
            if self.max_rows_per_trigger is None:
                raise SkewlabInputError(
                    "stop_after_batches (--stop-after-batches) needs max_rows_per_trigger "
                    "(--max-rows-per-trigger): a micro-batch is that many rows"
                )
        if self.checkpoint_dir is not None:
            path = Path(self.checkpoint_dir)
            if path.exists() and not path.is_dir():
                raise SkewlabInputError(
                    f"checkpoint_dir (--checkpoint-dir) {self.checkpoint_dir!r} is a file, "
                    "not a directory"
                )

    def parameters(self) -> dict[str, Any]:
        """What a result row records (the checkpoint directory and the stop only when set)."""
        values = super().parameters()
        for run_control in ("checkpoint_dir", "stop_after_batches"):
            if values.get(run_control) is None:
                values.pop(run_control)
        return values

    def identity(self, views) -> QueryIdentity:
        """Whose checkpoint this is: strategy, variant, precision and the view set."""
        return QueryIdentity(self.name, self.variant, self.precision, views_fingerprint(views))

    def run(self, spark, views, job):
        identity = self.identity(views)
        root = self.checkpoint_dir or tempfile.mkdtemp(prefix="skewlab-streaming-")
        query_dir, resumed = claim_query_directory(root, identity)
        try:
            return self._run(spark, views, job, query_dir, resumed, identity)
        finally:
            if self.checkpoint_dir is None:
                shutil.rmtree(root, ignore_errors=True)

    def _run(self, spark, views, job, query_dir, resumed, identity):
        if (query_dir.source / "_source_log.json").exists():
            log = SourceLog.open(query_dir.source)
        else:
            log = write_source_log(
                views, query_dir.source, segment_rows=self.max_rows_per_trigger or 10_000,
                fingerprint=identity.views,
            )  # fmt: skip
        end = log.rows
        if self.stop_after_batches is not None:  # stop cleanly after that many micro-batches
            start = committed_offset(query_dir.checkpoint) if resumed else 0
            end = min(log.rows, start + self.stop_after_batches * self.max_rows_per_trigger)
        stream = read_views_stream(
            spark, log, max_rows_per_trigger=self.max_rows_per_trigger,
            rows_per_second=job.source_rate, end_offset=end,
        )  # fmt: skip
        out, schema = self.pipeline(stream)
        sink = BatchSink(query_dir.sink)
        run = run_query(
            out, sink=sink, checkpoint=query_dir.checkpoint,
            trigger_interval_ms=self.trigger_interval_ms, target_offset=end,
            settings={SHUFFLE_PARTITIONS_KEY: str(job.parallelism)},
        )  # fmt: skip
        if self.variant == "builtin":  # small rows: a register per row, no arrays
            emitted = sink.read(spark, schema).toPandas()
            results, counts = _builtin_results(emitted, self.precision)
            state = _builtin_state(spark, query_dir.checkpoint, self.precision)
        else:
            emitted, latest = _processor_emissions(sink.read(spark, schema))
            results, counts = _processor_results(emitted, latest)
            state = _processor_state(spark, query_dir.checkpoint)
        this_run = emitted[emitted["batch_id"].isin(run.committed)]
        latency = _latency(run, sink.deliveries(), job.source_rate)
        return self._result(job, run, log, results, state, counts, this_run, latency, resumed,
                            query_dir), results  # fmt: skip

    def pipeline(self, stream):
        """The variant's stateful query over the stream, and what it emits (a DDL schema)."""
        from pyspark.sql import functions as F

        v_idx, v_rank = spark_register_columns(F.xxhash64("view_id"), self.precision)
        u_idx, u_rank = spark_register_columns(F.xxhash64("user_id"), self.precision)
        if self.variant == "builtin":
            entries = F.array(
                F.struct(F.lit(0).alias("sketch"), v_idx.alias("idx"), v_rank.alias("rank")),
                F.struct(F.lit(1).alias("sketch"), u_idx.alias("idx"), u_rank.alias("rank")),
            )
            out = (
                stream.select("tweet_id", F.inline(entries))
                .groupBy("tweet_id", "sketch", "idx")
                .agg(F.max("rank").alias("rank"), F.count(F.lit(1)).alias("records"))
            )
            return out, BUILTIN_SCHEMA
        mapped = stream.select(
            "tweet_id",
            v_idx.alias("v_idx"), v_rank.alias("v_rank"),
            u_idx.alias("u_idx"), u_rank.alias("u_rank"),
        )  # fmt: skip
        processor = _PROCESSORS[self.variant](precision=self.precision)
        out = mapped.groupBy("tweet_id").transformWithStateInPandas(
            processor, OUTPUT_SCHEMA, "Update", "None"
        )
        return out, OUTPUT_SCHEMA

    def _result(self, job, run: QueryRun, log, results, state, counts, this_run, latency,
                resumed, query_dir) -> RunResult:  # fmt: skip
        processed, rejected = counts
        query_in = run.end_offset
        run_processed = int(this_run["records"].sum()) if "partition" in this_run else None
        if run_processed is None:  # builtin: its counts are running totals per register
            run_processed = run.records_in
        subtasks = _subtasks(this_run) if "partition" in this_run else []
        operator_seconds = (
            sum(s["operator_seconds"] for s in subtasks) if subtasks else run.batch_seconds
        )
        batch_seconds = run.batch_seconds
        rocks = [b.rocksdb for b in run.batches]
        state_digest = result_digest(state)
        sink_digest = result_digest(results)
        return RunResult(
            strategy=self.name,
            parameters=job.parameters() | self.parameters(),
            records_in=query_in,
            records_processed=processed,
            records_rejected=rejected,
            records_out=int(len(this_run[this_run["tweet_id"].notna()])),
            keys=len(results),
            wall_seconds=run.wall_seconds,
            operator_seconds=operator_seconds,
            result_digest=sink_digest,
            operator_records_per_second=run_processed / operator_seconds
            if operator_seconds
            else None,
            e2e_records_per_second=run.records_in / run.wall_seconds if run.wall_seconds else None,
            state_reads=sum(r.get("rocksdbGetCount", 0) for r in rocks),
            state_writes=sum(r.get("rocksdbPutCount", 0) for r in rocks),
            latency_p50_ms=latency.quantile_ms(0.5),
            latency_p99_ms=latency.quantile_ms(0.99),
            subtasks=subtasks,
            extra={
                "variant": self.variant,
                "records_per_second": run.records_in / batch_seconds if batch_seconds else None,
                "batch_seconds": batch_seconds,
                "run_records_in": run.records_in,
                "batches": [b.to_dict() for b in run.batches],
                "state_digest": state_digest,
                "state_keys": len(state),
                "state_partitions": max((b.state_partitions for b in run.batches), default=None),
                "state_rows_updated": sum(b.state_rows_updated for b in run.batches),
                "state_commit_ms": sum(b.state_commit_ms for b in run.batches),
                "state_memory_bytes": max((b.state_memory_bytes for b in run.batches), default=0),
                "resumed": resumed,
                "stopped_early": run.end_offset < log.rows,
                "source_rows": log.rows,
                "arrival": "paced" if job.source_rate else "backlog",
                "checkpoint_dir": str(query_dir.root) if self.checkpoint_dir else None,
                "query_id": run.query_id,
            },
        )


def _processor_emissions(sink_rows):
    """The sink's rows without their register arrays (every emission: counts, partitions,
    timings), and each tweet's latest emission's registers, picked in Spark.

    Only the latest arrays reach the driver: the per-record variant emits a running
    ``TweetStats`` per row, and 100,000 rows of two register arrays each would not fit in
    the driver's result memory. A tweet's emissions in one micro-batch sit in one file (one
    Spark partition holds the key) in the order the processor wrote them, so the latest is
    the highest (``batch_id``, position in the read).
    """
    from pyspark.sql import functions as F

    rows = sink_rows.withColumn("_position", F.monotonically_increasing_id())
    latest = (
        rows.where(F.col("views").isNotNull())
        .groupBy("tweet_id")
        .agg(F.max_by(F.struct("views", "viewers"), F.struct("batch_id", "_position")).alias("s"))
        .select("tweet_id", "s.views", "s.viewers")
        .toPandas()
    )
    return rows.drop("views", "viewers", "_position").toPandas(), latest


def _processor_results(emitted, latest):
    """Each tweet's latest registers in the sink (``latest``: one row per tweet, from
    :func:`_processor_emissions`), and the query's (processed, rejected) from every emission."""
    results = {
        str(t): StatsState.from_registers(
            str(t), np.frombuffer(v, dtype=np.int8).copy(), np.frombuffer(u, dtype=np.int8).copy()
        )
        for t, v, u in zip(latest["tweet_id"], latest["views"], latest["viewers"], strict=True)
    }
    return results, (int(emitted["records"].sum()), int(emitted["rejected"].sum()))


def _builtin_results(emitted, precision: int):
    """Each register's latest value in the sink, as states; (processed, rejected) from the
    running counts of each tweet's view-sketch registers."""
    latest = emitted.sort_values("batch_id", kind="stable").drop_duplicates(
        ["tweet_id", "sketch", "idx"], keep="last"
    )
    keyed = latest[latest["tweet_id"].notna()]
    views_side = latest["sketch"] == 0
    processed = int(latest.loc[views_side & latest["tweet_id"].notna(), "records"].sum())
    rejected = int(latest.loc[views_side & latest["tweet_id"].isna(), "records"].sum())
    results = (
        states_from_register_maxima(
            keyed["tweet_id"].to_numpy(), keyed["sketch"].to_numpy(), keyed["idx"].to_numpy(),
            keyed["rank"].to_numpy(), precision,
        )
        if len(keyed)
        else {}
    )  # fmt: skip
    return results, (processed, rejected)


def _processor_state(spark, checkpoint):
    """Every tweet's registers as the state store holds them (``statestore`` data source)."""
    rows = (
        read_state(spark, checkpoint, state_var=STATE_NAME)
        .selectExpr("key.tweet_id AS tweet_id", "value.views AS views", "value.viewers AS viewers")
        .toPandas()
    )
    rows = rows[rows["tweet_id"].notna()]
    return {
        str(t): StatsState.from_registers(
            str(t), np.frombuffer(v, dtype=np.int8).copy(), np.frombuffer(u, dtype=np.int8).copy()
        )
        for t, v, u in zip(rows["tweet_id"], rows["views"], rows["viewers"], strict=True)
    }


def _builtin_state(spark, checkpoint, precision: int):
    """The built-in aggregation's state read back: one row per (tweet, sketch, register)."""
    rows = (
        read_state(spark, checkpoint)
        .selectExpr(
            "key.tweet_id AS tweet_id",
            "key.sketch AS sketch",
            "key.idx AS idx",
            "value.max AS rank",
        )  # fmt: skip
        .where("tweet_id IS NOT NULL")
        .toPandas()
    )
    if not len(rows):
        return {}
    return states_from_register_maxima(
        rows["tweet_id"].to_numpy(), rows["sketch"].to_numpy(), rows["idx"].to_numpy(),
        rows["rank"].to_numpy(), precision,
    )  # fmt: skip


def _subtasks(this_run) -> list[dict[str, Any]]:
    """Rows and processor time per micro-batch and Spark partition."""
    grouped = (
        this_run.groupby(["batch_id", "partition"], as_index=False)[
            ["records", "rejected", "operator_ns"]
        ]
        .sum()
        .sort_values(["batch_id", "partition"])
    )
    return [
        {
            "batch": int(r.batch_id),
            "partition": int(r.partition),
            "records": int(r.records + r.rejected),
            "operator_seconds": r.operator_ns / 1e9,
        }
        for r in grouped.itertuples()
    ]


def _latency(run: QueryRun, deliveries: dict[int, int], rate) -> LatencyHistogram:
    """Per row: delivery of its micro-batch minus its arrival at the source (by the clock the
    source's offsets carry)."""
    histogram = LatencyHistogram()
    for batch in run.batches:
        delivered = deliveries.get(batch.batch_id)
        clock = offset_clock(batch.source_end)
        if delivered is None or clock is None or batch.end_offset <= batch.start_offset:
            continue
        offsets = np.arange(batch.start_offset, batch.end_offset, dtype=np.int64)
        arrived = arrival_ns(offsets, clock[0], clock[1], rate)
        histogram.record_many(np.maximum(delivered - arrived, 0))
    return histogram


def hot_partitions(result: RunResult) -> list[dict[str, Any]]:
    """Per micro-batch: the partition with the most processor time, its share of the batch's
    processor time and rows, and the batch's duration (per-record and per-batch runs).

    Example::

        >>> r = RunResult("streaming", {}, 4, 4, 0, 4, 1, 1.0, 1.0, "d", subtasks=[
        ...     {"batch": 0, "partition": 0, "records": 3, "operator_seconds": 0.3},
        ...     {"batch": 0, "partition": 1, "records": 1, "operator_seconds": 0.1}],
        ...     extra={"batches": [{"batch_id": 0, "duration_ms": 500}]})
        >>> hot_partitions(r)[0]["partition"], round(hot_partitions(r)[0]["time_share"], 2)
        (0, 0.75)
    """
    durations = {b["batch_id"]: b["duration_ms"] for b in result.extra.get("batches", [])}
    by_batch: dict[int, list[dict[str, Any]]] = {}
    for row in result.subtasks:
        by_batch.setdefault(row["batch"], []).append(row)
    out = []
    for batch, rows in sorted(by_batch.items()):
        hot = max(rows, key=lambda r: r["operator_seconds"])
        total_time = sum(r["operator_seconds"] for r in rows)
        total_rows = sum(r["records"] for r in rows)
        out.append(
            {
                "batch": batch,
                "partition": hot["partition"],
                "operator_seconds": hot["operator_seconds"],
                "time_share": hot["operator_seconds"] / total_time if total_time else None,
                "row_share": hot["records"] / total_rows if total_rows else None,
                "batch_ms": durations.get(batch),
            }
        )
    return out
