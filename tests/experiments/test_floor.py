"""The floor benchmark on a real local Spark: every step runs, each pass-through job emits every
record once under its job's emission contract at p = 1 and 2 (which part costs what is the
benchmark's to say, not a timed test's)."""

from __future__ import annotations

import pytest

from skewlab.aggregates.stats_state import with_single_view_states
from skewlab.cli import main
from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, python_columns, run_stage
from skewlab.engine.recovery import Recovery
from skewlab.experiments.chapters import size_settings
from skewlab.experiments.floor import (
    JOBS,
    PARTS,
    pass_through_stage,
    run_experiment,
    view_pass_through_stage,
)
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.inputs.wordcount import flip325_input


@pytest.mark.parametrize("p", [1, 3])
def test_the_pass_through_operator_emits_every_record_once_per_subtask(spark, p):
    words = flip325_input(spark, 5_003)
    stage = pass_through_stage()
    job = JobConfig(parallelism=p).resolved(2)
    out = collect_stage(run_stage(words, spark, stage, job), stage.serializer)
    assert sorted(out.results) == list(range(p))  # one result per subtask
    assert sum(r for r, _ in out.results.values()) == 5_003
    assert all(records == total for records, total in out.results.values())  # (key, 1) each
    assert [m.records_in for m in out.metrics] == [
        sum(1 for x in range(5_003) if _subtask(x, job) == i) for i in range(p)
    ]


def test_the_count_job_hands_python_only_what_it_reads(spark):
    # every column crossing to Python costs each record its Arrow conversion: at one subtask
    # the key alone (the subtask computes its key group), beyond it the key group Spark routed
    # by; ``seq`` only where the runtime reads it (a paced source's release times)
    words = flip325_input(spark, 2_001)
    stage = pass_through_stage()
    for p, rate, sent in (
        (1, None, ["word"]),
        (1, 1e7, ["word", "seq"]),
        (2, None, ["word", "_key_group"]),
    ):
        job = JobConfig(parallelism=p, source_rate=rate).resolved(2)
        out_df = run_stage(words, spark, stage, job)
        assert _python_input(out_df) == sent
        out = collect_stage(out_df, stage.serializer)
        assert sum(r for r, _ in out.results.values()) == 2_001


def test_seq_crosses_to_python_for_savepoints_and_checkpoints(tmp_path):
    # a savepoint or checkpoint records each subtask's source position: the runtime reads seq
    stage = pass_through_stage()
    checkpoints = Recovery(checkpoint_interval=100, checkpoint_dir=str(tmp_path / "checkpoints"))
    savepoint = Recovery(stop_at=10, savepoint_dir=str(tmp_path / "savepoint"))
    for recovery in (checkpoints, savepoint):
        job = JobConfig(parallelism=1, recovery=recovery).resolved(2)
        assert python_columns(stage, job, ["word", "seq"]) == ["word", "seq"]
    assert python_columns(stage, JobConfig(parallelism=1).resolved(2), ["word", "seq"]) == ["word"]


def _python_input(out_df) -> list[str]:
    """The columns of the plan node under Spark's ``MapInArrow``: what crosses to Python."""
    node = out_df._jdf.queryExecution().optimizedPlan()
    while "MapInArrow" not in node.nodeName():
        node = node.children().apply(0)
    names = node.children().apply(0).output()
    return [names.apply(i).name() for i in range(names.size())]


def _subtask(x: int, job: JobConfig) -> int:
    from skewlab.inputs.wordcount import flip325_key
    from skewlab.state.key_groups import assign_key_to_parallel_operator

    return assign_key_to_parallel_operator(flip325_key(x), job.max_parallelism, job.parallelism)


@pytest.mark.parametrize("p", [1, 2])
def test_the_view_pass_through_emits_every_view_once_into_the_sink(spark, p):
    views = generate_views(spark, ViewSpec(3_001, 50, 7, seed=3))
    stage = view_pass_through_stage()
    job = JobConfig(parallelism=p).resolved(2)
    out = collect_stage(run_stage(with_single_view_states(views), spark, stage, job),
                        stage.serializer)  # fmt: skip
    assert sum(m.records_out for m in out.metrics) == sum(m.records_in for m in out.metrics)
    assert sum(m.records_in for m in out.metrics) == 3_001
    # the sink keeps each tweet's latest emission: its last view's seq, in arrival order
    last = {r.tweet_id: r.seq for r in views.orderBy("seq").collect()}
    assert out.results == last
    assert sum(sum(m.latency) for m in out.metrics) == 3_001  # one latency per emission


@pytest.mark.long
def test_every_part_of_both_jobs_is_measured_and_every_record_is_emitted(spark):
    result = run_experiment("tiny", progress=False, spark=spark)
    s = result.summary
    assert s["every_record_emitted"]
    assert list(s["jobs"]) == list(JOBS)
    for of_job in s["jobs"].values():
        for p in ("1", "2"):
            assert list(of_job["part_us_per_record"][p]) == list(PARTS)
            assert of_job["floor_us_per_record"][p] > 0
            assert of_job["spark_sql_us_per_record"][p] > 0
    assert {(r["job"], r["part"]) for r in result.rows} == {
        (job, part) for job in JOBS for part in (*PARTS, "spark_sql")
    }
    view_n = size_settings("floor", "tiny")["view_n"]
    assert {r["records"] for r in result.rows if r["job"] == "view"} == {view_n}


def test_a_bad_size_is_refused_with_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "floor", "--size", "huge"])
    assert info.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err
