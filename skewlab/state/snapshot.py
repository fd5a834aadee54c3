"""Snapshots of keyed state in key-group order: Flink's ``KeyGroupsStateHandle``, our way.

A snapshot of one operator's keyed state is a directory: **one file per subtask** and a small
**metadata** file. A subtask's file holds its entries grouped by key group, key groups in
ascending order; the metadata says, per subtask, which :class:`KeyGroupRange` it covers and the
**offset of each key group** in its file -- what Flink's ``KeyGroupsStateHandle`` (a file plus
``KeyGroupRangeOffsets``) records. To read one key group, or a run of them, a restoring subtask
seeks once and reads one contiguous span::

    file      := MAGIC (8 bytes) | block of key group a | block of a + 1 | ... | of b
    block     := entries of one key group | checksum (u64): xxh64 of those entries, seed = the
                 key group (every key group has a block, an empty one only its checksum)
    entry     := key length (u16) | key | value length (u32) | value        (big-endian)
    key       := key group (u16) | tag | key bytes                    (the RocksDB layout)
    _metadata := JSON: format version, max parallelism, key and value serializers, and per
                 subtask its file, key-group range, offsets (one per key group's block, then
                 the end), entries and block checksums per key group; and its own checksum
                 (:mod:`skewlab.state.metadata_file`)

Checksums, as RocksDB keeps one per block and Kafka one per record batch: xxh64 (the
``xxhash`` package skewlab already depends on for its HLL hashes; 64 bits, several GB/s) of each
key group's entries, seeded with the key group, so a block moved to another key group's place
does not match either. Each block's checksum is written after it in the file *and* recorded in
the metadata: every read of a key group (a restore, a checkpoint's, :meth:`verify`) hashes the
bytes it read and compares both before decoding an entry, so a damaged, truncated, extended or
swapped file is refused naming the file, the key group and the checksums that differ.

Flink writes the key group's id at each offset; here every entry's key starts with its key group
(as in :mod:`skewlab.state.rocksdb`), so the offsets alone delimit a key group, and a reader
checks every entry it decodes against the key group its offsets place it in.

A snapshot can also carry a **per-key index** (``index=True``): per subtask a file of
``(key group, offset, length)`` per entry -- the seed's alternative to key groups, one read per
key, kept only to be measured against them (:mod:`skewlab.state.restore`); its reads are not
checksummed (they do not read whole blocks).

:meth:`KeyedStateSnapshot.load` refuses a damaged or foreign snapshot whole, with one line that
says what is wrong: no metadata, truncated or unknown-version metadata, key-group ranges that do
not tile ``[0, max_parallelism)``, a file shorter (or longer) than its offsets say, and -- with
``verify=True``, which reads every file -- a block whose checksum differs, an entry in a key
group its place does not own, a key that does not hash to the key group it is stored in, and a
value that does not decode (whole, back to the same bytes) with the recorded serializer.

Example::

    >>> import tempfile
    >>> from skewlab.state import create_backend
    >>> directory = tempfile.mkdtemp()
    >>> handles = []
    >>> for subtask, kgs in enumerate([KeyGroupRange(0, 4), KeyGroupRange(5, 9)]):
    ...     with create_backend("heap", key_group_range=kgs) as backend:
    ...         for key in range(20):               # 10 key groups
    ...             key_group = assign_to_key_group(key, 10)
    ...             if key_group in kgs:
    ...                 backend.put(key_group, key, key * key)
    ...         handle = write_keyed_snapshot(backend, directory, subtask, PickleSerializer())
    ...     handles.append(handle)
    >>> snapshot = KeyedStateSnapshot.create(directory, 10, PickleSerializer(), handles)
    >>> KeyedStateSnapshot.load(directory, verify=True).entries
    20
    >>> handles[0].key_group_span(KeyGroupRange(3, 4))      # bytes of key groups 3..4
    (260, 364)
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

from skewlab.errors import SkewlabInputError
from skewlab.state.api import KeyedStateBackend, PickleSerializer, Serializer
from skewlab.state.key_groups import (
    UPPER_BOUND_MAX_PARALLELISM,
    KeyGroupRange,
    assign_to_key_group,
)
from skewlab.state.metadata_file import METADATA_FILE, read_metadata, write_metadata
from skewlab.state.rocksdb import INT_TAG, STR_TAG, decode_key, encode_key
from skewlab.validation import check_whole

__all__ = [
    "BLOCK_CHECKSUM",
    "FILE_MAGIC",
    "INDEX_ENTRY",
    "KEY_SERIALIZER",
    "METADATA_FILE",
    "SNAPSHOT_FORMAT_VERSION",
    "add_per_key_index",
    "block_checksum",
    "check_key_group_tiling",
    "KeyGroupsStateHandle",
    "KeyGroupsWriter",
    "KeyedStateSnapshot",
    "decode_entries",
    "read_span",
    "resolve_serializer",
    "serializer_name",
    "write_key_groups",
    "write_keyed_snapshot",
]

#: The version of this format; a snapshot of any other version is refused (1: no checksums).
SNAPSHOT_FORMAT_VERSION = 2
#: The first bytes of every state file (a foreign or empty file is told apart at once).
FILE_MAGIC = b"SKGS\x00\x00\x00\x02"
#: The checksum that ends every key group's block (u64, big-endian).
BLOCK_CHECKSUM = struct.Struct(">Q")
#: How keys are written: 2-byte key group, a tag, then a Java long or UTF-8 text.
KEY_SERIALIZER = "skewlab-key-v1"
#: One per-key index entry: key group (u16), offset (u64), entry length (u32).
INDEX_ENTRY = struct.Struct(">HQI")

_KEY_LEN = struct.Struct(">H")
_VALUE_LEN = struct.Struct(">I")
_METADATA_KIND = "keyed-state snapshot"


def block_checksum(data: bytes | memoryview, key_group: int) -> int:
    """The checksum of one key group's entries: xxh64 seeded with the key group.

    Example::

        >>> block_checksum(b"", 0) != block_checksum(b"", 1)
        True
    """
    return xxhash.xxh64_intdigest(data, seed=key_group)


def resolve_serializer(name: str, known: Iterable[Any] = ()) -> Serializer:
    """The serializer a snapshot names, to decode its values when verifying: pickle, or the one
    of ``known`` (given by the layer that knows the values' types, e.g. the engine's
    ``StatsSerializer``) whose :func:`serializer_name` it is; another name is a one-line
    SkewlabInputError. Nothing is imported by name.

    Example::

        >>> resolve_serializer("pickle-5").loads(PickleSerializer().dumps(7))
        7
        >>> resolve_serializer("os.system")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: values were written with 'os.system', which this skewlab cannot decode
    """  # noqa: E501
    for serializer in (PickleSerializer(), *known):
        if serializer_name(serializer) == name:
            return serializer
    raise SkewlabInputError(f"values were written with {name!r}, which this skewlab cannot decode")


def serializer_name(serializer: Any) -> str:
    """The name a snapshot records for a value serializer (and checks on restore).

    Example::

        >>> serializer_name(PickleSerializer())
        'pickle-5'
        >>> class Custom:
        ...     pass
        >>> serializer_name(Custom).endswith(".Custom")
        True
    """
    named = getattr(serializer, "name", None)
    if isinstance(named, str) and named:
        return named
    kind = serializer if isinstance(serializer, type) else type(serializer)
    return f"{kind.__module__}.{kind.__qualname__}"


# --------------------------------------------------------------------------------------------
# the handle of one subtask's file


@dataclass(frozen=True)
class KeyGroupsStateHandle:
    """One subtask's state file and where each of its key groups starts (Flink's
    ``KeyGroupsStateHandle`` with ``KeyGroupRangeOffsets``).

    ``offsets`` has one entry per key group of ``key_group_range`` and then the file's end, so
    key group ``g``'s block (entries, then checksum) occupies
    ``[offsets[g - start], offsets[g - start + 1])``; ``entries`` counts the entries of each key
    group, ``checksums`` holds each block's checksum. ``file`` and ``index_file`` are relative to
    the snapshot.

    Example::

        >>> h = KeyGroupsStateHandle("subtask-0.kgs", KeyGroupRange(0, 2), (8, 28, 36, 74),
        ...                          (1, 0, 2), checksums=(1, 2, 3))
        >>> h.length, h.key_group_span(KeyGroupRange(1, 2)), h.intersection(KeyGroupRange(2, 9))
        (74, (28, 74), KeyGroupRange(start_key_group=2, end_key_group=2))
    """

    file: str
    key_group_range: KeyGroupRange
    offsets: tuple[int, ...]
    entries: tuple[int, ...]
    index_file: str | None = None
    checksums: tuple[int, ...] = ()

    @property
    def length(self) -> int:
        """The file's length in bytes (the last offset)."""
        return self.offsets[-1]

    @property
    def total_entries(self) -> int:
        """Entries in the file."""
        return sum(self.entries)

    def intersection(self, key_groups: KeyGroupRange) -> KeyGroupRange | None:
        """The key groups this handle holds of ``key_groups`` (``None`` when none)."""
        start = max(self.key_group_range.start_key_group, key_groups.start_key_group)
        end = min(self.key_group_range.end_key_group, key_groups.end_key_group)
        return KeyGroupRange(start, end) if start <= end else None

    def key_group_span(self, key_groups: KeyGroupRange) -> tuple[int, int]:
        """``(start, end)`` byte offsets of ``key_groups`` (which this handle must hold)."""
        first = self.key_group_range.start_key_group
        if self.intersection(key_groups) != key_groups or not len(key_groups):
            raise SkewlabInputError(
                f"{self.file} holds key groups {_text(self.key_group_range)}, "
                f"not {_text(key_groups)}"
            )
        return (
            self.offsets[key_groups.start_key_group - first],
            self.offsets[key_groups.end_key_group - first + 1],
        )

    def key_group_entries(self, key_groups: KeyGroupRange) -> int:
        """Entries in ``key_groups`` (which this handle must hold)."""
        first = self.key_group_range.start_key_group
        self.key_group_span(key_groups)
        lo = key_groups.start_key_group - first
        return sum(self.entries[lo : lo + len(key_groups)])

    def to_dict(self) -> dict[str, Any]:
        """The handle as the metadata file stores it."""
        out: dict[str, Any] = {
            "file": self.file,
            "key_group_range": [
                self.key_group_range.start_key_group,
                self.key_group_range.end_key_group,
            ],
            "offsets": list(self.offsets),
            "entries": list(self.entries),
            "checksums": list(self.checksums),
        }
        if self.index_file is not None:
            out["index_file"] = self.index_file
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str) -> KeyGroupsStateHandle:
        """Inverse of :meth:`to_dict`; anything malformed is a one-line SkewlabInputError."""
        if not isinstance(data, dict):
            raise SkewlabInputError(f"{where} must be an object")
        for name in ("file", "key_group_range", "offsets", "entries", "checksums"):
            if name not in data:
                raise SkewlabInputError(f"{where} has no {name}")
        file, index_file = data["file"], data.get("index_file")
        for name, value in (("file", file), ("index_file", index_file)):
            if value is not None and (
                not isinstance(value, str) or not value or "/" in value or value.startswith(".")
            ):
                raise SkewlabInputError(f"{where}.{name} must be a plain file name, got {value!r}")
        bounds = data["key_group_range"]
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(_whole, bounds))):
            raise SkewlabInputError(f"{where}.key_group_range must be [start, end]")
        key_groups = KeyGroupRange(*bounds)
        offsets, entries = data["offsets"], data["entries"]
        if not (isinstance(offsets, list) and all(map(_whole, offsets))):
            raise SkewlabInputError(f"{where}.offsets must be a list of byte offsets")
        if not (isinstance(entries, list) and all(map(_whole, entries))):
            raise SkewlabInputError(f"{where}.entries must be a list of counts")
        checksums = data["checksums"]
        if not (isinstance(checksums, list) and all(_whole(c) and c < 1 << 64 for c in checksums)):
            raise SkewlabInputError(f"{where}.checksums must be a list of 64-bit checksums")
        n = len(key_groups)
        if len(offsets) != n + 1 or len(entries) != n or len(checksums) != n:
            raise SkewlabInputError(
                f"{where}: {n} key groups need {n + 1} offsets, {n} entry counts and {n} "
                f"checksums, got {len(offsets)}, {len(entries)} and {len(checksums)}"
            )
        if offsets[0] != len(FILE_MAGIC) or any(
            b - a < BLOCK_CHECKSUM.size for a, b in zip(offsets, offsets[1:], strict=False)
        ):
            raise SkewlabInputError(
                f"{where}.offsets must start at {len(FILE_MAGIC)} and grow by at least "
                f"{BLOCK_CHECKSUM.size} (a block's checksum) per key group"
            )
        return cls(file, key_groups, tuple(offsets), tuple(entries), index_file, tuple(checksums))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(key_groups: KeyGroupRange) -> str:
    return f"[{key_groups.start_key_group}, {key_groups.end_key_group}]"


# --------------------------------------------------------------------------------------------
# writing


class KeyGroupsWriter:
    """Writes one state file entry by entry, key group by key group in ascending order (as a
    sorted input ends its keys' runs); :meth:`close` returns its handle.

    An entry outside ``key_group_range`` or out of key-group order is refused. With
    ``index_path`` a per-key index is written beside it.

    Example::

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "subtask-0.kgs"
        >>> writer = KeyGroupsWriter(path, KeyGroupRange(0, 2))
        >>> writer.add(0, "a", b"1"); writer.add(2, 7, b"22")
        >>> h = writer.close()
        >>> h.offsets, h.entries, path.stat().st_size == h.length
        ((8, 27, 35, 62), (1, 0, 1), True)
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        key_group_range: KeyGroupRange,
        *,
        index_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.key_group_range = key_group_range
        self.index_path = None if index_path is None else Path(index_path)
        self._offsets = [len(FILE_MAGIC)]
        self._counts = [0] * len(key_group_range)
        self._checksums: list[int] = []
        self._index = bytearray() if index_path is not None else None
        self._current = key_group_range.start_key_group
        self._block = xxhash.xxh64(seed=self._current)
        self._position = len(FILE_MAGIC)
        self._out = open(self.path, "wb")  # noqa: SIM115 -- closed by close()
        self._out.write(FILE_MAGIC)

    def add(self, key_group: int, key: Any, value: bytes) -> None:
        """Append one entry (its value already serialised)."""
        if key_group not in self.key_group_range:
            raise SkewlabInputError(
                f"key {key!r} of key group {key_group} is outside "
                f"{_text(self.key_group_range)}, the key groups this snapshot file covers"
            )
        if key_group < self._current:
            raise SkewlabInputError(
                "entries must come key group by key group in ascending order "
                f"(key group {key_group} after {self._current})"
            )
        while self._current < key_group:
            self._end_block()
        raw_key = encode_key(key_group, key)
        record = _KEY_LEN.pack(len(raw_key)) + raw_key + _VALUE_LEN.pack(len(value)) + value
        self._out.write(record)
        self._block.update(record)
        if self._index is not None:
            self._index += INDEX_ENTRY.pack(key_group, self._position, len(record))
        self._position += len(record)
        self._counts[key_group - self.key_group_range.start_key_group] += 1

    def _end_block(self) -> None:
        """Write the current key group's checksum; the next key group's block starts."""
        checksum = self._block.intdigest()
        self._out.write(BLOCK_CHECKSUM.pack(checksum))
        self._checksums.append(checksum)
        self._position += BLOCK_CHECKSUM.size
        self._offsets.append(self._position)
        self._current += 1
        self._block = xxhash.xxh64(seed=self._current)

    def close(self) -> KeyGroupsStateHandle:
        """Finish the file (and its index), flushed to disk; its handle."""
        while self._current <= self.key_group_range.end_key_group:
            self._end_block()
        self._out.flush()
        os.fsync(self._out.fileno())
        self._out.close()
        if self.index_path is not None:
            self.index_path.write_bytes(bytes(self._index or b""))
        return KeyGroupsStateHandle(
            self.path.name,
            self.key_group_range,
            tuple(self._offsets),
            tuple(self._counts),
            None if self.index_path is None else self.index_path.name,
            tuple(self._checksums),
        )

    def abort(self) -> None:
        """Close and remove the unfinished file."""
        self._out.close()
        self.path.unlink(missing_ok=True)


def write_key_groups(
    path: str | os.PathLike[str],
    key_group_range: KeyGroupRange,
    entries: Iterable[tuple[int, Any, bytes]],
    *,
    index_path: str | os.PathLike[str] | None = None,
) -> KeyGroupsStateHandle:
    """Write ``(key_group, key, value bytes)`` entries -- key group by key group, ascending --
    as one state file (:class:`KeyGroupsWriter`); returns its handle.

    Example::

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "subtask-0.kgs"
        >>> h = write_key_groups(path, KeyGroupRange(0, 1), [(0, "a", b"1"), (1, 7, b"22")])
        >>> h.offsets, h.entries, path.stat().st_size == h.length
        ((8, 27, 54), (1, 1), True)
    """
    writer = KeyGroupsWriter(path, key_group_range, index_path=index_path)
    try:
        for key_group, key, value in entries:
            writer.add(key_group, key, value)
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def write_keyed_snapshot(
    backend: KeyedStateBackend,
    directory: str | os.PathLike[str],
    subtask: int,
    serializer: Serializer,
    *,
    index: bool = False,
    key_group_range: KeyGroupRange | None = None,
) -> KeyGroupsStateHandle:
    """Write one subtask's keyed state -- ``backend.items()``, key group by key group -- as
    ``subtask-<i>.kgs`` in ``directory``; values through ``serializer``.

    ``key_group_range`` defaults to the backend's own (the subtask's key groups).

    Example::

        >>> import tempfile
        >>> from skewlab.state import create_backend
        >>> with create_backend("rocksdb", key_group_range=KeyGroupRange(0, 3)) as backend:
        ...     backend.put(2, "tweet-1", 5)
        ...     h = write_keyed_snapshot(backend, tempfile.mkdtemp(), 0, PickleSerializer())
        >>> h.file, h.entries
        ('subtask-0.kgs', (0, 0, 1, 0))
    """
    directory = Path(directory)
    key_groups = backend.key_group_range if key_group_range is None else key_group_range
    dumps = serializer.dumps
    name = f"subtask-{int(subtask)}"
    return write_key_groups(
        directory / f"{name}.kgs",
        key_groups,
        ((kg, key, dumps(value)) for kg, key, value in backend.items(key_groups)),
        index_path=directory / f"{name}.idx" if index else None,
    )


# --------------------------------------------------------------------------------------------
# reading


def read_span(path: str | os.PathLike[str], start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of a file: one seek, one sequential read. A file that ends early
    is refused (a state file shorter than its offsets say).

    Example::

        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "f"; _ = p.write_bytes(b"abcdef")
        >>> read_span(p, 2, 4)
        b'cd'
    """
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    if len(data) != end - start:
        raise SkewlabInputError(
            f"state file {Path(path).name} is shorter than its offsets say: wanted bytes "
            f"[{start}, {end}), the file ends at {start + len(data)}"
        )
    return data


def decode_entries(
    data: bytes | memoryview,
    handle: KeyGroupsStateHandle,
    key_groups: KeyGroupRange,
    *,
    base: int | None = None,
) -> Iterator[tuple[int, Any, bytes]]:
    """Decode the entries of ``key_groups`` from ``data``, the span of ``handle``'s file that
    starts at byte ``base`` (default: where ``key_groups`` starts); yield ``(key_group, key,
    value bytes)``.

    Each key group's block is hashed first and its checksum compared with the one the file
    holds after it and the one the metadata records (a mismatch names the file, the key group
    and the three checksums); then every entry is checked against the key group its offsets
    place it in: an entry of another key group, a key that does not decode, a key group holding
    other than its recorded number of entries, or a span that ends inside an entry is refused.

    Example::

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.kgs"
        >>> h = write_key_groups(path, KeyGroupRange(0, 1), [(0, "a", b"1"), (1, 7, b"22")])
        >>> list(decode_entries(read_span(path, *h.key_group_span(KeyGroupRange(1, 1))), h,
        ...                     KeyGroupRange(1, 1)))
        [(1, 7, b'22')]
    """
    view = memoryview(data)
    first = handle.key_group_range.start_key_group
    start, _ = handle.key_group_span(key_groups)
    base = start if base is None else base
    for key_group in key_groups:
        i = key_group - first
        pos = handle.offsets[i] - base
        end = handle.offsets[i + 1] - base - BLOCK_CHECKSUM.size
        if pos < 0 or end < pos or end + BLOCK_CHECKSUM.size > len(view):
            raise _truncated(handle, key_group)
        _check_block(handle, key_group, view[pos:end], BLOCK_CHECKSUM.unpack_from(view, end)[0])
        found = 0
        while pos < end:
            if pos + _KEY_LEN.size > end:
                raise _truncated(handle, key_group)
            (key_len,) = _KEY_LEN.unpack_from(view, pos)
            key_at = pos + _KEY_LEN.size
            value_len_at = key_at + key_len
            if key_len < 3 or value_len_at + _VALUE_LEN.size > end:
                raise _truncated(handle, key_group)
            (value_len,) = _VALUE_LEN.unpack_from(view, value_len_at)
            value_at = value_len_at + _VALUE_LEN.size
            if value_at + value_len > end:
                raise _truncated(handle, key_group)
            entry_group, key = _decode_key(handle, key_group, bytes(view[key_at:value_len_at]))
            if entry_group != key_group:
                raise SkewlabInputError(
                    f"state file {handle.file}: key {key!r} of key group {entry_group} found "
                    f"where key group {key_group} is stored (its range "
                    f"{_text(handle.key_group_range)} places it there): a damaged or foreign file"
                )
            yield key_group, key, bytes(view[value_at : value_at + value_len])
            found += 1
            pos = value_at + value_len
        if found != handle.entries[i]:
            raise SkewlabInputError(
                f"state file {handle.file}: key group {key_group} holds {found} entries, the "
                f"metadata says {handle.entries[i]}"
            )


def _check_block(
    handle: KeyGroupsStateHandle, key_group: int, block: memoryview, in_file: int
) -> None:
    computed = block_checksum(block, key_group)
    recorded = handle.checksums[key_group - handle.key_group_range.start_key_group]
    if not computed == in_file == recorded:
        raise SkewlabInputError(
            f"state file {handle.file}: key group {key_group}: its {len(block)} bytes hash to "
            f"{computed:#018x}, the file's checksum is {in_file:#018x}, the metadata's "
            f"{recorded:#018x} (a damaged, truncated, extended or swapped file)"
        )


def _decode_key(handle: KeyGroupsStateHandle, key_group: int, raw: bytes) -> tuple[int, Any]:
    if raw[2] not in (INT_TAG, STR_TAG) or (raw[2] == INT_TAG and len(raw) != 11):
        raise SkewlabInputError(
            f"state file {handle.file}: key group {key_group}: a key with tag {raw[2]} and "
            f"{len(raw) - 3} bytes is neither a long nor a text (a damaged or foreign file)"
        )
    try:
        return decode_key(raw)
    except UnicodeDecodeError:
        raise SkewlabInputError(
            f"state file {handle.file}: key group {key_group}: a text key is not UTF-8 "
            "(a damaged or foreign file)"
        ) from None


def _truncated(handle: KeyGroupsStateHandle, key_group: int) -> SkewlabInputError:
    return SkewlabInputError(
        f"state file {handle.file}: an entry of key group {key_group} runs past its offsets "
        "(a truncated or damaged file)"
    )


def check_key_group_tiling(
    ranges: Iterable[KeyGroupRange], max_parallelism: int, where: str
) -> None:
    """Refuse key-group ranges (sorted by start) that do not tile ``[0, max_parallelism)``:
    every key group must be in exactly one subtask's state.

    Example::

        >>> check_key_group_tiling([KeyGroupRange(0, 3), KeyGroupRange(5, 9)], 10, "snapshot")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: snapshot: the subtasks' key-group ranges leave a gap at key group 4 (every key group from 0 to max parallelism - 1 must be in exactly one file)
    """  # noqa: E501
    expected = 0
    for kgs in ranges:
        if kgs.start_key_group != expected:
            what = "overlap" if kgs.start_key_group < expected else "leave a gap"
            raise SkewlabInputError(
                f"{where}: the subtasks' key-group ranges {what} at key group {expected} "
                f"(every key group from 0 to max parallelism - 1 must be in exactly one file)"
            )
        expected = kgs.end_key_group + 1
    if expected != max_parallelism:
        raise SkewlabInputError(
            f"{where}: the key-group ranges end at {expected - 1}, max parallelism is "
            f"{max_parallelism} (key groups 0..{max_parallelism - 1})"
        )


# --------------------------------------------------------------------------------------------
# the snapshot: its metadata, written and loaded


@dataclass(frozen=True)
class KeyedStateSnapshot:
    """One operator's keyed state at one moment: a directory of subtask files and metadata.

    Example::

        >>> import tempfile
        >>> s = KeyedStateSnapshot.create(tempfile.mkdtemp(), 128, PickleSerializer(), [
        ...     KeyGroupsStateHandle("subtask-0.kgs", KeyGroupRange(0, 127),
        ...                          tuple(range(8, 8 + 129 * 8, 8)), (0,) * 128)])
        >>> s.parallelism, s.value_serializer
        (1, 'pickle-5')
    """

    directory: Path
    max_parallelism: int
    value_serializer: str
    handles: tuple[KeyGroupsStateHandle, ...]
    key_serializer: str = KEY_SERIALIZER
    format_version: int = SNAPSHOT_FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def parallelism(self) -> int:
        """Subtasks that wrote the snapshot (one handle each)."""
        return len(self.handles)

    @property
    def entries(self) -> int:
        """Entries over every subtask's file."""
        return sum(h.total_entries for h in self.handles)

    @property
    def state_bytes(self) -> int:
        """Bytes of entries over every file (headers and checksums left out)."""
        return sum(
            h.length - len(FILE_MAGIC) - BLOCK_CHECKSUM.size * len(h.key_group_range)
            for h in self.handles
        )

    def path(self, name: str) -> Path:
        """A file of the snapshot."""
        return self.directory / name

    def overlapping(
        self, key_groups: KeyGroupRange
    ) -> list[tuple[KeyGroupsStateHandle, KeyGroupRange]]:  # noqa: E501
        """The handles holding some of ``key_groups``, each with the key groups it holds."""
        out = []
        for handle in self.handles:
            common = handle.intersection(key_groups)
            if common is not None:
                out.append((handle, common))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The metadata as written to ``_metadata``."""
        return {
            "kind": _METADATA_KIND,
            "format_version": self.format_version,
            "max_parallelism": self.max_parallelism,
            "key_serializer": self.key_serializer,
            "value_serializer": self.value_serializer,
            "handles": [h.to_dict() for h in self.handles],
            **self.extra,
        }

    @classmethod
    def create(
        cls,
        directory: str | os.PathLike[str],
        max_parallelism: int,
        serializer: Serializer | str,
        handles: Iterable[KeyGroupsStateHandle],
        **extra: Any,
    ) -> KeyedStateSnapshot:
        """Check ``handles`` (they must tile ``[0, max_parallelism)``) and write the metadata
        last, so that a directory with metadata holds every file it names."""
        snapshot = cls(
            Path(directory),
            check_whole("max_parallelism", max_parallelism, 1, UPPER_BOUND_MAX_PARALLELISM),
            serializer if isinstance(serializer, str) else serializer_name(serializer),
            tuple(sorted(handles, key=lambda h: h.key_group_range.start_key_group)),
            extra=dict(extra),
        )
        snapshot._check_tiling()
        write_metadata(snapshot.directory, snapshot.to_dict())
        return snapshot

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        max_parallelism: int | None = None,
        value_serializer: Serializer | str | None = None,
        verify: bool = False,
        serializers: Iterable[Any] = (),
    ) -> KeyedStateSnapshot:
        """Read and check a snapshot's metadata and files; refuse a damaged one whole.

        ``max_parallelism`` / ``value_serializer``: what the restoring job uses (a snapshot
        taken with another is refused). ``verify`` reads every file and checks every entry,
        decoding values with pickle or one of ``serializers`` (:func:`resolve_serializer`).
        """
        directory = Path(directory)
        where = f"keyed-state snapshot {directory}"
        data = read_metadata(
            directory, kind=_METADATA_KIND, version=SNAPSHOT_FORMAT_VERSION, where=where
        )
        if data.get("key_serializer") != KEY_SERIALIZER:
            raise SkewlabInputError(
                f"{where}: keys written as {data.get('key_serializer')!r}, this skewlab reads "
                f"{KEY_SERIALIZER!r}"
            )
        max_p = data.get("max_parallelism")
        if not _whole(max_p) or not 1 <= max_p <= UPPER_BOUND_MAX_PARALLELISM:
            raise SkewlabInputError(f"{where}: max_parallelism {max_p!r} is not valid")
        raw_handles = data.get("handles")
        if not isinstance(raw_handles, list) or not raw_handles:
            raise SkewlabInputError(f"{where}: no handles in {METADATA_FILE}")
        value_name = data.get("value_serializer")
        if not isinstance(value_name, str) or not value_name:
            raise SkewlabInputError(f"{where}: no value_serializer in {METADATA_FILE}")
        known = {
            "kind", "format_version", "max_parallelism", "key_serializer", "value_serializer",
            "handles",
        }  # fmt: skip
        snapshot = cls(
            directory,
            max_p,
            value_name,
            tuple(
                KeyGroupsStateHandle.from_dict(h, f"{where}: handle {i}")
                for i, h in enumerate(raw_handles)
            ),
            extra={k: v for k, v in data.items() if k not in known},
        )
        snapshot._check_tiling()
        snapshot._check_files()
        if max_parallelism is not None and max_parallelism != max_p:
            raise SkewlabInputError(
                f"{where} was taken with max parallelism {max_p}; this job has {max_parallelism}"
                " (key groups are fixed for a job's lifetime: restore with the same max "
                "parallelism)"
            )
        if value_serializer is not None:
            wanted = (
                value_serializer
                if isinstance(value_serializer, str)
                else serializer_name(value_serializer)
            )
            if wanted != value_name:
                raise SkewlabInputError(
                    f"{where}: values were written with {value_name!r}, this job reads them with "
                    f"{wanted!r}"
                )
        if verify:
            snapshot.verify(serializers)
        return snapshot

    def _check_tiling(self) -> None:
        where = f"keyed-state snapshot {self.directory}"
        check_key_group_tiling(
            [h.key_group_range for h in self.handles], self.max_parallelism, where
        )
        names = [h.file for h in self.handles]
        if len(set(names)) != len(names):
            raise SkewlabInputError(f"{where}: two handles name the same file")

    def _check_files(self) -> None:
        where = f"keyed-state snapshot {self.directory}"
        for handle in self.handles:
            path = self.path(handle.file)
            if not path.is_file():
                raise SkewlabInputError(f"{where}: state file {handle.file} is missing")
            size = path.stat().st_size
            if size != handle.length:
                shorter = "shorter" if size < handle.length else "longer"
                raise SkewlabInputError(
                    f"{where}: state file {handle.file} is {shorter} than its offsets say "
                    f"({size} bytes, offsets end at {handle.length})"
                )
            with open(path, "rb") as f:
                if f.read(len(FILE_MAGIC)) != FILE_MAGIC:
                    raise SkewlabInputError(
                        f"{where}: {handle.file} is not a skewlab state file (bad header)"
                    )
            if handle.index_file is not None:
                index = self.path(handle.index_file)
                if not index.is_file():
                    raise SkewlabInputError(f"{where}: index file {handle.index_file} is missing")
                if index.stat().st_size != INDEX_ENTRY.size * handle.total_entries:
                    raise SkewlabInputError(
                        f"{where}: index file {handle.index_file} does not hold one entry per key"
                    )

    def verify(self, serializers: Iterable[Any] = ()) -> None:
        """Read every file and check it whole: each block's checksum, each entry against its
        key group, each key re-hashed to the key group it is stored in, and each value decoded
        with the recorded serializer (pickle, or one of ``serializers``) and encoded back to the
        same bytes. The first problem is
        one SkewlabInputError line naming the snapshot, the file, the key group and what
        differed."""
        where = f"keyed-state snapshot {self.directory}"
        serializer = resolve_serializer(self.value_serializer, serializers)
        loads, dumps = serializer.loads, getattr(serializer, "dumps", None)
        for handle in self.handles:
            data = read_span(self.path(handle.file), len(FILE_MAGIC), handle.length)
            try:
                for key_group, key, raw in decode_entries(data, handle, handle.key_group_range):
                    _check_entry(handle, key_group, key, raw, self.max_parallelism, loads, dumps)
            except SkewlabInputError as err:
                raise SkewlabInputError(f"{where}: {err}") from None

    def loads(self, serializer: Serializer | None = None):
        """The ``loads`` for this snapshot's values: ``serializer``'s, checked against the name
        the snapshot recorded (default: pickle when the snapshot used it)."""
        if serializer is None:
            if self.value_serializer != serializer_name(PickleSerializer()):
                raise SkewlabInputError(
                    f"values were written with {self.value_serializer!r}: give that serializer"
                )
            serializer = PickleSerializer()
        elif serializer_name(serializer) != self.value_serializer:
            raise SkewlabInputError(
                f"values were written with {self.value_serializer!r}, not "
                f"{serializer_name(serializer)!r}"
            )
        return serializer.loads


def _check_entry(
    handle: KeyGroupsStateHandle, key_group: int, key: Any, raw: bytes, max_parallelism: int,
    loads, dumps,
) -> None:  # fmt: skip
    hashed = assign_to_key_group(key, max_parallelism)
    if hashed != key_group:
        raise SkewlabInputError(
            f"state file {handle.file}: key {key!r} is stored in key group {key_group} but "
            f"hashes to key group {hashed}"
        )
    try:
        value = loads(raw)
        again = None if dumps is None else dumps(value)
    except Exception as exc:  # noqa: BLE001 -- any decoding failure is a damaged value
        raise SkewlabInputError(
            f"state file {handle.file}: key group {key_group}: the value of key {key!r} does "
            f"not decode ({type(exc).__name__})"
        ) from None
    if again is not None and again != raw:
        raise SkewlabInputError(
            f"state file {handle.file}: key group {key_group}: the value of key {key!r} "
            f"decodes to other bytes than it holds ({len(raw)} stored, {len(again)} re-encoded)"
        )


def add_per_key_index(snapshot: KeyedStateSnapshot) -> KeyedStateSnapshot:
    """Write a per-key index beside each state file of ``snapshot`` (the seed's alternative to
    key groups, to be measured against them) and rewrite its metadata; the new snapshot.

    Example::

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> h = write_key_groups(f"{d}/subtask-0.kgs", KeyGroupRange(0, 1), [(1, "a", b"x")])
        >>> s = add_per_key_index(KeyedStateSnapshot.create(d, 2, "raw", [h]))
        >>> s.handles[0].index_file, KeyedStateSnapshot.load(d).handles[0].index_file
        ('subtask-0.idx', 'subtask-0.idx')
    """
    handles = []
    for handle in snapshot.handles:
        data = read_span(snapshot.path(handle.file), 0, handle.length)
        index = bytearray()
        view = memoryview(data)
        first = handle.key_group_range.start_key_group
        for key_group in handle.key_group_range:
            pos = handle.offsets[key_group - first]
            end = handle.offsets[key_group - first + 1] - BLOCK_CHECKSUM.size
            while pos < end:
                (key_len,) = _KEY_LEN.unpack_from(view, pos)
                (value_len,) = _VALUE_LEN.unpack_from(view, pos + _KEY_LEN.size + key_len)
                length = _KEY_LEN.size + key_len + _VALUE_LEN.size + value_len
                index += INDEX_ENTRY.pack(key_group, pos, length)
                pos += length
        name = Path(handle.file).stem + ".idx"
        snapshot.path(name).write_bytes(bytes(index))
        handles.append(
            KeyGroupsStateHandle(
                handle.file,
                handle.key_group_range,
                handle.offsets,
                handle.entries,
                name,
                handle.checksums,
            )  # fmt: skip
        )
    return KeyedStateSnapshot.create(
        snapshot.directory,
        snapshot.max_parallelism,
        snapshot.value_serializer,
        handles,
        **snapshot.extra,
    )
