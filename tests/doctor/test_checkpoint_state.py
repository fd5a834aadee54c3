"""``skewlab doctor --state``: the state's skew read from checkpoints written by real queries --
Spark's own streaming aggregation, skewlab's ``streaming`` strategy (transformWithState on
RocksDB) and a stream-stream join -- against what their inputs put in the state: rows counted
in pandas, bytes by the UnsafeRow layout worked out by hand, placement by Spark's own
``partition_id``."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pandas as pd
import pytest

from skewlab.cli import main
from skewlab.doctor.checkpoint_state import count_stream, read_state
from skewlab.engine.config import JobConfig
from skewlab.engine.skew import skew_score
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies.streaming import Streaming

#: the hot page's distinct users: its state rows in a groupBy(page, user) count
HOT_USERS = 40
#: a (page, user) state row of three-letter pages: key 8 (null bitmap) + 2 x 8 (fields) + 8
#: ("hot" rounded up to 8 bytes); value (the count) 8 + 8
PAIR_ROW_BYTES = 32 + 16


def _stream_query(spark, frame_parts, schema, query, checkpoint, partitions):
    """Run ``query`` over JSON-lines files, one micro-batch a file, to the end."""
    source = checkpoint.parent / (checkpoint.name + "-in")
    source.mkdir(parents=True)
    for i, part in enumerate(frame_parts):
        part.to_json(source / f"part-{i}.json", orient="records", lines=True)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(source))
        running = (
            query(stream)
            .writeStream.format("noop")
            .outputMode("update")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        running.awaitTermination()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


@pytest.fixture(scope="module")
def pairs():
    hot = [("hot", u) for u in range(HOT_USERS)]
    rest = [(f"p{i:02d}", u) for i in range(30) for u in range(i % 3 + 1)]
    frame = pd.DataFrame(hot + rest + hot[:10], columns=["page", "user"])  # a repeat: no new row
    return frame


@pytest.fixture(scope="module")
def aggregation(spark, pairs, tmp_path_factory):
    checkpoint = tmp_path_factory.mktemp("aggregation") / "checkpoint"
    half = len(pairs) // 2
    _stream_query(
        spark, [pairs.iloc[:half], pairs.iloc[half:]], "page string, user long",
        lambda s: s.groupBy("page", "user").count(), checkpoint, partitions=3,
    )  # fmt: skip
    return checkpoint


@pytest.fixture(scope="module")
def join(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("join")
    for side in ("l", "r"):
        (root / side).mkdir()
        pd.DataFrame({"k": [1, 1, 2, 3, 3, 3], f"{side}v": range(6)}).to_json(
            root / side / "a.json", orient="records", lines=True
        )
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    try:
        left = spark.readStream.schema("k long, lv long").json(str(root / "l"))
        right = spark.readStream.schema("k long, rv long").json(str(root / "r"))
        query = (
            left.join(right, "k")
            .writeStream.format("noop")
            .option("checkpointLocation", str(root / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    return root / "checkpoint"


@pytest.fixture(scope="module")
def views(spark):
    return generate_views(
        spark, ViewSpec(600, 100, 12, distribution="zipf", skew=1.5, seed=3)
    ).toPandas()


@pytest.fixture(scope="module")
def transform_with_state(spark, views, tmp_path_factory):
    root = tmp_path_factory.mktemp("streaming")
    strategy = Streaming(
        variant="per-record", checkpoint_dir=str(root), max_rows_per_trigger=300,
        trigger_interval_ms=50,
    )  # fmt: skip
    strategy.run(spark, spark.createDataFrame(views), JobConfig(parallelism=3))
    return root / "checkpoint"


def test_the_built_in_aggregations_state_is_counted_row_for_row_and_byte_for_byte(
    aggregation, pairs
):
    report = read_state(aggregation, key="page", partitions=[2, 3, 6])
    [store] = report.stores
    assert (store.operator, store.store, store.num_partitions) == ("stateStoreSave", "default", 3)
    assert store.batch == 1 and store.unread is None
    distinct = pairs.drop_duplicates()
    assert store.rows == len(distinct) == sum(p.rows for p in store.partitions)
    # every page here has three letters: every row takes the same bytes
    assert store.bytes == len(distinct) * PAIR_ROW_BYTES == sum(p.bytes for p in store.partitions)
    hot = store.top_keys[0]
    assert (hot.key, hot.rows, hot.bytes) == ("hot", HOT_USERS, HOT_USERS * PAIR_ROW_BYTES)
    assert hot.partition is None  # its rows are keyed by (page, user): spread over partitions
    per_page = distinct.groupby("page").size().sort_values(ascending=False)
    assert [(k.key, k.rows) for k in store.top_keys[:1]] == [("hot", int(per_page.iloc[0]))]
    assert store.skew_score == pytest.approx(skew_score([p.bytes for p in store.partitions]))
    # Spark's own placement, reproduced: over the checkpoint's 3 partitions exactly its own
    assert store.placement_key == ("page", "user")
    by_count = {p.partitions: p for p in store.placement}
    assert sorted(by_count) == [2, 3, 6]
    assert by_count[3].rows == tuple(p.rows for p in store.partitions)
    assert all(sum(p.rows) == store.rows and len(p.rows) == p.partitions for p in store.placement)


def test_transform_with_state_holds_one_row_per_key_whatever_the_keys_traffic(
    transform_with_state, views
):
    report = read_state(transform_with_state, key="tweet_id")
    [store] = report.stores
    assert store.operator == "transformWithStateInPandasExec" and store.state_variable == "stats"
    tweets = views["tweet_id"].dropna()
    assert store.rows == tweets.nunique() == sum(p.rows for p in store.partitions)

    def row_bytes(tweet: str) -> int:  # key: bitmap, a field, the id; value: two 1 KiB registers
        return (8 + 8 + -(-len(tweet) // 8) * 8) + (8 + 2 * 8 + 2 * 1024)

    assert all(k.rows == 1 and k.bytes == row_bytes(k.key) for k in store.top_keys)
    assert store.bytes == sum(row_bytes(t) for t in tweets.unique())
    # the traffic's hottest key holds no more state than any other key of its id's length
    hottest = tweets.value_counts()
    assert hottest.iloc[0] / len(tweets) > 0.3
    state = {k.key: k.bytes for k in store.top_keys}
    assert state[hottest.index[0]] == row_bytes(hottest.index[0])
    assert store.placement_key == ("tweet_id",)
    assert [p.partitions for p in store.placement] == [6]  # half of 3 is too few to show


def test_a_joins_stores_are_read_by_name_and_placed_by_the_join_key_alone(join):
    report = read_state(join, partitions=[2])
    names = sorted(s.store for s in report.stores)
    assert names == sorted(f"{side}-{kind}" for side in ("left", "right")
                           for kind in ("keyToNumValues", "keyWithIndexToValue"))  # fmt: skip
    for store in report.stores:
        assert store.unread is None and store.num_partitions == 2
        # each side holds six rows: keys 1, 2 and 3 with 2, 1 and 3 values
        expected_rows = 3 if store.store.endswith("keyToNumValues") else 6
        assert store.rows == expected_rows
        # the index is part of the key but not of the placement: the join key alone is
        assert store.placement_key == ("field0",)
        assert store.placement[0].rows == tuple(p.rows for p in store.partitions)


def test_a_store_spark_cannot_read_says_why_in_one_line_and_the_others_are_read(
    join, tmp_path, capsys
):
    damaged = tmp_path / "checkpoint"
    shutil.copytree(join, damaged)
    for delta in (damaged / "state" / "0").glob("*/right-keyWithIndexToValue/*.delta"):
        delta.unlink()
    report = read_state(damaged)
    unread = {s.store: s.unread for s in report.stores if s.unread}
    assert list(unread) == ["right-keyWithIndexToValue"]
    assert "CANNOT_LOAD_STATE_STORE" in unread["right-keyWithIndexToValue"]
    assert main(["doctor", "--state", str(damaged)]) == 0
    out = capsys.readouterr().out
    assert "right-keyWithIndexToValue: not read" in out and "CANNOT_LOAD_STATE_STORE" in out


def test_the_cli_prints_the_report_as_text_within_100_columns_as_json_and_redacted(
    aggregation, capsys
):
    assert main(["doctor", "--state", str(aggregation), "--key", "page", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == read_state(aggregation, key="page").to_json()
    assert main(["doctor", "--state", str(aggregation), "--key", "page"]) == 0
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "stateStoreSave #0 default" in text and "hot " in text
    assert main(["doctor", "--state", str(aggregation), "--key", "page", "--redact"]) == 0
    redacted = capsys.readouterr().out
    assert "hot " not in redacted and "key#" in redacted


@pytest.mark.parametrize(
    ("make", "args", "says"),
    [
        (lambda d: None, [], "does not exist"),
        (lambda d: d.mkdir(), [], "no state in"),
        (lambda d: (d / "state" / "0" / "0").mkdir(parents=True), [], "no committed micro-batch"),
        (lambda d: d.mkdir(), ["records.parquet"], "not both"),
        (lambda d: d.mkdir(), ["--html", "x.html"], "--html is for records"),
        (lambda d: d.mkdir(), ["--top", "0"], "top"),
    ],
)
def test_bad_input_is_one_line_exit_2_before_spark_starts(
    tmp_path, capsys, monkeypatch, make, args, says
):
    # a master Spark refuses: had the doctor started Spark, that would be the error instead
    monkeypatch.setenv("SKEWLAB_SPARK_MASTER", "local[abc]")
    checkpoint = tmp_path / "checkpoint"
    make(checkpoint)
    assert main(["doctor", "--state", str(checkpoint), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err and "Spark master" not in err, err


def test_a_key_that_is_no_field_of_the_state_key_is_named_with_the_fields(aggregation, capsys):
    assert main(["doctor", "--state", str(aggregation), "--key", "tweet_id"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "no state key has a field 'tweet_id': the state keys' fields are page, user"
    )


def test_a_counted_stream_holds_a_row_per_key_and_the_figure_sets_state_beside_traffic(
    spark, views, tmp_path
):
    from skewlab.doctor.diagnosis import diagnose
    from skewlab.doctor.state_and_follow import StateSection
    from skewlab.doctor.viz import describe_state, state_figure

    records = spark.createDataFrame(views)
    report = diagnose(records, "tweet_id", parallelism=(2,), remedies=False)
    partitions = report.engines["spark"].partitions
    checkpoint = count_stream(spark, records, "tweet_id", tmp_path / "q", partitions=partitions)
    [store] = read_state(checkpoint, key="tweet_id").stores
    counts = views["tweet_id"].value_counts()
    assert store.rows == len(counts) and store.num_partitions == partitions
    # one row per key: a key's bytes are its id's, whatever its traffic
    assert {k.rows for k in store.top_keys} == {1}
    # the same keys, the same placement: state rows per partition are the keys the doctor's
    # Spark routing puts there, and the records per partition are its loads
    section = StateSection(read_state(checkpoint, key="tweet_id"), report.engines["spark"])
    assert StateSection.from_json(section.to_json()) == section  # as a reference keeps it
    fig = state_figure(section)
    traffic, state = fig.data
    assert list(traffic.y) == pytest.approx(
        [n / sum(report.engines["spark"].loads) for n in report.engines["spark"].loads]
    )
    assert list(state.y) == pytest.approx([p.bytes / store.bytes for p in store.partitions])
    text = describe_state(section)
    assert text.startswith(f"This run's checkpoint: {store.rows:,} state rows")
    assert f"skew score {store.skew_score:.0f} %" in text
    with pytest.raises(SkewlabInputError, match="is not empty"):
        count_stream(spark, records, "tweet_id", tmp_path / "q", partitions=2)


def _python_row_bytes(row, schema) -> int:
    """An UnsafeRow's size worked out in Python from the values (flat rows of fixed-length
    fields, strings and binaries): the null bitmap, 8 bytes a field, the variable-length data
    rounded up to 8 bytes."""
    size = ((len(schema.fields) + 63) // 64) * 8 + 8 * len(schema.fields)
    for f in schema.fields:
        value = row[f.name]
        if isinstance(value, str):
            value = value.encode()
        if isinstance(value, bytes | bytearray):
            size += -(-len(value) // 8) * 8
    return size


@pytest.mark.parametrize("which", ["aggregation", "transform_with_state"])
def test_rows_and_bytes_per_partition_equal_the_state_data_source_read_directly(
    spark, request, which
):
    checkpoint = request.getfixturevalue(which)
    [store] = read_state(checkpoint).stores
    reader = spark.read.format("statestore")
    if store.state_variable is not None:
        reader = reader.option("stateVarName", store.state_variable)
    direct = reader.load(str(checkpoint))
    key_schema = direct.schema["key"].dataType
    value_schema = direct.schema["value"].dataType
    rows, sizes = Counter(), Counter()
    for r in direct.collect():
        rows[r.partition_id] += 1
        sizes[r.partition_id] += _python_row_bytes(r.key.asDict(), key_schema) + _python_row_bytes(
            r.value.asDict(), value_schema
        )
    assert [p.rows for p in store.partitions] == [rows[i] for i in range(store.num_partitions)]
    assert [p.bytes for p in store.partitions] == [sizes[i] for i in range(store.num_partitions)]
