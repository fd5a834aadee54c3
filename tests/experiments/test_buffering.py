"""Seed 000's buffering experiment end to end at the tiny profile: every run's digest checked,
and the sides compared like for like (the same input, the same timed region)."""

from __future__ import annotations

import statistics

import pytest

from skewlab.aggregates.stats_state import SINGLE_VIEW_COLUMNS
from skewlab.engine.routing import KEY_GROUP
from skewlab.experiments import buffering
from skewlab.experiments.chapters import size_settings
from skewlab.experiments.claims import HELD, NOT_HELD, NOT_MEASURED, chapter_claims, claim
from skewlab.operators.buffers import DETECTOR_SAMPLING
from skewlab.viz.buffering import format_summary

BOOKKEEPING = {"tweet_id", KEY_GROUP, "seq"}  # the key, its routing, the arrival order


@pytest.fixture(scope="module")
def result(spark):
    return buffering.run_experiment("tiny", progress=False, spark=spark)


def test_every_run_of_every_side_ends_with_the_reference_digest(result):
    settings = size_settings("buffering", "tiny")
    assert len(result.rows) == len(buffering.SIDES) * len(settings["cardinalities"])
    assert all(r["digest_matches_reference"] for r in result.rows)
    assert all(r["records_in"] == settings["n_views"] for r in result.rows)
    assert result.summary["all_digests_match"]


def test_the_sides_start_from_the_same_input(result):
    # every side's operators are handed the same view columns (the upstream map's): a side
    # that got, say, Spark-computed hashes the others compute themselves would fail here
    for row in result.rows:
        (inputs,) = row["operator_inputs"].values()
        assert set(inputs) - BOOKKEEPING == set(SINGLE_VIEW_COLUMNS), row["strategy"]


def test_the_headline_is_job_throughput_net_of_an_empty_runs_start_up(result):
    s = result.summary
    assert s["headline_measure"] == "job_records_per_second_net_of_startup"
    assert set(s["startup_seconds"]) == set(s["startup_samples"]) == set(buffering.SIDES)
    measured_runs = len(size_settings("buffering", "tiny")["cardinalities"]) * s["runs"]
    for side, samples in s["startup_samples"].items():
        # one empty run right before every measured run of the side, its start-up their median
        assert len(samples) == measured_runs
        assert s["startup_seconds"][side] == statistics.median(samples) > 0
    for row in result.rows:
        assert row["startup_seconds"] == s["startup_seconds"][row["strategy"]]
        net = row["job_seconds"] - row["startup_seconds"]
        assert row["net_job_seconds"] == pytest.approx(net)
        # a tiny run can be shorter than its start-up: then it has no net throughput
        expected = row["records_in"] / net if net > 0 else None
        assert row["job_records_per_second_net_of_startup"] == pytest.approx(expected)
    at_20 = next(t for t in s["by_cardinality"] if t["cardinality"] == 20)
    for side, headline in (
        ("buffered", "speedup_at_20_keys"),
        ("buffered_list", "speedup_at_20_keys_list"),
    ):
        mine, naive = at_20[side]["median"], at_20["naive"]["median"]
        # the medians' ratio; None only where a side had no run longer than its start-up
        assert s[headline] == pytest.approx(mine / naive if mine and naive else None)
    assert "the seed's figure: ~45x" in format_summary(result)


def test_fewer_keys_mean_fewer_state_accesses_for_the_buffers_only(result):
    def reads(side, k):
        return next(
            r["state_reads"] for r in result.rows if r["strategy"] == side and r["cardinality"] == k
        )

    n = size_settings("buffering", "tiny")["n_views"]
    assert reads("naive", 20) == reads("naive", 1_000) == n  # one read per record
    for side in ("buffered", "buffered_list"):  # at most one read per key per flush
        assert reads(side, 20) <= 20 * (n // 1_000 + 1) < reads(side, 1_000) < n
    # hot keys only: 20 keys (5 % each) are hot once sampled twice (one record in
    # DETECTOR_SAMPLING is: about 16 of each key's records before) and buffered; of 1,000 keys
    # (2 records each) hardly any is sampled twice: most stay cold and are reduced as naive, a
    # read per record, so more reads than the buffer of every key makes
    assert reads("buffered_hotkey", 20) <= 20 * (n // 1_000 + 1) + 20 * 4 * DETECTOR_SAMPLING
    assert reads("buffered", 1_000) < reads("buffered_hotkey", 1_000) <= n


def test_the_hot_key_buffers_worst_speedup_is_its_least_over_the_cardinalities(result):
    s = result.summary
    # over the cardinalities where it was measured (a tiny run may be shorter than its start-up)
    present = [t["speedup_hotkey"] for t in s["by_cardinality"] if t["speedup_hotkey"] is not None]
    worst = min(present) if present else None
    assert s["min_speedup_over_cardinalities_hotkey"] == worst
    assert "hot keys only" in format_summary(result)


def test_the_summary_carries_every_headline_ratio_bench_compare_reads(result):
    from skewlab.experiments.chapters import headline_ratios

    for key in headline_ratios("buffering"):
        # every ratio compare reads is there; None only where a tiny run was not longer than
        # its start-up (no net throughput to divide, said rather than guessed)
        assert result.summary[key] is None or result.summary[key] > 0, key
    assert result.summary["operator_speedup_at_20_keys"] > 0  # operator time has no start-up


def test_the_chapters_claims_read_this_tiny_run(result):
    # tiny measures 1,000 and 20 keys: the 20-key claims are measured, the 20,000-key ones not
    claims = [c for c in chapter_claims("buffering") if c.source == "buffering"]
    outcomes = {c.id: c.evaluate(result) for c in claims}
    at_20, speedup = outcomes["buffer_wins_at_20_keys"], result.summary["speedup_at_20_keys"]
    if speedup is None:  # no tiny buffered run was longer than its start-up: nothing to claim
        assert at_20.status == NOT_MEASURED
    else:
        assert at_20.figures == {"speedup": speedup}
        assert at_20.held == (speedup > 1)
        assert f"{speedup:.1f}x" in at_20.text
    assert outcomes["buffer_still_wins_at_20000_keys"].status == NOT_MEASURED
    assert outcomes["gain_shrinks_with_keys"].status == NOT_MEASURED
    # the same claim over the same run with the buffer made slower than naive: not held
    slower = {"summary": {**result.summary, "speedup_at_20_keys": 0.5}}
    assert claim("buffering", "buffer_wins_at_20_keys").evaluate(slower).status == NOT_HELD
    faster = claim("buffering", "buffer_wins_at_20_keys").evaluate(
        {"summary": {**result.summary, "speedup_at_20_keys": 2.0}}
    )
    assert faster.status == HELD and "2.0x" in faster.text
