# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled value-state cores: the per-access hot path of the in-memory state backends.

Each core is the value state of one backend -- ``get`` / ``put`` / ``delete`` by
``(key_group, key)`` -- written in Cython so that a compiled operator loop
(:mod:`skewlab.operators.count_loops`) calls it without a Python call, as a JVM operator calls
Flink's state. From Python they are called like the methods they are; a backend hands its core
to an operator as its value state (``KeyedStateBackend.value_state()``). Where this module could
not be built, :mod:`skewlab.state.value_state_python` has the same classes in plain Python.

* :class:`HeapValueState` -- ``{key_group: {key: value}}`` (HashMapStateBackend);
* :class:`SingleKeyValueState` -- only the current key's value (FLIP-140), keys in order;
* :class:`WriteBackLru` -- FLIP-325's write-back LRU cache of objects, with the storage
  behind it (RocksDB) reached through two callables, ``load`` and ``store``;
* :class:`CallbackValueState` -- any backend's Python ``get`` / ``put`` / ``delete`` (RocksDB:
  its cost *is* the Python call into rocksdict, serialisation included).

Example::

    >>> from skewlab.state.value_state_compiled import WriteBackLru
    >>> store = {}
    >>> lru = WriteBackLru(1, lambda g, k: store.get(k), lambda g, k, v: store.__setitem__(k, v))
    >>> lru.put(0, "a", 1); lru.put(0, "b", 2)       # "a" is evicted, written back
    >>> store, lru.get(0, "b"), lru.hits, lru.evictions
    ({'a': 1}, 2, 1, 1)
"""

cimport cython
from cpython.dict cimport PyDict_DelItem, PyDict_GetItem, PyDict_SetItem
from cpython.object cimport PyObject_Hash
from cpython.ref cimport PyObject
from libc.stdlib cimport free, malloc

from skewlab.errors import SkewlabInputError, UnsortedInputError


cdef class ValueStateCore:
    """``get`` / ``put`` / ``delete`` by ``(key_group, key)``; ``get`` of a missing key is ``None``."""

    cpdef object get(self, object key_group, object key):
        raise NotImplementedError

    cpdef object put(self, object key_group, object key, object value):
        raise NotImplementedError

    cpdef object delete(self, object key_group, object key):
        raise NotImplementedError


@cython.final
cdef class CallbackValueState(ValueStateCore):
    """A core over Python callables, e.g. a RocksDB backend's own ``get`` / ``put``.

    Example::

        >>> d = {}
        >>> core = CallbackValueState(lambda g, k: d.get(k), lambda g, k, v: d.update({k: v}))
        >>> core.put(0, "a", 1); core.get(0, "a")
        1
    """

    def __init__(self, get, put, delete=None):
        self._get, self._put, self._delete = get, put, delete

    cpdef object get(self, object key_group, object key):
        return self._get(key_group, key)

    cpdef object put(self, object key_group, object key, object value):
        self._put(key_group, key, value)

    cpdef object delete(self, object key_group, object key):
        if self._delete is None:
            raise NotImplementedError("this value state has no delete")
        self._delete(key_group, key)


@cython.final
cdef class HeapValueState(ValueStateCore):
    """Values in one dict per key group; ``reads`` / ``writes`` / ``deletes`` count calls.

    Example::

        >>> heap = HeapValueState(); heap.put(7, "k", [1])
        >>> heap.get(7, "k"), heap.get(7, "x"), heap.tables, heap.reads
        ([1], None, {7: {'k': [1]}}, 2)
    """

    def __init__(self):
        self.tables = {}

    cpdef object get(self, object key_group, object key):
        cdef PyObject *table = PyDict_GetItem(self.tables, key_group)
        cdef PyObject *value
        self.reads += 1
        if table is NULL:
            return None
        value = PyDict_GetItem(<dict>table, key)
        return None if value is NULL else <object>value

    cpdef object put(self, object key_group, object key, object value):
        cdef PyObject *table = PyDict_GetItem(self.tables, key_group)
        self.writes += 1
        if table is NULL:
            self.tables[key_group] = {key: value}
        else:
            PyDict_SetItem(<dict>table, key, value)

    cpdef object delete(self, object key_group, object key):
        cdef PyObject *table = PyDict_GetItem(self.tables, key_group)
        self.deletes += 1
        if table is not NULL:
            (<dict>table).pop(key, None)


@cython.final
cdef class SingleKeyValueState(ValueStateCore):
    """Only the current key's value; a new key starts empty and must sort after the last one.

    Keys must arrive sorted by ``(key_group, key)``: a key that does not compare strictly
    greater than the previous one raises :class:`~skewlab.errors.UnsortedInputError` (a key
    came back after its run had ended), never a silent fresh start.

    Example::

        >>> state = SingleKeyValueState()
        >>> state.put(0, "a", 1); state.get(0, "a"), state.get(0, "b")
        (1, None)
        >>> state.get(0, "a")
        Traceback (most recent call last):
        ...
        skewlab.errors.UnsortedInputError: input is not sorted by key: key 'a' (key group 0) came after key 'b' (key group 0); the single-key backend needs records sorted by (key_group, key)
    """

    def __init__(self):
        self._has_key = False
        self._key_group = -1
        self._key = None
        self._value = None

    cdef int _switch(self, object key_group, object key) except -1:
        """Flink's ``setCurrentKey`` to a new key, checking the sort order."""
        cdef bint ordered
        if self._has_key:
            try:
                if key_group is self._key_group or key_group == self._key_group:
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
        return 0

    cdef inline bint _is_current(self, object key_group, object key) except -1:
        if key is self._key:
            return self._has_key and (
                key_group is self._key_group or key_group == self._key_group
            )
        if self._has_key and key == self._key and (
            key_group is self._key_group or key_group == self._key_group
        ):
            self._key = key  # an equal key object: keep the newest, so the next call with it
            return True  # (the put after a get) is an identity check, not a comparison
        return False

    cpdef object get(self, object key_group, object key):
        self.reads += 1
        if not self._is_current(key_group, key):
            self._switch(key_group, key)
        return self._value

    cpdef object put(self, object key_group, object key, object value):
        self.writes += 1
        if not self._is_current(key_group, key):
            self._switch(key_group, key)
        self._value = value

    cpdef object delete(self, object key_group, object key):
        self.deletes += 1
        if not self._is_current(key_group, key):
            self._switch(key_group, key)
        self._value = None

    @property
    def current(self):
        """``(key_group, key, value)`` of the current key, or ``None`` before the first access."""
        return (self._key_group, self._key, self._value) if self._has_key else None

    def clear(self):
        self._value = None


@cython.final
cdef class WriteBackLru(ValueStateCore):
    """FLIP-325's write-back LRU cache of objects (at most ``max_entries``) over a store.

    ``load(key_group, key)`` reads the store on a miss (``None``: absent; cached as such);
    ``store(key_group, key, value)`` writes back a dirty entry the cache evicts. A hit moves
    the entry to the most recently used end and returns the cached object itself. ``hits`` /
    ``misses`` count ``get`` lookups (every miss is one ``load``), ``evictions`` every entry
    pushed out (dirty or not). The cache is keyed by the key alone: a key must always come
    with the same key group (true whenever the key group is a function of the key).

    ``write_batch=N > 1`` writes evicted dirty entries back ``N`` at a time, through
    ``store_many([(key_group, key, value), ...])`` (RocksDB: one write batch, in key order),
    instead of one ``store`` per eviction as FLIP-325 does. Until then they wait in a write
    buffer of at most ``N`` entries (so at most ``max_entries + N`` values are held); a lookup
    of a waiting key takes it back from the buffer (a hit, counted in ``pending_hits`` too),
    never a stale read of the store.

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

    def __cinit__(
        self, Py_ssize_t max_entries, load, store, store_many=None, Py_ssize_t write_batch=1
    ):
        if max_entries < 1:
            raise SkewlabInputError(f"an LRU cache needs max_entries >= 1, got {max_entries}")
        if write_batch < 1:
            raise SkewlabInputError(f"write_batch must be >= 1, got {write_batch}")
        if write_batch > 1 and store_many is None:
            raise SkewlabInputError("write_batch > 1 needs store_many, to write a batch")
        self.max_entries = max_entries
        self.write_batch = write_batch
        self._slots = {}
        self._pending = {}
        self._keys = [None] * max_entries
        self._key_groups = [None] * max_entries
        self._values = [None] * max_entries
        # slots 0 .. max_entries-1 hold entries; slot max_entries is the list's sentinel:
        # _next[sentinel] is the least, _prev[sentinel] the most recently used entry
        self._prev = <Py_ssize_t *>malloc((max_entries + 1) * sizeof(Py_ssize_t))
        self._next = <Py_ssize_t *>malloc((max_entries + 1) * sizeof(Py_ssize_t))
        self._dirty = <char *>malloc((max_entries + 1) * sizeof(char))
        if self._prev is NULL or self._next is NULL or self._dirty is NULL:
            raise MemoryError()
        self._prev[max_entries] = max_entries
        self._next[max_entries] = max_entries
        self._size = 0
        self._dirty_count = 0
        self._load = load
        self._store = store
        self._store_many = store_many

    def __dealloc__(self):
        free(self._prev)
        free(self._next)
        free(self._dirty)

    cdef inline void _unlink(self, Py_ssize_t slot) noexcept:
        self._next[self._prev[slot]] = self._next[slot]
        self._prev[self._next[slot]] = self._prev[slot]

    cdef inline void _push_most_recent(self, Py_ssize_t slot) noexcept:
        cdef Py_ssize_t sentinel = self.max_entries
        self._prev[slot] = self._prev[sentinel]
        self._next[slot] = sentinel
        self._next[self._prev[sentinel]] = slot
        self._prev[sentinel] = slot

    cdef Py_ssize_t _free_slot(self) except -1:
        """A slot for a new entry: an unused one, or the least recently used one, evicted."""
        cdef Py_ssize_t slot
        if self._size < self.max_entries:
            slot = self._size
            self._size += 1
            return slot
        slot = self._next[self.max_entries]
        key = self._keys[slot]
        if self._dirty[slot]:  # written back first: if the store fails, the cache is unchanged
            if self.write_batch > 1:
                self._pending[key] = (self._key_groups[slot], self._values[slot])
            else:
                self._store(self._key_groups[slot], key, self._values[slot])
            self._dirty[slot] = 0
            self._dirty_count -= 1
        self._unlink(slot)
        PyDict_DelItem(self._slots, key)
        self.evictions += 1
        if self.write_batch > 1 and len(self._pending) >= self.write_batch:
            self._write_pending()
        return slot

    cdef int _write_pending(self) except -1:
        """The write buffer to the store in one ``store_many`` call, then emptied."""
        if self._pending:
            self._store_many([(g, key, value) for key, (g, value) in self._pending.items()])
            self._pending.clear()
            self.batches_written += 1
        return 0

    cdef inline object _take_pending(self, object key):
        """``(key_group, value)`` of ``key`` taken out of the write buffer, or ``None``."""
        cdef PyObject *entry
        if not self._pending:
            return None
        entry = PyDict_GetItem(self._pending, key)
        if entry is NULL:
            return None
        taken = <object>entry
        PyDict_DelItem(self._pending, key)
        return taken

    cpdef object get(self, object key_group, object key):
        cdef PyObject *found = PyDict_GetItem(self._slots, key)
        cdef Py_ssize_t slot
        cdef char dirty = 0
        if found is not NULL:  # a hit: the cheap path
            slot = <Py_ssize_t><object>found
            self._unlink(slot)
            self._push_most_recent(slot)
            self.hits += 1
            return self._values[slot]
        taken = self._take_pending(key)
        if taken is not None:  # evicted, not yet written: back into the cache, still dirty
            self.hits += 1
            self.pending_hits += 1
            value = (<tuple>taken)[1]
            dirty = 1
        else:
            self.misses += 1
            value = self._load(key_group, key)
        slot = self._free_slot()
        self._keys[slot] = key
        self._key_groups[slot] = key_group
        self._values[slot] = value
        self._dirty[slot] = dirty
        self._dirty_count += dirty
        PyDict_SetItem(self._slots, key, slot)
        self._push_most_recent(slot)
        return value

    cpdef object put(self, object key_group, object key, object value):
        cdef Py_ssize_t slot = self._prev[self.max_entries]
        cdef PyObject *found
        if self._size and <PyObject *>self._keys[slot] is <PyObject *>key:
            # the most recently used entry (a read-modify-write's put after its get): no lookup
            self._unlink(slot)
        else:
            found = PyDict_GetItem(self._slots, key)
            if found is not NULL:
                slot = <Py_ssize_t><object>found
                self._unlink(slot)
            else:
                self._take_pending(key)  # the value put supersedes one waiting to be written
                slot = self._free_slot()
                self._keys[slot] = key
                self._key_groups[slot] = key_group
                self._dirty[slot] = 0
                PyDict_SetItem(self._slots, key, slot)
        self._values[slot] = value
        if not self._dirty[slot]:
            self._dirty[slot] = 1
            self._dirty_count += 1
        self._push_most_recent(slot)

    cpdef object delete(self, object key_group, object key):
        """Drop ``key`` from the cache and its write buffer (the store is the caller's to
        delete from)."""
        cdef PyObject *found = PyDict_GetItem(self._slots, key)
        cdef Py_ssize_t slot, last
        self._take_pending(key)
        if found is NULL:
            return
        slot = <Py_ssize_t><object>found
        self._unlink(slot)
        PyDict_DelItem(self._slots, key)
        if self._dirty[slot]:
            self._dirty_count -= 1
        # keep slots 0 .. size-1 in use: move the last used slot into the freed one
        last = self._size - 1
        if last != slot:
            self._keys[slot] = self._keys[last]
            self._key_groups[slot] = self._key_groups[last]
            self._values[slot] = self._values[last]
            self._dirty[slot] = self._dirty[last]
            self._prev[slot] = self._prev[last]
            self._next[slot] = self._next[last]
            self._next[self._prev[slot]] = slot
            self._prev[self._next[slot]] = slot
            self._slots[self._keys[slot]] = slot
        self._keys[last] = self._key_groups[last] = self._values[last] = None
        self._size = last

    def dirty_entries(self, bint mark_clean=False):
        """``[(key_group, key, value)]`` of the entries not yet written back: the write
        buffer's, then the cache's least recently used first; ``mark_clean=True`` (a checkpoint
        that writes them) marks them clean and empties the write buffer."""
        out = [(g, key, value) for key, (g, value) in self._pending.items()]
        if mark_clean:
            self._pending.clear()
        cdef Py_ssize_t slot = self._next[self.max_entries]
        while slot != self.max_entries:
            if self._dirty[slot]:
                out.append((self._key_groups[slot], self._keys[slot], self._values[slot]))
                if mark_clean:
                    self._dirty[slot] = 0
            slot = self._next[slot]
        if mark_clean:
            self._dirty_count = 0
        return out

    @property
    def dirty_count(self):
        """Number of entries not yet written back (the write buffer's included)."""
        return self._dirty_count + len(self._pending)

    @property
    def pending_count(self):
        """Number of evicted entries waiting in the write buffer."""
        return len(self._pending)

    def clear(self):
        """Drop every entry, dirty or not, and the write buffer (as a failure would)."""
        self._slots.clear()
        self._pending.clear()
        cdef Py_ssize_t slot
        for slot in range(self._size):
            self._keys[slot] = self._key_groups[slot] = self._values[slot] = None
        self._size = 0
        self._dirty_count = 0
        self._prev[self.max_entries] = self.max_entries
        self._next[self.max_entries] = self.max_entries

    def __len__(self):
        return self._size

    def __contains__(self, key):
        return key in self._slots


cdef enum:
    _WINDOW = 0
    _PROBATION = 1
    _PROTECTED = 2


#: the count-min sketch's rows: one odd multiplier each (the same as the replay's)
cdef unsigned long long _SEEDS[4]
_SEEDS[:] = [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93]


@cython.final
cdef class WriteBackTinyLfu(ValueStateCore):
    """A write-back cache of objects (at most ``max_entries``) over a store, with W-TinyLFU's
    admission (Einziger, Friedman, Manes; Caffeine's policy) instead of FLIP-325's LRU.

    A missed key enters a small *window* LRU (1 % of the entries); the window's least recently
    used entry is then a *candidate* for the main cache (a segmented LRU: probation, then
    protected on a second hit), admitted only if a count-min sketch of every ``get`` estimates
    it more frequent than the main cache's victim -- otherwise the candidate itself is evicted.
    Evicted entries are written back to ``store`` only when dirty, as in
    :class:`WriteBackLru`; ``evictions`` counts them all, ``admitted`` / ``rejected`` the
    candidates that met a full main cache. ``put`` of a cached key replaces its value in place
    (the ``put`` of a read-modify-write follows its ``get``, which placed the key); ``put`` of
    an uncached key enters the window, as a miss would, without a sketch count. The policy,
    the sketch and its hashes are those of :class:`skewlab.state.cache_admission.WTinyLfu`, so
    replaying the keys of the ``get`` calls there gives the same hits.

    Example::

        >>> store = {}
        >>> cache = WriteBackTinyLfu(2, lambda g, k: store.get(k), lambda g, k, v: store.update({k: v}))
        >>> for key in [1, 1, 1, 2, 3, 1]:            # a count per key
        ...     cache.put(0, key, (cache.get(0, key) or 0) + 1)
        >>> cache.hits, cache.misses, cache.rejected, store, sorted(cache.dirty_entries())
        (3, 3, 1, {2: 1}, [(0, 1, 4), (0, 3, 1)])
    """

    cdef readonly Py_ssize_t max_entries, window_size, probation_size, protected_size
    cdef readonly Py_ssize_t write_batch
    cdef public long long hits, misses, evictions, admitted, rejected
    cdef readonly long long sketch_resets
    cdef dict _slots
    cdef list _keys, _key_groups, _values
    cdef Py_ssize_t *_prev
    cdef Py_ssize_t *_next
    cdef Py_ssize_t *_free
    cdef char *_dirty
    cdef char *_segment
    cdef Py_ssize_t _count[3]
    cdef Py_ssize_t _n_free, _dirty_count, _slots_total
    cdef object _load, _store
    cdef unsigned char *_table
    cdef Py_ssize_t _width
    cdef int _shift
    cdef long long _additions, _sample_size

    def __cinit__(self, Py_ssize_t max_entries, load, store, store_many=None, Py_ssize_t write_batch=1):
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
        # slots 0 .. max_entries (one more than the cache: a new entry waits in the window
        # before its candidate is admitted or not); slots_total + segment is that segment's
        # sentinel: _next[sentinel] its least, _prev[sentinel] its most recently used entry
        self._slots_total = max_entries + 1
        cdef Py_ssize_t n = self._slots_total + 3
        self._prev = <Py_ssize_t *>malloc(n * sizeof(Py_ssize_t))
        self._next = <Py_ssize_t *>malloc(n * sizeof(Py_ssize_t))
        self._free = <Py_ssize_t *>malloc(n * sizeof(Py_ssize_t))
        self._dirty = <char *>malloc(n * sizeof(char))
        self._segment = <char *>malloc(n * sizeof(char))
        sketch = FrequencySketch(max_entries)
        self._width = sketch.width
        self._shift = 64 - sketch.bits
        self._sample_size = sketch.sample_size
        self._table = <unsigned char *>malloc(4 * self._width * sizeof(unsigned char))
        if (self._prev is NULL or self._next is NULL or self._free is NULL or self._dirty is NULL
                or self._segment is NULL or self._table is NULL):
            raise MemoryError()
        self._slots = {}
        self._keys = [None] * self._slots_total
        self._key_groups = [None] * self._slots_total
        self._values = [None] * self._slots_total
        self._load = load
        self._store = store
        self._reset_all()

    def __dealloc__(self):
        free(self._prev)
        free(self._next)
        free(self._free)
        free(self._dirty)
        free(self._segment)
        free(self._table)

    cdef void _reset_all(self) noexcept:
        cdef Py_ssize_t i, sentinel
        for i in range(3):
            sentinel = self._slots_total + i
            self._prev[sentinel] = sentinel
            self._next[sentinel] = sentinel
            self._count[i] = 0
        for i in range(self._slots_total):
            self._free[i] = self._slots_total - 1 - i  # slot 0 handed out first
            self._dirty[i] = 0
        self._n_free = self._slots_total
        self._dirty_count = 0
        for i in range(4 * self._width):
            self._table[i] = 0
        self._additions = 0

    # -- the count-min sketch (FrequencySketch's, in C) --------------------------------------

    cdef inline unsigned long long _hash(self, object key) except? 0:
        cdef Py_hash_t h = PyObject_Hash(key)  # hash(key) as an unsigned 64-bit integer
        return <unsigned long long>h

    cdef void _increment(self, unsigned long long h) noexcept:
        cdef int row
        cdef Py_ssize_t i
        cdef bint added = False
        for row in range(4):
            i = row * self._width + <Py_ssize_t>((h * _SEEDS[row]) >> self._shift)
            if self._table[i] < 15:
                self._table[i] += 1
                added = True
        if added:
            self._additions += 1
            if self._additions >= self._sample_size:
                for i in range(4 * self._width):
                    self._table[i] >>= 1
                self._additions //= 2
                self.sketch_resets += 1

    cdef int _estimate(self, unsigned long long h) noexcept:
        cdef int row, c, least = 15
        for row in range(4):
            c = self._table[row * self._width + <Py_ssize_t>((h * _SEEDS[row]) >> self._shift)]
            if c < least:
                least = c
        return least

    def estimate(self, key):
        """The sketch's estimated frequency of ``key`` (its ``get`` calls since the last
        halving, or more)."""
        return self._estimate(self._hash(key))

    # -- the segments: three LRU lists over one set of slots ---------------------------------

    cdef inline void _unlink(self, Py_ssize_t slot) noexcept:
        self._next[self._prev[slot]] = self._next[slot]
        self._prev[self._next[slot]] = self._prev[slot]
        self._count[self._segment[slot]] -= 1

    cdef inline void _push(self, Py_ssize_t slot, char segment) noexcept:
        cdef Py_ssize_t sentinel = self._slots_total + segment
        self._prev[slot] = self._prev[sentinel]
        self._next[slot] = sentinel
        self._next[self._prev[sentinel]] = slot
        self._prev[sentinel] = slot
        self._segment[slot] = segment
        self._count[segment] += 1

    cdef inline Py_ssize_t _oldest(self, char segment) noexcept:
        return self._next[self._slots_total + segment]

    cdef int _evict(self, Py_ssize_t slot) except -1:
        """Push ``slot``'s entry out: written back first when dirty (if the store fails, the
        cache is unchanged), then unlinked and its slot freed."""
        key = self._keys[slot]
        if self._dirty[slot]:
            self._store(self._key_groups[slot], key, self._values[slot])
            self._dirty[slot] = 0
            self._dirty_count -= 1
        self._unlink(slot)
        PyDict_DelItem(self._slots, key)
        self._keys[slot] = self._key_groups[slot] = self._values[slot] = None
        self._free[self._n_free] = slot
        self._n_free += 1
        self.evictions += 1
        return 0

    cdef int _admit(self, Py_ssize_t candidate) except -1:
        """The window's oldest entry into the main cache, if the sketch says it is more
        frequent than the main cache's victim (the oldest of probation, else of protected)."""
        cdef char segment
        cdef Py_ssize_t victim
        if self._count[_PROBATION] + self._count[_PROTECTED] < self.probation_size + self.protected_size:
            self._unlink(candidate)
            self._push(candidate, _PROBATION)
            return 0
        if self._count[_PROBATION] + self._count[_PROTECTED] == 0:  # no main cache (1 entry)
            self.rejected += 1
            return self._evict(candidate)
        segment = _PROBATION if self._count[_PROBATION] else _PROTECTED
        victim = self._oldest(segment)
        if self._estimate(self._hash(self._keys[candidate])) > self._estimate(self._hash(self._keys[victim])):
            self._evict(victim)
            self._unlink(candidate)
            self._push(candidate, segment)
            self.admitted += 1
        else:
            self.rejected += 1
            self._evict(candidate)
        return 0

    cdef int _insert(self, object key_group, object key, object value, char dirty) except -1:
        cdef Py_ssize_t slot
        self._n_free -= 1
        slot = self._free[self._n_free]
        self._keys[slot] = key
        self._key_groups[slot] = key_group
        self._values[slot] = value
        self._dirty[slot] = dirty
        self._dirty_count += dirty
        PyDict_SetItem(self._slots, key, slot)
        self._push(slot, _WINDOW)
        if self._count[_WINDOW] > self.window_size:
            self._admit(self._oldest(_WINDOW))
        return 0

    cpdef object get(self, object key_group, object key):
        cdef PyObject *found = PyDict_GetItem(self._slots, key)
        cdef Py_ssize_t slot, demoted
        cdef char segment
        self._increment(self._hash(key))
        if found is not NULL:
            slot = <Py_ssize_t><object>found
            self.hits += 1
            segment = self._segment[slot]
            self._unlink(slot)
            if segment == _PROBATION:  # a second hit: protected, whose oldest may go back
                self._push(slot, _PROTECTED)
                if self._count[_PROTECTED] > self.protected_size:
                    demoted = self._oldest(_PROTECTED)
                    self._unlink(demoted)
                    self._push(demoted, _PROBATION)
            else:
                self._push(slot, segment)
            return self._values[slot]
        self.misses += 1
        value = self._load(key_group, key)
        self._insert(key_group, key, value, 0)
        return value

    cpdef object put(self, object key_group, object key, object value):
        cdef PyObject *found = PyDict_GetItem(self._slots, key)
        cdef Py_ssize_t slot
        if found is NULL:
            self._insert(key_group, key, value, 1)
            return
        slot = <Py_ssize_t><object>found
        self._values[slot] = value
        if not self._dirty[slot]:
            self._dirty[slot] = 1
            self._dirty_count += 1

    cpdef object delete(self, object key_group, object key):
        """Drop ``key`` from the cache (the store is the caller's to delete from)."""
        cdef PyObject *found = PyDict_GetItem(self._slots, key)
        cdef Py_ssize_t slot
        if found is NULL:
            return
        slot = <Py_ssize_t><object>found
        if self._dirty[slot]:
            self._dirty[slot] = 0
            self._dirty_count -= 1
        self._unlink(slot)
        PyDict_DelItem(self._slots, key)
        self._keys[slot] = self._key_groups[slot] = self._values[slot] = None
        self._free[self._n_free] = slot
        self._n_free += 1

    def dirty_entries(self, bint mark_clean=False):
        """``[(key_group, key, value)]`` of the entries not yet written back (window, then
        probation, then protected; oldest first in each); ``mark_clean=True`` (a checkpoint
        that writes them) marks them clean."""
        out = []
        cdef Py_ssize_t slot, sentinel
        cdef int segment
        for segment in range(3):
            sentinel = self._slots_total + segment
            slot = self._next[sentinel]
            while slot != sentinel:
                if self._dirty[slot]:
                    out.append((self._key_groups[slot], self._keys[slot], self._values[slot]))
                    if mark_clean:
                        self._dirty[slot] = 0
                slot = self._next[slot]
        if mark_clean:
            self._dirty_count = 0
        return out

    @property
    def dirty_count(self):
        """Number of entries not yet written back."""
        return self._dirty_count

    @property
    def pending_count(self):
        """Always 0: this cache writes evicted entries back at once (no write buffer)."""
        return 0

    @property
    def segments(self):
        """Entries in ``(window, probation, protected)``."""
        return (self._count[_WINDOW], self._count[_PROBATION], self._count[_PROTECTED])

    def clear(self):
        """Drop every entry, dirty or not, and the sketch's counts (as a failure would)."""
        self._slots.clear()
        self._keys[:] = [None] * self._slots_total
        self._key_groups[:] = [None] * self._slots_total
        self._values[:] = [None] * self._slots_total
        self._reset_all()

    def __len__(self):
        return self._count[_WINDOW] + self._count[_PROBATION] + self._count[_PROTECTED]

    def __contains__(self, key):
        return key in self._slots
