"""Keyed state, Flink's way: key groups, state backends and their value state.

=====================  ===============================================================
``key_groups``         Flink's ``KeyGroupRangeAssignment`` as pure functions, ``KeyGroupRange``
``java_hash``          Java's ``hashCode`` of ``String`` / ``Integer`` / ``Long`` keys
``api``                ``KeyedStateBackend`` and the ``ValueState`` it hands an operator
``state_backend``      ``StateBackend``: a backend by name, creating one per subtask
``heap``               objects in a dict per key group (HashMapStateBackend)
``rocksdb``            real RocksDB, values serialised, WAL off, RocksDB's own checkpoints
``single_key``         FLIP-140: only the current key's value, input sorted by key
``lru_cache``          FLIP-325: a write-back LRU of objects in front of any backend
``value_state``        the compiled value-state cores (or their pure-Python equivalents)
``snapshot``           keyed-state snapshots in key-group order (``KeyGroupsStateHandle``)
``restore``            restore at a new parallelism: read-all, per-key index, key groups
``rocksdb_native``     RocksDB's native snapshot, restored by clipping, copying or SST ingestion
``operator_state``     list state redistributed: split-distribute, union, broadcast
``metadata_file``      a snapshot directory's ``_metadata``: written atomically, read back checked
=====================  ===============================================================

Example::

    >>> from skewlab.state import create_backend
    >>> with create_backend("cached", max_entries=1000) as backend:
    ...     backend.put(0, "tweet-1", 1)
    ...     backend.get(0, "tweet-1"), backend.stats.hit_ratio
    (1, 1.0)
"""

from __future__ import annotations

from skewlab.state.api import (
    KeyedStateBackend,
    PickleSerializer,
    Serializer,
    StateAccessStats,
    ValueState,
)
from skewlab.state.heap import HeapKeyedStateBackend
from skewlab.state.key_groups import KeyGroupRange
from skewlab.state.lru_cache import DEFAULT_MAX_ENTRIES, LruCachedKeyedStateBackend
from skewlab.state.rocksdb import RocksDBKeyedStateBackend
from skewlab.state.single_key import SingleKeyStateBackend
from skewlab.state.state_backend import BACKENDS, StateBackend, create_backend

__all__ = [
    "BACKENDS",
    "DEFAULT_MAX_ENTRIES",
    "HeapKeyedStateBackend",
    "KeyGroupRange",
    "KeyedStateBackend",
    "LruCachedKeyedStateBackend",
    "PickleSerializer",
    "RocksDBKeyedStateBackend",
    "Serializer",
    "SingleKeyStateBackend",
    "StateAccessStats",
    "StateBackend",
    "ValueState",
    "create_backend",
]
