"""FLIP-140's ValueState micro-benchmark: every backend and operation, every pass checked."""

from __future__ import annotations

import pytest

from skewlab.experiments import value_state
from skewlab.viz.sorted_input import value_state_table


def test_value_state_experiment_measures_every_backend_and_operation():
    result = value_state.run_experiment("tiny", progress=False)
    assert result.rows[0]["keys"] == 2_000  # the tiny profile's
    s = result.summary
    assert len(result.rows) == 9
    for op in value_state.OPERATIONS:
        assert set(s["ops_per_ms"][op]) == set(value_state.BACKENDS)
        assert all(v > 0 for v in s["ops_per_ms"][op].values())
    assert s["heap_over_rocksdb_add"] > 0 and s["single_key_over_heap_add"] > 0
    # every row has its warm-up pass (valueAdd's: the fresh keys inserted) beside it
    assert all(r["warmup_ops_per_ms"] > 0 for r in result.rows)
    assert s["heap_over_rocksdb_add_first_pass"] == pytest.approx(
        s["warmup_ops_per_ms"]["valueAdd"]["heap"] / s["warmup_ops_per_ms"]["valueAdd"]["rocksdb"]
    )
    assert "warm-up pass" in value_state.format_summary(result)
    table = value_state_table(result)  # whole ops/ms, one row per (operation, backend)
    assert len(table) == 9 and str(table["warm-up pass ops/ms"].dtype) == "Int64"
    add_heap = table[(table["operation"] == "valueAdd") & (table["backend"] == "heap")].iloc[0]
    assert add_heap["ops/ms"] == round(s["ops_per_ms"]["valueAdd"]["heap"])
    assert add_heap["seed ops/ms"] == round(value_state.SEED_OPS_PER_MS["valueAdd"]["heap"])


@pytest.mark.parametrize("backend_name", value_state.BACKENDS)
def test_value_state_passes_are_checked_against_what_they_must_leave(backend_name):
    # measure_backend raises if a valueGet pass misses a key or a valueAdd / valueUpdate pass
    # leaves a wrong value (filled backends hold value - 1, written keys VALUE)
    rates = value_state.measure_backend(backend_name, 300)
    assert set(rates) == set(value_state.OPERATIONS)
    assert all(min(r.values()) > 0 for r in rates.values())


def test_value_state_keys_are_in_sorted_key_group_order():
    groups, keys = value_state.sorted_keys(0, 1_000)
    pairs = list(zip(groups, keys, strict=True))
    assert pairs == sorted(pairs) and sorted(keys) == list(range(1_000))
