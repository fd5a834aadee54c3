"""Keyed state backends, Flink's way: heap, RocksDB, a cached RocksDB and single-key.

Every backend implements :class:`~skewlab.state.base.KeyedStateBackend` (``get`` / ``put`` /
``delete`` by ``(key_group, key)``, ``items`` over a key-group range, ``flush`` (a checkpoint;
for ``rocksdb`` and ``cached``, RocksDB's own), ``stats``, ``close``). Pick one by name with
:func:`create_backend`:

==============  ===================================================================
``heap``        Python objects in a dict per key group (HashMapStateBackend)
``rocksdb``     real RocksDB, values serialised, WAL off (EmbeddedRocksDBStateBackend)
``cached``      FLIP-325: a write-back LRU of objects in front of ``rocksdb``
``single_key``  FLIP-140: only the current key's value; input sorted by key
==============  ===================================================================

Example::

    >>> from skewlab.state import create_backend
    >>> with create_backend("cached", max_entries=1000) as state:
    ...     state.put(0, "tweet-1", 1)
    ...     state.get(0, "tweet-1"), state.stats.hit_ratio
    (1, 1.0)
"""

from __future__ import annotations

import inspect
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.state.base import KeyedStateBackend, PickleSerializer, Serializer, StateAccessStats
from skewlab.state.cached import CachedKeyedStateBackend
from skewlab.state.heap import HeapKeyedStateBackend
from skewlab.state.rocksdb import RocksDBKeyedStateBackend
from skewlab.state.single_key import SingleKeyStateBackend

__all__ = [
    "BACKENDS",
    "CachedKeyedStateBackend",
    "HeapKeyedStateBackend",
    "KeyedStateBackend",
    "PickleSerializer",
    "RocksDBKeyedStateBackend",
    "Serializer",
    "SingleKeyStateBackend",
    "StateAccessStats",
    "create_backend",
]

_CLASSES: dict[str, type[KeyedStateBackend]] = {
    cls.name: cls
    for cls in (
        HeapKeyedStateBackend,
        RocksDBKeyedStateBackend,
        CachedKeyedStateBackend,
        SingleKeyStateBackend,
    )
}

#: The names :func:`create_backend` accepts.
BACKENDS: tuple[str, ...] = tuple(_CLASSES)


def create_backend(name: str, **options: Any) -> KeyedStateBackend:
    """Create the state backend called ``name`` (one of :data:`BACKENDS`) with ``options``.

    Options: ``track_keys`` (all); ``serializer`` and ``local_dir`` (``rocksdb``, ``cached``);
    ``max_entries`` (``cached``). ``"single-key"`` is accepted for ``"single_key"``.

    Example::

        >>> state = create_backend("rocksdb", track_keys=True)
        >>> type(state).__name__
        'RocksDBKeyedStateBackend'
        >>> state.close()
        >>> create_backend("mapdb")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown state backend 'mapdb'; choose one of: heap, rocksdb, cached, single_key
    """  # noqa: E501
    normalized = name.strip().lower().replace("-", "_") if isinstance(name, str) else name
    cls = _CLASSES.get(normalized) if isinstance(normalized, str) else None
    if cls is None:
        raise SkewlabInputError(
            f"unknown state backend {name!r}; choose one of: {', '.join(BACKENDS)}"
        )
    parameters = inspect.signature(cls).parameters
    unknown = sorted(set(options) - set(parameters))
    if unknown:
        raise SkewlabInputError(
            f"state backend {normalized!r} has no option {', '.join(unknown)}; "
            f"its options are: {', '.join(parameters)}"
        )
    return cls(**options)
