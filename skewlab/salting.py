"""The salting lesson of seed 000, shown on real runs of the keyed runtime.

Key salting splits a hot key into ``salt_buckets`` sub-keys, aggregates each sub-key on its own
subtask, strips the salt and merges the partials per key. The seed's word count does it like
this (Flink's Scala API)::

    .keyingBy(saltedWord).reduceWith((saltedWord, acc + 1))     // stage 1: running count
    .mapWith((saltedWord.split("-").head, count))                // unsalt
    .keyingBy(word).reduceWith((word, total + partialSum))       // stage 2: sum the partials

Two things go wrong, and this module measures both:

1. **The double count.** Flink's ``reduce`` emits its *running* aggregate after every record, so
   a sub-key with ``n`` records sends ``1, 2, ..., n`` downstream and ``total + partialSum``
   adds up ``n(n+1)/2`` instead of ``n``. :func:`salted_counter` runs exactly that pipeline (a
   counting keyed reduce, then a summing reduce, both on the runtime) and puts the wrong number
   next to the right one. The HyperLogLog union of :mod:`skewlab.strategies.salted` goes through
   the very same running partials and still ends with the reference's registers, because a
   register-wise max is idempotent: :func:`salted_hll` checks that register by register.
2. **Order.** Records of one key take different paths through salting, and the final reduce sees
   them in whatever order the exchange delivers. :func:`lifecycle_order` replays per user a
   ``created`` event followed by a ``deleted`` event through salting and through seed 000's buffer
   and counts, at the operator that applies the events to the user's state, the events that
   arrive after a later one (:attr:`RunResult.order_violations`) and the accounts that end up
   alive although they were deleted.

Example::

    >>> from skewlab.spark import get_spark
    >>> from skewlab.views import ViewSpec, generate_views
    >>> spark = get_spark()
    >>> views = generate_views(spark, ViewSpec(2_000, 500, 5, seed=1))
    >>> counter = salted_counter(views, salt_buckets=4, parallelism=2)    # doctest: +SKIP
    >>> counter.table[["tweet_id", "views", "salted_sum", "fixed_sum"]]   # doctest: +SKIP
      tweet_id  views  salted_sum  fixed_sum
    0  tweet-0    427       23062        427
    1  tweet-4    427       23266        427
    ...
    >>> events = lifecycle_events(spark, n_users=1_000)
    >>> lifecycle_table(events, parallelism=2)                           # doctest: +SKIP
"""

from __future__ import annotations

import pickle
import struct
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from skewlab.operators import StatefulOperator
from skewlab.runtime import (
    KEY_GROUP,
    RunConfig,
    RunResult,
    StageSpec,
    SubtaskContext,
    collect_stage,
    fold_metrics,
    run_stage,
    validate_config,
)
from skewlab.strategies.salted import SALT, SALTED_KEY, with_salt

CREATED, DELETED = "created", "deleted"
ACTIVE = "active"


# --------------------------------------------------------------------------- serialisers


class PairSerializer:
    """Two signed 64-bit integers, e.g. ``(salt, running count)`` (what travels downstream)."""

    _format = struct.Struct("<qq")

    @classmethod
    def dumps(cls, value: tuple[int, int]) -> bytes:
        return cls._format.pack(*value)

    @classmethod
    def loads(cls, data: bytes) -> tuple[int, int]:
        return cls._format.unpack(data)


class PickleValues:
    """Any small Python value (events and account statuses)."""

    @staticmethod
    def dumps(value: Any) -> bytes:
        return pickle.dumps(value, protocol=5)

    @staticmethod
    def loads(data: bytes) -> Any:
        return pickle.loads(data)  # noqa: S301 - our own values, produced by our own subtasks


class _KeyedOperator(StatefulOperator):
    """The salting operators' keyed state: the config's backend, values pickled."""

    serializer = None


# --------------------------------------------------------------------------- 1. double count


class RunningCount(_KeyedOperator):
    """Stage 1 of the seed's word count: ``keyBy(saltedWord) -> reduce(acc + 1)``.

    Per record: read the sub-key's count, add one, write it back and emit the *running* count
    downstream as ``(word, (salt, count))`` -- Flink's ``reduce`` emits after every record.
    """

    columns = (SALTED_KEY, "tweet_id", SALT, KEY_GROUP, "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, words, salts = cols[SALTED_KEY], cols["tweet_id"], cols[SALT]
        groups, seqs = cols[KEY_GROUP], cols["seq"]
        get, put, emit = self.backend.get, self.backend.put, self.ctx.emit
        clock = time.time_ns
        for i in range(n):
            key = keys[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            count = (get(groups[i], key) or 0) + 1
            put(groups[i], key, count)
            emit(words[i], (salts[i], count), arrival, seqs[i])


class SumOfPartials(_KeyedOperator):
    """Stage 2: ``keyBy(word) -> reduce(total + partialSum)``, beside a correct variant.

    The state of a word holds the seed's ``total`` (every running partial added: wrong) and
    the latest running count of each sub-key (their sum is right: a newer running count
    *replaces* the older one instead of adding to it). Emits ``(seed_total, fixed_total)``.
    Running counts only grow, so "latest" is the maximum whatever order the exchange delivers.
    """

    columns = ("key", "value", KEY_GROUP, "arrival_ns", "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, values, groups = cols["key"], cols["value"], cols[KEY_GROUP]
        arrived, seqs = cols["arrival_ns"], cols["seq"]
        get, put, emit = self.backend.get, self.backend.put, self.ctx.emit
        loads = PairSerializer.loads
        for i in range(n):
            key = keys[i]
            salt, running = loads(values[i])
            total, latest = get(groups[i], key) or (0, {})
            total += running  # the seed's ``total + partialSum``
            latest[salt] = max(latest.get(salt, 0), running)
            put(groups[i], key, (total, latest))
            emit(key, (total, sum(latest.values())), arrived[i], seqs[i])


@dataclass
class CounterResult:
    """The salted counter's outcome: a table per key and the run's metrics.

    ``table`` columns: ``tweet_id``; ``views`` (the right count, from Spark's ``groupBy``);
    ``salted_sum`` (the seed's ``total + partialSum`` over running partials, as measured);
    ``over_count`` (``salted_sum / views``); ``fixed_sum`` (latest running count per sub-key,
    summed, as measured). Hottest key first.
    """

    table: pd.DataFrame
    run: RunResult
    salt_buckets: int


def salted_counter(
    views,
    *,
    salt_buckets: int = 4,
    parallelism: int | None = None,
    backend: str = "rocksdb",
    spark=None,
) -> CounterResult:
    """Count views per tweet the seed's salted way, on the runtime; compare with the truth.

    Stage 1 (``keyBy (tweet, salt)``, :class:`RunningCount`) and stage 2 (``keyBy tweet``,
    :class:`SumOfPartials`) run as two keyed stages with an exchange between them, one state
    backend (``backend``) per subtask. The right count comes from Spark's own ``groupBy``.

    Example::

        >>> result = salted_counter(views, salt_buckets=4, parallelism=2)  # doctest: +SKIP
        >>> (result.table["salted_sum"] > result.table["views"]).all()     # doctest: +SKIP
        True
        >>> (result.table["fixed_sum"] == result.table["views"]).all()     # doctest: +SKIP
        True
    """
    from pyspark.sql import functions as F

    from skewlab.strategies._keyed import with_seq

    spark = spark or views.sparkSession
    config = RunConfig(
        "salted", parallelism=parallelism, backend=backend, salt_buckets=salt_buckets
    ).resolved(spark.sparkContext.defaultParallelism)
    salted = with_salt(with_seq(views), "tweet_id", "view_id", config.salt_buckets)
    stage1 = StageSpec(
        name="1:count-partial",
        config=config,
        key_col=SALTED_KEY,
        operator=RunningCount,
        final=False,
        serializer=PairSerializer,
        input_columns=("seq", "tweet_id", SALT),
    )
    stage2 = StageSpec(
        name="2:sum-partials",
        config=config,
        key_col="key",
        operator=SumOfPartials,
        final=True,
        serializer=PairSerializer,
        order_by=(),  # whatever order the exchange delivers, as in Flink
        source=False,
        input_columns=("value", "arrival_ns", "seq"),
    )
    out = collect_stage(run_stage(run_stage(salted, spark, stage1), spark, stage2), PairSerializer)
    run = fold_metrics(
        "salted-counter",
        config.parameters(),
        out.metrics,
        keys=len(out.results),
        wall_seconds=out.wall_seconds,
        digest="",
    )
    truth = (
        views.where(F.col("tweet_id").isNotNull())
        .groupBy("tweet_id")
        .agg(F.count(F.lit(1)).alias("views"))
        .toPandas()
    )
    measured = pd.DataFrame(
        [(k, total, fixed) for k, (total, fixed) in out.results.items()],
        columns=["tweet_id", "salted_sum", "fixed_sum"],
    )
    table = truth.merge(measured, on="tweet_id", how="outer")
    table["over_count"] = table["salted_sum"] / table["views"]
    table = table[["tweet_id", "views", "salted_sum", "over_count", "fixed_sum"]]
    table = table.sort_values(["views", "tweet_id"], ascending=[False, True], ignore_index=True)
    return CounterResult(table=table, run=run, salt_buckets=config.salt_buckets)


@dataclass
class HllResult:
    """The salted HLL union against the Spark SQL reference.

    ``table`` columns: ``tweet_id``, ``views`` (exact, Spark), ``salted_estimate`` and
    ``reference_estimate`` (HLL view-count estimates), ``registers_match`` (both sketches'
    registers bit-identical). ``digest`` / ``reference_digest``: the whole result's digests.
    """

    table: pd.DataFrame
    run: RunResult
    digest: str
    reference_digest: str

    @property
    def matches(self) -> bool:
        return self.digest == self.reference_digest and bool(self.table["registers_match"].all())


def salted_hll(
    views, *, salt_buckets: int = 4, parallelism: int | None = None, spark=None
) -> HllResult:
    """Run the ``salted`` strategy (HLL state, running partials summed downstream by a union)
    and compare every tweet's registers with :func:`skewlab.stats.spark_reference_aggregate`.

    Example::

        >>> salted_hll(views, salt_buckets=4, parallelism=2).matches    # doctest: +SKIP
        True
    """
    import numpy as np
    from pyspark.sql import functions as F

    from skewlab.stats import result_digest, spark_reference_aggregate
    from skewlab.strategies import run_strategy

    spark = spark or views.sparkSession
    run, states = run_strategy(
        views, RunConfig("salted", parallelism=parallelism, salt_buckets=salt_buckets), spark
    )
    reference = spark_reference_aggregate(views)
    exact = dict(
        views.where(F.col("tweet_id").isNotNull())
        .groupBy("tweet_id")
        .agg(F.count(F.lit(1)).alias("n"))
        .collect()
    )
    rows = []
    for key in sorted(set(states) | set(reference)):
        mine, ref = states.get(key), reference.get(key)
        same = (
            mine is not None
            and ref is not None
            and np.array_equal(mine.views_reg, ref.views_reg)
            and np.array_equal(mine.viewers_reg, ref.viewers_reg)
        )
        rows.append(
            {
                "tweet_id": key,
                "views": exact.get(key),
                "salted_estimate": mine.to_stats().view_count if mine else None,
                "reference_estimate": ref.to_stats().view_count if ref else None,
                "registers_match": same,
            }
        )
    table = pd.DataFrame(rows).sort_values(
        ["views", "tweet_id"], ascending=[False, True], ignore_index=True
    )
    return HllResult(table, run, run.result_digest, result_digest(reference))


def salting_summary(counter: CounterResult, hll: HllResult) -> pd.DataFrame:
    """Per tweet: the right count, the seed's salted counter, the fix, and the HLL union.

    Example::

        >>> salting_summary(salted_counter(views), salted_hll(views))   # doctest: +SKIP
    """
    hll_cols = hll.table[["tweet_id", "salted_estimate", "registers_match"]].rename(
        columns={"salted_estimate": "hll_estimate", "registers_match": "hll_registers_match"}
    )
    return counter.table.merge(hll_cols, on="tweet_id", how="left")


def subtask_loads(
    views, *, salt_buckets: int = 4, parallelism: int = 4, max_parallelism: int | None = None
) -> dict[str, pd.DataFrame]:
    """Records per operator subtask when keyed by tweet and when keyed by (tweet, salt).

    Routing only (Flink's key groups, computed in Spark), no operator runs: what salting buys is
    visible before any state is touched. Returns ``{label: DataFrame(subtask, records)}`` for
    :func:`skewlab.charts.subtask_load_figure`.

    Example::

        >>> loads = subtask_loads(views, salt_buckets=4, parallelism=4)      # doctest: +SKIP
        >>> list(loads)  # doctest: +SKIP
        ['keyBy tweet', 'keyBy (tweet, salt)']
    """
    from pyspark.sql import functions as F

    from skewlab.keygroups import compute_default_max_parallelism
    from skewlab.runtime import OPERATOR, with_key_groups

    config = RunConfig(
        "salted",
        parallelism=parallelism,
        max_parallelism=max_parallelism,
        salt_buckets=salt_buckets,
        latency_profile=None,
    )
    validate_config(config)
    max_p = max_parallelism or compute_default_max_parallelism(parallelism)
    routed = with_key_groups(
        with_salt(views, "tweet_id", "view_id", salt_buckets).where(F.col("tweet_id").isNotNull()),
        "tweet_id",
        max_p,
        parallelism,
    ).withColumnRenamed(OPERATOR, "_by_tweet")
    routed = with_key_groups(routed.drop(KEY_GROUP), SALTED_KEY, max_p, parallelism)
    counts = routed.groupBy("_by_tweet", OPERATOR).agg(F.count(F.lit(1)).alias("n")).toPandas()
    loads = {}
    for label, column in (("keyBy tweet", "_by_tweet"), ("keyBy (tweet, salt)", OPERATOR)):
        per = counts.groupby(column)["n"].sum()
        loads[label] = pd.DataFrame(
            {
                "subtask": range(parallelism),
                "records": [int(per.get(i, 0)) for i in range(parallelism)],
            }
        )
    return loads


# --------------------------------------------------------------------------- 2. order


def lifecycle_events(spark, n_users: int, *, seed: int = 0):
    """Per user a ``created`` event then a ``deleted`` event, generated in Spark.

    Columns: ``seq`` (arrival order), ``event_id`` (``event-<seq>``), ``user_id``
    (``user-<n>``) and ``event``. User ``n``'s events are ``seq`` ``2n`` and ``2n + 1``: the
    account is created and deleted right after (the seed's example). ``seed`` only changes the
    event ids, so a different seed gives a different salting of the same story.

    Example::

        >>> lifecycle_events(get_spark(), 2).orderBy("seq").toPandas()   # doctest: +SKIP
           seq   event_id user_id    event
        0    0  event-0-0  user-0  created
        1    1  event-0-1  user-0  deleted
        2    2  event-0-2  user-1  created
        3    3  event-0-3  user-1  deleted
    """
    from pyspark.sql import functions as F

    from skewlab.errors import SkewlabInputError

    if not isinstance(n_users, int) or n_users < 1:
        raise SkewlabInputError(f"n_users must be a whole number >= 1, got {n_users!r}")
    seq = F.col("id")
    return spark.range(0, 2 * n_users).select(
        seq.alias("seq"),
        F.concat(F.lit(f"event-{int(seed)}-"), seq.cast("string")).alias("event_id"),
        F.concat(F.lit("user-"), F.floor(seq / 2).cast("string")).alias("user_id"),
        F.when(seq % 2 == 0, F.lit(CREATED)).otherwise(F.lit(DELETED)).alias("event"),
    )


def apply_event(status: str | None, event: str) -> str:
    """An account's status after ``event``, applied as it arrives (last writer wins).

    Example::

        >>> apply_event(apply_event(None, "created"), "deleted")
        'deleted'
        >>> apply_event(apply_event(None, "deleted"), "created")   # out of order: resurrected
        'active'
    """
    return ACTIVE if event == CREATED else DELETED


class LatestEvent(_KeyedOperator):
    """Salting's stage 1 for events: ``keyBy (user, salt) -> reduce(latest)``.

    Keeps the sub-key's latest event and emits it, running, after every record (as Flink's
    ``reduce`` does) -- ``(user, (seq, event))`` for the next stage.
    """

    columns = (SALTED_KEY, "user_id", "event", KEY_GROUP, "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, users, events = cols[SALTED_KEY], cols["user_id"], cols["event"]
        groups, seqs = cols[KEY_GROUP], cols["seq"]
        put, emit = self.backend.put, self.ctx.emit
        clock = time.time_ns
        for i in range(n):
            if keys[i] is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            latest = (seqs[i], events[i])
            put(groups[i], keys[i], latest)
            emit(users[i], latest, arrival, seqs[i])


class ApplyEvents(_KeyedOperator):
    """Salting's stage 2: ``keyBy user``, apply each event to the account's status as it
    arrives, and count the events that arrive after a later one of the same user."""

    columns = ("key", "value", KEY_GROUP, "arrival_ns", "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, values, groups = cols["key"], cols["value"], cols[KEY_GROUP]
        arrived = cols["arrival_ns"]
        get, put, emit = self.backend.get, self.backend.put, self.ctx.emit
        check, loads = self.ctx.check_order, PickleValues.loads
        for i in range(n):
            key = keys[i]
            seq, event = loads(values[i])
            check(key, seq)
            status = apply_event(get(groups[i], key), event)
            put(groups[i], key, status)
            emit(key, status, arrived[i], seq)


class LifecycleBuffer(_KeyedOperator):
    """Seed 000's buffer for events: ``keyBy user``, an operator-level buffer of each user's
    events in arrival order, flushed every ``trigger_interval_ms`` or ``max_count`` records;
    a flush applies each user's events, in their buffered order, to the user's status."""

    columns = ("user_id", "event", KEY_GROUP, "seq")

    def __init__(self, ctx: SubtaskContext) -> None:
        super().__init__(ctx)
        config = ctx.config
        self.max_count = config.max_count
        self.interval_ns = int(config.trigger_interval_ms * 1e6)
        self.timer: int | None = None
        self.count = 0
        self.buffer: dict[str, list[tuple[int, str, int]]] = {}
        self.groups: dict[str, int] = {}

    def next_timer_ns(self) -> int | None:
        return self.timer

    def on_timer(self, now_ns: int) -> None:
        self.flush()
        self.timer = max(self.timer or now_ns, now_ns) + self.interval_ns

    def process(self, cols, n, arrivals) -> None:
        if self.timer is None and self.interval_ns > 0:
            self.timer = time.time_ns() + self.interval_ns
        users, events, groups, seqs = cols["user_id"], cols["event"], cols[KEY_GROUP], cols["seq"]
        clock = time.time_ns
        for i in range(n):
            key = users[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            self.buffer.setdefault(key, []).append((seqs[i], events[i], arrival))
            self.groups[key] = groups[i]
            self.count += 1
            if self.count >= self.max_count:
                self.flush()

    def flush(self) -> None:
        if not self.count:
            return
        get, put, check = self.backend.get, self.backend.put, self.ctx.check_order
        for key, buffered in self.buffer.items():
            group = self.groups[key]
            status = get(group, key)
            for seq, event, _ in buffered:
                check(key, seq)
                status = apply_event(status, event)
            put(group, key, status)
            self.ctx.emit_batch(key, status, [(arrival, 1) for _, _, arrival in buffered])
        self.buffer.clear()
        self.groups.clear()
        self.count = 0
        self.ctx.metrics.flushes += 1

    def finish(self) -> None:
        self.flush()


@dataclass
class LifecycleResult:
    """One strategy over the lifecycle events.

    ``violations``: events applied after a later event of the same user (at the final
    operator); ``resurrected``: users whose account ends ``active`` although their last event
    was ``deleted``; ``statuses``: final status per user.
    """

    strategy: str
    users: int
    violations: int
    resurrected: int
    run: RunResult
    statuses: dict[str, str]


def lifecycle_order(
    events,
    strategy: str = "salted",
    *,
    salt_buckets: int = 4,
    parallelism: int | None = 2,
    trigger_interval_ms: float = 100.0,
    max_count: int = 1000,
    backend: str = "rocksdb",
    spark=None,
) -> LifecycleResult:
    """Replay ``events`` (see :func:`lifecycle_events`) keyed by user through ``salted`` or
    ``buffered`` and count order violations where the events meet the user's state.

    ``salted``: ``keyBy (user, salt)`` with the salt from the event id -> running latest event
    (:class:`LatestEvent`) -> unsalt -> ``keyBy user`` -> apply (:class:`ApplyEvents`), the
    final stage reading in exchange order. ``buffered``: ``keyBy user`` -> buffer ->
    apply at flush (:class:`LifecycleBuffer`). A user's two events can only swap under salting,
    and only when their salts put them on different stage-1 subtasks, so ``parallelism`` must be
    at least 2 to show it (with 1 subtask every record takes the same path, in order).

    Example::

        >>> lifecycle_order(events, "salted", parallelism=2).violations > 0     # doctest: +SKIP
        True
        >>> lifecycle_order(events, "buffered", parallelism=2).violations        # doctest: +SKIP
        0
    """
    from skewlab.errors import SkewlabInputError

    if strategy not in ("salted", "buffered"):
        raise SkewlabInputError(f"unknown strategy {strategy!r}: use salted or buffered")
    spark = spark or events.sparkSession
    config = RunConfig(
        strategy,
        parallelism=parallelism,
        backend=backend,
        salt_buckets=salt_buckets,
        trigger_interval_ms=trigger_interval_ms,
        max_count=max_count,
        check_order=True,
    )
    validate_config(config)
    config = config.resolved(spark.sparkContext.defaultParallelism)
    if strategy == "salted":
        salted = with_salt(events, "user_id", "event_id", config.salt_buckets)
        stage1 = StageSpec(
            name="1:latest-event",
            config=config,
            key_col=SALTED_KEY,
            operator=LatestEvent,
            final=False,
            serializer=PickleValues,
            input_columns=("seq", "user_id", "event"),
        )
        stage2 = StageSpec(
            name="2:apply-events",
            config=config,
            key_col="key",
            operator=ApplyEvents,
            final=True,
            serializer=PickleValues,
            order_by=(),
            source=False,
            input_columns=("value", "arrival_ns", "seq"),
        )
        out_df = run_stage(run_stage(salted, spark, stage1), spark, stage2)
    else:
        stage = StageSpec(
            name="1:buffered-events",
            config=config,
            key_col="user_id",
            operator=LifecycleBuffer,
            final=True,
            serializer=PickleValues,
            input_columns=("seq", "event"),
        )
        out_df = run_stage(events, spark, stage)
    out = collect_stage(out_df, PickleValues)
    run = fold_metrics(
        f"{strategy}-lifecycle",
        config.parameters() | {"check_order": True},
        out.metrics,
        keys=len(out.results),
        wall_seconds=out.wall_seconds,
        digest="",
        buffers=strategy == "buffered",
    )
    # counted where the events meet the user's state: the final stage's subtasks
    final_stage = max(m.stage for m in out.metrics)
    violations = sum(m.order_violations for m in out.metrics if m.stage == final_stage)
    run.order_violations = violations
    resurrected = sum(1 for status in out.results.values() if status == ACTIVE)
    return LifecycleResult(
        strategy=strategy,
        users=len(out.results),
        violations=violations,
        resurrected=resurrected,
        run=run,
        statuses=dict(out.results),
    )


def lifecycle_table(events, **options) -> pd.DataFrame:
    """:func:`lifecycle_order` for ``salted`` and ``buffered``, one row each.

    Columns: ``strategy``, ``users``, ``events``, ``order_violations``, ``resurrected``
    (deleted accounts left active), ``parallelism``, ``salt_buckets``.

    Example::

        >>> lifecycle_table(lifecycle_events(spark, 1_000), parallelism=2)   # doctest: +SKIP
    """
    rows = []
    for strategy in ("salted", "buffered"):
        result = lifecycle_order(events, strategy, **options)
        rows.append(
            {
                "strategy": strategy,
                "users": result.users,
                "events": result.run.records_processed,
                "order_violations": result.violations,
                "resurrected": result.resurrected,
                "parallelism": result.run.parameters["parallelism"],
                "salt_buckets": result.run.parameters.get("salt_buckets"),
            }
        )
    return pd.DataFrame(rows).astype({"salt_buckets": "Int64"})


__all__ = [
    "CounterResult",
    "HllResult",
    "LifecycleResult",
    "apply_event",
    "lifecycle_events",
    "lifecycle_order",
    "lifecycle_table",
    "salted_counter",
    "salted_hll",
    "salting_summary",
    "subtask_loads",
    "with_salt",
]
