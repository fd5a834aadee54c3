"""The step-through views of a real traced run: one frame per step, each titled with what the
step did; previous / next move one step and stop at the ends; a report gets the frames."""

from __future__ import annotations

import pytest

from skewlab.experiments import step_through
from skewlab.viz import step_through as view
from skewlab.viz.render import REPORT_ENV


@pytest.fixture(scope="module")
def trace(spark):
    return step_through.trace_cache(spark, n_records=12, n_keys=3, cache_entries=2)


def test_the_animated_figure_has_one_frame_per_step_each_titled_with_its_step(trace):
    figure = view.step_through_figure(trace)
    steps = trace.steps()
    assert len(figure.frames) == len(figure.layout.sliders[0].steps) == len(steps)
    for frame, step in zip(figure.frames, steps, strict=True):
        assert frame.layout.title.text.startswith(trace.describe(step))
        counted = dict(zip(frame.data[0].x, frame.data[0].y, strict=True))
        assert {k: n for k, n in counted.items() if n} == step["records_per_key"]
        cached = {k for k, c in zip(frame.data[0].x, frame.data[0].text, strict=True) if c}
        assert cached == set(step["cached_keys"][0])
    assert [b.label for b in figure.layout.updatemenus[0].buttons] == ["Play", "Pause"]


def test_previous_and_next_move_one_step_and_stop_at_the_ends(trace):
    viewer = view.StepThrough(trace)
    last = len(trace.steps()) - 1
    viewer.previous()
    assert viewer.step == 0
    viewer.next(), viewer.next()
    assert viewer.step == 2
    assert viewer.figure.layout.title.text.startswith(trace.describe(trace.steps()[2]))
    assert viewer.label.value == f"step 3 of {last + 1}"
    assert viewer.figure.layout.meta == {"step": 3}  # the chart names the step it draws
    viewer.show_step(last + 10)
    assert viewer.step == last
    viewer.next()
    assert viewer.step == last and viewer.play.max == last
    with pytest.raises(IndexError, match="step 99 of a trace"):
        view.step_figure(trace, 99)


def test_a_report_gets_the_frames_and_the_lab_gets_the_widget(trace, monkeypatch):
    monkeypatch.setenv(REPORT_ENV, "1")
    assert len(view.step_through(trace).frames) == len(trace.steps())
    monkeypatch.delenv(REPORT_ENV)
    assert isinstance(view.step_through(trace), view.StepThrough)


def test_the_summary_states_the_traces_own_figures(trace):
    totals = trace.steps()[-1]["totals"]
    text = view.summary(trace)
    lookups = totals["cache_hits"] + totals["cache_misses"]
    assert f"{totals['cache_hits']} hits of {lookups} lookups" in text
    assert f"{totals['evictions']} evictions" in text
    assert lookups == trace.records == 12
