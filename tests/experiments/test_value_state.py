"""FLIP-140's ValueState micro-benchmark: every backend and operation, every pass checked."""

from __future__ import annotations

import pytest

from skewlab.experiments import value_state
from skewlab.experiments.chapters import headline_ratios
from skewlab.experiments.claims import HELD, INCONCLUSIVE, NOT_HELD, claim
from skewlab.experiments.intervals import Estimate
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
    # the headline ratios are of the headline measure, the median of the runs' own ratios (a
    # run measures the backends back to back), with their interval; the CPU ones beside them
    heap = s["ops_per_wall_ms"]["valueAdd"]["heap"]

    def by_run(field, backend):
        return [
            r[field]
            for r in sorted(result.rows, key=lambda r: r["run"])
            if r["operation"] == "valueAdd" and r["backend"] == backend
        ]

    for key, field in (
        ("heap_over_rocksdb_add", "ops_per_wall_ms"),
        ("heap_over_rocksdb_add_cpu", "ops_per_cpu_ms"),
    ):
        pairs = zip(by_run(field, "heap"), by_run(field, "rocksdb"), strict=True)
        ratios = [a / b for a, b in pairs]
        assert s[key] == pytest.approx(sum(ratios) / 2)  # the median of two runs
        interval = Estimate.from_json(s["intervals"][key])
        assert interval.runs == 2 and interval.holds(s[key])
        assert (interval.low, interval.high) == pytest.approx((min(ratios), max(ratios)))
    assert s["seed_ratios"]["single_key_over_heap_get"] == pytest.approx(30861.293 / 12718.518)
    text = format_value_state_summary(result)
    assert text.startswith("This run (tiny, this machine): ValueState") and "warm-up pass" in text
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


def _result(**ratios):
    """A constructed value_state result: each ratio ``key=(value, low, high)``."""
    summary = {"runs": 5, "intervals": {}}
    for key, (value, low, high) in ratios.items():
        summary[key] = value
        summary["intervals"][key] = {"value": value, "low": low, "high": high, "runs": 5,
                                     "method": "bootstrap"}  # fmt: skip
    return {"experiment": "value_state", "summary": summary}


def test_every_operation_must_clear_one_for_the_claim_to_hold():
    rule = claim("sorted_input", "single_key_beats_heap_ops")
    clear = {f"single_key_over_heap_{op}": (2.6, 2.4, 2.8) for op in ("add", "get", "update")}
    assert rule.evaluate(_result(**clear)).status == HELD
    # one operation whose runs straddle 1: the claim cannot be held on it
    straddles = {**clear, "single_key_over_heap_get": (1.05, 0.9, 1.2)}
    assert rule.evaluate(_result(**straddles)).status == INCONCLUSIVE
    loses = {**clear, "single_key_over_heap_get": (0.7, 0.6, 0.8)}
    assert rule.evaluate(_result(**loses)).status == NOT_HELD
