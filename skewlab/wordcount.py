"""Count state for the WordCount-style experiments of FLIP-325 (seed 003) and FLIP-140 (seed 001).

Seed 000's strategies aggregate HLL sketches; the two FLIPs measure something plainer: a
``Long`` count per key, one state read and one state write per record. This module runs that
count on skewlab's keyed runtime (Flink key groups, identity partitioning, one operator chain
per Spark task) in five ways:

==============  ===========================================================================
``rocksdb``     keyed reduce over real RocksDB: per record ``get`` + ``put`` (serialised)
``heap``        the same over Python dicts (HashMapStateBackend)
``cached``      the same over FLIP-325's write-back LRU of objects in front of RocksDB
``sort_group``  Spark sorts each partition by (key group, key); the operator counts runs of
                equal keys in a local variable -- no state backend ("DataSet, no combiner")
``sorted``      FLIP-140: the same sorted input, a single-key state backend, one ``get`` +
                ``put`` per record, one emission when a key's run ends
``spark_sql``   Spark's own ``groupBy().count()`` (JVM hash aggregation): the ceiling
==============  ===========================================================================

The per-record loops are compiled (:mod:`skewlab.count_loops`) and call each backend's
compiled value-state core (:meth:`~skewlab.state.KeyedStateBackend.value_state_core`), so that
what the strategies differ in -- the state access -- is what operator time measures, as in a
JVM operator; RocksDB is reached through its backend's Python ``get`` / ``put``.

Keyed strategies can take a checkpoint (``backend.flush()``: dirty cache entries to RocksDB,
then RocksDB's own checkpoint) every ``checkpoint_interval_ms``, as the FLIP-325 benchmark does
every second, and sample the cache hit ratio at each checkpoint: :func:`hit_ratio_gauge` is
FLIP-325's ``stateCacheHitRatio`` ("the cache hit ratio of state access operations, averaged
per second").

Results leave the operators through one of two sinks: ``collect`` keeps every key's count
(checked against an oracle, e.g. :class:`collections.Counter` or Spark's ``groupBy().count()``),
``digest`` folds them into a :class:`CountDigest` (number of keys, total, a sum of per-key
``xxhash64`` values) and keeps nothing per key -- Flink's discarding sink with a checksum, so
that the memory a run needs is the operator's, not the sink's. Spark computes the same digest
natively (:func:`spark_count`).

Example::

    >>> from skewlab.wordcount import run_count, wordcount_input
    >>> words = wordcount_input(spark, n=1_000, k=10, key_type="int")     # doctest: +SKIP
    >>> run = run_count(words, "sorted")                                  # doctest: +SKIP
    >>> run.counts[3]                                                     # doctest: +SKIP
    100
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from time import process_time_ns
from typing import Any, NamedTuple

from xxhash import xxh64_intdigest

from skewlab.count_loops import keyed_count, sort_group_count, sorted_count
from skewlab.errors import SkewlabInputError, UnsortedInputError
from skewlab.keygroups import compute_key_group_range_for_operator_index
from skewlab.runtime import KEY_GROUP, Operator, RunConfig, SubtaskContext
from skewlab.state import PickleSerializer, create_backend

__all__ = [
    "INPUT_ORDERS",
    "KEY_TYPES",
    "SINKS",
    "STRATEGIES",
    "CountDigest",
    "CountRun",
    "DigestSink",
    "KeyedCount",
    "SortGroupCount",
    "SortedCount",
    "count_digest",
    "flip325_input",
    "flip325_key",
    "hit_ratio_gauge",
    "run_count",
    "spark_count",
    "validate_cache_size",
    "validate_wordcount",
    "wordcount_input",
]

#: Key types of the WordCount input (the seed measured both): Java longs or strings.
KEY_TYPES = ("int", "string")
#: Count strategies, see the module doc.
STRATEGIES = ("rocksdb", "heap", "cached", "sort_group", "sorted", "spark_sql")
#: ``collect`` keeps every key's count; ``digest`` keeps only a checksum of them.
SINKS = ("collect", "digest")
#: Order records reach the operator in: ``arrival`` (by ``seq``), ``exchange`` (as Spark's
#: shuffle delivers them: no sort, like a Flink keyed stream) or ``key`` (sorted by key group
#: and key, FLIP-140's sorted input).
INPUT_ORDERS = ("arrival", "exchange", "key")

KEYED_BACKENDS = ("rocksdb", "heap", "cached")
WORD, SEQ = "word", "seq"
_SPARK_KEY_TYPE = {"int": "bigint", "string": "string"}
_DIGEST_SEED = 42  # Spark's xxhash64 seed
_TWO_63, _TWO_64 = 1 << 63, 1 << 64
_NO_KEY: Any = object()  # "no current key yet" (None is a key too: a null, to be rejected)


# --------------------------------------------------------------------------- validation


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_wordcount(n: object, k: object, key_type: object = "int") -> None:
    """Raise :class:`SkewlabInputError` unless ``1 <= k <= n`` and ``key_type`` is known.

    Example::

        >>> validate_wordcount(10, 20)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: K (distinct keys) must not exceed N (records): K=20 > N=10
    """
    if not _whole(n) or n < 1:
        raise SkewlabInputError(f"N (records) must be a whole number >= 1, got {n!r}")
    if not _whole(k) or k < 1:
        raise SkewlabInputError(f"K (distinct keys) must be a whole number >= 1, got {k!r}")
    if k > n:
        raise SkewlabInputError(f"K (distinct keys) must not exceed N (records): K={k} > N={n}")
    if key_type not in KEY_TYPES:
        raise SkewlabInputError(f"unknown key type {key_type!r}: use one of {', '.join(KEY_TYPES)}")


def validate_cache_size(entries: object) -> None:
    """Raise :class:`SkewlabInputError` unless ``entries`` is a whole number >= 0.

    Example::

        >>> validate_cache_size(-1)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: cache size must be a whole number >= 0 entries, got -1
    """
    if not _whole(entries) or entries < 0:
        raise SkewlabInputError(f"cache size must be a whole number >= 0 entries, got {entries!r}")


# --------------------------------------------------------------------------- inputs


def wordcount_input(spark, n: int, k: int, key_type: str = "int", *, partitions: int | None = None):
    """``n`` records over exactly ``k`` distinct words: ``word = id % k`` (``"w<id % k>"`` for
    strings), ``seq = id``. Every word occurs ``n // k`` or ``n // k + 1`` times.

    Example::

        >>> wordcount_input(spark, 6, 3, "string").collect()       # doctest: +SKIP
        [Row(word='w0', seq=0), Row(word='w1', seq=1), Row(word='w2', seq=2), Row(word='w0', ...
    """
    from pyspark.sql import functions as F

    validate_wordcount(n, k, key_type)
    ids = spark.range(0, n, numPartitions=partitions) if partitions else spark.range(0, n)
    word = F.col("id") % F.lit(k)
    if key_type == "string":
        word = F.concat(F.lit("w"), word.cast("string"))
    return ids.select(word.alias(WORD), F.col("id").alias(SEQ))


def flip325_key(x: int) -> int:
    """FLIP-325's key selector: ``(x % 500) + 500 * ((x / 1000) % 2)``.

    Over consecutive ``x``, blocks of 1,000 records touch 500 keys twice each, alternating
    between keys 0..499 and 500..999: an LRU of 250 entries never hits, 500 hits every second
    access, 1,000 always hits (after warming up).

    Example::

        >>> [flip325_key(x) for x in (0, 499, 500, 1000, 1999, 2000)]
        [0, 499, 0, 500, 999, 0]
    """
    return (x % 500) + 500 * ((x // 1000) % 2)


def flip325_input(spark, n: int, *, partitions: int | None = None):
    """FLIP-325's input: longs ``0..n-1`` keyed by :func:`flip325_key` (``word``), ``seq = x``."""
    from pyspark.sql import functions as F

    if not _whole(n) or n < 1:
        raise SkewlabInputError(f"N (records) must be a whole number >= 1, got {n!r}")
    ids = spark.range(0, n, numPartitions=partitions) if partitions else spark.range(0, n)
    x = F.col("id")
    key = (x % 500) + F.lit(500) * (F.floor(x / 1000) % 2)
    return ids.select(key.cast("bigint").alias(WORD), x.alias(SEQ))


# --------------------------------------------------------------------------- sinks


class CountDigest(NamedTuple):
    """An order-free checksum of per-key counts: number of keys, sum of counts, and the sum of
    ``xxhash64("<key>:<count>", seed 42)`` (signed 64-bit, summed exactly).

    Spark's ``xxhash64(concat_ws(':', key, count))`` gives the same per-key values, so Spark can
    compute the digest natively (:func:`spark_count`). Digests add over subtasks.

    Example::

        >>> count_digest({"a": 2, "b": 1}) == count_digest({"b": 1}) + count_digest({"a": 2})
        True
    """

    keys: int
    total: int
    fold: int

    def __add__(self, other: object) -> CountDigest:  # type: ignore[override]
        if not isinstance(other, CountDigest):
            return NotImplemented
        return CountDigest(self.keys + other.keys, self.total + other.total, self.fold + other.fold)


def _key_hash(key: object, count: int) -> int:
    value = xxh64_intdigest(f"{key}:{count}".encode(), _DIGEST_SEED)
    return value - _TWO_64 if value >= _TWO_63 else value


def count_digest(counts: Mapping[Any, int]) -> CountDigest:
    """The :class:`CountDigest` of a ``{key: count}`` mapping (e.g. a ``Counter``).

    Example::

        >>> count_digest({"w0": 3}).total
        3
    """
    return CountDigest(
        len(counts), sum(counts.values()), sum(_key_hash(k, c) for k, c in counts.items())
    )


class DigestSink:
    """A discarding sink with a checksum: folds ``(key, count)`` emissions into a digest.

    Example::

        >>> sink = DigestSink(); sink.add("a", 2); sink.add("b", 1)
        >>> sink.digest() == count_digest({"a": 2, "b": 1})
        True
    """

    __slots__ = ("fold", "keys", "total")

    def __init__(self) -> None:
        self.keys = 0
        self.total = 0
        self.fold = 0

    def add(self, key: object, count: int) -> None:
        self.keys += 1
        self.total += count
        value = xxh64_intdigest(f"{key}:{count}".encode(), _DIGEST_SEED)
        self.fold += value - _TWO_64 if value >= _TWO_63 else value

    def digest(self) -> CountDigest:
        return CountDigest(self.keys, self.total, self.fold)


class _CountOperator(Operator):
    """What the count operators share: the key column, the sink and the rejected-key count."""

    def __init__(self, ctx: SubtaskContext, *, key_col: str = WORD, sink: str = "collect") -> None:
        super().__init__(ctx)
        if sink not in SINKS:
            raise SkewlabInputError(f"unknown sink {sink!r}: use one of {', '.join(SINKS)}")
        self.key_col = key_col
        self.columns = (key_col, KEY_GROUP)
        self.cpu_ns = 0
        self.sink = DigestSink() if sink == "digest" else None
        if self.sink is not None:
            self._emit = self.sink.add
        else:
            emit_batch = ctx.emit_batch

            def collect(key: object, count: int) -> None:
                emit_batch(key, count, ())  # no per-record latency: one result per key

            self._emit = collect

    # The runtime times the operator calls on the wall clock; the CPU time of the worker
    # process (RocksDB's own threads included) is kept too: on a shared machine it is the
    # measure other processes do not inflate.
    def process(self, cols, n, arrivals) -> None:
        began = process_time_ns()
        self._process(cols, n, arrivals)
        self.cpu_ns += process_time_ns() - began

    def finish(self) -> None:
        began = process_time_ns()
        self._finish()
        self.cpu_ns += process_time_ns() - began

    def on_timer(self, now_ns: int) -> None:
        began = process_time_ns()
        self._on_timer(now_ns)
        self.cpu_ns += process_time_ns() - began

    def _process(self, cols, n, arrivals) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        self._finish_sink()

    def _on_timer(self, now_ns: int) -> None:
        pass

    def close(self) -> dict[str, Any]:
        return {"cpu_ns": self.cpu_ns}

    def _finish_sink(self) -> None:
        if self.sink is not None:
            # one record per subtask: its digest, keyed by the subtask (unique over subtasks)
            key: Any = self.ctx.subtask
            if self.ctx.stage.key_type == "string":
                key = str(key)
            self.ctx.emit_batch(key, tuple(self.sink.digest()), ())


# --------------------------------------------------------------------------- keyed count


class KeyedCount(_CountOperator):
    """``keyBy(word) -> count``: per record one state ``get`` and one ``put`` (seed 003's
    ``state.value()`` / ``update(value + 1)``), over ``rocksdb``, ``heap`` or ``cached``.

    ``emit="record"`` hands every updated count to a discarding collector, as the FLIP-325
    job's ``output.collect`` does; ``emit="end"`` emits once per key at the end of input (a
    global window, FLIP-140's WordCount). Either way, at the end every key's final count goes
    to the sink. With ``checkpoint_interval_ms`` a checkpoint (``backend.flush()``) is taken
    that often, and the cache's hit ratio over each interval is recorded.
    """

    def __init__(
        self,
        ctx: SubtaskContext,
        *,
        backend: str = "rocksdb",
        cache_entries: int = 1000,
        emit: str = "end",
        checkpoint_interval_ms: float | None = None,
        key_col: str = WORD,
        sink: str = "collect",
    ) -> None:
        super().__init__(ctx, key_col=key_col, sink=sink)
        if backend not in KEYED_BACKENDS:
            raise SkewlabInputError(
                f"unknown count backend {backend!r}: use one of {', '.join(KEYED_BACKENDS)}"
            )
        if emit not in ("end", "record"):
            raise SkewlabInputError(f"emit must be 'end' or 'record', got {emit!r}")
        options: dict[str, Any] = {}
        if backend == "cached":
            validate_cache_size(cache_entries)
            options["max_entries"] = cache_entries
        self.backend = create_backend(backend, **options)
        self._state = self.backend.value_state_core()
        self.emit_per_record = emit == "record"
        self.records_emitted = 0
        self.interval_ns = (
            None if checkpoint_interval_ms is None else int(checkpoint_interval_ms * 1e6)
        )
        self.timer: int | None = None
        self.checkpoints = 0
        self.gauge: list[tuple[float, float | None]] = []  # (seconds since start, hit ratio)
        self._started_ns: int | None = None
        self._last_hits = self._last_misses = 0

    # -- checkpoints and the hit-ratio gauge
    def next_timer_ns(self) -> int | None:
        return self.timer

    def _on_timer(self, now_ns: int) -> None:
        self.checkpoint(now_ns)
        assert self.interval_ns is not None
        self.timer = now_ns + self.interval_ns

    def checkpoint(self, now_ns: int | None = None) -> None:
        """Checkpoint the backend (:meth:`~skewlab.state.KeyedStateBackend.flush`) and sample
        the hit ratio."""
        now_ns = time.time_ns() if now_ns is None else now_ns
        self.backend.flush()
        self.checkpoints += 1
        self._sample_gauge(now_ns)

    def _sample_gauge(self, now_ns: int) -> None:
        stats = self.backend.stats
        hits, misses = stats.cache_hits - self._last_hits, stats.cache_misses - self._last_misses
        self._last_hits, self._last_misses = stats.cache_hits, stats.cache_misses
        if hits + misses:
            since = (now_ns - (self._started_ns or now_ns)) / 1e9
            self.gauge.append((since, hits / (hits + misses)))

    # -- records
    def _process(self, cols, n, arrivals) -> None:
        if self._started_ns is None:
            self._started_ns = time.time_ns()
            if self.interval_ns is not None:
                self.timer = self._started_ns + self.interval_ns
        rejected = keyed_count(cols[self.key_col], cols[KEY_GROUP], self._state)
        if self.emit_per_record:
            # every updated count went to output.collect((key, value)): a discarding collector
            self.records_emitted += n - rejected
        if rejected:
            self.ctx.metrics.records_rejected += rejected

    def _finish(self) -> None:
        """End of input: every key's final count, read back from state, goes to the sink."""
        config = self.ctx.config
        assert config.max_parallelism is not None and config.parallelism is not None
        key_groups = compute_key_group_range_for_operator_index(
            config.max_parallelism, config.parallelism, self.ctx.subtask
        )
        if self._started_ns is not None:
            self._sample_gauge(time.time_ns())  # the last (partial) interval
        emit = self._emit
        for _, key, count in self.backend.items(key_groups):
            emit(key, count)
        self._finish_sink()

    def close(self) -> dict[str, Any]:
        stats = self.backend.stats
        out = {
            "backend": self.backend.name,
            "reads": stats.reads,
            "writes": stats.writes,
            "bytes_serialized": stats.bytes_serialized,
            "cache_hits": stats.cache_hits,
            "cache_misses": stats.cache_misses,
            "evictions": stats.evictions,
            "checkpoints": self.checkpoints,
            "hit_ratio_per_interval": self.gauge,
            "records_emitted": self.records_emitted,
            "cpu_ns": self.cpu_ns,
        }
        self.backend.close()
        return out


# --------------------------------------------------------------------------- sorted input


def _unsorted(key: object, group: int, previous: object, previous_group: int) -> UnsortedInputError:
    return UnsortedInputError(
        f"input is not sorted by key: key {key!r} (key group {group}) came after key "
        f"{previous!r} (key group {previous_group}); sort-based grouping needs records "
        "sorted by (key_group, key)"
    )


class SortGroupCount(_CountOperator):
    """Sort-then-group, no state backend (DataSet's reduce without a combiner): the count of the
    current run of equal keys lives in a local variable; a key change emits it.

    A key that does not sort after the previous one raises
    :class:`~skewlab.errors.UnsortedInputError` (checked once per key, not per record).
    """

    def __init__(self, ctx: SubtaskContext, *, key_col: str = WORD, sink: str = "collect") -> None:
        super().__init__(ctx, key_col=key_col, sink=sink)
        self.current: Any = _NO_KEY
        self.current_group = -1
        self.count = 0

    def _process(self, cols, n, arrivals) -> None:
        self.current, self.current_group, self.count, rejected = sort_group_count(
            cols[self.key_col],
            cols[KEY_GROUP],
            self._emit,
            _unsorted,
            self.current,
            self.current_group,
            self.count,
            _NO_KEY,
        )
        if rejected:
            self.ctx.metrics.records_rejected += rejected

    def _finish(self) -> None:
        if self.current is not _NO_KEY:
            self._emit(self.current, self.count)
            self.current = _NO_KEY
        self._finish_sink()


class SortedCount(_CountOperator):
    """FLIP-140: sorted input, a single-key state backend, per record one ``get`` + ``put``;
    when a key's run ends its count is read once more and emitted (the end-of-key timer).

    Unsorted input fails in the backend with :class:`~skewlab.errors.UnsortedInputError` as
    soon as a finished key comes back -- never with a wrong count.
    """

    def __init__(self, ctx: SubtaskContext, *, key_col: str = WORD, sink: str = "collect") -> None:
        super().__init__(ctx, key_col=key_col, sink=sink)
        self.backend = create_backend("single_key")
        self._state = self.backend.value_state_core()
        self.current: Any = _NO_KEY
        self.current_group = -1

    def _process(self, cols, n, arrivals) -> None:
        self.current, self.current_group, rejected = sorted_count(
            cols[self.key_col],
            cols[KEY_GROUP],
            self._state,
            self._emit,
            self.current,
            self.current_group,
            _NO_KEY,
        )
        if rejected:
            self.ctx.metrics.records_rejected += rejected

    def _finish(self) -> None:
        if self.current is not _NO_KEY:
            self._emit(self.current, self.backend.get(self.current_group, self.current))
            self.current = _NO_KEY
        self._finish_sink()

    def close(self) -> dict[str, Any]:
        stats = self.backend.stats
        self.backend.close()
        return {
            "backend": "single_key",
            "reads": stats.reads,
            "writes": stats.writes,
            "cpu_ns": self.cpu_ns,
        }


# --------------------------------------------------------------------------- running


@dataclass
class CountRun:
    """One count run: what it measured, and its result (``counts`` or ``digest``).

    ``operator_seconds`` is the time spent inside the operators, summed over subtasks (what
    Flink's operator metrics show); ``wall_seconds`` the Spark job's (records routed, shuffled,
    sorted where asked, replayed through the operators, results collected).
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
    state_reads: int | None = None
    state_writes: int | None = None
    cache_hits: int | None = None
    cache_misses: int | None = None
    checkpoints: int | None = None
    hit_ratio_per_interval: list[tuple[float, float | None]] = field(default_factory=list)

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
            "keys": self.keys,
            "cache_entries": self.cache_entries,
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
        }


def hit_ratio_gauge(samples: Iterable[tuple[float, float | None]]) -> float | None:
    """FLIP-325's ``stateCacheHitRatio`` gauge: the hit ratio averaged over per-second samples.

    ``samples`` are ``(seconds since start, hit ratio of the interval)``, as a cached
    :class:`KeyedCount` records them at every checkpoint.

    Example::

        >>> hit_ratio_gauge([(1.0, 0.5), (2.0, 0.5), (2.3, 1.0)])
        0.6666666666666666
        >>> hit_ratio_gauge([]) is None
        True
    """
    values = [v for _, v in samples if v is not None]
    return sum(values) / len(values) if values else None


def _order_by(order: str, key_col: str) -> tuple[str, ...]:
    return {"arrival": (SEQ,), "exchange": (), "key": (KEY_GROUP, key_col)}[order]


def run_count(
    df,
    strategy: str,
    *,
    spark=None,
    parallelism: int | None = None,
    max_parallelism: int | None = None,
    key_type: str | None = None,
    cache_entries: int = 1000,
    emit: str = "end",
    checkpoint_interval_ms: float | None = None,
    sink: str = "collect",
    input_order: str | None = None,
) -> CountRun:
    """Count the records of ``df`` per ``word`` with ``strategy`` (see :data:`STRATEGIES`).

    ``df`` has a ``word`` column (bigint or string; nulls are rejected and counted) and a
    ``seq`` column (arrival order). ``input_order`` defaults to ``arrival`` for the keyed
    strategies and ``key`` for ``sort_group`` / ``sorted``; a sorted strategy run in
    ``arrival`` order fails with :class:`~skewlab.errors.UnsortedInputError` (Spark wraps it).
    Bad parameters raise :class:`~skewlab.errors.SkewlabInputError` before Spark starts work.
    """
    from skewlab.runtime import StageSpec, collect_stage, run_stage

    if strategy not in STRATEGIES:
        raise SkewlabInputError(
            f"unknown count strategy {strategy!r}: use one of {', '.join(STRATEGIES)}"
        )
    if sink not in SINKS:
        raise SkewlabInputError(f"unknown sink {sink!r}: use one of {', '.join(SINKS)}")
    if strategy == "cached":
        validate_cache_size(cache_entries)
    dtypes = dict(df.dtypes)
    if WORD not in dtypes or SEQ not in dtypes:
        raise SkewlabInputError(f"count input needs columns {WORD!r} and {SEQ!r}, has {df.columns}")
    spark_key = dtypes[WORD]
    if spark_key not in ("bigint", "string"):
        raise SkewlabInputError(f"column {WORD!r} must be bigint or string, is {spark_key}")
    inferred = "int" if spark_key == "bigint" else "string"
    if key_type is not None and key_type not in KEY_TYPES:
        raise SkewlabInputError(f"unknown key type {key_type!r}: use one of {', '.join(KEY_TYPES)}")
    if key_type is not None and key_type != inferred:
        raise SkewlabInputError(
            f"key type {key_type!r} does not match column {WORD!r} ({spark_key})"
        )
    sorted_strategy = strategy in ("sort_group", "sorted")
    order = input_order or ("key" if sorted_strategy else "arrival")
    if order not in INPUT_ORDERS:
        raise SkewlabInputError(
            f"unknown input order {order!r}: use one of {', '.join(INPUT_ORDERS)}"
        )
    if checkpoint_interval_ms is not None and (
        not isinstance(checkpoint_interval_ms, int | float)
        or not math.isfinite(checkpoint_interval_ms)
        or checkpoint_interval_ms <= 0
    ):
        raise SkewlabInputError(
            f"checkpoint interval must be > 0 ms, got {checkpoint_interval_ms!r}"
        )
    spark = spark or df.sparkSession
    config = RunConfig(
        "sorted" if sorted_strategy else "naive",
        parallelism=parallelism,
        max_parallelism=max_parallelism,
        backend=strategy if strategy in KEYED_BACKENDS else "rocksdb",
        cache_entries=cache_entries,
    ).resolved(spark.sparkContext.defaultParallelism)

    if strategy == "spark_sql":
        digest, counts, wall, processed, rejected = spark_count(df, collect=sink == "collect")
        return CountRun(
            strategy=strategy,
            key_type=inferred,
            parallelism=config.parallelism or 1,
            records=processed,
            rejected=rejected,
            wall_seconds=wall,
            operator_seconds=None,
            peak_memory_bytes=None,
            digest=digest,
            counts=counts,
        )

    if strategy in KEYED_BACKENDS:
        operator = partial(
            KeyedCount,
            backend=strategy,
            cache_entries=cache_entries,
            emit=emit,
            checkpoint_interval_ms=checkpoint_interval_ms,
            sink=sink,
        )
    else:
        operator = partial(SortGroupCount if strategy == "sort_group" else SortedCount, sink=sink)
    stage = StageSpec(
        name=f"1:count-{strategy}",
        config=config,
        key_col=WORD,
        operator=operator,
        final=True,
        serializer=PickleSerializer(),
        key_type=spark_key,
        order_by=_order_by(order, WORD),
        input_columns=(SEQ,),
    )
    out = collect_stage(run_stage(df, spark, stage), stage.serializer)
    metrics = out.metrics
    if sink == "digest":
        digest = CountDigest(0, 0, 0)
        for value in out.results.values():
            digest = digest + CountDigest(*value)
        counts = None
    else:
        counts = out.results
        digest = count_digest(counts)
    states = [m.state for m in metrics]
    keyed = strategy in KEYED_BACKENDS
    cached = strategy == "cached"
    gauge: list[tuple[float, float | None]] = []
    for s in states:
        gauge.extend(tuple(g) for g in s.get("hit_ratio_per_interval") or [])
    records = sum(m.records_in for m in metrics)
    rejected = sum(m.records_rejected for m in metrics)
    return CountRun(
        strategy=strategy,
        key_type=inferred,
        parallelism=config.parallelism or 1,
        records=records - rejected,
        rejected=rejected,
        wall_seconds=out.wall_seconds,
        operator_seconds=sum(m.operator_ns for m in metrics) / 1e9,
        operator_cpu_seconds=sum(s.get("cpu_ns", 0) for s in states) / 1e9,
        peak_memory_bytes=max((m.peak_memory_bytes for m in metrics), default=0),
        digest=digest,
        counts=counts,
        cache_entries=cache_entries if cached else None,
        state_reads=sum(s.get("reads", 0) for s in states) if strategy != "sort_group" else None,
        state_writes=sum(s.get("writes", 0) for s in states) if strategy != "sort_group" else None,
        cache_hits=sum(s.get("cache_hits", 0) for s in states) if cached else None,
        cache_misses=sum(s.get("cache_misses", 0) for s in states) if cached else None,
        checkpoints=sum(s.get("checkpoints", 0) for s in states) if keyed else None,
        hit_ratio_per_interval=sorted(gauge),
    )


def spark_count(df, *, collect: bool = False):
    """Spark's own ``groupBy(word).count()`` (null words left out), timed.

    Returns ``(CountDigest, counts or None, wall seconds, records counted, null words)``. The
    digest is computed by Spark too (``xxhash64(concat_ws(':', word, count))`` summed as a
    decimal), so nothing per key leaves the JVM unless ``collect`` is asked for.
    """
    from pyspark.sql import functions as F

    started = time.perf_counter()
    present = df.where(F.col(WORD).isNotNull())
    counts_df = present.groupBy(WORD).count()
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
    nulls = df.where(F.col(WORD).isNull()).count() if collect else 0
    return digest, counts, wall, digest.total, nulls
