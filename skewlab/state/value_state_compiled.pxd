# Declarations of the compiled value-state cores, for compiled operator loops to cimport.

cdef class ValueStateCore:
    cpdef object get(self, object key_group, object key)
    cpdef object put(self, object key_group, object key, object value)
    cpdef object delete(self, object key_group, object key)


cdef class CallbackValueState(ValueStateCore):
    cdef object _get, _put, _delete


cdef class HeapValueState(ValueStateCore):
    cdef readonly dict tables
    cdef public long long reads, writes, deletes


cdef class SingleKeyValueState(ValueStateCore):
    cdef public long long reads, writes, deletes
    cdef bint _has_key
    cdef object _key_group, _key, _value
    cdef int _switch(self, object key_group, object key) except -1
    cdef inline bint _is_current(self, object key_group, object key) except -1


cdef class WriteBackLru(ValueStateCore):
    cdef readonly Py_ssize_t max_entries, write_batch
    cdef public long long hits, misses, evictions, pending_hits, batches_written
    cdef dict _slots, _pending
    cdef list _keys, _key_groups, _values
    cdef Py_ssize_t *_prev
    cdef Py_ssize_t *_next
    cdef char *_dirty
    cdef Py_ssize_t _size, _dirty_count
    cdef object _load, _store, _store_many
    cdef inline void _unlink(self, Py_ssize_t slot) noexcept
    cdef inline void _push_most_recent(self, Py_ssize_t slot) noexcept
    cdef Py_ssize_t _free_slot(self) except -1
    cdef int _write_pending(self) except -1
    cdef inline object _take_pending(self, object key)
