"""The cached backend: FLIP-325's write-back LRU cache of objects in front of RocksDB.

The cache holds *deserialised* objects, at most ``max_entries`` of them, in least- to
most-recently-used order (an :class:`~collections.OrderedDict`):

* ``get`` -- a hit moves the entry to the most-recent end and returns the cached object itself
  (the caller may mutate it and ``put`` it back, Flink-style); a miss reads RocksDB and caches
  the result (a missing key is cached as ``None`` too), which may evict;
* ``put`` -- replaces the cached object and marks it dirty (may evict);
* eviction -- drops the least recently used entry, writing it to RocksDB only if it is dirty;
* ``flush`` (a checkpoint) -- writes every dirty entry to RocksDB and marks it clean;
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
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from types import MethodType
from typing import Any

from rocksdict import WriteBatch

from skewlab.errors import SkewlabInputError
from skewlab.state.base import Key, Serializer, StateAccessStats
from skewlab.state.rocksdb import (
    INT_TAG,
    RocksDBKeyedStateBackend,
    _pack_int_key,
    decode_key,
    encode_key,
)

__all__ = ["DEFAULT_MAX_ENTRIES", "CachedKeyedStateBackend"]

#: Cache size when none is given (FLIP-325's own default, 0, would mean "no cache").
DEFAULT_MAX_ENTRIES = 10_000

_MISSING = object()  # "not in the cache" (None in the cache means "not in RocksDB either")


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
        # key -> deserialised value (None: known to be absent), least recently used first
        self._cache: OrderedDict[Key, Any] = OrderedDict()
        # dirty keys -> their key group (needed to write them back)
        self._dirty: dict[Key, int] = {}
        self._cache_get = self._cache.get
        self._move_to_end = self._cache.move_to_end
        self._popitem = self._cache.popitem
        self._dirty_pop = self._dirty.pop
        super().__init__(serializer=serializer, local_dir=local_dir, track_keys=track_keys)

    def _setup_key_tracking(self) -> None:
        # Per-key counts are taken where RocksDB is touched (miss, eviction, flush), inline;
        # only the pass-through mode, where every call is a RocksDB access, wraps the API.
        if self.max_entries == 0:
            # the plain RocksDB methods, bound to this instance: no extra call per access
            self.get = MethodType(RocksDBKeyedStateBackend.get, self)  # type: ignore[method-assign]
            self.put = MethodType(RocksDBKeyedStateBackend.put, self)  # type: ignore[method-assign]
            if self.track_keys:
                self._install_api_key_tracking()

    # -- the cache -----------------------------------------------------------------------------
    # The cache is keyed by the key alone (a tuple (key_group, key) would cost a tuple hash on
    # every operation, ~2x on the hit path): a key must always come with the same key group,
    # which holds whenever key_group = assign_to_key_group(key, max_parallelism), as in Flink.

    def get(self, key_group: int, key: Key) -> Any | None:
        value = self._cache_get(key, _MISSING)
        if value is not _MISSING:  # hit: the cheap path
            self._move_to_end(key)
            self._cache_hits += 1
            return value
        # miss: read RocksDB (encode_key inlined), then cache what was found, even nothing.
        # (Every miss is exactly one RocksDB read, so cache_misses is taken from _reads.)
        if type(key) is str:
            raw = self._db_get(self._str_prefixes[key_group] + key.encode())
        else:
            raw = self._db_get(_pack_int_key(key_group, INT_TAG, key))
        self._reads += 1
        if self._reads_per_key is not None:
            self._reads_per_key[key] = self._reads_per_key.get(key, 0) + 1
        if raw is not None:
            self._bytes_deserialized += len(raw)
            value = self._loads(raw)
        else:
            value = None
        cache = self._cache
        cache[key] = value
        if len(cache) > self.max_entries:
            # _evict_one(), inlined: with 0% hits every get evicts, and a call costs ~5%
            old_key, old_value = self._popitem(False)
            self._evictions += 1
            old_key_group = self._dirty_pop(old_key, None)
            if old_key_group is not None:  # dirty: write it back
                data = self._dumps(old_value)
                if type(old_key) is str:
                    self._db_put(self._str_prefixes[old_key_group] + old_key.encode(), data)
                else:
                    self._db_put(_pack_int_key(old_key_group, INT_TAG, old_key), data)
                self._writes += 1
                self._bytes_serialized += len(data)
                if self._writes_per_key is not None:
                    self._writes_per_key[old_key] = self._writes_per_key.get(old_key, 0) + 1
        return value

    def put(self, key_group: int, key: Key, value: Any) -> None:
        cache = self._cache
        cache[key] = value
        self._move_to_end(key)
        self._dirty[key] = key_group
        if len(cache) > self.max_entries:
            self._evict_one()

    def _evict_one(self) -> None:
        """Drop the least recently used entry; write it to RocksDB if it is dirty."""
        key, value = self._popitem(False)
        self._evictions += 1
        key_group = self._dirty_pop(key, None)
        if key_group is not None:
            data = self._dumps(value)
            if type(key) is str:
                self._db_put(self._str_prefixes[key_group] + key.encode(), data)
            else:
                self._db_put(_pack_int_key(key_group, INT_TAG, key), data)
            self._writes += 1
            self._bytes_serialized += len(data)
            if self._writes_per_key is not None:
                self._writes_per_key[key] = self._writes_per_key.get(key, 0) + 1

    def delete(self, key_group: int, key: Key) -> None:
        self._cache.pop(key, None)
        self._dirty_pop(key, None)
        super().delete(key_group, key)

    def flush(self) -> None:
        """Write every dirty entry to RocksDB (one write batch) and mark it clean."""
        dirty = self._dirty
        if dirty:
            cache = self._cache
            dumps = self._dumps
            batch = WriteBatch(raw_mode=True)
            size = 0
            writes_per_key = self._writes_per_key
            for key, key_group in dirty.items():
                data = dumps(cache[key])
                batch.put(encode_key(key_group, key), data)
                size += len(data)
                if writes_per_key is not None:
                    writes_per_key[key] = writes_per_key.get(key, 0) + 1
            self._db.write(batch, self._write_options)
            self._writes += len(dirty)
            self._bytes_serialized += size
            dirty.clear()
        self._flushes += 1

    def items(self, key_groups: Iterable[int]) -> Iterator[tuple[int, Key, Any]]:
        """Entries of the key groups as RocksDB has them, overlaid with the dirty cache entries."""
        cache = self._cache
        overlay: dict[int, dict[Key, Any]] = {}
        for key, key_group in self._dirty.items():
            overlay.setdefault(key_group, {})[key] = cache[key]
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

    @property
    def stats(self) -> StateAccessStats:
        """A snapshot of the counters; ``cache_misses`` equals RocksDB ``reads`` by design."""
        stats = super().stats
        stats.cache_misses = self._reads
        return stats

    def _put_uncached(self, key_group: int, key: Key, value: Any) -> None:
        RocksDBKeyedStateBackend.put(self, key_group, key, value)

    def __len__(self) -> int:
        """Number of entries in the cache (not in RocksDB).

        Example::

            >>> with CachedKeyedStateBackend(max_entries=1) as state:
            ...     state.put(0, "a", 1); state.put(0, "b", 2); len(state)
            1
        """
        return len(self._cache)

    def close(self) -> None:
        """Drop the cache (unflushed entries are lost, as on a failure) and close RocksDB."""
        self._cache.clear()
        self._dirty.clear()
        super().close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_entries={self.max_entries}, path={self.path!r}, "
            f"track_keys={self.track_keys})"
        )
