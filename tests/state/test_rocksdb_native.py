"""RocksDB's native snapshot restored at a new parallelism three ways (clip with delete_range,
copy from temporary instances, SST ingestion), each on real RocksDB and checked key for key."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.state import create_backend
from skewlab.state.key_groups import (
    KeyGroupRange,
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
)
from skewlab.state.rocksdb_native import (
    NATIVE_METHODS,
    key_group_bounds,
    native_snapshot,
    restore_native,
)


def old_handles(root, state: dict, max_parallelism: int, parallelism: int, backend="rocksdb"):
    handles = []
    for subtask in range(parallelism):
        kgs = compute_key_group_range_for_operator_index(max_parallelism, parallelism, subtask)
        with create_backend(backend, key_group_range=kgs) as old:
            for key, value in state.items():
                kg = assign_to_key_group(key, max_parallelism)
                if kg in kgs:
                    old.put(kg, key, value)
            handles.append(native_snapshot(old, root / f"subtask-{subtask}"))
    return handles


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.sets(st.one_of(st.integers(-500, 500), st.text(max_size=4)), max_size=40),
    max_parallelism=st.integers(2, 16),
    data=st.data(),
)
def test_every_method_restores_exactly_the_owned_keys(
    tmp_path_factory, keys, max_parallelism, data
):
    old_p = data.draw(st.integers(1, max_parallelism))
    new_p = data.draw(st.integers(1, max_parallelism))
    state = {key: ["v", repr(key)] for key in keys}
    handles = old_handles(tmp_path_factory.mktemp("native"), state, max_parallelism, old_p)
    for subtask in range(new_p):
        owned = compute_key_group_range_for_operator_index(max_parallelism, new_p, subtask)
        expected = {
            k: v for k, v in state.items() if assign_to_key_group(k, max_parallelism) in owned
        }
        for method in NATIVE_METHODS:
            with create_backend("rocksdb", key_group_range=owned) as new:
                io = restore_native(handles, new, method)
                # every key of the database, whatever its key group: nothing outside survives
                everything = list(new.items(range(max_parallelism)))
                assert {k: v for _, k, v in everything} == expected, method
                assert len(everything) == len(expected) == io.keys_kept
                overlapping = sum(1 for h in handles if h.intersection(owned))
                assert io.files_opened == overlapping


def test_clip_reads_no_key_of_a_single_overlapping_handle(tmp_path):
    state = {f"k{i}": i for i in range(200)}
    handles = old_handles(tmp_path, state, max_parallelism=16, parallelism=2)
    owned = compute_key_group_range_for_operator_index(16, 4, 1)  # inside old subtask 0
    with create_backend("rocksdb", key_group_range=owned) as new:
        io = restore_native(handles, new, "clip")
        assert io.keys_read == 0 and io.files_opened == 1
        assert io.bytes_read == handles[0].size  # the checkpoint's files, copied
        kept = {k for _, k, _ in new.items(range(16))}
    assert kept == {k for k in state if assign_to_key_group(k, 16) in owned}
    with create_backend("rocksdb", key_group_range=owned) as new:
        copy = restore_native(handles, new, "copy")
    assert copy.keys_read == copy.keys_kept == len(kept) and copy.bytes_read < io.bytes_read


def test_a_cached_backend_snapshots_its_dirty_entries(tmp_path):
    state = {f"k{i}": i for i in range(50)}
    handles = old_handles(tmp_path, state, 8, 1, backend="cached")
    with create_backend("cached", key_group_range=KeyGroupRange(0, 7)) as new:
        restore_native(handles, new, "ingest")
        assert {k: v for _, k, v in new.items()} == state


def test_key_group_bounds_and_bad_input(tmp_path):
    assert key_group_bounds(KeyGroupRange(0, 0)) == (b"\x00\x00", b"\x00\x01")
    with create_backend("heap") as heap, pytest.raises(SkewlabInputError, match="needs RocksDB"):
        native_snapshot(heap, tmp_path / "x")
    with create_backend("rocksdb") as new, pytest.raises(SkewlabInputError, match="unknown native"):
        restore_native([], new, "rsync")
