"""Flink's keyed-state interfaces, in small: a keyed state backend and its value state.

In Flink a ``StateBackend`` creates one ``KeyedStateBackend`` per subtask, for the key groups
the subtask owns (its ``KeyGroupRange``), and an operator asks that backend for a ``ValueState``
it reads (``value()``) and writes (``update()``) for the current key. skewlab has the same
pieces (:class:`~skewlab.state.state_backend.StateBackend` makes the backends):

* :class:`KeyedStateBackend` -- one subtask's keyed state: a value per ``(key_group, key)``,
  ``items`` over key groups (what a savepoint reads), ``checkpoint``, access counters for the
  charts and the latency model, ``close``;
* :class:`ValueState` -- what :meth:`KeyedStateBackend.value_state` hands an operator:
  ``get`` / ``put`` / ``delete`` by ``(key_group, key)``. It is the per-record hot path, a
  compiled core (:mod:`skewlab.state.value_state`) wherever one exists; an operator binds its
  methods once. The backend's own ``get`` / ``put`` / ``delete`` are the same accesses, one
  call further away.

Values are arbitrary Python objects and must not be ``None`` (``None`` is what ``get`` returns
for a missing key; as with Flink's ``ValueState.update(null)``, use ``delete`` instead).
The object ``get`` returns may be mutated by the caller, but only a ``put`` makes the change
durable -- in the heap backend and a cache it happens to be the stored object, in RocksDB it is
a fresh copy, exactly as in Flink.

Example::

    >>> from skewlab.state import create_backend
    >>> with create_backend("heap") as backend:
    ...     state = backend.value_state()
    ...     state.put(3, "tweet-1", 1)
    ...     state.put(3, "tweet-1", state.get(3, "tweet-1") + 1)
    ...     backend.get(3, "tweet-1"), backend.stats.reads, backend.stats.writes
    (2, 2, 2)
"""

from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol

from skewlab.errors import SkewlabInputError
from skewlab.state.key_groups import UPPER_BOUND_MAX_PARALLELISM, KeyGroupRange
from skewlab.state.value_state import CallbackValueState, ValueStateCore

__all__ = [
    "ALL_KEY_GROUPS",
    "Key",
    "KeyedStateBackend",
    "PickleSerializer",
    "Serializer",
    "StateAccessStats",
    "ValueState",
]

#: A state key: Flink's key of the keyed stream.
Key = str | int

#: Every key group there can be: what a backend covers when no range is given.
ALL_KEY_GROUPS = KeyGroupRange(0, UPPER_BOUND_MAX_PARALLELISM - 1)


class ValueState(Protocol):
    """Flink's ``ValueState`` by ``(key_group, key)``: ``get`` (``value()``), ``put``
    (``update()``) and ``delete`` (``clear()``). ``get`` of a missing key is ``None``."""

    def get(self, key_group: int, key: Key) -> Any | None: ...

    def put(self, key_group: int, key: Key, value: Any) -> None: ...

    def delete(self, key_group: int, key: Key) -> None: ...


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
        #: what a snapshot records of its values' serializer
        self.name = f"pickle-{protocol}"
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
    and single-key that is every ``get`` / ``put`` / ``delete``; behind an LRU cache only what
    reaches the storage (misses, evictions and checkpoints of dirty entries). ``on_disk`` says
    whether that storage is a disk (RocksDB): only then does the latency model price the
    accesses. ``cache_hits`` / ``cache_misses`` count ``get`` lookups in a cache.
    ``reads_per_key`` / ``writes_per_key`` are filled only when the backend was created with
    ``track_keys=True``.

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
    checkpoints: int = 0
    on_disk: bool = False
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
            if isinstance(mine, bool):
                setattr(total, f.name, mine or theirs)
            elif isinstance(mine, int):
                setattr(total, f.name, mine + theirs)
            elif mine is not None or theirs is not None:
                merged = dict(mine or {})
                for key, count in (theirs or {}).items():
                    merged[key] = merged.get(key, 0) + count
                setattr(total, f.name, merged)
        return total


class KeyedStateBackend(ABC):
    """One subtask's keyed value state for the key groups in ``key_group_range``.

    Subclasses implement :meth:`_create_value_state` (the storage's own ``get`` / ``put`` /
    ``delete``), :meth:`items` and, where they hold resources, :meth:`close`. They keep their
    counters in the plain instance attributes ``_reads``, ``_writes``, ... (cheap to increment
    on the hot path) or in their compiled core (read back by :meth:`_sync_counters`);
    :attr:`stats` turns them into a :class:`StateAccessStats` snapshot. With
    ``track_keys=True`` every storage access is also counted for its key -- wrapped around the
    value state in one place, :meth:`value_state`, so the untracked hot path pays nothing.

    Example::

        >>> from skewlab.state import create_backend
        >>> with create_backend("rocksdb", key_group_range=KeyGroupRange(0, 1)) as backend:
        ...     backend.put(0, "a", [1]); backend.put(1, "b", [2])
        ...     sorted(backend.items())
        [(0, 'a', [1]), (1, 'b', [2])]
    """

    #: The name :func:`skewlab.state.create_backend` knows this backend by.
    name: ClassVar[str] = ""
    #: Whether this backend's storage is a disk (the latency model prices only such accesses).
    on_disk: ClassVar[bool] = False
    #: The directory of the latest checkpoint, for backends whose checkpoint is files (RocksDB).
    last_checkpoint: str | None = None

    def __init__(
        self, *, key_group_range: KeyGroupRange | None = None, track_keys: bool = False
    ) -> None:
        self.key_group_range = ALL_KEY_GROUPS if key_group_range is None else key_group_range
        self._reads = 0
        self._writes = 0
        self._deletes = 0
        self._bytes_serialized = 0
        self._bytes_deserialized = 0
        self._cache_hits = 0
        self._cache_misses = 0
        self._evictions = 0
        self._checkpoints = 0
        self._closed = False
        self.track_keys = bool(track_keys)
        self._reads_per_key: dict[Key, int] | None = {} if track_keys else None
        self._writes_per_key: dict[Key, int] | None = {} if track_keys else None
        self._value_state: ValueStateCore | None = None

    # -- the value state ---------------------------------------------------------------------

    def value_state(self) -> ValueStateCore:
        """The value state an operator reads and writes per record (made once, then reused).

        A compiled core (:mod:`skewlab.state.value_state`): bind its ``get`` / ``put`` once and
        call them per record; compiled operator loops take the core itself. With
        ``track_keys`` each ``get`` / ``put`` also counts one read / write for its key.

        Example::

            >>> from skewlab.state import create_backend
            >>> with create_backend("heap", track_keys=True) as backend:
            ...     state = backend.value_state()
            ...     state.put(0, "a", 1); _ = state.get(0, "a")
            ...     backend.stats.reads_per_key, backend.stats.writes_per_key
            ({'a': 1}, {'a': 1})
        """
        if self._value_state is None:
            state = self._create_value_state()
            if self.track_keys:
                state = self._tracking(state)
            self._value_state = state
        return self._value_state

    @abstractmethod
    def _create_value_state(self) -> ValueStateCore:
        """The storage's own value state, untracked."""

    def get(self, key_group: int, key: Key) -> Any | None:
        """The value stored for ``key`` in ``key_group``, or ``None`` (``value_state().get``)."""
        return self.value_state().get(key_group, key)

    def put(self, key_group: int, key: Key, value: Any) -> None:
        """Store ``value`` (not ``None``) for ``key`` in ``key_group`` (``value_state().put``)."""
        self.value_state().put(key_group, key, value)

    def delete(self, key_group: int, key: Key) -> None:
        """Remove ``key`` from ``key_group``; no error when it is absent."""
        self.value_state().delete(key_group, key)

    def put_all(self, entries: Iterable[tuple[int, Key, Any]]) -> None:
        """``put`` every ``(key_group, key, value)`` (a checkpoint's write-back of a cache).

        Backends that can write many entries at once (RocksDB: one write batch) do so.
        """
        put = self.value_state().put
        for key_group, key, value in entries:
            put(key_group, key, value)

    def restore(self, entries: Iterable[tuple[int, Key, Any]]) -> int:
        """Fill this (fresh) backend with ``(key_group, key, value)`` entries restored from a
        snapshot; returns how many. Restoring is not a state access: no counter moves.

        Every entry must belong to the backend's key groups (a restore never takes a key the
        subtask does not own).

        Example::

            >>> from skewlab.state import create_backend
            >>> with create_backend("heap", key_group_range=KeyGroupRange(0, 1)) as backend:
            ...     backend.restore([(0, "a", 1), (1, "b", 2)]), backend.stats.writes
            (2, 0)
        """
        raise NotImplementedError(f"{type(self).__name__} cannot restore a snapshot")

    def _owned(self, entries: Iterable[tuple[int, Key, Any]]) -> Iterator[tuple[int, Key, Any]]:
        """``entries``, each checked to belong to this backend's key groups."""
        key_groups = self.key_group_range
        for entry in entries:
            if entry[0] not in key_groups:
                raise SkewlabInputError(
                    f"key {entry[1]!r} of key group {entry[0]} restored into a backend for key "
                    f"groups [{key_groups.start_key_group}, {key_groups.end_key_group}]"
                )
            yield entry

    @abstractmethod
    def items(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[int, Key, Any]]:
        """Yield ``(key_group, key, value)`` for every entry in the given key groups.

        ``key_groups`` is a :class:`~skewlab.state.key_groups.KeyGroupRange` or any iterable
        of key groups (default: the backend's own range), read one key group after the other,
        as a savepoint of that range would be. Order within a key group is unspecified.
        ``items`` does not count as reads.
        """

    def checkpoint(self) -> None:
        """Take a checkpoint: persist whatever is only in memory (counted in
        ``stats.checkpoints``)."""
        self._checkpoints += 1

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
            checkpoints=self._checkpoints,
            on_disk=self.on_disk,
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

    # -- per-key tracking ----------------------------------------------------------------------

    def _tracking(self, state: ValueStateCore) -> ValueStateCore:
        """``state`` with each ``get`` / ``put`` counted as one read / write of its key."""
        reads = self._reads_per_key
        writes = self._writes_per_key
        assert reads is not None and writes is not None
        get, put = state.get, state.put

        def tracked_get(key_group: int, key: Key) -> Any | None:
            reads[key] = reads.get(key, 0) + 1
            return get(key_group, key)

        def tracked_put(key_group: int, key: Key, value: Any) -> None:
            writes[key] = writes.get(key, 0) + 1
            put(key_group, key, value)

        return CallbackValueState(tracked_get, tracked_put, state.delete)


class CoreBackedStateBackend(KeyedStateBackend):
    """A backend whose storage *is* a compiled value-state core
    (:mod:`skewlab.state.value_state`) that counts its own ``reads`` / ``writes`` /
    ``deletes``: :meth:`value_state` hands out the core itself.

    Example::

        >>> from skewlab.state.value_state import HeapValueState
        >>> class Tiny(CoreBackedStateBackend):
        ...     def items(self, key_groups=None): return iter(())
        >>> backend = Tiny(HeapValueState()); backend.put(0, "a", 1); backend.get(0, "a")
        1
        >>> backend.stats.reads, backend.stats.writes
        (1, 1)
    """

    def __init__(
        self,
        core: ValueStateCore,
        *,
        key_group_range: KeyGroupRange | None = None,
        track_keys: bool = False,
    ) -> None:
        super().__init__(key_group_range=key_group_range, track_keys=track_keys)
        self._core: Any = core

    def _create_value_state(self) -> ValueStateCore:
        return self._core

    def _sync_counters(self) -> None:
        core = self._core
        self._reads, self._writes, self._deletes = core.reads, core.writes, core.deletes
