"""FLIP-325's experiment end to end at toy sizes (real Spark, real RocksDB).

No timed assertions: speed is what ``skewlab bench cache`` prints. These check that every run is
correct (counts against an oracle) and that the summary carries the seed's hit ratios.
"""

from __future__ import annotations

import pytest

from skewlab.experiments import cache
from skewlab.viz.state_cache import zero_hit_cost_table


def test_cache_experiment_reproduces_the_seeds_hit_ratios(spark):
    result = cache.run_experiment(
        "tiny", n=20_000, sweep_n=5_000, sweep_sizes=(1000,), costs_n=5_000, progress=False,
        spark=spark,
    )  # fmt: skip
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
