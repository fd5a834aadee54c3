"""The compiled count loops against collections.Counter, over every backend's core."""

from __future__ import annotations

import doctest
import random
from collections import Counter, OrderedDict

import pytest

import skewlab.operators.count_loops as count_loops
from skewlab.errors import UnsortedInputError
from skewlab.operators.count_loops import (
    get_each,
    keyed_count,
    put_each,
    sort_group_count,
    sorted_count,
)
from skewlab.state import create_backend
from skewlab.state.key_groups import assign_to_key_group

NO_KEY = object()


def words(n=3_000, k=40, seed=3, with_none=True):
    rng = random.Random(seed)
    keys = [rng.randrange(k) if rng.random() > 0.05 or not with_none else None for _ in range(n)]
    groups = [0 if key is None else assign_to_key_group(key, 128) for key in keys]
    return keys, groups


def test_doctests_of_the_compiled_module_pass():
    result = doctest.testmod(count_loops)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize(
    "backend,options",
    [("heap", {}), ("rocksdb", {}), ("cached", {"max_entries": 7}), ("cached", {"max_entries": 0})],
)
def test_keyed_count_matches_counter_on_every_backend(backend, options):
    keys, groups = words()
    expected = Counter(k for k in keys if k is not None)
    with create_backend(backend, **options) as state:
        rejected = 0
        for lo in range(0, len(keys), 1000):  # batch by batch, as the runtime hands them over
            rejected += keyed_count(
                keys[lo : lo + 1000], groups[lo : lo + 1000], state.value_state()
            )
        assert rejected == keys.count(None)
        stored = {key: count for _, key, count in state.items(range(128))}
        assert stored == expected
        stats = state.stats
        processed = len(keys) - rejected
        if backend == "cached" and options["max_entries"]:
            hits = _lru_hits([k for k in keys if k is not None], options["max_entries"])
            assert (stats.cache_hits, stats.cache_misses) == (hits, processed - hits)
            assert stats.reads == processed - hits  # only the misses reached RocksDB
        else:
            assert (stats.reads, stats.writes) == (processed, processed)


def _lru_hits(keys: list, size: int) -> int:
    """Hits of a plain LRU of ``size`` entries over the key sequence (the oracle)."""
    cache: OrderedDict = OrderedDict()
    hits = 0
    for key in keys:
        if key in cache:
            hits += 1
            cache.move_to_end(key)
        else:
            cache[key] = None
            if len(cache) > size:
                cache.popitem(last=False)
    return hits


def test_keyed_count_with_tracked_keys_counts_per_key():
    keys, groups = words(with_none=False)
    with create_backend("heap", track_keys=True) as state:
        keyed_count(keys, groups, state.value_state())
        assert state.stats.reads_per_key == Counter(keys)


def sorted_words(n=3_000, k=40):
    keys, groups = words(n, k, with_none=False)
    pairs = sorted(zip(groups, keys, strict=True))
    return [k for _, k in pairs], [g for g, _ in pairs]


def run_sorted(keys, groups, batch=700):
    state = create_backend("single_key").value_state()
    out, current, group, rejected = [], NO_KEY, -1, 0
    for lo in range(0, len(keys), batch):
        current, group, r = sorted_count(
            keys[lo : lo + batch],
            groups[lo : lo + batch],
            state,
            lambda k, c: out.append((k, c)),
            current,
            group,
            NO_KEY,
        )
        rejected += r
    if current is not NO_KEY:
        out.append((current, state.get(group, current)))
    return out, rejected


def run_sort_group(keys, groups, batch=700):
    out, current, group, count, rejected = [], NO_KEY, -1, 0, 0

    def unsorted(key, g, previous, previous_group):
        return UnsortedInputError(f"{key} after {previous}")

    for lo in range(0, len(keys), batch):
        current, group, count, r = sort_group_count(
            keys[lo : lo + batch],
            groups[lo : lo + batch],
            lambda k, c: out.append((k, c)),
            unsorted,
            current,
            group,
            count,
            NO_KEY,
        )
        rejected += r
    if current is not NO_KEY:
        out.append((current, count))
    return out, rejected


@pytest.mark.parametrize("run", [run_sorted, run_sort_group])
def test_sorted_loops_emit_each_key_once_with_its_count(run):
    keys, groups = sorted_words()
    out, rejected = run(keys, groups)
    assert rejected == 0
    assert len(out) == len(set(keys))  # one emission per key, runs spanning batches included
    assert dict(out) == Counter(keys)


@pytest.mark.parametrize("run", [run_sorted, run_sort_group])
def test_sorted_loops_reject_none_keys(run):
    keys, groups = sorted_words()
    keys, groups = [None, *keys[:100], None], [0, *groups[:100], 0]
    out, rejected = run(keys, groups)
    assert rejected == 2 and dict(out) == Counter(k for k in keys if k is not None)


@pytest.mark.parametrize("run", [run_sorted, run_sort_group])
def test_sorted_loops_fail_on_unsorted_input_never_with_a_wrong_count(run):
    keys, groups = sorted_words()
    keys, groups = keys + keys[:1], groups + groups[:1]  # the first key comes back at the end
    with pytest.raises(UnsortedInputError):
        run(keys, groups)


def test_loops_refuse_columns_of_different_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        keyed_count([1, 2], [0], create_backend("heap").value_state())


@pytest.mark.parametrize("backend", ["heap", "rocksdb", "single_key"])
def test_put_each_and_get_each_are_value_state_add_and_get(backend):
    keys = list(range(50))
    groups = sorted(assign_to_key_group(k, 128) for k in keys)
    pairs = sorted(zip(groups, keys, strict=True))
    groups, keys = [g for g, _ in pairs], [k for _, k in pairs]
    with create_backend(backend) as state:
        core = state.value_state()
        put_each(core, groups, keys, 7)
        assert state.stats.writes == 50
        found = get_each(core, groups, keys) if backend != "single_key" else None
        if backend != "single_key":
            assert found == 50 and state.stats.reads == 50
        else:  # only the current (last) key is kept
            assert list(state.items(range(128))) == [(groups[-1], keys[-1], 7)]
