"""Operator (list) state redistributed Flink's three ways, and its snapshot files."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.state.operator_state import (
    OperatorStateSnapshot,
    repartition_list_state,
    write_operator_state,
)

LISTS = st.lists(st.lists(st.integers(), max_size=8), min_size=1, max_size=6)


@given(old=LISTS, new_p=st.integers(1, 9))
def test_split_distribute_cuts_the_concatenation_into_contiguous_even_chunks(old, new_p):
    new = repartition_list_state(old, new_p, "split_distribute")
    assert len(new) == new_p
    if new_p == len(old):
        assert new == old  # an unchanged parallelism keeps every subtask's own list
        return
    assert [e for chunk in new for e in chunk] == [e for chunk in old for e in chunk]
    sizes = [len(chunk) for chunk in new]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


@given(old=LISTS, new_p=st.integers(1, 9))
def test_union_gives_everything_to_everyone_and_broadcast_copies_round_robin(old, new_p):
    everything = [e for chunk in old for e in chunk]
    assert repartition_list_state(old, new_p, "union") == [everything] * new_p
    broadcast = repartition_list_state(old, new_p, "broadcast")
    assert broadcast == [old[i % len(old)] for i in range(new_p)]


@pytest.mark.parametrize(("old_p", "new_p"), [(3, 4), (4, 2)])
def test_the_seeds_source_offsets_move_without_loss_or_duplicates(tmp_path, old_p, new_p):
    partitions = 8
    offsets = {p: 100 + 7 * p for p in range(partitions)}  # (partition, offset) pairs
    handles = []
    for subtask in range(old_p):
        mine = [f"{p}:{offsets[p]}".encode() for p in range(partitions) if p % old_p == subtask]
        handles.append(write_operator_state(tmp_path, subtask, {"kafka-offsets": mine}))
    OperatorStateSnapshot.create(tmp_path, {"kafka-offsets": "split_distribute"}, handles)
    snapshot = OperatorStateSnapshot.load(tmp_path)
    restored = [snapshot.restore(new_p, i)["kafka-offsets"] for i in range(new_p)]
    pairs = [tuple(map(int, e.decode().split(":"))) for chunk in restored for e in chunk]
    assert sorted(pairs) == sorted(offsets.items())  # every partition once, its offset intact
    assert all(chunk for chunk in restored)  # 8 partitions: no new subtask left idle


def test_a_damaged_operator_state_snapshot_is_refused(tmp_path):
    handle = write_operator_state(tmp_path, 0, {"s": [b"abc", b"de"]})
    OperatorStateSnapshot.create(tmp_path, {"s": "union"}, [handle])
    assert OperatorStateSnapshot.load(tmp_path).restore(2, 1) == {"s": [b"abc", b"de"]}
    (tmp_path / "subtask-0.ops").write_bytes((tmp_path / "subtask-0.ops").read_bytes()[:-1])
    with pytest.raises(SkewlabInputError, match="its offsets say"):
        OperatorStateSnapshot.load(tmp_path)
    meta = json.loads((tmp_path / "_metadata").read_text())
    meta["format_version"] = 7
    (tmp_path / "_metadata").write_text(json.dumps(meta))
    with pytest.raises(SkewlabInputError, match="format version 7 is unknown"):
        OperatorStateSnapshot.load(tmp_path)
    with pytest.raises(SkewlabInputError, match="unknown distribution mode"):
        repartition_list_state([[1]], 2, "round_robin")
