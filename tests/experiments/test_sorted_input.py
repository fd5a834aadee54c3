"""FLIP-140's WordCount experiment end to end at toy sizes (real Spark, real RocksDB)."""

from __future__ import annotations

import pytest

from skewlab.experiments import sorted_input
from skewlab.experiments.claims import NOT_MEASURED, chapter_claims, claim
from skewlab.experiments.sorted_input import HEADLINE_MEASURE, INPUT_ORDER, RATIOS
from skewlab.viz.sorted_input import format_summary


@pytest.fixture(scope="module")
def result(spark):
    # string keys here (int keys: tests/strategies/test_count.py); K large enough that the
    # heap backend's state outweighs a batch in the traced peak
    return sorted_input.run_experiment(
        "tiny", key_type="string", n=60_000, k=30_000, progress=False, spark=spark
    )


def test_every_strategy_counts_what_spark_counts(result):
    s = result.summary
    assert s["all_digests_match"]
    assert [t["strategy"] for t in s["by_strategy"]] == list(sorted_input.STRATEGY_ORDER)
    assert s["headline_measure"] == HEADLINE_MEASURE == "job_seconds"


def test_like_for_like_every_python_side_starts_from_the_same_columns_and_is_timed_as_a_job(
    result,
):
    main = [r for r in result.rows if r["part"] == "main"]
    python_sides = [r for r in main if r["strategy"] != "spark_sql"]
    inputs = {tuple(r["operator_inputs"]) for r in python_sides}
    assert len(inputs) == 1, f"the sides' operators were handed different columns: {inputs}"
    for r in main:
        # the headline is the job's wall time -- for the sorted sides, their sort included
        assert r[HEADLINE_MEASURE] == r["wall_seconds"]
        assert r["input_order"] == INPUT_ORDER[r["strategy"]]
    assert {s for s, order in INPUT_ORDER.items() if order == "key"} == {"sorted", "sort_group"}


def test_headline_ratios_are_per_run_job_time_ratios(result):
    s = result.summary
    for name, (over, under) in RATIOS.items():
        by_run = {
            (r["run"], r["strategy"]): r[HEADLINE_MEASURE]
            for r in result.rows
            if r["part"] == "main"
        }
        expected = by_run[(0, over)] / by_run[(0, under)]  # one run: the median is that run's
        assert s[name] == pytest.approx(expected)
        assert s[name + "_spread"]["min"] == pytest.approx(expected)
    # the operator breakdown is a different measure, beside the headline
    assert s["rocksdb_over_sorted_operator_cpu"] != s["rocksdb_over_sorted"]


def test_traced_peak_memory_grows_with_k_for_heap_state_and_not_for_sorted_input(result):
    by_k = result.summary["peak_memory_bytes_by_k"]
    assert set(by_k) == {"sorted", "heap"}
    small, large = "300", "30000"
    assert set(by_k["sorted"]) == {small, large}
    heap_growth = by_k["heap"][large] - by_k["heap"][small]
    sorted_growth = by_k["sorted"][large] - by_k["sorted"][small]
    # 30,000 keys of heap state cost real memory; sorted input holds one key at a time
    assert heap_growth > 1_000_000
    assert sorted_growth < heap_growth / 10
    assert by_k["sorted"][large] < by_k["heap"][large]
    main_rows = [r for r in result.rows if r["part"] == "main"]
    assert all(r["peak_memory_bytes"] is None for r in main_rows), "timed runs must not trace"


def test_summary_text_shows_headline_spread_and_seed(result):
    text = format_summary(result)
    assert "job seconds (sort included)" in text
    assert "seed 4.67" in text  # string keys: 116,894 / 25,007
    assert "traced peak memory of heap" in text


def test_the_summary_carries_every_headline_ratio_bench_compare_reads(result):
    from skewlab.experiments.chapters import headline_ratios

    assert all(result.summary[key] is not None for key in headline_ratios("sorted_input"))


def test_the_chapters_claims_read_this_tiny_run(result):
    outcomes = {c.id: c.evaluate(result) for c in chapter_claims("sorted_input")}
    # the memory claim follows from what the backends keep: it holds at any size
    memory = outcomes["sorted_memory_flat"]
    assert memory.held, memory.text
    assert (memory.figures["k_low"], memory.figures["k_high"]) == (300, 30_000)
    heap = outcomes["heap_beats_sorted_here"]
    assert heap.figures == {"ratio": result.summary["heap_over_sorted"]}
    assert heap.held == (result.summary["heap_over_sorted"] < 1)
    assert claim("sorted_input", "heap_beats_sorted_here").reverses_seed
    # the value-state claims read another benchmark's result: not measured here
    assert outcomes["heap_beats_rocksdb_ops"].status == NOT_MEASURED
