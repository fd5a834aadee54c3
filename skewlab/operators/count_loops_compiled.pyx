# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled per-record loops of the count operators (:mod:`skewlab.operators.count`) and of
the ValueState micro-benchmark.

On the JVM an operator's per-record code is compiled, so what the FLIP-325 and FLIP-140
benchmarks compare is the cost of the *state access* itself. An interpreted Python loop adds
~0.2 us per record to every strategy alike and hides that difference (a cache hit costs less
than the loop around it). These loops are the count operators' loops compiled with Cython,
calling the backends' compiled value-state cores (:mod:`skewlab.state.value_state_compiled`)
directly;
RocksDB is reached through its backend's Python ``get`` / ``put`` (rocksdict plus
serialisation), so its cost is exactly what it is from Python.

Keys and key groups come as Python lists (one Arrow batch each); ``None`` keys are rejected
and counted, never dropped silently.

Example::

    >>> from skewlab.state.value_state_compiled import HeapValueState
    >>> heap = HeapValueState()
    >>> keyed_count(["a", "b", None, "a"], [0, 1, 0, 0], heap)     # returns the rejected count
    1
    >>> heap.tables
    {0: {'a': 2}, 1: {'b': 1}}
"""

from cpython.list cimport PyList_Append, PyList_GET_ITEM, PyList_GET_SIZE

from skewlab.state.value_state_compiled cimport SingleKeyValueState, ValueStateCore


cdef inline void _same_length(list keys, list groups) except *:
    if PyList_GET_SIZE(keys) != PyList_GET_SIZE(groups):
        raise ValueError(
            f"keys and key groups differ in length ({len(keys)} vs {len(groups)})"
        )


def keyed_count(
    list keys, list groups, ValueStateCore state, list out_keys=None, list out_counts=None
):
    """Per record ``state.put(g, key, state.get(g, key) + 1)`` (a missing count is 0); with
    ``out_keys`` / ``out_counts``, each record's key and updated count are appended to them
    (FLIP-325's ``output.collect((key, count))``).

    Returns the number of rejected (``None``) keys.
    """
    _same_length(keys, groups)
    cdef Py_ssize_t i, n = PyList_GET_SIZE(keys)
    cdef Py_ssize_t rejected = 0
    cdef bint collect = out_keys is not None
    if collect and out_counts is None:
        raise ValueError("out_keys needs out_counts")
    for i in range(n):
        key = <object>PyList_GET_ITEM(keys, i)
        if key is None:
            rejected += 1
            continue
        group = <object>PyList_GET_ITEM(groups, i)
        value = state.get(group, key)
        value = 1 if value is None else value + 1
        state.put(group, key, value)
        if collect:
            PyList_Append(out_keys, key)
            PyList_Append(out_counts, value)
    return rejected


def sorted_count(
    list keys, list groups, SingleKeyValueState state, emit, current, current_group, no_key
):
    """FLIP-140's sorted count: per record one single-key ``get`` + ``put``; when a key's run
    ends, its count is read once more and passed to ``emit(key, count)``.

    ``current`` / ``current_group`` carry the open run over batches (``no_key`` before the
    first key). Returns ``(current, current_group, rejected)``.
    """
    _same_length(keys, groups)
    cdef Py_ssize_t i, n = PyList_GET_SIZE(keys)
    cdef Py_ssize_t rejected = 0
    for i in range(n):
        key = <object>PyList_GET_ITEM(keys, i)
        group = <object>PyList_GET_ITEM(groups, i)
        if not (key is current or key == current):
            if key is None:
                rejected += 1
                continue
            if current is not no_key:
                emit(current, state.get(current_group, current))
            current, current_group = key, group
        # the state is addressed with the run's key object: one key comparison per record
        # (the one above), as Flink's setCurrentKey makes; a new run's first access is where
        # the backend compares against the previous key and checks the order
        value = state.get(current_group, current)
        state.put(current_group, current, 1 if value is None else value + 1)
    return current, current_group, rejected


def sort_group_count(
    list keys, list groups, emit, unsorted, current, current_group, long long count, no_key
):
    """Sort-then-group with no state backend: the current run's count in a local variable; a
    key change emits it. A key that does not sort after the previous one raises
    ``unsorted(key, group, previous, previous_group)`` (checked once per key).

    Returns ``(current, current_group, count, rejected)``.
    """
    _same_length(keys, groups)
    cdef Py_ssize_t i, n = PyList_GET_SIZE(keys)
    cdef Py_ssize_t rejected = 0
    for i in range(n):
        key = <object>PyList_GET_ITEM(keys, i)
        if key is current or key == current:
            count += 1
        elif key is None:
            rejected += 1
        else:
            group = <object>PyList_GET_ITEM(groups, i)
            if current is not no_key:
                if (group, key) <= (current_group, current):
                    raise unsorted(key, group, current, current_group)
                emit(current, count)
            current, current_group, count = key, group, 1
    return current, current_group, count, rejected


def put_each(ValueStateCore state, list groups, list keys, value):
    """``state.put(g, key, value)`` for each key in turn (ValueState ``update`` / ``add``)."""
    _same_length(keys, groups)
    cdef Py_ssize_t i, n = PyList_GET_SIZE(keys)
    for i in range(n):
        state.put(<object>PyList_GET_ITEM(groups, i), <object>PyList_GET_ITEM(keys, i), value)


def get_each(ValueStateCore state, list groups, list keys):
    """``state.get(g, key)`` for each key in turn (ValueState ``value``); returns how many
    were found."""
    _same_length(keys, groups)
    cdef Py_ssize_t i, n = PyList_GET_SIZE(keys), found = 0
    for i in range(n):
        if state.get(<object>PyList_GET_ITEM(groups, i), <object>PyList_GET_ITEM(keys, i)) is not None:
            found += 1
    return found
