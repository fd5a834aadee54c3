"""Cache admission replayed: LRU against an independent oracle, OPT as the ceiling of every
policy, W-TinyLFU's admission and aging, FLIP-325's exact LRU hit ratios."""

from __future__ import annotations

import random

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.experiments.cache_admission import flip325_trace, zipf_trace
from skewlab.state.cache_admission import (
    POLICIES,
    FrequencySketch,
    WTinyLfu,
    hits,
    lru_hits,
    opt_hits,
)


def _lru_oracle(trace, capacity):
    """LRU written the slow, obvious way: a list, most recent last."""
    cache, found = [], 0
    for key in trace:
        if key in cache:
            found += 1
            cache.remove(key)
        elif len(cache) == capacity:
            cache.pop(0)
        cache.append(key)
    return found


def _opt_brute(trace, capacity):
    """Belady by brute force: scan the future on every eviction."""
    cache, found = set(), 0
    for i, key in enumerate(trace):
        if key in cache:
            found += 1
            continue
        if len(cache) == capacity:
            future = trace[i + 1 :]
            cache.remove(
                max(sorted(cache), key=lambda k: future.index(k) if k in future else len(trace))
            )
        cache.add(key)
    return found


@pytest.mark.parametrize("seed", range(5))
def test_lru_and_opt_equal_their_slow_oracles(seed):
    rng = random.Random(seed)
    trace = [rng.choice(range(12)) for _ in range(300)]
    for capacity in (1, 3, 7):
        assert lru_hits(trace, capacity) == _lru_oracle(trace, capacity)
        assert opt_hits(trace, capacity) == _opt_brute(trace, capacity)


@pytest.mark.parametrize("skew", [0.8, 1.2])
def test_opt_is_the_ceiling_of_every_policy(skew):
    trace = zipf_trace(20_000, 2_000, skew, seed=3)
    for capacity in (50, 200):
        found = {p: hits(trace, capacity, p) for p in POLICIES}
        assert found["opt"] >= found["lru"] and found["opt"] >= found["tinylfu"]


def test_flip325_lru_hits_0_50_100_percent():
    trace = flip325_trace(100_000)
    assert lru_hits(trace, 250) == 0
    assert lru_hits(trace, 500) == len(trace) // 2
    assert lru_hits(trace, 1_000) == len(trace) - 1_000  # every key missed once, then hit


def test_tinylfu_keeps_the_hot_keys_a_scan_would_flush():
    hot = [f"hot-{i}" for i in range(40)]
    trace = []
    for block in range(200):  # the hot keys again and again, each block followed by a scan
        trace += hot + [f"cold-{block}-{i}" for i in range(60)]
    lru, tinylfu = lru_hits(trace, 64), hits(trace, 64, "tinylfu")
    assert lru == 0  # 100 distinct keys between two uses of a hot key: LRU keeps none
    assert tinylfu >= 0.9 * len(hot) * 199  # TinyLFU keeps them after the first block


def test_the_sketch_counts_up_to_15_and_halves_after_its_sample():
    sketch = FrequencySketch(capacity=4)  # sample: 40 increments
    for _ in range(20):
        sketch.increment("a")
    assert sketch.estimate("a") == 15  # 4-bit counters
    assert sketch.additions == 15  # a full counter counts no more
    for i in range(24):
        sketch.increment(f"k{i}")
    assert sketch.resets == 0
    sketch.increment("last")
    assert sketch.resets == 1 and sketch.estimate("a") == 7


def test_a_cache_never_holds_more_than_its_entries():
    cache = WTinyLfu(10)
    for key in zipf_trace(5_000, 500, 1.0):
        cache.access(key)
        assert len(cache) <= 10


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: hits([1], 5, "fifo"), "unknown cache policy (--cache-policy) 'fifo'"),
        (lambda: hits([1], 0, "lru"), "capacity (cache entries) must be a whole number >= 1"),
        (lambda: WTinyLfu(0), "capacity must be a whole number >= 1"),
    ],
)
def test_bad_input_is_refused_with_one_line(call, message):
    with pytest.raises(SkewlabInputError) as info:
        call()
    assert message in str(info.value) and "\n" not in str(info.value)
