"""The prediction control and its reveal: the reveal waits for the guess, then sets it beside
this run's figure (computed by the claim), the reference's and the seed's; a report shows the
question and the answer as text; a guess is recorded where the lab keeps them."""

from __future__ import annotations

import json

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.experiments.predictions import PREDICTIONS_LOG_ENV, prediction
from skewlab.viz import predictions as view
from skewlab.viz.render import REPORT_ENV

STAIRCASE = {
    "summary": {
        "hit_ratio_250": 0.0,
        "hit_ratio_500": 0.5,
        "hit_ratio_1000": 0.9995,
        "records": 2_000_000,
    }
}


def test_the_reveal_waits_for_the_guess_then_sets_it_beside_the_figures(monkeypatch, tmp_path):
    monkeypatch.setenv("SKEWLAB_HOME", str(tmp_path))
    monkeypatch.delenv(PREDICTIONS_LOG_ENV, raising=False)
    monkeypatch.delenv(REPORT_ENV, raising=False)
    question = view.ask("state_cache", "hit_ratio_at_250_entries")
    answer = view.reveal(question, state_cache=STAIRCASE)
    assert "Lock in your prediction above" in answer.html.value
    assert "this run" not in answer.html.value  # nothing given away before the guess
    question.slider.value = 30
    question.button.click()  # as the button does
    text = answer.html.value
    assert "You predicted 30.0%" in text and "this run: 0.0%" in text
    assert "the seed: 0 % / 50 % / 100 % (FLIP-325)" in text
    reference = prediction("state_cache", "hit_ratio_at_250_entries").answers(None)
    assert f"the reference (full size): {reference.text(reference.reference)}" in text
    assert question.slider.disabled and question.button.disabled
    recorded = [
        json.loads(x) for x in (tmp_path / "data/predictions.jsonl").read_text().split("\n") if x
    ]
    assert [(r["prediction"], r["guess"]) for r in recorded] == [("hit_ratio_at_250_entries", 0.3)]


def test_a_guess_is_set_beside_this_runs_figure_by_how_far_it_missed():
    p = prediction("buffering", "buffer_speedup_at_20_keys")
    answers = p.answers(
        {"summary": {"speedup_at_20_keys": 20.0, "speedup_at_20_keys_runs": [20.0]}}
    )
    assert answers.value(answers.this_run) == 20.0
    assert answers.beside(22.0) == "your guess is within 25 % of this run's figure"
    assert answers.beside(5.0) == "your guess is 4.0 times below this run's figure"
    assert answers.beside(80.0) == "your guess is 4.0 times above this run's figure"


def test_a_report_shows_the_question_and_the_answer_as_text(monkeypatch):
    monkeypatch.setenv(REPORT_ENV, "1")
    question = view.ask("state_cache", "hit_ratio_at_250_entries")
    answer = view.reveal(question, state_cache=STAIRCASE)
    text = answer.text()
    assert text.startswith("<b>The prediction:</b> The keys cycle through 1,000 keys")
    assert "this run: 0.0%" in text and "You predicted" not in text


def test_a_reveal_without_the_result_its_claim_reads_is_refused():
    question = view.ask("buffering", "buffer_speedup_at_20_keys")
    with pytest.raises(
        SkewlabInputError, match="read from the 'buffering' result: pass buffering="
    ):
        view.reveal(question, latency_sweep=None)
