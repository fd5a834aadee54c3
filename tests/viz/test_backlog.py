"""Notebook 07's figures: catch-up and capacity curves with measured points apart from
simulated ones, and the explorer built from measured inputs."""

from __future__ import annotations

import math

from skewlab.experiments.catch_up import EXAMPLE_INPUTS, catch_up_curve, with_inputs, zipf_shares
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
    box = backlog_explorer([zipf], outage_hours=1, rate=100, normal_parallelism=2)
    sliders = box.children[0].children + box.children[1].children
    assert [s.description for s in sliders] == ["outage (h)", "rate (records/s)",
                                                 "Zipf skew (0: uniform)", "strategy"]  # fmt: skip
    assert box.children[2].description == "start-up per subtask (s)"
