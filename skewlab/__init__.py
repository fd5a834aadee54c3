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
    >>> skewlab.size_settings("state_cache", "full")["n"]
    20000000
    >>> [c.id for c in skewlab.CHAPTERS][:3]
    ['hot_keys', 'ebs_latency', 'salting']

The lessons are the chapters of :data:`CHAPTERS` (:mod:`skewlab.experiments.chapters`): one id
each names the notebook, ``skewlab.experiments.<id>`` (measurement), ``skewlab.viz.<id>``
(tables, sentences, charts) and ``skewlab bench <id>``. Names load on first use: importing
skewlab starts nothing, and :func:`get_spark` is what starts Spark.

A *size* (tiny / quick / full: :data:`SIZES`, :func:`size_settings`) is how big a run is; a *disk
profile* (:func:`load_disk_profile`, :class:`DiskProfile`) is what a state access costs. Their
former names (``PROFILES``, ``profile_settings``, ``load_profile``, ``list_profiles``,
``LatencyProfile``, ``local_profile``) still load, with a ``DeprecationWarning``.

================  ===============================================================
``engine``        the keyed runtime on Spark: job config, routing, operators, tasks, metrics
``state``         key groups, keyed state backends (heap, RocksDB, single-key, LRU cache)
``aggregates``    HLL registers, ``StatsState``, the count state, the oracles and digests
``operators``     the reduces, buffers and count operators a strategy chains
``strategies``    naive, salted, buffered, cached, sorted, spark_sql, streaming, pkg, dchoices,
                  wchoices; the count jobs
``inputs``        synthetic views, the WordCount input, lifecycle events
``iomodel``       latency profiles, fio import, the disk probe, the modelled I/O time
``experiments``   one module per chapter's measurement; the one chapter registry
``viz``           figures and widgets per lesson, one palette
``report``        notebooks rendered to HTML through papermill
``cli``           the ``skewlab`` command, one module per command
================  ===============================================================
"""  # noqa: E501

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from skewlab.errors import SkewlabError, SkewlabInputError

__version__ = "0.1.0"

#: public name -> the module that defines it
_API = {
    "get_spark": "skewlab.engine.session",
    "JobConfig": "skewlab.engine.config",
    "RunResult": "skewlab.engine.metrics",
    "subtask_load": "skewlab.engine.routing",
    "diagnose": "skewlab.doctor.diagnosis",
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
    "load_disk_profile": "skewlab.iomodel.profiles",
    "list_disk_profiles": "skewlab.iomodel.profiles",
    "DiskProfile": "skewlab.iomodel.profiles",
    "local_disk_profile": "skewlab.iomodel.disk_probe",
    "CHAPTERS": "skewlab.experiments.chapters",
    "SIZES": "skewlab.experiments.chapters",
    "size_settings": "skewlab.experiments.chapters",
    "latest_result": "skewlab.experiments.results",
    "load_reference": "skewlab.experiments.references",
}
if TYPE_CHECKING:  # the same names, eagerly, for IDEs and type checkers (a test holds them equal)
    from skewlab.aggregates.digest import result_digest
    from skewlab.aggregates.reference import reference_aggregate, spark_reference_aggregate
    from skewlab.aggregates.stats_state import StatsState, TweetStats, plus, to_stats
    from skewlab.doctor.diagnosis import diagnose
    from skewlab.engine.config import JobConfig
    from skewlab.engine.metrics import RunResult
    from skewlab.engine.recovery import Recovery
    from skewlab.engine.routing import subtask_load
    from skewlab.engine.savepoint import Savepoint
    from skewlab.engine.session import get_spark
    from skewlab.experiments.chapters import CHAPTERS, SIZES, size_settings
    from skewlab.experiments.references import load_reference
    from skewlab.experiments.results import latest_result
    from skewlab.inputs.lifecycle import lifecycle_events
    from skewlab.inputs.views import (
        ViewSpec,
        generate_views,
        key_load,
        load_summary,
        load_views,
        save_views,
    )
    from skewlab.inputs.wordcount import flip325_input, wordcount_input
    from skewlab.iomodel.disk_probe import local_disk_profile
    from skewlab.iomodel.profiles import DiskProfile, list_disk_profiles, load_disk_profile
    from skewlab.state import KeyGroupRange, StateBackend, create_backend
    from skewlab.strategies import (
        STRATEGIES,
        Buffered,
        Cached,
        Naive,
        Salted,
        Sorted,
        SparkSql,
        Streaming,
        run_strategies,
        run_strategy,
    )
    from skewlab.strategies.count import run_count
    from skewlab.strategies.resume import run_with_failure, run_with_savepoint

#: former public name -> its new name (the old one still loads, with a DeprecationWarning)
_DEPRECATED = {
    "PROFILES": "SIZES",
    "profile_settings": "size_settings",
    "load_profile": "load_disk_profile",
    "list_profiles": "list_disk_profiles",
    "LatencyProfile": "DiskProfile",
    "local_profile": "local_disk_profile",
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
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"skewlab.{name} is deprecated, use skewlab.{new} (it will be removed in the next "
            "release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return __getattr__(new)
    raise AttributeError(f"module 'skewlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
