"""The skew doctor's HTML page in Chromium at 1,300 px: the verdict first, nothing to scroll
sideways, every chart legible, nothing asked of the network."""

from __future__ import annotations

import pytest

from skewlab.doctor.diagnosis import diagnose
from skewlab.doctor.viz import write_html
from skewlab.inputs.views import ViewSpec, generate_views

pytestmark = pytest.mark.browser

NO_SIDEWAYS_SCROLL = """() => {
  const page = document.scrollingElement, text = document.querySelector('pre');
  return {scroll: page.scrollWidth, client: page.clientWidth,
          text: text.scrollWidth, text_box: text.clientWidth};
}"""


def test_the_doctor_page_opens_on_its_verdict_with_nothing_to_scroll_sideways(
    spark, page, tmp_path, interactions
):
    views = generate_views(spark, ViewSpec(5_000, 1_000, 500, distribution="zipf", skew=1.1,
                                           seed=9))  # fmt: skip
    report = diagnose(views, "tweet_id", parallelism=(3, 8))
    out = write_html(report, tmp_path / "doctor.html")
    asked: list[str] = []
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else (
        asked.append(r.request.url), r.abort()))  # fmt: skip
    page.set_viewport_size({"width": 1300, "height": 1000})
    page.goto(out.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.main-svg').length >= 4")
    text = page.locator("pre").first.inner_text()
    assert text.startswith("verdict: 5,000 records, key 'tweet_id'")
    assert text.index("remedy: ") < text.index("details:")
    width = page.evaluate(NO_SIDEWAYS_SCROLL)
    assert width["scroll"] <= width["client"] and width["text"] <= width["text_box"], width
    assert page.evaluate("() => window.skewlabChartProblems(document)") == []
    assert asked == [] and page.errors == []
    page.screenshot(path=str(tmp_path / "doctor.png"), full_page=False)
    interactions.append(
        ("doctor page at 1,300 px: verdict first, no sideways scroll", "doctor.html",
         f"{width['scroll']} px wide")
    )  # fmt: skip
