"""The floor benchmark on a real local Spark: every step runs, the pass-through job emits every
record once under the count job's emission contract at p = 1 and 2 (which part costs what is
the benchmark's to say, not a timed test's)."""

from __future__ import annotations

import pytest

from skewlab.cli import main
from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, run_stage
from skewlab.experiments.floor import PARTS, pass_through_stage, run_experiment
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


def _subtask(x: int, job: JobConfig) -> int:
    from skewlab.inputs.wordcount import flip325_key
    from skewlab.state.key_groups import assign_key_to_parallel_operator

    return assign_key_to_parallel_operator(flip325_key(x), job.max_parallelism, job.parallelism)


def test_every_part_is_measured_and_every_record_is_emitted(spark):
    result = run_experiment("tiny", progress=False, spark=spark)
    s = result.summary
    assert s["every_record_emitted"]
    for p in ("1", "2"):
        parts = s["part_us_per_record"][p]
        assert list(parts) == list(PARTS)
        assert s["floor_us_per_record"][p] > 0 and s["spark_sql_us_per_record"][p] > 0
    assert {r["part"] for r in result.rows} == {*PARTS, "spark_sql"}


def test_a_bad_size_is_refused_with_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "floor", "--size", "huge"])
    assert info.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err
