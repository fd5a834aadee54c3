"""The outage backlog: the catch-up arithmetic, the hot key's ceiling, the restart cost that
makes scaling out too far lose, and ``skewlab bench backlog --size tiny`` on real runs."""

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
    EXAMPLE_INPUTS,
    catch_up_curve,
    catch_up_seconds,
    max_subtask_share,
    with_inputs,
    zipf_shares,
)
from skewlab.experiments.claims import claim
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
    ceiling = claim("backlog", "hot_key_caps_capacity").evaluate(payload)
    assert ceiling.held, ceiling.text  # one key on one subtask: a ceiling at any size


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
