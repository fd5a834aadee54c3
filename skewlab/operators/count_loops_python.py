"""The count operators' per-record loops in plain Python: the same behaviour as the compiled
loops (:mod:`skewlab.operators.count_loops_compiled`), used with the pure-Python value-state
cores (:mod:`skewlab.state.value_state_python`). :mod:`skewlab.operators.count_loops` picks.

Example::

    >>> from skewlab.state.value_state_python import HeapValueState
    >>> heap = HeapValueState()
    >>> keyed_count(["a", "b", None, "a"], [0, 1, 0, 0], heap)     # returns the rejected count
    1
    >>> heap.tables
    {0: {'a': 2}, 1: {'b': 1}}
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_each", "keyed_count", "put_each", "sort_group_count", "sorted_count"]


def _same_length(keys: list, groups: list) -> None:
    if len(keys) != len(groups):
        raise ValueError(f"keys and key groups differ in length ({len(keys)} vs {len(groups)})")


def keyed_count(
    keys: list, groups: list, state, out_keys: list | None = None, out_counts: list | None = None
) -> int:
    """Per record ``state.put(g, key, state.get(g, key) + 1)`` (a missing count is 0); with
    ``out_keys`` / ``out_counts``, each record's key and updated count are appended to them.

    Returns the number of rejected (``None``) keys.
    """
    _same_length(keys, groups)
    if out_keys is not None and out_counts is None:
        raise ValueError("out_keys needs out_counts")
    get, put = state.get, state.put
    rejected = 0
    for key, group in zip(keys, groups, strict=True):
        if key is None:
            rejected += 1
            continue
        value = get(group, key)
        value = 1 if value is None else value + 1
        put(group, key, value)
        if out_keys is not None:
            out_keys.append(key)
            out_counts.append(value)  # type: ignore[union-attr]
    return rejected


def sorted_count(keys: list, groups: list, state, emit, current, current_group, no_key):
    """FLIP-140's sorted count: per record one single-key ``get`` + ``put``; when a key's run
    ends, its count is read once more and passed to ``emit(key, count)``.

    Returns ``(current, current_group, rejected)``.
    """
    _same_length(keys, groups)
    get, put = state.get, state.put
    rejected = 0
    for key, group in zip(keys, groups, strict=True):
        if not (key is current or key == current):
            if key is None:
                rejected += 1
                continue
            if current is not no_key:
                emit(current, get(current_group, current))
            current, current_group = key, group
        value = get(current_group, current)
        put(current_group, current, 1 if value is None else value + 1)
    return current, current_group, rejected


def sort_group_count(
    keys: list, groups: list, emit, unsorted, current, current_group, count: int, no_key
):
    """Sort-then-group with no state backend: the current run's count in a local variable; a
    key change emits it. A key that does not sort after the previous one raises
    ``unsorted(key, group, previous, previous_group)``.

    Returns ``(current, current_group, count, rejected)``.
    """
    _same_length(keys, groups)
    rejected = 0
    for key, group in zip(keys, groups, strict=True):
        if key is current or key == current:
            count += 1
        elif key is None:
            rejected += 1
        else:
            if current is not no_key:
                if (group, key) <= (current_group, current):
                    raise unsorted(key, group, current, current_group)
                emit(current, count)
            current, current_group, count = key, group, 1
    return current, current_group, count, rejected


def put_each(state, groups: list, keys: list, value: Any) -> None:
    """``state.put(g, key, value)`` for each key in turn (ValueState ``update`` / ``add``)."""
    _same_length(keys, groups)
    put = state.put
    for group, key in zip(groups, keys, strict=True):
        put(group, key, value)


def get_each(state, groups: list, keys: list) -> int:
    """``state.get(g, key)`` for each key in turn; returns how many were found."""
    _same_length(keys, groups)
    get = state.get
    return sum(1 for group, key in zip(groups, keys, strict=True) if get(group, key) is not None)
