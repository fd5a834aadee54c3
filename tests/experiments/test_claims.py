"""The claims registry: every chapter's lessons declared as claims, each shown in its notebook,
each readable over the shipped reference; the mechanics of the verdicts (held / not held /
inconclusive / measurement error / not measured).

The claims over real runs are checked in each chapter's test module, on its tiny run."""

from __future__ import annotations

import json
import re
import string

import pytest

from skewlab import paths
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import BENCHMARKS, CHAPTERS
from skewlab.experiments.claims import (
    HELD,
    INCONCLUSIVE,
    MEASUREMENT_ERROR,
    NOT_HELD,
    NOT_MEASURED,
    Claim,
    chapter_claims,
    claim,
)
from skewlab.experiments.intervals import Estimate, exact
from skewlab.experiments.references import load_reference, reference_status
from skewlab.viz.claims import MIME_TYPE, ClaimsTable, claims_table, outcomes_from_notebook

ALL = [(c.id, k) for c in CHAPTERS for k in chapter_claims(c.id)]


def _claims_cells(chapter):
    """The sources each ``claims_table("<chapter>", ...)`` call of its notebook passes."""
    nb = json.loads((paths.notebooks_dir() / chapter.notebook).read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    calls = re.findall(rf'viz\.claims\.claims_table\(\s*"{chapter.id}"([^)]*)\)', code)
    return {name for call in calls for name in re.findall(r"(\w+)=", call)} - {"size"}


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c.benchmarks], ids=lambda c: c.id)
def test_every_measuring_chapter_declares_claims_and_its_notebook_shows_every_one(chapter):
    claims = chapter_claims(chapter.id)
    assert claims, f"chapter {chapter.id} declares no claims"
    assert len({c.id for c in claims}) == len(claims)
    assert {c.source for c in claims} <= _claims_cells(chapter)


@pytest.mark.parametrize(("chapter", "one"), ALL, ids=lambda x: getattr(x, "id", x))
def test_every_claim_says_what_it_checks_and_why(chapter, one):
    assert one.statement.endswith(".") and one.why.endswith(".")
    fields = {f for _, f, _, _ in string.Formatter().parse(one.measured) if f}
    assert fields, f"{one.id}: the measured sentence names no figure"
    if one.reverses_seed:
        assert one.seed, f"{one.id} reverses the seed's lesson but does not say what it was"


@pytest.mark.parametrize(
    ("chapter", "one"),
    [(ch, k) for ch, k in ALL if k.source in BENCHMARKS and load_reference(k.source)],
    ids=lambda x: getattr(x, "id", x),
)
def test_every_claim_reads_its_shipped_reference(chapter, one):
    reference = load_reference(one.source)
    outcome = one.evaluate(reference)
    # a verdict over every figure it names; never a broken physical bound in what ships
    assert outcome.status in (HELD, NOT_HELD, INCONCLUSIVE), f"{one.id}: {outcome.figures}"
    fields = {f for _, f, _, _ in string.Formatter().parse(one.measured) if f}
    assert fields <= set(outcome.figures)


def test_a_reference_says_when_the_timed_code_changed_since():
    reference = load_reference("value_state")  # shipped with the package
    assert reference_status(reference) == "current"
    changed = {**reference, "provenance": {**reference["provenance"], "code_fingerprint": "x"}}
    assert "re-measure" in reference_status(changed)


def test_held_not_held_and_not_measured():
    c = Claim("c", "s", "more than one.", "{v:.1f}x", lambda r: {"v": r}, lambda f: f["v"] > 1)
    assert c.evaluate(exact(2.0)).status == HELD and c.evaluate(exact(2.0)).text == "2.0x"
    assert c.evaluate(exact(0.5)).status == NOT_HELD
    assert c.evaluate(None).status == NOT_MEASURED
    broken = Claim("b", "s", "x.", "{v}", lambda r: r["missing"], lambda f: True)
    assert broken.evaluate({}).status == NOT_MEASURED  # a figure the result does not carry


def test_a_timed_figure_without_an_interval_concludes_nothing():
    c = Claim("c", "s", "more than one.", "{v:.1f}x", lambda r: {"v": r}, lambda f: f["v"] > 1)
    assert c.evaluate(2.0).status == INCONCLUSIVE  # a bare number: no spread to judge it by
    assert c.evaluate(Estimate(2.0, runs=5)).status == INCONCLUSIVE
    counts = Claim("n", "s", "x.", "{v}", lambda r: {"v": r}, lambda f: f["v"] > 1, exact=True)
    assert counts.evaluate(2).status == HELD  # counts every run measures alike need none


@pytest.mark.parametrize(
    ("low", "high", "status"),
    [(1.5, 2.5, HELD), (0.4, 0.8, NOT_HELD), (0.9, 1.4, INCONCLUSIVE), (1.0, 1.2, INCONCLUSIVE)],
)
def test_the_verdict_is_the_checks_answer_over_the_whole_interval(low, high, status):
    c = Claim("c", "s", "more than one.", "{v:.1f}x", lambda r: {"v": r}, lambda f: f["v"] > 1)
    assert c.evaluate(Estimate((low + high) / 2, low, high, 3, "bootstrap")).status == status


def test_two_intervals_are_judged_at_every_corner():
    # "smaller at 20,000 keys than at 20": overlapping intervals cannot order them
    c = Claim("c", "s", "a < b.", "{a} {b}", lambda r: r, lambda f: f["a"] < f["b"])
    apart = {"a": Estimate(1.0, 0.9, 1.1, 3), "b": Estimate(30.0, 25.0, 35.0, 3)}
    overlap = {"a": Estimate(1.0, 0.9, 1.6, 3), "b": Estimate(1.5, 1.2, 1.8, 3)}
    assert c.evaluate(apart).status == HELD
    assert c.evaluate(overlap).status == INCONCLUSIVE
    # a band around a value (|r - 1| < 0.25): an interval wider than the band is inconclusive
    band = Claim("b", "s", "x.", "{r}", lambda r: {"r": r}, lambda f: abs(f["r"] - 1) < 0.25)
    assert band.evaluate(Estimate(1.0, 0.7, 1.3, 3)).status == INCONCLUSIVE
    assert band.evaluate(Estimate(1.0, 0.9, 1.1, 3)).status == HELD


def test_an_estimate_that_breaks_its_bound_is_a_measurement_error_not_a_lesson():
    c = Claim("c", "s", "more than one.", "{v:.1f}x", lambda r: {"v": r}, lambda f: f["v"] > 1)
    wrong = Estimate(47.5, 40.0, 55.0, 3, "bootstrap", error="job ratio above its operators'")
    outcome = c.evaluate(wrong)
    assert outcome.status == MEASUREMENT_ERROR and "operators'" in outcome.note


def test_a_claims_table_carries_its_outcomes_for_the_report():
    interval = {"value": 4.0, "low": 3.5, "high": 4.6, "runs": 3, "method": "bootstrap"}
    summary = {"speedup_at_20_keys": 4.0, "runs": 3, "intervals": {"speedup_at_20_keys": interval}}
    table = claims_table("buffering", buffering={"experiment": "buffering", "summary": summary})
    bundle = table._repr_mimebundle_()
    html = bundle["text/html"]
    assert "the buffer beats the naive reduce" in html
    assert "at 20 keys: 4.0x [3.5..4.6] (3 runs)" in html
    assert "not measured" in html  # the claims this summary has no figures for
    nb = {"cells": [{"cell_type": "code", "outputs": [{"data": {MIME_TYPE: bundle[MIME_TYPE]}}]}]}
    outcomes = {o["id"]: o["this_run"] for o in outcomes_from_notebook(nb)}
    assert outcomes["buffer_wins_at_20_keys"] == HELD
    assert outcomes["gain_shrinks_with_keys"] == NOT_MEASURED


def test_a_claims_table_opens_with_the_chapters_question_and_the_claims_that_answer_it():
    interval = {"value": 4.0, "low": 3.5, "high": 4.6, "runs": 3, "method": "bootstrap"}
    summary = {"speedup_at_20_keys": 4.0, "runs": 3, "intervals": {"speedup_at_20_keys": interval}}
    table = claims_table("buffering", buffering={"experiment": "buffering", "summary": summary})
    question = "How much faster does an in-memory buffer make a hot key"
    text, page = str(table), table._repr_mimebundle_()["text/html"]
    assert text.startswith(f"The question: {question}") and question in page
    assert page.index("skewlab-answer") < page.index("<table>")  # the answer before the table
    # the answering claims this table holds (the latency sweep's is not given here)
    assert table.to_json()["answered_by"] == ["buffer_wins_at_20_keys", "gain_shrinks_with_keys"]
    answer = text.split("\n\n", 1)[0]
    assert "4.0x [3.5..4.6] (3 runs)" in answer and "trigger interval" not in answer
    # the other source's table answers with its own claim; an empty one has no answer block
    import pandas as pd

    sweep = pd.DataFrame({"trigger_interval_ms": [10.0, 500.0], "latency_p50_ms": [5.0, 250.0]})
    latency = claims_table("buffering", latency_sweep=sweep)
    assert latency.to_json()["answered_by"] == ["latency_grows_with_interval"]
    assert latency.answer().startswith("The question: ")
    assert ClaimsTable("buffering", "tiny", []).answer() == ""


def test_bad_names_are_refused():
    with pytest.raises(SkewlabInputError, match="has no claim 'nope'"):
        claim("buffering", "nope")
    with pytest.raises(SkewlabInputError, match="no claims about 'views'"):
        claims_table("buffering", views=1)


def test_a_claims_table_names_this_runs_size_from_the_result_or_not_at_all():
    import pandas as pd

    sweep = pd.DataFrame({"trigger_interval_ms": [10.0, 500.0], "latency_p50_ms": [5.0, 250.0]})
    assert claims_table("buffering", latency_sweep=sweep).size == "this size"  # not its .size
    assert claims_table("buffering", buffering={"size": "quick", "summary": {}}).size == "quick"
