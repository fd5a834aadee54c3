"""Notebook 07's figures: catch-up and capacity curves with measured points apart from
simulated ones, and the explorer built from measured inputs."""

from __future__ import annotations

import math

from skewlab.experiments.backlog import EXAMPLE_INPUTS, catch_up_curve, with_inputs, zipf_shares
from skewlab.viz.backlog import backlog_explorer, capacity_figure, catch_up_figure


def test_measured_points_are_drawn_apart_from_the_simulated_line():
    inputs = with_inputs(EXAMPLE_INPUTS, measured_capacity={1: 480.0, 2: 990.0})
    curve = catch_up_curve(inputs, outage_hours=2, rate=600, normal_parallelism=2)
    fig = capacity_figure(curve, rate=600)
    simulated, measured = fig.data
    assert measured.name == "example (measured here)" and list(measured.y) == [480.0, 990.0]
    assert len(simulated.x) == len(curve)
    catch = catch_up_figure(curve)
    assert all(math.isfinite(y) for y in catch.data[0].y)  # P=1 never catches up: left out
    assert len(catch.data[0].x) == len(curve) - 1


def test_the_explorer_starts_from_measured_inputs():
    zipf = with_inputs(EXAMPLE_INPUTS, key_shares=zipf_shares(500, 1.1), strategy="naive")
    explorer = backlog_explorer([zipf], outage_hours=1, rate=100, normal_parallelism=2)
    assert [c.description for c in explorer.controls.values()] == [
        "outage (h)", "rate (records/s)", "Zipf skew (0: uniform)", "strategy",
        "start-up per subtask (s)",
    ]  # fmt: skip
    before = list(explorer.figures[0].data[0].y)
    explorer.update(outage_hours=8)  # a longer outage: a longer catch-up at every parallelism
    after = list(explorer.figures[0].data[0].y)
    assert len(after) == len(before) and all(a > b for a, b in zip(after, before, strict=True))
    explorer.update(skew=0.0)
    assert explorer.figures[0].data[0].name == "naive, skew 0 (simulated)"
