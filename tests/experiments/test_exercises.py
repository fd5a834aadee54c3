"""Exercises: each solution passes its own check and a neighbouring answer does not; the checks
decide with skewlab's parts (not typed answers) and refuse an answer of the wrong kind; the
solutions page is the code's; each exercise is attempted at the end of its notebook."""

from __future__ import annotations

import json

import pytest

from skewlab import paths
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import chapter
from skewlab.experiments.exercises import EXERCISES, attempt, check, solutions_markdown


def neighbour(answer):
    """An answer next to the right one: one more (a pair: its second part one more)."""
    if isinstance(answer, tuple):
        return (answer[0], answer[1] + 1)
    return answer + 1


@pytest.mark.parametrize("e", EXERCISES, ids=lambda e: e.id)
def test_each_solution_passes_its_check_and_its_neighbour_does_not(e):
    answer = e.solve()
    assert e.check(answer).right is True
    assert e.check(neighbour(answer)).right is False
    assert e.check(None).right is None


def test_the_checks_run_skewlabs_own_parts():
    # the LRU core of the state backend reaches 50 % on FLIP-325's keys at 500 entries, as the
    # chapter's staircase claim says, and 499 entries never hit
    assert check("state_cache", "cache_for_half_hits", 500).right
    assert "only 0.0%" in check("state_cache", "cache_for_half_hits", 500).text
    # every divisor-friendly max parallelism is right, Flink's default 128 is not
    assert all(check("rescaling", "even_key_groups", m).right for m in (132, 720, 840, 1260))
    assert check("rescaling", "even_key_groups", 128).text.endswith("21 or 22 key groups.")


def test_an_answer_of_the_wrong_kind_is_refused():
    with pytest.raises(SkewlabInputError, match="must be a whole number, got 'many'"):
        check("rescaling", "even_key_groups", "many")
    with pytest.raises(SkewlabInputError, match=r"a pair \(key group, subtask\); got 7"):
        check("hot_keys", "key_group_of_tweet_7", 7)
    with pytest.raises(SkewlabInputError, match="has no exercise 'nothing'"):
        check("hot_keys", "nothing", 1)


def test_the_solutions_page_is_the_codes():
    page = (paths.project_root() / "docs" / "solutions.md").read_text()
    assert page == solutions_markdown(), "regenerate docs/solutions.md from solutions_markdown()"


@pytest.mark.parametrize("e", EXERCISES, ids=lambda e: e.id)
def test_each_exercise_is_attempted_at_the_end_of_its_notebook(e):
    nb = json.loads((paths.notebooks_dir() / chapter(e.chapter).notebook).read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    cells = [i for i, s in enumerate(code) if f'attempt("{e.chapter}", "{e.id}", answer)' in s]
    assert len(cells) == 1
    assert code[cells[0]].startswith("answer = None")  # the reader's to set
    assert cells[0] >= len(code) - len([x for x in EXERCISES if x.chapter == e.chapter])
    assert attempt(e.chapter, e.id, None).startswith(f"Exercise {e.id}: {e.task}")
