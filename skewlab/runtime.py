"""The keyed runtime: Flink's record-at-a-time keyed model, executed inside Spark tasks.

Spark does distribution, shuffles, sorting (with spill), scheduling and retries; skewlab's
operators do exactly the per-record state work the seeds talk about:

1. every record gets its **key group**, Flink's way (``murmur(String.hashCode(key)) % maxP``),
   and the **operator index** that owns it (``key_group * p // maxP``);
2. records are shuffled so that partition *i* holds exactly the key groups of operator *i*
   (:func:`identity_partition`: a partition key chosen per operator index so that Spark's hash
   partitioning puts it on partition *i* -- Spark's hash of the index itself would not);
3. each partition replays its records in arrival order (``seq``) through an operator chain,
   with one state backend per subtask (files in the executor's local dirs, removed afterwards);
4. each subtask returns its emissions and its metrics; the driver folds them into a
   :class:`RunResult`.

A *stage* is one ``keyBy`` followed by operators (:func:`run_stage`); strategies compose stages
(salting uses two). Records with a null key are counted as rejected, never dropped silently:
``records_in == records_processed + records_rejected``.

Example::

    >>> from skewlab.runtime import RunConfig
    >>> from skewlab.strategies import run_strategy
    >>> result, states = run_strategy(views, RunConfig("buffered", parallelism=2))  # doctest: +SKIP
    >>> expected = skewlab.spark_reference_aggregate(views)  # doctest: +SKIP
    >>> result.result_digest == skewlab.result_digest(expected)  # doctest: +SKIP
    True
"""

from __future__ import annotations

import gc
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from skewlab.errors import SkewlabInputError
from skewlab.hll import DEFAULT_PRECISION
from skewlab.keygroups import (
    UPPER_BOUND_MAX_PARALLELISM,
    check_parallelism,
    compute_default_max_parallelism,
)
from skewlab.metrics import LatencyHistogram, PeakMemory

BUFFER_KINDS = ("vectorized", "preaggregate", "list")
NAIVE_BACKENDS = ("heap", "rocksdb", "cached")

# column names the runtime adds
KEY_GROUP = "_key_group"
OPERATOR = "_operator"
PARTITION_KEY = "_partition_key"

# the rows a stage emits: records for the next stage, final results, or a subtask's metrics
KIND_RECORD, KIND_RESULT, KIND_METRICS = "record", "result", "metrics"


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class RunConfig:
    """Everything a strategy run is parameterised by (validated by :func:`validate_config`).

    Attributes:
        strategy: ``naive``, ``salted``, ``buffered``, ``cached``, ``sorted`` or ``spark_sql``.
        parallelism: operator subtasks (default: Spark's default parallelism).
        max_parallelism: number of key groups (default: Flink's rule for ``parallelism``).
        backend: state backend of ``naive``: ``heap``, ``rocksdb`` or ``cached``.
        trigger_interval_ms: ``buffered``: flush the buffer at least this often (ms, >= 0;
            0 means no timer, count-triggered only).
        max_count: ``buffered``: flush when the buffer holds this many records (>= 1).
        buffer: ``buffered``: ``vectorized`` (Spark-computed hashes, numpy registers),
            ``preaggregate`` (one StatsState per key) or ``list`` (the seed's Vector per key).
        cache_entries: ``cached`` (and ``naive --backend cached``): LRU entries (>= 0).
        salt_buckets: ``salted``: sub-keys per key (>= 1).
        source_rate: replay at this many records/s (default: as fast as possible).
        precision: HLL register index bits.
        check_order: count per-key order violations at the final operator.
        track_keys: keep per-key state access counts (implied by ``latency_profile``).
        latency_profile: disk latency profile (:mod:`skewlab.latency`) under which the run's
            counted state reads and writes are turned into a modelled I/O time; ``None`` for
            none.
    """

    strategy: str = "naive"
    parallelism: int | None = None
    max_parallelism: int | None = None
    backend: str = "rocksdb"
    trigger_interval_ms: float = 100.0
    max_count: int = 1000
    buffer: str = "vectorized"
    cache_entries: int = 1000
    salt_buckets: int = 4
    source_rate: float | None = None
    precision: int = DEFAULT_PRECISION
    check_order: bool = False
    track_keys: bool = False
    latency_profile: str | None = "ebs-article"

    def resolved(self, default_parallelism: int) -> RunConfig:
        """This config with parallelism and max parallelism filled in (and validated)."""
        p = self.parallelism if self.parallelism is not None else max(1, default_parallelism)
        max_p = (
            self.max_parallelism
            if self.max_parallelism is not None
            else compute_default_max_parallelism(p)
        )
        resolved = replace(self, parallelism=p, max_parallelism=max_p)
        validate_config(resolved)
        return resolved

    def parameters(self) -> dict[str, Any]:
        """The parameters that matter for this strategy (what a result row records)."""
        common = {"parallelism": self.parallelism, "max_parallelism": self.max_parallelism}
        specific = {
            "naive": {"backend": self.backend}
            | ({"cache_entries": self.cache_entries} if self.backend == "cached" else {}),
            "cached": {"cache_entries": self.cache_entries},
            "buffered": {
                "buffer": self.buffer,
                "trigger_interval_ms": self.trigger_interval_ms,
                "max_count": self.max_count,
                "backend": self.backend,
            },
            "salted": {"salt_buckets": self.salt_buckets, "backend": self.backend},
            "sorted": {},
            "spark_sql": {},
        }.get(self.strategy, {})
        rate = {"source_rate": self.source_rate} if self.source_rate else {}
        return common | specific | rate

    @property
    def tracks_keys(self) -> bool:
        """Whether backends count accesses per key (for the latency model or on request)."""
        return self.track_keys or self.latency_profile is not None


def _is_whole(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def validate_config(config: RunConfig) -> None:
    """Raise :class:`SkewlabInputError` for the first thing wrong with ``config``.

    Example::

        >>> validate_config(RunConfig("buffered", max_count=0))
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: max_count (--max-count) must be a whole number >= 1, got 0
    """
    from skewlab.strategies import STRATEGIES

    if config.strategy not in STRATEGIES:
        raise SkewlabInputError(
            f"unknown strategy {config.strategy!r}: use one of {', '.join(STRATEGIES)}"
        )
    if config.backend not in NAIVE_BACKENDS:
        raise SkewlabInputError(
            f"unknown backend {config.backend!r}: use one of {', '.join(NAIVE_BACKENDS)}"
        )
    if config.buffer not in BUFFER_KINDS:
        raise SkewlabInputError(
            f"unknown buffer {config.buffer!r}: use one of {', '.join(BUFFER_KINDS)}"
        )
    for name, flag, value, low in (
        ("max_count", "--max-count", config.max_count, 1),
        ("cache_entries", "--cache-entries", config.cache_entries, 0),
        ("salt_buckets", "--salt-buckets", config.salt_buckets, 1),
    ):
        if not _is_whole(value) or value < low:
            raise SkewlabInputError(
                f"{name} ({flag}) must be a whole number >= {low}, got {value!r}"
            )
    interval = config.trigger_interval_ms
    if not isinstance(interval, int | float) or not math.isfinite(interval) or interval < 0:
        raise SkewlabInputError(
            f"trigger_interval_ms (--trigger-interval-ms) must be >= 0, got {interval!r}"
        )
    rate = config.source_rate
    if rate is not None and (
        not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0
    ):
        raise SkewlabInputError(f"source_rate (--source-rate) must be > 0 records/s, got {rate!r}")
    if config.latency_profile is not None:
        from skewlab.latency import load_profile

        load_profile(config.latency_profile)  # unknown names fail here, listing the known ones
    if not _is_whole(config.precision) or not 4 <= config.precision <= 16:
        raise SkewlabInputError(f"precision must be 4..16, got {config.precision!r}")
    if config.parallelism is not None or config.max_parallelism is not None:
        p, max_p = config.parallelism, config.max_parallelism
        if p is not None and (not _is_whole(p) or p < 1):
            raise SkewlabInputError(f"parallelism (--parallelism) must be >= 1, got {p!r}")
        if max_p is not None and (
            not _is_whole(max_p) or not 1 <= max_p <= UPPER_BOUND_MAX_PARALLELISM
        ):
            raise SkewlabInputError(
                f"max_parallelism (--max-parallelism) must be within Flink's bounds "
                f"1..{UPPER_BOUND_MAX_PARALLELISM}, got {max_p!r}"
            )
        if p is not None and max_p is not None:
            check_parallelism(p, max_p)


# --------------------------------------------------------------------------- results


@dataclass
class RunResult:
    """What one strategy run measured. Every chart is made from these.

    Throughput two ways: ``operator_records_per_second`` (records / time inside the operators,
    summed over subtasks -- what Flink's operator metrics show) and ``e2e_records_per_second``
    (records / job wall time, Spark's overhead included). ``None`` means "does not apply".
    """

    strategy: str
    parameters: dict[str, Any]
    records_in: int
    records_processed: int
    records_rejected: int
    records_out: int
    keys: int
    wall_seconds: float
    operator_seconds: float
    operator_records_per_second: float | None
    e2e_records_per_second: float | None
    state_reads: int | None
    state_writes: int | None
    bytes_serialized: int | None
    cache_hits: int | None
    cache_misses: int | None
    cache_hit_ratio: float | None
    buffer_flushes: int | None
    latency_p50_ms: float | None
    latency_p99_ms: float | None
    peak_memory_bytes: int | None
    order_violations: int | None
    result_digest: str
    latency_profile: str | None = None
    modelled_io_seconds: float | None = None
    modelled_records_per_second: float | None = None
    subtasks: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``subtasks`` and ``extra`` included)."""
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), default=_json_default)

    def format_table(self) -> str:
        """A two-column text table for the terminal."""
        rows = []
        for key, value in self.to_dict().items():
            if key in ("subtasks", "extra"):
                continue
            if key == "parameters":
                value = ", ".join(f"{k}={v}" for k, v in value.items())
            elif isinstance(value, float):
                value = f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
            elif isinstance(value, int):
                value = f"{value:,}"
            rows.append((key, "-" if value is None else str(value)))
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# --------------------------------------------------------------------------- subtask metrics


@dataclass
class SubtaskMetrics:
    """One subtask's counters (sent to the driver as JSON)."""

    stage: str
    subtask: int
    records_in: int = 0
    records_rejected: int = 0
    records_out: int = 0
    operator_ns: int = 0
    flushes: int = 0
    order_violations: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    latency: list[int] = field(default_factory=list)
    peak_memory_bytes: int = 0


def _sum_state(stats: list[dict[str, Any]], name: str) -> int:
    return int(sum(s.get(name) or 0 for s in stats))


def fold_metrics(
    strategy: str,
    parameters: dict[str, Any],
    metrics: list[SubtaskMetrics],
    *,
    keys: int,
    wall_seconds: float,
    digest: str,
    uses_state: bool = True,
    buffers: bool = False,
    latency_profile: str | None = None,
    check_order: bool = False,
) -> RunResult:
    """Fold every subtask's metrics (of every stage) into one :class:`RunResult`.

    With a ``latency_profile``, the per-key reads and writes of every stage become a modelled
    I/O time (:func:`skewlab.latency_model.modelled_io_seconds`): one key's accesses cannot
    overlap, and one subtask does its keys one after another; the busier bound wins.
    """
    first_stage = metrics[0].stage if metrics else ""
    final_stage = metrics[-1].stage if metrics else ""
    rejected = sum(m.records_rejected for m in metrics if m.stage == first_stage)
    records_in = sum(m.records_in for m in metrics if m.stage == first_stage)
    processed = records_in - rejected
    out = sum(m.records_out for m in metrics if m.stage == final_stage)
    operator_seconds = sum(m.operator_ns for m in metrics) / 1e9
    histogram = LatencyHistogram()
    for m in metrics:
        if m.stage == final_stage and m.latency:
            histogram.merge(LatencyHistogram.from_list(m.latency))
    states = [m.state for m in metrics if m.state]
    hits, misses = _sum_state(states, "cache_hits"), _sum_state(states, "cache_misses")
    cached = any(s.get("cache_hits") or s.get("cache_misses") for s in states)
    subtasks = [
        {
            "stage": m.stage,
            "subtask": m.subtask,
            "records": m.records_in,
            "operator_seconds": m.operator_ns / 1e9,
            "state_reads": m.state.get("reads"),
            "state_writes": m.state.get("writes"),
            "flushes": m.flushes,
        }
        for m in metrics
    ]
    modelled = _modelled_io(metrics, latency_profile) if latency_profile else None
    extra = {"modelled_io": modelled.to_dict()} if modelled is not None else {}
    return RunResult(
        strategy=strategy,
        parameters=parameters,
        records_in=records_in,
        records_processed=processed,
        records_rejected=rejected,
        records_out=out,
        keys=keys,
        wall_seconds=wall_seconds,
        operator_seconds=operator_seconds,
        operator_records_per_second=processed / operator_seconds if operator_seconds else None,
        e2e_records_per_second=processed / wall_seconds if wall_seconds else None,
        state_reads=_sum_state(states, "reads") if uses_state else None,
        state_writes=_sum_state(states, "writes") if uses_state else None,
        bytes_serialized=_sum_state(states, "bytes_serialized") if uses_state else None,
        cache_hits=hits if cached else None,
        cache_misses=misses if cached else None,
        cache_hit_ratio=hits / (hits + misses) if cached and hits + misses else None,
        buffer_flushes=sum(m.flushes for m in metrics) if buffers else None,
        latency_p50_ms=histogram.quantile_ms(0.5),
        latency_p99_ms=histogram.quantile_ms(0.99),
        peak_memory_bytes=max((m.peak_memory_bytes for m in metrics), default=0) or None,
        order_violations=sum(m.order_violations for m in metrics if m.stage == final_stage)
        if check_order
        else None,
        result_digest=digest,
        latency_profile=latency_profile,
        modelled_io_seconds=modelled.seconds if modelled is not None else None,
        modelled_records_per_second=_modelled_rate(processed, modelled),
        subtasks=subtasks,
        extra=extra,
    )


def _modelled_io(metrics: list[SubtaskMetrics], profile_name: str):
    """The modelled I/O of a run: keys and subtasks of every stage, named apart."""
    from skewlab.latency import load_profile
    from skewlab.latency_model import modelled_io_seconds

    reads: dict[str, int] = {}
    writes: dict[str, int] = {}
    subtask_of: dict[str, int] = {}
    stages = sorted({m.stage for m in metrics})
    width = 1 + max((m.subtask for m in metrics), default=0)
    for m in metrics:
        offset = stages.index(m.stage) * width
        for name, target in (("reads_per_key", reads), ("writes_per_key", writes)):
            for key, count in (m.state.get(name) or {}).items():
                scoped = f"{m.stage}/{key}"
                target[scoped] = target.get(scoped, 0) + int(count)
                subtask_of[scoped] = offset + m.subtask
    return modelled_io_seconds(load_profile(profile_name), reads, writes, subtask_of)


def _modelled_rate(records: int, modelled) -> float | None:
    if modelled is None:
        return None
    from skewlab.latency_model import modelled_records_per_second

    rate = modelled_records_per_second(records, modelled)
    return None if math.isinf(rate) else rate


# --------------------------------------------------------------------------- routing


def with_key_groups(df, key_col: str, max_parallelism: int, parallelism: int):
    """Add Flink's key group and operator index of ``key_col`` (null keys: group -1, op 0).

    String keys hash with Java's ``String.hashCode``, integer keys with ``Long.hashCode``,
    then Flink's ``murmurHash`` -- so subtask numbers match a real Flink job.
    """
    from pyspark.sql import functions as F

    from skewlab.keygroups import (
        assign_to_key_group_array,
        java_long_hash_array,
        java_string_hash_array,
    )

    is_string = dict(df.dtypes)[key_col] == "string"

    def key_groups(keys: pd.Series) -> pd.Series:
        out = np.full(len(keys), -1, dtype=np.int32)
        present = keys.notna().to_numpy()
        if present.any():
            values = keys[present]
            hashes = (
                java_string_hash_array(values.tolist())
                if is_string
                else java_long_hash_array(values.to_numpy(dtype=np.int64))
            )
            out[present] = assign_to_key_group_array(hashes, max_parallelism)
        return pd.Series(out)

    udf = F.pandas_udf(key_groups, "int")
    kg = F.col(KEY_GROUP)
    operator = F.when(kg < 0, F.lit(0)).otherwise(
        ((kg.cast("long") * parallelism) / F.lit(max_parallelism)).cast("int")
    )
    return df.withColumn(KEY_GROUP, udf(F.col(key_col))).withColumn(OPERATOR, operator)


def subtask_load(df, parallelism: int, max_parallelism: int | None = None, key_col="tweet_id"):
    """Records and keys per operator subtask after Flink's ``keyBy`` (pandas, one row each).

    Example::

        >>> subtask_load(views, parallelism=4)  # doctest: +SKIP
           subtask  records  keys  hottest_key  hottest_key_records
    """
    from pyspark.sql import functions as F

    max_p = max_parallelism or compute_default_max_parallelism(parallelism)
    check_parallelism(parallelism, max_p)
    per_key = (
        with_key_groups(df, key_col, max_p, parallelism)
        .groupBy(OPERATOR, key_col)
        .agg(F.count(F.lit(1)).alias("n"))
    )
    load = (
        per_key.groupBy(OPERATOR)
        .agg(
            F.sum("n").alias("records"),
            F.count(F.lit(1)).alias("keys"),
            F.max_by(key_col, "n").alias("hottest_key"),
            F.max("n").alias("hottest_key_records"),
        )
        .withColumnRenamed(OPERATOR, "subtask")
        .toPandas()
    )
    every = pd.DataFrame({"subtask": range(parallelism)})
    load = every.merge(load, on="subtask", how="left")
    load[["records", "keys", "hottest_key_records"]] = (
        load[["records", "keys", "hottest_key_records"]].fillna(0).astype("int64")
    )
    return load


_PARTITION_KEYS: dict[int, list[int]] = {}


def identity_partition_keys(spark, parallelism: int) -> list[int]:
    """For each operator index *i*, a long whose Spark hash partition (of ``parallelism``) is *i*.

    ``repartition(p, col)`` places a row on ``pmod(murmur3(col), p)``; asking Spark itself
    which small integers land where makes the placement exact for this Spark version.
    """
    if parallelism in _PARTITION_KEYS:
        return _PARTITION_KEYS[parallelism]
    from pyspark.sql import functions as F

    n = 64 * parallelism
    while True:
        rows = (
            spark.range(0, n)
            .select("id", F.expr(f"pmod(hash(id), {parallelism})").alias("p"))
            .groupBy("p")
            .agg(F.min("id").alias("id"))
            .collect()
        )
        found = {r.p: r.id for r in rows}
        if len(found) == parallelism:
            keys = [found[i] for i in range(parallelism)]
            _PARTITION_KEYS[parallelism] = keys
            return keys
        n *= 4


def identity_partition(df, spark, parallelism: int):
    """Shuffle so that partition *i* holds exactly the rows whose ``_operator`` is *i*."""
    from pyspark.sql import functions as F

    keys = identity_partition_keys(spark, parallelism)
    lookup = F.array(*[F.lit(k).cast("long") for k in keys])
    return df.withColumn(PARTITION_KEY, F.element_at(lookup, F.col(OPERATOR) + 1)).repartition(
        parallelism, PARTITION_KEY
    )


# --------------------------------------------------------------------------- the subtask side


class SubtaskContext:
    """What an operator chain sees of its subtask: config, clock, emission and metrics."""

    def __init__(self, stage: StageSpec, subtask: int) -> None:
        self.stage = stage
        self.config = stage.config
        self.subtask = subtask
        self.metrics = SubtaskMetrics(stage=stage.name, subtask=subtask)
        self.histogram = LatencyHistogram()
        self.memory = PeakMemory()
        self.final = stage.final
        self.output = stage.output
        self.results: dict[Any, Any] = {}
        self.outputs: dict[Any, Any] = {}
        self.forward_keys: list[Any] = []
        self.forward_values: list[bytes] = []
        self.forward_arrivals: list[int] = []
        self.forward_seqs: list[int] = []
        self._last_seq: dict[Any, int] | None = {} if self.config.check_order else None
        self._pending_latencies: list[int] = []

    def _record_latency(self, ns: int) -> None:
        pending = self._pending_latencies
        pending.append(ns)
        if len(pending) >= 65_536:
            self.flush_latencies()

    def flush_latencies(self) -> None:
        """Fold the latencies recorded one by one into the histogram."""
        if self._pending_latencies:
            self.histogram.record_many(np.asarray(self._pending_latencies, dtype=np.int64))
            self._pending_latencies = []

    # --- emission
    def emit(self, key: Any, value: Any, arrival_ns: int, seq: int = -1) -> None:
        """Emit one value downstream: to the next stage, or (final stage) into the sink."""
        self.metrics.records_out += 1
        now = time.time_ns()
        if self.final:
            self.results[key] = value
            if self.output is not None:
                self.outputs[key] = self.output(value)
            self._record_latency(now - arrival_ns)
        else:
            self.forward_keys.append(key)
            self.forward_values.append(self.stage.serializer.dumps(value))
            self.forward_arrivals.append(arrival_ns)
            self.forward_seqs.append(seq)

    def emit_batch(self, key: Any, value: Any, arrivals) -> None:
        """Emit one value that includes many records: ``arrivals`` are ``(arrival_ns, count)``
        (empty when the caller records the latencies of a whole flush itself)."""
        self.metrics.records_out += 1
        now = time.time_ns()
        if self.final:
            self.results[key] = value
            if self.output is not None:
                self.outputs[key] = self.output(value)
            self.record_latencies(arrivals, now)
        else:
            self.forward_keys.append(key)
            self.forward_values.append(self.stage.serializer.dumps(value))
            self.forward_arrivals.append(min((a for a, _ in arrivals), default=time.time_ns()))
            self.forward_seqs.append(-1)

    def record_latencies(self, arrivals: list[tuple[int, int]], now: int | None = None) -> None:
        """Latencies of the records ``(arrival_ns, count)`` included in an emission made now."""
        if arrivals:
            table = np.asarray(arrivals, dtype=np.int64).reshape(-1, 2)
            now = time.time_ns() if now is None else now
            self.histogram.record_weighted(now - table[:, 0], table[:, 1])

    def check_order(self, key: Any, seq: int) -> None:
        """Count a violation when ``key``'s records arrive out of ``seq`` order."""
        last = self._last_seq.get(key, -1)  # type: ignore[union-attr]
        if seq < last:
            self.metrics.order_violations += 1
        else:
            self._last_seq[key] = seq  # type: ignore[index]


class Operator:
    """An operator chain of one subtask. Subclasses implement :meth:`process`.

    ``columns`` names the input columns the operator needs as Python lists, ``numpy_columns``
    those it wants as numpy arrays, ``arrow_columns`` those it wants as Arrow arrays. Timers
    are in ``time.time_ns()`` nanoseconds.
    """

    columns: tuple[str, ...] = ()
    numpy_columns: tuple[str, ...] = ()
    arrow_columns: tuple[str, ...] = ()

    def __init__(self, ctx: SubtaskContext) -> None:
        self.ctx = ctx

    def process(self, cols: dict[str, Any], n: int, arrivals: np.ndarray | None) -> None:
        raise NotImplementedError

    def next_timer_ns(self) -> int | None:
        return None

    def on_timer(self, now_ns: int) -> None:  # pragma: no cover - only buffering has timers
        pass

    def finish(self) -> None:
        """End of (bounded) input: emit whatever is still held."""

    def close(self) -> dict[str, Any]:
        """Release resources; return the state access stats as a dict ({} if stateless)."""
        return {}


@dataclass
class StageSpec:
    """One keyed stage: ``keyBy(key_col)`` then the operator chain ``operator``."""

    name: str
    config: RunConfig
    key_col: str
    operator: Callable[[SubtaskContext], Operator]
    final: bool
    serializer: Any
    key_type: str = "string"
    order_by: tuple[str, ...] = ("seq",)
    input_columns: tuple[str, ...] = ()
    #: the chained ``map`` after a final reduce, applied to every emission (seed 000's
    #: ``.map(_.toStats)``); the sink keeps each key's latest output
    output: Callable[[Any], Any] | None = None
    #: whether this stage reads from the (paced) source; a stage behind an exchange is not
    #: paced again -- its input arrives when the upstream stage emits it
    source: bool = True


def _arrow_schema(key_type: str):
    import pyarrow as pa

    key = pa.string() if key_type == "string" else pa.int64()
    return pa.schema(
        [
            ("kind", pa.string()),
            ("key", key),
            ("value", pa.binary()),
            ("arrival_ns", pa.int64()),
            ("seq", pa.int64()),
            ("metrics", pa.string()),
        ]
    )


def _spark_schema(key_type: str) -> str:
    return f"kind string, key {key_type}, value binary, arrival_ns long, seq long, metrics string"


_PACING_SLICE_SECONDS = 0.001


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


def _run_subtask(stage: StageSpec, batches: Iterator) -> Iterator:
    """The body of one Spark task: replay the partition through the stage's operators."""
    import pyarrow as pa
    from pyspark import TaskContext

    subtask = TaskContext.get().partitionId()
    ctx = SubtaskContext(stage, subtask)
    schema = _arrow_schema(stage.key_type)
    operator = stage.operator(ctx)
    metrics = ctx.metrics
    rate = stage.config.source_rate if stage.source else None
    start_ns = time.time_ns()
    passthrough: list = []
    # Operators make no reference cycles; the cyclic collector's full passes over millions of
    # short-lived states would only add noise to the timings (reference counting still frees).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for batch in batches:
            if "kind" in batch.schema.names:  # an upstream stage's metrics rows travel along
                kinds = batch.column("kind").to_numpy(zero_copy_only=False)
                is_metrics = kinds == KIND_METRICS
                if is_metrics.any():
                    passthrough.append(batch.filter(pa.array(is_metrics)).select(schema.names))
                    batch = batch.filter(pa.array(~is_metrics))
            n = batch.num_rows
            if n == 0:
                continue
            ops = batch.column(OPERATOR).to_numpy(zero_copy_only=False)
            if (ops != subtask).any():
                raise RuntimeError(
                    f"routing error: subtask {subtask} received records of operator "
                    f"{sorted(set(ops.tolist()) - {subtask})[:5]}"
                )
            metrics.records_in += n
            cols = {c: batch.column(c).to_pylist() for c in operator.columns}
            for c in operator.numpy_columns:
                cols[c] = batch.column(c).to_numpy(zero_copy_only=False)
            for c in operator.arrow_columns:
                cols[c] = batch.column(c)
            seqs = batch.column("seq").to_numpy() if rate is not None else None
            for lo, hi, release in _slices(n, seqs, rate, start_ns):
                part = cols if (lo, hi) == (0, n) else {k: v[lo:hi] for k, v in cols.items()}
                if release is not None:
                    _wait_until(operator, int(release[0]), metrics)
                began = time.perf_counter_ns()
                _fire_due_timers(operator, time.time_ns())
                operator.process(part, hi - lo, release)
                metrics.operator_ns += time.perf_counter_ns() - began
            ctx.memory.sample()
        began = time.perf_counter_ns()
        operator.finish()
        metrics.operator_ns += time.perf_counter_ns() - began
        ctx.memory.sample()
    finally:
        metrics.state = operator.close()
        if gc_was_enabled:
            gc.enable()
    ctx.flush_latencies()
    metrics.latency = ctx.histogram.to_list()
    metrics.peak_memory_bytes = ctx.memory.peak
    yield from passthrough
    yield from _output_batches(ctx, schema)


def _wait_until(operator: Operator, release_ns: int, metrics: SubtaskMetrics) -> None:
    """Sleep until the source releases the next slice, firing timers that fall due meanwhile."""
    while True:
        now = time.time_ns()
        if now >= release_ns:
            return
        timer = operator.next_timer_ns()
        if timer is not None and timer <= release_ns:
            if timer > now:
                time.sleep((timer - now) / 1e9)
            began = time.perf_counter_ns()
            _fire_due_timers(operator, time.time_ns())
            metrics.operator_ns += time.perf_counter_ns() - began
        else:
            time.sleep((release_ns - now) / 1e9)
            return


def _fire_due_timers(operator: Operator, now_ns: int) -> None:
    timer = operator.next_timer_ns()
    if timer is not None and timer <= now_ns:
        operator.on_timer(now_ns)


def _output_batches(ctx: SubtaskContext, schema) -> Iterator:
    import pyarrow as pa

    serializer = ctx.stage.serializer
    if ctx.final and ctx.results:
        keys = list(ctx.results)
        values = [serializer.dumps(v) for v in ctx.results.values()]
        n = len(keys)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([KIND_RESULT] * n),
                pa.array(keys, type=schema.field("key").type),
                pa.array(values, type=pa.binary()),
                pa.nulls(n, pa.int64()),
                pa.nulls(n, pa.int64()),
                pa.nulls(n, pa.string()),
            ],
            schema=schema,
        )
    elif ctx.forward_keys:
        n = len(ctx.forward_keys)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([KIND_RECORD] * n),
                pa.array(ctx.forward_keys, type=schema.field("key").type),
                pa.array(ctx.forward_values, type=pa.binary()),
                pa.array(ctx.forward_arrivals, type=pa.int64()),
                pa.array(ctx.forward_seqs, type=pa.int64()),
                pa.nulls(n, pa.string()),
            ],
            schema=schema,
        )
    yield pa.RecordBatch.from_arrays(
        [
            pa.array([KIND_METRICS]),
            pa.nulls(1, schema.field("key").type),
            pa.nulls(1, pa.binary()),
            pa.nulls(1, pa.int64()),
            pa.nulls(1, pa.int64()),
            pa.array([json.dumps(asdict(ctx.metrics), default=_json_default)]),
        ],
        schema=schema,
    )


def run_stage(df, spark, stage: StageSpec):
    """Lazily apply one keyed stage to ``df``; returns the stage's output DataFrame.

    The output has rows of kind ``record`` (for a next stage, key in ``key``), ``result`` (final
    per-key values) and ``metrics`` (one per subtask, JSON; an upstream stage's travel along).
    """
    config = stage.config
    routed = with_key_groups(df, stage.key_col, config.max_parallelism, config.parallelism)
    routed = identity_partition(routed, spark, config.parallelism)
    if stage.order_by:
        routed = routed.sortWithinPartitions(*stage.order_by)
    keep = [stage.key_col, KEY_GROUP, OPERATOR, *stage.input_columns]
    if "kind" in df.columns:
        keep += ["kind", "metrics"]
    routed = routed.select(*dict.fromkeys(keep))

    def subtask(batches):
        return _run_subtask(stage, batches)

    return routed.mapInArrow(subtask, _spark_schema(stage.key_type))


@dataclass
class StageOutput:
    """What the driver collects from a final stage."""

    results: dict[Any, Any]
    metrics: list[SubtaskMetrics]
    wall_seconds: float


def collect_stage(out_df, serializer) -> StageOutput:
    """Run the job and collect final results (deserialised) and every subtask's metrics."""
    started = time.perf_counter()
    table = out_df.toArrow()
    wall = time.perf_counter() - started
    kinds = table.column("kind").to_pylist()
    keys = table.column("key").to_pylist()
    values = table.column("value").to_pylist()
    blobs = table.column("metrics").to_pylist()
    results: dict[Any, Any] = {}
    metrics: list[SubtaskMetrics] = []
    for kind, key, value, blob in zip(kinds, keys, values, blobs, strict=True):
        if kind == KIND_RESULT:
            if key in results:
                raise RuntimeError(f"key {key!r} was emitted as final by two subtasks")
            results[key] = serializer.loads(value)
        elif kind == KIND_METRICS:
            metrics.append(SubtaskMetrics(**json.loads(blob)))
    metrics.sort(key=lambda m: (m.stage, m.subtask))
    return StageOutput(results=results, metrics=metrics, wall_seconds=wall)
