"""The ``_metadata`` file of a snapshot directory: written atomically, read back checked.

Keyed-state snapshots, operator-state snapshots and savepoints each end with a small JSON file
naming what they are (``kind``) and the version of their format. It is written last, to a
temporary name, flushed to disk and renamed into place, so that a directory with ``_metadata``
holds every file it names. It carries its own checksum (``checksum``: xxh64 of the rest of the
JSON in canonical form, sorted keys, no spaces), so a flipped bit in any field is refused, not
read as another offset or count. Reading refuses, in one line, a directory that is a file,
missing, has no metadata, truncated or foreign metadata, an unknown or older format version,
or a checksum that does not match.

Example::

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_metadata(d, {"kind": "demo", "format_version": 1, "n": 3})
    >>> read_metadata(d, kind="demo", version=1, where="demo snapshot")["n"]
    3
    >>> read_metadata(d, kind="demo", version=2, where="demo snapshot")
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: demo snapshot: format version 1 is older than this skewlab's 2 (files without checksums are not read); re-create it with this skewlab
"""  # noqa: E501

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import xxhash

from skewlab.errors import SkewlabInputError

__all__ = [
    "METADATA_FILE",
    "metadata_checksum",
    "read_metadata",
    "write_json_atomically",
    "write_metadata",
]

#: The metadata file of a snapshot directory (Flink's is ``_metadata`` too).
METADATA_FILE = "_metadata"
#: The field that holds the metadata's own checksum.
CHECKSUM_FIELD = "checksum"


def metadata_checksum(data: dict[str, Any]) -> str:
    """``xxh64:<16 hex digits>`` of ``data`` (its checksum field left out) as canonical JSON.

    Example::

        >>> metadata_checksum({"kind": "demo", "n": 3})
        'xxh64:...'
        >>> metadata_checksum({"n": 3, "kind": "demo"}) == metadata_checksum({"kind": "demo", "n": 3})
        True
    """  # noqa: E501
    body = {k: v for k, v in data.items() if k != CHECKSUM_FIELD}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"xxh64:{xxhash.xxh64_hexdigest(canonical.encode())}"


def write_json_atomically(path: str | os.PathLike[str], data: Any) -> None:
    """Write ``data`` as JSON to a temporary name, flush it to disk, rename it into place.

    Example::

        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.json"; write_json_atomically(p, {"a": 1})
        >>> json.loads(p.read_text())
        {'a': 1}
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def write_metadata(directory: str | os.PathLike[str], data: dict[str, Any]) -> None:
    """Write ``directory/_metadata`` atomically (last, after every file it names), with its
    checksum (:func:`metadata_checksum`)."""
    body = {k: v for k, v in data.items() if k != CHECKSUM_FIELD}
    write_json_atomically(
        Path(directory) / METADATA_FILE, {**body, CHECKSUM_FIELD: metadata_checksum(body)}
    )


def read_metadata(
    directory: str | os.PathLike[str],
    *,
    kind: str,
    version: int,
    where: str,
    recreate: str = "re-create it with this skewlab",
) -> dict[str, Any]:
    """The checked contents of ``directory/_metadata``; ``where`` names the directory in the
    one-line error, ``recreate`` says how to make a new one when the format is older."""
    directory = Path(directory)
    if directory.is_file():
        raise SkewlabInputError(f"{where} is a file, not a directory")
    if not directory.is_dir():
        raise SkewlabInputError(f"{where} does not exist")
    meta = directory / METADATA_FILE
    if not meta.is_file():
        raise SkewlabInputError(
            f"{where} has no {METADATA_FILE} file (empty, incomplete, or not one)"
        )
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise SkewlabInputError(f"{where}: {METADATA_FILE} is truncated or not JSON") from None
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise SkewlabInputError(f"{where}: {METADATA_FILE} is not a {kind}'s")
    found = data.get("format_version")
    if isinstance(found, int) and not isinstance(found, bool) and 1 <= found < version:
        raise SkewlabInputError(
            f"{where}: format version {found} is older than this skewlab's {version} (files "
            f"without checksums are not read); {recreate}"
        )
    if found != version:
        raise SkewlabInputError(
            f"{where}: format version {found!r} is unknown; this skewlab reads version {version}"
        )
    recorded, computed = data.get(CHECKSUM_FIELD), metadata_checksum(data)
    if recorded != computed:
        raise SkewlabInputError(
            f"{where}: {METADATA_FILE} does not match its checksum (it records {recorded!r}, "
            f"its contents hash to {computed!r}): a damaged or edited file"
        )
    return {k: v for k, v in data.items() if k != CHECKSUM_FIELD}
