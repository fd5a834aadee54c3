"""The W-TinyLFU write-back cache -- compiled and pure-Python alike -- against two independent
oracles: the replayed policy (:mod:`skewlab.state.cache_admission`) for which keys hit, and a
plain dict of true counts for what the store and the cache hold together."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.state import value_state_python
from skewlab.state.cache_admission import WTinyLfu, hits, segment_sizes


def _count(cores, trace, capacity):
    """A count per key through the cache (get, then put), as the keyed count operator does."""
    store: dict = {}
    writes: list = []

    def write(group, key, value):
        store[key] = value
        writes.append(key)

    cache = cores.WriteBackTinyLfu(capacity, lambda g, k: store.get(k), write)
    for key in trace:
        cache.put(0, key, (cache.get(0, key) or 0) + 1)
    return cache, store, writes


def _zipf(n, keys, s, seed):
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** s for i in range(keys)]
    return rng.choices(range(keys), weights=weights, k=n)


@pytest.mark.parametrize(
    ("capacity", "keys", "s"),
    [(1, 5, 1.0), (2, 4, 1.0), (3, 20, 1.0), (50, 2_000, 0.8), (250, 5_000, 1.2)],
)
def test_hits_are_the_replayed_policys_and_counts_are_exact(cores, capacity, keys, s):
    trace = _zipf(20_000, keys, s, seed=capacity)
    cache, store, _ = _count(cores, trace, capacity)
    replay = WTinyLfu(capacity)
    assert cache.hits == sum(replay.access(k) for k in trace)
    assert cache.hits == hits(trace, capacity, "tinylfu")
    assert (cache.admitted, cache.rejected) == (replay.admitted, replay.rejected)
    assert cache.hits + cache.misses == len(trace)
    assert len(cache) <= capacity and cache.segments[0] <= segment_sizes(capacity)[0]
    # what the store holds, overlaid with what is still dirty in the cache: the true counts
    truth: dict = {}
    for key in trace:
        truth[key] = truth.get(key, 0) + 1
    held = {**store, **{k: v for _, k, v in cache.dirty_entries()}}
    assert held == truth


@settings(max_examples=60, deadline=None)
@given(
    capacity=st.integers(1, 12),
    ops=st.lists(st.tuples(st.sampled_from("gpd"), st.integers(0, 30)), max_size=300),
)
def test_any_mix_of_get_put_delete_loses_no_write(cores, capacity, ops):
    """Every value put is readable afterwards (from the cache or the store) until deleted."""
    store: dict = {}
    cache = cores.WriteBackTinyLfu(
        capacity, lambda g, k: store.get(k), lambda g, k, v: store.__setitem__(k, v)
    )
    truth: dict = {}
    for op, key in ops:
        if op == "g":
            assert cache.get(0, key) == truth.get(key)
        elif op == "p":
            truth[key] = truth.get(key, 0) + 1
            cache.put(0, key, truth[key])
        else:
            cache.delete(0, key)
            store.pop(key, None)
            truth.pop(key, None)
        assert len(cache) <= capacity
        assert cache.dirty_count == len(cache.dirty_entries())
    cache.dirty_entries(mark_clean=True)  # a checkpoint: the caller writes them
    assert cache.dirty_count == 0


def test_a_scan_of_cold_keys_does_not_flush_the_hot_ones(cores):
    """FLIP-325's weakness: LRU admits every key. Hot keys, then a scan of 1,000 cold ones,
    then the hot keys again: W-TinyLFU keeps them, LRU misses every one."""
    hot = list(range(8)) * 20
    trace = hot + list(range(1_000, 2_000)) + list(range(8))
    cache, _, _ = _count(cores, trace, capacity=100)
    replay = WTinyLfu(100)
    before = sum(replay.access(k) for k in hot + list(range(1_000, 2_000)))
    assert cache.hits - before == 8
    assert hits(trace, 100, "lru") == len(hot) - 8  # LRU: the hot keys' repeats only


def test_the_compiled_and_python_twins_write_back_the_same_keys(cores):
    trace = _zipf(5_000, 500, 1.0, seed=7)
    _, _, writes = _count(cores, trace, 40)
    _, _, python_writes = _count(value_state_python, trace, 40)
    assert writes == python_writes


@pytest.mark.parametrize(("entries", "batch"), [(0, 1), (5, 2)])
def test_bad_sizes_are_refused(cores, entries, batch):
    with pytest.raises(SkewlabInputError, match="max_entries|write_batch"):
        cores.WriteBackTinyLfu(entries, lambda g, k: None, lambda g, k, v: None, None, batch)


def test_store_errors_propagate_and_leave_the_entry_cached(cores):
    def fail(group, key, value):
        raise OSError("disk full")

    cache = cores.WriteBackTinyLfu(1, lambda g, k: None, fail)
    cache.put(0, "a", 1)
    with pytest.raises(OSError, match="disk full"):
        cache.put(0, "b", 1)  # evicting dirty "a" (no main cache) writes it back: fails
    assert "a" in cache and cache.dirty_count >= 1
