"""Restore at a new parallelism, three ways, on real snapshot files: each way keeps exactly the
keys the new subtask owns; the I/O counters are checked against counts made independently."""

from __future__ import annotations

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
from skewlab.state.restore import (
    RESTORE_WAYS,
    check_new_parallelism,
    restore_key_groups,
    restore_per_key_index,
    restore_read_all,
    restore_subtask,
    restore_ways_table,
)
from skewlab.state.snapshot import (
    BLOCK_CHECKSUM,
    FILE_MAGIC,
    INDEX_ENTRY,
    KeyedStateSnapshot,
    write_keyed_snapshot,
)

PICKLE = PickleSerializer()


def seed_snapshot(directory, keys=range(21), max_parallelism=10, parallelism=3):
    """The seed's Figure 3B: keys 0..20, identity hash (key group = key % maxP)."""
    handles = []
    for subtask in range(parallelism):
        kgs = compute_key_group_range_for_operator_index(max_parallelism, parallelism, subtask)
        with create_backend("heap", key_group_range=kgs) as backend:
            for key in keys:
                if key % max_parallelism in kgs:
                    backend.put(key % max_parallelism, key, f"state-{key}")
            handles.append(write_keyed_snapshot(backend, directory, subtask, PICKLE, index=True))
    return KeyedStateSnapshot.create(directory, max_parallelism, PICKLE, handles)


def entry_bytes(key: int) -> int:
    """An entry's size, computed apart from the writer: 2 + key (2 kg + 1 tag + 8) + 4 + value."""
    return 2 + 11 + 4 + len(PICKLE.dumps(f"state-{key}"))


def test_the_seeds_3_to_4_example(tmp_path):
    snapshot = seed_snapshot(tmp_path)
    # old ranges [0,3] [4,6] [7,9]; new ranges [0,2] [3,4] [5,7] [8,9]
    assert [h.key_group_range for h in snapshot.handles] == [
        KeyGroupRange(0, 3), KeyGroupRange(4, 6), KeyGroupRange(7, 9)
    ]  # fmt: skip
    checksums = BLOCK_CHECKSUM.size  # after each key group's block
    total = sum(entry_bytes(k) for k in range(21)) + 3 * len(FILE_MAGIC) + 10 * checksums
    expected_keys = {0: [0, 1, 2, 10, 11, 12, 20], 1: [3, 4, 13, 14], 2: [5, 6, 7, 15, 16, 17],
                     3: [8, 9, 18, 19]}  # fmt: skip
    expected_files = {0: 1, 1: 2, 2: 2, 3: 1}
    for subtask, keys in expected_keys.items():
        kg_entries, kg = restore_subtask(snapshot, 4, subtask, "key_groups", loads=PICKLE.loads)
        assert sorted(k for _, k, _ in kg_entries) == keys
        assert {k: v for _, k, v in kg_entries} == {k: f"state-{k}" for k in keys}
        assert kg.requests == kg.files_opened == expected_files[subtask]
        # exactly the owned blocks' bytes: no header, nothing of anyone else
        owned = len(compute_key_group_range_for_operator_index(10, 4, subtask))
        assert kg.bytes_read == sum(entry_bytes(k) for k in keys) + owned * checksums
        assert kg.keys_read == kg.keys_kept == len(keys)

        _, naive = restore_subtask(snapshot, 4, subtask, "read_all")
        assert naive.bytes_read == total and naive.requests == naive.files_opened == 3
        assert naive.keys_read == 21 and naive.keys_kept == len(keys)

        _, index = restore_subtask(snapshot, 4, subtask, "per_key_index")
        assert index.requests == 3 + len(keys)  # three index files, then one read per key
        assert index.index_bytes == 21 * INDEX_ENTRY.size
        assert index.bytes_read == index.index_bytes + kg.bytes_read - owned * checksums
        assert index.keys_kept == len(keys)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.sets(st.one_of(st.integers(-1000, 1000), st.text(max_size=5)), max_size=50),
    max_parallelism=st.integers(1, 20),
    data=st.data(),
)
def test_every_way_restores_every_key_exactly_once_at_any_new_parallelism(
    tmp_path_factory, keys, max_parallelism, data
):
    old_p = data.draw(st.integers(1, max_parallelism))
    new_p = data.draw(st.integers(1, max_parallelism))
    directory = tmp_path_factory.mktemp("snap")
    handles = []
    for subtask in range(old_p):
        kgs = compute_key_group_range_for_operator_index(max_parallelism, old_p, subtask)
        with create_backend("rocksdb", key_group_range=kgs) as backend:
            for key in keys:
                kg = assign_to_key_group(key, max_parallelism)
                if kg in kgs:
                    backend.put(kg, key, ("v", key))
            handles.append(write_keyed_snapshot(backend, directory, subtask, PICKLE, index=True))
    snapshot = KeyedStateSnapshot.create(directory, max_parallelism, PICKLE, handles)
    rows = restore_ways_table(snapshot, new_p, loads=PICKLE.loads)
    assert len(rows) == 3 * new_p
    restored: list = []
    for subtask in range(new_p):
        owned = compute_key_group_range_for_operator_index(max_parallelism, new_p, subtask)
        entries, io = restore_key_groups(snapshot, owned, loads=PICKLE.loads)
        assert all(kg in owned and v == ("v", k) for kg, k, v in entries)
        assert io.requests == sum(1 for h in snapshot.handles if h.intersection(owned))
        restored += [k for _, k, _ in entries]
    assert sorted(map(repr, restored)) == sorted(map(repr, keys))  # each key once, none lost
    by_way = {w: sum(r.bytes_read for r in rows if r.way == w) for w in RESTORE_WAYS}
    total_file_bytes = sum(h.length for h in snapshot.handles)
    assert by_way["read_all"] == new_p * total_file_bytes
    assert by_way["key_groups"] == total_file_bytes - old_p * len(FILE_MAGIC)


def test_a_new_parallelism_above_the_max_parallelism_is_refused(tmp_path):
    snapshot = seed_snapshot(tmp_path)
    with pytest.raises(SkewlabInputError, match="exceeds the max parallelism 10"):
        restore_subtask(snapshot, 11, 0)
    with pytest.raises(SkewlabInputError, match="Flink refuses it"):
        check_new_parallelism(11, 10)
    with pytest.raises(SkewlabInputError, match="unknown restore way"):
        restore_subtask(snapshot, 4, 0, "random")


def test_the_index_way_needs_an_index(tmp_path):
    with create_backend("heap", key_group_range=KeyGroupRange(0, 3)) as backend:
        backend.put(1, "a", 1)
        handle = write_keyed_snapshot(backend, tmp_path, 0, PICKLE)
    snapshot = KeyedStateSnapshot.create(tmp_path, 4, PICKLE, [handle])
    with pytest.raises(SkewlabInputError, match="no per-key index"):
        restore_per_key_index(snapshot, KeyGroupRange(0, 1))
    assert restore_read_all(snapshot, KeyGroupRange(0, 1))[1].keys_kept == 1


@pytest.mark.parametrize("target", ["heap", "rocksdb", "cached"])
def test_a_restored_backend_holds_the_owned_entries_and_counts_no_access(tmp_path, target):
    snapshot = seed_snapshot(tmp_path)
    owned = compute_key_group_range_for_operator_index(10, 4, 2)
    entries, _ = restore_key_groups(snapshot, owned, loads=PICKLE.loads)
    with create_backend(target, key_group_range=owned) as backend:
        assert backend.restore(entries) == 6
        stats = backend.stats
        assert (stats.reads, stats.writes) == (0, 0)
        assert sorted(k for _, k, _ in backend.items()) == [5, 6, 7, 15, 16, 17]
        assert backend.get(5, 15) == "state-15"
    with (
        create_backend(target, key_group_range=KeyGroupRange(0, 2)) as backend,
        pytest.raises(SkewlabInputError, match=r"restored into a backend for key groups"),
    ):
        backend.restore(entries)
