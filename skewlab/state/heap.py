"""The heap backend: Python objects in one dict per key group (Flink's HashMapStateBackend).

No serialisation at all: ``get`` hands out the stored object itself. ``reads`` / ``writes`` /
``deletes`` count calls (memory accesses); the byte counters stay 0.

Example::

    >>> from skewlab.state.heap import HeapKeyedStateBackend
    >>> state = HeapKeyedStateBackend()
    >>> state.put(7, 42, {"views": 1})
    >>> state.get(7, 42), state.get(7, 43)
    ({'views': 1}, None)
    >>> list(state.items([7]))
    [(7, 42, {'views': 1})]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from skewlab.state.base import CoreBackedStateBackend, Key
from skewlab.state.value_state import HeapValueState

__all__ = ["HeapKeyedStateBackend"]


class HeapKeyedStateBackend(CoreBackedStateBackend):
    """Keyed state as ``{key_group: {key: value}}`` on the Python heap.

    Example::

        >>> with HeapKeyedStateBackend(track_keys=True) as state:
        ...     state.put(0, "a", 1); _ = state.get(0, "a"); _ = state.get(0, "a")
        ...     state.stats.reads_per_key
        {'a': 2}
    """

    name = "heap"

    def __init__(self, *, track_keys: bool = False) -> None:
        super().__init__(HeapValueState(), track_keys=track_keys)
        self._tables = self._core.tables

    def items(self, key_groups: Iterable[int]) -> Iterator[tuple[int, Key, Any]]:
        tables = self._tables
        for key_group in key_groups:
            table = tables.get(key_group)
            if table:
                for key, value in list(table.items()):
                    yield key_group, key, value

    def __len__(self) -> int:
        """Number of stored entries.

        Example::

            >>> state = HeapKeyedStateBackend(); state.put(0, "a", 1); len(state)
            1
        """
        return sum(len(table) for table in self._tables.values())

    def close(self) -> None:
        self._tables.clear()
        super().close()
