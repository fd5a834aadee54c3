"""Predict, then run: every prediction asks for a figure its chapter's claim computes, on a
scale that holds the reference's figure; each notebook asks before the cell that measures and
answers after it; a guess is recorded, and one off the scale is refused."""

from __future__ import annotations

import json

import pytest

from skewlab import paths
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import BENCHMARKS, chapter
from skewlab.experiments.predictions import PREDICTIONS, prediction, record_guess
from skewlab.experiments.references import load_reference


@pytest.mark.parametrize("p", PREDICTIONS, ids=lambda p: p.id)
def test_each_prediction_asks_for_a_figure_its_claim_computes_on_a_scale_that_holds_it(p):
    claim = p.claim()
    assert p.figure in claim.measured  # the claim's sentence shows the figure asked for
    assert p.low <= p.start <= p.high and p.low < p.high and (not p.log or p.low > 0)
    if claim.source in BENCHMARKS:  # the reference's figure can be set on the slider
        answers = p.answers(None)
        reference = answers.value(answers.reference)
        assert reference is not None, f"{p.id}: the reference does not measure {p.figure}"
        assert p.low <= reference <= p.high
        assert load_reference(claim.source) is not None


#: How a notebook's measuring cell starts (the figure an answer reads is made there).
MEASURING = (
    "result =", "counter =", "subtasks =", "runs, result =", "this_run, result =", "check_run =",
    "steps =",
)  # fmt: skip


@pytest.mark.parametrize("p", PREDICTIONS, ids=lambda p: p.id)
def test_each_notebook_asks_before_it_measures_and_answers_after(p):
    nb = json.loads((paths.notebooks_dir() / f"{chapter(p.chapter).notebook}").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    asked = [i for i, s in enumerate(sources) if f'ask("{p.chapter}", "{p.id}")' in s]
    answered = [i for i, s in enumerate(sources) if "predictions.reveal(guess," in s]
    source = p.claim().source
    measured = [i for i, s in enumerate(sources) if s.lstrip().startswith(MEASURING)]
    assert len(asked) == len(answered) == 1
    assert asked[0] < min(i for i in measured if i > asked[0]) < answered[0]
    assert f"{source}=" in sources[answered[0]]


def test_a_guess_is_recorded_and_one_off_the_scale_is_refused(tmp_path):
    p = prediction("buffering", "buffer_speedup_at_20_keys")
    log = tmp_path / "predictions.jsonl"
    record_guess(p, 12.0, log)
    record_guess(p, 0.5, log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["prediction"], x["guess"]) for x in lines] == [(p.id, 12.0), (p.id, 0.5)]
    with pytest.raises(SkewlabInputError, match="must lie in 0.1x .. 1000.0x, got 2000.0x"):
        record_guess(p, 2_000.0, log)
    assert len(log.read_text().splitlines()) == 2
