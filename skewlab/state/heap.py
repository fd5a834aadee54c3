"""The heap backend: Python objects in one dict per key group (Flink's HashMapStateBackend).

No serialisation at all: ``get`` hands out the stored object itself. ``reads`` / ``writes`` /
``deletes`` count calls (memory accesses); the byte counters stay 0.

Example::

    >>> from skewlab.state.heap import HeapKeyedStateBackend
    >>> backend = HeapKeyedStateBackend()
    >>> backend.put(7, 42, {"views": 1})
    >>> backend.get(7, 42), backend.get(7, 43)
    ({'views': 1}, None)
    >>> list(backend.items([7]))
    [(7, 42, {'views': 1})]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from skewlab.state.api import CoreBackedStateBackend, Key
from skewlab.state.key_groups import KeyGroupRange
from skewlab.state.value_state import HeapValueState

__all__ = ["HeapKeyedStateBackend"]


class HeapKeyedStateBackend(CoreBackedStateBackend):
    """Keyed state as ``{key_group: {key: value}}`` on the Python heap.

    Example::

        >>> with HeapKeyedStateBackend(track_keys=True) as backend:
        ...     backend.put(0, "a", 1); _ = backend.get(0, "a"); _ = backend.get(0, "a")
        ...     backend.stats.reads_per_key
        {'a': 2}
    """

    name = "heap"

    def __init__(
        self, *, key_group_range: KeyGroupRange | None = None, track_keys: bool = False
    ) -> None:
        super().__init__(HeapValueState(), key_group_range=key_group_range, track_keys=track_keys)
        self._tables = self._core.tables

    def items(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[int, Key, Any]]:
        tables = self._tables
        for key_group in self.key_group_range if key_groups is None else key_groups:
            table = tables.get(key_group)
            if table:
                for key, value in list(table.items()):
                    yield key_group, key, value

    def restore(self, entries: Iterable[tuple[int, Key, Any]]) -> int:
        tables = self._tables
        count = 0
        for key_group, key, value in self._owned(entries):
            table = tables.get(key_group)
            if table is None:
                tables[key_group] = {key: value}
            else:
                table[key] = value
            count += 1
        return count

    def __len__(self) -> int:
        """Number of stored entries.

        Example::

            >>> backend = HeapKeyedStateBackend(); backend.put(0, "a", 1); len(backend)
            1
        """
        return sum(len(table) for table in self._tables.values())

    def close(self) -> None:
        self._tables.clear()
        super().close()
