"""The outage backlog: the catch-up arithmetic, the hot key's ceiling, the restart cost that
makes scaling out too far lose, the rounds and the intervals the simulation inherits from them,
the verdicts on constructed results, and ``skewlab bench backlog --size tiny`` on real runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skewlab import paths
from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments import backlog
from skewlab.experiments.backlog import (
    CURVES,
    EXAMPLE_INPUTS,
    catch_up_curve,
    catch_up_seconds,
    combine_rounds,
    curve_key,
    max_subtask_share,
    simulate,
    summarize,
    with_inputs,
    zipf_shares,
)
from skewlab.experiments.claims import HELD, INCONCLUSIVE, NOT_HELD, NOT_MEASURED, claim
from skewlab.experiments.intervals import Estimate
from skewlab.state.key_groups import assign_key_to_parallel_operator


@given(
    backlog=st.floats(0, 1e9),
    rate=st.floats(1, 1e5),
    capacity=st.floats(1, 1e6),
    restart=st.floats(0, 600),
)
def test_the_backlog_drains_at_capacity_minus_the_arriving_rate(backlog, rate, capacity, restart):
    seconds = catch_up_seconds(backlog, rate, capacity, restart, 0.0, capacity)
    if capacity <= rate:
        assert math.isinf(seconds)
    else:  # at the end, everything that arrived (backlog + during the restart + since) is done
        drained = (seconds - restart) * (capacity - rate)
        assert drained == pytest.approx(backlog + rate * restart, rel=1e-9, abs=1e-6)


def test_subtask_shares_follow_flinks_routing():
    shares = zipf_shares(200, 1.1)
    for p in (1, 3, 7):
        load = np.zeros(p)
        for key, share in shares.items():
            load[assign_key_to_parallel_operator(key, 128, p)] += share
        assert max_subtask_share(shares, p, 128) == pytest.approx(load.max())
    assert sum(shares.values()) == pytest.approx(1.0)


def test_a_hot_key_is_a_ceiling_and_buffering_lifts_it():
    zipf = with_inputs(EXAMPLE_INPUTS, key_shares=zipf_shares(5_000, 1.2))
    hottest = max(zipf.key_shares.values())
    curve = catch_up_curve(zipf, outage_hours=2, rate=300, normal_parallelism=2)
    assert (curve["capacity"] <= zipf.per_subtask_rate / hottest + 1e-6).all()
    assert curve["capacity"].iloc[-1] == pytest.approx(zipf.per_subtask_rate / hottest, rel=0.05)
    buffered = with_inputs(zipf, per_subtask_rate=3 * zipf.per_subtask_rate)
    faster = catch_up_curve(buffered, outage_hours=2, rate=300, normal_parallelism=2)
    assert (faster["catch_up_hours"] <= curve["catch_up_hours"]).all()
    assert faster["capacity"].max() == pytest.approx(3 * curve["capacity"].max())


def test_the_restart_cost_makes_scaling_out_too_far_lose():
    zipf = with_inputs(EXAMPLE_INPUTS, key_shares=zipf_shares(5_000, 1.2), task_startup_seconds=5.0)
    curve = catch_up_curve(zipf, outage_hours=1, rate=300, normal_parallelism=2)
    best = curve.loc[curve["catch_up_hours"].idxmin(), "parallelism"]
    assert 2 < best < 128
    assert curve["catch_up_hours"].iloc[-1] > curve["catch_up_hours"].min()
    assert set(curve["source"]) == {"simulated"}  # example inputs: nothing measured


def test_bad_parameters_are_refused_before_any_work():
    with pytest.raises(SkewlabInputError, match="rate"):
        catch_up_curve(EXAMPLE_INPUTS, outage_hours=1, rate=0, normal_parallelism=2)
    with pytest.raises(SkewlabInputError, match="normal_parallelism"):
        catch_up_curve(EXAMPLE_INPUTS, outage_hours=1, rate=5, normal_parallelism=500)
    with pytest.raises(SkewlabInputError, match="utilization must be a number > 0"):
        backlog.run_experiment("tiny", utilization=0)
    with pytest.raises(SkewlabInputError, match="outage_hours"):
        backlog.run_experiment("tiny", outage_hours=-1)


@pytest.mark.long
def test_catch_up_tiny_end_to_end(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    assert main(["bench", "backlog", "--size", "tiny", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    rows, summary = payload["rows"], payload["summary"]
    assert {r["curve"] for r in rows} == {"uniform, naive", "Zipf, naive", "Zipf, buffered"}
    measured = [r for r in rows if r["source"] == "measured"]
    assert {r["parallelism"] for r in measured} == {1, 2} and len(measured) == 6
    assert all(r["measured_capacity"] > 0 for r in measured)
    by_label = {m["label"]: m for m in summary["measured"]}
    assert (
        by_label["Zipf, naive"]["hottest_key_share"]
        > 10 * by_label["uniform, naive"]["hottest_key_share"]
    )
    for m in summary["measured"]:
        assert m["per_subtask_rate"] > 0 and m["state_bytes_per_key"] > 0
    assert len(list(tmp_path.glob("backlog-tiny-*.json"))) == 1
    # a measured dot is the measured figure: the catch-up time from the measured capacity
    for r in measured:
        if r["parallelism"] == 2 and r["measured_capacity"] > summary["rate_records_per_second"]:
            assert r["measured_catch_up_hours"] is not None
            assert (r["measured_catch_up_hours"] < r["catch_up_hours"]) == (
                r["measured_capacity"] > r["capacity"]
            )
    # two rounds at tiny: every measured point has the range of its rounds
    assert summary["runs"] == 2
    for m in summary["measured"]:
        assert [len(m["measured_rounds"][p]) for p in ("1", "2")] == [2, 2]
    for r in measured:
        assert r["measured_capacity_low"] <= r["measured_capacity"] <= r["measured_capacity_high"]
    # every claim reads figures with the interval of the rounds that gave them
    for one in ("uniform_scales_out", "hot_key_caps_capacity", "buffering_lifts_ceiling",
                "simulation_matches_measurement"):  # fmt: skip
        outcome = claim("backlog", one).evaluate(payload)
        assert outcome.status != NOT_MEASURED, one
        timed = [v for v in outcome.figures.values() if isinstance(v, Estimate)]
        assert timed, one
        # each figure over the rounds that gave it: both (an interval), or one where the other
        # round's rates never caught up at any P (that round's best catch-up has no value)
        assert all(v.has_interval == (v.runs == 2) and v.runs >= 1 for v in timed), timed
        if one != "uniform_scales_out":  # capacities and their ratio: every round gives them
            assert all(v.has_interval and v.runs == 2 for v in timed), (one, timed)


def test_bench_backlog_has_help_with_examples_and_catch_up_is_its_former_name(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "backlog", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "skewlab bench backlog" in out and "--outage-hours" in out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "catch-up" not in capsys.readouterr().out  # still accepted, no longer listed
    with pytest.raises(SystemExit) as info:
        main(["catch-up", "--outage-hours", "x"])  # the former command parses as bench backlog
    assert info.value.code == 2 and "--outage-hours" in capsys.readouterr().err


def _rounds(curve: str, rates, capacities, **changes):
    """A curve measured in rounds (constructed: no Spark): its rates at P=1 and P=2."""
    label, strategy, distribution = next(c for c in CURVES if c[0] == curve)
    shares = zipf_shares(500, 1.2 if distribution == "zipf" else 0.0)
    rounds = [
        with_inputs(EXAMPLE_INPUTS, label=label, strategy=strategy, distribution=distribution,
                    key_shares=shares, per_subtask_rate=r, measured_capacity={1: r, 2: c},
                    measured_rounds={1: (r,), 2: (c,)}, **changes)
        for r, c in zip(rates, capacities, strict=True)
    ]  # fmt: skip
    return combine_rounds(rounds)


def _result(inputs, rate=100.0):
    rows = simulate(inputs, hours=1, rate=rate, normal_parallelism=2).to_dict("records")
    summary = summarize(rows, inputs, hours=1, rate=rate, normal_parallelism=2)
    return {"experiment": "backlog", "size": "tiny", "rows": rows, "summary": summary}


def _at_simulated(curve: str, rates, factors):
    """A curve whose measured capacity at P=2 is the simulated one times ``factors``, round by
    round."""
    label = next(c for c in CURVES if c[0] == curve)
    share = max_subtask_share(zipf_shares(500, 1.2 if label[2] == "zipf" else 0.0), 2, 128)
    return _rounds(curve, rates, [r / share / f for r, f in zip(rates, factors, strict=True)])


def test_the_simulation_inherits_the_spread_of_the_rates_it_starts_from():
    zipf = _rounds("Zipf, naive", (400.0, 500.0, 600.0), (700.0, 800.0, 900.0))
    assert zipf.per_subtask_rate == 500.0 and zipf.measured_capacity == {1: 500.0, 2: 800.0}
    summary = _result([zipf])["summary"]
    key = curve_key("Zipf, naive")
    hottest = max(zipf.key_shares.values())
    ceiling = Estimate.from_json(summary["intervals"][f"{key}_capacity_ceiling"])
    # the ceiling is a rate over the hot key's share: each round's ceiling is its own rate's
    assert ceiling.value == pytest.approx(500.0 / hottest, rel=0.01)
    assert ceiling.low == pytest.approx(400.0 / hottest, rel=0.01)
    assert ceiling.high == pytest.approx(600.0 / hottest, rel=0.01)
    assert ceiling.runs == 3
    # the check pairs each round's simulated and measured capacity
    share = max_subtask_share(zipf.key_shares, 2, 128)
    check = Estimate.from_json(summary["intervals"][f"{key}_simulated_over_measured_at_2"])
    per_round = sorted(r / share / c for r, c in ((400, 700), (500, 800), (600, 900)))
    assert (check.low, check.high) == pytest.approx((per_round[0], per_round[-1]))


@pytest.mark.parametrize(
    ("factors", "status"),
    [
        ((1.0, 1.02, 0.98), HELD),  # every round within the tolerance
        ((1.0, 1.4, 0.7), INCONCLUSIVE),  # rounds that straddle the tolerance
        ((1.6, 1.7, 1.8), NOT_HELD),  # every round outside it
    ],
)
def test_the_simulation_check_is_judged_over_the_rounds(factors, status):
    inputs = [_at_simulated(label, (400.0, 420.0, 440.0), factors) for label, _, _ in CURVES]
    outcome = claim("backlog", "simulation_matches_measurement").evaluate(_result(inputs))
    assert outcome.status == status, outcome.interval_text


def test_one_round_concludes_nothing_and_a_clear_ceiling_is_held():
    one = [_rounds(label, (400.0,), (700.0,)) for label, _, _ in CURVES]
    outcome = claim("backlog", "hot_key_caps_capacity").evaluate(_result(one))
    assert outcome.status == INCONCLUSIVE  # one round, no documented run-to-run spread
    three = [_rounds(label, (400.0, 450.0, 500.0), (700.0, 750.0, 800.0)) for label, _, _ in CURVES]
    outcome = claim("backlog", "hot_key_caps_capacity").evaluate(_result(three))
    assert outcome.status == HELD, outcome.interval_text  # 500 keys, uniform: no hot key
    # the buffer's rates overlap naive's: the runs cannot order their ceilings
    overlap = [
        _rounds("uniform, naive", (400.0, 450.0, 500.0), (700.0, 750.0, 800.0)),
        _rounds("Zipf, naive", (400.0, 450.0, 500.0), (700.0, 750.0, 800.0)),
        _rounds("Zipf, buffered", (380.0, 460.0, 520.0), (700.0, 750.0, 800.0)),
    ]
    lifted = claim("backlog", "buffering_lifts_ceiling").evaluate(_result(overlap))
    assert lifted.status == INCONCLUSIVE, lifted.interval_text
