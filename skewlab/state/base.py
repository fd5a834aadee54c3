"""The keyed-state interface every backend implements, and its access statistics.

A :class:`KeyedStateBackend` is one subtask's keyed state, addressed the way Flink addresses
it: by ``(key_group, key)``, where the key group is a function of the key
(:func:`skewlab.keygroups.assign_to_key_group`) -- a key always comes with the same key group.

It is deliberately the smallest useful interface -- a value state per key (``get`` / ``put``
/ ``delete``), a scan of a key-group range (what a savepoint reads), ``flush`` (what a
checkpoint triggers) and access counters for the charts and the disk-latency model.

Values are arbitrary Python objects and must not be ``None`` (``None`` is what ``get`` returns
for a missing key; as with Flink's ``ValueState.update(null)``, use ``delete`` instead).
The object ``get`` returns may be mutated by the caller, but only a ``put`` makes the change
durable -- in the heap and cached backends it happens to be the stored object, in RocksDB it is
a fresh copy, exactly as in Flink.

Example::

    >>> from skewlab.state import create_backend
    >>> with create_backend("heap") as state:
    ...     state.put(3, "tweet-1", 1)
    ...     state.put(3, "tweet-1", state.get(3, "tweet-1") + 1)
    ...     state.get(3, "tweet-1"), state.stats.reads, state.stats.writes
    (2, 2, 2)
"""

from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skewlab.state.value_state import ValueStateCore

__all__ = [
    "CoreBackedStateBackend",
    "Key",
    "KeyedStateBackend",
    "PickleSerializer",
    "Serializer",
    "StateAccessStats",
]

#: A state key: Flink's key of the keyed stream.
Key = str | int


class Serializer(Protocol):
    """What a serialising backend needs: ``dumps(obj) -> bytes`` and ``loads(bytes) -> obj``."""

    def dumps(self, obj: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


class PickleSerializer:
    """The default :class:`Serializer`: :mod:`pickle` with a fixed protocol (5 by default).

    ``dumps`` and ``loads`` are plain callables set per instance (no per-call attribute
    lookups), because they sit on the hot path of every RocksDB access.

    Example::

        >>> s = PickleSerializer()
        >>> s.loads(s.dumps({"views": 3}))
        {'views': 3}
    """

    def __init__(self, protocol: int = 5) -> None:
        self.protocol = protocol
        pickle_dumps = pickle.dumps

        def dumps(obj: Any, _dumps: Callable[..., bytes] = pickle_dumps) -> bytes:
            return _dumps(obj, protocol)

        self.dumps = dumps
        self.loads = pickle.loads

    def __repr__(self) -> str:
        return f"PickleSerializer(protocol={self.protocol})"


@dataclass
class StateAccessStats:
    """Counters of one backend's state accesses (a snapshot, taken by ``backend.stats``).

    ``reads`` / ``writes`` / ``deletes`` count accesses to the backend's *storage*: for heap
    and single-key that is every ``get`` / ``put`` / ``delete``; for ``cached`` only what
    reaches RocksDB (misses, evictions and flushes of dirty entries). ``cache_hits`` /
    ``cache_misses`` count ``get`` lookups in a cache. ``reads_per_key`` / ``writes_per_key``
    are filled only when the backend was created with ``track_keys=True``.

    Example::

        >>> StateAccessStats(cache_hits=3, cache_misses=1).hit_ratio
        0.75
        >>> StateAccessStats().hit_ratio is None
        True
    """

    reads: int = 0
    writes: int = 0
    deletes: int = 0
    bytes_serialized: int = 0
    bytes_deserialized: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    evictions: int = 0
    flushes: int = 0
    reads_per_key: dict[Key, int] | None = None
    writes_per_key: dict[Key, int] | None = None

    @property
    def hit_ratio(self) -> float | None:
        """``cache_hits / (cache_hits + cache_misses)``, or ``None`` when nothing was looked up."""
        lookups = self.cache_hits + self.cache_misses
        return self.cache_hits / lookups if lookups else None

    def __add__(self, other: StateAccessStats) -> StateAccessStats:
        """Sum two snapshots (e.g. over the subtasks of a job); per-key counts are merged."""
        if not isinstance(other, StateAccessStats):
            return NotImplemented
        total = StateAccessStats()
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, int):
                setattr(total, f.name, mine + theirs)
            elif mine is not None or theirs is not None:
                merged = dict(mine or {})
                for key, count in (theirs or {}).items():
                    merged[key] = merged.get(key, 0) + count
                setattr(total, f.name, merged)
        return total


class KeyedStateBackend(ABC):
    """One subtask's keyed value state, addressed by ``(key_group, key)``.

    Subclasses keep their counters in the plain instance attributes ``_reads``, ``_writes``,
    ... (cheap to increment on the hot path); :attr:`stats` turns them into a
    :class:`StateAccessStats` snapshot. With ``track_keys=True`` the per-key read/write counts
    are kept too; the hot path pays for that only when it was asked for.

    Example::

        >>> from skewlab.state import create_backend
        >>> from skewlab.keygroups import KeyGroupRange
        >>> with create_backend("rocksdb") as state:
        ...     state.put(0, "a", [1]); state.put(1, "b", [2])
        ...     sorted(state.items(KeyGroupRange(0, 1)))
        [(0, 'a', [1]), (1, 'b', [2])]
    """

    #: The name :func:`skewlab.state.create_backend` knows this backend by.
    name: str = ""

    def __init__(self, *, track_keys: bool = False) -> None:
        self._reads = 0
        self._writes = 0
        self._deletes = 0
        self._bytes_serialized = 0
        self._bytes_deserialized = 0
        self._cache_hits = 0
        self._cache_misses = 0
        self._evictions = 0
        self._flushes = 0
        self._closed = False
        self.track_keys = bool(track_keys)
        self._reads_per_key: dict[Key, int] | None = {} if track_keys else None
        self._writes_per_key: dict[Key, int] | None = {} if track_keys else None

    # -- the value state ---------------------------------------------------------------------

    @abstractmethod
    def get(self, key_group: int, key: Key) -> Any | None:
        """The value stored for ``key`` in ``key_group``, or ``None``."""

    @abstractmethod
    def put(self, key_group: int, key: Key, value: Any) -> None:
        """Store ``value`` (not ``None``) for ``key`` in ``key_group``."""

    @abstractmethod
    def delete(self, key_group: int, key: Key) -> None:
        """Remove ``key`` from ``key_group`` (no error when it is absent)."""

    @abstractmethod
    def items(self, key_groups: Iterable[int]) -> Iterator[tuple[int, Key, Any]]:
        """Yield ``(key_group, key, value)`` for every entry in the given key groups.

        ``key_groups`` is a :class:`~skewlab.keygroups.KeyGroupRange` or any iterable of key
        groups, read one key group after the other, as a savepoint of that range would be.
        Order within a key group is unspecified. ``items`` does not count as reads.
        """

    def flush(self) -> None:
        """A checkpoint: persist whatever is only in memory (counted in ``stats.flushes``)."""
        self._flushes += 1

    def value_state_core(self) -> ValueStateCore:
        """This backend's value state as a compiled core, for compiled operator loops
        (:mod:`skewlab.count_loops`): the backend's own compiled core where it has one and
        keys are not tracked, else a core that calls this backend's ``get`` / ``put``.

        Example::

            >>> from skewlab.state import create_backend
            >>> from skewlab.count_loops import keyed_count
            >>> with create_backend("rocksdb") as state:
            ...     keyed_count(["a", "a"], [0, 0], state.value_state_core())
            ...     state.get(0, "a"), state.stats.writes
            0
            (2, 2)
        """
        from skewlab.state.value_state import CallbackValueState

        return CallbackValueState(self.get, self.put, self.delete)

    # -- statistics ----------------------------------------------------------------------------

    @property
    def stats(self) -> StateAccessStats:
        """A snapshot of the access counters as a :class:`StateAccessStats`."""
        self._sync_counters()
        return StateAccessStats(
            reads=self._reads,
            writes=self._writes,
            deletes=self._deletes,
            bytes_serialized=self._bytes_serialized,
            bytes_deserialized=self._bytes_deserialized,
            cache_hits=self._cache_hits,
            cache_misses=self._cache_misses,
            evictions=self._evictions,
            flushes=self._flushes,
            reads_per_key=None if self._reads_per_key is None else dict(self._reads_per_key),
            writes_per_key=None if self._writes_per_key is None else dict(self._writes_per_key),
        )

    def _sync_counters(self) -> None:  # noqa: B027 -- an optional hook, not abstract
        """Copy counters kept elsewhere (a compiled core) into ``_reads``, ``_writes``, ..."""

    # -- life cycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Release the backend's resources (files included). Closing twice is harmless."""
        self._closed = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> KeyedStateBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(track_keys={self.track_keys})"

    # -- helpers for subclasses ------------------------------------------------------------------

    def _install_api_key_tracking(self) -> None:
        """Wrap ``get``/``put`` so each call counts one read/write for its key.

        For backends whose every ``get``/``put`` *is* a storage access (heap, rocksdb,
        single-key). The wrappers are set as instance attributes only when tracking was asked
        for, so the untracked hot path is the plain method.
        """
        self.get, self.put = self._key_tracking(self.get, self.put)  # type: ignore[method-assign]

    def _key_tracking(
        self, get: Callable[[int, Key], Any], put: Callable[[int, Key, Any], None]
    ) -> tuple[Callable[[int, Key], Any], Callable[[int, Key, Any], None]]:
        """``get`` / ``put`` wrapped to count one read / write per call for its key."""
        reads = self._reads_per_key
        writes = self._writes_per_key
        assert reads is not None and writes is not None

        def tracked_get(key_group: int, key: Key) -> Any | None:
            reads[key] = reads.get(key, 0) + 1
            return get(key_group, key)

        def tracked_put(key_group: int, key: Key, value: Any) -> None:
            writes[key] = writes.get(key, 0) + 1
            put(key_group, key, value)

        return tracked_get, tracked_put


class CoreBackedStateBackend(KeyedStateBackend):
    """A backend whose value state is a compiled core (:mod:`skewlab.state.value_state`) that
    counts its own ``reads`` / ``writes`` / ``deletes``: the core's ``get`` / ``put`` /
    ``delete`` are bound as the backend's own, so a call from Python is one C call, and a
    compiled operator loop gets the core itself from :meth:`value_state_core`.

    Example::

        >>> from skewlab.state.value_state import HeapValueState
        >>> class Tiny(CoreBackedStateBackend):
        ...     def items(self, key_groups): return iter(())
        >>> state = Tiny(HeapValueState()); state.put(0, "a", 1); state.get(0, "a")
        1
        >>> state.stats.reads, state.stats.writes
        (1, 1)
    """

    def __init__(self, core: ValueStateCore, *, track_keys: bool = False) -> None:
        super().__init__(track_keys=track_keys)
        self._core: Any = core
        self.get = core.get  # type: ignore[method-assign]
        self.put = core.put  # type: ignore[method-assign]
        self.delete = core.delete  # type: ignore[method-assign]
        if track_keys:
            self._install_api_key_tracking()

    def get(self, key_group: int, key: Key) -> Any | None:
        return self._core.get(key_group, key)

    def put(self, key_group: int, key: Key, value: Any) -> None:
        self._core.put(key_group, key, value)

    def delete(self, key_group: int, key: Key) -> None:
        self._core.delete(key_group, key)

    def value_state_core(self) -> ValueStateCore:
        return self._core if not self.track_keys else super().value_state_core()

    def _sync_counters(self) -> None:
        core = self._core
        self._reads, self._writes, self._deletes = core.reads, core.writes, core.deletes
