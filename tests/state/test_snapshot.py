"""Snapshots of keyed state in key-group order: written from every backend, read back one key
group at a time, and a damaged or foreign snapshot refused whole -- all on real files."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.state import create_backend
from skewlab.state.api import PickleSerializer
from skewlab.state.key_groups import (
    KeyGroupRange,
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
)
from skewlab.state.metadata_file import write_metadata
from skewlab.state.rocksdb import encode_key
from skewlab.state.snapshot import (
    BLOCK_CHECKSUM,
    FILE_MAGIC,
    METADATA_FILE,
    KeyedStateSnapshot,
    block_checksum,
    decode_entries,
    read_span,
    serializer_name,
    write_key_groups,
    write_keyed_snapshot,
)

PICKLE = PickleSerializer()


def take_snapshot(directory, state: dict, max_parallelism: int, parallelism: int, backend="heap",
                  index=False):  # fmt: skip
    """Spread ``state`` ({key: value}) over ``parallelism`` subtasks' backends as the runtime
    would (Flink's key groups), write their snapshot, return it."""
    directory.mkdir(parents=True, exist_ok=True)
    handles = []
    for subtask in range(parallelism):
        kgs = compute_key_group_range_for_operator_index(max_parallelism, parallelism, subtask)
        with create_backend(backend, key_group_range=kgs) as keyed:
            for key, value in state.items():
                kg = assign_to_key_group(key, max_parallelism)
                if kg in kgs:
                    keyed.put(kg, key, value)
            handles.append(write_keyed_snapshot(keyed, directory, subtask, PICKLE, index=index))
    return KeyedStateSnapshot.create(directory, max_parallelism, PICKLE, handles)


def read_back(snapshot) -> dict:
    out = {}
    for handle in snapshot.handles:
        data = read_span(snapshot.path(handle.file), 0, handle.length)
        for kg, key, raw in decode_entries(data, handle, handle.key_group_range, base=0):
            assert kg == assign_to_key_group(key, snapshot.max_parallelism)
            assert key not in out
            out[key] = PICKLE.loads(raw)
    return out


STATE = {f"tweet-{i}": {"views": i} for i in range(60)} | {i: [i, -i] for i in range(-5, 30)}


@pytest.mark.parametrize("backend", ["heap", "rocksdb", "cached"])
def test_every_backend_writes_a_snapshot_that_reads_back_entry_for_entry(tmp_path, backend):
    snapshot = take_snapshot(tmp_path, STATE, max_parallelism=16, parallelism=3, backend=backend)
    loaded = KeyedStateSnapshot.load(tmp_path, max_parallelism=16, verify=True)
    assert loaded.entries == len(STATE) and loaded.parallelism == 3
    assert loaded.handles == snapshot.handles
    assert read_back(loaded) == STATE


def test_files_are_in_ascending_key_group_order_with_one_offset_per_key_group(tmp_path):
    snapshot = take_snapshot(tmp_path, STATE, max_parallelism=16, parallelism=2)
    for handle in snapshot.handles:
        assert len(handle.offsets) == len(handle.key_group_range) + 1
        assert (tmp_path / handle.file).stat().st_size == handle.length
        with open(tmp_path / handle.file, "rb") as f:
            assert f.read(len(FILE_MAGIC)) == FILE_MAGIC
        for kg in handle.key_group_range:
            start, end = handle.key_group_span(KeyGroupRange(kg, kg))
            entries = list(decode_entries(read_span(tmp_path / handle.file, start, end), handle,
                                          KeyGroupRange(kg, kg)))  # fmt: skip
            assert {k for _, k, _ in entries} == {
                k for k in STATE if assign_to_key_group(k, 16) == kg
            }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.sets(st.one_of(st.integers(-(10**6), 10**6), st.text(max_size=6)), max_size=40),
    max_parallelism=st.integers(1, 24),
    data=st.data(),
)
def test_any_state_round_trips_at_any_parallelism(tmp_path_factory, keys, max_parallelism, data):
    parallelism = data.draw(st.integers(1, max_parallelism))
    state = {key: repr(key) for key in keys}
    directory = tmp_path_factory.mktemp("snap")
    take_snapshot(directory, state, max_parallelism, parallelism)
    assert read_back(KeyedStateSnapshot.load(directory, verify=True)) == state


def test_out_of_order_or_foreign_entries_are_refused_when_written(tmp_path):
    with pytest.raises(SkewlabInputError, match="ascending order"):
        write_key_groups(tmp_path / "a", KeyGroupRange(0, 3), [(2, "a", b""), (1, "b", b"")])
    with pytest.raises(SkewlabInputError, match=r"outside \[0, 3\]"):
        write_key_groups(tmp_path / "b", KeyGroupRange(0, 3), [(4, "a", b"")])


def test_the_serializer_is_named_and_checked(tmp_path):
    take_snapshot(tmp_path, STATE, 8, 2)
    assert serializer_name(PICKLE) == "pickle-5"
    with pytest.raises(SkewlabInputError, match="written with 'pickle-5'"):
        KeyedStateSnapshot.load(tmp_path, value_serializer="my.Serializer")
    assert KeyedStateSnapshot.load(tmp_path).loads()(PICKLE.dumps(3)) == 3


# -- a damaged or foreign snapshot is refused whole ---------------------------------------------


@pytest.fixture
def snapshot_dir(tmp_path):
    take_snapshot(tmp_path, STATE, max_parallelism=16, parallelism=2, index=True)
    return tmp_path


def edit_metadata(directory, change) -> None:
    """Change the metadata and re-sign it (what a buggy writer would leave): the checks behind
    the metadata's checksum."""
    path = directory / METADATA_FILE
    data = json.loads(path.read_text())
    change(data)
    write_metadata(directory, data)


def test_an_edited_metadata_that_was_not_re_signed_is_refused(snapshot_dir):
    path = snapshot_dir / METADATA_FILE
    data = json.loads(path.read_text())
    data["handles"][0]["entries"][0] += 1
    path.write_text(json.dumps(data))
    with pytest.raises(SkewlabInputError, match=r"_metadata does not match its checksum"):
        KeyedStateSnapshot.load(snapshot_dir)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / METADATA_FILE).unlink(), "has no _metadata file"),
        (
            lambda d: (d / METADATA_FILE).write_text((d / METADATA_FILE).read_text()[:40]),
            "truncated or not JSON",
        ),
        (
            lambda d: edit_metadata(d, lambda m: m.update(format_version=99)),
            "format version 99 is unknown",
        ),
        (
            lambda d: edit_metadata(d, lambda m: m.update(kind="something else")),
            "is not a keyed-state snapshot's",
        ),
        (
            lambda d: edit_metadata(d, lambda m: m["handles"].pop()),
            "ranges end at 7, max parallelism is 16",
        ),
        (
            lambda d: edit_metadata(
                d, lambda m: m["handles"][1]["key_group_range"].__setitem__(0, 7)
            ),  # noqa: E501
            "key groups need",
        ),
        (
            lambda d: (d / "subtask-1.kgs").write_bytes((d / "subtask-1.kgs").read_bytes()[:-5]),
            "subtask-1.kgs is shorter than its offsets say",
        ),
        (lambda d: (d / "subtask-0.kgs").unlink(), "state file subtask-0.kgs is missing"),
        (
            lambda d: (d / "subtask-0.kgs").write_bytes(
                b"NOTMAGIC" + (d / "subtask-0.kgs").read_bytes()[8:]
            ),
            "not a skewlab state file",
        ),
        (lambda d: edit_metadata(d, lambda m: m["handles"][0].update(file="../x")), "plain file"),
    ],
)
def test_damaged_snapshots_are_refused_with_one_line(snapshot_dir, damage, message):
    damage(snapshot_dir)
    with pytest.raises(SkewlabInputError) as err:
        KeyedStateSnapshot.load(snapshot_dir)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_path_that_is_a_file_or_an_empty_directory_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(SkewlabInputError, match="is a file, not a directory"):
        KeyedStateSnapshot.load(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SkewlabInputError, match="has no _metadata"):
        KeyedStateSnapshot.load(tmp_path / "empty")
    with pytest.raises(SkewlabInputError, match="does not exist"):
        KeyedStateSnapshot.load(tmp_path / "nowhere")


def test_another_max_parallelism_is_refused(snapshot_dir):
    with pytest.raises(SkewlabInputError, match="max parallelism 16; this job has 128"):
        KeyedStateSnapshot.load(snapshot_dir, max_parallelism=128)


def rewrite_first_entry_key_group(directory, new_group: int) -> None:
    """Change the key group inside the first entry's key (a foreign or corrupted file whose
    length and offsets still agree)."""
    path = directory / "subtask-0.kgs"
    data = bytearray(path.read_bytes())
    at = len(FILE_MAGIC) + 2  # after the key length
    data[at : at + 2] = struct.pack(">H", new_group)
    path.write_bytes(bytes(data))


def test_a_key_in_a_key_group_its_place_does_not_own_is_refused_by_verify(snapshot_dir):
    first = json.loads((snapshot_dir / METADATA_FILE).read_text())["handles"][0]
    owner = next(i for i, n in enumerate(first["entries"]) if n)  # the first non-empty group
    rewrite_first_entry_key_group(snapshot_dir, owner + 9)
    KeyedStateSnapshot.load(snapshot_dir)  # the metadata alone looks fine ...
    with pytest.raises(SkewlabInputError, match=f"key group {owner}: its .* bytes hash to"):
        KeyedStateSnapshot.load(snapshot_dir, verify=True)  # ... its block's checksum does not


def test_an_entry_count_that_disagrees_with_the_metadata_is_refused(snapshot_dir):
    def change(m):
        entries = m["handles"][0]["entries"]
        i = next(i for i, n in enumerate(entries) if n)
        entries[i] += 1
        m["handles"][0].pop("index_file")  # else the index size gives it away first

    edit_metadata(snapshot_dir, change)
    with pytest.raises(SkewlabInputError, match="entries, the metadata says"):
        KeyedStateSnapshot.load(snapshot_dir, verify=True)


def test_the_first_entry_key_encoding_is_the_rocksdb_layout(tmp_path):
    handle = write_key_groups(tmp_path / "s", KeyGroupRange(0, 0), [(0, "k", b"v")])
    body = (tmp_path / "s").read_bytes()[len(FILE_MAGIC) :]
    raw = encode_key(0, "k")
    entry = struct.pack(">H", len(raw)) + raw + struct.pack(">I", 1) + b"v"
    assert body == entry + BLOCK_CHECKSUM.pack(block_checksum(entry, 0))
    assert handle.entries == (1,)


def test_an_index_added_afterwards_is_the_index_written_beside_the_file(tmp_path):
    from skewlab.state.snapshot import add_per_key_index

    written = take_snapshot(tmp_path / "a", STATE, 16, 3, index=True)
    plain = take_snapshot(tmp_path / "b", STATE, 16, 3)
    indexed = add_per_key_index(plain)
    for h_written, h_added in zip(written.handles, indexed.handles, strict=True):
        assert (tmp_path / "a" / h_written.index_file).read_bytes() == (
            tmp_path / "b" / h_added.index_file
        ).read_bytes()
    assert KeyedStateSnapshot.load(tmp_path / "b", verify=True).handles == indexed.handles
