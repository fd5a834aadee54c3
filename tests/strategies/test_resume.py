"""Exactly-once on Spark: stop with a savepoint, resume at another parallelism, and a failure
recovered from checkpoints -- each strategy's final digest is the reference's, every record
counted once; bad savepoints and parallelisms are refused before any Spark work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.savepoint import Savepoint
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Cached, Naive, Salted, Sorted
from skewlab.strategies.resume import (
    misrouted_in_flight,
    resume_from_savepoint,
    run_with_failure,
    run_with_savepoint,
    stop_with_savepoint,
    verify_savepoint,
)

N_VIEWS = 2_400
JOB = JobConfig(parallelism=2, max_parallelism=16, disk_profile=None)


@pytest.fixture(scope="module")
def views(spark):
    return generate_views(spark, ViewSpec(N_VIEWS, 300, 30, "zipf", 1.1, seed=5)).cache()


@pytest.fixture(scope="module")
def reference(views):
    return result_digest(spark_reference_aggregate(views))


def no_new_spark_jobs(spark):
    """A context manager that fails if Spark started a job meanwhile."""

    class Watch:
        def __enter__(self):
            self.before = spark.sparkContext.statusTracker().getJobIdsForGroup()

        def __exit__(self, *exc):
            assert spark.sparkContext.statusTracker().getJobIdsForGroup() == self.before

    return Watch()


@pytest.mark.parametrize(
    ("strategy", "in_flight", "new_p"),
    [
        (Naive(backend="heap"), "flush", 3),
        (Naive(backend="rocksdb"), "flush", 3),
        (Naive(backend="cached", cache_entries=5), "flush", 1),
        (Cached(cache_entries=10), "flush", 3),
        (Buffered(max_count=40, trigger_interval_ms=0), "flush", 3),
        (Buffered(max_count=40, trigger_interval_ms=0, buffer="list"), "keyed_state", 3),
        (Buffered(max_count=40, trigger_interval_ms=0, buffer="preaggregate"), "keyed_state", 1),
        (Salted(salt_buckets=3), "flush", 3),
        (Sorted(), "flush", 3),
    ],
    ids=lambda v: getattr(v, "name", None) and f"{v.name}-{v.parameters()}" or str(v),
)
def test_a_rescaled_run_ends_with_the_uninterrupted_digest(
    views, reference, strategy, in_flight, new_p
):
    run = run_with_savepoint(
        views, strategy, JOB, savepoint_at=1_111, resume_parallelism=new_p, in_flight=in_flight
    )
    assert run.result_digest == reference
    assert (run.before.records_in, run.after.records_in) == (1_111, N_VIEWS - 1_111)
    for job in (run.before, run.after):
        assert job.records_in == job.records_processed + job.records_rejected
    assert run.after.parameters["parallelism"] == new_p
    assert run.after.extra["recovery"]["restored_from"] == ["savepoint"]
    assert run.after.extra["recovery"]["restored_keys"] == run.summary()["savepoint_entries"] > 0
    if in_flight == "keyed_state":  # the buffer really had records in flight at the savepoint
        op = next(iter(run.savepoint["operators"].values()))
        assert op["keyed_states"]["in-flight"] > 0


def test_without_its_restored_state_the_second_job_would_be_wrong(views, reference, tmp_path):
    """The check above is not vacuous: the same two jobs without the restore differ."""
    before, first, _ = stop_with_savepoint(
        views, Naive(), JOB, savepoint_at=1_111, path=tmp_path / "sp"
    )
    from pyspark.sql import functions as F

    rest = views.filter(F.col("seq") >= 1_111)
    from skewlab.strategies import run_strategy

    _, second = run_strategy(rest, Naive(), replace(JOB, parallelism=3))
    assert result_digest({**first, **second}) != reference
    assert before.records_in == 1_111


def test_a_buffer_kept_as_list_state_resumes_in_place_but_cannot_be_rescaled(
    views, reference, tmp_path, spark
):
    strategy = Buffered(max_count=400, trigger_interval_ms=0, buffer="list")
    _, first, savepoint = stop_with_savepoint(
        views, strategy, JOB, savepoint_at=1_111, path=tmp_path / "sp", in_flight="operator_state"
    )
    elements = savepoint.operators["1:buffered"].operator_state.elements
    assert sum(len(elements(i, "in-flight")) for i in range(2)) > 0
    wrong = misrouted_in_flight(savepoint, 3)
    assert sum(wrong) > 0  # split-distribute hands buffered records to the wrong subtasks
    with no_new_spark_jobs(spark), pytest.raises(SkewlabInputError, match=r"cannot be rescaled"):
        resume_from_savepoint(
            views, strategy, JOB, savepoint, parallelism=3, in_flight="operator_state"
        )
    assert misrouted_in_flight(savepoint, 2) == [0, 0]  # the same parallelism keeps each list
    _, second = resume_from_savepoint(views, strategy, JOB, savepoint, parallelism=2)
    assert result_digest({**first, **second}) == reference


@pytest.fixture(scope="module")
def naive_savepoint(views, tmp_path_factory):
    path = tmp_path_factory.mktemp("sp") / "naive"
    stop_with_savepoint(views, Naive(), JOB, savepoint_at=800, path=path)
    return path


def test_bad_resumes_are_refused_before_any_spark_work(views, spark, naive_savepoint, tmp_path):
    cases = [
        (dict(parallelism=17), "exceeds the max parallelism 16"),
        (
            dict(parallelism=2, job=replace(JOB, max_parallelism=32)),
            "max parallelism 16; this job has 32",
        ),
        (
            dict(parallelism=2, strategy=Salted()),
            "taken by strategy 'naive'; this job runs 'salted'",
        ),
        (dict(parallelism=2, savepoint=tmp_path / "missing"), "does not exist"),
    ]
    for options, message in cases:
        args = {"strategy": Naive(), "job": JOB, "savepoint": naive_savepoint} | options
        with no_new_spark_jobs(spark), pytest.raises(SkewlabInputError, match=message):
            resume_from_savepoint(
                views, args.pop("strategy"), args.pop("job"), args.pop("savepoint"), **args
            )
    with no_new_spark_jobs(spark), pytest.raises(SkewlabInputError, match="exceeds the max"):
        run_with_savepoint(views, Naive(), JOB, savepoint_at=10, resume_parallelism=99)


def test_a_damaged_savepoint_is_refused_whole(views, spark, tmp_path):
    path = tmp_path / "sp"
    stop_with_savepoint(views, Naive(backend="heap"), JOB, savepoint_at=500, path=path)
    state = next(path.glob("*/keyed-value/subtask-1.kgs"))
    data = bytearray(state.read_bytes())
    data[8 + 2 : 8 + 4] = b"\x00\x0f"  # the first entry now claims key group 15 (not subtask 1's)
    state.write_bytes(bytes(data))
    Savepoint.load(path)  # its metadata still looks whole ...
    with (
        no_new_spark_jobs(spark),
        pytest.raises(SkewlabInputError, match=r"subtask-1.kgs: key group \d+: its \d+ bytes hash"),
    ):
        resume_from_savepoint(views, Naive(backend="heap"), JOB, path, parallelism=3)


def test_a_failure_needs_a_master_that_retries(views, spark):
    with no_new_spark_jobs(spark), pytest.raises(SkewlabInputError, match=r"local\[2,4\]"):
        run_with_failure(views, Naive(), JOB, fail_at=100, checkpoint_interval=50)


FAILURE_SCRIPT = """
import json, skewlab
from skewlab.strategies import Naive, Buffered, Cached, Salted, Sorted
from skewlab.strategies.resume import run_with_failure, run_with_savepoint
PARTS = globals().get("PARTS", ("failure", "rescale"))
spark = skewlab.get_spark()
views = skewlab.generate_views(spark, skewlab.ViewSpec(2_000, 300, 30, "zipf", 1.1, seed=8)).cache()
reference = skewlab.result_digest(skewlab.spark_reference_aggregate(views))
job = skewlab.JobConfig(parallelism=2, max_parallelism=16, disk_profile=None)
failures = [(Naive(backend="rocksdb"), 150), (Naive(backend="heap"), 150),
            (Buffered(max_count=64, trigger_interval_ms=0), 150),
            (Salted(salt_buckets=2), 150), (Sorted(), None)]
for params, interval in failures if "failure" in PARTS else []:
    r = run_with_failure(views, params, job, fail_at=1_234, checkpoint_interval=interval)
    rec = r.extra["recovery"]
    counted = r.records_in == r.records_processed + r.records_rejected
    print(json.dumps({
        "case": "failure", "strategy": params.name, "digest": r.result_digest == reference,
        "records_in": r.records_in, "ok": counted, "retried": rec["retried_subtasks"],
        "restored_from": rec["restored_from"], "skipped": rec["replay_skipped"],
    }))
rescales = [Naive(backend="rocksdb"), Naive(backend="heap"), Cached(cache_entries=8),
            Buffered(max_count=64, trigger_interval_ms=0), Salted(salt_buckets=2), Sorted()]
for params in rescales if "rescale" in PARTS else []:
    run = run_with_savepoint(views, params, job, savepoint_at=777, resume_parallelism=3)
    print(json.dumps({
        "case": "rescale", "strategy": params.name, "digest": run.result_digest == reference,
        "records_in": run.records_in, "ok": True, "retried": 0,
    }))
"""


def script_rows(proc: subprocess.CompletedProcess) -> list[dict]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def run_script(master: str, parts: tuple[str, ...]) -> list[dict]:
    """FAILURE_SCRIPT's ``parts`` (``failure``, ``rescale``) in a new process on ``master``."""
    env = {**os.environ, "SKEWLAB_SPARK_MASTER": master}
    script = f"PARTS = {parts!r}\n" + textwrap.dedent(FAILURE_SCRIPT) + "spark.stop()\n"
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900
    )
    return script_rows(proc)


def check_failure_rows(rows: list[dict], rescale: bool = True) -> None:
    assert len([r for r in rows if r["case"] == "rescale"]) == (6 if rescale else 0)
    assert {r["strategy"] for r in rows if r["case"] == "failure"} == {
        "naive",
        "buffered",
        "salted",
        "sorted",
    }
    for row in rows:
        assert row["digest"] and row["records_in"] == 2_000 and row["ok"], row
        if row["case"] == "failure":
            assert row["retried"] == 1, row  # the failed subtask ran a second attempt
            if row["strategy"] != "sorted":
                assert row["restored_from"] == ["checkpoint"] and row["skipped"] > 0, row
            else:  # sorted input: no checkpoints, the retried task reruns its partition
                assert row["restored_from"] == [] and row["skipped"] == 0, row


@pytest.mark.long
def test_an_injected_failure_is_recovered_from_checkpoints_with_task_retries():
    """local[2,4]: local mode with up to 4 attempts per task (local[*] does not retry). The
    script's failures only: its rescales need no retries, and the rescale tests above run them
    in this process (the local-cluster check runs both parts)."""
    check_failure_rows(run_script("local[2,4]", ("failure",)), rescale=False)


@pytest.mark.cluster
def test_failure_and_rescale_on_a_local_cluster(local_cluster):
    """Separate executor JVMs and Python workers: savepoints and checkpoints are files every
    executor reaches; nothing relies on driver-side state."""
    check_failure_rows(script_rows(local_cluster.run(textwrap.dedent(FAILURE_SCRIPT))))


def test_a_savepoint_of_heap_state_restores_into_rocksdb(views, reference, tmp_path):
    """The snapshot format is the backend's business only until it is written: heap and
    RocksDB write the same entries (values through the same serializer)."""
    _, first, savepoint = stop_with_savepoint(
        views, Naive(backend="heap"), JOB, savepoint_at=900, path=tmp_path / "sp"
    )
    after, second = resume_from_savepoint(
        views, Naive(backend="rocksdb"), JOB, savepoint, parallelism=3
    )
    assert result_digest({**first, **second}) == reference
    assert after.extra["recovery"]["restored_keys"] == savepoint.entries


def test_a_reused_checkpoint_directory_never_restores_another_runs_checkpoint(
    views, spark, tmp_path
):
    """One run id per run: the second run's first attempts start from nothing, not from the
    first run's last checkpoints left in the same directory."""
    from skewlab.engine.recovery import Recovery
    from skewlab.strategies import run_strategy

    recovery = Recovery(checkpoint_interval=200, checkpoint_dir=str(tmp_path))
    job = replace(JOB, recovery=recovery)
    first, _ = run_strategy(views, Naive(), job)
    assert first.extra["recovery"]["checkpoints"] > 0  # it left checkpoints behind
    other = generate_views(spark, ViewSpec(1_500, 200, 20, "uniform", seed=11))
    second, _ = run_strategy(other, Naive(), job)  # the same Recovery, the same directory
    assert second.extra["recovery"]["restored_from"] == []
    assert second.records_in == 1_500
    assert second.result_digest == result_digest(spark_reference_aggregate(other))


WRITER_SCRIPT = """
import sys, time
from skewlab.engine.savepoint import begin_savepoint
work = begin_savepoint(sys.argv[1])
(work / "1-naive" / "keyed-value").mkdir(parents=True)
(work / "1-naive" / "keyed-value" / "subtask-0.kgs").write_bytes(b"SKGS" + bytes(5000))
print(work, flush=True)
time.sleep(600)
"""


def start_writer(target) -> tuple[subprocess.Popen, str]:
    """A process that begins a savepoint to ``target``, writes part of it and waits."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, str(target)], stdout=subprocess.PIPE, text=True
    )
    return proc, proc.stdout.readline().strip()


def test_a_killed_savepoints_leftovers_are_removed_by_the_next_one(views, spark, tmp_path, capsys):
    target = tmp_path / "sp"
    proc, work = start_writer(target)
    try:  # a savepoint still being written: another to the same target is refused
        with no_new_spark_jobs(spark), pytest.raises(SkewlabInputError) as err:
            stop_with_savepoint(views, Naive(), JOB, savepoint_at=500, path=target)
        assert str(err.value) == (
            f"savepoint target {target} is being written by process {proc.pid}, still running "
            f"({Path(work).name}): wait for it to end or choose another path"
        )
    finally:
        proc.kill()  # kill -9 in the middle of the savepoint
        proc.wait()
    assert Path(work).is_dir() and not target.exists()  # nothing published, leftovers remain
    stop_with_savepoint(views, Naive(), JOB, savepoint_at=500, path=target)
    assert not Path(work).exists()
    assert (
        f"skewlab: removed {work}, an interrupted savepoint to the same target (process "
        f"{proc.pid}, gone); it was never published"
    ) in capsys.readouterr().err.splitlines()
    assert verify_savepoint(target).source_position == 500
    assert [p.name for p in tmp_path.iterdir()] == ["sp"]


def test_a_resume_is_bound_to_its_input_parameters_and_source_position(views, spark, tmp_path):
    """A savepoint resumed over other views, with other strategy parameters, or with an edited
    source position is refused, naming what differs."""
    from skewlab.state.metadata_file import write_metadata

    path = tmp_path / "sp"
    stop_with_savepoint(views, Salted(salt_buckets=2), JOB, savepoint_at=800, path=path)
    other = generate_views(spark, ViewSpec(N_VIEWS, 300, 30, "zipf", 1.1, seed=6))
    with pytest.raises(SkewlabInputError) as err:
        resume_from_savepoint(other, Salted(salt_buckets=2), JOB, path, parallelism=3)
    assert f"savepoint {path} was taken on other input: 800 records before source position" in (
        str(err.value)
    )
    with no_new_spark_jobs(spark), pytest.raises(SkewlabInputError) as err:
        resume_from_savepoint(views, Salted(salt_buckets=3), JOB, path, parallelism=3)
    assert "salt_buckets 2 (savepoint) vs 3 (this job)" in str(err.value)
    # the source position edited (and the metadata re-signed, as a careful forger would)
    meta = json.loads((path / "_metadata").read_text())
    meta["source_position"] = 700
    write_metadata(path, meta)
    with pytest.raises(SkewlabInputError, match="was taken on other input: 800 records before"):
        resume_from_savepoint(views, Salted(salt_buckets=2), JOB, path, parallelism=3)
    meta["source_position"] = 800
    write_metadata(path, meta)
    before = result_digest(spark_reference_aggregate(views))
    _, first, _ = stop_with_savepoint(
        views, Salted(salt_buckets=2), JOB, savepoint_at=800, path=tmp_path / "again"
    )
    _, second = resume_from_savepoint(views, Salted(salt_buckets=2), JOB, path, parallelism=3)
    assert result_digest({**first, **second}) == before  # the untouched binding still resumes


@pytest.mark.cluster
def test_a_failure_past_the_input_is_refused_not_silently_skipped(local_cluster):
    """--fail-at beyond the last source record would inject nothing and exit 0: refused in one
    line (exit 2) on a master that retries, before the job runs."""
    script = textwrap.dedent(
        """
        import contextlib, io
        from skewlab.cli import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main(["run", "naive", "--views", "300", "--tweets", "5",
                           "--checkpoint-interval", "50", "--fail-at", "300"])
        print(status, err.getvalue().strip())
        """
    )
    proc = local_cluster.run(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, message = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    assert status == "2", proc.stdout
    assert message == (
        "skewlab run: error: fail_at (--fail-at) 300 is past the input: its source records "
        "are 0 to 299, so no failure would be injected"
    )


def test_a_savepoint_whose_job_fails_says_what_failed_and_that_nothing_was_kept(spark, tmp_path):
    """A real failure in the middle of the job (a Parquet part damaged inside, its magic bytes
    intact): one line naming the cause, no savepoint and no partial files left."""
    from skewlab.errors import SkewlabRunError
    from skewlab.inputs.views import load_views

    folder = tmp_path / "views"
    generate_views(spark, ViewSpec(600, 30, 6, seed=2)).coalesce(1).write.parquet(str(folder))
    part = next(folder.glob("part-*"))
    data = bytearray(part.read_bytes())
    data[4:68] = b"\xff" * 64
    part.write_bytes(bytes(data))
    target = tmp_path / "sp"
    with pytest.raises(SkewlabRunError) as failed:
        stop_with_savepoint(load_views(spark, folder), Naive(), JOB, savepoint_at=300, path=target)
    message = str(failed.value)
    assert "\n" not in message and message.startswith(
        f"the savepoint to '{target}' was not taken: "
    )
    assert "FAILED_READ_FILE" in message and message.endswith(
        "nothing was published and its partial files were removed"
    )
    assert not target.exists() and not [p for p in tmp_path.iterdir() if "inprogress" in p.name]
