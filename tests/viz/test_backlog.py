"""Notebook 07's figures: catch-up and capacity curves with measured points apart from
simulated ones (with the range of their rounds, and a note for a measured point without a dot),
whose figures every title, caption and printed block shows, and the explorer built from
measured inputs."""

from __future__ import annotations

import math

import pandas as pd

from skewlab.experiments.backlog import (
    CURVES,
    EXAMPLE_INPUTS,
    catch_up_curve,
    combine_rounds,
    summarize,
    with_inputs,
    zipf_shares,
)
from skewlab.experiments.results import BenchResult
from skewlab.viz.backlog import (
    backlog_explorer,
    capacity_figure,
    catch_up_figure,
    describe,
    format_summary,
    measured_table,
)


def test_measured_points_are_drawn_apart_from_the_simulated_line():
    inputs = with_inputs(EXAMPLE_INPUTS, measured_capacity={1: 480.0, 2: 990.0})
    curve = catch_up_curve(inputs, outage_hours=2, rate=600, normal_parallelism=2)
    fig = capacity_figure(curve, rate=600)
    simulated, measured = fig.data
    # the input rate's line carries its label (an annotation's y on this log axis would be read
    # as 10**600 records/s)
    (rate_line,) = fig.layout.shapes
    assert rate_line.y0 == 600 and rate_line.label.text == "input rate"
    assert fig.layout.annotations == ()
    assert measured.name == "example (measured here)" and list(measured.y) == [480.0, 990.0]
    assert len(simulated.x) == len(curve)
    catch = catch_up_figure(curve)
    assert all(math.isfinite(y) for y in catch.data[0].y)  # P=1 never catches up: left out
    assert len(catch.data[0].x) == len(curve) - 1
    # the measured point at P=1 has no dot (480 records/s against 600 arriving): said so
    assert list(catch.data[1].x) == [2]
    (note,) = catch.layout.annotations
    assert note.text.startswith("No measured dot for example at P=1: its measured capacity is")


def test_measured_dots_carry_the_range_of_their_rounds():
    rounds = [
        with_inputs(EXAMPLE_INPUTS, measured_capacity={1: r, 2: c},
                    measured_rounds={1: (r,), 2: (c,)})
        for r, c in ((450.0, 900.0), (500.0, 1_000.0), (550.0, 1_300.0))
    ]  # fmt: skip
    curve = catch_up_curve(combine_rounds(rounds), outage_hours=2, rate=300, normal_parallelism=2)
    measured = capacity_figure(curve, rate=300).data[1]
    assert list(measured.y) == [500.0, 1_000.0]
    assert list(measured.error_y.array) == [50.0, 300.0]
    assert list(measured.error_y.arrayminus) == [50.0, 100.0]


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


def test_the_measured_table_and_the_sentences_state_each_curves_outcome():
    inputs = [
        with_inputs(EXAMPLE_INPUTS, label=label, strategy=strategy, distribution=dist,
                    key_shares=zipf_shares(500, 1.2 if dist == "zipf" else 0.0),
                    per_subtask_rate=300.0 if strategy == "naive" else 30.0,
                    measured_capacity={1: 300.0, 2: 590.0}, task_startup_seconds=0.25)
        for label, strategy, dist in CURVES
    ]  # fmt: skip
    curves = pd.concat(
        [catch_up_curve(i, outage_hours=1, rate=100, normal_parallelism=2) for i in inputs]
    )
    rows = curves.to_dict("records")
    summary = summarize(rows, inputs, hours=1, rate=100, normal_parallelism=2)
    result = BenchResult("backlog", "tiny", rows, summary)

    table = measured_table(result)
    assert list(table.index) == [label for label, _, _ in CURVES]
    assert table.loc["Zipf, naive", "capacity_at_2"] == 590.0
    assert table["hottest_key_share"].loc["Zipf, naive"] > table["hottest_key_share"].iloc[0]
    said, printed = describe(result), format_summary(result)
    assert said.startswith("This run (tiny, this machine), median of 1 round: the input")
    assert printed.startswith("this run (tiny, this machine): outage 1 h at 100 records/s")
    assert (
        table.columns.name
        == "this run (tiny, this machine): measured on real runs, median of 1 round"
    )
    assert "a backlog of 360,000 records" in said and "0.250 s (measured)" in said
    best = summary["uniform_naive_best_parallelism"]
    hours = summary["uniform_naive_best_hours"]
    assert f"catches up fastest at parallelism {best} ({hours:.2f} h)" in said
    assert f"best at {best}: {hours:.2f} h" in printed
    assert summary["zipf_buffered_best_parallelism"] is None  # 30 records/s per subtask
    assert said.count("never catches up") == printed.count("never catches up") == 1


def test_at_the_quick_size_notebook_07_draws_the_reference_and_names_it(capsys):
    """The quick size leaves the measured runs out: the notebook's cells get the shipped
    reference as a result that keeps its provenance, and every block names the reference."""
    from skewlab.experiments.backlog import measured_inputs
    from skewlab.experiments.references import load_reference
    from skewlab.viz.reference_section import run_or_reference
    from skewlab.viz.titles import whose_figures

    this_run, shown = run_or_reference(
        "backlog_runs", "quick", "backlog", lambda: 1 / 0, what="measured runs", why="long",
        as_result=True,
    )  # fmt: skip
    assert this_run is None and isinstance(shown, BenchResult)
    saved = load_reference("backlog")
    assert shown.provenance == saved["provenance"] and shown.summary == saved["summary"]
    assert "here are the shipped reference's" in capsys.readouterr().out
    whose = whose_figures(shown)
    assert whose.startswith("the reference (full, measured ")
    lead = whose[0].upper() + whose[1:]
    assert describe(shown).startswith(lead)
    assert whose in measured_table(shown).columns.name
    assert catch_up_figure(shown.frame(), whose=whose).layout.title.text.startswith(lead)
    assert [i.label for i in measured_inputs(shown)] == [label for label, _, _ in CURVES]
    assert shown.to_json_dict()["provenance"] == saved["provenance"]
