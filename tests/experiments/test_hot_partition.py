"""bench hot_partition at a tiny size: the per-record run over Zipf views ends with Spark SQL's
registers, every view is counted, the partition the state store names for ``tweet-0`` is the one
its rows went to, the shares add up; what Spark says on its default provider; the printed summary
and the notebook's helpers read this run and a reference alike."""

from __future__ import annotations

import json

import pytest

from skewlab.engine.metrics import RunResult
from skewlab.experiments import hot_partition
from skewlab.experiments.chapters import size_settings
from skewlab.viz.streaming import (
    format_hot_partition_summary,
    hot_partition_shown,
    provider_error_text,
)


@pytest.fixture(scope="module")
def tiny(spark):
    return hot_partition.run_experiment("tiny", progress=False, spark=spark)


@pytest.mark.long
def test_the_run_counts_every_view_as_spark_sql_does_and_names_tweet_0s_partition(tiny):
    s, settings = tiny.summary, size_settings("hot_partition", "tiny")
    assert s["digest_matches_reference"] is True
    assert s["records_in"] == s["records_processed"] == settings["n_views"]
    assert s["parallelism"] == settings["parallelism"]
    rows = {}
    for sub in tiny.rows:
        rows[sub["partition"]] = rows.get(sub["partition"], 0) + sub["records"]
    assert sum(rows.values()) == settings["n_views"]
    # Zipf(1.2) over 20 tweets: tweet-0 alone is about a third of the views, so the partition
    # holding its state receives the most rows
    assert s["hot_partition"] == max(rows, key=rows.get)
    assert s["hot_partition_row_share"] == pytest.approx(
        rows[s["hot_partition"]] / sum(rows.values())
    )
    assert 0 < s["hot_partition_time_share"] <= 1


@pytest.mark.long
def test_spark_refuses_transform_with_state_on_its_default_provider(tiny):
    said = tiny.summary["default_provider_error"]
    assert "STORE_BACKEND_NOT_SUPPORTED_FOR_TWS" in said and "RocksDBStateStoreProvider" in said
    assert (
        provider_error_text(tiny).splitlines()[0]
        == "What Spark said, this run (tiny, this machine):"
    )


@pytest.mark.long
def test_a_saved_result_draws_the_same_run_as_this_one(tiny):
    saved = json.loads(json.dumps({"size": "tiny", "summary": tiny.summary}))
    run, hot = hot_partition_shown(saved)
    mine, my_hot = hot_partition_shown(tiny)
    assert isinstance(run, RunResult) and hot == my_hot and run.subtasks == mine.subtasks
    settings = size_settings("hot_partition", "tiny")
    assert len(run.extra["batches"]) == -(-settings["n_views"] // settings["rows_per_trigger"])


@pytest.mark.long
def test_the_printed_summary_names_the_partition_and_spark_s_line(tiny):
    text = format_hot_partition_summary(tiny)
    assert f"partition {tiny.summary['hot_partition']} of 4 holds tweet-0" in text
    assert "equal to Spark SQL's" in text and "STORE_BACKEND_NOT_SUPPORTED_FOR_TWS" in text


def test_bad_input_is_refused_before_spark_starts():
    from skewlab.errors import SkewlabInputError

    with pytest.raises(SkewlabInputError, match="skew"):
        hot_partition.run_experiment("tiny", skew=0, spark=object())
    with pytest.raises(SkewlabInputError, match="parallelism"):
        hot_partition.run_experiment("tiny", parallelism=0, spark=object())
