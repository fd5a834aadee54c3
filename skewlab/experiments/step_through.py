"""Step-through runs: a small real run on Spark, traced record by record, for the chapters to
play back.

Each function runs one mechanism the seeds draw on a small input, with the operator chain
traced (:mod:`skewlab.operators.traced`), and returns a :class:`Trace`: the events in an order
the run could have taken (:func:`~skewlab.operators.traced.read_trace`), the state after each
one (:meth:`Trace.steps`), and what the run's sink collected. The run is the engine's own --
Spark routes the records by Flink's key groups, the real operator and state backend handle
them -- only fed one record at a time.

==========================  ====================================================================
:func:`trace_key_groups`    records reaching subtasks through key groups (chapter 00): a keyed
                            count of a few Zipf views per tweet
:func:`trace_buffer`        seed 000's buffer filling and flushing (chapter 03): the list
                            buffer over a keyed reduce of the views, count-triggered
:func:`trace_cache`         FLIP-325's LRU hitting, missing and evicting (chapter 04): a keyed
                            count of keys in a cycle, behind a cache of a few entries
:func:`trace_salting`       salting's running partials double-counted (chapter 02): the seed's
                            salted counter, a running count per sub-key summed per tweet
:func:`trace_rescaling`     a savepoint's key groups read by the new subtasks (chapter 06): the
                            naive reduce stopped with a savepoint, restored at another
                            parallelism
==========================  ====================================================================

Example::

    >>> trace = trace_cache(spark, n_records=12, n_keys=3, cache_entries=2)  # doctest: +SKIP
    >>> trace.describe(trace.steps()[3])                                      # doctest: +SKIP
    'record 4 of 12: key 0 (key group 31) -> subtask 0: a miss: read from RocksDB; ...'
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from skewlab.aggregates.stats_state import StatsSerializer, StatsState
from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, run_stage
from skewlab.engine.recovery import Recovery
from skewlab.engine.savepoint import begin_savepoint, publish_savepoint
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError
from skewlab.experiments.salting import counter_stages
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.inputs.wordcount import SEQ, WORD, wordcount_input
from skewlab.operators.buffers import BUFFERS
from skewlab.operators.reduce import KeyedReduce
from skewlab.operators.running_count import PairSerializer
from skewlab.operators.traced import STATE_COUNTERS, json_value, read_trace, traced_stage
from skewlab.state.api import PickleSerializer
from skewlab.state.restore import check_new_parallelism
from skewlab.strategies.buffered import Buffered
from skewlab.strategies.count import CountJob
from skewlab.strategies.keyed import VIEW_INPUT, upstream, with_seq
from skewlab.strategies.naive import Naive
from skewlab.strategies.salted import with_salt
from skewlab.validation import check_whole

__all__ = [
    "MAX_TRACED_RECORDS",
    "Trace",
    "trace_buffer",
    "trace_cache",
    "trace_key_groups",
    "trace_rescaling",
    "trace_salting",
]

#: The most records a step-through traces: every record is one event, one step to play.
MAX_TRACED_RECORDS = 500


@dataclass
class Trace:
    """A traced run: its mechanism, settings, events (in :func:`read_trace`'s order) and
    collected results.

    ``results`` are the run's sink, as the trace's ``final`` events write them (keys as
    strings; a tweet's state as its statistics), so that :meth:`final_state` can be held
    against them.
    """

    mechanism: str
    parameters: dict[str, Any]
    events: list[dict[str, Any]]
    results: dict[str, Any]
    records_in: int
    key_group_ranges: dict[int, tuple[int, int]] = field(default_factory=dict)
    _steps: list[dict[str, Any]] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def source_stage(self) -> str:
        """The first stage: the one that reads the source's records."""
        return min(e["stage"] for e in self.events)

    @property
    def records(self) -> int:
        """Source records in the trace (one record event each at the first stage)."""
        source = self.source_stage
        return sum(e["kind"] == "record" and e["stage"] == source for e in self.events)

    def final_state(self, stage: str | None = None) -> dict[str, Any]:
        """Every key's state at the end of ``stage`` (default: the last), merged over its
        subtasks' ``finish`` events."""
        stage = stage or max(e["stage"] for e in self.events)
        state: dict[str, Any] = {}
        for event in self.events:
            if event["kind"] == "finish" and event["stage"] == stage and event.get("final"):
                overlap = state.keys() & event["final"].keys()
                if overlap:
                    raise RuntimeError(f"keys {sorted(overlap)[:5]} ended in two subtasks")
                state |= event["final"]
        return state

    def steps(self) -> list[dict[str, Any]]:
        """The state after each event, in the trace's order: the event itself, source records
        so far per subtask and per key, the state backends' counters so far (summed over
        subtasks and stages), the flushes so far, per subtask its buffer's records per key (the
        records it received since its last flush) and the keys its cache holds, the records
        this step flushed, and per stage each key's latest emitted value.
        """
        if self._steps is None:
            self._steps = self._replay()
        return self._steps

    def _replay(self) -> list[dict[str, Any]]:
        """:meth:`steps`, computed from the events (once per trace)."""
        parallelism, source = self.parameters["parallelism"], self.source_stage
        per_subtask = [0] * parallelism
        per_key: Counter = Counter()
        totals = dict.fromkeys((*STATE_COUNTERS, "flushes", "records_out"), 0)
        held: dict[int, Counter] = {}  # per subtask: its buffer's records per key
        cached: dict[int, list] = {}
        emitted: dict[str, dict[str, Any]] = {}
        steps = []
        for event in self.events:
            subtask, flushed = event["subtask"], 0
            for key, value in event.get("emitted", ()):
                emitted.setdefault(event["stage"], {})[str(key)] = value
            if event["kind"] == "record" and event["stage"] == source:
                per_subtask[subtask] += 1
                per_key[str(event["key"])] += 1
            for name, change in (*event["state"].items(), *event["out"].items()):
                if name in totals:
                    totals[name] += change
            if "buffered_keys" in event:
                counter = held.setdefault(subtask, Counter())
                if event["kind"] == "record":
                    counter[str(event["key"])] += 1
                if event["out"].get("flushes"):
                    flushed = sum(counter.values())
                    counter.clear()
            if "cached_keys" in event:
                cached[subtask] = [str(k) for k in event["cached_keys"]]
            steps.append(
                {
                    "event": event,
                    "records_per_subtask": list(per_subtask),
                    "records_per_key": dict(per_key),
                    "totals": dict(totals),
                    "buffered": {s: dict(c) for s, c in held.items()},
                    "flushed": flushed,
                    "cached_keys": {s: list(k) for s, k in cached.items()},
                    "emitted": {name: dict(values) for name, values in emitted.items()},
                }
            )
        return steps

    def describe(self, step: dict[str, Any]) -> str:
        """One line on what ``step`` did, in the words of the mechanism, from its event."""
        event = step["event"]
        state, out = event["state"], event["out"]
        done = sum(step["records_per_subtask"])
        if self.mechanism == "salting" and event["kind"] == "record":
            return self._describe_salting(event, done)
        if event["kind"] == "record":
            head = (
                f"record {done} of {self.records}: key {event['key']} "
                f"(key group {event['key_group']}) -> subtask {event['subtask']}"
            )
        elif event["kind"] == "restore":
            return self._describe_restore(event)
        elif event["kind"] == "timer":
            head = f"subtask {event['subtask']}: its timer fired"
        else:
            head = f"subtask {event['subtask']}: end of input"
        what = []
        if state.get("cache_hits"):
            what.append("a hit: the object was in the cache")
        if state.get("cache_misses"):
            what.append("a miss: read from RocksDB")
        if state.get("evictions"):
            written = state.get("writes", 0)
            what.append(
                f"evicted {state['evictions']} entr{'y' if state['evictions'] == 1 else 'ies'}"
                + (f", {written} dirty: written to RocksDB" if written else "")
            )
        if out.get("flushes"):
            writes = state.get("writes", 0)
            what.append(
                f"flush: {step['flushed']} records of {writes} key(s) merged into keyed state "
                f"with {state.get('reads', 0)} read(s) and {writes} write(s) -- one each per key, "
                f"where the naive reduce pays one each per record"
            )
        elif "buffered" in event and event["kind"] == "record":
            what.append(
                f"buffered: {event['buffered']} of {self.parameters['max_count']} records held"
            )
        if self.mechanism == "key_groups" and event["kind"] == "record":
            lo, hi = self.key_group_ranges[event["subtask"]]
            what.append(f"subtask {event['subtask']} owns key groups {lo}-{hi}")
        return head + (": " + "; ".join(what) if what else "")

    def _describe_restore(self, event: dict[str, Any]) -> str:
        lo, hi = self.key_group_ranges[event["subtask"]]
        reads = " and ".join(
            f"{r['key_groups'][0]}-{r['key_groups'][1]} of {r['file']}" for r in event["reads"]
        )
        done = event["restored"]
        return (
            f"new subtask {event['subtask']} (key groups {lo}-{hi}) reads {reads}: "
            f"{done['files_opened']} file(s), {done['keys_kept']} entries, "
            f"{done['bytes_read']:,} bytes"
        )

    def _describe_salting(self, event: dict[str, Any], done: int) -> str:
        (key, value), *_ = event["emitted"] or [(None, None)]
        if event["stage"] == self.source_stage:
            salt, running = value
            return (
                f"record {done} of {self.records}: a view of {key} salted to {event['key']} "
                f"(key group {event['key_group']}) -> subtask {event['subtask']}: the "
                f"sub-key's running count {running} goes downstream"
            )
        salt, running = self._sent_downstream()[event["seq"]]
        seeds, right = value
        return (
            f"stage 2, subtask {event['subtask']}: {key}'s partial from {key}-{salt} "
            f"(running count {running}) arrives: the seed's sum {seeds}, the right count {right}"
        )

    def _sent_downstream(self) -> dict[int, Any]:
        """What the first stage sent downstream, by the ``seq`` of the record it came from."""
        source = self.source_stage
        return {
            e["seq"]: value
            for e in self.events
            if e["stage"] == source and e["kind"] == "record"
            for _, value in e["emitted"]
        }


def _check_records(n_records: int) -> None:
    check_whole("n_records (records to trace)", n_records, 1)
    if n_records > MAX_TRACED_RECORDS:
        raise SkewlabInputError(
            f"n_records={n_records}: a step-through traces at most {MAX_TRACED_RECORDS} records "
            "(one step each)"
        )


def _run_traced(spark, df, stages, job: JobConfig, serializer, results_map=None):
    """Run ``stages`` (one stage, or several chained) over ``df``, traced;
    ``(events, results, records in at the first stage)``."""
    stages = [stages] if isinstance(stages, StageSpec) else list(stages)
    with tempfile.TemporaryDirectory(prefix="skewlab-trace-") as directory:
        for stage in stages:
            df = run_stage(df, spark, traced_stage(stage, directory), job)
        out = collect_stage(df, serializer)
        events = read_trace(directory)
    mapped = results_map or (lambda value: value)
    results = {str(k): json_value(mapped(v)) for k, v in out.results.items()}
    first = stages[0].name
    return events, results, sum(m.records_in for m in out.metrics if m.stage == first)


def _views_stage(name: str, operator) -> StageSpec:
    """A keyed strategy's one stage over the views (``keyBy(tweet_id)``, the seed's
    ``.map(_.toStats)`` after it), as :func:`~skewlab.strategies.keyed.run_single_stage` runs
    it."""
    return StageSpec(
        name=name,
        key_col="tweet_id",
        operator=operator,
        final=True,
        serializer=StatsSerializer,
        input_columns=VIEW_INPUT,
        output_map=StatsState.to_stats,
    )


def _key_group_ranges(job: JobConfig) -> dict[int, tuple[int, int]]:
    """Each subtask's key groups, first and last (Flink's ``KeyGroupRange``)."""
    ranges = {s: job.key_group_range(s) for s in range(job.parallelism)}
    return {s: (r.start_key_group, r.end_key_group) for s, r in ranges.items()}


def _resolved(spark, parallelism: int, max_parallelism: int) -> JobConfig:
    return JobConfig(
        parallelism=parallelism, max_parallelism=max_parallelism, disk_profile=None
    ).resolved(spark.sparkContext.defaultParallelism)


def _zipf_views(spark, n_records: int, n_keys: int, skew: float, seed: int):
    """A few Zipf views: ``n_records`` views of ``n_keys`` tweets by as many users."""
    return generate_views(spark, ViewSpec(n_records, n_records, n_keys, "zipf", skew, seed))


def _trace(mechanism: str, job: JobConfig, ran: tuple, **parameters: Any) -> Trace:
    """The :class:`Trace` of a run under ``job``: ``ran`` is :func:`_run_traced`'s
    ``(events, results, records in)``; the job's parallelism, max parallelism and key-group
    ranges join ``parameters``."""
    events, results, records_in = ran
    return Trace(
        mechanism=mechanism,
        parameters=parameters
        | {"parallelism": job.parallelism, "max_parallelism": job.max_parallelism},
        events=events,
        results=results,
        records_in=records_in,
        key_group_ranges=_key_group_ranges(job),
    )


def _count_trace(mechanism, spark, df, count: CountJob, key_type: str, job: JobConfig, params):
    stage = StageSpec(
        name=f"1:count-{count.strategy}",
        key_col=WORD,
        operator=count.operator(),
        final=True,
        serializer=PickleSerializer(),
        key_type=key_type,
        order_by=count.order_by,
    )
    return _trace(mechanism, job, _run_traced(spark, df, stage, job, stage.serializer), **params)


def trace_key_groups(
    spark,
    *,
    n_records: int = 40,
    n_keys: int = 8,
    skew: float = 1.1,
    parallelism: int = 4,
    max_parallelism: int = 128,
    seed: int = 1,
) -> Trace:
    """A keyed count of ``n_records`` Zipf views (exponent ``skew``) over ``n_keys`` tweets, at
    ``parallelism`` subtasks: each record's key group and the subtask that owns it.

    Example::

        >>> trace = trace_key_groups(spark, parallelism=4)                # doctest: +SKIP
        >>> trace.steps()[-1]["records_per_subtask"]                      # doctest: +SKIP
        [3, 29, 0, 8]
    """
    _check_records(n_records)
    check_whole("n_keys (tweets)", n_keys, 1)
    job = _resolved(spark, parallelism, max_parallelism)
    views = _zipf_views(spark, n_records, n_keys, skew, seed)
    df = views.select(views.tweet_id.alias(WORD), views.seq.alias(SEQ))
    params = {"n_records": n_records, "n_keys": n_keys, "skew": skew, "seed": seed}
    return _count_trace("key_groups", spark, df, CountJob(strategy="heap"), "string", job, params)


def trace_cache(
    spark, *, n_records: int = 24, n_keys: int = 6, cache_entries: int = 4, parallelism: int = 1
) -> Trace:
    """A keyed count of ``n_records`` records whose keys cycle through ``0 .. n_keys - 1`` (the
    access pattern of FLIP-325's benchmark, in small), on RocksDB behind an LRU cache of
    ``cache_entries`` objects: every lookup's hit or miss, every eviction and write-back.

    Example::

        >>> trace = trace_cache(spark, n_keys=6, cache_entries=4)         # doctest: +SKIP
        >>> trace.steps()[-1]["totals"]["cache_hits"]    # a cycle longer than the cache   # doctest: +SKIP
        0
    """  # noqa: E501
    _check_records(n_records)
    check_whole("n_keys (distinct keys)", n_keys, 1)
    count = CountJob(strategy="cached", cache_entries=cache_entries)
    job = _resolved(spark, parallelism, 128)
    df = wordcount_input(spark, n_records, n_keys)
    params = {"n_records": n_records, "n_keys": n_keys, "cache_entries": cache_entries}
    return _count_trace("cache", spark, df, count, "bigint", job, params)


def trace_buffer(
    spark,
    *,
    n_records: int = 40,
    n_keys: int = 4,
    skew: float = 1.1,
    max_count: int = 8,
    parallelism: int = 1,
    seed: int = 1,
) -> Trace:
    """Seed 000's list buffer (``max_count`` records, count-triggered) over a keyed reduce of
    ``n_records`` Zipf views of ``n_keys`` tweets on RocksDB: the buffer filling, then each
    flush merging one partial per key into keyed state.

    Example::

        >>> trace = trace_buffer(spark, n_records=40, max_count=8)        # doctest: +SKIP
        >>> trace.steps()[-1]["totals"]["flushes"]                        # doctest: +SKIP
        5
    """
    _check_records(n_records)
    check_whole("n_keys (tweets)", n_keys, 1)
    params = Buffered(buffer="list", max_count=max_count, trigger_interval_ms=0)
    job = _resolved(spark, parallelism, 128)
    views = _zipf_views(spark, n_records, n_keys, skew, seed)
    stage = _views_stage(
        "1:buffered",
        partial(
            BUFFERS[params.buffer],
            state_backend=params.state_backend(),
            max_count=params.max_count,
            trigger_interval_ms=params.trigger_interval_ms,
            precision=params.precision,
        ),
    )
    ran = _run_traced(
        spark, upstream(views, params), stage, job, StatsSerializer, StatsState.to_stats
    )
    return _trace(
        "buffer", job, ran, n_records=n_records, n_keys=n_keys, skew=skew,
        max_count=max_count, seed=seed, backend=params.backend,
    )  # fmt: skip


def trace_salting(
    spark,
    *,
    n_records: int = 24,
    n_keys: int = 2,
    skew: float = 1.1,
    salt_buckets: int = 2,
    parallelism: int = 2,
    seed: int = 1,
) -> Trace:
    """The seed's salted counter (:func:`~skewlab.experiments.salting.counter_stages`) over
    ``n_records`` Zipf views of ``n_keys`` tweets, each salted into ``salt_buckets`` sub-keys,
    on RocksDB: stage 1 sends each sub-key's *running* count downstream after every record,
    stage 2 adds them up per tweet (the seed's sum) beside the right count.

    Example::

        >>> trace = trace_salting(spark, n_records=24, salt_buckets=2)    # doctest: +SKIP
        >>> trace.results                                                  # doctest: +SKIP
        {'tweet-0': [62, 15], 'tweet-1': [37, 9]}
    """
    _check_records(n_records)
    check_whole("n_keys (tweets)", n_keys, 1)
    check_whole("salt_buckets (sub-keys per tweet)", salt_buckets, 1)
    job = _resolved(spark, parallelism, 128)
    views = _zipf_views(spark, n_records, n_keys, skew, seed)
    salted = with_salt(with_seq(views), "tweet_id", "view_id", salt_buckets)
    ran = _run_traced(spark, salted, counter_stages("rocksdb"), job, PairSerializer)
    return _trace(
        "salting", job, ran, n_records=n_records, n_keys=n_keys, skew=skew,
        salt_buckets=salt_buckets, seed=seed,
    )  # fmt: skip


def trace_rescaling(
    spark,
    *,
    n_records: int = 40,
    n_keys: int = 8,
    skew: float = 1.1,
    parallelism: int = 2,
    new_parallelism: int = 3,
    max_parallelism: int = 128,
    savepoint_at: int | None = None,
    seed: int = 1,
) -> Trace:
    """Seed 002's rescaling on a real run: the naive keyed reduce of ``n_records`` Zipf views
    stops with a savepoint after ``savepoint_at`` records (default: half) at ``parallelism``;
    a second job restores it at ``new_parallelism`` -- each new subtask reads, from each old
    subtask's file, the key groups it owns -- and processes the rest. The trace is the second
    job's: its restores (one per new subtask), then its records. ``parameters["savepoint"]``
    holds the savepoint's files, each with its key groups and entries per key group.

    Example::

        >>> trace = trace_rescaling(spark, parallelism=2, new_parallelism=3)  # doctest: +SKIP
        >>> [e["reads"] for e in trace.events if e["kind"] == "restore"][1]  # doctest: +SKIP
        [{'state': 'value', 'file': 'subtask-0.kgs', 'file_key_groups': [0, 63], ...
    """
    _check_records(n_records)
    check_whole("n_keys (tweets)", n_keys, 1)
    savepoint_at = n_records // 2 if savepoint_at is None else savepoint_at
    check_whole("savepoint_at (records before the savepoint)", savepoint_at, 1)
    if savepoint_at >= n_records:
        raise SkewlabInputError(
            f"savepoint_at={savepoint_at}: the savepoint must come before the last of the "
            f"{n_records} records"
        )
    check_whole("new_parallelism", new_parallelism, 1)
    params = Naive(backend="heap")
    views = _zipf_views(spark, n_records, n_keys, skew, seed)
    stage = _views_stage(
        "1:naive",
        partial(KeyedReduce, state_backend=params.state_backend(), precision=params.precision),
    )
    job = _resolved(spark, parallelism, max_parallelism)
    check_new_parallelism(new_parallelism, job.max_parallelism)
    df = upstream(views, params)
    with tempfile.TemporaryDirectory(prefix="skewlab-savepoint-") as scratch:
        path = Path(scratch) / "savepoint"
        work = begin_savepoint(path)
        stopping = replace(job, recovery=Recovery(stop_at=savepoint_at, savepoint_dir=str(work)))
        first = collect_stage(run_stage(df, spark, stage, stopping), StatsSerializer)
        savepoint = publish_savepoint(
            work, path, max_parallelism=job.max_parallelism, parallelism=job.parallelism,
            source_position=savepoint_at, job={"strategy": params.name},
        )  # fmt: skip
        files = [
            {
                "file": handle.file,
                "key_groups": [
                    handle.key_group_range.start_key_group,
                    handle.key_group_range.end_key_group,
                ],
                "entries": list(handle.entries),
            }  # fmt: skip
            for handle in savepoint.operators[stage.name].keyed["value"].handles
        ]
        resumed = replace(
            job, parallelism=new_parallelism, recovery=Recovery(restore_from=str(path))
        )
        events, second, records_in = _run_traced(
            spark, df, stage, resumed, StatsSerializer, StatsState.to_stats
        )
    before = {str(k): json_value(StatsState.to_stats(v)) for k, v in first.results.items()}
    return _trace(
        "rescaling", resumed, (events, before | second, records_in), n_records=n_records,
        n_keys=n_keys, skew=skew, seed=seed, old_parallelism=job.parallelism,
        savepoint_at=savepoint_at, savepoint=files,
    )  # fmt: skip
