"""A damage matrix over real savepoints: every damaged copy is refused whole, before any Spark
work, with one line -- never restored to another digest.

One savepoint per backend (heap, rocksdb and cached state; buffered with its in-flight records
kept as operator list state), taken once per module; hypothesis picks a damage (truncation,
extension, deletion or swap of files; one flipped bit at a structural position: the magic, a
key's key group, key length or bytes, a value's length or header, a register byte, an in-flight
element, a block checksum, a metadata field) and where, every case on every backend, and applies
it to a fresh copy. ``SKEWLAB_DAMAGE_EXAMPLES`` sets the examples per case (default 3).

Set ``SKEWLAB_DAMAGE_TABLE=FILE`` to have every case appended to FILE as a JSON line
(``backend | case | refused? | message``), the table issue 29 asks for.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skewlab.aggregates.digest import result_digest
from skewlab.engine.config import JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Cached, Naive
from skewlab.strategies.resume import resume_from_savepoint, stop_with_savepoint

JOB = JobConfig(parallelism=2, max_parallelism=16, disk_profile=None)
SAVEPOINT_AT = 300
BACKENDS = {  # name -> (strategy, in-flight policy, resume parallelism)
    "heap": (Naive(backend="heap"), "flush", 3),
    "rocksdb": (Naive(backend="rocksdb"), "flush", 3),
    "cached": (Cached(cache_entries=5), "flush", 3),
    "buffered": (Buffered(max_count=60, trigger_interval_ms=0, buffer="list"), "operator_state", 2),
}
FLIPS = (
    "magic", "key_group", "key_length", "key_bytes", "value_length", "value_header", "register",
    "block_checksum", "in_flight_element", "metadata_field",
)  # fmt: skip
CASES = ("truncate", "extend", "delete", "swap", *(f"flip {f}" for f in FLIPS))
_KEY_LEN, _VALUE_LEN = struct.Struct(">H"), struct.Struct(">I")


@pytest.fixture(scope="module")
def views(spark):
    return generate_views(spark, ViewSpec(600, 100, 12, "zipf", 1.1, seed=5)).cache()


@pytest.fixture(scope="module")
def savepoints(views, tmp_path_factory):
    """name -> (savepoint path, the first job's results, the undamaged resume's digest)."""
    out = {}
    for name, (strategy, in_flight, new_p) in BACKENDS.items():
        path = tmp_path_factory.mktemp("damage") / name
        _, first, _ = stop_with_savepoint(
            views, strategy, JOB, savepoint_at=SAVEPOINT_AT, path=path, in_flight=in_flight
        )
        _, second = resume_from_savepoint(
            views, strategy, JOB, path, parallelism=new_p, in_flight=in_flight
        )
        out[name] = (path, first, result_digest({**first, **second}))
    return out


def state_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def entry_fields(path: Path) -> dict[str, list[int]]:
    """Byte positions of each structural field of a state file, from its snapshot's metadata."""
    meta = json.loads((path.parent / "_metadata").read_text())
    handle = next(h for h in meta["handles"] if h["file"] == path.name)
    trailer = 8 if "checksums" in handle else 0
    data = path.read_bytes()
    fields: dict[str, list[int]] = {f: [] for f in FLIPS}
    fields["magic"] = list(range(8))
    offsets = handle["offsets"]
    for start, end in zip(offsets, offsets[1:], strict=False):
        fields["block_checksum"] += range(end - trailer, end)
        pos = start
        while pos < end - trailer:
            (key_len,) = _KEY_LEN.unpack_from(data, pos)
            fields["key_length"] += range(pos, pos + 2)
            fields["key_group"] += range(pos + 2, pos + 4)
            fields["key_bytes"] += range(pos + 4, pos + 2 + key_len)
            at = pos + 2 + key_len
            (value_len,) = _VALUE_LEN.unpack_from(data, at)
            fields["value_length"] += range(at, at + 4)
            value = at + 4
            fields["value_header"] += range(value, value + 3)
            fields["register"] += range(value + value_len // 2, value + value_len)
            pos = value + value_len
    return fields


def flip_positions(root: Path, field: str) -> list[tuple[Path, int]]:
    out: list[tuple[Path, int]] = []
    for path in state_files(root):
        if field == "metadata_field" and path.name == "_metadata":
            text = path.read_bytes()
            out += [(path, m.start()) for m in re.finditer(rb"\d", text)]
        elif field == "in_flight_element" and path.suffix == ".ops":
            out += [(path, i) for i in range(0, path.stat().st_size, 7)]
        elif path.suffix == ".kgs":
            out += [(path, i) for i in entry_fields(path)[field]]
    return out


def damage(root: Path, case: str, data: st.DataObject) -> str:
    """Damage the copy at ``root`` as ``case`` says; what was done, for the table."""
    files = state_files(root)
    pick = lambda: data.draw(st.sampled_from(files))  # noqa: E731
    if case == "truncate":
        path = pick()
        size = path.stat().st_size
        cut = data.draw(st.integers(1, max(1, size)))
        path.write_bytes(path.read_bytes()[: size - cut])
        return f"{path.relative_to(root)} cut by {cut} bytes"
    if case == "extend":
        path = pick()
        extra = data.draw(st.binary(min_size=1, max_size=16))
        path.write_bytes(path.read_bytes() + extra)
        return f"{path.relative_to(root)} + {len(extra)} bytes"
    if case == "delete":
        path = pick()
        path.unlink()
        return f"{path.relative_to(root)} deleted"
    if case == "swap":
        a = pick()
        others = [f for f in files if f != a and f.read_bytes() != a.read_bytes()]
        b = data.draw(st.sampled_from(others))
        da, db = a.read_bytes(), b.read_bytes()
        a.write_bytes(db), b.write_bytes(da)
        return f"{a.relative_to(root)} <-> {b.relative_to(root)}"
    field = case.removeprefix("flip ")
    positions = flip_positions(root, field)
    if not positions:
        return ""
    path, at = data.draw(st.sampled_from(positions))
    bit = data.draw(st.integers(0, 7))
    raw = bytearray(path.read_bytes())
    raw[at] ^= 1 << bit
    path.write_bytes(bytes(raw))
    return f"{path.relative_to(root)} byte {at} bit {bit}"


def record(row: dict) -> None:
    table = os.environ.get("SKEWLAB_DAMAGE_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("backend", list(BACKENDS))
@settings(
    max_examples=int(os.environ.get("SKEWLAB_DAMAGE_EXAMPLES", "3")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_damaged_savepoint_is_refused_whole(
    backend, case, data, savepoints, views, spark, tmp_path_factory
):
    strategy, in_flight, new_p = BACKENDS[backend]
    original, first, undamaged = savepoints[backend]
    copy = tmp_path_factory.mktemp("copy") / "sp"
    shutil.copytree(original, copy)
    what = damage(copy, case, data)
    if not what:  # this backend's savepoint has no such field (no in-flight element, say)
        return
    tracker = spark.sparkContext.statusTracker()
    jobs_before = tracker.getJobIdsForGroup()
    try:
        _, second = resume_from_savepoint(
            views, strategy, JOB, copy, parallelism=new_p, in_flight=in_flight
        )
    except SkewlabInputError as err:
        message = str(err)
        record({"backend": backend, "case": case, "damage": what, "refused": True,
                "message": message})  # fmt: skip
        assert "\n" not in message
        assert tracker.getJobIdsForGroup() == jobs_before, "refused only after Spark work"
        return
    digest = result_digest({**first, **second})
    outcome = "equal" if digest == undamaged else "DIFFERENT"
    record({"backend": backend, "case": case, "damage": what, "refused": False,
            "message": f"restored, digest {outcome}"})  # fmt: skip
    pytest.fail(f"{backend}: {case} ({what}) was restored, digest equal: {digest == undamaged}")


def test_a_savepoint_of_the_older_format_is_refused_with_how_to_re_create_it(savepoints):
    path = savepoints["heap"][0]
    meta = json.loads((path / "_metadata").read_text())
    (path.parent / "old").mkdir()
    old = path.parent / "old" / "sp"
    shutil.copytree(path, old)
    meta["format_version"] = 1
    meta.pop("checksum")
    (old / "_metadata").write_text(json.dumps(meta))
    from skewlab.cli import main

    with pytest.raises(SkewlabInputError) as err:
        from skewlab.engine.savepoint import Savepoint

        Savepoint.load(old, verify=True)
    assert str(err.value) == (
        f"savepoint {old}: format version 1 is older than this skewlab's 2 (files without "
        "checksums are not read); re-create it: run the job again with 'skewlab run STRATEGY "
        "--savepoint-at N --savepoint PATH'"
    )
    assert main(["savepoint", str(old)]) == 2
