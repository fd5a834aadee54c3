"""FLIP-325's experiment end to end at toy sizes (real Spark, real RocksDB).

No timed assertions: speed is what ``skewlab bench cache`` prints. These check that every run is
correct (counts against an oracle, every emission against the final counts), that the sides do
the same work outside the cache, that the summary carries the seed's hit ratios and every ratio
with its interval, and -- on constructed results -- that the verdicts follow the intervals and
the job-over-operators bound.
"""

from __future__ import annotations

import pytest

from skewlab.experiments import state_cache
from skewlab.experiments.claims import (
    HELD,
    INCONCLUSIVE,
    MEASUREMENT_ERROR,
    NOT_HELD,
    chapter_claims,
    claim,
)
from skewlab.experiments.intervals import Estimate
from skewlab.viz.state_cache import (
    cache_table,
    describe_batched,
    format_summary,
    zero_hit_cost_table,
    zero_hit_costs_shown,
)


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
            # one round: its ratio, and no interval of its own
            assert Estimate.from_json(s["intervals"][f"speedup_{size}{suffix}"]).runs == 1
            assert mine["job_records_per_second"] == pytest.approx(
                mine["records"] / mine["wall_seconds"]
            )
            cpu = mine["operator_cpu_records_per_second"] / base["operator_cpu_records_per_second"]
            assert s[f"operator_speedup_{size}{suffix}"] == pytest.approx(cpu)
        batched = seed_rows[("lru_batched", 250)]["job_records_per_second"]
        lru = seed_rows[("lru", 250)]["job_records_per_second"]
        assert s["batched_over_lru_250"] == pytest.approx(batched / lru)
    table = cache_table(result)
    assert list(table["side"]) == ["RocksDB, no cache"] + ["FLIP-325 LRU", "batched write-back"] * 3
    assert cache_table(result, caption=True).caption.startswith("This run (tiny, this machine)")
    text = format_summary(result)
    assert text.startswith("This run (tiny, this machine)")
    assert "21.6x" in text and "job throughput" in text and "breakdown" in text


def _rounds(rocksdb, lru, batched):
    """Rows of constructed rounds at 250 entries: each side's job throughput per round (the
    operators' the same, doubled)."""
    rows = []
    for run, values in enumerate(zip(rocksdb, lru, batched, strict=True)):
        for (side, size), value in zip(
            (("rocksdb", None), ("lru", 250), ("lru_batched", 250)), values, strict=True
        ):
            rows.append({
                "part": "seed", "run": run, "side": side, "cache_size": size, "records": 100,
                "hit_ratio": None if size is None else 0.0, "state_cache_hit_ratio": None,
                "job_records_per_second": value, "operator_records_per_second": 2 * value,
                "operator_cpu_records_per_second": 2 * value, "state_reads": 100,
                "state_writes": 100, "digest_matches_oracle": True, "emissions_match": True,
            })  # fmt: skip
    return rows


def test_every_ratio_is_the_median_of_the_rounds_ratios_with_its_interval():
    s = state_cache.summarize(_rounds([10.0, 8.0, 12.0], [9.0, 6.0, 12.0], [10.0, 7.0, 12.6]))
    # the rounds' ratios to RocksDB alone: 0.9, 0.75, 1.0 -- median 0.9, interval [0.75..1.0]
    speedup = Estimate.from_json(s["intervals"]["speedup_250"])
    assert s["speedup_250"] == speedup.value == pytest.approx(0.9)
    assert (speedup.low, speedup.high, speedup.runs) == pytest.approx((0.75, 1.0, 3))
    assert s["intervals"]["operator_wall_speedup_250"]["value"] == pytest.approx(0.9)
    # the batched write-back over the LRU, round by round: 10/9, 7/6, 1.05
    batched = Estimate.from_json(s["intervals"]["batched_over_lru_250"])
    assert batched.value == pytest.approx(10 / 9)
    assert (batched.low, batched.high) == pytest.approx((1.05, 7 / 6))
    assert s["speedup_250_spread"] == {"min": 0.75, "median": 0.9, "max": 1.0}


def test_the_batched_write_back_runs_only_at_its_sizes(spark):
    small = state_cache.run_experiment(
        "tiny", n=2_000, batched_sizes=(250,), sweep_sizes=(), costs_n=0, progress=False,
        spark=spark,
    )  # fmt: skip
    sides = {(r["side"], r["cache_size"]) for r in small.rows}
    assert ("lru_batched", 250) in sides and ("lru_batched", 500) not in sides
    assert "batched_over_lru_250" in small.summary and "batched_over_lru_500" not in small.summary
    text = describe_batched(small)  # no breakdown ran: the job's figures alone
    assert "breakdown" not in text and "1 round of 2,000 records" in text


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
    # the predictions: each run's parts summed, the median over the runs, with its interval
    s = result.summary
    for key, name in state_cache.PREDICTED.items():
        assert s[key] == costs[name]
        assert Estimate.from_json(s["intervals"][key]).holds(s[key])
    # one run: the change is that run's difference of the two predictions
    assert costs["runs"] == 1
    assert costs["predicted_batched_change_share"] == pytest.approx(
        costs["predicted_batched_loss_share"] - costs["predicted_loss_share"]
    )


def test_a_run_without_the_breakdown_shows_the_references(result, capsys):
    """A size that leaves the 0%-hit breakdown out (quick) shows the shipped reference's, and
    says so; a run that measured one shows its own."""
    from skewlab.experiments.references import load_reference

    assert zero_hit_costs_shown(result) is result
    assert capsys.readouterr().out.startswith("this run's 0%-hit breakdown")
    without = {**result.to_json_dict(), "size": "quick"}
    without["summary"] = {**without["summary"], "zero_hit_costs": None}
    shown = zero_hit_costs_shown(without)
    reference = load_reference("state_cache")
    assert shown == reference and shown["summary"]["zero_hit_costs"]["records"] > 0
    assert "here is the shipped reference's" in capsys.readouterr().out
    assert zero_hit_cost_table(without).empty and not zero_hit_cost_table(shown).empty


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
    # the hit ratios follow from LRU and the key sequence alone: the staircase holds at any
    # size (1,000 entries: 95 % here, each key's first access of 20,000 records a miss)
    staircase = outcomes["hit_ratio_staircase"]
    assert staircase.figures["h250"] == 0.0 and staircase.figures["h500"] == 0.5
    assert staircase.status == HELD, staircase.text
    wrong = {"summary": {**result.summary, "hit_ratio_1000": 0.9}}  # a miss beyond the first
    assert claim("state_cache", "hit_ratio_staircase").evaluate(wrong).status == NOT_HELD
    parts = outcomes["zero_hit_parts_account_for_loss"]
    s = result.summary
    assert parts.figures["predicted"].value == pytest.approx(100 * s["zero_hit_predicted_loss"])
    assert parts.figures["measured"].value == pytest.approx(100 * (1 / s["speedup_250"] - 1))
    # one round and no documented run-to-run spread: no interval, so no lesson either way
    at_all_hits = outcomes["cache_wins_at_all_hits"]
    assert at_all_hits.figures["speedup"].runs == 1
    assert at_all_hits.status in (INCONCLUSIVE, MEASUREMENT_ERROR)


def _iv(value, low, high, runs=3):
    return {"value": value, "low": low, "high": high, "runs": runs, "method": "bootstrap"}


def _summary(**figures):
    """A constructed state_cache result: each figure ``key=(value, low, high)``."""
    summary = {"runs": 3, "records": 20_000_000, "intervals": {}}
    for key, (value, low, high) in figures.items():
        summary[key] = value
        summary["intervals"][key] = _iv(value, low, high)
    return {"experiment": "state_cache", "summary": summary}


def test_the_verdict_follows_the_interval_not_the_median():
    wins = claim("state_cache", "cache_wins_at_all_hits")
    operators = {"operator_wall_speedup_1000": (27.0, 25.0, 29.0)}
    assert wins.evaluate(_summary(speedup_1000=(18.6, 17.9, 19.2), **operators)).status == HELD
    # runs that overlap: the interval holds 1, whatever the median says
    little = claim("state_cache", "zero_hits_cost_little")
    loss = {"operator_wall_speedup_250": (0.87, 0.80, 0.95)}
    assert little.evaluate(_summary(speedup_250=(0.92, 0.86, 0.97), **loss)).status == (
        INCONCLUSIVE
    )
    assert little.evaluate(_summary(speedup_250=(0.95, 0.93, 0.97), **loss)).status == HELD
    assert little.evaluate(_summary(speedup_250=(0.8, 0.78, 0.85), **loss)).status == NOT_HELD


def test_a_job_ratio_above_its_operators_wall_clock_ratio_is_a_measurement_error():
    wins = claim("state_cache", "cache_wins_at_all_hits")
    broken = _summary(speedup_1000=(40.0, 36.0, 44.0), operator_wall_speedup_1000=(27.0, 25, 29))
    outcome = wins.evaluate(broken)
    assert outcome.status == MEASUREMENT_ERROR
    assert "40.0x" in outcome.note and "27.0x" in outcome.note
    # below 1 the bound is the other way round: a 0%-hit job cannot lose more than its operators
    below = _summary(speedup_250=(0.6, 0.55, 0.65), operator_wall_speedup_250=(0.87, 0.85, 0.9))
    assert claim("state_cache", "zero_hits_cost_little").evaluate(below).status == (
        MEASUREMENT_ERROR
    )


def test_the_batched_write_back_is_held_to_its_breakdowns_prediction():
    batched = claim("state_cache", "batched_write_back_beats_lru_as_predicted")
    predicted = {"zero_hit_predicted_batched_change": (-0.15, -0.17, -0.12)}
    operators = {
        "operator_batched_over_lru_250": (0.92, 0.88, 0.96),
        "operator_wall_batched_over_lru_250": (0.92, 0.88, 0.96),
    }
    # a quick report's run: predicted 15 % cheaper, measured 0.901x (dearer): not held
    dearer = _summary(batched_over_lru_250=(0.901, 0.88, 0.93), **predicted, **operators)
    outcome = batched.evaluate(dearer)
    assert outcome.status == NOT_HELD, outcome.note
    assert "-15.0 %" in outcome.text and "0.901x" in outcome.text
    text = describe_batched(dearer)
    assert "cheaper" in text and ": dearer" in text and "against the prediction" in text
    # as predicted, and the runs can tell: held
    cheaper = {
        "operator_batched_over_lru_250": (1.09, 1.05, 1.12),
        "operator_wall_batched_over_lru_250": (1.09, 1.05, 1.12),
    }
    agrees = _summary(batched_over_lru_250=(1.08, 1.04, 1.11), **predicted, **cheaper)
    assert batched.evaluate(agrees).status == HELD
    assert "the way the breakdown predicted" in describe_batched(agrees)
    # a job interval that holds 1: inconclusive, and the sentence says the runs cannot tell
    unsure = _summary(batched_over_lru_250=(1.01, 0.97, 1.05), **predicted, **cheaper)
    assert batched.evaluate(unsure).status == INCONCLUSIVE
    assert "cannot tell" in describe_batched(unsure)
