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

from skewlab.errors import UnsortedInputError
from skewlab.state.base import Key, KeyedStateBackend

__all__ = ["SingleKeyStateBackend"]


class SingleKeyStateBackend(KeyedStateBackend):
    """Holds only the current key's value; keys must arrive sorted by ``(key_group, key)``.

    ``reads`` / ``writes`` / ``deletes`` count calls (memory accesses).

    Example::

        >>> state = SingleKeyStateBackend()
        >>> state.put(1, 10, "x"); state.get(1, 10), state.get(1, 11)
        ('x', None)
    """

    name = "single_key"

    def __init__(self, *, track_keys: bool = False) -> None:
        super().__init__(track_keys=track_keys)
        self._has_key = False
        self._key_group: int = -1
        self._key: Key | None = None
        self._value: Any = None
        if track_keys:
            self._install_api_key_tracking()

    def _set_current_key(self, key_group: int, key: Key) -> None:
        """Switch to a new key (Flink's ``setCurrentKey``), checking the sort order."""
        if self._has_key:
            try:
                ordered = (key_group, key) > (self._key_group, self._key)
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

    def get(self, key_group: int, key: Key) -> Any | None:
        self._reads += 1
        if key != self._key or key_group != self._key_group:  # _key is None before any key
            self._set_current_key(key_group, key)
        return self._value

    def put(self, key_group: int, key: Key, value: Any) -> None:
        self._writes += 1
        if key != self._key or key_group != self._key_group:  # _key is None before any key
            self._set_current_key(key_group, key)
        self._value = value

    def delete(self, key_group: int, key: Key) -> None:
        self._deletes += 1
        if key != self._key or key_group != self._key_group:  # _key is None before any key
            self._set_current_key(key_group, key)
        self._value = None

    def items(self, key_groups: Iterable[int]) -> Iterator[tuple[int, Key, Any]]:
        """Only the current key (if it has a value and its key group is asked for)."""
        if not self._has_key or self._value is None:
            return
        for key_group in key_groups:
            if key_group == self._key_group:
                yield key_group, self._key, self._value
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
        return (self._key_group, self._key) if self._has_key else None

    def close(self) -> None:
        self._value = None
        super().close()
