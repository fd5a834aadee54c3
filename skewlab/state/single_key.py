"""The single-key backend: FLIP-140's state for sorted, bounded input.

When the input of a keyed operator is sorted by key, all records of a key arrive together, so
the state only ever needs the *current* key's value: one field, no hash table, O(1) memory.
Accessing a different key starts that key with empty state (the previous key is finished).

The input must be sorted by ``(key_group, key)``. A key that does not compare strictly
greater than the previous one means the input was not sorted -- a key may come back after it
was finished -- and the backend raises :class:`~skewlab.errors.UnsortedInputError` instead of
silently starting that key again from nothing.

Example::

    >>> from skewlab.state.single_key import SingleKeyStateBackend
    >>> state = SingleKeyStateBackend()
    >>> for key in ["a", "a", "b"]:
    ...     state.put(0, key, (state.get(0, key) or 0) + 1)
    >>> list(state.items([0]))
    [(0, 'b', 1)]
    >>> state.get(0, "a")
    Traceback (most recent call last):
    ...
    skewlab.errors.UnsortedInputError: input is not sorted by key: key 'a' (key group 0) came after key 'b' (key group 0); the single-key backend needs records sorted by (key_group, key)
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from skewlab.state.api import CoreBackedStateBackend, Key
from skewlab.state.key_groups import KeyGroupRange
from skewlab.state.value_state import SingleKeyValueState

__all__ = ["SingleKeyStateBackend"]


class SingleKeyStateBackend(CoreBackedStateBackend):
    """Holds only the current key's value; keys must arrive sorted by ``(key_group, key)``.

    ``reads`` / ``writes`` / ``deletes`` count calls (memory accesses). The value state is
    compiled (:class:`~skewlab.state.value_state.SingleKeyValueState`); a new key is Flink's
    ``setCurrentKey``, which checks the sort order.

    Example::

        >>> state = SingleKeyStateBackend()
        >>> state.put(1, 10, "x"); state.get(1, 10), state.get(1, 11)
        ('x', None)
    """

    name = "single_key"

    def __init__(
        self, *, key_group_range: KeyGroupRange | None = None, track_keys: bool = False
    ) -> None:
        super().__init__(
            SingleKeyValueState(), key_group_range=key_group_range, track_keys=track_keys
        )

    def items(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[int, Key, Any]]:
        """Only the current key (if it has a value and its key group is asked for)."""
        current = self._core.current
        if current is None or current[2] is None:
            return
        for key_group in self.key_group_range if key_groups is None else key_groups:
            if key_group == current[0]:
                yield current
                return

    @property
    def current_key(self) -> tuple[int, Key] | None:
        """``(key_group, key)`` of the current key, or ``None`` before the first access.

        Example::

            >>> state = SingleKeyStateBackend(); state.current_key is None
            True
            >>> _ = state.get(2, "k"); state.current_key
            (2, 'k')
        """
        current = self._core.current
        return None if current is None else (current[0], current[1])

    def close(self) -> None:
        self._core.clear()
        super().close()
