"""skewlab: a laboratory for hot keys (data skew) in stateful stream aggregation, on Spark.

The public API, in the words of the field -- what a notebook needs::

    >>> import skewlab
    >>> spark = skewlab.get_spark()                                           # doctest: +SKIP
    >>> spec = skewlab.ViewSpec(n_views=100_000, n_users=25_000, n_tweets=20, seed=1)
    >>> views = skewlab.generate_views(spark, spec)                           # doctest: +SKIP
    >>> job = skewlab.JobConfig(parallelism=2)
    >>> result, _ = skewlab.run_strategy(views, skewlab.Buffered(max_count=1000), job)  # doctest: +SKIP
    >>> result.result_digest == skewlab.result_digest(skewlab.spark_reference_aggregate(views))  # doctest: +SKIP
    True
    >>> skewlab.profile_settings("cache", "full")["n"]
    20000000

The lessons' experiments and figures are the subpackages ``skewlab.experiments`` and
``skewlab.viz`` (one module per lesson). Names load on first use: importing skewlab starts
nothing, and :func:`get_spark` is what starts Spark.

================  ===============================================================
``engine``        the keyed runtime on Spark: job config, routing, operators, tasks, metrics
``state``         key groups, keyed state backends (heap, RocksDB, single-key, LRU cache)
``aggregates``    HLL registers, ``StatsState``, the count state, the oracles and digests
``operators``     the reduces, buffers and count operators a strategy chains
``strategies``    naive, salted, buffered, cached, sorted, spark_sql, streaming; the count jobs
``inputs``        synthetic views, the WordCount input, lifecycle events
``iomodel``       latency profiles, fio import, the disk probe, the modelled I/O time
``experiments``   one module per seed experiment; the one profiles table
``viz``           figures and widgets per lesson, one palette
``report``        notebooks rendered to HTML through papermill
``cli``           the ``skewlab`` command, one module per command
================  ===============================================================
"""  # noqa: E501

from __future__ import annotations

import importlib
from typing import Any

from skewlab.errors import SkewlabError, SkewlabInputError

__version__ = "0.1.0"

#: public name -> the module that defines it
_API = {
    "get_spark": "skewlab.engine.session",
    "JobConfig": "skewlab.engine.config",
    "RunResult": "skewlab.engine.metrics",
    "subtask_load": "skewlab.engine.routing",
    "ViewSpec": "skewlab.inputs.views",
    "generate_views": "skewlab.inputs.views",
    "load_views": "skewlab.inputs.views",
    "save_views": "skewlab.inputs.views",
    "key_load": "skewlab.inputs.views",
    "load_summary": "skewlab.inputs.views",
    "lifecycle_events": "skewlab.inputs.lifecycle",
    "wordcount_input": "skewlab.inputs.wordcount",
    "flip325_input": "skewlab.inputs.wordcount",
    "StatsState": "skewlab.aggregates.stats_state",
    "TweetStats": "skewlab.aggregates.stats_state",
    "plus": "skewlab.aggregates.stats_state",
    "to_stats": "skewlab.aggregates.stats_state",
    "reference_aggregate": "skewlab.aggregates.reference",
    "spark_reference_aggregate": "skewlab.aggregates.reference",
    "result_digest": "skewlab.aggregates.digest",
    "STRATEGIES": "skewlab.strategies",
    "run_strategy": "skewlab.strategies",
    "run_strategies": "skewlab.strategies",
    "Naive": "skewlab.strategies",
    "Salted": "skewlab.strategies",
    "Buffered": "skewlab.strategies",
    "Cached": "skewlab.strategies",
    "Sorted": "skewlab.strategies",
    "SparkSql": "skewlab.strategies",
    "Streaming": "skewlab.strategies",
    "run_count": "skewlab.strategies.count",
    "run_with_savepoint": "skewlab.strategies.resume",
    "run_with_failure": "skewlab.strategies.resume",
    "Recovery": "skewlab.engine.recovery",
    "Savepoint": "skewlab.engine.savepoint",
    "StateBackend": "skewlab.state",
    "create_backend": "skewlab.state",
    "KeyGroupRange": "skewlab.state",
    "load_profile": "skewlab.iomodel.profiles",
    "list_profiles": "skewlab.iomodel.profiles",
    "LatencyProfile": "skewlab.iomodel.profiles",
    "local_profile": "skewlab.iomodel.disk_probe",
    "PROFILES": "skewlab.experiments.profiles",
    "profile_settings": "skewlab.experiments.profiles",
    "latest_result": "skewlab.experiments.results",
}
_SUBPACKAGES = (
    "aggregates",
    "cli",
    "engine",
    "experiments",
    "inputs",
    "iomodel",
    "operators",
    "report",
    "state",
    "strategies",
    "viz",
)

__all__ = ["SkewlabError", "SkewlabInputError", *sorted(_API), *_SUBPACKAGES]


def __getattr__(name: str) -> Any:
    """Load a public name (or subpackage) on first use."""
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f"skewlab.{name}")
    raise AttributeError(f"module 'skewlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
