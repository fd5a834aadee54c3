"""FLIP-140's WordCount experiment end to end at toy sizes (real Spark, real RocksDB)."""

from __future__ import annotations

import pytest

from skewlab.experiments import sorted_input


def test_sorted_experiment_counts_right_and_reports_memory_at_two_k(spark):
    key_type = "string"  # int keys: tests/strategies/test_count.py
    result = sorted_input.run_experiment(
        "tiny", key_type=key_type, n=10_000, k=1_000, progress=False, spark=spark
    )
    s = result.summary
    assert s["all_digests_match"]
    assert [t["strategy"] for t in s["by_strategy"]] == list(sorted_input.STRATEGY_ORDER)
    for name in ("rocksdb_over_sorted", "heap_over_sorted", "sorted_over_sort_group"):
        assert s[name] > 0 and s[name + "_e2e"] > 0
    assert s["spark_sql_over_sorted"] > 0
    assert set(s["peak_memory_bytes_by_k"]["sorted"]) == {"1000", "10"}
    assert s["seed_ratios"]["rocksdb_over_sorted"] == pytest.approx(116_894 / 25_007)
    assert sorted_input.seed_ratios("int")["rocksdb_over_sorted"] == pytest.approx(114_884 / 15_410)
    assert "seed" in sorted_input.format_summary(result)
