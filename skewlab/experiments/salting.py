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
   arrive after a later one (``RunResult.order_violations``) and the accounts that end up
   alive although they were deleted.

Example::

    >>> from skewlab.engine.session import get_spark
    >>> from skewlab.inputs.views import ViewSpec, generate_views
    >>> spark = get_spark()
    >>> views = generate_views(spark, ViewSpec(2_000, 500, 5, seed=1))
    >>> counter = salted_counter(views, salt_buckets=4, parallelism=2)    # doctest: +SKIP
    >>> counter.table[["tweet_id", "views", "salted_sum", "fixed_sum"]]   # doctest: +SKIP
      tweet_id  views  salted_sum  fixed_sum
    0  tweet-0    427       23062        427
    1  tweet-4    427       23266        427
    ...
    >>> from skewlab.inputs.lifecycle import lifecycle_events
    >>> events = lifecycle_events(spark, n_users=1_000)
    >>> lifecycle_table(events, parallelism=2)                           # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, run_stage
from skewlab.engine.metrics import RunResult, fold_metrics
from skewlab.engine.routing import KEY_GROUP, OPERATOR, with_key_groups
from skewlab.engine.stage import StageSpec
from skewlab.inputs.lifecycle import ACTIVE
from skewlab.operators.lifecycle import ApplyEvents, LatestEvent, LifecycleBuffer
from skewlab.operators.running_count import (
    SALT,
    SALTED_KEY,
    PairSerializer,
    RunningCount,
    SumOfPartials,
)
from skewlab.state.api import PickleSerializer
from skewlab.state.key_groups import compute_default_max_parallelism
from skewlab.state.state_backend import StateBackend
from skewlab.strategies import Buffered, Salted, run_strategy
from skewlab.strategies.keyed import with_seq
from skewlab.strategies.salted import with_salt
from skewlab.validation import check_choice

__all__ = [
    "CounterResult",
    "HllResult",
    "LifecycleResult",
    "counter_stages",
    "lifecycle_order",
    "lifecycle_table",
    "salted_counter",
    "salted_hll",
    "subtask_loads",
]


# --------------------------------------------------------------------------- 1. double count


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


def counter_stages(backend: str = "rocksdb") -> tuple[StageSpec, StageSpec]:
    """The seed's salted word count as two keyed stages, each on ``backend``: the running
    count per salted key (``1:count-partial``, :class:`RunningCount`), then the sum of the
    partials per tweet (``2:sum-partials``, :class:`SumOfPartials`, in whatever order the
    exchange delivers them). Its input: views with their salt (:func:`with_salt`) and ``seq``.

    Example::

        >>> [(s.name, s.key_col, s.final) for s in counter_stages("heap")]
        [('1:count-partial', '_salted_key', False), ('2:sum-partials', 'key', True)]
    """
    state = StateBackend(backend)
    stage1 = StageSpec(
        name="1:count-partial",
        key_col=SALTED_KEY,
        operator=partial(RunningCount, state_backend=state),
        final=False,
        serializer=PairSerializer,
        input_columns=("seq", "tweet_id", SALT),
    )
    stage2 = StageSpec(
        name="2:sum-partials",
        key_col="key",
        operator=partial(SumOfPartials, state_backend=state),
        final=True,
        serializer=PairSerializer,
        order_by=(),  # whatever order the exchange delivers, as in Flink
        source=False,
        input_columns=("value", "arrival_ns", "seq"),
    )
    return stage1, stage2


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

    spark = spark or views.sparkSession
    params = Salted(salt_buckets=salt_buckets, backend=backend)  # validates both
    job = JobConfig(parallelism=parallelism).resolved(spark.sparkContext.defaultParallelism)
    salted = with_salt(with_seq(views), "tweet_id", "view_id", salt_buckets)
    stage1, stage2 = counter_stages(backend)
    out = collect_stage(
        run_stage(run_stage(salted, spark, stage1, job), spark, stage2, job), PairSerializer
    )
    run = fold_metrics(
        "salted-counter",
        job.parameters() | params.parameters(),
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
    return CounterResult(table=table, run=run, salt_buckets=salt_buckets)


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
    and compare every tweet's registers with
    :func:`skewlab.aggregates.reference.spark_reference_aggregate`.

    Example::

        >>> salted_hll(views, salt_buckets=4, parallelism=2).matches    # doctest: +SKIP
        True
    """
    from pyspark.sql import functions as F

    spark = spark or views.sparkSession
    run, states = run_strategy(
        views, Salted(salt_buckets=salt_buckets), JobConfig(parallelism=parallelism), spark
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


def subtask_loads(
    views, *, salt_buckets: int = 4, parallelism: int = 4, max_parallelism: int | None = None
) -> dict[str, pd.DataFrame]:
    """Records per operator subtask when keyed by tweet and when keyed by (tweet, salt).

    Routing only (Flink's key groups, computed in Spark), no operator runs: what salting buys is
    visible before any state is touched. Returns ``{label: DataFrame(subtask, records)}`` for
    :func:`skewlab.viz.hot_keys.subtask_load_figure`.

    Example::

        >>> loads = subtask_loads(views, salt_buckets=4, parallelism=4)      # doctest: +SKIP
        >>> list(loads)  # doctest: +SKIP
        ['keyBy tweet', 'keyBy (tweet, salt)']
    """
    from pyspark.sql import functions as F

    Salted(salt_buckets=salt_buckets)  # validates the salt buckets
    JobConfig(parallelism=parallelism, max_parallelism=max_parallelism, disk_profile=None)
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


#: events and statuses travel and are stored pickled
_EVENTS = PickleSerializer()


def _salted_lifecycle(events, spark, job: JobConfig, params: Salted):
    """``keyBy (user, salt)`` -> latest event -> unsalt -> ``keyBy user`` -> apply."""
    state = StateBackend(params.backend)
    salted = with_salt(events, "user_id", "event_id", params.salt_buckets)
    stage1 = StageSpec(
        name="1:latest-event",
        key_col=SALTED_KEY,
        operator=partial(LatestEvent, state_backend=state),
        final=False,
        serializer=_EVENTS,
        input_columns=("seq", "user_id", "event"),
    )
    stage2 = StageSpec(
        name="2:apply-events",
        key_col="key",
        operator=partial(ApplyEvents, state_backend=state),
        final=True,
        serializer=_EVENTS,
        order_by=(),  # whatever order the exchange delivers, as in Flink
        source=False,
        input_columns=("value", "arrival_ns", "seq"),
    )
    return run_stage(run_stage(salted, spark, stage1, job), spark, stage2, job)


def _buffered_lifecycle(events, spark, job: JobConfig, params: Buffered):
    """``keyBy user`` -> the buffer -> apply each user's events at flush, in their order."""
    stage = StageSpec(
        name="1:buffered-events",
        key_col="user_id",
        operator=partial(
            LifecycleBuffer,
            state_backend=StateBackend(params.backend),
            max_count=params.max_count,
            trigger_interval_ms=params.trigger_interval_ms,
        ),
        final=True,
        serializer=_EVENTS,
        input_columns=("seq", "event"),
    )
    return run_stage(events, spark, stage, job)


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
    trigger_interval_ms: float = Buffered().trigger_interval_ms,
    max_count: int = Buffered().max_count,
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
    check_choice("strategy", strategy, ("salted", "buffered"))
    if strategy == "salted":  # validated as the strategies' own parameters are
        params = Salted(salt_buckets=salt_buckets, backend=backend)
    else:
        params = Buffered(
            trigger_interval_ms=trigger_interval_ms, max_count=max_count, backend=backend
        )
    spark = spark or events.sparkSession
    job = JobConfig(parallelism=parallelism, check_order=True).resolved(
        spark.sparkContext.defaultParallelism
    )
    pipeline = _salted_lifecycle if strategy == "salted" else _buffered_lifecycle
    out = collect_stage(pipeline(events, spark, job, params), _EVENTS)
    parameters = params.parameters()
    parameters.pop("buffer", None)  # the event buffer has one kind only
    run = fold_metrics(
        f"{strategy}-lifecycle",
        job.parameters() | parameters | {"check_order": True},
        out.metrics,
        keys=len(out.results),
        wall_seconds=out.wall_seconds,
        digest="",
        buffers=strategy == "buffered",
        check_order=True,  # counted where the events meet the user's state: the final stage
    )
    violations = run.order_violations
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
