"""The streaming engine's parts: a query's directory and owner, the idempotent sink, the guarded
repartition, failures in one line, the session settings a query starts with."""

from __future__ import annotations

import pytest

from skewlab.engine.streaming import (
    PROVIDER_KEY,
    ROCKSDB_PROVIDER,
    BatchSink,
    QueryIdentity,
    claim_query_directory,
    failure_cause,
    repartition_checkpoint,
    session_settings,
)
from skewlab.errors import SkewlabInputError

IDENTITY = QueryIdentity("streaming", "per-batch", 10, "100:ab")


def test_a_query_directory_is_claimed_once_and_refused_to_others(tmp_path):
    root = tmp_path / "q"
    query, resumes = claim_query_directory(root, IDENTITY)
    assert not resumes and query.identity() == IDENTITY
    assert claim_query_directory(root, IDENTITY) == (query, False)  # no checkpoint yet
    (query.checkpoint / "offsets").mkdir(parents=True)
    assert claim_query_directory(root, IDENTITY) == (query, True)
    other = QueryIdentity("streaming", "builtin", 10, "100:ab")
    with pytest.raises(SkewlabInputError, match=r"belongs to another query \(streaming, variant"):
        claim_query_directory(root, other)
    (tmp_path / "file").write_text("x")
    with pytest.raises(SkewlabInputError, match="is a file"):
        claim_query_directory(tmp_path / "file", IDENTITY)


@pytest.mark.parametrize(
    "damage, said",
    [
        (b'{"strategy": "streaming", "vari', r"damaged \(JSONDecodeError: "),
        (b"\xff\xfe not text", r"damaged \(UnicodeDecodeError: "),
        (b"[1, 2]", r"damaged \(TypeError: .*must name the query's strategy, variant, "),
        (b'{"strategy": "streaming"}', r"damaged \(TypeError: .*missing 3 required"),
        (
            b'{"strategy": "streaming", "variant": "per-batch", "precision": "10", "views": "a"}',
            r"damaged: precision of the wrong type",
        ),
    ],
)
def test_a_damaged_query_json_is_refused_in_one_line(tmp_path, damage, said):
    root = tmp_path / "q"
    query, _ = claim_query_directory(root, IDENTITY)
    query.identity_file.write_bytes(damage)
    with pytest.raises(SkewlabInputError, match=said) as info:
        claim_query_directory(root, IDENTITY)
    assert "query.json' is damaged" in str(info.value) and "\n" not in str(info.value)


def test_the_sink_keeps_one_delivery_per_micro_batch(spark, tmp_path):
    sink = BatchSink(tmp_path / "sink")
    schema = "tweet_id string, records bigint"
    sink(spark.createDataFrame([("a", 1), ("b", 2)], schema), 0)
    sink(spark.createDataFrame([("a", 5)], schema), 1)
    first = sink.deliveries()[1]
    sink(spark.createDataFrame([("a", 7)], schema), 1)  # micro-batch 1 runs again on resume
    rows = sorted(map(tuple, sink.read(spark, schema).collect()))
    assert rows == [("a", 1, 0), ("a", 7, 1), ("b", 2, 0)]
    assert sorted(sink.deliveries()) == [0, 1] and sink.deliveries()[1] >= first
    assert BatchSink(tmp_path / "empty").read(spark, schema).count() == 0


def test_the_private_repartition_says_why_it_did_not_run(spark, tmp_path):
    outcome = repartition_checkpoint(spark, tmp_path / "no-checkpoint", 8)
    assert not outcome.done and outcome.reason and "\n" not in outcome.reason
    assert outcome.describe().startswith("state NOT repartitioned to 8 partitions: ")


def test_failure_cause_finds_the_line_that_says_what_went_wrong():
    text = (
        "py4j.protocol.Py4JJavaError: An error occurred while calling o1.repartition.\n"
        ": org.apache.spark.SomeError: [STATE_REPARTITION_INVALID_CHECKPOINT.LAST_BATCH_FAILED] x\n"
        "\tat org.apache.spark.Foo(Foo.scala:1)\n"
        "=== Streaming Query ===\nValueError: not this one"
    )
    assert failure_cause(text) == (
        "org.apache.spark.SomeError: [STATE_REPARTITION_INVALID_CHECKPOINT.LAST_BATCH_FAILED] x"
    )
    assert failure_cause("just words") == "just words"


def test_session_settings_are_put_back(spark):
    before = spark.conf.get(PROVIDER_KEY, None)
    with session_settings(spark, {PROVIDER_KEY: ROCKSDB_PROVIDER}):
        assert spark.conf.get(PROVIDER_KEY) == ROCKSDB_PROVIDER
    assert spark.conf.get(PROVIDER_KEY, None) == before
