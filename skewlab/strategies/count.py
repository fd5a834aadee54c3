"""The count jobs of FLIP-325 (seed 003) and FLIP-140 (seed 001) on the keyed runtime.

A ``Long`` count per key over a ``word`` column, one state read and one write per record, in
six ways, each a :class:`CountStrategy` record in :data:`COUNT_STRATEGY_RECORDS` that carries
its own facts (its operator, its state backend, the order it reads its input in):

==============  ===========================================================================
``rocksdb``     keyed count over real RocksDB: per record ``get`` + ``put`` (serialised)
``heap``        the same over Python dicts (HashMapStateBackend)
``cached``      the same over FLIP-325's write-back LRU of objects in front of RocksDB
``sort_group``  Spark sorts each partition by (key group, key); the operator counts runs of
                equal keys in a local variable -- no state backend ("DataSet, no combiner")
``sorted``      FLIP-140: the same sorted input, a single-key state backend, one ``get`` +
                ``put`` per record, one emission when a key's run ends
``spark_sql``   Spark's own ``groupBy().count()`` (JVM hash aggregation): the ceiling
==============  ===========================================================================

Keyed strategies can take a checkpoint every ``checkpoint_interval_ms`` (dirty cache entries to
RocksDB, then RocksDB's own checkpoint), as the FLIP-325 benchmark does every second, and sample
the cache hit ratio at each: :func:`hit_ratio_gauge` is FLIP-325's ``stateCacheHitRatio``.
Results leave through a ``collect`` sink (every key's count) or a ``digest`` sink (an exact
checksum, nothing kept per key); Spark computes the same digest natively (:func:`spark_count`).

Example::

    >>> from skewlab.inputs.wordcount import wordcount_input
    >>> words = wordcount_input(spark, n=1_000, k=10, key_type="int")     # doctest: +SKIP
    >>> run = run_count(words, "sorted")                                  # doctest: +SKIP
    >>> run.counts[3]                                                     # doctest: +SKIP
    100
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from skewlab.aggregates.count import CountDigest, count_digest
from skewlab.engine.config import JobConfig
from skewlab.engine.job import StageOutput, collect_stage, run_stage
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError
from skewlab.inputs.wordcount import KEY_TYPES, SEQ, WORD
from skewlab.operators.count import EMITS, SINKS, KeyedCount, SortedCount, SortGroupCount
from skewlab.state.api import PickleSerializer
from skewlab.state.lru_cache import CACHE_POLICIES, DEFAULT_MAX_ENTRIES
from skewlab.state.state_backend import StateBackend
from skewlab.validation import check_choice, check_number, check_whole

__all__ = [
    "COUNT_STRATEGIES",
    "COUNT_STRATEGY_RECORDS",
    "INPUT_ORDERS",
    "CountJob",
    "CountRun",
    "CountStrategy",
    "hit_ratio_gauge",
    "run_count",
    "spark_count",
]

#: Order records reach the operator in: ``arrival`` (by ``seq``), ``exchange`` (as Spark's
#: shuffle delivers them: no sort, like a Flink keyed stream) or ``key`` (sorted by key group
#: and key, FLIP-140's sorted input).
INPUT_ORDERS = ("arrival", "exchange", "key")
_SORT_BY = {"arrival": (SEQ,), "exchange": (), "key": (KEY_GROUP, WORD)}
_SPARK_KEY_TYPES = {"bigint": "int", "string": "string"}


@dataclass(frozen=True)
class CountStrategy:
    """One count strategy and its facts.

    Attributes:
        name: its name (``run_count(df, name)``).
        operator: the count operator class it runs in each subtask; ``None`` for Spark's own
            aggregation, which runs no Python operator.
        backend: the keyed state backend it counts in (:class:`KeyedCount`), ``None`` when it
            keeps no keyed state (a local variable, a single-key backend, Spark).
        input_order: the order its records reach the operator in unless told otherwise
            (:data:`INPUT_ORDERS`): sorted input for the sort-based strategies.
        state_accesses: whether its operator counts state reads and writes.

    Example::

        >>> COUNT_STRATEGY_RECORDS["cached"].has_cache, COUNT_STRATEGY_RECORDS["sorted"].keyed
        (True, False)
    """

    name: str
    operator: type | None
    backend: str | None = None
    input_order: Literal["arrival", "key"] = "arrival"
    state_accesses: bool = True

    @property
    def keyed(self) -> bool:
        """Whether it keeps keyed state in a state backend (and can checkpoint it)."""
        return self.backend is not None

    @property
    def has_cache(self) -> bool:
        """Whether its backend has FLIP-325's LRU cache (``StateBackend(backend)`` does)."""
        return self.keyed and StateBackend(self.backend).cache_entries is not None

    @property
    def in_spark(self) -> bool:
        """Whether Spark counts by itself (no Python operator, no state backend of skewlab's)."""
        return self.operator is None


#: Every count strategy's record, by name (the one registry; see the module doc).
COUNT_STRATEGY_RECORDS: dict[str, CountStrategy] = {
    c.name: c
    for c in (
        CountStrategy("rocksdb", KeyedCount, backend="rocksdb"),
        CountStrategy("heap", KeyedCount, backend="heap"),
        CountStrategy("cached", KeyedCount, backend="cached"),
        CountStrategy("sort_group", SortGroupCount, input_order="key", state_accesses=False),
        CountStrategy("sorted", SortedCount, input_order="key"),
        CountStrategy("spark_sql", None, state_accesses=False),
    )
}
#: Count strategies' names, see the module doc.
COUNT_STRATEGIES = tuple(COUNT_STRATEGY_RECORDS)
#: The count strategies that keep keyed state (their name is their state backend's).
KEYED_COUNTS = tuple(name for name, c in COUNT_STRATEGY_RECORDS.items() if c.keyed)


@dataclass(frozen=True, kw_only=True)
class CountJob:
    """One count run's settings, validated on construction.

    Example::

        >>> CountJob(strategy="sorted").order_by
        ('_key_group', 'word')
        >>> CountJob(strategy="cached", cache_entries=-5)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: cache size must be a whole number >= 0, got -5
    """

    strategy: str
    cache_entries: int = DEFAULT_MAX_ENTRIES
    write_batch: int = 1
    cache_policy: str = "lru"
    emit: str = "end"
    checkpoint_interval_ms: float | None = None
    sink: str = "collect"
    input_order: str | None = None

    def __post_init__(self) -> None:
        check_choice("count strategy", self.strategy, COUNT_STRATEGIES)
        check_choice("sink", self.sink, SINKS)
        check_choice("emit", self.emit, EMITS)
        if self.kind.has_cache:
            check_whole("cache size", self.cache_entries, 0)
        check_whole("write batch (evictions per write-back)", self.write_batch, 1)
        if self.write_batch > 1 and not self.kind.has_cache:
            cached = [name for name, c in COUNT_STRATEGY_RECORDS.items() if c.has_cache]
            raise SkewlabInputError(
                f"write batch {self.write_batch} batches a cache's write-backs: only the "
                f"{', '.join(map(repr, cached))} strategy has one, not {self.strategy!r}"
            )
        check_choice("cache policy (--cache-policy)", self.cache_policy, CACHE_POLICIES)
        if self.cache_policy != "lru" and not self.kind.has_cache:
            raise SkewlabInputError(
                f"cache policy {self.cache_policy!r} chooses a cache's entries: only the "
                f"cached count strategy has a cache, not {self.strategy!r}"
            )
        if self.input_order is not None:
            check_choice("input order", self.input_order, INPUT_ORDERS)
        if self.checkpoint_interval_ms is not None:
            check_number("checkpoint interval (ms)", self.checkpoint_interval_ms, above=0)

    @property
    def kind(self) -> CountStrategy:
        """The strategy's record (:data:`COUNT_STRATEGY_RECORDS`)."""
        return COUNT_STRATEGY_RECORDS[self.strategy]

    @property
    def order_by(self) -> tuple[str, ...]:
        """The stage's sort: the strategy's own input order, unless told."""
        return _SORT_BY[self.input_order or self.kind.input_order]

    def operator(self):
        """The count operator's factory, its settings bound."""
        kind = self.kind
        if kind.in_spark:
            raise ValueError(f"count strategy {kind.name!r} runs no Python operator")
        if not kind.keyed:
            return partial(kind.operator, sink=self.sink)
        cache = self.cache_entries if kind.has_cache else None
        return partial(
            kind.operator,
            state_backend=StateBackend(
                kind.backend,
                max_entries=cache,
                write_batch=self.write_batch if cache else 1,
                cache_policy=self.cache_policy,
            ),
            emit=self.emit,
            checkpoint_interval_ms=self.checkpoint_interval_ms,
            sink=self.sink,
        )


@dataclass
class CountRun:
    """One count run: what it measured, and its result (``counts`` or ``digest``).

    ``operator_seconds`` is the time spent inside the operators, summed over subtasks (what
    Flink's operator metrics show); ``wall_seconds`` the Spark job's (records routed, shuffled,
    sorted where asked, replayed through the operators, results collected). ``spark_sql`` has
    no Python operator: its ``operator_seconds`` is ``None``. ``peak_memory_bytes`` is the
    largest subtask's traced peak when the run traced memory, else ``None``;
    ``operator_inputs`` the input columns the operators were handed.
    """

    strategy: str
    key_type: str
    parallelism: int
    records: int
    rejected: int
    wall_seconds: float
    operator_seconds: float | None
    peak_memory_bytes: int | None
    digest: CountDigest
    operator_cpu_seconds: float | None = None
    counts: dict[Any, int] | None = None
    cache_entries: int | None = None
    cache_policy: str | None = None
    state_reads: int | None = None
    state_writes: int | None = None
    cache_hits: int | None = None
    cache_misses: int | None = None
    checkpoints: int | None = None
    hit_ratio_per_interval: list[tuple[float, float | None, float]] = field(default_factory=list)
    operator_inputs: list[str] = field(default_factory=list)
    records_emitted: int | None = None
    emissions_match: bool | None = None

    @property
    def keys(self) -> int:
        return self.digest.keys

    @property
    def hit_ratio(self) -> float | None:
        """Cache hits / lookups over the whole run (``None`` without a cache)."""
        if self.cache_hits is None or self.cache_misses is None:
            return None
        lookups = self.cache_hits + self.cache_misses
        return self.cache_hits / lookups if lookups else None

    @property
    def operator_records_per_second(self) -> float | None:
        return self.records / self.operator_seconds if self.operator_seconds else None

    @property
    def operator_cpu_records_per_second(self) -> float | None:
        return self.records / self.operator_cpu_seconds if self.operator_cpu_seconds else None

    @property
    def e2e_records_per_second(self) -> float | None:
        return self.records / self.wall_seconds if self.wall_seconds else None

    def row(self) -> dict[str, Any]:
        """A flat dict for a results table (no per-key counts)."""
        return {
            "strategy": self.strategy,
            "key_type": self.key_type,
            "parallelism": self.parallelism,
            "records": self.records,
            "rejected": self.rejected,
            "keys": self.keys,
            "cache_entries": self.cache_entries,
            "cache_policy": self.cache_policy,
            "hit_ratio": self.hit_ratio,
            "state_cache_hit_ratio": hit_ratio_gauge(self.hit_ratio_per_interval),
            "wall_seconds": self.wall_seconds,
            "operator_seconds": self.operator_seconds,
            "operator_records_per_second": self.operator_records_per_second,
            "operator_cpu_seconds": self.operator_cpu_seconds,
            "operator_cpu_records_per_second": self.operator_cpu_records_per_second,
            "e2e_records_per_second": self.e2e_records_per_second,
            "peak_memory_bytes": self.peak_memory_bytes,
            "state_reads": self.state_reads,
            "state_writes": self.state_writes,
            "checkpoints": self.checkpoints,
            "operator_inputs": self.operator_inputs,
            "records_emitted": self.records_emitted,
            "emissions_match": self.emissions_match,
        }


def hit_ratio_gauge(samples: Iterable[tuple[float, float | None, float]]) -> float | None:
    """FLIP-325's ``stateCacheHitRatio`` gauge over a run: the hit ratio of each checkpoint
    interval, weighted by how long the interval lasted (a last, partial interval of 0.3 s
    weighs 0.3 of a whole second).

    ``samples`` are ``(seconds since start, hit ratio of the interval, interval seconds)``, as a
    cached :class:`~skewlab.operators.count.KeyedCount` records them at every checkpoint.

    Example::

        >>> hit_ratio_gauge([(1.0, 0.5, 1.0), (2.0, 0.5, 1.0), (2.5, 1.0, 0.5)])
        0.6
        >>> hit_ratio_gauge([]) is None
        True
    """
    weighted = [(v, d) for _, v, d in samples if v is not None and d > 0]
    seconds = sum(d for _, d in weighted)
    return sum(v * d for v, d in weighted) / seconds if seconds else None


def run_count(
    df,
    strategy: str,
    *,
    spark=None,
    parallelism: int | None = None,
    max_parallelism: int | None = None,
    key_type: str | None = None,
    cache_entries: int = DEFAULT_MAX_ENTRIES,
    write_batch: int = 1,
    cache_policy: str = "lru",
    emit: str = "end",
    checkpoint_interval_ms: float | None = None,
    sink: str = "collect",
    input_order: str | None = None,
    trace_memory: bool = False,
) -> CountRun:
    """Count the records of ``df`` per ``word`` with ``strategy`` (see :data:`COUNT_STRATEGIES`).

    ``df`` has a ``word`` column (bigint or string; nulls are rejected and counted) and a
    ``seq`` column (arrival order). ``input_order`` defaults to ``arrival`` for the keyed
    strategies and ``key`` for ``sort_group`` / ``sorted``; a sorted strategy run in
    ``arrival`` order fails with :class:`~skewlab.errors.UnsortedInputError` (Spark wraps it).
    ``write_batch`` (``cached`` only) writes the cache's evicted dirty entries back that many
    at a time, in one RocksDB write batch (1: one at a time, as FLIP-325); ``cache_policy``
    (``cached`` only) is ``lru`` (FLIP-325) or ``tinylfu`` (W-TinyLFU's admission).
    ``trace_memory`` traces each subtask's Python allocations for ``peak_memory_bytes``
    (:mod:`skewlab.engine.memory`); it slows the run, so a timed run leaves it off.
    Bad parameters raise :class:`~skewlab.errors.SkewlabInputError` before Spark starts work.

    Example::

        >>> run_count(wordcount_input(spark, 6, 3), "heap").counts     # doctest: +SKIP
        {0: 2, 1: 2, 2: 2}
    """
    count = CountJob(
        strategy=strategy,
        cache_entries=cache_entries,
        write_batch=write_batch,
        cache_policy=cache_policy,
        emit=emit,
        checkpoint_interval_ms=checkpoint_interval_ms,
        sink=sink,
        input_order=input_order,
    )
    spark_key, key_type = _count_input_type(df, key_type)
    spark = spark or df.sparkSession
    job = JobConfig(
        parallelism=parallelism,
        max_parallelism=max_parallelism,
        disk_profile=None,
        trace_memory=trace_memory,
    ).resolved(spark.sparkContext.defaultParallelism)
    if count.kind.in_spark:
        return _spark_sql_count(df, count.strategy, key_type, job, sink)
    stage = StageSpec(
        name=f"1:count-{strategy}",
        key_col=WORD,
        operator=count.operator(),
        final=True,
        serializer=PickleSerializer(),
        key_type=spark_key,
        order_by=count.order_by,  # the count operators read only the key and its key group
    )
    out = collect_stage(run_stage(df, spark, stage, job), stage.serializer)
    return _fold_count(count, key_type, job, out)


def _count_input_type(df, key_type: str | None) -> tuple[str, str]:
    """``(Spark type, key type)`` of the input's ``word`` column, checked."""
    dtypes = dict(df.dtypes)
    if WORD not in dtypes or SEQ not in dtypes:
        raise SkewlabInputError(f"count input needs columns {WORD!r} and {SEQ!r}, has {df.columns}")
    spark_key = dtypes[WORD]
    if spark_key not in _SPARK_KEY_TYPES:
        raise SkewlabInputError(f"column {WORD!r} must be bigint or string, is {spark_key}")
    inferred = _SPARK_KEY_TYPES[spark_key]
    if key_type is not None:
        check_choice("key type", key_type, KEY_TYPES)
        if key_type != inferred:
            raise SkewlabInputError(
                f"key type {key_type!r} does not match column {WORD!r} ({spark_key})"
            )
    return spark_key, inferred


def _fold_count(count: CountJob, key_type: str, job: JobConfig, out: StageOutput) -> CountRun:
    """The :class:`CountRun` of a collected count stage: its result and its counters."""
    if count.sink == "digest":
        digest = CountDigest(0, 0, 0)
        for value in out.results.values():
            digest = digest + CountDigest(*value)
        counts = None
    else:
        counts = out.results
        digest = count_digest(counts)
    metrics = out.metrics
    states = [m.state for m in metrics]

    def total(name: str) -> int:
        return sum(s.get(name, 0) for s in states)

    keyed, cached, stateful = count.kind.keyed, count.kind.has_cache, count.kind.state_accesses
    gauge = sorted(tuple(g) for s in states for g in s.get("hit_ratio_per_interval") or [])
    emitting = count.emit == "record" and keyed
    records, rejected = sum(m.records_in for m in metrics), sum(m.records_rejected for m in metrics)
    return CountRun(
        strategy=count.strategy,
        key_type=key_type,
        parallelism=job.parallelism or 1,
        records=records - rejected,
        rejected=rejected,
        wall_seconds=out.wall_seconds,
        operator_seconds=sum(m.operator_ns for m in metrics) / 1e9,
        operator_cpu_seconds=total("cpu_ns") / 1e9,
        peak_memory_bytes=max((m.peak_memory_bytes for m in metrics), default=0)
        if job.trace_memory
        else None,
        digest=digest,
        counts=counts,
        cache_entries=count.cache_entries if cached else None,
        cache_policy=count.cache_policy if cached else None,
        state_reads=total("reads") if stateful else None,
        state_writes=total("writes") if stateful else None,
        cache_hits=total("cache_hits") if cached else None,
        cache_misses=total("cache_misses") if cached else None,
        checkpoints=total("checkpoints") if keyed else None,
        hit_ratio_per_interval=gauge,
        operator_inputs=sorted({c for m in metrics for c in m.inputs}),
        records_emitted=total("records_emitted") if emitting else None,
        emissions_match=all(s.get("emissions_match") for s in states) if emitting else None,
    )


def _spark_sql_count(df, strategy: str, key_type: str, job: JobConfig, sink: str) -> CountRun:
    digest, counts, wall, processed, rejected = spark_count(df, collect=sink == "collect")
    return CountRun(
        strategy=strategy,
        key_type=key_type,
        parallelism=job.parallelism or 1,
        records=processed,
        rejected=rejected,
        wall_seconds=wall,
        operator_seconds=None,
        peak_memory_bytes=None,
        digest=digest,
        counts=counts,
    )


def spark_count(df, *, collect: bool = False):
    """Spark's own ``groupBy(word).count()`` (null words left out and counted), timed.

    Returns ``(CountDigest, counts or None, wall seconds, records counted, null words)``. The
    digest is computed by Spark too (``xxhash64(concat_ws(':', word, count))`` summed as a
    decimal), so nothing per key leaves the JVM unless ``collect`` is asked for.

    Example::

        >>> digest, counts, wall, counted, nulls = spark_count(words)     # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    started = time.perf_counter()
    counts_df = df.where(F.col(WORD).isNotNull()).groupBy(WORD).count()
    per_key = F.xxhash64(
        F.concat_ws(":", F.col(WORD).cast("string"), F.col("count").cast("string"))
    )
    row = counts_df.agg(
        F.count(F.lit(1)).alias("keys"),
        F.coalesce(F.sum("count"), F.lit(0)).alias("total"),
        F.coalesce(F.sum(per_key.cast("decimal(38,0)")), F.lit(0)).alias("fold"),
    ).first()
    wall = time.perf_counter() - started
    digest = CountDigest(int(row["keys"]), int(row["total"]), int(row["fold"]))
    counts = None
    if collect:
        table = counts_df.toArrow()
        counts = dict(
            zip(table.column(WORD).to_pylist(), table.column("count").to_pylist(), strict=True)
        )
    nulls = df.where(F.col(WORD).isNull()).count()
    return digest, counts, wall, digest.total, nulls
