"""Every page of a tiny ``skewlab report`` opened in Chromium from ``file://`` with the network
blocked: each plotly chart drew its traces, has tick labels on every axis, and no legend lies
over an axis title; each page asks its chapter's prediction and answers it; no page error, and
the page asked the network for nothing."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

CHARTS_DRAWN = """() => {
  const divs = [...document.querySelectorAll('.plotly-graph-div')];
  return divs.length > 0 && divs.every(d => d._fullLayout && d.querySelector('.main-svg'));
}"""


@pytest.mark.long
def test_every_report_page_draws_legible_charts_offline(tiny_report, page, interactions):
    asked: list[str] = []

    def block(route):
        if route.request.url.startswith("file:"):
            route.continue_()  # the report's own files, from disk
        else:
            asked.append(route.request.url)
            route.abort()

    page.route("**/*", block)
    problems, pages = {}, 0
    for nb in tiny_report.notebooks:
        page.goto(nb.html.as_uri())
        page.wait_for_function(CHARTS_DRAWN, timeout=30_000)
        charts = page.evaluate("() => window.skewlabCharts(document)")
        found = page.evaluate("() => window.skewlabChartProblems(document)")
        page.screenshot(path=str(nb.html.with_suffix(".png")), full_page=False)
        if found:
            problems[nb.name] = found
        # every chapter asks its prediction before it measures and answers it after, as text
        question = page.locator(".skewlab-prediction")
        assert question.count() == 1, f"{nb.name}: {question.count()} predictions asked"
        assert question.inner_text().startswith("Predict first:"), nb.name
        assert "this run:" in page.locator(".skewlab-reveal").inner_text(), nb.name
        pages += 1
        interactions.append(
            ("report page: charts drawn, legible", nb.name, f"{len(charts)} charts")
        )
    assert pages == len(tiny_report.notebooks)
    assert problems == {}
    assert asked == []
    assert page.errors == []


def test_the_chart_check_sees_a_legend_over_an_axis_title_and_an_axis_without_labels(
    page, tmp_path
):
    import plotly.graph_objects as go
    import plotly.io as pio

    legible = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a"), layout={"xaxis_title": "x"})
    crowded = go.Figure(
        [go.Scatter(x=[1, 2], y=[3, 4], name="a"), go.Scatter(x=[1, 2], y=[4, 3], name="b")],
        layout={
            "xaxis": {"title": "seconds", "showticklabels": True},
            "yaxis": {"title": "records", "tickvals": []},  # no tick label drawn
            # on the x-axis title: the margin does not grow to make room for the legend
            "legend": {"orientation": "h", "x": 0.4, "y": -0.03},
            "margin": {"autoexpand": False},
        },
    )
    html = "".join(
        pio.to_html(fig, include_plotlyjs=i == 0, full_html=False)
        for i, fig in enumerate((legible, crowded))
    )
    path = tmp_path / "charts.html"
    path.write_text(f"<html><body>{html}</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.main-svg').length >= 2")
    problems = page.evaluate("() => window.skewlabChartProblems(document)")
    assert not [p for p in problems if p.startswith("chart 1 ")]
    assert any("chart 2" in p and "no tick labels on axis y" in p for p in problems), problems
    assert any(
        "chart 2" in p and 'legend lies over the axis title "seconds"' in p for p in problems
    )


@pytest.mark.long
def test_the_code_toggle_hides_and_shows_the_code_cells_offline(tiny_report, page):
    nb = tiny_report.notebooks[3]  # 03_buffering: code cells, charts and a claims table
    page.goto(nb.html.as_uri())
    inputs = page.locator(".jp-CodeCell .jp-Cell-inputWrapper")
    assert inputs.count() > 3 and inputs.first.is_visible()  # shown by default
    toggle = page.locator("#skewlab-toggle-code")
    toggle.click()
    assert not inputs.first.is_visible() and toggle.inner_text() == "Show code"
    assert page.locator(".skewlab-claims").first.is_visible()  # outputs stay
    toggle.click()
    assert inputs.first.is_visible() and toggle.inner_text() == "Hide code"
    assert page.errors == []


#: The chapters with a step-through (an animated figure on their report page) and a prediction
STEP_THROUGHS = ["00_hot_keys", "02_salting", "03_buffering", "04_state_cache", "06_rescaling"]


@pytest.mark.long
@pytest.mark.parametrize("chapter", STEP_THROUGHS)
def test_a_step_through_plays_and_a_prediction_is_answered_in_the_report_page(
    tiny_report, page, interactions, chapter
):
    nb = next(n for n in tiny_report.notebooks if n.name == chapter)
    page.goto(nb.html.as_uri())
    page.wait_for_function(CHARTS_DRAWN, timeout=30_000)
    chart = page.locator(".plotly-graph-div", has=page.locator(".slider-container")).first

    def title() -> str:
        return chart.locator(".gtitle").text_content()

    def step() -> str:
        return chart.locator(".slider-container .slider-label").first.text_content()

    first = title()
    assert step() == "step 1"
    chart.locator(".updatemenu-button", has_text="Play").click()
    page.wait_for_function(
        """el => /^step ([4-9]|\\d\\d+)$/.test(
             el.querySelector('.slider-container .slider-label').textContent)""",
        arg=chart.element_handle(),
        timeout=20_000,
    )
    chart.locator(".updatemenu-button", has_text="Pause").click()
    interactions.append(
        ("report page: click Play, then Pause", chapter, f"{step()}: {title()[:40]}")
    )
    assert title() != first
    # the prediction asked before the measurement, answered after it, as text
    assert page.locator(".skewlab-prediction").first.inner_text().startswith("Predict first:")
    assert "this run:" in page.locator(".skewlab-reveal").first.inner_text()
    assert page.errors == []  # plotly.js's rejection of the interrupted animation is handled
    # ... and only that one: a rejection with no reason at another moment is still an error
    page.wait_for_timeout(1_200)
    page.evaluate("() => { setTimeout(() => Promise.reject(), 0); }")
    page.wait_for_timeout(300)
    assert page.errors == ["page error: undefined"]
