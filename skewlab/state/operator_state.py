"""Operator state: per-subtask list state and how it is redistributed when the parallelism changes.

Operator state belongs to a subtask, not to a key (a Kafka source's ``(partition, offset)``
pairs, a buffer's in-flight records). Flink snapshots it as a *list* per named state -- each
element an atomic unit of redistribution (``ListCheckpointed`` / ``ListState``) -- and on restore
at a new parallelism redistributes the elements by the state's mode, as its
``RoundRobinOperatorStateRepartitioner`` does:

====================  =========================================================================
``split_distribute``  the old subtasks' lists concatenated (old subtask 0 first) and cut into
                      contiguous chunks, one per new subtask; the first ``n % p'`` get one more
``union``             every new subtask gets every element (each picks what it needs)
``broadcast``         every subtask held the same state; new subtask ``i`` gets old subtask
                      ``i % p``'s copy
====================  =========================================================================

At an unchanged parallelism every subtask keeps its own list, except union state, which is
still the union. :func:`repartition_list_state` computes the assignment; the snapshot files
(:func:`write_operator_state`, :class:`OperatorStateSnapshot`) store each subtask's elements with
their offsets, so a new subtask reads only the elements assigned to it, and per state an xxh64
checksum of its elements' bytes, checked on every read (as keyed state's blocks are, see
:mod:`skewlab.state.snapshot`).

Example::

    >>> repartition_list_state([["p0", "p3"], ["p1", "p4"], ["p2"]], 2, "split_distribute")
    [['p0', 'p3', 'p1'], ['p4', 'p2']]
    >>> repartition_list_state([["a"], ["b"]], 3, "union")
    [['a', 'b'], ['a', 'b'], ['a', 'b']]
    >>> repartition_list_state([["x"], ["x"]], 3, "broadcast")
    [['x'], ['x'], ['x']]
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import xxhash

from skewlab.errors import SkewlabInputError
from skewlab.state.metadata_file import read_metadata, write_metadata
from skewlab.validation import check_choice, check_whole

__all__ = [
    "DISTRIBUTION_MODES",
    "OPERATOR_STATE_FORMAT_VERSION",
    "OperatorStateSnapshot",
    "repartition_list_state",
    "write_operator_state",
]

#: Flink's ``OperatorStateHandle.Mode`` values, by the names used here.
DISTRIBUTION_MODES = ("split_distribute", "union", "broadcast")
#: The version of the operator-state files' format (1: no checksums).
OPERATOR_STATE_FORMAT_VERSION = 2

_KIND = "operator-state snapshot"
_LENGTH = struct.Struct(">I")

T = TypeVar("T")


def repartition_list_state(
    old: Sequence[Sequence[T]], new_parallelism: int, mode: str
) -> list[list[T]]:
    """The elements each of ``new_parallelism`` subtasks restores, from each old subtask's list.

    Example::

        >>> repartition_list_state([[1, 2, 3], [4, 5, 6, 7]], 3, "split_distribute")
        [[1, 2, 3], [4, 5], [6, 7]]
        >>> repartition_list_state([[1], [2, 3]], 2, "split_distribute")   # same p: kept
        [[1], [2, 3]]
    """
    check_choice("distribution mode", mode, DISTRIBUTION_MODES)
    check_whole("new parallelism", new_parallelism, 1)
    old_p = len(old)
    if old_p == 0:
        raise SkewlabInputError("operator state from zero subtasks cannot be repartitioned")
    if mode == "union":
        everything = [e for elements in old for e in elements]
        return [list(everything) for _ in range(new_parallelism)]
    if new_parallelism == old_p:
        return [list(elements) for elements in old]
    if mode == "broadcast":
        return [list(old[i % old_p]) for i in range(new_parallelism)]
    everything = [e for elements in old for e in elements]
    base, remainder = divmod(len(everything), new_parallelism)
    out, start = [], 0
    for i in range(new_parallelism):
        size = base + (1 if i < remainder else 0)
        out.append(everything[start : start + size])
        start += size
    return out


def write_operator_state(
    directory: str | os.PathLike[str],
    subtask: int,
    states: Mapping[str, Sequence[bytes]],
) -> dict[str, Any]:
    """Write one subtask's named list states (each element already serialised) as
    ``subtask-<i>.ops``; returns its handle (file, per state the offsets of its elements and
    the end, and per state the xxh64 of its bytes), for :meth:`OperatorStateSnapshot.create`.

    Example::

        >>> import tempfile
        >>> h = write_operator_state(tempfile.mkdtemp(), 0, {"offsets": [b"p0:17", b"p3:4"]})
        >>> h["file"], h["states"], sorted(h["checksums"])
        ('subtask-0.ops', {'offsets': [0, 9, 17]}, ['offsets'])
    """
    name = f"subtask-{int(subtask)}.ops"
    offsets: dict[str, list[int]] = {}
    checksums: dict[str, int] = {}
    position = 0
    with open(Path(directory) / name, "wb") as out:
        for state, elements in states.items():
            marks = []
            digest = xxhash.xxh64()
            for element in elements:
                marks.append(position)
                record = _LENGTH.pack(len(element)) + element
                out.write(record)
                digest.update(record)
                position += len(record)
            offsets[state] = [*marks, position]
            checksums[state] = digest.intdigest()
        out.flush()
        os.fsync(out.fileno())
    return {"file": name, "states": offsets, "checksums": checksums}


@dataclass(frozen=True)
class OperatorStateSnapshot:
    """One operator's list states: per subtask a file of elements, and a metadata file naming
    each state's distribution mode and serializer.

    Example::

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> h0 = write_operator_state(d, 0, {"offsets": [b"p0", b"p2"]})
        >>> h1 = write_operator_state(d, 1, {"offsets": [b"p1"]})
        >>> s = OperatorStateSnapshot.create(d, {"offsets": "split_distribute"}, [h0, h1])
        >>> [OperatorStateSnapshot.load(d).restore(3, i)["offsets"] for i in range(3)]
        [[b'p0'], [b'p2'], [b'p1']]
    """

    directory: Path
    modes: dict[str, str]
    handles: tuple[dict[str, Any], ...]

    @property
    def parallelism(self) -> int:
        """Subtasks that wrote the snapshot."""
        return len(self.handles)

    @classmethod
    def create(
        cls,
        directory: str | os.PathLike[str],
        modes: Mapping[str, str],
        handles: Sequence[dict[str, Any]],
    ) -> OperatorStateSnapshot:
        """Write the metadata (last) for ``handles`` in subtask order."""
        for state, mode in modes.items():
            check_choice(f"distribution mode of {state!r}", mode, DISTRIBUTION_MODES)
        snapshot = cls(Path(directory), dict(modes), tuple(handles))
        data = {
            "kind": _KIND,
            "format_version": OPERATOR_STATE_FORMAT_VERSION,
            "modes": snapshot.modes,
            "handles": list(snapshot.handles),
        }
        write_metadata(snapshot.directory, data)
        return snapshot

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> OperatorStateSnapshot:
        """Read and check the metadata and the files' lengths; a damaged snapshot is refused."""
        directory = Path(directory)
        where = f"operator-state snapshot {directory}"
        data = read_metadata(
            directory, kind=_KIND, version=OPERATOR_STATE_FORMAT_VERSION, where=where
        )
        data_handles = data.get("handles")
        if isinstance(data_handles, list):
            for i, handle in enumerate(data_handles):
                sums = handle.get("checksums") if isinstance(handle, dict) else None
                if not isinstance(sums, dict) or set(sums) != set(data.get("modes") or {}):
                    raise SkewlabInputError(f"{where}: handle {i} has no checksum per state")
        modes, handles = data.get("modes"), data.get("handles")
        if not isinstance(modes, dict) or not isinstance(handles, list) or not handles:
            raise SkewlabInputError(f"{where}: its metadata has no modes or no handles")
        for i, handle in enumerate(handles):
            file = handle.get("file") if isinstance(handle, dict) else None
            if not isinstance(file, str) or "/" in file or not (directory / file).is_file():
                raise SkewlabInputError(f"{where}: handle {i} names no file of the snapshot")
            states = handle.get("states")
            if not isinstance(states, dict) or set(states) != set(modes):
                raise SkewlabInputError(f"{where}: handle {i} does not list every state")
            ends = [offsets[-1] for offsets in states.values() if offsets]
            size = (directory / file).stat().st_size
            if max(ends, default=0) != size:
                raise SkewlabInputError(
                    f"{where}: {file} is {size} bytes, its offsets say {max(ends, default=0)}"
                )
        return cls(directory, dict(modes), tuple(handles))

    def elements(self, subtask: int, state: str) -> list[bytes]:
        """Old subtask ``subtask``'s elements of ``state``, read from its file (their checksum
        checked first)."""
        handle = self.handles[subtask]
        offsets = handle["states"][state]
        with open(self.directory / handle["file"], "rb") as f:
            f.seek(offsets[0])
            data = f.read(offsets[-1] - offsets[0])
        computed, recorded = xxhash.xxh64_intdigest(data), handle["checksums"][state]
        if computed != recorded:
            raise SkewlabInputError(
                f"operator-state file {handle['file']}: state {state!r}: its {len(data)} bytes "
                f"hash to {computed:#018x}, the metadata's checksum is {recorded:#018x} (a "
                "damaged, truncated or swapped file)"
            )
        out, base = [], offsets[0]
        for start, end in zip(offsets, offsets[1:], strict=False):
            (length,) = _LENGTH.unpack_from(data, start - base)
            if _LENGTH.size + length != end - start:
                raise SkewlabInputError(
                    f"operator-state file {handle['file']}: an element's length disagrees with "
                    "its offsets"
                )
            out.append(data[start - base + _LENGTH.size : end - base])
        return out

    def verify(self) -> None:
        """Read every subtask's elements of every state (each state's checksum checked), or
        refuse the snapshot in one line naming its directory."""
        for subtask in range(self.parallelism):
            for state in self.modes:
                try:
                    self.elements(subtask, state)
                except SkewlabInputError as err:
                    raise SkewlabInputError(
                        f"operator-state snapshot {self.directory}: {err}"
                    ) from None

    def restore(self, new_parallelism: int, subtask: int) -> dict[str, list[bytes]]:
        """What new subtask ``subtask`` of ``new_parallelism`` restores, per named state."""
        check_whole("subtask", subtask, 0, new_parallelism - 1)
        out = {}
        for state, mode in self.modes.items():
            old = [self.elements(i, state) for i in range(self.parallelism)]
            out[state] = repartition_list_state(old, new_parallelism, mode)[subtask]
        return out
