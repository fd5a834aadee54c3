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

from skewlab.state.base import Key, KeyedStateBackend
from skewlab.state.value_state import HeapValueState, ValueStateCore

__all__ = ["HeapKeyedStateBackend"]


class HeapKeyedStateBackend(KeyedStateBackend):
    """Keyed state as ``{key_group: {key: value}}`` on the Python heap.

    Example::

        >>> with HeapKeyedStateBackend(track_keys=True) as state:
        ...     state.put(0, "a", 1); _ = state.get(0, "a"); _ = state.get(0, "a")
        ...     state.stats.reads_per_key
        {'a': 2}
    """

    name = "heap"

    def __init__(self, *, track_keys: bool = False) -> None:
        super().__init__(track_keys=track_keys)
        # the value state is compiled (skewlab.state.value_state); its methods are bound as
        # this backend's own, so a call from Python is one C call
        self._core = HeapValueState()
        self._tables = self._core.tables
        self.get = self._core.get  # type: ignore[method-assign]
        self.put = self._core.put  # type: ignore[method-assign]
        self.delete = self._core.delete  # type: ignore[method-assign]
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
