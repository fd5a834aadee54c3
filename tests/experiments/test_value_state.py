"""FLIP-140's ValueState micro-benchmark: every backend and operation, every pass checked."""

from __future__ import annotations

import pytest

from skewlab.experiments import value_state
from skewlab.experiments.chapters import headline_ratios
from skewlab.viz.sorted_input import format_value_state_summary, value_state_table


def test_value_state_experiment_measures_every_backend_and_operation():
    result = value_state.run_experiment("tiny", runs=2, progress=False)
    assert result.rows[0]["keys"] == 2_000  # the tiny profile's
    s = result.summary
    assert len(result.rows) == 2 * 9
    assert s["headline_measure"] == value_state.HEADLINE_MEASURE == "ops_per_wall_ms"
    for op in value_state.OPERATIONS:
        assert set(s["ops_per_wall_ms"][op]) == set(value_state.BACKENDS)
        for backend in value_state.BACKENDS:
            runs = sorted(
                r["ops_per_wall_ms"]
                for r in result.rows
                if r["operation"] == op and r["backend"] == backend
            )
            assert s["ops_per_wall_ms_min"][op][backend] == runs[0]
            assert s["ops_per_wall_ms_max"][op][backend] == runs[-1]
    # the headline ratios are of the headline measure; the CPU ones are beside them
    heap = s["ops_per_wall_ms"]["valueAdd"]["heap"]
    assert s["heap_over_rocksdb_add"] == heap / s["ops_per_wall_ms"]["valueAdd"]["rocksdb"]
    cpu = s["ops_per_cpu_ms"]["valueAdd"]
    assert s["heap_over_rocksdb_add_cpu"] == cpu["heap"] / cpu["rocksdb"]
    assert s["seed_ratios"]["single_key_over_heap_get"] == pytest.approx(30861.293 / 12718.518)
    assert "warm-up pass" in format_value_state_summary(result)
    assert all(s[key] is not None for key in headline_ratios("value_state"))  # bench compare's
    table = value_state_table(result)  # whole ops/ms, one row per (operation, backend)
    assert len(table) == 9 and str(table["warm-up pass ops/ms"].dtype) == "Int64"
    add_heap = table[(table["operation"] == "valueAdd") & (table["backend"] == "heap")].iloc[0]
    assert add_heap["ops/ms"] == round(heap)
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
