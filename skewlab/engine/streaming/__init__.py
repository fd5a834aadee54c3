"""Spark Structured Streaming as the engine: queries on the RocksDB state store, their metrics,
their sink, their checkpoint and their state.

==============  ===============================================================
``provider``    the RocksDB state store provider and the settings a query starts with
``query``       run a query to the end of its source (or to where it stops mid-stream)
``failure``     a failed query in one line, its failing micro-batch named
``progress``    each micro-batch as Spark reported it: rows, duration, state store metrics
``sink``        an idempotent ``foreachBatch`` sink by micro-batch id
``checkpoint``  a query's directory and owner, Spark's write-ahead log, the guarded repartition
``state_store`` the final state read back (``statestore``) and described (``state-metadata``)
``spark_log``   what Spark's driver logs at WARN, for one logger, while something runs
==============  ===============================================================

Example::

    >>> from skewlab.engine.streaming import ROCKSDB_PROVIDER
    >>> ROCKSDB_PROVIDER.rsplit(".", 1)[-1]
    'RocksDBStateStoreProvider'
"""

from __future__ import annotations

from skewlab.engine.streaming.checkpoint import (
    QueryDirectory,
    QueryIdentity,
    RepartitionOutcome,
    claim_query_directory,
    recorded_conf,
    repartition_checkpoint,
    uncommitted_batch,
)
from skewlab.engine.streaming.failure import StreamingQueryFailed, failure_cause
from skewlab.engine.streaming.progress import BatchProgress
from skewlab.engine.streaming.provider import (
    HDFS_PROVIDER,
    PROVIDER_KEY,
    ROCKSDB_PROVIDER,
    SHUFFLE_PARTITIONS_KEY,
    session_settings,
    use_rocksdb_state_store,
)
from skewlab.engine.streaming.query import QueryRun, run_query
from skewlab.engine.streaming.sink import BatchSink
from skewlab.engine.streaming.state_store import read_state, state_metadata, state_partitions

__all__ = [
    "HDFS_PROVIDER",
    "PROVIDER_KEY",
    "ROCKSDB_PROVIDER",
    "SHUFFLE_PARTITIONS_KEY",
    "BatchProgress",
    "BatchSink",
    "QueryDirectory",
    "QueryIdentity",
    "QueryRun",
    "RepartitionOutcome",
    "StreamingQueryFailed",
    "claim_query_directory",
    "failure_cause",
    "read_state",
    "recorded_conf",
    "repartition_checkpoint",
    "run_query",
    "session_settings",
    "state_metadata",
    "state_partitions",
    "uncommitted_batch",
    "use_rocksdb_state_store",
]
