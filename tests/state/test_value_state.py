"""The value-state cores -- compiled and pure-Python alike -- against plain models of the same
behaviour."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError, UnsortedInputError


class ModelLru:
    """FLIP-325's write-back LRU, written plainly over an OrderedDict (the oracle)."""

    def __init__(self, max_entries: int, store: dict) -> None:
        self.max_entries, self.store = max_entries, store
        self.cache: OrderedDict = OrderedDict()  # key -> [group, value, dirty]
        self.hits = self.misses = self.evictions = 0
        self.writes: list = []

    def _make_room(self) -> None:
        if len(self.cache) >= self.max_entries:
            key, (group, value, dirty) = self.cache.popitem(last=False)
            self.evictions += 1
            if dirty:
                self.store[key] = value
                self.writes.append((group, key, value))

    def get(self, group, key):
        if key in self.cache:
            self.hits += 1
            self.cache.move_to_end(key)
            return self.cache[key][1]
        self.misses += 1
        value = self.store.get(key)
        self._make_room()
        self.cache[key] = [group, value, False]
        return value

    def put(self, group, key, value):
        if key in self.cache:
            self.cache.move_to_end(key)
        else:
            self._make_room()
        self.cache[key] = [group, value, True]

    def delete(self, group, key):
        self.cache.pop(key, None)

    def dirty_entries(self, mark_clean=False):
        out = [(g, k, v) for k, (g, v, dirty) in self.cache.items() if dirty]
        if mark_clean:
            for entry in self.cache.values():
                entry[2] = False
        return out


OPS = st.lists(
    st.tuples(
        st.sampled_from(["get", "put", "delete", "dirty", "flush"]),
        st.integers(min_value=0, max_value=6),  # key
        st.integers(min_value=1, max_value=99),  # value
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(max_entries=st.integers(min_value=1, max_value=5), ops=OPS)
def test_write_back_lru_behaves_like_the_model(cores, max_entries, ops):
    store, model_store, writes = {}, {}, []

    def load(group, key):
        return store.get(key)

    def write_back(group, key, value):
        store[key] = value
        writes.append((group, key, value))

    lru, model = (
        cores.WriteBackLru(max_entries, load, write_back),
        ModelLru(max_entries, model_store),
    )
    for op, key, value in ops:
        group = key % 3  # a function of the key, as a key group is
        if op == "get":
            assert lru.get(group, key) == model.get(group, key)
        elif op == "put":
            lru.put(group, key, value)
            model.put(group, key, value)
        elif op == "delete":
            lru.delete(group, key)
            model.delete(group, key)
            store.pop(key, None)
            model_store.pop(key, None)
        else:
            mark = op == "flush"
            entries = lru.dirty_entries(mark_clean=mark)
            assert entries == model.dirty_entries(mark_clean=mark)
            if mark:  # a checkpoint writes them
                for _group, k, v in entries:
                    store[k] = model_store[k] = v
        assert (lru.hits, lru.misses, lru.evictions) == (model.hits, model.misses, model.evictions)
        assert len(lru) == len(model.cache) <= max_entries
        assert lru.dirty_count == len(model.dirty_entries())
        assert all((k in lru) for k in model.cache)
    assert writes == model.writes
    assert store == model_store


@settings(max_examples=300, deadline=None)
@given(
    max_entries=st.integers(min_value=1, max_value=5),
    write_batch=st.integers(min_value=2, max_value=4),
    ops=OPS,
)
def test_batched_write_back_reads_its_own_writes_and_evicts_as_the_seeds_lru(
    cores, max_entries, write_batch, ops
):
    store, truth, batches = {}, {}, []

    def store_many(entries):
        batches.append(list(entries))
        for _group, key, value in entries:
            store[key] = value

    lru = cores.WriteBackLru(
        max_entries, lambda g, k: store.get(k), None, store_many, write_batch=write_batch
    )
    model = ModelLru(max_entries, {})  # the seed's LRU: the same entries, hits and evictions
    for op, key, value in ops:
        group = key % 3
        if op == "get":
            assert lru.get(group, key) == truth.get(key)  # never a stale read of the store
            model.get(group, key)
        elif op == "put":
            lru.put(group, key, value)
            model.put(group, key, value)
            truth[key] = value
        elif op == "delete":
            lru.delete(group, key)
            model.delete(group, key)
            store.pop(key, None)
            truth.pop(key, None)
        else:
            mark = op == "flush"
            entries = lru.dirty_entries(mark_clean=mark)
            assert len({k for _, k, _ in entries}) == len(entries)  # each key once
            assert all(truth.get(k) == v for _, k, v in entries)
            if mark:
                for _group, k, v in entries:
                    store[k] = v
                assert lru.pending_count == 0
        assert lru.pending_count < write_batch  # the write buffer is bounded
        assert len(lru) == len(model.cache) <= max_entries
        assert all((k in lru) for k in model.cache)
        assert lru.evictions == model.evictions
        assert lru.hits - lru.pending_hits == model.hits
        assert lru.misses + lru.pending_hits == model.misses
    assert all(len(batch) == write_batch for batch in batches)  # written N at a time
    assert lru.batches_written == len(batches)
    for _group, k, v in lru.dirty_entries(mark_clean=True):
        store[k] = v
    assert store == truth  # nothing lost, nothing stale


def test_batched_write_back_needs_a_batch_writer(cores):
    with pytest.raises(SkewlabInputError, match="write_batch > 1 needs store_many"):
        cores.WriteBackLru(4, None, None, write_batch=8)
    with pytest.raises(SkewlabInputError, match="write_batch must be >= 1, got 0"):
        cores.WriteBackLru(4, None, None, list.append, write_batch=0)


def test_write_back_lru_hit_returns_the_cached_object_and_miss_caches_absence(cores):
    loads = []
    lru = cores.WriteBackLru(2, lambda g, k: loads.append(k), lambda g, k, v: None)
    assert lru.get(0, "a") is None and lru.get(0, "a") is None
    assert loads == ["a"] and (lru.hits, lru.misses) == (1, 1)  # absence is cached too
    value = [1]
    lru.put(0, "b", value)
    assert lru.get(0, "b") is value


@pytest.mark.parametrize("bad", [0, -1])
def test_write_back_lru_needs_one_entry(cores, bad):
    with pytest.raises(SkewlabInputError, match="max_entries >= 1"):
        cores.WriteBackLru(bad, None, None)


def test_write_back_lru_store_errors_propagate(cores):
    def store(group, key, value):
        raise OSError("disk full")

    lru = cores.WriteBackLru(1, lambda g, k: None, store)
    lru.put(0, "a", 1)
    with pytest.raises(OSError, match="disk full"):
        lru.put(0, "b", 2)
    # nothing was lost: "a" is still cached and dirty, "b" never got in
    assert "a" in lru and "b" not in lru and len(lru) == 1
    assert lru.dirty_entries() == [(0, "a", 1)] and lru.evictions == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 20), st.integers(1, 9)), max_size=60))
def test_heap_value_state_is_a_dict_per_key_group(cores, ops):
    heap, model = cores.HeapValueState(), {}
    for group, key, value in ops:
        assert heap.get(group, key) == model.get((group, key))
        if value % 4 == 0:
            heap.delete(group, key)
            model.pop((group, key), None)
        else:
            heap.put(group, key, value)
            model[(group, key)] = value
    flat = {(g, k): v for g, table in heap.tables.items() for k, v in table.items()}
    assert flat == model
    assert heap.reads == len(ops)
    assert heap.writes + heap.deletes == len(ops)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50)), min_size=1, max_size=40))
def test_single_key_accepts_sorted_runs_and_rejects_any_return(cores, pairs):
    state = cores.SingleKeyValueState()
    ordered = sorted(pairs)
    for group, key in ordered:
        state.put(group, key, (state.get(group, key) or 0) + 1)
    last = ordered[-1]
    assert state.current == (*last, ordered.count(last))
    if len(set(ordered)) > 1:
        first = ordered[0]
        with pytest.raises(UnsortedInputError, match="input is not sorted by key"):
            state.get(*first)


def test_single_key_incomparable_keys_are_disorder(cores):
    state = cores.SingleKeyValueState()
    state.put(0, "a", 1)
    with pytest.raises(UnsortedInputError, match=r"key 1 \(key group 0\) came after key 'a'"):
        state.put(0, 1, 1)


def test_skewlab_pure_python_takes_the_usual_spellings_and_warns_on_others():
    import warnings

    from skewlab.state.value_state import pure_python_wanted

    assert all(pure_python_wanted(v) for v in ("1", "true", "YES", "on"))
    assert not any(pure_python_wanted(v) for v in ("", "0", "false", "No", "off"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not pure_python_wanted("maybe")
    assert len(caught) == 1 and "'maybe' is neither on" in str(caught[0].message)
