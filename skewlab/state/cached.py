"""The cached backend: FLIP-325's write-back LRU cache of objects in front of RocksDB.

The cache holds *deserialised* objects, at most ``max_entries`` of them, in least- to
most-recently-used order (:class:`~skewlab.state.value_state.WriteBackLru`, compiled: a hit
costs what a hash-map access costs, as in Flink):

* ``get`` -- a hit moves the entry to the most-recent end and returns the cached object itself
  (the caller may mutate it and ``put`` it back, Flink-style); a miss reads RocksDB and caches
  the result (a missing key is cached as ``None`` too), which may evict;
* ``put`` -- replaces the cached object and marks it dirty (may evict);
* eviction -- drops the least recently used entry, writing it to RocksDB only if it is dirty;
* ``flush`` (a checkpoint) -- writes every dirty entry to RocksDB, marks it clean, and takes
  RocksDB's checkpoint;
* ``delete`` -- removes the key from the cache and from RocksDB.

``max_entries=0`` disables the cache (every call goes straight to RocksDB; each ``get``
counts as a miss). In :attr:`stats`, ``reads`` / ``writes`` / ``deletes`` and the byte
counters count what reaches RocksDB, ``cache_hits`` / ``cache_misses`` count ``get`` lookups
and ``evictions`` counts entries pushed out of the cache (dirty or not).

The cache is keyed by the key alone, so a key must always come with the same key group -- true
whenever ``key_group = assign_to_key_group(key, max_parallelism)``, as in Flink.

Example::

    >>> from skewlab.state.cached import CachedKeyedStateBackend
    >>> with CachedKeyedStateBackend(max_entries=2) as state:
    ...     for key in ["a", "b", "a", "c", "b"]:     # a count per key
    ...         state.put(0, key, (state.get(0, key) or 0) + 1)
    ...     s = state.stats
    ...     (s.cache_hits, s.cache_misses, s.evictions, s.reads, s.writes)
    (1, 4, 2, 4, 2)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from types import MethodType
from typing import Any

from rocksdict import WriteBatch

from skewlab.errors import SkewlabInputError
from skewlab.state.base import Key, Serializer, StateAccessStats
from skewlab.state.rocksdb import RocksDBKeyedStateBackend, decode_key, encode_key
from skewlab.state.value_state import ValueStateCore, WriteBackLru

__all__ = ["DEFAULT_MAX_ENTRIES", "CachedKeyedStateBackend"]

#: Cache size when none is given (FLIP-325's own default, 0, would mean "no cache").
DEFAULT_MAX_ENTRIES = 10_000


class CachedKeyedStateBackend(RocksDBKeyedStateBackend):
    """A write-back LRU cache of objects (``max_entries`` of them) over RocksDB (FLIP-325).

    Example::

        >>> state = CachedKeyedStateBackend(max_entries=100)
        >>> state.put(0, "k", [1])
        >>> value = state.get(0, "k"); value.append(2); state.put(0, "k", value)
        >>> state.get(0, "k") is value, state.stats.writes   # nothing reached RocksDB yet
        (True, 0)
        >>> state.flush(); state.stats.writes
        1
        >>> state.close()
    """

    name = "cached"

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        *,
        serializer: Serializer | None = None,
        local_dir: str | os.PathLike[str] | None = None,
        track_keys: bool = False,
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise SkewlabInputError(
                f"max_entries must be an int >= 0 (0 disables the cache), got {max_entries!r}"
            )
        self.max_entries = max_entries
        self._lru: WriteBackLru | None = None
        super().__init__(serializer=serializer, local_dir=local_dir, track_keys=track_keys)

    def _bind_hot_path(self) -> None:
        # With a cache, get/put are the compiled LRU's own; RocksDB is reached only on a miss
        # (load) or an eviction (store), which count per key when asked. Without one
        # (max_entries=0) every call goes to the plain RocksDB methods.
        rocksdb_get = MethodType(RocksDBKeyedStateBackend.get, self)
        rocksdb_put = MethodType(RocksDBKeyedStateBackend.put, self)
        if self.max_entries == 0:
            self.get = rocksdb_get  # type: ignore[method-assign]
            self.put = rocksdb_put  # type: ignore[method-assign]
            if self.track_keys:
                self._install_api_key_tracking()
            return
        load, store = rocksdb_get, rocksdb_put
        if self.track_keys:
            load, store = self._key_tracking(rocksdb_get, rocksdb_put)
        self._lru = WriteBackLru(self.max_entries, load, store)
        self.get = self._lru.get  # type: ignore[method-assign]
        self.put = self._lru.put  # type: ignore[method-assign]

    def get(self, key_group: int, key: Key) -> Any | None:
        """A hit returns the cached object; a miss reads RocksDB and caches what it found."""
        return self._lru.get(key_group, key) if self._lru else super().get(key_group, key)

    def put(self, key_group: int, key: Key, value: Any) -> None:
        """Cache ``value`` as dirty (an eviction or a checkpoint writes it to RocksDB)."""
        if self._lru:
            self._lru.put(key_group, key, value)
        else:
            super().put(key_group, key, value)

    def delete(self, key_group: int, key: Key) -> None:
        if self._lru is not None:
            self._lru.delete(key_group, key)
        super().delete(key_group, key)

    def value_state_core(self) -> ValueStateCore:
        return self._lru if self._lru is not None else super().value_state_core()

    def flush(self) -> None:
        """A checkpoint: write every dirty entry to RocksDB (one write batch), mark it clean,
        then take RocksDB's own checkpoint (:meth:`RocksDBKeyedStateBackend.flush`)."""
        dirty = self._lru.dirty_entries(mark_clean=True) if self._lru is not None else []
        if dirty:
            dumps = self._dumps
            batch = WriteBatch(raw_mode=True)
            size = 0
            writes_per_key = self._writes_per_key
            for key_group, key, value in dirty:
                data = dumps(value)
                batch.put(encode_key(key_group, key), data)
                size += len(data)
                if writes_per_key is not None:
                    writes_per_key[key] = writes_per_key.get(key, 0) + 1
            self._db.write(batch, self._write_options)
            self._writes += len(dirty)
            self._bytes_serialized += size
        super().flush()

    def items(self, key_groups: Iterable[int]) -> Iterator[tuple[int, Key, Any]]:
        """Entries of the key groups as RocksDB has them, overlaid with the dirty cache entries."""
        overlay: dict[int, dict[Key, Any]] = {}
        if self._lru is not None:
            for key_group, key, value in self._lru.dirty_entries():
                overlay.setdefault(key_group, {})[key] = value
        loads = self._loads
        for key_group in key_groups:
            pending = overlay.pop(key_group, {})
            for raw_key, raw_value in self._scan_key_group(key_group):
                key = decode_key(raw_key)[1]
                if key in pending:
                    yield key_group, key, pending.pop(key)
                else:
                    self._bytes_deserialized += len(raw_value)
                    yield key_group, key, loads(raw_value)
            for key, value in pending.items():
                yield key_group, key, value

    # -- statistics and life cycle ---------------------------------------------------------------

    def _sync_counters(self) -> None:
        if self._lru is not None:
            self._cache_hits, self._evictions = self._lru.hits, self._lru.evictions

    @property
    def stats(self) -> StateAccessStats:
        """A snapshot of the counters; ``cache_misses`` equals RocksDB ``reads`` by design."""
        stats = super().stats
        stats.cache_misses = self._reads
        return stats

    def __len__(self) -> int:
        """Number of entries in the cache (not in RocksDB).

        Example::

            >>> with CachedKeyedStateBackend(max_entries=1) as state:
            ...     state.put(0, "a", 1); state.put(0, "b", 2); len(state)
            1
        """
        return len(self._lru) if self._lru is not None else 0

    def close(self) -> None:
        """Drop the cache (unflushed entries are lost, as on a failure) and close RocksDB."""
        if self._lru is not None:
            self._lru.clear()
        super().close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_entries={self.max_entries}, path={self.path!r}, "
            f"track_keys={self.track_keys})"
        )
