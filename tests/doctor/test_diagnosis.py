"""The skew doctor, checked against independent oracles on a real local Spark: the hot keys
against pandas over the collected records, Flink's subtask loads against the records-in a real
naive run measured, Spark's partitions against ``spark_partition_id()`` after a real
``repartition``, Kafka's against Kafka's own murmur2 vectors."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from skewlab.cli import main
from skewlab.doctor.diagnosis import diagnose, fit_zipf, read_records
from skewlab.doctor.viz import doctor_text, write_html
from skewlab.engine.config import JobConfig
from skewlab.engine.partitioners import (
    check_key_type,
    kafka_key_bytes,
    murmur2,
    spark_partition_expression,
)
from skewlab.engine.skew import (
    parallelism_sweep,
    range_unevenness,
    skew_score,
    subtask_loads,
)
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.state.key_groups import compute_key_group_range_for_operator_index
from skewlab.strategies import Naive, run_strategy

# Kafka's UtilsTest.testMurmur2 vectors
KAFKA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("data", "expected"), KAFKA_MURMUR2.items())
def test_murmur2_equals_kafkas_own_test_vectors(data, expected):
    assert murmur2(data) == expected


def test_kafka_key_bytes_follow_the_standard_serializers():
    assert kafka_key_bytes(-1, "int") == b"\xff\xff\xff\xff"
    assert kafka_key_bytes(258, "smallint") == b"\x01\x02"
    assert kafka_key_bytes(1, "bigint") == b"\x00" * 7 + b"\x01"
    with pytest.raises(SkewlabInputError, match="kafka cannot hash a tinyint key"):
        check_key_type("tinyint", ["kafka"])
    with pytest.raises(SkewlabInputError, match="flink cannot hash this key"):
        check_key_type("double", ["flink"])


def test_skew_score_is_flinks_own():
    # Flink's DoubleAccumulatorTest: [23, 3, 10] -> 61 % within 0.5, [300, 0, 0] -> 100 %
    assert skew_score([23, 3, 10]) == pytest.approx(61, abs=0.5)
    assert skew_score([300, 0, 0]) == 100.0
    assert skew_score([]) == 0.0 and skew_score([123]) == 0.0 and skew_score([0, 0, 0]) == 0.0
    # FLIP-418's worked examples where its page and its formula agree
    assert round(skew_score([4, 5, 5, 5, 5])) == 7 and skew_score([5] * 5) == 0.0
    # ... and where the page's rounding does not (88 % and 54 % there): the formula's figures
    assert skew_score([1, 1, 1, 5, 10]) == pytest.approx(86.67, abs=0.01)
    assert skew_score([1, 1, 5, 5, 5]) == pytest.approx(56.47, abs=0.01)


@pytest.mark.parametrize(("max_p", "p"), [(128, 3), (128, 65), (128, 96), (4096, 100), (7, 7)])
def test_subtask_loads_follow_flinks_key_group_ranges(max_p, p):
    loads = np.random.default_rng(p).integers(0, 1000, max_p)
    by_range = [
        loads[r.start_key_group : r.end_key_group + 1].sum()
        for r in (compute_key_group_range_for_operator_index(max_p, p, i) for i in range(p))
    ]
    assert subtask_loads(loads, p).tolist() == by_range
    # equal load per key group: the busiest over the mean is the ranges' own unevenness
    even = subtask_loads(np.ones(max_p, dtype=np.int64), p)
    assert even.max() / even.mean() == pytest.approx(range_unevenness(max_p, p))


def test_the_hottest_key_bounds_every_parallelism():
    loads = np.ones(128, dtype=np.int64)
    loads[5] = 1_000  # one hot key alone in key group 5
    for row in parallelism_sweep(loads, range(1, 129), hottest_key_records=1_000):
        assert row["speedup"] <= loads.sum() / 1_000 + 1e-9
        assert row["max_over_mean"] >= row["hot_key_floor"] - 1e-9


def test_the_smallest_parallelism_is_the_first_whose_busiest_subtask_keeps_up():
    from skewlab.engine.skew import smallest_parallelism

    loads = np.random.default_rng(3).integers(0, 50, 128)
    loads[7] += 2_000  # one hot key group
    total = int(loads.sum())
    rows = parallelism_sweep(loads, range(1, 129), hottest_key_records=2_000)
    for target, capacity in [(10_000, 4_000), (10_000, 6_000), (50_000, 30_000)]:
        found = smallest_parallelism(rows, 2_000 / total, target, capacity)
        fits = [
            p for p in range(1, 129)
            if target * subtask_loads(loads, p).max() / total <= capacity
        ]  # fmt: skip
        assert found["parallelism"] == (fits[0] if fits else None)
    # the hottest key alone over the capacity: no parallelism does
    none = smallest_parallelism(rows, 2_000 / total, 100_000, 1_000)
    assert none["parallelism"] is None and none["hottest_key_rate"] > 1_000


def test_zipf_fit_recovers_the_exponent():
    ranks = np.arange(1, 501)
    fit = fit_zipf(np.round(1e6 / ranks**1.2))
    assert fit["exponent"] == pytest.approx(1.2, abs=0.01) and fit["r_squared"] > 0.999
    assert fit_zipf(np.array([5, 4])) is None


@pytest.fixture(scope="module")
def records(spark):
    views = generate_views(
        spark, ViewSpec(20_000, 2_000, 500, distribution="zipf", skew=1.1, seed=5)
    )
    nulls = views.limit(37).selectExpr(
        "seq", "view_id", "user_id", "CAST(NULL AS STRING) AS tweet_id", "event_time"
    )
    return views.unionByName(nulls)


@pytest.fixture(scope="module")
def report(records):
    # no remedies: the tests here read the hot keys and the engines' loads; the remedies' own
    # tests are in test_remedies.py
    return diagnose(
        records, "tweet_id", time="event_time", parallelism=(2, 4), partitions=5, remedies=False
    )


def test_hot_keys_distinct_and_nulls_equal_pandas_over_the_records(records, report):
    frame = records.select("tweet_id", "event_time").toPandas()
    counts = frame["tweet_id"].value_counts()
    i = report.input
    assert i.records == len(frame) == 20_037
    assert i.null_keys == 37 and i.null_share == 37 / 20_037
    assert i.distinct_keys == counts.size
    top = report.hot_keys.top
    expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: len(top)]
    assert [(t.key, t.records) for t in top] == expected
    assert top[0].share == counts.iloc[0] / 20_037
    assert report.hot_keys.max_speedup == pytest.approx(20_000 / counts.iloc[0])
    assert 0.8 < report.zipf.exponent < 1.4
    # the hottest key's peak records per 1 s window, against pandas
    hot = frame[frame["tweet_id"] == top[0].key]
    per_second = hot.groupby(hot["event_time"].dt.floor("1s")).size()
    assert report.peak.peak_records == per_second.max()


def test_flink_subtask_loads_equal_a_real_naive_runs_records_in(records, report):
    flink = report.engines["flink"]
    assert flink.max_parallelism == 128 and sum(flink.key_group_loads) == 20_000
    assert flink.null_keys_refused == 37
    views = records.where("tweet_id IS NOT NULL")
    for row in flink.subtasks[-1:]:  # P=4 (P=2 is the same code)
        job = JobConfig(parallelism=row.parallelism, max_parallelism=128)
        measured, _ = run_strategy(views, Naive(backend="heap"), job)
        per_subtask = sorted((s["subtask"], s["records"]) for s in measured.subtasks)
        assert [n for _, n in per_subtask] == list(row.loads)


def test_spark_partitions_equal_a_real_repartition(records, report):
    from pyspark.sql import functions as F

    spark_loads = list(report.engines["spark"].loads)
    real = (
        records.repartition(5, "tweet_id")
        .groupBy(F.spark_partition_id().alias("p"))
        .count()
        .toPandas()
        .set_index("p")["count"]
    )
    assert spark_loads == [int(real.get(p, 0)) for p in range(5)]
    assert sum(spark_loads) == 20_037  # Spark routes null keys too
    ints = records.selectExpr("CAST(seq AS BIGINT) AS k")
    expr = spark_partition_expression("k", 7)
    placed = ints.selectExpr("k", f"{expr} AS mine").repartition(7, "k")
    assert placed.where(F.col("mine") != F.spark_partition_id()).count() == 0


def test_kafka_partitions_equal_murmur2_over_each_record(records, report):
    keys = [r.tweet_id for r in records.select("tweet_id").collect() if r.tweet_id is not None]
    expected = np.bincount(
        [(murmur2(k.encode()) & 0x7FFFFFFF) % 5 for k in keys], minlength=5
    ).tolist()
    assert list(report.engines["kafka"].loads) == expected


def test_the_text_and_the_page_say_what_the_report_holds(report, tmp_path):
    text = doctor_text(report)
    assert "20,037 records, key 'tweet_id'" in text and "37 with a null key" in text
    assert f"skew score {report.engines['spark'].skew_score:.0f} %" in text
    page = write_html(report, tmp_path / "doctor.html").read_text()
    assert "plotly" in page and "tweet_id" in page
    write_html(report, tmp_path / "doctor.html")  # its own page: replaced
    mine = tmp_path / "notes.html"
    mine.write_text("<html>my notes</html>")
    with pytest.raises(SkewlabInputError, match="not a page skewlab doctor wrote"):
        write_html(report, mine)
    assert mine.read_text() == "<html>my notes</html>"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--key", "nope"], "no key column 'nope': the input's columns are"),
        (
            ["--key", "tweet_id", "--parallelism", "300", "--max-parallelism", "128"],
            "parallelism (300) must not exceed max_parallelism (128)",
        ),
        (["--key", "tweet_id", "--max-parallelism", "40000"], "max parallelism"),
        (["--key", "event_time", "--engine", "kafka"], "kafka cannot hash a timestamp key"),
        (["--key", "tweet_id", "--partitions", "0"], "partitions must be"),
        (["--key", "tweet_id", "--subtask-rate", "100"], "a subtask rate answers a target rate"),
        (
            ["--key", "tweet_id", "--target-rate", "100", "--no-remedies"],
            "a target rate needs what one subtask handles",
        ),
        (["--key", "tweet_id", "--disk-profile", "floppy"], "unknown disk profile 'floppy'"),
        (["--key", "tweet_id", "--costs", "/nonexistent/c.json"], "no such cost profile file"),
        (["--key", "tweet_id", "--salt-buckets", "0"], "salt buckets must be"),
        (["--key", "tweet_id", "--sketch-threshold", "1.5"], "hot threshold (a share of the"),
        (
            ["--key", "tweet_id", "--no-remedies", "--disk-profile", "ebs-article"],
            "prices the remedies",
        ),
        (["--key", "tweet_id", "--html", "/"], "is a folder: give a file name"),
        (
            ["--key", "tweet_id", "--engine", "kafka", "--target-rate", "9", "--subtask-rate", "3"],
            "include the flink engine",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(records, tmp_path, capsys, args, says):
    path = tmp_path / "views.parquet"
    records.write.parquet(str(path))
    status = main(["doctor", str(path), *args])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "skewlab doctor: error:" in err and says in err


def test_an_empty_input_and_an_unknown_format_are_refused(spark, tmp_path, capsys):
    empty = tmp_path / "empty.parquet"
    spark.range(0).selectExpr("id AS k").write.parquet(str(empty))
    assert main(["doctor", str(empty), "--key", "k"]) == 2
    assert "no records" in capsys.readouterr().err
    odd = tmp_path / "keys.xlsx"
    odd.write_text("k\n1\n")
    assert main(["doctor", str(odd), "--key", "k"]) == 2
    assert "cannot tell the format" in capsys.readouterr().err


def test_the_cli_prints_json_with_every_section(tmp_path, capsys, spark):
    path = tmp_path / "clicks.csv"
    start = dt.datetime(2026, 1, 1)
    pd.DataFrame(
        {"user": ["a"] * 6 + ["b", "c"], "ts": [start + dt.timedelta(seconds=s) for s in
                                                 [0, 0, 0, 1, 2, 2, 3, 4]]}
    ).to_csv(path, index=False)  # fmt: skip
    args = ["doctor", str(path), "--key", "user", "--time", "ts", "--json", "--cache-entries", "1",
            "--target-rate", "8", "--subtask-rate", "4"]  # fmt: skip
    assert main(args) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["hot_keys"]["top"][0] == {"rank": 1, "key": "a", "records": 6, "share": 0.75}
    assert out["peak"]["peak_records"] == 3 and out["input"]["path"] == str(path)
    assert set(out["engines"]) == {"flink", "spark", "kafka"}
    # one entry per subtask, keys a a a a a a b c in time order: a misses once then hits five
    # times, b and c come after every a -- wherever their subtasks, three misses
    (cache,) = out["cache"]
    assert (cache["cache_entries"], cache["hits"], cache["misses"]) == (1, 5, 3)
    # 'a' alone brings 6 of every 8 records/s to one subtask: no P keeps up at 4 per subtask
    target = out["parallelism"]["target"]
    assert target["parallelism"] is None and target["hottest_key_rate"] == 6.0
    assert read_records(spark, str(path)).count() == 8


def test_the_explorer_redraws_at_the_chosen_parallelism_and_engine(records, tmp_path, spark):
    from skewlab.doctor.viz import doctor_explorer

    path = tmp_path / "views.parquet"
    records.write.parquet(str(path))
    explorer = doctor_explorer(spark, str(path), "tweet_id", parallelism=4)
    assert explorer.figures == []  # nothing runs before Run
    explorer.update(parallelism=5)
    assert explorer.error is None
    assert explorer.figures[0].layout.title.text.startswith("Where the load lands at P=5")
    assert "P=5: busiest subtask" in explorer.outputs[-1].value
    explorer.update(engine="kafka")
    assert [t.name.split(" ")[0] for t in explorer.figures[0].data] == ["Kafka"]
    assert "Kafka, 5 partitions" in explorer.outputs[-1].value
    explorer.update(key="nope")
    assert "no key column 'nope'" in str(explorer.error)


@pytest.mark.parametrize("entries", [200])
def test_the_simulated_hit_ratio_equals_a_real_cached_runs(records, entries):
    from skewlab.doctor.diagnosis import simulate_cache
    from skewlab.strategies import Cached

    views = records.where("tweet_id IS NOT NULL")
    simulated = simulate_cache(
        records, "tweet_id", entries, parallelism=2, max_parallelism=128, time="event_time"
    )
    job = JobConfig(parallelism=2, max_parallelism=128)
    measured, _ = run_strategy(views, Cached(cache_entries=entries), job)
    assert (simulated["hits"], simulated["misses"]) == (
        measured.cache_hits,
        measured.cache_misses,
    )
    assert simulated["hits"] + simulated["misses"] == 20_000  # null keys left out
    assert 0 < simulated["hit_ratio"] < 1


def test_a_csv_null_marker_makes_null_keys_not_a_hot_key(tmp_path, capsys):
    import json

    path = tmp_path / "flights.csv"
    pd.DataFrame({"tailnum": ["NA", "NA", "NA", "N1", "N2", "N1"]}).to_csv(path, index=False)
    args = ["doctor", str(path), "--key", "tailnum", "--json", "--no-remedies"]  # no pricing
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["hot_keys"]["top"][0]["key"] == "NA"
    assert main([*args, "--null-value", "NA"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["input"]["null_keys"] == 3 and out["input"]["null_share"] == 0.5
    assert out["hot_keys"]["top"][0] == {"rank": 1, "key": "N1", "records": 2, "share": 2 / 6}
    parquet = tmp_path / "k.parquet"
    pd.DataFrame({"k": [1]}).to_parquet(parquet)
    assert main(["doctor", str(parquet), "--key", "k", "--null-value", "NA"]) == 2
    assert "applies to CSV only" in capsys.readouterr().err


def test_the_sketch_at_the_source_finds_every_key_the_exact_counts_call_hot(records):
    report = diagnose(records, "tweet_id", parallelism=(2,), remedies=False, sketch_threshold=0.01)
    sketch = report.hot_keys.sketch
    exact = [r for r in report.hot_keys.top if r.share > 0.01]
    assert sketch["finds_every_exact_hot_key"] and sketch["exact_hot_keys"] >= len(exact) > 0
    for hot in sketch["hot"]:  # the true count of every key it names lies inside its bounds
        true = next((r.records for r in report.hot_keys.top if r.key == hot["key"]), None)
        if true is not None:
            assert hot["lower"] <= true <= hot["upper"]
    assert "at the source (a frequent-items sketch" in doctor_text(report)
