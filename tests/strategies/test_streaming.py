"""The streaming strategy on Spark's own engine: every variant against the reference, from the
sink and from the state store, with every record accounted for; the hot partition; stop and
resume; a failure mid-stream; bad input refused before a query starts."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.cli import main
from skewlab.engine.config import JobConfig
from skewlab.engine.streaming import StreamingQueryFailed, read_state
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Streaming, run_strategy
from skewlab.strategies.streaming import VARIANTS, hot_partitions

N_NULL = 3
#: two state partitions: fewer than the tests' default shuffle partitions (two per core), so a
#: query's count shows the job's parallelism reached it; every commit is per partition
JOB = JobConfig(parallelism=2, disk_profile=None)
#: the hot-partition check wants its ~60 % beside partitions of ~13 % each
HOT_JOB = JobConfig(parallelism=4, disk_profile=None)


def _views(spark, spec):
    from pyspark.sql import functions as F

    views = generate_views(spark, spec, num_partitions=2)
    nulls = views.limit(N_NULL).select(
        (F.col("seq") + 10_000_000).alias("seq"),
        F.concat(F.lit("null-"), "view_id").alias("view_id"),
        "user_id",
        F.lit(None).cast("string").alias("tweet_id"),
        "event_time",
    )
    return views.unionByName(nulls).cache()


@pytest.fixture(scope="module", params=["uniform", "zipf"])
def views_and_reference(request, spark):
    spec = ViewSpec(1_500, 200, 20, request.param, 2.0, seed=11)
    views = _views(spark, spec)
    reference = spark_reference_aggregate(views)
    yield views, (result_digest(reference), len(reference)), spec.n_views
    views.unpersist()


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_ends_with_the_reference_in_its_sink_and_its_state(
    views_and_reference, variant, tmp_path
):
    views, (reference, keys), n = views_and_reference
    params = Streaming(variant=variant, max_rows_per_trigger=600, checkpoint_dir=str(tmp_path))
    result, states = run_strategy(views, params, JOB)
    assert result.result_digest == reference  # the sink's latest registers per tweet
    assert result.extra["state_digest"] == reference  # the statestore source, independently
    assert result.records_in == n + N_NULL == result.extra["run_records_in"]
    assert (result.records_processed, result.records_rejected) == (n, N_NULL)
    assert [b["rows"] for b in result.extra["batches"]] == [600, 600, 303]
    assert result.extra["state_partitions"] == JOB.parallelism
    assert result.keys == len(states) == keys
    if variant == "per-record":  # one state write and one running TweetStats per row
        assert result.state_writes == n and result.records_out == n
        assert result.extra["state_rows_updated"] == n
    elif variant == "per-batch":  # one write and one emission per key and micro-batch
        assert result.state_writes == result.records_out <= 3 * keys
    else:  # Spark's aggregation keeps one state row per (tweet, sketch, register)
        assert result.records_out > result.keys and not result.subtasks
    if variant != "builtin":
        rows = sum(s["records"] for s in result.subtasks)
        assert rows == n + N_NULL  # every row reached the processor once
        assert {s["batch"] for s in result.subtasks} == {0, 1, 2}
    assert result.latency_p50_ms is not None and result.latency_p99_ms >= result.latency_p50_ms


def test_the_partition_that_holds_the_hot_key_is_the_slowest_in_every_batch(spark, tmp_path):
    # Zipf(2.0) over 20 tweets: tweet-0 has ~60% of the views
    views = generate_views(spark, ViewSpec(1_500, 200, 20, "zipf", 2.0, seed=4))
    params = Streaming(variant="per-record", max_rows_per_trigger=500, checkpoint_dir=str(tmp_path))
    result, _ = run_strategy(views, params, HOT_JOB)
    state = read_state(spark, tmp_path / "checkpoint", state_var="stats")
    hot = state.where("key.tweet_id = 'tweet-0'").first().partition_id
    batches = hot_partitions(result)
    assert len(batches) == 3
    # the hot key's partition holds most rows of every micro-batch (exact) ...
    for batch in {row["batch"] for row in result.subtasks}:
        rows = {r["partition"]: r["records"] for r in result.subtasks if r["batch"] == batch}
        assert max(rows, key=rows.get) == hot and rows[hot] > 0.5 * sum(rows.values()), rows
    # ... and spends the most processor time over the run: with ~60% of the rows against
    # ~13% each, a busy machine's jitter in one batch cannot turn that round (the per-batch
    # slowest partition, what hot_partitions reports, usually is it too)
    seconds: dict[int, float] = {}
    for r in result.subtasks:
        seconds[r["partition"]] = seconds.get(r["partition"], 0.0) + r["operator_seconds"]
    assert max(seconds, key=seconds.get) == hot, seconds
    assert sum(b["partition"] == hot for b in batches) >= 2, batches


@pytest.mark.long
def test_a_query_stopped_mid_stream_resumes_to_the_reference_counting_no_record_twice(
    spark, tmp_path
):
    views = generate_views(spark, ViewSpec(1_500, 200, 30, "zipf", 1.2, seed=6)).cache()
    reference = result_digest(spark_reference_aggregate(views))
    first, _ = run_strategy(
        views,
        Streaming(variant="per-batch", max_rows_per_trigger=300, checkpoint_dir=str(tmp_path),
                  stop_after_batches=2),
        JOB,
    )  # fmt: skip
    assert first.extra["stopped_early"] and not first.extra["resumed"]
    assert first.records_in == 600 and first.result_digest != reference  # two micro-batches
    second, _ = run_strategy(
        views,
        Streaming(variant="per-batch", max_rows_per_trigger=300, checkpoint_dir=str(tmp_path)),
        JOB,
    )
    assert second.extra["resumed"] and not second.extra["stopped_early"]
    assert second.result_digest == second.extra["state_digest"] == reference
    assert first.extra["run_records_in"] + second.extra["run_records_in"] == 1_500
    assert second.records_in == second.records_processed == 1_500  # the whole query, once
    views.unpersist()


@pytest.mark.long
def test_a_failing_micro_batch_is_named_and_the_checkpoint_resumes(spark, tmp_path):
    views = generate_views(spark, ViewSpec(900, 100, 10, seed=7))
    reference = result_digest(spark_reference_aggregate(views))
    params = Streaming(variant="per-record", max_rows_per_trigger=300,
                       checkpoint_dir=str(tmp_path))  # fmt: skip
    run_strategy(views, Streaming(**{**params.__dict__, "stop_after_batches": 1}), JOB)
    segment = tmp_path / "source" / "segment-000000000600.arrow"
    shutil.move(segment, tmp_path / "kept.arrow")  # the source loses offsets 600..899
    with pytest.raises(StreamingQueryFailed) as failed:
        run_strategy(views, params, JOB)
    assert failed.value.batch_id == 2
    assert "segment-000000000600.arrow" in str(failed.value) and "\n" not in str(failed.value)
    shutil.move(tmp_path / "kept.arrow", segment)
    result, _ = run_strategy(views, params, JOB)
    assert result.extra["resumed"] and result.result_digest == reference
    assert result.records_in == result.records_processed == 900


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Streaming(variant="per-key"), "unknown variant (--variant) 'per-key'"),
        (lambda: Streaming(trigger_interval_ms=0), "trigger_interval_ms (--trigger-interval-ms)"),
        (lambda: Streaming(trigger_interval_ms=-5), "must be a number > 0"),
        (lambda: Streaming(max_rows_per_trigger=0), "max_rows_per_trigger"),
        (lambda: Streaming(stop_after_batches=0), "stop_after_batches"),
        (
            lambda: Streaming(stop_after_batches=2, max_rows_per_trigger=None),
            "stop_after_batches (--stop-after-batches) needs max_rows_per_trigger",
        ),
    ],
)
def test_bad_parameters_are_one_line_before_spark_works(spark, make, message):
    with pytest.raises(SkewlabInputError) as err:
        make()
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_checkpoint_of_another_query_is_refused_before_the_query_starts(spark, tmp_path):
    views = generate_views(spark, ViewSpec(300, 50, 5, seed=2))
    run_strategy(views, Streaming(variant="per-batch", checkpoint_dir=str(tmp_path)), JOB)
    batches = sorted(p.name for p in (tmp_path / "checkpoint" / "commits").iterdir())
    for other in (
        Streaming(variant="builtin", checkpoint_dir=str(tmp_path)),
        Streaming(variant="per-batch", precision=12, checkpoint_dir=str(tmp_path)),
    ):
        with pytest.raises(SkewlabInputError, match="belongs to another query"):
            run_strategy(views, other, JOB)
    more = generate_views(spark, ViewSpec(301, 50, 5, seed=2))  # another view set
    with pytest.raises(SkewlabInputError, match="belongs to another query"):
        run_strategy(more, Streaming(variant="per-batch", checkpoint_dir=str(tmp_path)), JOB)
    assert sorted(p.name for p in (tmp_path / "checkpoint" / "commits").iterdir()) == batches
    assert spark.streams.active == []
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(SkewlabInputError, match="belongs to no skewlab streaming query"):
        run_strategy(views, Streaming(checkpoint_dir=str(stranger)), JOB)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "bogus"], "unknown variant (--variant) 'bogus'"),
        (["--max-rows-per-trigger", "0"], "max_rows_per_trigger (--max-rows-per-trigger)"),
        (["--trigger-interval-ms", "0"], "trigger_interval_ms (--trigger-interval-ms)"),
        (["--salt-buckets", "3"], "strategy 'streaming' has no option --salt-buckets"),
    ],
)
def test_the_cli_exits_2_with_one_line(argv, message, capsys):
    assert main(["run", "streaming", "--views", "100", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.cluster
def test_every_variant_equals_the_reference_on_a_local_cluster(local_cluster):
    """Separate executor JVMs and Python workers: the source, the processors and the state
    store must not rely on the driver's process."""
    script = textwrap.dedent(
        """
        import skewlab

        spark = skewlab.get_spark()
        assert spark.sparkContext.master.startswith("local-cluster")
        job = skewlab.JobConfig(parallelism=3, disk_profile=None)
        for distribution in ("uniform", "zipf"):
            spec = skewlab.ViewSpec(600, 100, 20, distribution, 1.3, seed=9)
            views = skewlab.generate_views(spark, spec).cache()
            reference = skewlab.result_digest(skewlab.spark_reference_aggregate(views))
            for variant in ("per-record", "per-batch", "builtin"):
                params = skewlab.Streaming(variant=variant, max_rows_per_trigger=300)
                result, _ = skewlab.run_strategy(views, params, job)
                same = result.result_digest == result.extra["state_digest"] == reference
                print(variant, same, result.records_in, result.extra["state_partitions"])
        """
    )
    proc = local_cluster.run(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    assert [ln[0] for ln in lines] == list(VARIANTS) * 2  # uniform, then Zipf
    assert all(ln[1:] == ["True", "600", "3"] for ln in lines), proc.stdout
