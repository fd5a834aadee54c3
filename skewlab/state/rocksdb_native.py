"""RocksDB's native snapshot and its restore at a new parallelism, as Flink does it.

A native snapshot of a RocksDB subtask is RocksDB's own checkpoint (the memtable flushed, the
SST files hard-linked) plus the :class:`KeyGroupRange` it covers. Keys start with their 2-byte
big-endian key group (:mod:`skewlab.state.rocksdb`), so the key groups ``[a, b]`` of a database
are the one key range ``[pack(a), pack(b + 1))``. A new subtask restores its key groups from the
old handles that overlap them, one of three ways:

==========  =================================================================================
``clip``    Flink's first step: open a copy of *one* old handle as the new database and delete
            the key groups it does not own with two ``delete_range`` calls on the key-group
            prefix (no key is read; RocksDB drops the ranges' files or tombstones them)
``copy``    Flink's merge: open every other overlapping handle as a temporary (read-only)
            instance and copy the owned key range into the new database in write batches
``ingest``  the variant: write the owned key range of every overlapping handle to an SST file
            (``SstFileWriter``, keys in order) and ingest the files into the new database
==========  =================================================================================

:func:`restore_native` with ``method="clip"`` does what Flink does: clip the handle that
overlaps most, copy from the rest; ``"copy"`` and ``"ingest"`` start from an empty database.
rocksdict 0.3 has ``delete_range``, ``SstFileWriter`` and ``ingest_external_file`` (checked
here, not assumed: the tests run all three).

Example::

    >>> import tempfile
    >>> from skewlab.state.rocksdb import RocksDBKeyedStateBackend
    >>> root = tempfile.mkdtemp()
    >>> with RocksDBKeyedStateBackend(key_group_range=KeyGroupRange(0, 9)) as old:
    ...     for key in range(21):                      # identity hash, 10 key groups
    ...         old.put(key % 10, key, key)
    ...     handle = native_snapshot(old, f"{root}/subtask-0")
    >>> with RocksDBKeyedStateBackend(key_group_range=KeyGroupRange(3, 4)) as new:
    ...     io = restore_native([handle], new, "clip")
    ...     sorted(key for _, key, _ in new.items()), io.files_opened
    ([3, 4, 13, 14], 1)
"""

from __future__ import annotations

import os
import struct
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rocksdict import (
    AccessType,
    IngestExternalFileOptions,
    Options,
    Rdict,
    ReadOptions,
    SstFileWriter,
    WriteBatch,
)

from skewlab.errors import SkewlabInputError
from skewlab.state.api import KeyedStateBackend
from skewlab.state.key_groups import KeyGroupRange
from skewlab.state.restore import RestoreIO
from skewlab.state.rocksdb import RocksDBKeyedStateBackend
from skewlab.validation import check_choice

__all__ = [
    "NATIVE_METHODS",
    "RocksDBStateHandle",
    "key_group_bounds",
    "native_snapshot",
    "restore_native",
]

#: The ways a new subtask builds its database from old native handles.
NATIVE_METHODS = ("clip", "copy", "ingest")

_KEY_GROUP = struct.Struct(">H")
_END = b"\xff\xff"  # above every key: key groups stop at 32767
_BATCH = 10_000


@dataclass(frozen=True)
class RocksDBStateHandle:
    """One subtask's native RocksDB snapshot: a checkpoint directory and its key groups.

    Example::

        >>> RocksDBStateHandle("/tmp/chk", KeyGroupRange(0, 63)).key_group_range
        KeyGroupRange(start_key_group=0, end_key_group=63)
    """

    directory: str
    key_group_range: KeyGroupRange

    @property
    def size(self) -> int:
        """Bytes of the checkpoint's files."""
        return _directory_size(self.directory)

    def intersection(self, key_groups: KeyGroupRange) -> KeyGroupRange | None:
        """The key groups this handle holds of ``key_groups`` (``None`` when none)."""
        start = max(self.key_group_range.start_key_group, key_groups.start_key_group)
        end = min(self.key_group_range.end_key_group, key_groups.end_key_group)
        return KeyGroupRange(start, end) if start <= end else None


def _directory_size(directory: str | os.PathLike[str]) -> int:
    return sum(
        os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(directory)
        for name in names
    )


def key_group_bounds(key_groups: KeyGroupRange) -> tuple[bytes, bytes]:
    """The RocksDB key range ``[begin, end)`` holding exactly ``key_groups``.

    Example::

        >>> key_group_bounds(KeyGroupRange(3, 4))
        (b'\\x00\\x03', b'\\x00\\x05')
    """
    return _KEY_GROUP.pack(key_groups.start_key_group), _KEY_GROUP.pack(
        key_groups.end_key_group + 1
    )


def _storage(backend: KeyedStateBackend) -> RocksDBKeyedStateBackend:
    """The RocksDB under ``backend`` (itself, or the storage behind an LRU cache)."""
    storage = getattr(backend, "storage", backend)
    if not isinstance(storage, RocksDBKeyedStateBackend):
        raise SkewlabInputError(
            f"a native snapshot needs RocksDB state, not {type(backend).__name__}"
        )
    return storage


def native_snapshot(
    backend: KeyedStateBackend, target: str | os.PathLike[str]
) -> RocksDBStateHandle:  # noqa: E501
    """RocksDB's own checkpoint of ``backend`` into ``target`` (which must not exist), with its
    key-group range. A cache in front writes its dirty entries first."""
    if getattr(backend, "storage", None) is not None:
        backend.checkpoint()  # the LRU's dirty entries reach RocksDB
    storage = _storage(backend)
    storage.checkpoint_to(target)
    return RocksDBStateHandle(os.fspath(target), backend.key_group_range)


def _open_read_only(handle: RocksDBStateHandle) -> Rdict:
    if not os.path.isfile(os.path.join(handle.directory, "CURRENT")):
        raise SkewlabInputError(f"no RocksDB checkpoint at {handle.directory!r}")
    return Rdict(handle.directory, Options(raw_mode=True), access_type=AccessType.read_only())


def _scan(db: Rdict, key_groups: KeyGroupRange):
    """The raw ``(key, value)`` pairs of ``key_groups``, in key order. A generator, so that the
    read options (which hold the iterator's upper bound) live as long as the iteration."""
    begin, end = key_group_bounds(key_groups)
    read_options = ReadOptions()
    read_options.set_iterate_upper_bound(end)
    yield from db.items(from_key=begin, read_opt=read_options)


def _copy_range(
    source: RocksDBStateHandle, common: KeyGroupRange, target: Rdict, io: RestoreIO
) -> None:  # noqa: E501
    """Copy ``common``'s keys from a temporary instance of ``source`` into ``target``."""
    db = _open_read_only(source)
    io.files_opened += 1
    try:
        batch = WriteBatch(raw_mode=True)
        size = 0
        for raw_key, raw_value in _scan(db, common):
            batch.put(raw_key, raw_value)
            size += len(raw_key) + len(raw_value)
            io.keys_read += 1
            if len(batch) >= _BATCH:
                target.write(batch)
                batch = WriteBatch(raw_mode=True)
        if len(batch):
            target.write(batch)
        io.read(size)
    finally:
        db.close()


def _ingest_ranges(
    handles: Sequence[tuple[RocksDBStateHandle, KeyGroupRange]], target: Rdict, io: RestoreIO
) -> None:
    """Write each handle's owned range to an SST file, then ingest them all at once."""
    work = tempfile.mkdtemp(prefix="skewlab-sst-", dir=os.path.dirname(target.path()))
    files = []
    try:
        for i, (handle, common) in enumerate(handles):
            db = _open_read_only(handle)
            io.files_opened += 1
            try:
                writer = SstFileWriter(options=Options(raw_mode=True))
                path = os.path.join(work, f"range-{i}.sst")
                size = rows = 0
                for raw_key, raw_value in _scan(db, common):
                    if rows == 0:
                        writer.open(path)
                    writer[raw_key] = raw_value
                    size += len(raw_key) + len(raw_value)
                    rows += 1
                if rows:
                    writer.finish()
                    files.append(path)
                io.read(size)
                io.keys_read += rows
            finally:
                db.close()
        if files:
            target.ingest_external_file(files, IngestExternalFileOptions())
    finally:
        for path in Path(work).glob("*"):
            path.unlink()
        os.rmdir(work)


def restore_native(
    handles: Sequence[RocksDBStateHandle],
    backend: KeyedStateBackend,
    method: str = "clip",
) -> RestoreIO:
    """Restore ``backend`` (fresh, RocksDB) from the old native ``handles`` for its key groups.

    ``clip``: a copy of the most-overlapping handle becomes the database, clipped to the key
    groups with ``delete_range``; the others are copied in (Flink's way). ``copy`` / ``ingest``:
    every overlapping handle's range copied in by write batches / ingested as SST files.
    ``bytes_read`` counts the checkpoint files copied (clip) and the key and value bytes read
    from temporary instances, ``keys_read`` the keys read from them (a clipped base's keys are
    kept without being read); ``keys_kept`` is the database's entries afterwards (counted after
    the timed part). Values stay the bytes the old backend wrote: restore into a backend with
    the same serializer.
    """
    check_choice("native restore method", method, NATIVE_METHODS)
    storage = _storage(backend)
    owned = backend.key_group_range
    overlapping = [(h, c) for h in handles if (c := h.intersection(owned)) is not None]
    io = RestoreIO(f"rocksdb_{method}", 0, owned)
    began = time.perf_counter()
    if method == "clip" and overlapping:
        base, base_common = max(overlapping, key=lambda hc: len(hc[1]))
        io.files_opened += 1
        io.read(storage.reopen_from(base.directory))
        begin, end = key_group_bounds(owned)
        storage.db.delete_range(b"", begin)
        storage.db.delete_range(end, _END)
        for handle, common in overlapping:
            if handle is not base:
                _copy_range(handle, common, storage.db, io)
    elif method == "ingest":
        _ingest_ranges(overlapping, storage.db, io)
    else:
        for handle, common in overlapping:
            _copy_range(handle, common, storage.db, io)
    io.seconds = time.perf_counter() - began
    io.keys_kept = sum(1 for _ in _scan(storage.db, owned))
    return io
