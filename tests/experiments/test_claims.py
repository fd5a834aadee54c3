"""The claims registry: every chapter's lessons declared as claims, each shown in its notebook,
each readable over the shipped reference; the mechanics of held / not held / not measured.

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
    NOT_HELD,
    NOT_MEASURED,
    Claim,
    chapter_claims,
    claim,
)
from skewlab.experiments.references import load_reference, reference_status
from skewlab.viz.claims import MIME_TYPE, claims_table, outcomes_from_notebook

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
    assert outcome.status in (HELD, NOT_HELD), f"{one.id}: {outcome.figures}"
    fields = {f for _, f, _, _ in string.Formatter().parse(one.measured) if f}
    assert fields <= set(outcome.figures)


def test_a_reference_says_when_the_timed_code_changed_since():
    reference = load_reference("value_state")  # shipped with the package
    assert reference_status(reference) == "current"
    changed = {**reference, "provenance": {**reference["provenance"], "code_fingerprint": "x"}}
    assert "re-measure" in reference_status(changed)


def test_held_not_held_and_not_measured():
    c = Claim("c", "s", "more than one.", "{v:.1f}x", lambda r: {"v": r}, lambda f: f["v"] > 1)
    assert c.evaluate(2.0).status == HELD and c.evaluate(2.0).text == "2.0x"
    assert c.evaluate(0.5).status == NOT_HELD
    assert c.evaluate(None).status == NOT_MEASURED
    broken = Claim("b", "s", "x.", "{v}", lambda r: r["missing"], lambda f: True)
    assert broken.evaluate({}).status == NOT_MEASURED  # a figure the result does not carry


def test_a_claims_table_carries_its_outcomes_for_the_report():
    table = claims_table("state_cache", state_cache={"summary": {"speedup_1000": 4.0}})
    bundle = table._repr_mimebundle_()
    html = bundle["text/html"]
    assert "the cache beats RocksDB alone" in html and "1,000 entries: 4.0x RocksDB alone" in html
    assert "not measured" in html  # the claims this summary has no figures for
    nb = {"cells": [{"cell_type": "code", "outputs": [{"data": {MIME_TYPE: bundle[MIME_TYPE]}}]}]}
    outcomes = {o["id"]: o["this_run"] for o in outcomes_from_notebook(nb)}
    assert outcomes["cache_wins_at_all_hits"] == HELD
    assert outcomes["speedup_grows_with_hits"] == NOT_MEASURED


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
