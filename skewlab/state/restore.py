"""Restore at a new parallelism: which bytes a new subtask reads of an old snapshot, three ways.

After a rescale from ``p`` to ``p'`` subtasks (the same max parallelism), new subtask ``i``
owns the key groups ``compute_key_group_range_for_operator_index(maxP, p', i)``, and its state
is scattered over the files of every old subtask whose range intersects its own. The seed
compares three ways to fetch it:

===================  ==========================================================================
``read_all``         the naive way: open every old file, read it whole (one sequential read
                     each), decode every entry, keep the keys it owns
``per_key_index``    a per-key index: read each old file's index (one read each), then one read
                     per owned key -- no wasted bytes, but random I/O, one request per key
``key_groups``       Flink's way: for each old file whose key-group range intersects its own,
                     one seek and one sequential read of the intersecting key groups
===================  ==========================================================================

Each way returns the entries and a :class:`RestoreIO`: bytes read, read requests (with the size
of each), files opened, keys read, keys kept, and the wall time it took here. The key-group way
reads exactly the owned entries' bytes; ``read_all`` reads everything ``p'`` times over in
total; ``per_key_index`` reads the index and then issues one request per key.
(:mod:`skewlab.iomodel.restore_time` turns the counters into a modelled time on a disk or an
object store.)

Example::

    >>> import tempfile
    >>> from skewlab.state import create_backend
    >>> from skewlab.state.snapshot import KeyedStateSnapshot, write_keyed_snapshot
    >>> from skewlab.state.api import PickleSerializer
    >>> directory, handles = tempfile.mkdtemp(), []
    >>> for i in range(3):                                   # the seed's 3 -> 4, 10 key groups
    ...     kgs = compute_key_group_range_for_operator_index(10, 3, i)
    ...     with create_backend("heap", key_group_range=kgs) as backend:
    ...         for key in range(21):                        # keys 0..20, identity hash
    ...             if key % 10 in kgs:
    ...                 backend.put(key % 10, key, f"state of {key}")
    ...         handles.append(write_keyed_snapshot(backend, directory, i, PickleSerializer(),
    ...                                             index=True))
    >>> snapshot = KeyedStateSnapshot.create(directory, 10, PickleSerializer(), handles)
    >>> new = compute_key_group_range_for_operator_index(10, 4, 1)   # key groups 3..4
    >>> entries, io = restore_key_groups(snapshot, new)
    >>> sorted(key for _, key, _ in entries), io.requests, io.files_opened
    ([3, 4, 13, 14], 2, 2)
    >>> naive = restore_read_all(snapshot, new)[1]
    >>> naive.keys_read, naive.keys_kept, naive.bytes_read > io.bytes_read
    (21, 4, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.state.key_groups import (
    KeyGroupRange,
    check_parallelism,
    compute_key_group_range_for_operator_index,
)
from skewlab.state.snapshot import (
    INDEX_ENTRY,
    KeyedStateSnapshot,
    decode_entries,
    read_span,
)
from skewlab.validation import check_choice

__all__ = [
    "RESTORE_WAYS",
    "RestoreIO",
    "check_new_parallelism",
    "restore_key_groups",
    "restore_per_key_index",
    "restore_read_all",
    "restore_subtask",
    "restore_ways_table",
]

#: The three ways, in the seed's order: naive, per-key index, key groups (Flink's).
RESTORE_WAYS = ("read_all", "per_key_index", "key_groups")

Entry = tuple[int, Any, Any]
Loads = Callable[[bytes], Any] | None


@dataclass
class RestoreIO:
    """What one new subtask read to restore its key groups, one way.

    ``request_bytes`` lists the size of every read request (a modelled time needs each);
    ``index_bytes`` is the part of ``bytes_read`` that was index, not state.

    Example::

        >>> io = RestoreIO("key_groups", 0, KeyGroupRange(0, 4))
        >>> io.read(100); io.read(20); io.requests, io.bytes_read
        (2, 120)
    """

    way: str
    subtask: int
    key_group_range: KeyGroupRange
    bytes_read: int = 0
    requests: int = 0
    files_opened: int = 0
    keys_read: int = 0
    keys_kept: int = 0
    index_bytes: int = 0
    seconds: float = 0.0
    request_bytes: list[int] = field(default_factory=list)

    def read(self, size: int) -> None:
        """Count one read request of ``size`` bytes."""
        self.requests += 1
        self.bytes_read += size
        self.request_bytes.append(size)

    def to_row(self) -> dict[str, Any]:
        """A flat row for a table (``request_bytes`` left out, the range as text)."""
        row = asdict(self)
        row.pop("request_bytes")
        kgs = self.key_group_range
        row["key_group_range"] = f"{kgs.start_key_group}-{kgs.end_key_group}"
        return row


def check_new_parallelism(new_parallelism: int, max_parallelism: int) -> None:
    """Refuse a new parallelism above the max parallelism, as Flink does (there would be
    subtasks without a key group).

    Example::

        >>> check_new_parallelism(200, 128)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: new parallelism 200 exceeds the max parallelism 128 the state was taken with: key groups are the unit of rescaling, so a job cannot have more subtasks than key groups (Flink refuses it too)
    """  # noqa: E501
    if isinstance(new_parallelism, int) and new_parallelism > max_parallelism >= 1:
        raise SkewlabInputError(
            f"new parallelism {new_parallelism} exceeds the max parallelism {max_parallelism} "
            "the state was taken with: key groups are the unit of rescaling, so a job cannot "
            "have more subtasks than key groups (Flink refuses it too)"
        )
    check_parallelism(new_parallelism, max_parallelism)


def _timed(
    way: str, subtask: int, key_groups: KeyGroupRange, body
) -> tuple[list[Entry], RestoreIO]:  # noqa: E501
    io = RestoreIO(way, subtask, key_groups)
    began = time.perf_counter()
    entries = body(io)
    io.seconds = time.perf_counter() - began
    io.keys_kept = len(entries)
    return entries, io


def _value(loads: Loads, raw: bytes) -> Any:
    return raw if loads is None else loads(raw)


def restore_key_groups(
    snapshot: KeyedStateSnapshot,
    key_groups: KeyGroupRange,
    *,
    loads: Loads = None,
    subtask: int = 0,
) -> tuple[list[Entry], RestoreIO]:
    """Flink's way: one seek and one sequential read per (old file, intersecting key groups).

    ``loads`` deserialises values (default: the raw bytes). Entries come key group by key
    group; every one is checked against the key group it is stored under.
    """

    def body(io: RestoreIO) -> list[Entry]:
        out: list[Entry] = []
        for handle, common in snapshot.overlapping(key_groups):
            start, end = handle.key_group_span(common)
            io.files_opened += 1
            data = read_span(snapshot.path(handle.file), start, end)
            io.read(len(data))
            for key_group, key, raw in decode_entries(data, handle, common, base=start):
                io.keys_read += 1
                out.append((key_group, key, _value(loads, raw)))
        return out

    return _timed("key_groups", subtask, key_groups, body)


def restore_read_all(
    snapshot: KeyedStateSnapshot,
    key_groups: KeyGroupRange,
    *,
    loads: Loads = None,
    subtask: int = 0,
) -> tuple[list[Entry], RestoreIO]:
    """The naive way: read every old file whole, decode every entry, keep those it owns."""

    def body(io: RestoreIO) -> list[Entry]:
        out: list[Entry] = []
        for handle in snapshot.handles:
            io.files_opened += 1
            data = read_span(snapshot.path(handle.file), 0, handle.length)
            io.read(len(data))
            for key_group, key, raw in decode_entries(data, handle, handle.key_group_range, base=0):
                io.keys_read += 1
                if key_group in key_groups:
                    out.append((key_group, key, _value(loads, raw)))
        return out

    return _timed("read_all", subtask, key_groups, body)


def restore_per_key_index(
    snapshot: KeyedStateSnapshot,
    key_groups: KeyGroupRange,
    *,
    loads: Loads = None,
    subtask: int = 0,
) -> tuple[list[Entry], RestoreIO]:
    """The per-key index: read every old file's index whole, then one read per owned key.

    The snapshot must have been written with ``index=True``.
    """
    from skewlab.state.rocksdb import decode_key

    def body(io: RestoreIO) -> list[Entry]:
        out: list[Entry] = []
        for handle in snapshot.handles:
            if handle.index_file is None:
                raise SkewlabInputError(
                    f"snapshot {snapshot.directory} has no per-key index (write it with "
                    "index=True to measure the index way)"
                )
            io.files_opened += 1
            index = read_span(
                snapshot.path(handle.index_file), 0, INDEX_ENTRY.size * handle.total_entries
            )  # noqa: E501
            io.read(len(index))
            io.index_bytes += len(index)
            wanted = [
                (offset, length)
                for key_group, offset, length in INDEX_ENTRY.iter_unpack(index)
                if key_group in key_groups
            ]
            if not wanted:
                continue
            path = snapshot.path(handle.file)
            io.files_opened += 1
            with open(path, "rb") as f:
                for offset, length in wanted:
                    f.seek(offset)
                    record = f.read(length)
                    if len(record) != length:
                        raise SkewlabInputError(
                            f"state file {handle.file} ends inside the entry its index places "
                            f"at byte {offset}"
                        )
                    io.read(length)
                    io.keys_read += 1
                    key_len = int.from_bytes(record[:2], "big")
                    key_group, key = decode_key(record[2 : 2 + key_len])
                    if key_group not in key_groups or key_group not in handle.key_group_range:
                        raise SkewlabInputError(
                            f"state file {handle.file}: the index places key {key!r} of key "
                            f"group {key_group} among key groups it does not hold"
                        )
                    raw = record[2 + key_len + 4 :]
                    out.append((key_group, key, _value(loads, raw)))
        return out

    return _timed("per_key_index", subtask, key_groups, body)


_WAYS = {
    "read_all": restore_read_all,
    "per_key_index": restore_per_key_index,
    "key_groups": restore_key_groups,
}


def restore_subtask(
    snapshot: KeyedStateSnapshot,
    new_parallelism: int,
    subtask: int,
    way: str = "key_groups",
    *,
    loads: Loads = None,
) -> tuple[list[Entry], RestoreIO]:
    """New subtask ``subtask`` of ``new_parallelism`` restores the key groups it owns, ``way``.

    Example::

        >>> restore_subtask(None, 4, 1, "index")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown restore way 'index': use one of read_all, per_key_index, key_groups
    """  # noqa: E501
    check_choice("restore way", way, RESTORE_WAYS)
    check_new_parallelism(new_parallelism, snapshot.max_parallelism)
    key_groups = compute_key_group_range_for_operator_index(
        snapshot.max_parallelism, new_parallelism, subtask
    )
    return _WAYS[way](snapshot, key_groups, loads=loads, subtask=subtask)


def restore_ways_table(
    snapshot: KeyedStateSnapshot,
    new_parallelism: int,
    ways: tuple[str, ...] = RESTORE_WAYS,
    *,
    loads: Loads = None,
) -> list[RestoreIO]:
    """Every new subtask of ``new_parallelism`` restored every way (each checked to keep the
    same entries as the key-group way); one :class:`RestoreIO` per (way, subtask).

    Example::

        >>> rows = restore_ways_table(snapshot, 4)  # doctest: +SKIP
        >>> [r.requests for r in rows if r.subtask == 1]  # doctest: +SKIP
        [3, 7, 2]
    """
    for way in ways:
        check_choice("restore way", way, RESTORE_WAYS)
    check_new_parallelism(new_parallelism, snapshot.max_parallelism)
    rows: list[RestoreIO] = []
    for subtask in range(new_parallelism):
        kept: dict[str, list[Entry]] = {}
        for way in ways:
            entries, io = restore_subtask(snapshot, new_parallelism, subtask, way, loads=loads)
            kept[way] = sorted(entries, key=lambda e: (e[0], repr(e[1])))
            rows.append(io)
        first = next(iter(kept.values()), [])
        for way, entries in kept.items():
            if entries != first:
                raise RuntimeError(f"restore way {way!r} kept other entries than {ways[0]!r}")
    return rows
