"""FLIP-140 where memory decides: heap and sorted input under a memory cap on each Python worker,
on a real local Spark (the cap is Spark's own, applied per job)."""

from __future__ import annotations

import pytest

from skewlab.engine.worker_memory import (
    MEMORY_PROPERTY,
    OUT_OF_MEMORY,
    WORKER_DID_NOT_START,
    python_worker_memory_cap,
)
from skewlab.errors import SkewlabInputError
from skewlab.experiments import memory_cap
from skewlab.experiments.claims import HELD, NOT_HELD, NOT_MEASURED, claim
from skewlab.viz.sorted_input import (
    describe_memory_cap,
    format_memory_cap_summary,
    memory_cap_figure,
    memory_cap_shown,
    memory_cap_table,
)


@pytest.fixture(scope="module")
def capped(spark):
    # 2,000,000 keys: the heap's state outgrows 400 MiB of address space per worker, sorted
    # input's single key does not
    return memory_cap.run_experiment("tiny", caps_mb=(400,), progress=False, spark=spark)


@pytest.fixture(scope="module")
def floor(spark):
    # 150 MiB leaves no room for a worker's own libraries, whatever the input: 20,000 keys do
    return memory_cap.run_experiment(
        "tiny", n=20_000, k=20_000, caps_mb=(150,), progress=False, spark=spark
    )


@pytest.mark.long
def test_sorted_input_finishes_under_a_cap_where_the_heap_runs_out_of_memory(capped):
    s = capped.summary
    by_cap = {e["cap_mb"]: e for e in s["by_cap"]}
    assert list(by_cap) == [400, None]
    assert by_cap[400]["heap"] == OUT_OF_MEMORY and by_cap[400]["heap_job_seconds"] is None
    assert by_cap[400]["sorted"] == memory_cap.FINISHED
    assert by_cap[400]["sorted_job_seconds"] > 0
    # without a cap both finish, after the capped jobs, in the same session: capped workers
    # stay in their own pool
    assert by_cap[None]["heap"] == by_cap[None]["sorted"] == memory_cap.FINISHED
    assert s["sorted_only_caps_mb"] == [400]
    assert s["smallest_cap_finished_mb"] == {"heap": None, "sorted": 400}
    finished = [r for r in capped.rows if r["outcome"] == memory_cap.FINISHED]
    assert len(finished) == 3 and all(r["digest_matches_oracle"] for r in finished)
    assert all(r["records"] + r["rejected"] == 2_000_000 for r in finished)
    assert s["all_digests_match"] and s["records_accounted"]


def test_below_the_workers_own_floor_neither_side_starts_and_no_cap_separates_them(floor):
    s = floor.summary
    by_cap = {e["cap_mb"]: e for e in s["by_cap"]}
    assert list(by_cap) == [150, None]
    # below the worker's own floor neither side starts: that is not the heap's state
    assert by_cap[150]["heap"] == by_cap[150]["sorted"] == WORKER_DID_NOT_START
    assert by_cap[None]["heap"] == by_cap[None]["sorted"] == memory_cap.FINISHED
    assert s["sorted_only_caps_mb"] == []
    assert s["smallest_cap_finished_mb"] == {"heap": None, "sorted": None}
    finished = [r for r in floor.rows if r["outcome"] == memory_cap.FINISHED]
    assert len(finished) == 2 and all(r["digest_matches_oracle"] for r in finished)
    assert all(r["records"] + r["rejected"] == 20_000 for r in finished)
    assert s["all_digests_match"] and s["records_accounted"]
    # a cap where neither side starts separates nothing: the claim is not held on it
    rule = claim("sorted_input", "sorted_finishes_where_heap_runs_out")
    assert rule.evaluate(floor).status == NOT_HELD
    figure = memory_cap_figure(memory_cap_shown(floor))
    assert {t.name for t in figure.data} == {memory_cap.FINISHED, WORKER_DID_NOT_START}


@pytest.mark.long
def test_the_claim_holds_over_the_run_and_the_text_says_whose_runs(capped):
    rule = claim("sorted_input", "sorted_finishes_where_heap_runs_out")
    outcome = rule.evaluate(capped)
    assert outcome.status == HELD, outcome.text
    assert "400" in outcome.text and "none of the caps" in outcome.text
    assert rule.evaluate(None).status == NOT_MEASURED
    assert outcome.interval_text == ""  # outcomes, not timings: the verdict needs no interval
    shown = memory_cap_shown(capped)
    assert shown["shown"] == "this run (tiny, this machine)"
    text = describe_memory_cap(shown)
    assert text.startswith("This run (tiny, this machine), 2,000,000 records, 2,000,000 keys:")
    assert "Under 400 MiB sorted input finished where the heap ran out of memory" in text
    figure = memory_cap_figure(shown)
    assert {t.name for t in figure.data} == {memory_cap.FINISHED, OUT_OF_MEMORY}
    assert figure.layout.title.text.startswith("This run (tiny, this machine): WordCount")
    assert "out of memory" in format_memory_cap_summary(capped)


def test_the_claim_is_not_held_where_no_cap_separated_the_sides():
    rule = claim("sorted_input", "sorted_finishes_where_heap_runs_out")
    summary = {"k": 4, "sorted_only_caps_mb": [], "all_digests_match": True,
               "smallest_cap_finished_mb": {"heap": 400, "sorted": 400}}  # fmt: skip
    assert rule.evaluate({"summary": summary}).status == NOT_HELD
    # a wrong count is never a lesson, whatever the caps did
    wrong = {**summary, "sorted_only_caps_mb": [400], "all_digests_match": False}
    assert rule.evaluate({"summary": wrong}).status == NOT_HELD


def test_a_quick_report_shows_the_reference_and_says_whose_runs_they_are(capsys):
    shown = memory_cap_shown(None)  # a quick report: the shipped reference's runs
    assert "here is the shipped reference's" in capsys.readouterr().out
    assert shown["shown"].startswith("the reference (full, measured ")
    assert memory_cap_table(shown, caption=True).caption.startswith("The reference (full, ")


def test_the_cap_applies_only_inside_its_block(spark):
    context = spark.sparkContext
    with python_worker_memory_cap(spark, 500):
        assert context.getLocalProperty(MEMORY_PROPERTY) == "500"
    assert context.getLocalProperty(MEMORY_PROPERTY) is None


@pytest.mark.parametrize("caps", [(), (32,), (400, "lots")])
def test_bad_caps_are_refused_before_spark_starts(caps):
    with pytest.raises(SkewlabInputError, match="memory cap"):
        memory_cap.run_experiment("tiny", caps_mb=caps, progress=False)


def test_a_quick_report_shows_the_reference_instead_of_running():
    assert memory_cap.run_section("quick") is None and memory_cap.run_section("tiny") is None
