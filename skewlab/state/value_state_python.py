"""The value-state cores in plain Python: the same behaviour as the compiled ones
(:mod:`skewlab.state.value_state_compiled`), used where those could not be built (no C compiler
at install time) or when ``SKEWLAB_PURE_PYTHON=1``. :mod:`skewlab.state.value_state` picks one.

Every class here has the compiled class's name, methods, counters and errors; the tests run the
same model tests against both. Only the speed differs: a hit of this LRU costs a few hundred
nanoseconds of interpreted Python instead of a few tens compiled.

Example::

    >>> store = {}
    >>> lru = WriteBackLru(1, lambda g, k: store.get(k), lambda g, k, v: store.__setitem__(k, v))
    >>> lru.put(0, "a", 1); lru.put(0, "b", 2)       # "a" is evicted, written back
    >>> store, lru.get(0, "b"), lru.hits, lru.evictions
    ({'a': 1}, 2, 1, 1)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from skewlab.errors import SkewlabInputError, UnsortedInputError

__all__ = [
    "CallbackValueState",
    "HeapValueState",
    "SingleKeyValueState",
    "ValueStateCore",
    "WriteBackLru",
    "WriteBackTinyLfu",
]


class ValueStateCore:
    """``get`` / ``put`` / ``delete`` by ``(key_group, key)``; a missing key ``get``s ``None``."""

    def get(self, key_group: Any, key: Any) -> Any:
        raise NotImplementedError

    def put(self, key_group: Any, key: Any, value: Any) -> None:
        raise NotImplementedError

    def delete(self, key_group: Any, key: Any) -> None:
        raise NotImplementedError


class CallbackValueState(ValueStateCore):
    """A core over Python callables, e.g. a RocksDB backend's own ``get`` / ``put``.

    Example::

        >>> d = {}
        >>> core = CallbackValueState(lambda g, k: d.get(k), lambda g, k, v: d.update({k: v}))
        >>> core.put(0, "a", 1); core.get(0, "a")
        1
    """

    def __init__(self, get, put, delete=None) -> None:
        self._get, self._put, self._delete = get, put, delete

    def get(self, key_group: Any, key: Any) -> Any:
        return self._get(key_group, key)

    def put(self, key_group: Any, key: Any, value: Any) -> None:
        self._put(key_group, key, value)

    def delete(self, key_group: Any, key: Any) -> None:
        if self._delete is None:
            raise NotImplementedError("this value state has no delete")
        self._delete(key_group, key)


class HeapValueState(ValueStateCore):
    """Values in one dict per key group; ``reads`` / ``writes`` / ``deletes`` count calls.

    Example::

        >>> heap = HeapValueState(); heap.put(7, "k", [1])
        >>> heap.get(7, "k"), heap.get(7, "x"), heap.tables, heap.reads
        ([1], None, {7: {'k': [1]}}, 2)
    """

    def __init__(self) -> None:
        self.tables: dict[Any, dict[Any, Any]] = {}
        self.reads = self.writes = self.deletes = 0

    def get(self, key_group: Any, key: Any) -> Any:
        self.reads += 1
        table = self.tables.get(key_group)
        return None if table is None else table.get(key)

    def put(self, key_group: Any, key: Any, value: Any) -> None:
        self.writes += 1
        table = self.tables.get(key_group)
        if table is None:
            self.tables[key_group] = {key: value}
        else:
            table[key] = value

    def delete(self, key_group: Any, key: Any) -> None:
        self.deletes += 1
        table = self.tables.get(key_group)
        if table is not None:
            table.pop(key, None)


class SingleKeyValueState(ValueStateCore):
    """Only the current key's value; a new key starts empty and must sort after the last one.

    Example::

        >>> state = SingleKeyValueState()
        >>> state.put(0, "a", 1); state.get(0, "a"), state.get(0, "b")
        (1, None)
    """

    def __init__(self) -> None:
        self.reads = self.writes = self.deletes = 0
        self._has_key = False
        self._key_group: Any = -1
        self._key: Any = None
        self._value: Any = None

    def _switch(self, key_group: Any, key: Any) -> None:
        """Flink's ``setCurrentKey`` to a new key, checking the sort order."""
        if self._has_key:
            try:
                if key_group == self._key_group:
                    ordered = key > self._key
                else:
                    ordered = key_group > self._key_group
            except TypeError:  # e.g. an int key after a str key in the same key group
                ordered = False
            if not ordered:
                raise UnsortedInputError(
                    f"input is not sorted by key: key {key!r} (key group {key_group}) came "
                    f"after key {self._key!r} (key group {self._key_group}); the single-key "
                    "backend needs records sorted by (key_group, key)"
                )
        self._has_key = True
        self._key_group = key_group
        self._key = key
        self._value = None

    def _is_current(self, key_group: Any, key: Any) -> bool:
        return self._has_key and key == self._key and key_group == self._key_group

    def get(self, key_group: Any, key: Any) -> Any:
        self.reads += 1
        if not self._is_current(key_group, key):
            self._switch(key_group, key)
        return self._value

    def put(self, key_group: Any, key: Any, value: Any) -> None:
        self.writes += 1
        if not self._is_current(key_group, key):
            self._switch(key_group, key)
        self._value = value

    def delete(self, key_group: Any, key: Any) -> None:
        self.deletes += 1
        if not self._is_current(key_group, key):
            self._switch(key_group, key)
        self._value = None

    @property
    def current(self):
        """``(key_group, key, value)`` of the current key, or ``None`` before the first access."""
        return (self._key_group, self._key, self._value) if self._has_key else None

    def clear(self) -> None:
        self._value = None


class WriteBackLru(ValueStateCore):
    """FLIP-325's write-back LRU cache of objects (at most ``max_entries``) over a store; with
    ``write_batch=N > 1``, evicted dirty entries are written ``N`` at a time through
    ``store_many`` (see the compiled twin's doc).

    Example::

        >>> store = {}
        >>> lru = WriteBackLru(2, lambda g, k: store.get(k), lambda g, k, v: store.update({k: v}))
        >>> for key in "abacb":                      # a count per key
        ...     lru.put(0, key, (lru.get(0, key) or 0) + 1)
        >>> (lru.hits, lru.misses, lru.evictions, store, sorted(lru.dirty_entries()))
        (1, 4, 2, {'b': 1, 'a': 2}, [(0, 'b', 2), (0, 'c', 1)])
        >>> batches = []
        >>> lru = WriteBackLru(1, lambda g, k: None, None, batches.append, write_batch=2)
        >>> for key in "abc":
        ...     lru.put(0, key, 1)
        >>> batches, lru.pending_count, lru.get(0, "b"), lru.pending_hits
        ([[(0, 'a', 1), (0, 'b', 1)]], 0, None, 0)
    """

    def __init__(self, max_entries: int, load, store, store_many=None, write_batch: int = 1):
        if max_entries < 1:
            raise SkewlabInputError(f"an LRU cache needs max_entries >= 1, got {max_entries}")
        if write_batch < 1:
            raise SkewlabInputError(f"write_batch must be >= 1, got {write_batch}")
        if write_batch > 1 and store_many is None:
            raise SkewlabInputError("write_batch > 1 needs store_many, to write a batch")
        self.max_entries = max_entries
        self.write_batch = write_batch
        self.hits = self.misses = self.evictions = self.pending_hits = self.batches_written = 0
        self._entries: OrderedDict[Any, list] = OrderedDict()  # key -> [group, value, dirty]
        self._pending: dict[Any, tuple[Any, Any]] = {}  # key -> (group, value)
        self._load = load
        self._store = store
        self._store_many = store_many

    def _make_room(self) -> None:
        """Evict the least recently used entry when full; a dirty one is written back first
        (if the store fails, the cache is unchanged), or into the write buffer."""
        if len(self._entries) < self.max_entries:
            return
        key, (group, value, dirty) = next(iter(self._entries.items()))
        if dirty:
            if self.write_batch > 1:
                self._pending[key] = (group, value)
            else:
                self._store(group, key, value)
        del self._entries[key]
        self.evictions += 1
        if self.write_batch > 1 and len(self._pending) >= self.write_batch:
            self._write_pending()

    def _write_pending(self) -> None:
        if self._pending:
            self._store_many([(g, key, value) for key, (g, value) in self._pending.items()])
            self._pending.clear()
            self.batches_written += 1

    def get(self, key_group: Any, key: Any) -> Any:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[1]
        taken = self._pending.pop(key, None) if self._pending else None
        if taken is not None:  # evicted, not yet written: back into the cache, still dirty
            self.hits += 1
            self.pending_hits += 1
            value, dirty = taken[1], True
        else:
            self.misses += 1
            value, dirty = self._load(key_group, key), False
        self._make_room()
        self._entries[key] = [key_group, value, dirty]
        return value

    def put(self, key_group: Any, key: Any, value: Any) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            entry[1], entry[2] = value, True
        else:
            self._pending.pop(key, None)  # the value put supersedes one waiting to be written
            self._make_room()
            self._entries[key] = [key_group, value, True]

    def delete(self, key_group: Any, key: Any) -> None:
        """Drop ``key`` from the cache and its write buffer (the store is the caller's to
        delete from)."""
        self._entries.pop(key, None)
        self._pending.pop(key, None)

    def dirty_entries(self, mark_clean: bool = False) -> list[tuple[Any, Any, Any]]:
        """``[(key_group, key, value)]`` of the entries not yet written back: the write
        buffer's, then the cache's least recently used first; ``mark_clean=True`` (a checkpoint
        that writes them) marks them clean and empties the write buffer."""
        out = [(g, key, value) for key, (g, value) in self._pending.items()]
        if mark_clean:
            self._pending.clear()
        for key, entry in self._entries.items():
            if entry[2]:
                out.append((entry[0], key, entry[1]))
                if mark_clean:
                    entry[2] = False
        return out

    @property
    def dirty_count(self) -> int:
        """Number of entries not yet written back (the write buffer's included)."""
        return sum(1 for entry in self._entries.values() if entry[2]) + len(self._pending)

    @property
    def pending_count(self) -> int:
        """Number of evicted entries waiting in the write buffer."""
        return len(self._pending)

    def clear(self) -> None:
        """Drop every entry, dirty or not, and the write buffer (as a failure would)."""
        self._entries.clear()
        self._pending.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Any) -> bool:
        return key in self._entries


_WINDOW, _PROBATION, _PROTECTED = 0, 1, 2


class WriteBackTinyLfu(ValueStateCore):
    """A write-back cache of objects (at most ``max_entries``) over a store with W-TinyLFU's
    admission: the policy of :class:`skewlab.state.cache_admission.WTinyLfu` (its sketch, its
    segments) holding values, dirty flags written back on eviction (see the compiled twin's
    doc).

    Example::

        >>> store = {}
        >>> cache = WriteBackTinyLfu(2, lambda g, k: store.get(k), lambda g, k, v: store.update({k: v}))
        >>> for key in [1, 1, 1, 2, 3, 1]:            # a count per key
        ...     cache.put(0, key, (cache.get(0, key) or 0) + 1)
        >>> cache.hits, cache.misses, cache.rejected, store, sorted(cache.dirty_entries())
        (3, 3, 1, {2: 1}, [(0, 1, 4), (0, 3, 1)])
    """  # noqa: E501

    def __init__(self, max_entries: int, load, store, store_many=None, write_batch: int = 1):
        from skewlab.state.cache_admission import FrequencySketch, segment_sizes

        if max_entries < 1:
            raise SkewlabInputError(f"a TinyLFU cache needs max_entries >= 1, got {max_entries}")
        if write_batch != 1:
            raise SkewlabInputError(
                f"the tinylfu cache policy writes evicted entries back one at a time: "
                f"write_batch must be 1, got {write_batch}"
            )
        self.max_entries = max_entries
        self.write_batch = 1
        self.window_size, self.probation_size, self.protected_size = segment_sizes(max_entries)
        self.hits = self.misses = self.evictions = self.admitted = self.rejected = 0
        # per segment: key -> [key_group, value, dirty], oldest first
        self._segments: tuple[OrderedDict[Any, list], ...] = tuple(OrderedDict() for _ in range(3))
        self._where: dict[Any, int] = {}  # key -> its segment
        self._sketch = FrequencySketch(max_entries)
        self._load = load
        self._store = store

    @property
    def sketch_resets(self) -> int:
        return self._sketch.resets

    def estimate(self, key: Any) -> int:
        """The sketch's estimated frequency of ``key``."""
        return self._sketch.estimate(key)

    def _evict(self, segment: int, key: Any) -> None:
        group, value, dirty = self._segments[segment][key]
        if dirty:  # written back first: if the store fails, the cache is unchanged
            self._store(group, key, value)
        del self._segments[segment][key]
        del self._where[key]
        self.evictions += 1

    def _move(self, key: Any, source: int, target: int) -> None:
        self._segments[target][key] = self._segments[source].pop(key)
        self._where[key] = target

    def _admit(self, candidate: Any) -> None:
        window, probation, protected = self._segments
        if len(probation) + len(protected) < self.probation_size + self.protected_size:
            self._move(candidate, _WINDOW, _PROBATION)
            return
        if not (probation or protected):  # no main cache (1 entry): nothing to win
            self.rejected += 1
            self._evict(_WINDOW, candidate)
            return
        segment = _PROBATION if probation else _PROTECTED
        victim = next(iter(self._segments[segment]))
        if self._sketch.estimate(candidate) > self._sketch.estimate(victim):
            self._evict(segment, victim)
            self._move(candidate, _WINDOW, segment)
            self.admitted += 1
        else:
            self.rejected += 1
            self._evict(_WINDOW, candidate)

    def _insert(self, key_group: Any, key: Any, value: Any, dirty: bool) -> None:
        window = self._segments[_WINDOW]
        window[key] = [key_group, value, dirty]
        self._where[key] = _WINDOW
        if len(window) > self.window_size:
            self._admit(next(iter(window)))

    def get(self, key_group: Any, key: Any) -> Any:
        self._sketch.increment(key)
        segment = self._where.get(key)
        if segment is not None:
            self.hits += 1
            entries = self._segments[segment]
            value = entries[key][1]
            if segment == _PROBATION:  # a second hit: protected, whose oldest may go back
                self._move(key, _PROBATION, _PROTECTED)
                protected = self._segments[_PROTECTED]
                if len(protected) > self.protected_size:
                    self._move(next(iter(protected)), _PROTECTED, _PROBATION)
            else:
                entries.move_to_end(key)
            return value
        self.misses += 1
        value = self._load(key_group, key)
        self._insert(key_group, key, value, False)
        return value

    def put(self, key_group: Any, key: Any, value: Any) -> None:
        segment = self._where.get(key)
        if segment is None:
            self._insert(key_group, key, value, True)
            return
        entry = self._segments[segment][key]
        entry[1], entry[2] = value, True

    def delete(self, key_group: Any, key: Any) -> None:
        """Drop ``key`` from the cache (the store is the caller's to delete from)."""
        segment = self._where.pop(key, None)
        if segment is not None:
            del self._segments[segment][key]

    def dirty_entries(self, mark_clean: bool = False) -> list[tuple[Any, Any, Any]]:
        """``[(key_group, key, value)]`` of the entries not yet written back (window, then
        probation, then protected; oldest first in each); ``mark_clean=True`` marks them
        clean."""
        out = []
        for entries in self._segments:
            for key, entry in entries.items():
                if entry[2]:
                    out.append((entry[0], key, entry[1]))
                    if mark_clean:
                        entry[2] = False
        return out

    @property
    def dirty_count(self) -> int:
        """Number of entries not yet written back."""
        return sum(1 for entries in self._segments for e in entries.values() if e[2])

    @property
    def pending_count(self) -> int:
        """Always 0: this cache writes evicted entries back at once (no write buffer)."""
        return 0

    @property
    def segments(self) -> tuple[int, int, int]:
        """Entries in ``(window, probation, protected)``."""
        return tuple(len(entries) for entries in self._segments)  # type: ignore[return-value]

    def clear(self) -> None:
        """Drop every entry, dirty or not, and the sketch's counts (as a failure would)."""
        from skewlab.state.cache_admission import FrequencySketch

        for entries in self._segments:
            entries.clear()
        self._where.clear()
        self._sketch = FrequencySketch(self.max_entries)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: Any) -> bool:
        return key in self._where
