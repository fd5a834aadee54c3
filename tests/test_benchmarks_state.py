"""The FLIP-325 / FLIP-140 benchmarks end to end at toy sizes (real Spark, real RocksDB).

No timed assertions: speed is what ``skewlab bench ...`` prints. These check that every run is
correct (counts against an oracle), that the summaries carry their keys, and bad input.
"""

from __future__ import annotations

import json

import pytest

from skewlab import paths
from skewlab.benchmarks import cache, value_state
from skewlab.benchmarks import sorted as sorted_bench
from skewlab.charts_state import value_state_table, zero_hit_cost_table
from skewlab.cli import main
from skewlab.errors import SkewlabInputError


def test_cache_experiment_reproduces_the_seeds_hit_ratios(spark):
    result = cache.run_experiment(
        "quick",
        1,
        n=20_000,
        sweep_n=5_000,
        sweep_sizes=(1000,),
        costs_n=5_000,
        progress=False,
        spark=spark,
    )
    s = result.summary
    assert s["all_digests_match"]
    assert s["hit_ratio_250"] == 0.0
    assert s["hit_ratio_500"] == 0.5
    assert s["hit_ratio_1000"] == pytest.approx(0.95)  # 1,000 warm-up misses of 20,000
    for size in (250, 500, 1000):
        assert s[f"speedup_{size}"] > 0
    assert [p["cache_size"] for p in s["sweep"]] == [None, 1000]
    assert s["sweep"][1]["hit_ratio"] == pytest.approx(0.8)  # 5,000 records, 1,000 warm-up
    assert "21.6x" in cache.format_summary(result)
    seed_rows = [r for r in result.rows if r["part"] == "seed"]
    assert {r["cache_size"] for r in seed_rows} == {None, 250, 500, 1000}
    assert all(r["records"] == 20_000 for r in seed_rows)
    # the 0%-hit record taken apart: shares are of RocksDB alone's per-record cost
    costs = s["zero_hit_costs"]
    assert (costs["records"], costs["max_entries"]) == (5_000, 250)
    assert costs["bookkeeping_share"] == pytest.approx(
        costs["bookkeeping_ns"] / costs["rocksdb_same_key_ns"]
    )
    extra = costs["rocksdb_evicted_key_ns"] - costs["rocksdb_same_key_ns"]
    assert costs["write_locality_share"] == pytest.approx(extra / costs["rocksdb_same_key_ns"])
    assert "bookkeeping" in cache.format_summary(result)
    table = zero_hit_cost_table(result)
    assert len(table) == 4
    assert table["ns"].iloc[0] == round(costs["rocksdb_same_key_ns"])
    assert table["% of RocksDB alone"].iloc[1] == round(100 * costs["bookkeeping_share"], 1)


def test_sorted_experiment_counts_right_and_reports_memory_at_two_k(spark):
    key_type = "string"  # int keys: tests/test_wordcount.py
    result = sorted_bench.run_experiment(
        "quick", 1, key_type=key_type, n=10_000, k=1_000, progress=False, spark=spark
    )
    s = result.summary
    assert s["all_digests_match"]
    assert [t["strategy"] for t in s["by_strategy"]] == list(sorted_bench.STRATEGY_ORDER)
    for name in ("rocksdb_over_sorted", "heap_over_sorted", "sorted_over_sort_group"):
        assert s[name] > 0 and s[name + "_e2e"] > 0
    assert s["spark_sql_over_sorted"] > 0
    assert set(s["peak_memory_bytes_by_k"]["sorted"]) == {"1000", "10"}
    assert s["seed_ratios"]["rocksdb_over_sorted"] == pytest.approx(116_894 / 25_007)
    assert sorted_bench.seed_ratios("int")["rocksdb_over_sorted"] == pytest.approx(114_884 / 15_410)
    assert "seed" in sorted_bench.format_summary(result)


def test_value_state_experiment_measures_every_backend_and_operation():
    result = value_state.run_experiment("quick", 1, keys=2_000, progress=False)
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


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sorted_bench.run_experiment("quick", 1, n=10, k=11), "K=11 > N=10"),
        (lambda: sorted_bench.run_experiment("quick", 1, n=0, k=1), "N \\(records\\)"),
        (lambda: sorted_bench.run_experiment("quick", 1, k=0), "K \\(distinct keys\\)"),
        (lambda: sorted_bench.run_experiment("quick", 1, key_type="uuid"), "unknown key type"),
        (lambda: sorted_bench.run_experiment("huge", 1), "unknown profile"),
        (lambda: cache.run_experiment("quick", 1, sizes=(250, -1)), "cache size"),
        (lambda: cache.run_experiment("quick", 1, costs_n=-1), "costs N"),
        (lambda: cache.run_experiment("quick", 0), "--runs must be at least 1"),
        (lambda: value_state.run_experiment("quick", 1, keys=0), "keys must be"),
    ],
)
def test_bad_benchmark_input_is_refused_before_any_work(call, message):
    with pytest.raises(SkewlabInputError, match=message):
        call()


def test_cli_knows_the_new_experiments_and_keeps_bufferings_options(capsys):
    assert main(["bench", "sorted", "--key-type", "float", "--json"]) == 2
    assert "unknown key type 'float'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["bench", "buffering", "--profile", "quick", "--runs", "1", "--parallelism", "2",
              "--key-type", "int"])  # fmt: skip
    assert info.value.code == 2  # --key-type belongs to sorted only


def test_cli_value_state_prints_one_json_object(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(
        value_state, "PROFILE_SETTINGS", {"quick": {"keys": 500, "runs": 1}, "full": {}}
    )
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    assert main(["bench", "value-state", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["experiment"] == "value-state"
    assert {"heap_over_rocksdb_add", "single_key_over_heap_add"} <= set(payload["summary"])
    assert len(list(tmp_path.glob("value-state-quick-*.json"))) == 1
