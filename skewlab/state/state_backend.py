"""Flink's ``StateBackend``: which keyed state a job uses, and the backends it makes.

A :class:`StateBackend` is a small, frozen description -- a backend name and its options --
that travels with an operator to every subtask; there it creates one
:class:`~skewlab.state.api.KeyedStateBackend` for the key groups the subtask owns
(:meth:`StateBackend.create_keyed_state_backend`), as Flink's
``StateBackend.createKeyedStateBackend(..., keyGroupRange, ...)`` does.

==============  ===================================================================
``heap``        Python objects in a dict per key group (HashMapStateBackend)
``rocksdb``     real RocksDB, values serialised, WAL off (EmbeddedRocksDBStateBackend)
``cached``      FLIP-325: a write-back LRU of objects in front of ``rocksdb``
``single_key``  FLIP-140: only the current key's value; input sorted by key
==============  ===================================================================

``max_entries`` puts FLIP-325's LRU (:mod:`skewlab.state.lru_cache`) in front of *any* of them;
``cached`` is ``rocksdb`` with it (``DEFAULT_MAX_ENTRIES`` unless given); ``cache_policy="tinylfu"``
makes that cache admit by W-TinyLFU instead of LRU.

Example::

    >>> from skewlab.state import StateBackend
    >>> from skewlab.state.key_groups import KeyGroupRange
    >>> backend = StateBackend("cached", max_entries=1000)
    >>> with backend.create_keyed_state_backend(KeyGroupRange(0, 63)) as keyed:
    ...     keyed.put(0, "tweet-1", 1)
    ...     keyed.get(0, "tweet-1"), keyed.stats.hit_ratio
    (1, 1.0)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.state.api import KeyedStateBackend, Serializer
from skewlab.state.heap import HeapKeyedStateBackend
from skewlab.state.key_groups import KeyGroupRange
from skewlab.state.lru_cache import (
    CACHE_POLICIES,
    DEFAULT_MAX_ENTRIES,
    LruCachedKeyedStateBackend,
)
from skewlab.state.rocksdb import RocksDBKeyedStateBackend
from skewlab.state.single_key import SingleKeyStateBackend
from skewlab.validation import check_choice, check_whole

__all__ = ["BACKENDS", "StateBackend", "create_backend"]

#: The names a :class:`StateBackend` accepts (``"single-key"`` is taken for ``"single_key"``).
BACKENDS: tuple[str, ...] = ("heap", "rocksdb", "cached", "single_key")

_STORAGE: dict[str, type[KeyedStateBackend]] = {
    "heap": HeapKeyedStateBackend,
    "rocksdb": RocksDBKeyedStateBackend,
    "cached": RocksDBKeyedStateBackend,
    "single_key": SingleKeyStateBackend,
}
_SERIALISING = ("rocksdb", "cached")


@dataclass(frozen=True)
class StateBackend:
    """A keyed state backend by name, with its options (validated on construction).

    Attributes:
        name: one of :data:`BACKENDS`.
        max_entries: entries of FLIP-325's LRU cache in front of the backend (``None``: no
            cache, except ``cached``: :data:`DEFAULT_MAX_ENTRIES`; ``0``: a cache that holds
            nothing, every lookup a miss).
        write_batch: evicted dirty cache entries written back this many at a time, in one
            write batch (``1``: one at a time, as FLIP-325; only with a cache).
        serializer: how ``rocksdb`` / ``cached`` store values (default: pickle).
        local_dir: where RocksDB's files go (default: Spark's first local dir).
        cache_policy: which entries the cache keeps, one of
            :data:`~skewlab.state.lru_cache.CACHE_POLICIES` (``lru``: FLIP-325's; ``tinylfu``:
            W-TinyLFU's admission; only with a cache and ``write_batch=1``).

    Example::

        >>> StateBackend("single-key").name
        'single_key'
        >>> StateBackend("heap", serializer=object())
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: state backend 'heap' keeps objects, it has no serializer (only rocksdb and cached serialise)
    """  # noqa: E501

    name: str = "rocksdb"
    max_entries: int | None = None
    serializer: Serializer | None = None
    local_dir: str | os.PathLike[str] | None = None
    write_batch: int = 1
    cache_policy: str = "lru"

    def __post_init__(self) -> None:
        name = self.name.strip().lower().replace("-", "_") if isinstance(self.name, str) else None
        if name not in BACKENDS:
            raise SkewlabInputError(
                f"unknown state backend {self.name!r}; choose one of: {', '.join(BACKENDS)}"
            )
        object.__setattr__(self, "name", name)
        if self.max_entries is not None:
            check_whole("max_entries (LRU cache entries; 0 caches nothing)", self.max_entries, 0)
        check_whole("write_batch (evictions per write-back)", self.write_batch, 1)
        if self.write_batch > 1 and self.cache_entries is None:
            raise SkewlabInputError(
                f"write_batch={self.write_batch} batches a cache's write-backs: give the "
                f"backend a cache (max_entries, or the 'cached' backend), not {name!r} alone"
            )
        check_choice("cache policy (--cache-policy)", self.cache_policy, CACHE_POLICIES)
        if self.cache_policy != "lru":
            if self.cache_entries is None:
                raise SkewlabInputError(
                    f"cache policy {self.cache_policy!r} chooses a cache's entries: give the "
                    f"backend a cache (max_entries, or the 'cached' backend), not {name!r} alone"
                )
            if self.write_batch > 1:
                raise SkewlabInputError(
                    f"write_batch={self.write_batch} batches an LRU's write-backs; the "
                    f"{self.cache_policy} cache policy writes evicted entries back one at a time"
                )
        for option in ("serializer", "local_dir"):
            if getattr(self, option) is not None and name not in _SERIALISING:
                what = "serializer" if option == "serializer" else "local directory"
                raise SkewlabInputError(
                    f"state backend {name!r} keeps objects, it has no {what} "
                    f"(only {' and '.join(_SERIALISING)} serialise)"
                )

    @property
    def on_disk(self) -> bool:
        """Whether the backends it makes keep their state on disk (RocksDB, cached or not)."""
        return _STORAGE[self.name].on_disk

    @property
    def cache_entries(self) -> int | None:
        """Entries of the LRU cache in front of the storage, or ``None`` for no cache."""
        if self.name == "cached" and self.max_entries is None:
            return DEFAULT_MAX_ENTRIES
        return self.max_entries

    def create_keyed_state_backend(
        self, key_group_range: KeyGroupRange | None = None, *, track_keys: bool = False
    ) -> KeyedStateBackend:
        """One subtask's keyed state backend, for the key groups in ``key_group_range``.

        ``track_keys`` counts every access to the storage per key (for the latency model).
        """
        options: dict[str, Any] = {"key_group_range": key_group_range, "track_keys": track_keys}
        if self.name in _SERIALISING:
            options.update(serializer=self.serializer, local_dir=self.local_dir)
        storage = _STORAGE[self.name](**options)
        if self.cache_entries is None:
            return storage
        return LruCachedKeyedStateBackend(
            storage, self.cache_entries, self.write_batch, self.cache_policy
        )


def create_backend(
    name: str,
    *,
    max_entries: int | None = None,
    serializer: Serializer | None = None,
    local_dir: str | os.PathLike[str] | None = None,
    key_group_range: KeyGroupRange | None = None,
    track_keys: bool = False,
    write_batch: int = 1,
    cache_policy: str = "lru",
) -> KeyedStateBackend:
    """``StateBackend(name, ...).create_keyed_state_backend(key_group_range, ...)`` in one call.

    Example::

        >>> backend = create_backend("rocksdb", track_keys=True)
        >>> type(backend).__name__
        'RocksDBKeyedStateBackend'
        >>> backend.close()
        >>> create_backend("mapdb")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown state backend 'mapdb'; choose one of: heap, rocksdb, cached, single_key
    """  # noqa: E501
    state_backend = StateBackend(
        name, max_entries, serializer, local_dir, write_batch, cache_policy=cache_policy
    )
    return state_backend.create_keyed_state_backend(key_group_range, track_keys=track_keys)
