"""The RocksDB backend: real RocksDB (through rocksdict), as Flink's EmbeddedRocksDBStateBackend.

Every ``get`` is a RocksDB point read plus deserialisation, every ``put`` a serialisation plus
a RocksDB write -- the per-record cost the seeds measure. The database lives in a fresh
directory ``skewlab-rocksdb-*`` under ``local_dir`` (default: the first entry of
``SPARK_LOCAL_DIRS``, else the system temp dir) and is removed by :meth:`close`. As in Flink,
the write-ahead log is off: a checkpoint (:meth:`~RocksDBKeyedStateBackend.checkpoint`), not
the WAL, makes state durable -- RocksDB's own checkpoint, which flushes the memtable to an SST file
and hard-links the database's files into a checkpoint directory, as Flink's incremental
checkpoint of RocksDB does.

Keys are laid out as Flink lays them out -- key group first::

    key_group (2 bytes, big-endian) | tag | key bytes
    int key: tag 0x01 + 8-byte big-endian signed (a Java long)
    str key: tag 0x02 + UTF-8

so the entries of one key group are one contiguous range, which :meth:`items` scans.

Example::

    >>> from skewlab.state.rocksdb import RocksDBKeyedStateBackend
    >>> with RocksDBKeyedStateBackend() as backend:
    ...     backend.put(5, "tweet-9", {"views": 3})
    ...     backend.get(5, "tweet-9"), backend.stats.reads, backend.stats.writes
    ({'views': 3}, 1, 1)
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any

from rocksdict import AccessType, Checkpoint, Options, Rdict, ReadOptions, WriteBatch, WriteOptions

from skewlab.errors import SkewlabInputError
from skewlab.state.api import Key, KeyedStateBackend, PickleSerializer, Serializer
from skewlab.state.key_groups import KeyGroupRange
from skewlab.state.value_state import CallbackValueState, ValueStateCore

__all__ = [
    "RocksDBKeyedStateBackend",
    "decode_key",
    "default_local_dir",
    "encode_key",
    "read_checkpoint",
]

INT_TAG = 0x01
STR_TAG = 0x02

_KEY_GROUP = struct.Struct(">H")
_RESTORE_BATCH = 10_000  # entries per write batch of a restore
_INT_KEY = struct.Struct(">HBq")  # key group, tag, Java long
_pack_int_key = _INT_KEY.pack
_unpack_long = struct.Struct(">q").unpack_from
_first = itemgetter(0)


class _StrPrefixes(dict):
    """``key_group -> key_group bytes + STR_TAG``, filled on first use of each key group."""

    def __missing__(self, key_group: int) -> bytes:
        prefix = self[key_group] = _KEY_GROUP.pack(key_group) + bytes((STR_TAG,))
        return prefix


_STR_PREFIXES = _StrPrefixes()


def encode_key(key_group: int, key: Key) -> bytes:
    """The RocksDB key of ``(key_group, key)``.

    Example::

        >>> encode_key(1, "ab")
        b'\\x00\\x01\\x02ab'
        >>> encode_key(1, -1)
        b'\\x00\\x01\\x01\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff'
    """
    if type(key) is str:
        return _STR_PREFIXES[key_group] + key.encode()
    return _pack_int_key(key_group, INT_TAG, key)


def decode_key(raw: bytes) -> tuple[int, Key]:
    """Inverse of :func:`encode_key`: ``(key_group, key)``.

    Example::

        >>> decode_key(encode_key(300, "tweet-1")), decode_key(encode_key(0, -5))
        ((300, 'tweet-1'), (0, -5))
    """
    key_group = (raw[0] << 8) | raw[1]
    if raw[2] == STR_TAG:
        return key_group, raw[3:].decode()
    return key_group, _unpack_long(raw, 3)[0]


def default_local_dir() -> str | None:
    """Where RocksDB files go by default: the first ``SPARK_LOCAL_DIRS`` entry, else ``None``.

    ``None`` means the system temp directory (:func:`tempfile.gettempdir`).

    Example::

        >>> import os
        >>> os.environ["SPARK_LOCAL_DIRS"] = "/tmp/a,/tmp/b"
        >>> default_local_dir()
        '/tmp/a'
        >>> del os.environ["SPARK_LOCAL_DIRS"]
    """
    entries = [d.strip() for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",")]
    entries = [d for d in entries if d]
    return entries[0] if entries else None


def read_checkpoint(
    path: str | os.PathLike[str], serializer: Serializer | None = None
) -> list[tuple[int, Key, Any]]:
    """Every ``(key_group, key, value)`` in a checkpoint directory that
    :meth:`RocksDBKeyedStateBackend.checkpoint` wrote, read through a read-only RocksDB.

    Example::

        >>> with RocksDBKeyedStateBackend() as backend:
        ...     backend.put(0, 7, "seven"); backend.checkpoint()
        ...     read_checkpoint(backend.last_checkpoint)
        [(0, 7, 'seven')]
    """
    if path is None or not os.path.isfile(os.path.join(path, "CURRENT")):
        raise SkewlabInputError(
            f"no RocksDB checkpoint at {path!r}: give the directory a checkpoint wrote "
            "(RocksDBKeyedStateBackend.last_checkpoint)"
        )
    loads = (serializer if serializer is not None else PickleSerializer()).loads
    db = Rdict(os.fspath(path), Options(raw_mode=True), access_type=AccessType.read_only())
    try:
        return [(*decode_key(raw_key), loads(raw_value)) for raw_key, raw_value in db.items()]
    finally:
        db.close()


class RocksDBKeyedStateBackend(KeyedStateBackend):
    """Keyed state in an embedded RocksDB, values serialised (pickle protocol 5 by default).

    Int keys must fit in a signed 64-bit Java long; key groups must be below 65536.

    Example::

        >>> import os
        >>> backend = RocksDBKeyedStateBackend()
        >>> backend.put(0, 1, "one")
        >>> path = backend.path
        >>> backend.close(); os.path.exists(path)
        False
    """

    name = "rocksdb"
    on_disk = True

    def __init__(
        self,
        *,
        serializer: Serializer | None = None,
        local_dir: str | os.PathLike[str] | None = None,
        key_group_range: KeyGroupRange | None = None,
        track_keys: bool = False,
    ) -> None:
        super().__init__(key_group_range=key_group_range, track_keys=track_keys)
        self.serializer = serializer if serializer is not None else PickleSerializer()
        if local_dir is None:
            local_dir = default_local_dir()
        if local_dir is not None:
            os.makedirs(local_dir, exist_ok=True)
        self.path = tempfile.mkdtemp(prefix="skewlab-rocksdb-", dir=local_dir)
        self._checkpoints_dir: str | None = None
        self._write_options = WriteOptions()
        self._write_options.disable_wal = True  # a property at runtime (the .pyi says method)
        try:
            self._open()
        except BaseException:
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        self._dumps = self.serializer.dumps
        self._loads = self.serializer.loads
        self._str_prefixes = _STR_PREFIXES

    def _open(self) -> None:
        """Open (or create) the database at :attr:`path` and bind its hot-path methods."""
        options = Options(raw_mode=True)
        options.create_if_missing(True)
        self._db = Rdict(self.path, options)
        self._db.set_write_options(self._write_options)
        # bound once: the hot path does no attribute chains
        self._db_get = self._db.get
        self._db_put = self._db.put
        self._db_delete = self._db.delete

    def reopen_from(self, checkpoint_dir: str | os.PathLike[str]) -> int:
        """Replace this (fresh) backend's database with a copy of a RocksDB checkpoint --
        how Flink restores a RocksDB state handle: download its files, open them as the
        database. Returns the bytes copied.

        Example::

            >>> with RocksDBKeyedStateBackend() as old, RocksDBKeyedStateBackend() as new:
            ...     old.put(1, "a", 7); old.checkpoint()
            ...     _ = new.reopen_from(old.last_checkpoint); new.get(1, "a")
            7
        """
        if not os.path.isfile(os.path.join(checkpoint_dir, "CURRENT")):
            raise SkewlabInputError(f"no RocksDB checkpoint at {os.fspath(checkpoint_dir)!r}")
        self._db.close()
        shutil.rmtree(self.path, ignore_errors=True)
        shutil.copytree(checkpoint_dir, self.path)
        copied = sum(
            os.path.getsize(os.path.join(root, name))
            for root, _, names in os.walk(self.path)
            for name in names
        )
        self._open()
        return copied

    def checkpoint_to(self, target: str | os.PathLike[str]) -> None:
        """RocksDB's own checkpoint into ``target`` (a directory that must not exist yet): the
        memtable flushed, the files hard-linked (copied across file systems)."""
        Checkpoint(self._db).create_checkpoint(os.fspath(target))

    @property
    def db(self) -> Rdict:
        """The open RocksDB (raw bytes keys and values), for range operations."""
        return self._db

    def _create_value_state(self) -> ValueStateCore:
        """RocksDB's point reads and writes (:meth:`_get`, :meth:`_put`, :meth:`_delete`)."""
        return CallbackValueState(self._get, self._put, self._delete)

    # The storage accesses. The key encoding of encode_key() is inlined: one call less each.

    def _get(self, key_group: int, key: Key) -> Any | None:
        if type(key) is str:
            raw = self._db_get(self._str_prefixes[key_group] + key.encode())
        else:
            raw = self._db_get(_pack_int_key(key_group, INT_TAG, key))
        self._reads += 1
        if raw is None:
            return None
        self._bytes_deserialized += len(raw)
        return self._loads(raw)

    def _put(self, key_group: int, key: Key, value: Any) -> None:
        data = self._dumps(value)
        if type(key) is str:
            self._db_put(self._str_prefixes[key_group] + key.encode(), data)
        else:
            self._db_put(_pack_int_key(key_group, INT_TAG, key), data)
        self._writes += 1
        self._bytes_serialized += len(data)

    def _delete(self, key_group: int, key: Key) -> None:
        if type(key) is str:
            self._db_delete(self._str_prefixes[key_group] + key.encode())
        else:
            self._db_delete(_pack_int_key(key_group, INT_TAG, key))
        self._deletes += 1

    def checkpoint(self) -> None:
        """RocksDB's own checkpoint, into a fresh directory ``chk-<n>``.

        RocksDB flushes the memtable to an SST file (with the write-ahead log off, the
        memtable is the only copy of the latest writes) and hard-links the database's files
        into the directory, as Flink's incremental RocksDB checkpoint does. Only the latest
        checkpoint is kept (Flink's default ``state.checkpoints.num-retained: 1``); its path is
        :attr:`last_checkpoint`, and :func:`read_checkpoint` reads it back.

        Example::

            >>> with RocksDBKeyedStateBackend() as backend:
            ...     backend.put(3, "a", 1); backend.checkpoint(); backend.put(3, "a", 2)
            ...     sorted(read_checkpoint(backend.last_checkpoint)), backend.get(3, "a")
            ([(3, 'a', 1)], 2)
        """
        if self._checkpoints_dir is None:
            self._checkpoints_dir = tempfile.mkdtemp(
                prefix="skewlab-checkpoints-", dir=os.path.dirname(self.path)
            )
        previous = self.last_checkpoint
        target = os.path.join(self._checkpoints_dir, f"chk-{self._checkpoints + 1}")
        Checkpoint(self._db).create_checkpoint(target)
        self.last_checkpoint = target
        super().checkpoint()
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)

    def put_all(self, entries: Iterable[tuple[int, Key, Any]]) -> None:
        """Write every ``(key_group, key, value)`` in one RocksDB write batch (WAL off), in
        RocksDB's key order: the memtable's skip list takes the inserts one after the other
        along its order, not scattered over it.

        Example::

            >>> with RocksDBKeyedStateBackend() as backend:
            ...     backend.put_all([(1, "b", 2), (0, "a", 1)])
            ...     sorted(backend.items([0, 1])), backend.stats.writes
            ([(0, 'a', 1), (1, 'b', 2)], 2)
        """
        dumps = self._dumps
        writes_per_key = self._writes_per_key
        encoded = []
        for key_group, key, value in entries:
            encoded.append((encode_key(key_group, key), value))
            if writes_per_key is not None:
                writes_per_key[key] = writes_per_key.get(key, 0) + 1
        if not encoded:
            return
        encoded.sort(key=_first)
        batch = WriteBatch(raw_mode=True)
        size = 0
        for raw_key, value in encoded:
            data = dumps(value)
            batch.put(raw_key, data)
            size += len(data)
        self._db.write(batch, self._write_options)
        self._writes += len(encoded)
        self._bytes_serialized += size

    def restore(self, entries: Iterable[tuple[int, Key, Any]]) -> int:
        """Write restored entries in write batches (WAL off); not counted as state writes.

        Example::

            >>> with RocksDBKeyedStateBackend(key_group_range=KeyGroupRange(0, 1)) as backend:
            ...     backend.restore([(0, "a", 1), (1, "b", 2)]), sorted(backend.items())
            (2, [(0, 'a', 1), (1, 'b', 2)])
        """
        dumps = self._dumps
        batch = WriteBatch(raw_mode=True)
        count = 0
        for key_group, key, value in self._owned(entries):
            batch.put(encode_key(key_group, key), dumps(value))
            count += 1
            if count % _RESTORE_BATCH == 0:
                self._db.write(batch, self._write_options)
                batch = WriteBatch(raw_mode=True)
        if len(batch):
            self._db.write(batch, self._write_options)
        return count

    def _scan_key_group(self, key_group: int) -> list[tuple[bytes, bytes]]:
        """All raw ``(rocksdb key, value bytes)`` of one key group: a bounded range scan.

        Materialised as a list, so no RocksDB iterator outlives the call (or the database).
        """
        read_options = ReadOptions()
        if key_group < 0xFFFF:
            read_options.set_iterate_upper_bound(_KEY_GROUP.pack(key_group + 1))
        return list(self._db.items(from_key=_KEY_GROUP.pack(key_group), read_opt=read_options))

    def items(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[int, Key, Any]]:
        loads = self._loads
        for key_group in self.key_group_range if key_groups is None else key_groups:
            for raw_key, raw_value in self._scan_key_group(key_group):
                self._bytes_deserialized += len(raw_value)
                yield key_group, decode_key(raw_key)[1], loads(raw_value)

    def close(self) -> None:
        """Close RocksDB and delete its directory. Closing twice is harmless."""
        if self._closed:
            return
        try:
            self._db.close()
        finally:
            shutil.rmtree(self.path, ignore_errors=True)
            if self._checkpoints_dir is not None:
                shutil.rmtree(self._checkpoints_dir, ignore_errors=True)
            self.last_checkpoint = None
            super().close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self.path!r}, track_keys={self.track_keys})"
