"""Aggregation strategies over seed 000's views: every one ends with the same per-tweet registers.

=============  ==========================================================================
``naive``      keyBy tweet -> reduce: per record read state, merge, write, emit
``salted``     keyBy (tweet, salt) -> running partial reduce -> unsalt -> keyBy tweet -> reduce
``buffered``   operator-level buffer flushed every ``trigger_interval_ms`` or ``max_count``
               records, then keyBy -> reduce of the partials
``cached``     naive over FLIP-325's LRU cache of objects in front of RocksDB
``sorted``     FLIP-140: input sorted per partition by Spark, single-key state, one emission
               per key
``pkg``        key splitting: each sender sends a record to the less loaded of its key's two
               candidate subtasks, partials merged per key (``dchoices`` / ``wchoices``: hot
               keys found per sender get ``d`` or all subtasks) -- :mod:`.key_splitting`
``spark_sql``  Spark's own hash aggregation of the same HLL registers (the JVM ceiling)
``streaming``  Spark Structured Streaming on its RocksDB state store: per-record or
               per-micro-batch ``transformWithStateInPandas``, or Spark's own aggregation
=============  ==========================================================================

Each strategy is a small frozen dataclass of its own parameters (:data:`STRATEGIES`, by name),
validated when made, that carries what the strategy is as class attributes: whether it can take
savepoints (``resumable``), whether it checkpoints periodically, which access pattern of the disk
latency model it is (``modelled_as``) -- see :mod:`skewlab.strategies.parameters`. ``skewlab run
STRATEGY`` builds its options from those classes. The job's settings (parallelism, source rate,
disk profile) are a :class:`~skewlab.engine.config.JobConfig`. ``count`` holds the count jobs of
FLIP-325 / FLIP-140, each a record of its own facts (``COUNT_STRATEGY_RECORDS``).

Example::

    >>> from skewlab.strategies import Buffered, run_strategy
    >>> from skewlab.engine import JobConfig
    >>> params = Buffered(trigger_interval_ms=100, max_count=1000)
    >>> result, states = run_strategy(views, params, JobConfig(parallelism=2))  # doctest: +SKIP
    >>> print(result.format_table())  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import RunResult
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import check_views_schema
from skewlab.strategies.buffered import Buffered
from skewlab.strategies.cached import Cached
from skewlab.strategies.key_splitting import DChoices, Pkg, WChoices
from skewlab.strategies.naive import Naive
from skewlab.strategies.parameters import KEYED_BACKENDS, StrategyParameters
from skewlab.strategies.salted import Salted
from skewlab.strategies.sorted_input import Sorted
from skewlab.strategies.spark_sql import SparkSql
from skewlab.strategies.streaming import Streaming

__all__ = [
    "KEYED_BACKENDS",
    "STRATEGIES",
    "Buffered",
    "Cached",
    "DChoices",
    "Naive",
    "Pkg",
    "Salted",
    "Sorted",
    "SparkSql",
    "StrategyParameters",
    "Streaming",
    "WChoices",
    "run_strategies",
    "run_strategy",
    "strategy_parameters",
]

#: Every view strategy's parameters class, by name (the one registry).
STRATEGIES: dict[str, type[StrategyParameters]] = {
    cls.name: cls
    for cls in (
        Naive,
        Salted,
        Buffered,
        Cached,
        Sorted,
        SparkSql,
        Streaming,
        Pkg,
        DChoices,
        WChoices,
    )
}


def strategy_parameters(strategy: str | StrategyParameters, **options: Any) -> StrategyParameters:
    """A strategy's parameters: ``strategy`` itself, or its class (by name) made with
    ``options``.

    Example::

        >>> strategy_parameters("buffered", max_count=10).max_count
        10
        >>> strategy_parameters("fastest")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown strategy 'fastest': use one of naive, salted, buffered, cached, sorted, spark_sql, streaming, pkg, dchoices, wchoices
        >>> strategy_parameters("sorted", salt_buckets=4)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: strategy 'sorted' has no parameter salt_buckets; its parameters: precision
    """  # noqa: E501
    if isinstance(strategy, StrategyParameters):
        if options:
            raise SkewlabInputError("give either a strategy's parameters or options, not both")
        return strategy
    cls = STRATEGIES.get(strategy) if isinstance(strategy, str) else None
    if cls is None:
        raise SkewlabInputError(
            f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}"
        )
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise SkewlabInputError(
            f"strategy {strategy!r} has no parameter {', '.join(unknown)}; "
            f"its parameters: {', '.join(known)}"
        )
    return cls(**options)


def run_strategy(
    views, strategy: str | StrategyParameters = "naive", job: JobConfig | None = None, spark=None
) -> tuple[RunResult, dict[str, Any]]:
    """Run one strategy over a views DataFrame; returns ``(RunResult, results per tweet)``.

    ``strategy`` is a name (default parameters) or parameters such as ``Naive(backend="heap")``;
    ``job`` the job's settings (default :class:`~skewlab.engine.config.JobConfig`). Bad
    parameters or views missing a column raise :class:`~skewlab.errors.SkewlabInputError`
    before Spark starts work.

    Example::

        >>> result, states = run_strategy(views, "sorted")  # doctest: +SKIP
        >>> result.result_digest == skewlab.result_digest(skewlab.spark_reference_aggregate(views))  # doctest: +SKIP
        True
    """  # noqa: E501
    params = strategy_parameters(strategy)
    job = JobConfig() if job is None else job
    check_views_schema(views)
    spark = spark or views.sparkSession
    return params.run(spark, views, job.resolved(spark.sparkContext.defaultParallelism))


def run_strategies(views, strategies, job: JobConfig | None = None, spark=None) -> list[RunResult]:
    """Run several strategies over the same views under the same job; their ``RunResult``s.

    Example::

        >>> results = run_strategies(views, ["naive", Buffered(max_count=500)])  # doctest: +SKIP
        >>> [r.strategy for r in results]  # doctest: +SKIP
        ['naive', 'buffered']
    """
    params = [strategy_parameters(s) for s in strategies]  # every one checked before any runs
    return [run_strategy(views, p, job, spark)[0] for p in params]
