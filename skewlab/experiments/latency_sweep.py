"""What buffering costs in latency: the buffer at a paced source over several trigger intervals.

Seed 000's buffer trades median latency for throughput: a record waits in the buffer until the
timer fires (every ``trigger_interval_ms``) or the buffer holds ``max_count`` records. Replayed
as fast as possible, a bounded input reaches ``max_count`` long before any timer, and latency
says nothing about the interval. With a **paced source** (``JobConfig.source_rate``, records/s)
the records arrive spread over time like a live stream, the timer decides the flushes, and a
record waits about half an interval on average -- the p50 grows with the interval, the p99
approaches the whole interval.

Example::

    >>> from skewlab.engine.session import get_spark
    >>> from skewlab.inputs.views import ViewSpec, generate_views
    >>> views = generate_views(get_spark(), ViewSpec(6_000, 5_000, 20, seed=1))
    >>> sweep = latency_sweep(views, source_rate=2_000, trigger_intervals=(10, 100, 500),
    ...                       parallelism=2)                              # doctest: +SKIP
    >>> sweep[["trigger_interval_ms", "buffer_flushes", "latency_p50_ms"]]  # doctest: +SKIP
       trigger_interval_ms  buffer_flushes  latency_p50_ms
    0                 10.0             592            6.31
    1                100.0              60           53.09
    2                500.0              12          251.19

(measured on a 2-core machine; the p50 is about half the interval, as it should be)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.strategies import Buffered, Naive, run_strategy
from skewlab.validation import check_whole

DEFAULT_INTERVALS = (10, 20, 50, 100, 200, 500)
COLUMNS = (
    "strategy",
    "run",
    "trigger_interval_ms",
    "max_count",
    "source_rate",
    "parallelism",
    "records",
    "buffer_flushes",
    "latency_p50_ms",
    "latency_p99_ms",
    "operator_records_per_second",
    "wall_seconds",
    "digest_matches_reference",
)


def latency_sweep(
    views,
    *,
    source_rate: float,
    trigger_intervals: Sequence[float] = DEFAULT_INTERVALS,
    max_count: int = Buffered().max_count,
    buffer: str = "vectorized",
    parallelism: int | None = None,
    baseline: bool = False,
    rounds: int = 1,
    spark=None,
) -> pd.DataFrame:
    """Run ``buffered`` over ``views`` at ``source_rate`` records/s, once per trigger interval
    in each of ``rounds`` rounds (a median latency's interval is taken over the rounds: the
    records of one flush wait alike, so one run's records are not independent samples).

    Returns one row per run (columns :data:`COLUMNS`), in the order of ``trigger_intervals``;
    with ``baseline`` a first row for ``naive`` (RocksDB) at the same rate, whose latency is the
    per-record processing time (its ``trigger_interval_ms`` is NaN; run in the first round only:
    it is shown, not claimed). Every run's result digest
    is checked against the Spark SQL reference. A replay lasts about ``len(views) /
    source_rate`` seconds per run.

    Each subtask sees roughly ``source_rate / parallelism`` records/s, so a timer flush collects
    about ``interval * source_rate / parallelism`` records: keep that below ``max_count`` for
    the timer to be what flushes.

    Example::

        >>> latency_sweep(views, source_rate=4_000, trigger_intervals=(20, 200))  # doctest: +SKIP
    """
    intervals = [float(i) for i in trigger_intervals]
    check_whole("rounds", rounds, 1)
    if not intervals:
        raise SkewlabInputError("trigger_intervals must name at least one interval")
    runs: list[Naive | Buffered] = [
        Buffered(trigger_interval_ms=interval, max_count=max_count, buffer=buffer)
        for interval in intervals
    ]  # every bad value fails here, before Spark starts work
    if baseline:
        runs.insert(0, Naive(backend="rocksdb"))
    job = JobConfig(parallelism=parallelism, source_rate=source_rate, disk_profile=None)

    spark = spark or views.sparkSession
    reference = result_digest(spark_reference_aggregate(views))
    rows = []
    for run, strategy in ((r, s) for r in range(rounds) for s in runs):
        if run > 0 and not isinstance(strategy, Buffered):
            continue  # the naive baseline is shown, not claimed: one run of it
        result, _ = run_strategy(views, strategy, job, spark)
        buffered = isinstance(strategy, Buffered)
        rows.append(
            {
                "strategy": strategy.name,
                "run": run,
                "trigger_interval_ms": strategy.trigger_interval_ms if buffered else math.nan,
                "max_count": strategy.max_count if buffered else None,
                "source_rate": source_rate,
                "parallelism": result.parameters["parallelism"],
                "records": result.records_processed,
                "buffer_flushes": result.buffer_flushes,
                "latency_p50_ms": result.latency_p50_ms,
                "latency_p99_ms": result.latency_p99_ms,
                "operator_records_per_second": result.operator_records_per_second,
                "wall_seconds": result.wall_seconds,
                "digest_matches_reference": result.result_digest == reference,
            }
        )
    types = {"max_count": "Int64", "buffer_flushes": "Int64"}
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(types)


def records_per_flush(source_rate: float, trigger_interval_ms: float, parallelism: int) -> float:
    """Records one subtask collects in one timer interval at ``source_rate`` (spread evenly).

    Example::

        >>> records_per_flush(4_000, 100, 2)
        200.0
    """
    return source_rate / parallelism * trigger_interval_ms / 1000.0
