"""A savepoint: every stateful operator's state at one source position, in one directory.

::

    <savepoint>/
      _metadata                        format version, max parallelism, parallelism, the source
                                       position (the next seq to read), the operators
      <operator>/keyed-<name>/         a keyed-state snapshot (:mod:`skewlab.state.snapshot`)
      <operator>/operator-state/       list state (:mod:`skewlab.state.operator_state`)
      <operator>/subtask-<i>.manifest  what subtask i wrote (read when publishing, then
                                       removed: every file a savepoint keeps is checked)

A savepoint is written in a temporary directory beside its target
(``.<name>.inprogress-<id>``): each subtask writes its files and, last, its manifest; when the
job has succeeded, the driver checks that every subtask of every operator reported, writes each
snapshot's metadata and the savepoint's ``_metadata``, and renames the directory to its target
(:func:`publish_savepoint`) -- so a directory with ``_metadata`` is a whole savepoint, and a
half-written one is never taken for a whole one. The in-progress directory records its writer
(pid and host, ``_writer``); a job killed mid-savepoint (``kill -9``) leaves it behind, and the
next savepoint to the same target removes it, saying so in one line
(:func:`interrupted_savepoints`). :meth:`Savepoint.load` refuses a damaged or
foreign savepoint whole, before any work: a path that is a file, empty or incomplete,
metadata missing, truncated, edited (each ``_metadata`` carries its checksum) or of an unknown
or older version, another max parallelism, a state file shorter or longer than its offsets, and
(with ``verify``, which reads every file) a key-group block or an operator state whose checksum
differs, a key stored in a key group its place does not own or that hashes to another, a value
that does not decode.

Files live on a file system every executor reaches (one machine here; a cluster needs a shared
one, as Flink's savepoint directory is on a distributed file system).

Example::

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "savepoint-1"
    >>> work = begin_savepoint(target)
    >>> work.name.startswith(".savepoint-1.inprogress-")
    True
    >>> operator_directory("1:naive")
    '1-naive'
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.state.key_groups import UPPER_BOUND_MAX_PARALLELISM
from skewlab.state.metadata_file import read_metadata, write_metadata
from skewlab.state.operator_state import OperatorStateSnapshot
from skewlab.state.snapshot import KeyedStateSnapshot, KeyGroupsStateHandle

__all__ = [
    "SAVEPOINT_FORMAT_VERSION",
    "OperatorSavepoint",
    "Savepoint",
    "begin_savepoint",
    "discard_savepoint",
    "interrupted_savepoints",
    "operator_directory",
    "publish_savepoint",
]

#: The version of the savepoint layout; another is refused (1: before checksums).
SAVEPOINT_FORMAT_VERSION = 2
#: How to replace a savepoint of an older format (said when one is refused).
RECREATE = (
    "re-create it: run the job again with 'skewlab run STRATEGY --savepoint-at N --savepoint PATH'"
)
_KIND = "savepoint"
_MANIFEST = re.compile(r"^subtask-(\d+)\.manifest$")
_WRITER = "_writer"  # who began an in-progress savepoint: pid and host
OPERATOR_STATE = "operator-state"


def operator_directory(operator_id: str) -> str:
    """The directory name of an operator's state (its id with ``:`` and ``/`` made safe).

    Example::

        >>> operator_directory("2:salted-final")
        '2-salted-final'
    """
    return re.sub(r"[^A-Za-z0-9_.-]", "-", operator_id)


def _writer_alive(work: Path) -> tuple[bool | None, str]:
    """Whether the process that began in-progress savepoint ``work`` still runs (``None``: it
    cannot be told, another host's), and how to name it."""
    try:
        writer = json.loads((work / _WRITER).read_text(encoding="utf-8"))
        pid, host = int(writer["pid"]), str(writer["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return False, "a writer that left no record"
    if host != socket.gethostname():
        return None, f"process {pid} on {host}"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False, f"process {pid}, gone"
    except PermissionError:
        pass
    return True, f"process {pid}, still running"


def interrupted_savepoints(target: str | os.PathLike[str]) -> list[tuple[Path, bool | None, str]]:
    """The in-progress directories of savepoints to ``target`` left beside it, each with
    whether its writer still runs (``None``: cannot be told) and how to name it.

    Example::

        >>> interrupted_savepoints("/nonexistent/savepoint-1")
        []
    """
    target = Path(target)
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.inprogress-[0-9a-f]{{12}}$")
    if not target.parent.is_dir():
        return []
    found = sorted(p for p in target.parent.iterdir() if pattern.match(p.name) and p.is_dir())
    return [(p, *_writer_alive(p)) for p in found]


def begin_savepoint(target: str | os.PathLike[str]) -> Path:
    """Make the in-progress directory of a savepoint that will be published at ``target``
    (beside it, so that the final rename stays on one file system). ``target`` must not exist.

    An interrupted savepoint to the same target (a killed job's ``.<name>.inprogress-<id>``)
    whose writer is gone is removed, with one line on stderr naming it; one whose writer still
    runs is refused (two savepoints to one target would race), one from another host is named
    and left alone.
    """
    target = Path(target)
    if target.exists():
        raise SkewlabInputError(f"savepoint target {target} already exists: choose a new path")
    for leftover, alive, writer in interrupted_savepoints(target):
        if alive:
            raise SkewlabInputError(
                f"savepoint target {target} is being written by {writer} ({leftover.name}): "
                "wait for it to end or choose another path"
            )
        if alive is None:
            print(
                f"skewlab: left {leftover} alone: an unfinished savepoint to the same target "
                f"by {writer}",
                file=sys.stderr,
            )
            continue
        shutil.rmtree(leftover)
        print(
            f"skewlab: removed {leftover}, an interrupted savepoint to the same target "
            f"({writer}); it was never published",
            file=sys.stderr,
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    work = target.parent / f".{target.name}.inprogress-{uuid.uuid4().hex[:12]}"
    work.mkdir()
    record = {"pid": os.getpid(), "host": socket.gethostname(), "target": str(target)}
    (work / _WRITER).write_text(json.dumps(record), encoding="utf-8")
    return work


@dataclass(frozen=True)
class OperatorSavepoint:
    """One operator's part of a savepoint: its keyed states by name, its operator state."""

    operator_id: str
    keyed: dict[str, KeyedStateSnapshot] = field(default_factory=dict)
    operator_state: OperatorStateSnapshot | None = None

    @property
    def entries(self) -> int:
        """Keyed entries over every keyed state."""
        return sum(s.entries for s in self.keyed.values())


@dataclass(frozen=True)
class Savepoint:
    """A published savepoint (see the module doc)."""

    path: Path
    max_parallelism: int
    parallelism: int
    source_position: int
    operators: dict[str, OperatorSavepoint]
    job: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        max_parallelism: int | None = None,
        verify: bool = False,
        serializers: tuple[Any, ...] = (),
    ) -> Savepoint:
        """Read and check a savepoint; refuse a damaged or foreign one whole (one line).

        ``max_parallelism``: the restoring job's (another is refused). ``verify``: read every
        state file and check every entry, decoding values with pickle or one of
        ``serializers`` (the strategies know their value types:
        ``skewlab.strategies.resume.verify_savepoint`` passes them).
        """
        path = Path(path)
        where = f"savepoint {path}"
        if ".inprogress-" in path.name:
            raise SkewlabInputError(f"{where} is an in-progress savepoint, never published")
        if path.is_dir() and not any(path.iterdir()):
            raise SkewlabInputError(f"{where} is empty")
        data = read_metadata(
            path, kind=_KIND, version=SAVEPOINT_FORMAT_VERSION, where=where, recreate=RECREATE
        )
        numbers = {}
        for name, low in (("max_parallelism", 1), ("parallelism", 1), ("source_position", 0)):
            value = data.get(name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise SkewlabInputError(f"{where}: {name} {value!r} is not valid")
            numbers[name] = value
        max_p = numbers["max_parallelism"]
        if max_p > UPPER_BOUND_MAX_PARALLELISM or numbers["parallelism"] > max_p:
            raise SkewlabInputError(f"{where}: parallelism or max parallelism out of bounds")
        if max_parallelism is not None and max_parallelism != max_p:
            raise SkewlabInputError(
                f"{where} was taken with max parallelism {max_p}; this job has "
                f"{max_parallelism} (key groups are fixed for a job's lifetime: restore with the "
                "same max parallelism)"
            )
        operators_meta = data.get("operators")
        if not isinstance(operators_meta, dict) or not operators_meta:
            raise SkewlabInputError(f"{where}: its metadata names no operators")
        operators = {}
        for operator_id, info in operators_meta.items():
            if not isinstance(info, dict) or not isinstance(info.get("keyed_states"), list):
                raise SkewlabInputError(f"{where}: operator {operator_id!r} is malformed")
            base = path / operator_directory(operator_id)
            keyed = {
                name: KeyedStateSnapshot.load(
                    base / f"keyed-{name}",
                    max_parallelism=max_p,
                    verify=verify,
                    serializers=serializers,
                )
                for name in info["keyed_states"]
            }
            for name, snapshot in keyed.items():
                if snapshot.parallelism != numbers["parallelism"]:
                    raise SkewlabInputError(
                        f"{where}: keyed state {name!r} of {operator_id!r} has "
                        f"{snapshot.parallelism} subtasks' files, the savepoint {numbers['parallelism']}"  # noqa: E501
                    )
            state = None
            if info.get("operator_state"):
                state = OperatorStateSnapshot.load(base / OPERATOR_STATE)
                if verify:
                    state.verify()
            operators[operator_id] = OperatorSavepoint(operator_id, keyed, state)
        job = data.get("job") if isinstance(data.get("job"), dict) else {}
        return cls(path, max_p, numbers["parallelism"], numbers["source_position"], operators, job)

    @property
    def entries(self) -> int:
        """Keyed entries over every operator."""
        return sum(o.entries for o in self.operators.values())

    def summary(self) -> dict[str, Any]:
        """What a user wants to know of a savepoint, as a dict.

        Example::

            >>> Savepoint.load("data/savepoints/sp-1").summary()  # doctest: +SKIP
            {'path': ..., 'max_parallelism': 128, 'parallelism': 2, 'source_position': 1000, ...}
        """
        return {
            "path": str(self.path),
            "max_parallelism": self.max_parallelism,
            "parallelism": self.parallelism,
            "source_position": self.source_position,
            "job": self.job,
            "operators": {
                op: {
                    "keyed_states": {n: s.entries for n, s in o.keyed.items()},
                    "state_bytes": sum(s.state_bytes for s in o.keyed.values()),
                    "operator_state": None
                    if o.operator_state is None
                    else sorted(o.operator_state.modes),
                }
                for op, o in self.operators.items()
            },
        }


def _read_manifests(directory: Path) -> dict[int, dict[str, Any]]:
    out = {}
    for path in directory.iterdir():
        match = _MANIFEST.match(path.name)
        if match:
            out[int(match.group(1))] = json.loads(path.read_text(encoding="utf-8"))
    return out


def publish_savepoint(
    work: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    max_parallelism: int,
    parallelism: int,
    source_position: int,
    job: dict[str, Any] | None = None,
) -> Savepoint:
    """Publish the in-progress savepoint ``work`` at ``target`` once every subtask of every
    operator has written its manifest: each snapshot's metadata, the savepoint's ``_metadata``,
    then one rename. An incomplete one is refused (and left where it is). ``job`` records what
    took it (the strategy), for the restoring job to check."""
    work, target = Path(work), Path(target)
    if target.exists():
        raise SkewlabInputError(f"savepoint target {target} already exists")
    operators: dict[str, Any] = {}
    for directory in sorted(p for p in work.iterdir() if p.is_dir()):
        manifests = _read_manifests(directory)
        if sorted(manifests) != list(range(parallelism)):
            raise RuntimeError(
                f"savepoint incomplete: {directory.name} has manifests of subtasks "
                f"{sorted(manifests)}, expected 0..{parallelism - 1}"
            )
        first = manifests[0]
        operator_id = first["operator"]
        keyed_names = sorted(first.get("keyed", {}))
        for name in keyed_names:
            handles = [
                KeyGroupsStateHandle.from_dict(manifests[i]["keyed"][name]["handle"], name)
                for i in range(parallelism)
            ]
            KeyedStateSnapshot.create(
                directory / f"keyed-{name}",
                max_parallelism,
                first["keyed"][name]["serializer"],
                handles,
            )
        has_operator_state = bool(first.get("operator_state"))
        if has_operator_state:
            OperatorStateSnapshot.create(
                directory / OPERATOR_STATE,
                first["operator_state"]["modes"],
                [manifests[i]["operator_state"]["handle"] for i in range(parallelism)],
            )
        operators[operator_id] = {
            "keyed_states": keyed_names,
            "operator_state": has_operator_state,
        }
    if not operators:
        raise RuntimeError(f"savepoint {work} holds no operator's state")
    write_metadata(
        work,
        {
            "kind": _KIND,
            "format_version": SAVEPOINT_FORMAT_VERSION,
            "max_parallelism": max_parallelism,
            "parallelism": parallelism,
            "source_position": source_position,
            "operators": operators,
            "job": job or {},
        },
    )
    (work / _WRITER).unlink(missing_ok=True)
    for directory in work.iterdir():  # what each subtask wrote is in the metadata now
        if directory.is_dir():
            for manifest in directory.iterdir():
                if _MANIFEST.match(manifest.name):
                    manifest.unlink()
    os.rename(work, target)
    return Savepoint.load(target, max_parallelism=max_parallelism)


def discard_savepoint(work: str | os.PathLike[str]) -> None:
    """Remove an in-progress savepoint that will not be published (a failed job's)."""
    shutil.rmtree(work, ignore_errors=True)
