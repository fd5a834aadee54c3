"""Seed 000's buffers at operator level: every record's latency runs from its own arrival, and
the three buffers leave the same registers in keyed state."""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import pytest

from skewlab.aggregates.stats_state import SINGLE_VIEW_COLUMNS, StatsState
from skewlab.engine.config import JobConfig
from skewlab.engine.operator import OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import StageSpec
from skewlab.operators.buffers import BUFFERS, VectorizedBuffer
from skewlab.state import PickleSerializer, StateBackend
from skewlab.state.java_hash import java_string_hash_array
from skewlab.state.key_groups import assign_to_key_group_array

N, KEYS, SPACING_MS, OLDEST_MS = 300, 7, 1.0, 400.0
PRECISION = 10


def _context(kind: str) -> tuple[OperatorContext, object]:
    stage = StageSpec(
        "1:buffer", "tweet_id", BUFFERS[kind], final=True, serializer=PickleSerializer()
    )
    ctx = OperatorContext(
        stage, JobConfig(parallelism=1, max_parallelism=128, disk_profile=None), 0
    )
    operator = BUFFERS[kind](
        ctx,
        StateBackend("heap"),
        max_count=10 * N,  # nothing flushes before finish()
        trigger_interval_ms=0,
        precision=PRECISION,
    )
    return ctx, operator


def _key_groups(keys: list[str]) -> np.ndarray:
    """Flink's key group of each key (max parallelism 128), as the engine routes it."""
    return assign_to_key_group_array(java_string_hash_array(keys), 128).astype(np.int64)


def _registers(rng: np.random.Generator, n: int) -> dict:
    """``n`` records' single-view registers and ranks, numpy columns."""
    m = 1 << PRECISION
    return {
        SINGLE_VIEW_COLUMNS[0]: rng.integers(0, m, n),
        SINGLE_VIEW_COLUMNS[1]: rng.integers(1, 20, n).astype(np.int8),
        SINGLE_VIEW_COLUMNS[2]: rng.integers(0, m, n),
        SINGLE_VIEW_COLUMNS[3]: rng.integers(1, 20, n).astype(np.int8),
    }


def _columns(kind: str, rng: np.random.Generator):
    keys = [f"t{i % KEYS}" for i in range(N)]
    registers = _registers(rng, N)
    groups = _key_groups(keys)
    if issubclass(BUFFERS[kind], VectorizedBuffer):  # Arrow keys, numpy registers
        cols = {"tweet_id": pa.array(keys), KEY_GROUP: groups, "seq": np.arange(N), **registers}
        return cols, keys, registers
    cols = {c: v.tolist() for c, v in registers.items()}
    return {"tweet_id": keys, KEY_GROUP: groups.tolist(), **cols}, keys, registers


@pytest.mark.parametrize("kind", sorted(BUFFERS))
def test_each_records_latency_runs_from_its_own_arrival(kind):
    ctx, operator = _context(kind)
    cols, keys, registers = _columns(kind, np.random.default_rng(3))
    # records arrived 1 ms apart, the oldest 400 ms ago, the newest ~101 ms ago
    oldest = time.time_ns() - int(OLDEST_MS * 1e6)
    arrivals = oldest + (np.arange(N) * SPACING_MS * 1e6).astype(np.int64)
    began = time.perf_counter()
    operator.process(cols, N, arrivals)
    operator.finish()
    ctx.output.flush_latencies()
    # a slow or busy machine delays every emission alike, by at most this much
    delay_ms = (time.perf_counter() - began) * 1e3
    histogram = ctx.output.histogram
    assert histogram.total == N  # one latency per record
    newest_ms = OLDEST_MS - (N - 1) * SPACING_MS
    low, median, high = (histogram.quantile_ms(q) for q in (0.01, 0.5, 1.0))
    # spread over [newest, oldest] (+ the delay), not every record at its slice's first
    # arrival (which would put all of them at 400 ms and spread them over nothing)
    assert newest_ms - 1 <= low <= newest_ms + delay_ms + 25
    assert OLDEST_MS - 175 <= median <= OLDEST_MS - 125 + delay_ms + 25
    assert OLDEST_MS - 5 <= high <= OLDEST_MS + delay_ms + 50
    assert high - low >= 0.8 * (N - 1) * SPACING_MS

    # and the registers in keyed state are the per-key maxima of the records' registers
    state = operator.state
    for key in sorted(set(keys)):
        expected = StatsState.empty(key, PRECISION)
        for i in (i for i, k in enumerate(keys) if k == key):
            expected.add_view(*(int(registers[c][i]) for c in SINGLE_VIEW_COLUMNS))
        group = int(cols[KEY_GROUP][keys.index(key)])
        assert state.get(group, key) == expected


def _hot_and_cold_slices(rng: np.random.Generator, n: int, slice_size: int):
    """``n`` records: 4 keys of 10 % each, the rest a new key each, in slices."""
    hot = [f"hot-{i}" for i in range(4)]
    keys = [hot[i % 4] if r < 0.4 else f"cold-{i}" for i, r in enumerate(rng.random(n))]
    registers = _registers(rng, n)
    groups = _key_groups(keys)
    for lo in range(0, n, slice_size):
        part = slice(lo, lo + slice_size)
        cols = {
            "tweet_id": pa.array(keys[part]),
            KEY_GROUP: groups[part],
            "seq": np.arange(n)[part],
            **{c: v[part] for c, v in registers.items()},
        }
        yield cols, len(keys[part])


@pytest.mark.parametrize("slice_size", [10_000, 37, 1])
def test_the_hot_key_detector_finds_the_hot_keys_only_whatever_the_slices(slice_size):
    # a sampled detector (one record in DETECTOR_SAMPLING, at random), however the stream is
    # cut into slices; the hot keys come in turn (every 8th record would see only one of them);
    # a key seen once is never hot, a key of 10 % is hot within its first few dozen records,
    # and only the hot keys' records go through the buffer
    from skewlab.operators.buffers import DETECTOR_SAMPLING, HotKeyBuffer

    stage = StageSpec("1:buffer", "tweet_id", HotKeyBuffer, final=True, serializer=None)
    ctx = OperatorContext(
        stage, JobConfig(parallelism=1, max_parallelism=128, disk_profile=None), 0
    )
    operator = HotKeyBuffer(
        ctx, StateBackend("heap"), max_count=100, trigger_interval_ms=0, precision=PRECISION
    )
    n = 3_000
    for cols, size in _hot_and_cold_slices(np.random.default_rng(11), n, slice_size):
        operator.process(cols, size, None)
    operator.finish()
    assert operator.hot == {f"hot-{i}" for i in range(4)}
    assert operator.seen == n
    # every cold record (a key seen once) was read once, as naive reads it; a hot key's
    # records were reduced one by one only until it was sampled twice (one of its records in
    # DETECTOR_SAMPLING is: about 16 of them), then read once per flush
    cold = sum(
        1
        for cols, _ in _hot_and_cold_slices(np.random.default_rng(11), n, n)
        for k in cols["tweet_id"].to_pylist()
        if k.startswith("cold-")
    )
    reads = operator.backend.stats.reads
    assert cold < reads <= cold + 4 * (n // 100 + 1) + 4 * 4 * DETECTOR_SAMPLING
