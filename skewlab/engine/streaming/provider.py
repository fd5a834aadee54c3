"""Which state store a streaming query runs on, and the session settings fixed at its start.

``transformWithStateInPandas`` runs only on the RocksDB state store provider; Spark's default is
still the HDFS-backed one (a versioned in-memory map written as delta files), on which the
query fails at its first micro-batch with
``UNSUPPORTED_FEATURE.STORE_BACKEND_NOT_SUPPORTED_FOR_TWS``.
skewlab sets the provider itself (:func:`use_rocksdb_state_store`). Spark records the provider
and ``spark.sql.shuffle.partitions`` -- the number of state partitions -- in the checkpoint at
the first micro-batch; a restarted query keeps both whatever the session says then.

Example::

    >>> STREAMING_SETTINGS[PROVIDER_KEY] == ROCKSDB_PROVIDER
    True
    >>> use_rocksdb_state_store(spark)                     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = [
    "HDFS_PROVIDER",
    "PROVIDER_KEY",
    "ROCKSDB_PROVIDER",
    "SHUFFLE_PARTITIONS_KEY",
    "STREAMING_SETTINGS",
    "session_settings",
    "use_rocksdb_state_store",
]

PROVIDER_KEY = "spark.sql.streaming.stateStore.providerClass"
SHUFFLE_PARTITIONS_KEY = "spark.sql.shuffle.partitions"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"

#: What every skewlab streaming query runs with: the RocksDB provider, changelog checkpointing
#: (a micro-batch commits a changelog; snapshots are uploaded in the background, as Spark's
#: docs recommend for RocksDB), and every progress update kept for the metrics.
STREAMING_SETTINGS: dict[str, str] = {
    PROVIDER_KEY: ROCKSDB_PROVIDER,
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.numRecentProgressUpdates": "100000",
}


def use_rocksdb_state_store(spark) -> None:
    """Set the RocksDB state store provider (and :data:`STREAMING_SETTINGS`) on ``spark``."""
    for key, value in STREAMING_SETTINGS.items():
        spark.conf.set(key, value)


@contextmanager
def session_settings(spark, settings: Mapping[str, str | None]) -> Iterator[None]:
    """Set ``settings`` on the session for the block, then put the old values back (a streaming
    query copies the session's settings when it starts). ``None`` unsets a key.

    Example::

        >>> with session_settings(spark, {SHUFFLE_PARTITIONS_KEY: "4"}):   # doctest: +SKIP
        ...     query = writer.start()
    """
    saved = {key: spark.conf.get(key, None) for key in settings}
    try:
        for key, value in settings.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, str(value))
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
