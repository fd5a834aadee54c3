"""Synthetic views generated in Spark: sizes, key counts, determinism, skew, schema checks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import (
    PARAMS_FILE,
    VIEWS_SCHEMA,
    ViewSpec,
    check_view_keys,
    check_views_schema,
    generate_views,
    key_load,
    load_summary,
    load_views,
    read_spec,
    save_views,
    zipf_cdf,
)


def _rows(df) -> pd.DataFrame:
    return df.toPandas().sort_values("seq").reset_index(drop=True)


def test_sizes_schema_and_distinct_tweets(spark):
    df = generate_views(spark, ViewSpec(n_views=20_000, n_users=500, n_tweets=20, seed=1))
    assert dict(df.dtypes) == VIEWS_SCHEMA
    rows = _rows(df)
    assert len(rows) == 20_000
    assert rows["tweet_id"].nunique() == 20
    assert rows["user_id"].nunique() <= 500
    assert rows["view_id"].is_unique
    assert rows["seq"].tolist() == list(range(20_000))
    assert set(rows["tweet_id"]) == {f"tweet-{i}" for i in range(20)}
    # event time advances 1 ms per view at the default 1,000 views/s
    step = rows["event_time"].diff().dropna().unique()
    assert list(step) == [pd.Timedelta(milliseconds=1)]


def test_same_seed_same_views_whatever_the_partitioning(spark):
    for distribution in ("uniform", "zipf"):
        spec = ViewSpec(3_000, 100, 40, distribution, 1.3, seed=5)
        one = _rows(generate_views(spark, spec, num_partitions=1))
        seven = _rows(generate_views(spark, spec, num_partitions=7))
        pd.testing.assert_frame_equal(one, seven)


def test_different_seeds_differ(spark):
    a = _rows(generate_views(spark, ViewSpec(1_000, 100, 40, seed=1)))
    b = _rows(generate_views(spark, ViewSpec(1_000, 100, 40, seed=2)))
    assert (a["tweet_id"] != b["tweet_id"]).mean() > 0.5


def test_uniform_is_flat_and_zipf_is_skewed(spark):
    n, tweets = 40_000, 200
    uniform = key_load(generate_views(spark, ViewSpec(n, 1000, tweets, seed=3)))
    zipf = key_load(generate_views(spark, ViewSpec(n, 1000, tweets, "zipf", 1.2, seed=3)))
    # uniform: every tweet near n / tweets (binomial sd ~ 14 around 200)
    assert uniform["records"].max() < 1.5 * n / tweets
    # Zipf(s): the hottest tweet's expected share is 1 / H(tweets, s)
    expected_top = 1.0 / np.sum(np.arange(1, tweets + 1, dtype=float) ** -1.2)
    assert zipf["tweet_id"].iloc[0] == "tweet-0"
    assert zipf["share"].iloc[0] == pytest.approx(expected_top, rel=0.05)
    # and rank 2 carries about 2^-s of rank 1
    ratio = zipf["records"].iloc[1] / zipf["records"].iloc[0]
    assert ratio == pytest.approx(2**-1.2, rel=0.1)
    summary = load_summary({"uniform": uniform, "zipf": zipf})
    assert (
        summary.loc["zipf", "hottest_over_mean"]
        > 10 * summary.loc["uniform", "hottest_over_mean"] / 1.5
    )


def test_zipf_cdf():
    cdf = zipf_cdf(4, 1.0)
    h = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert cdf.tolist() == pytest.approx([1 / h, 1.5 / h, (1.5 + 1 / 3) / h, 1.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_views": -1}, "n_views (--views) must be a whole number >= 0, got -1"),
        ({"n_tweets": 0}, "n_tweets (--tweets) must be a whole number >= 1, got 0"),
        ({"n_users": 0}, "n_users (--users) must be a whole number >= 1, got 0"),
        ({"distribution": "pareto"}, "distribution (--distribution) 'pareto': use one of uniform"),
        ({"distribution": "zipf", "skew": 0.0}, "Zipf skew (--skew) must be a number > 0"),
        ({"distribution": "zipf", "skew": float("nan")}, "Zipf skew (--skew) must be a number > 0"),
    ],
)
def test_spec_rejects_bad_parameters(kwargs, message):
    params = {"n_views": 10, "n_users": 5, "n_tweets": 3, **kwargs}
    with pytest.raises(SkewlabInputError) as err:
        ViewSpec(**params)
    assert message in str(err.value)


def test_save_and_load_round_trip_with_parameters(spark, tmp_path):
    spec = ViewSpec(500, 50, 7, "zipf", 1.1, seed=9)
    out = save_views(generate_views(spark, spec), spec, tmp_path / "views")
    assert json.loads((out / PARAMS_FILE).read_text())["skew"] == 1.1
    assert read_spec(out) == spec
    pd.testing.assert_frame_equal(_rows(load_views(spark, out)), _rows(generate_views(spark, spec)))


def test_save_refuses_an_output_path_that_is_a_file(spark, tmp_path):
    target = tmp_path / "file.parquet"
    target.write_text("not a directory")
    with pytest.raises(SkewlabInputError, match="exists and is a file"):
        save_views(generate_views(spark, ViewSpec(5, 5, 5)), None, target)


def test_load_names_missing_and_mistyped_columns(spark, tmp_path):
    bad = spark.createDataFrame([("v", 3)], "view_id string, tweet_id int")
    with pytest.raises(SkewlabInputError) as err:
        check_views_schema(bad)
    text = str(err.value)
    assert "missing column(s) user_id (string)" in text
    assert "tweet_id is int, expected string" in text
    bad.write.parquet(str(tmp_path / "bad"))
    with pytest.raises(SkewlabInputError, match="user_id"):
        load_views(spark, tmp_path / "bad")
    with pytest.raises(SkewlabInputError, match="no views at"):
        load_views(spark, tmp_path / "nowhere")


def test_a_folder_without_parquet_data_is_refused_in_one_line_before_spark_reads(spark, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "_SUCCESS").write_text("")  # Spark's hidden files are not data
    with pytest.raises(SkewlabInputError, match=r"no Parquet files in .*empty"):
        load_views(spark, empty)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.txt").write_text("not views")
    with pytest.raises(SkewlabInputError, match=r"readme.txt' is not a Parquet file"):
        load_views(spark, notes)
    stopped = tmp_path / "stopped"  # what a write killed before its job committed leaves
    (stopped / "_temporary" / "0").mkdir(parents=True)
    with pytest.raises(SkewlabInputError, match="holds an unfinished write"):
        load_views(spark, stopped)
    cut = tmp_path / "cut"
    generate_views(spark, ViewSpec(50, 5, 5)).coalesce(1).write.parquet(str(cut))
    part = next(cut.glob("part-*"))
    part.write_bytes(part.read_bytes()[:-3])  # a truncated copy: its footer's magic is gone
    with pytest.raises(SkewlabInputError, match="is not a Parquet file"):
        load_views(spark, cut)


def test_the_cli_says_one_line_for_a_folder_that_is_not_a_view_set(tmp_path, capsys):
    from skewlab.cli import main

    (tmp_path / "readme.txt").write_text("not views")
    assert main(["run", "naive", "--views", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is not a Parquet file" in err, err


def test_keys_state_cannot_hold_are_refused_when_views_are_loaded(spark, tmp_path):
    """A 70,000-byte key and keys that are not UTF-8 (an encoded lone surrogate) used to fail
    inside a Spark task after the work; now load_views names them first."""
    from pyspark.sql import functions as F

    views = generate_views(spark, ViewSpec(200, 10, 5))
    hot = views.first()["tweet_id"]
    is_hot = F.col("tweet_id") == F.lit(hot)
    long_key = views.withColumn(
        "tweet_id", F.when(is_hot, F.repeat(F.lit("x"), 70_000)).otherwise(F.col("tweet_id"))
    )
    long_key.write.parquet(str(tmp_path / "long"))
    with pytest.raises(SkewlabInputError, match=r"views: \d+ tweet_id longer than 65,535 bytes "
                       r"\(the longest 70,000\)"):  # fmt: skip
        load_views(spark, tmp_path / "long")
    surrogate = F.unhex(F.lit("EDA080")).cast("string")
    views.withColumn(
        "tweet_id", F.when(is_hot, surrogate).otherwise(F.col("tweet_id"))
    ).write.parquet(str(tmp_path / "surrogate"))
    with pytest.raises(SkewlabInputError, match=r"tweet_id not valid UTF-8 \(e.g. bytes EDA080\)"):
        load_views(spark, tmp_path / "surrogate")
    edge = views.withColumn(
        "tweet_id", F.when(is_hot, F.repeat(F.lit("x"), 65_535)).otherwise(F.col("tweet_id"))
    )
    check_view_keys(edge)  # the longest key state holds passes
