"""The keyed runtime: Flink's record-at-a-time keyed model, executed inside Spark tasks.

Spark does distribution, shuffles, sorting (with spill), scheduling and retries; skewlab's
operators do exactly the per-record state work the seeds talk about.

============  ==================================================================
``session``   the one place a SparkSession is made (``get_spark``)
``config``    ``JobConfig``: parallelism, key groups, source rate, order check, latency profile
``routing``   key group and operator index per record; identity partitioning
``operator``  the operator contract: ``Operator``, ``OperatorContext``, ``TimerService``
``output``    the collector an operator emits into, and the latency it measures
``stage``     ``StageSpec`` (one ``keyBy`` and its operators) and its rows as Arrow
``task``      the subtask loop: replay in arrival order, pacing, timers
``job``       run stages on Spark and collect their results and metrics
``metrics``   ``RunResult``: every subtask's counters folded, modelled I/O included
``histogram`` a mergeable latency histogram;  ``memory``: a subtask's traced peak memory
``recovery``  a job's savepoint, checkpoint and injected-failure settings
``savepoint`` a savepoint directory: published atomically, loaded and checked whole
``checkpointing``  restore, periodic checkpoints, stop-with-savepoint around an operator chain
``streaming`` Spark Structured Streaming itself: queries on the RocksDB state store, their
              progress, sink, checkpoint and state (a subpackage)
============  ==================================================================

Example::

    >>> from skewlab.engine import JobConfig
    >>> JobConfig(parallelism=2).resolved(default_parallelism=4).max_parallelism
    128
"""

from __future__ import annotations

from skewlab.engine.config import JobConfig
from skewlab.engine.job import StageOutput, collect_stage, run_stage
from skewlab.engine.metrics import RunResult, SubtaskMetrics, fold_metrics
from skewlab.engine.operator import Operator, OperatorContext, TimerService
from skewlab.engine.routing import (
    KEY_GROUP,
    OPERATOR,
    identity_partition,
    subtask_load,
    with_key_groups,
)
from skewlab.engine.session import get_spark
from skewlab.engine.stage import StageSpec

__all__ = [
    "KEY_GROUP",
    "OPERATOR",
    "JobConfig",
    "Operator",
    "OperatorContext",
    "RunResult",
    "StageOutput",
    "StageSpec",
    "SubtaskMetrics",
    "TimerService",
    "collect_stage",
    "fold_metrics",
    "get_spark",
    "identity_partition",
    "run_stage",
    "subtask_load",
    "with_key_groups",
]
