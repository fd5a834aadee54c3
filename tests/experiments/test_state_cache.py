"""FLIP-325's experiment end to end at toy sizes (real Spark, real RocksDB).

No timed assertions: speed is what ``skewlab bench cache`` prints. These check that every run is
correct (counts against an oracle, every emission against the final counts), that the sides do
the same work outside the cache, and that the summary carries the seed's hit ratios.
"""

from __future__ import annotations

import pytest

from skewlab.experiments import state_cache
from skewlab.experiments.claims import chapter_claims, claim
from skewlab.viz.state_cache import cache_table, format_summary, zero_hit_cost_table


@pytest.fixture(scope="module")
def result(spark):
    return state_cache.run_experiment(
        "tiny", n=20_000, sweep_n=5_000, sweep_sizes=(1000,), costs_n=5_000, progress=False,
        checkpoint_interval_ms=1, write_batch=64, spark=spark,
    )  # fmt: skip


def test_every_side_counts_right_and_emits_every_update(result):
    s = result.summary
    assert s["all_digests_match"] and s["all_emissions_match"]
    for r in result.rows:
        assert r["records_emitted"] == r["records"] == (20_000 if r["part"] == "seed" else 5_000)


def test_the_seeds_lru_and_the_batched_write_back_reproduce_the_seeds_hit_ratios(result):
    s = result.summary
    for suffix in ("", "_batched"):
        assert s[f"hit_ratio_250{suffix}"] == 0.0
        assert s[f"hit_ratio_500{suffix}"] == 0.5
        assert s[f"hit_ratio_1000{suffix}"] == pytest.approx(0.95)  # 1,000 warm-up misses
    assert [p["cache_size"] for p in s["sweep"]] == [None, 1000]
    assert s["sweep"][1]["hit_ratio"] == pytest.approx(0.8)  # 5,000 records, 1,000 warm-up


def test_like_for_like_the_sides_differ_only_in_the_cache(result):
    seed_rows = [r for r in result.rows if r["part"] == "seed"]
    assert {(r["side"], r["cache_size"]) for r in seed_rows} == {("rocksdb", None)} | {
        (side, size) for side in ("lru", "lru_batched") for size in (250, 500, 1000)
    }
    # the same input columns, the same per-record emission, checkpoints on every side
    assert len({tuple(r["operator_inputs"]) for r in seed_rows}) == 1
    # (timers fire between Arrow batches of 10,000 records; a 0%-hit batch takes well over 1 ms,
    # the 100%-hit runs may end before the first timer is due)
    assert all(r["checkpoints"] >= 1 for r in seed_rows if r["cache_size"] in (None, 250))
    assert {r["write_batch"] for r in seed_rows if r["side"] == "lru_batched"} == {64}
    assert {r["write_batch"] for r in seed_rows if r["side"] == "lru"} == {1}
    # at 0% hits every record reads RocksDB, with or without a cache
    for r in seed_rows:
        if r["cache_size"] in (None, 250):
            assert r["state_reads"] == 20_000


def test_headline_speedups_are_of_job_throughput_round_by_round(result):
    s = result.summary
    assert s["headline_measure"] == state_cache.HEADLINE_MEASURE == "job_records_per_second"
    seed_rows = {(r["side"], r["cache_size"]): r for r in result.rows if r["part"] == "seed"}
    base = seed_rows[("rocksdb", None)]
    for side, suffix in (("lru", ""), ("lru_batched", "_batched")):
        for size in (250, 500, 1000):
            mine = seed_rows[(side, size)]
            expected = mine["job_records_per_second"] / base["job_records_per_second"]
            assert s[f"speedup_{size}{suffix}"] == pytest.approx(expected)
            assert mine["job_records_per_second"] == pytest.approx(
                mine["records"] / mine["wall_seconds"]
            )
            cpu = mine["operator_cpu_records_per_second"] / base["operator_cpu_records_per_second"]
            assert s[f"operator_speedup_{size}{suffix}"] == pytest.approx(cpu)
    table = cache_table(result)
    assert list(table["side"]) == ["RocksDB, no cache"] + ["FLIP-325 LRU", "batched write-back"] * 3
    text = format_summary(result)
    assert "21.6x" in text and "job throughput" in text


def test_zero_hit_costs_are_taken_apart_for_both_write_backs(result):
    costs = result.summary["zero_hit_costs"]
    assert (costs["records"], costs["max_entries"], costs["write_batch"]) == (5_000, 250, 64)
    table = zero_hit_cost_table(result)
    assert table["ns"].iloc[0] == round(costs["rocksdb_same_key_ns"])
    rows = dict(zip(table["per record"], table["ns"], strict=True))
    batched = [what for what in rows if "write batches of 64" in what]
    assert batched and rows[batched[0]] == round(
        costs["rocksdb_evicted_batched_ns"] - costs["rocksdb_same_key_ns"]
    )


def test_bad_settings_are_refused_before_any_work():
    from skewlab.errors import SkewlabInputError

    with pytest.raises(SkewlabInputError, match="write batch"):
        state_cache.run_experiment("tiny", write_batch=1, progress=False)
    with pytest.raises(SkewlabInputError, match="cache size"):
        state_cache.run_experiment("tiny", sizes=(0,), progress=False)


def test_the_summary_carries_every_headline_ratio_bench_compare_reads(result):
    from skewlab.experiments.chapters import headline_ratios

    assert all(result.summary[key] is not None for key in headline_ratios("state_cache"))


def test_the_chapters_claims_read_this_tiny_run(result):
    outcomes = {c.id: c.evaluate(result) for c in chapter_claims("state_cache")}
    # the hit ratios follow from LRU and the key sequence alone: the staircase must hold, at
    # any size (1,000 entries: 95 % here, the first 1,000 records being warm-up misses)
    staircase = outcomes["hit_ratio_staircase"]
    assert staircase.figures["h250"] == 0.0 and staircase.figures["h500"] == 0.5
    assert not staircase.held  # 95 % is not "all": the claim is about the seed's 20,000,000
    full = {"summary": {**result.summary, "hit_ratio_1000": 0.99995}}
    assert claim("state_cache", "hit_ratio_staircase").evaluate(full).held
    parts = outcomes["zero_hit_parts_account_for_loss"]
    costs = result.summary["zero_hit_costs"]
    assert parts.figures["predicted"] == pytest.approx(
        100 * (costs["bookkeeping_share"] + costs["write_locality_share"])
    )
    assert parts.figures["measured"] == pytest.approx(100 * (1 / result.summary["speedup_250"] - 1))
    assert outcomes["cache_wins_at_all_hits"].held == (result.summary["speedup_1000"] > 1)
