"""Aggregation strategies over seed 000's views: every one ends with the same per-tweet registers.

========== ============================================================================
naive      keyBy tweet -> reduce: per record read state, merge, write, emit (heap|rocksdb|cached)
salted     keyBy (tweet, salt) -> running partial reduce -> unsalt -> keyBy tweet -> reduce
buffered   operator-level buffer flushed every ``trigger_interval_ms`` or ``max_count`` records,
           then keyBy -> reduce of the partials (``list``, ``preaggregate`` or ``vectorized``)
cached     naive over the FLIP-325 cached backend (LRU of objects in front of RocksDB)
sorted     FLIP-140: input sorted per partition by Spark, single-key state, one emission per key
spark_sql  Spark's own hash aggregation of the same HLL registers (the JVM ceiling)
========== ============================================================================

Every strategy module has ``run(spark, views, config) -> (RunResult, {tweet_id: StatsState})``.

Example::

    >>> from skewlab.runtime import RunConfig
    >>> config = RunConfig("naive", backend="rocksdb")
    >>> result, states = run_strategy(views, config)  # doctest: +SKIP
    >>> print(result.format_table())  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

STRATEGIES = ("naive", "salted", "buffered", "cached", "sorted", "spark_sql")


def run_strategy(views, config, spark=None) -> tuple[Any, dict[str, Any]]:
    """Run one strategy over a views DataFrame; returns ``(RunResult, results per tweet)``.

    Bad parameters or views missing a column raise :class:`~skewlab.errors.SkewlabInputError`
    before Spark starts work.
    """
    from skewlab.runtime import validate_config
    from skewlab.views import check_views_schema

    validate_config(config)
    check_views_schema(views)
    spark = spark or views.sparkSession
    resolved = config.resolved(spark.sparkContext.defaultParallelism)
    module = importlib.import_module(f"skewlab.strategies.{resolved.strategy}")
    return module.run(spark, views, resolved)


def run_strategies(views, configs, spark=None) -> list[Any]:
    """Run several strategies over the same views; returns their ``RunResult``s in order.

    Example::

        >>> from skewlab.runtime import RunConfig
        >>> configs = [RunConfig("naive"), RunConfig("buffered")]
        >>> results = run_strategies(views, configs)  # doctest: +SKIP
        >>> [r.strategy for r in results]  # doctest: +SKIP
        ['naive', 'buffered']
    """
    return [run_strategy(views, config, spark)[0] for config in configs]
