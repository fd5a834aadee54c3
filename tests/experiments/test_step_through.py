"""Step-through traces of real runs: each trace's final state equals what the run's sink
collected, what the same run untraced computes and what Spark SQL computes on its own; every
step agrees with an oracle of its mechanism (Flink's key-group formula, an LRU kept here, the
buffer's count bound)."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import asdict

import pytest

from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.experiments import salting, step_through
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.inputs.wordcount import wordcount_input
from skewlab.operators.traced import read_trace, traced_stage
from skewlab.state.key_groups import (
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
)
from skewlab.strategies import run_strategy
from skewlab.strategies.buffered import Buffered
from skewlab.strategies.count import run_count
from skewlab.strategies.naive import Naive
from skewlab.strategies.resume import run_with_savepoint


def spark_counts(df, key: str) -> dict[str, int]:
    """Records per key, by Spark SQL alone."""
    return {str(r[key]): r["count"] for r in df.groupBy(key).count().collect()}


def test_key_groups_trace_ends_with_the_counts_of_the_run_and_of_spark(spark):
    trace = step_through.trace_key_groups(spark, n_records=40, n_keys=8, parallelism=4)
    views = generate_views(spark, ViewSpec(40, 40, 8, "zipf", 1.1, 1))
    expected = spark_counts(views, "tweet_id")
    untraced = run_count(
        views.select(views.tweet_id.alias("word"), "seq"), "heap", parallelism=4,
        max_parallelism=128,
    )  # fmt: skip
    assert trace.final_state() == trace.results == expected == untraced.counts
    assert trace.records == trace.records_in == 40


def test_every_traced_record_went_to_the_subtask_flinks_formula_names(spark):
    trace = step_through.trace_key_groups(spark, n_records=40, parallelism=3)
    records = [e for e in trace.events if e["kind"] == "record"]
    assert [e["seq"] for e in records] == sorted(e["seq"] for e in records)  # arrival order
    for event in records:
        group = assign_to_key_group(event["key"], 128)
        assert event["key_group"] == group  # computed by Spark's JVM, checked in Python
        assert event["subtask"] == compute_operator_index_for_key_group(128, 3, group)
        lo, hi = trace.key_group_ranges[event["subtask"]]
        assert lo <= group <= hi
    last = trace.steps()[-1]
    assert sum(last["records_per_subtask"]) == 40
    assert last["records_per_subtask"] == [
        sum(e["subtask"] == s for e in records) for s in range(3)
    ]


def lru_oracle(keys, entries):
    """Per access: (hit, evicted key or None, cached keys after) of an LRU of ``entries``."""
    cache: OrderedDict = OrderedDict()
    out = []
    for key in keys:
        hit, evicted = key in cache, None
        if hit:
            cache.move_to_end(key)
        else:
            if len(cache) == entries:
                evicted, _ = cache.popitem(last=False)
            cache[key] = None
        out.append((hit, evicted, set(cache)))
    return out


@pytest.mark.parametrize("entries", [4, 6])
def test_cache_trace_hits_misses_and_evicts_as_an_lru_does(spark, entries):
    n, keys = 24, 6
    trace = step_through.trace_cache(spark, n_records=n, n_keys=keys, cache_entries=entries)
    assert (
        trace.final_state()
        == trace.results
        == spark_counts(wordcount_input(spark, n, keys), "word")
    )
    assert trace.results == {str(k): v for k, v in run_count(
        wordcount_input(spark, n, keys), "cached", cache_entries=entries, parallelism=1
    ).counts.items()}  # fmt: skip
    steps = [s for s in trace.steps() if s["event"]["kind"] == "record"]
    oracle = lru_oracle([s["event"]["key"] for s in steps], entries)
    for step, (hit, evicted, cached) in zip(steps, oracle, strict=True):
        state = step["event"]["state"]
        assert state.get("cache_hits", 0) == hit and state.get("cache_misses", 0) == (not hit)
        assert state.get("evictions", 0) == (evicted is not None)
        assert set(step["cached_keys"][0]) == {str(k) for k in cached}
    totals = trace.steps()[-1]["totals"]
    if entries < keys:  # a cycle longer than the cache: every access misses, FLIP-325's 0 %
        assert totals["cache_hits"] == 0 and totals["evictions"] == n - entries
    else:  # the whole cycle fits: only the first pass misses
        assert totals["cache_hits"] == n - keys and totals["evictions"] == 0


def test_buffer_trace_fills_to_max_count_and_flushes_one_write_per_key(spark):
    n, max_count = 40, 8
    trace = step_through.trace_buffer(spark, n_records=n, n_keys=4, max_count=max_count)
    views = generate_views(spark, ViewSpec(n, n, 4, "zipf", 1.1, 1))
    _, untraced = run_strategy(
        views, Buffered(buffer="list", max_count=max_count, trigger_interval_ms=0)
    )
    reference = spark_reference_aggregate(views)
    as_stats = {k: asdict(v.to_stats()) for k, v in reference.items()}
    assert trace.final_state() == trace.results == as_stats
    assert {k: asdict(v.to_stats()) for k, v in untraced.items()} == as_stats
    steps = trace.steps()
    previous_held: dict[str, int] = {}
    for step in steps:
        event, held = step["event"], step["buffered"].get(0, {})
        assert event["buffered"] == sum(held.values()) < max_count
        assert set(event["buffered_keys"]) == set(held)
        if event["out"].get("flushes"):  # one read and one write per key the buffer held
            flushed = dict(previous_held)
            if event["kind"] == "record":
                flushed[event["key"]] = flushed.get(event["key"], 0) + 1
            assert step["flushed"] == sum(flushed.values())
            assert event["state"]["writes"] == event["state"]["reads"] == len(flushed)
        else:
            assert "writes" not in event["state"]
        previous_held = held
    assert steps[-1]["totals"]["flushes"] == math.ceil(n / max_count)


def test_salting_trace_sums_running_partials_as_the_seeds_pipeline_does(spark):
    n, buckets = 24, 2
    trace = step_through.trace_salting(spark, n_records=n, n_keys=2, salt_buckets=buckets)
    views = generate_views(spark, ViewSpec(n, n, 2, "zipf", 1.1, 1))
    truth = spark_counts(views, "tweet_id")
    untraced = salting.salted_counter(views, salt_buckets=buckets, parallelism=2).table
    assert {r.tweet_id: [r.salted_sum, r.fixed_sum] for r in untraced.itertuples()} == {
        t: trace.results[t] for t in truth
    }
    final = trace.final_state()  # stage 2's state: the seed's total, each sub-key's latest
    assert {t: [total, sum(latest.values())] for t, (total, latest) in final.items()} == (
        trace.results
    )
    assert {t: right for t, (_, right) in trace.results.items()} == truth
    # the seed's sum is 1 + 2 + ... + n over each sub-key's n records, as stage 1 counted them
    sub_keys = trace.final_state("1:count-partial")
    for tweet, (seeds, _) in trace.results.items():
        sizes = [c for k, c in sub_keys.items() if k.rsplit("-", 1)[0] == tweet]
        assert seeds == sum(c * (c + 1) // 2 for c in sizes) > truth[tweet]
    # Spark ran stage 1 to its end before stage 2 began (a shuffle is a stage barrier)
    stages = [e["stage"] for e in trace.events]
    assert stages == sorted(stages) and trace.records == trace.records_in == n


def test_rescaling_trace_restores_each_new_subtasks_key_groups_from_the_old_files(spark):
    n, old_p, new_p = 40, 2, 3
    trace = step_through.trace_rescaling(
        spark, n_records=n, parallelism=old_p, new_parallelism=new_p
    )
    views = generate_views(spark, ViewSpec(n, n, 8, "zipf", 1.1, 1))
    reference = {k: asdict(v.to_stats()) for k, v in spark_reference_aggregate(views).items()}
    assert trace.final_state() == trace.results == reference
    untraced = run_with_savepoint(
        views, Naive(backend="heap"), JobConfig(parallelism=old_p), savepoint_at=n // 2,
        resume_parallelism=new_p,
    )  # fmt: skip
    assert {k: asdict(v.to_stats()) for k, v in untraced.results.items()} == reference
    files = trace.parameters["savepoint"]
    assert [f["key_groups"] for f in files] == [
        [r.start_key_group, r.end_key_group]
        for r in (compute_key_group_range_for_operator_index(128, old_p, i) for i in range(old_p))
    ]
    restores = [e for e in trace.events if e["kind"] == "restore"]
    assert [e["subtask"] for e in restores] == list(range(new_p))
    assert trace.events[:new_p] == restores  # before any record
    for event in restores:
        lo, hi = trace.key_group_ranges[event["subtask"]]
        spans = [r["key_groups"] for r in event["reads"]]
        # the spans read tile the subtask's own key groups, each inside the file it came from
        assert spans[0][0] == lo and spans[-1][1] == hi
        assert all(a[1] + 1 == b[0] for a, b in zip(spans, spans[1:], strict=False))
        for read in event["reads"]:
            f_lo, f_hi = read["file_key_groups"]
            assert f_lo <= read["key_groups"][0] <= read["key_groups"][1] <= f_hi
        assert event["restored"]["files_opened"] == len(event["reads"])
        by_file = {f["file"]: f for f in files}
        expected = sum(
            by_file[r["file"]]["entries"][g - by_file[r["file"]]["key_groups"][0]]
            for r in event["reads"]
            for g in range(r["key_groups"][0], r["key_groups"][1] + 1)
        )
        assert event["restored"]["keys_kept"] == expected
    assert sum(e["restored"]["keys_kept"] for e in restores) == sum(
        sum(f["entries"]) for f in files
    )
    assert trace.records == trace.records_in == n - n // 2


def test_bad_trace_sizes_are_refused_before_spark_starts_work(tmp_path):
    with pytest.raises(SkewlabInputError, match="at most 500 records"):
        step_through.trace_cache(None, n_records=501)
    with pytest.raises(SkewlabInputError, match="n_keys"):
        step_through.trace_key_groups(None, n_keys=0)
    with pytest.raises(SkewlabInputError, match="no trace in"):
        read_trace(tmp_path)


def test_a_directory_holding_a_trace_of_the_stage_is_refused(tmp_path):
    stage = step_through._views_stage("count", object)
    traced_stage(stage, tmp_path)  # an empty directory: taken
    (tmp_path / "count-0.jsonl").write_text("{}\n")  # what a run of it leaves
    traced_stage(step_through._views_stage("other", object), tmp_path)
    with pytest.raises(SkewlabInputError, match="already holds a trace of stage 'count'"):
        traced_stage(stage, tmp_path)
