"""Tests of skewlab.state: every backend against a plain dict model, plus each one's specifics.

RocksDB is real RocksDB (rocksdict) in temporary directories; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import skewlab
from skewlab.errors import SkewlabInputError, UnsortedInputError
from skewlab.state import (
    BACKENDS,
    DEFAULT_MAX_ENTRIES,
    HeapKeyedStateBackend,
    KeyedStateBackend,
    LruCachedKeyedStateBackend,
    RocksDBKeyedStateBackend,
    SingleKeyStateBackend,
    StateAccessStats,
    StateBackend,
    create_backend,
)
from skewlab.state.key_groups import KeyGroupRange, assign_to_key_group
from skewlab.state.rocksdb import decode_key, encode_key, read_checkpoint

MAX_PARALLELISM = 4  # few key groups, so that key groups hold several keys
ALL_GROUPS = range(MAX_PARALLELISM)

KEYS = st.one_of(
    st.integers(min_value=-3, max_value=4),
    st.sampled_from(["a", "b", "tweet-1", "é", "\U0001f600", ""]),
)
VALUES = st.one_of(
    st.integers(),
    st.text(max_size=4),
    st.lists(st.integers(min_value=0, max_value=9), max_size=3),
    st.tuples(st.integers(), st.text(max_size=2)),
)


def key_group(key: str | int) -> int:
    """As the runtime does it: a key always comes with the key group Flink assigns it."""
    return assign_to_key_group(key, MAX_PARALLELISM)


def canonical(entries: Any) -> list[tuple[int, bool, Any, Any]]:
    """``items`` output in a comparable order (int and str keys mixed)."""
    return sorted(
        ((kg, isinstance(key, str), key, value) for kg, key, value in entries),
        key=lambda t: t[:3],
    )


# --------------------------------------------------------------------------------------------
# Every backend (single_key apart) gives a dict's answers, whatever the sequence


class StateModelMachine(RuleBasedStateMachine):
    """Drives one backend and a dict with the same random operations; demands equal answers."""

    backend_name = "heap"
    options: dict[str, Any] = {}

    def __init__(self) -> None:
        super().__init__()
        self.backend: KeyedStateBackend = create_backend(self.backend_name, **self.options)
        self.model: dict[tuple[int, str | int], Any] = {}
        self.gets = 0

    @rule(key=KEYS)
    def get(self, key):
        self.gets += 1
        kg = key_group(key)
        assert self.backend.get(kg, key) == self.model.get((kg, key))

    @rule(key=KEYS, value=VALUES)
    def put(self, key, value):
        kg = key_group(key)
        self.backend.put(kg, key, value)
        self.model[(kg, key)] = value

    @rule(key=KEYS, increment=st.integers(min_value=1, max_value=3))
    def read_modify_write(self, key, increment):
        """What an aggregation does per record: get, combine, put back."""
        self.gets += 1
        kg = key_group(key)
        current = self.backend.get(kg, key)
        assert current == self.model.get((kg, key))
        new = (current if isinstance(current, int) else 0) + increment
        self.backend.put(kg, key, new)
        self.model[(kg, key)] = new

    @rule(key=KEYS)
    def delete(self, key):
        kg = key_group(key)
        self.backend.delete(kg, key)
        self.model.pop((kg, key), None)

    @rule()
    def checkpoint(self):
        self.backend.checkpoint()
        if self.backend.on_disk:  # rocksdb, with a cache or not
            # the checkpoint holds exactly the state at that moment, dirty cache entries included
            expected = [(kg, key, v) for (kg, key), v in self.model.items()]
            assert canonical(read_checkpoint(self.backend.last_checkpoint)) == canonical(expected)

    @rule(groups=st.sets(st.integers(min_value=0, max_value=MAX_PARALLELISM - 1)))
    def items(self, groups):
        expected = [(kg, key, v) for (kg, key), v in self.model.items() if kg in groups]
        assert canonical(self.backend.items(sorted(groups))) == canonical(expected)

    @invariant()
    def counters_add_up(self):
        stats = self.backend.stats
        if isinstance(self.backend, LruCachedKeyedStateBackend):
            assert stats.cache_hits + stats.cache_misses == self.gets
            assert len(self.backend) <= self.backend.max_entries
        else:
            assert stats.reads == self.gets

    def teardown(self):
        try:
            everything = self.backend.items(KeyGroupRange(0, MAX_PARALLELISM - 1))
            expected = [(kg, key, v) for (kg, key), v in self.model.items()]
            assert canonical(everything) == canonical(expected)
            # and once more after a checkpoint: nothing lost on the way to RocksDB
            self.backend.checkpoint()
            assert canonical(self.backend.items(ALL_GROUPS)) == canonical(expected)
        finally:
            self.backend.close()


MACHINE_SETTINGS = settings(
    max_examples=25,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _machine(name: str, **options: Any) -> type:
    label = "".join(part.title() for part in name.split("_")) + "".join(
        f"{k.title().replace('_', '')}{v}" for k, v in options.items()
    )
    machine = type(f"{label}Machine", (StateModelMachine,), {"backend_name": name})
    machine.options = options
    test_case = machine.TestCase
    test_case.settings = MACHINE_SETTINGS
    return test_case


TestHeapModel = _machine("heap")
TestHeapTrackedModel = _machine("heap", track_keys=True)
TestRocksDBModel = _machine("rocksdb")
TestCachedNoCacheModel = _machine("cached", max_entries=0)
TestCachedOneModel = _machine("cached", max_entries=1)
TestCachedTwoModel = _machine("cached", max_entries=2)
TestCachedThreeTrackedModel = _machine("cached", max_entries=3, track_keys=True)
TestCachedLargeModel = _machine("cached", max_entries=1000)
TestHeapBehindAnLruModel = _machine("heap", max_entries=2)  # the LRU wraps any backend
TestCachedBatchedWriteBackModel = _machine("cached", max_entries=2, write_batch=3)


# --------------------------------------------------------------------------------------------
# single_key: a dict's answers on sorted input, an error on unsorted input

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("get"), st.none()),
        st.tuples(st.just("put"), st.integers()),
        st.tuples(st.just("delete"), st.none()),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(
    keys=st.one_of(
        st.sets(st.integers(min_value=-50, max_value=50), max_size=12),
        st.sets(st.text(max_size=3), max_size=12),
    ),
    data=st.data(),
)
def test_single_key_on_sorted_input_answers_like_a_dict(keys, data):
    state = SingleKeyStateBackend()
    model: dict[tuple[int, Any], Any] = {}
    for kg, key in sorted((key_group(k), k) for k in keys):
        for op, value in data.draw(OPS):
            if op == "get":
                assert state.get(kg, key) == model.get((kg, key))
            elif op == "put":
                state.put(kg, key, value)
                model[(kg, key)] = value
            else:
                state.delete(kg, key)
                model.pop((kg, key), None)
        # only the current key is held
        current = [(kg, key, model[(kg, key)])] if (kg, key) in model else []
        assert list(state.items(ALL_GROUPS)) == current
        assert list(state.items([g for g in ALL_GROUPS if g != kg])) == []
        assert state.current_key == (kg, key)
    state.close()


def test_single_key_repeated_accesses_of_one_key_are_fine():
    state = SingleKeyStateBackend()
    for _ in range(3):
        state.put(0, "a", (state.get(0, "a") or 0) + 1)
    assert state.get(0, "a") == 3
    state.put(0, "b", 1)
    assert state.get(0, "b") == 1  # a new key starts empty, the old one is finished
    assert state.stats.reads == 5 and state.stats.writes == 4


def test_single_key_unsorted_input_raises_and_names_the_keys():
    state = SingleKeyStateBackend()
    state.put(0, "a", 1)
    state.put(0, "b", 1)
    with pytest.raises(UnsortedInputError) as info:
        state.get(0, "a")
    message = str(info.value)
    assert "input is not sorted by key" in message
    assert "'a'" in message and "'b'" in message


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((1, "a"), (0, "b")),  # key group went backwards
        ((0, 5), (0, 3)),  # key went backwards
        ((0, "x"), (0, 7)),  # int after str in one key group: not ordered
    ],
)
def test_single_key_every_kind_of_disorder_raises(first, second):
    state = SingleKeyStateBackend()
    state.put(*first, "v")
    with pytest.raises(UnsortedInputError, match="input is not sorted by key") as info:
        state.put(*second, "w")
    assert repr(second[1]) in str(info.value) and repr(first[1]) in str(info.value)
    # delete is a key switch too
    with pytest.raises(UnsortedInputError):
        state.delete(*second)


#: Allocations made by skewlab or by this file's calls into it (a compiled core's allocations
#: carry the calling line): not another thread's (a Spark gateway, an event loop) that happens
#: to allocate while the keys go in.
_OURS = (
    tracemalloc.Filter(True, __file__),
    tracemalloc.Filter(True, os.path.join(os.path.dirname(skewlab.__file__), "*")),
)


def _traced_growth(backend, keys: int) -> int:
    """Bytes of Python allocations still held after ``keys`` fresh keys were put."""
    for i in range(10):  # the first keys: whatever the backend sets up on first use
        backend.put(0, i, [i])
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot().filter_traces(_OURS)
        for i in range(10, 10 + keys):
            backend.put(0, i, [i])
        after = tracemalloc.take_snapshot().filter_traces(_OURS)
    finally:
        tracemalloc.stop()
    return sum(stat.size_diff for stat in after.compare_to(before, "filename"))


def test_single_key_keeps_no_per_key_memory():
    # the same 20,000 keys that cost the heap backend megabytes cost the single-key backend
    # nothing that stays: one key's value at a time
    heap_growth = _traced_growth(create_backend("heap"), 20_000)
    single_key = SingleKeyStateBackend()
    single_key_growth = _traced_growth(single_key, 20_000)
    assert heap_growth > 20_000 * 50
    assert single_key_growth < 2_000
    assert single_key._core.current == (0, 20_009, [20_009])


# --------------------------------------------------------------------------------------------
# cached: exact counts on hand-made sequences


def test_cached_counts_for_a_count_aggregation():
    # max_entries=2, keys a b a c b, each a get then a put (a count per key):
    #   a: miss (read 1)                  cache [a]
    #   b: miss (read 2)                  cache [a b]
    #   a: hit                            cache [b a]
    #   c: miss (read 3), evict b (dirty: write 1)      cache [a c]
    #   b: miss (read 4, finds 1), evict a (dirty: write 2)  cache [c b]
    with create_backend("cached", max_entries=2, track_keys=True) as state:
        for key in ["a", "b", "a", "c", "b"]:
            state.put(0, key, (state.get(0, key) or 0) + 1)
        s = state.stats
        assert (s.cache_hits, s.cache_misses, s.evictions) == (1, 4, 2)
        assert (s.reads, s.writes, s.checkpoints) == (4, 2, 0)
        assert s.hit_ratio == pytest.approx(0.2)
        assert s.reads_per_key == {"a": 1, "b": 2, "c": 1}
        assert s.writes_per_key == {"b": 1, "a": 1}
        # the checkpoint writes the dirty entries still in the cache (c and b) and only those
        state.checkpoint()
        s = state.stats
        assert (s.writes, s.checkpoints) == (4, 1)
        assert s.writes_per_key == {"a": 1, "b": 2, "c": 1}
        state.checkpoint()
        assert (state.stats.writes, state.stats.checkpoints) == (4, 2)  # nothing dirty any more
        # b is cached (hit); a comes back from RocksDB and evicts c, which is clean now
        assert state.get(0, "b") == 2 and state.get(0, "a") == 2
        s = state.stats
        assert (s.cache_hits, s.cache_misses, s.evictions, s.writes) == (2, 5, 3, 4)


@pytest.mark.parametrize("backend_name", ["rocksdb", "cached"])
def test_checkpoint_is_a_rocksdb_checkpoint_and_only_the_latest_is_kept(backend_name):
    state = create_backend(backend_name)
    assert state.last_checkpoint is None
    state.put(1, "a", 1)
    state.checkpoint()
    first = state.last_checkpoint
    state.put(1, "a", 2)
    state.put(2, 5, "five")
    assert list(read_checkpoint(first)) == [(1, "a", 1)]  # later writes are not in it
    state.checkpoint()
    second = state.last_checkpoint
    assert second != first and not os.path.exists(first)  # num-retained: 1
    assert sorted(read_checkpoint(second), key=repr) == [(1, "a", 2), (2, 5, "five")]
    assert os.path.basename(second) == "chk-2" and state.stats.checkpoints == 2
    # RocksDB's own checkpoint: SST files (the flushed memtable) and a manifest
    files = os.listdir(second)
    assert any(f.endswith(".sst") for f in files) and any(f.startswith("MANIFEST") for f in files)
    state.close()
    assert not os.path.exists(os.path.dirname(second)) and state.last_checkpoint is None
    with pytest.raises(SkewlabInputError, match="no RocksDB checkpoint at"):
        read_checkpoint(second)


def test_cached_clean_evictions_write_nothing():
    with create_backend("cached", max_entries=2) as state:
        state.put(0, "a", 1)
        state.put(0, "b", 1)
        state.checkpoint()  # writes a and b; both are clean now
        for key in ["a", "b", "a", "c", "b"]:  # gets only
            state.get(0, key)
        s = state.stats
        assert (s.cache_hits, s.cache_misses, s.evictions) == (3, 2, 2)
        assert (s.reads, s.writes) == (2, 2)
        assert state.get(0, "c") is None


def test_cached_hands_out_the_cached_object():
    with create_backend("cached", max_entries=10) as state:
        value = [1]
        state.put(0, "k", value)
        got = state.get(0, "k")
        assert got is value
        got.append(2)
        state.put(0, "k", got)
        state.checkpoint()
        assert list(state.items([0])) == [(0, "k", [1, 2])]
    with RocksDBKeyedStateBackend() as state:  # RocksDB hands out a fresh copy
        state.put(0, "k", value)
        assert state.get(0, "k") == value and state.get(0, "k") is not value


def test_cached_items_see_dirty_entries_without_a_checkpoint():
    with create_backend("cached", max_entries=2) as state:
        state.put(0, "old", 1)
        state.put(0, "x", 1)
        state.put(0, "y", 1)  # evicts "old" to RocksDB
        state.put(0, "x", 2)  # dirty, RocksDB does not have it
        writes = state.stats.writes
        assert sorted(state.items([0])) == [(0, "old", 1), (0, "x", 2), (0, "y", 1)]
        assert state.stats.writes == writes and state.stats.checkpoints == 0


def test_cached_delete_removes_from_cache_and_rocksdb():
    with create_backend("cached", max_entries=1) as state:
        state.put(0, "a", 1)
        state.put(0, "b", 1)  # a goes to RocksDB
        state.delete(0, "a")
        state.delete(0, "b")
        assert state.get(0, "a") is None and state.get(0, "b") is None
        assert list(state.items([0])) == []
        assert state.stats.deletes == 2


def test_cached_zero_entries_is_rocksdb_with_misses():
    with create_backend("cached", max_entries=0, track_keys=True) as state:
        state.put(1, 7, "x")
        assert state.get(1, 7) == "x"
        assert state.get(1, 8) is None
        s = state.stats
        assert (s.cache_hits, s.cache_misses, s.reads, s.writes, s.evictions) == (0, 2, 2, 1, 0)
        assert s.hit_ratio == 0.0
        assert s.reads_per_key == {7: 1, 8: 1} and s.writes_per_key == {7: 1}
        assert len(state) == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_cached_rejects_bad_max_entries(bad):
    with pytest.raises(SkewlabInputError, match="max_entries"):
        create_backend("cached", max_entries=bad)


# --------------------------------------------------------------------------------------------
# rocksdb specifics


def test_rocksdb_files_live_in_local_dir_and_are_removed_on_close(tmp_path):
    state = create_backend("rocksdb", local_dir=str(tmp_path / "spark-local"))
    path = state.path
    assert os.path.dirname(path) == str(tmp_path / "spark-local")
    assert os.path.basename(path).startswith("skewlab-rocksdb-")
    state.put(0, "a", 1)
    assert os.listdir(path)
    state.close()
    assert not os.path.exists(path)
    assert state.closed
    state.close()  # twice is fine


def test_rocksdb_default_dir_is_first_spark_local_dir(tmp_path, monkeypatch):
    first, second = tmp_path / "one", tmp_path / "two"
    monkeypatch.setenv("SPARK_LOCAL_DIRS", f"{first},{second}")
    with create_backend("cached", max_entries=5) as state:
        assert os.path.dirname(state.storage.path) == str(first)
    assert os.listdir(first) == []


def test_rocksdb_context_manager_closes_on_error(tmp_path):
    with pytest.raises(RuntimeError), create_backend("rocksdb", local_dir=tmp_path) as state:
        path = state.path
        raise RuntimeError("boom")
    assert not os.path.exists(path)


def test_rocksdb_write_ahead_log_is_off():
    with create_backend("rocksdb") as state:
        for i in range(2000):
            state.put(i % 3, i, "x" * 100)
        logs = [f for f in os.listdir(state.path) if f.endswith(".log")]
        assert logs and all(os.path.getsize(os.path.join(state.path, f)) == 0 for f in logs)


def test_rocksdb_key_layout_and_range_scans_per_key_group():
    assert encode_key(256, "ab") == b"\x01\x00\x02ab"
    assert encode_key(1, -1) == b"\x00\x01\x01" + b"\xff" * 8
    for kg, key in [(0, 0), (255, "z"), (32767, -(2**63)), (3, 2**63 - 1), (9, "\U0001f600")]:
        assert decode_key(encode_key(kg, key)) == (kg, key)
    with create_backend("rocksdb") as state:
        groups = [0, 1, 255, 256, 257, 32767]
        for kg in groups:
            state.put(kg, f"s{kg}", kg)
            state.put(kg, -kg, [kg])
        for kg in groups:  # each scan sees its own key group only
            assert sorted(state.items([kg]), key=str) == sorted(
                [(kg, f"s{kg}", kg), (kg, -kg, [kg])], key=str
            )
        assert {kg for kg, _, _ in state.items(KeyGroupRange(250, 260))} == {255, 256, 257}
        assert list(state.items([2, 300])) == []


def test_rocksdb_counts_bytes_and_uses_the_given_serializer():
    class JsonSerializer:
        def dumps(self, obj):
            return json.dumps(obj).encode()

        def loads(self, data):
            return json.loads(data)

    with create_backend("rocksdb", serializer=JsonSerializer()) as state:
        state.put(0, "a", {"views": 12})
        assert state.get(0, "a") == {"views": 12}
        assert state.get(0, "missing") is None
        s = state.stats
        size = len(b'{"views": 12}')
        assert (s.reads, s.writes, s.bytes_serialized, s.bytes_deserialized) == (2, 1, size, size)
        state.delete(0, "a")
        assert state.get(0, "a") is None and state.stats.deletes == 1


# --------------------------------------------------------------------------------------------
# statistics and the factory


@pytest.mark.parametrize("name", BACKENDS)
def test_hit_ratio_is_none_without_lookups(name):
    with create_backend(name) as state:
        state.put(0, "a", 1)
        assert state.stats.hit_ratio is None
        assert state.stats.reads_per_key is None and state.stats.writes_per_key is None


@pytest.mark.parametrize("name", BACKENDS)
def test_checkpoints_are_counted_and_key_tracking_works_everywhere(name):
    with create_backend(name, track_keys=True) as state:
        state.put(0, "a", 1)
        state.get(0, "a")
        state.get(0, "a")
        state.checkpoint()
        s = state.stats
        assert s.checkpoints == 1
        if name == "cached":  # only what reached RocksDB: the checkpoint wrote "a" once
            assert s.reads_per_key == {} and s.writes_per_key == {"a": 1}
        else:
            assert s.reads_per_key == {"a": 2} and s.writes_per_key == {"a": 1}


def test_stats_snapshots_add_up():
    a = StateAccessStats(reads=1, cache_hits=2, reads_per_key={"x": 1})
    b = StateAccessStats(reads=3, cache_misses=2, reads_per_key={"x": 2, "y": 1})
    total = a + b
    assert (total.reads, total.cache_hits, total.cache_misses) == (4, 2, 2)
    assert total.reads_per_key == {"x": 3, "y": 1}
    assert total.writes_per_key is None
    assert total.hit_ratio == 0.5


def test_factory_names_and_classes():
    assert BACKENDS == ("heap", "rocksdb", "cached", "single_key")
    expected = {
        "heap": HeapKeyedStateBackend,
        "rocksdb": RocksDBKeyedStateBackend,
        "cached": LruCachedKeyedStateBackend,
        "single_key": SingleKeyStateBackend,
        "single-key": SingleKeyStateBackend,
    }
    for name, cls in expected.items():
        with create_backend(name) as state:
            assert type(state) is cls


def test_factory_errors():
    with pytest.raises(SkewlabInputError) as info:
        create_backend("mapdb")
    assert "heap, rocksdb, cached, single_key" in str(info.value)
    with pytest.raises(SkewlabInputError, match="'heap' keeps objects, it has no serializer"):
        create_backend("heap", serializer=object())
    with pytest.raises(SkewlabInputError, match="unknown state backend"):
        create_backend(None)


# --------------------------------------------------------------------------------------------
# the API: what a reader sees is what runs


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("track_keys", [False, True])
def test_no_instance_attribute_shadows_a_method(name, track_keys):
    """get / put / delete are the class's methods (the hot path is value_state(), explicitly)."""
    with create_backend(name, track_keys=track_keys) as backend:
        assert not {"get", "put", "delete", "checkpoint", "items"} & set(vars(backend))
        backend.put(0, "a", 1)
        assert backend.get(0, "a") == 1 == backend.value_state().get(0, "a")


def test_an_empty_cache_caches_its_first_put():
    # was: `if self._lru:` -- an empty cache is falsy, so the class's put went to RocksDB
    backend = create_backend("cached", max_entries=4)
    LruCachedKeyedStateBackend.put(backend, 0, "k", 1)
    assert (backend.stats.writes, len(backend)) == (0, 1)  # cached and dirty, not written
    assert LruCachedKeyedStateBackend.get(backend, 0, "k") == 1
    assert (backend.stats.cache_hits, backend.stats.cache_misses) == (1, 0)
    backend.close()


def test_the_lru_wraps_any_backend_and_counts_what_reaches_it():
    with create_backend("heap", max_entries=1, track_keys=True) as backend:
        state = backend.value_state()
        for key in ["a", "b", "a"]:  # a count per key; each key evicts the other
            state.put(0, key, (state.get(0, key) or 0) + 1)
        s = backend.stats
        assert (s.cache_hits, s.cache_misses, s.evictions) == (0, 3, 2)
        assert (s.reads, s.writes) == (3, 2) and not s.on_disk  # the heap's own counters
        assert s.reads_per_key == {"a": 2, "b": 1} and s.writes_per_key == {"a": 1, "b": 1}
        assert sorted(backend.items([0])) == [(0, "a", 2), (0, "b", 1)]


def test_a_state_backend_makes_backends_for_a_key_group_range():
    backend = StateBackend("rocksdb")
    assert backend.on_disk and not StateBackend("heap").on_disk and StateBackend("cached").on_disk
    assert StateBackend("cached").cache_entries == DEFAULT_MAX_ENTRIES == 1_000
    with backend.create_keyed_state_backend(KeyGroupRange(2, 3)) as keyed:
        keyed.put(2, "a", 1)
        keyed.put(3, "b", 2)
        keyed.put(9, "c", 3)  # another subtask's key group: not in this backend's range
        assert sorted(keyed.items()) == [(2, "a", 1), (3, "b", 2)]
        assert keyed.key_group_range == KeyGroupRange(2, 3)
