"""FLIP-325's write-back LRU cache of objects, in front of any keyed state backend.

The cache holds *deserialised* objects, at most ``max_entries`` of them, in least- to
most-recently-used order (:class:`~skewlab.state.value_state.WriteBackLru`, compiled: a hit
costs what a hash-map access costs, as in Flink). It wraps another
:class:`~skewlab.state.api.KeyedStateBackend` -- the *storage*, RocksDB in FLIP-325:

* ``get`` -- a hit moves the entry to the most-recent end and returns the cached object itself
  (the caller may mutate it and ``put`` it back, Flink-style); a miss reads the storage and
  caches the result (a missing key is cached as ``None`` too), which may evict;
* ``put`` -- replaces the cached object and marks it dirty (may evict);
* eviction -- drops the least recently used entry, writing it to the storage only if it is
  dirty;
* ``write_batch=N > 1`` -- (not in FLIP-325) evicted dirty entries wait in a write buffer of
  at most ``N`` and go to the storage ``N`` at a time
  (:meth:`~skewlab.state.api.KeyedStateBackend.put_all`: one RocksDB write batch, in key order);
  a lookup of a waiting entry takes it back into the cache;
* ``checkpoint`` -- writes every dirty entry (the write buffer's too) to the storage at once
  (:meth:`~skewlab.state.api.KeyedStateBackend.put_all`: one RocksDB write batch), marks them
  clean, then checkpoints the storage (RocksDB: its own checkpoint);
* ``delete`` -- removes the key from the cache and from the storage.

``policy="tinylfu"`` replaces the LRU with W-TinyLFU's admission
(:class:`~skewlab.state.value_state.WriteBackTinyLfu`, compiled too): a missed key waits in a
small window, then enters the main cache only if a count-min sketch of every lookup says it is
more frequent than the entry it would evict -- a scan of cold keys no longer flushes the hot
ones. Write-back, checkpoints and counters are the LRU's; only ``write_batch=1``.

``max_entries=0`` means no cache: every call goes straight to the storage (and every ``get``
counts as a miss). In :attr:`stats`, ``reads`` / ``writes`` / ``deletes`` and the byte counters
are the storage's (what reached it), ``cache_hits`` / ``cache_misses`` count ``get`` lookups,
``evictions`` counts entries pushed out (dirty or not); per-key counts, when tracked, are the
storage's accesses.

The cache is keyed by the key alone, so a key must always come with the same key group -- true
whenever ``key_group = assign_to_key_group(key, max_parallelism)``, as in Flink.

Example::

    >>> from skewlab.state import create_backend
    >>> with create_backend("cached", max_entries=2) as backend:
    ...     state = backend.value_state()
    ...     for key in ["a", "b", "a", "c", "b"]:     # a count per key
    ...         state.put(0, key, (state.get(0, key) or 0) + 1)
    ...     s = backend.stats
    ...     (s.cache_hits, s.cache_misses, s.evictions, s.reads, s.writes)
    (1, 4, 2, 4, 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.state.api import Key, KeyedStateBackend, StateAccessStats
from skewlab.state.value_state import (
    CallbackValueState,
    ValueStateCore,
    WriteBackLru,
    WriteBackTinyLfu,
)
from skewlab.validation import check_choice, check_whole

__all__ = ["CACHE_POLICIES", "DEFAULT_MAX_ENTRIES", "LruCachedKeyedStateBackend"]

#: Which entries the cache keeps: ``lru`` (FLIP-325: every missed key, the least recently used
#: evicted) or ``tinylfu`` (W-TinyLFU: a missed key admitted only if the sketch finds it more
#: frequent than the victim).
CACHE_POLICIES = ("lru", "tinylfu")
_CORES = {"lru": WriteBackLru, "tinylfu": WriteBackTinyLfu}

#: Cache size when none is given: the one default of every cache in skewlab (the ``cached``
#: backend, the ``cached`` strategy, ``--backend cached``, the count jobs). It is the largest of
#: FLIP-325's benchmark sizes (250 / 500 / 1,000 entries), the one that holds all 1,000 keys of
#: the seed's key pattern. (FLIP-325's own default, 0, would mean "no cache".)
DEFAULT_MAX_ENTRIES = 1_000


class LruCachedKeyedStateBackend(KeyedStateBackend):
    """A write-back LRU cache of objects (``max_entries`` of them) over ``storage`` (FLIP-325);
    ``policy="tinylfu"`` admits by W-TinyLFU instead (see the module doc).

    The wrapper owns ``storage``: closing the wrapper closes it.

    Example::

        >>> from skewlab.state.rocksdb import RocksDBKeyedStateBackend
        >>> backend = LruCachedKeyedStateBackend(RocksDBKeyedStateBackend(), max_entries=100)
        >>> backend.put(0, "k", [1])
        >>> value = backend.get(0, "k"); value.append(2); backend.put(0, "k", value)
        >>> backend.get(0, "k") is value, backend.stats.writes   # nothing reached RocksDB yet
        (True, 0)
        >>> backend.checkpoint(); backend.stats.writes
        1
        >>> backend.close()
    """

    name = "cached"

    def __init__(
        self,
        storage: KeyedStateBackend,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        write_batch: int = 1,
        policy: str = "lru",
    ) -> None:
        self.max_entries = check_whole("max_entries (0 disables the cache)", max_entries, 0)
        self.write_batch = check_whole("write_batch (evictions per write-back)", write_batch, 1)
        self.policy = check_choice("cache policy (--cache-policy)", policy, CACHE_POLICIES)
        if self.policy != "lru" and self.write_batch > 1:
            raise SkewlabInputError(
                f"write_batch={write_batch} batches an LRU's write-backs; the {policy} cache "
                "policy writes evicted entries back one at a time (write_batch 1)"
            )
        # the cache itself counts no per-key accesses: the storage's are the ones that matter
        super().__init__(key_group_range=storage.key_group_range, track_keys=False)
        self.storage = storage
        self._lru: WriteBackLru | WriteBackTinyLfu | None = None

    @property
    def on_disk(self) -> bool:  # type: ignore[override]
        """Whether the storage behind the cache is a disk."""
        return self.storage.on_disk

    def _create_value_state(self) -> ValueStateCore:
        storage = self.storage.value_state()
        if self.max_entries == 0:
            self._lru = None
            return CallbackValueState(self._miss_get, storage.put, storage.delete)
        self._lru = _CORES[self.policy](
            self.max_entries, storage.get, storage.put, self.storage.put_all, self.write_batch
        )
        return self._lru

    def _miss_get(self, key_group: int, key: Key) -> Any | None:
        """No cache: every lookup is a miss that reads the storage."""
        self._cache_misses += 1
        return self.storage.value_state().get(key_group, key)

    def delete(self, key_group: int, key: Key) -> None:
        """Remove ``key`` from the cache and from the storage."""
        lru = self._cache()
        if lru is not None:
            lru.delete(key_group, key)
        self.storage.delete(key_group, key)

    def _cache(self) -> WriteBackLru | WriteBackTinyLfu | None:
        self.value_state()  # made on first use
        return self._lru

    def checkpoint(self) -> None:
        """Write every dirty entry to the storage (at once), mark it clean, then checkpoint the
        storage."""
        lru = self._cache()
        if lru is not None:
            self.storage.put_all(lru.dirty_entries(mark_clean=True))
        self.storage.checkpoint()
        super().checkpoint()

    def items(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[int, Key, Any]]:
        """The storage's entries, overlaid with the dirty cache entries (nothing is written)."""
        overlay: dict[int, dict[Key, Any]] = {}
        lru = self._cache()
        if lru is not None:
            for key_group, key, value in lru.dirty_entries():
                overlay.setdefault(key_group, {})[key] = value
        for key_group in self.key_group_range if key_groups is None else key_groups:
            pending = overlay.pop(key_group, {})
            for _, key, value in self.storage.items([key_group]):
                yield key_group, key, pending.pop(key, value)
            for key, value in pending.items():
                yield key_group, key, value

    def restore(self, entries: Iterable[tuple[int, Key, Any]]) -> int:
        """Restore into the storage; the cache starts empty (as after a restart)."""
        return self.storage.restore(self._owned(entries))

    @property
    def last_checkpoint(self) -> str | None:  # type: ignore[override]
        """The storage's latest checkpoint directory (RocksDB), if any."""
        return self.storage.last_checkpoint

    # -- statistics and life cycle ---------------------------------------------------------------

    @property
    def stats(self) -> StateAccessStats:
        """The storage's counters (what reached it) with the cache's hits, misses and
        evictions.

        Example::

            >>> from skewlab.state import create_backend
            >>> with create_backend("cached", max_entries=1) as backend:
            ...     backend.put(0, "a", 1); backend.put(0, "b", 2); _ = backend.get(0, "a")
            ...     s = backend.stats    # b evicted a (dirty: written), a's miss evicted b
            ...     (s.cache_hits, s.cache_misses, s.evictions, s.reads, s.writes)
            (0, 1, 2, 1, 2)
        """
        stats = self.storage.stats
        lru = self._cache()
        if lru is not None:
            stats.cache_hits, stats.cache_misses = lru.hits, lru.misses
            stats.evictions = lru.evictions
        else:
            stats.cache_misses = self._cache_misses
        stats.checkpoints = self._checkpoints
        return stats

    def __len__(self) -> int:
        """Number of entries in the cache (not in the storage).

        Example::

            >>> from skewlab.state import create_backend
            >>> with create_backend("cached", max_entries=1) as backend:
            ...     backend.put(0, "a", 1); backend.put(0, "b", 2); len(backend)
            1
        """
        lru = self._cache()
        return len(lru) if lru is not None else 0

    def close(self) -> None:
        """Drop the cache (unflushed entries are lost, as on a failure) and close the storage."""
        if self._lru is not None:
            self._lru.clear()
        self.storage.close()
        super().close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_entries={self.max_entries}, "
            f"write_batch={self.write_batch}, policy={self.policy!r}, storage={self.storage!r})"
        )
