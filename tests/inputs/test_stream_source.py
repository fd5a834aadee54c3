"""The source log and the rate-controlled stream reader: offsets, read limits, arrival."""

from __future__ import annotations

import time

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from skewlab.errors import SkewlabInputError
from skewlab.inputs.stream_source import (
    SourceLog,
    ViewsStreamReader,
    arrival_ns,
    offset_clock,
    views_fingerprint,
    write_source_log,
)
from skewlab.inputs.views import ViewSpec, generate_views


@pytest.fixture(scope="module")
def views(spark):
    return generate_views(spark, ViewSpec(250, 30, 7, seed=3), num_partitions=3).cache()


def test_the_log_holds_the_views_in_arrival_order_across_segments(views, tmp_path):
    log = write_source_log(views, tmp_path / "log", segment_rows=100)
    assert (log.rows, log.segment_rows) == (250, 100)
    assert SourceLog.open(tmp_path / "log") == log
    assert log.segments_for(95, 205) == [0, 100, 200]
    table = log.read(95, 205)
    assert table.column("seq").to_pylist() == list(range(95, 205))
    expected = views.orderBy("seq").toPandas().iloc[95:205]
    assert table.column("view_id").to_pylist() == expected["view_id"].tolist()
    with pytest.raises(SkewlabInputError, match="already holds a source log"):
        write_source_log(views, tmp_path / "log")


def test_a_missing_segment_is_named(views, tmp_path):
    log = write_source_log(views, tmp_path / "log", segment_rows=100)
    log.segment_path(100).unlink()
    assert log.read(0, 100).num_rows == 100
    with pytest.raises(FileNotFoundError, match="segment-000000000100.arrow"):
        log.read(150, 160)


def test_the_reader_honours_the_read_limit_the_end_and_the_arrival_rate(views, tmp_path):
    log = write_source_log(views, tmp_path / "log", segment_rows=100)
    backlog = ViewsStreamReader({"path": log.directory, "maxRowsPerTrigger": "60"})
    assert backlog.getDefaultReadLimit() == ReadMaxRows(60)
    first = backlog.latestOffset({"offset": 0}, ReadMaxRows(60))
    assert first["offset"] == 60 and offset_clock(first)[1] == 0
    assert backlog.latestOffset({"offset": 240}, ReadMaxRows(60))["offset"] == 250
    assert backlog.latestOffset({"offset": 0}, ReadAllAvailable())["offset"] == 250
    parts = backlog.partitions({"offset": 10}, {"offset": 70})
    assert [(p.start, p.end) for p in parts] == [(10, 40), (40, 70)]
    ended = ViewsStreamReader({"path": log.directory, "endOffset": "120"})
    assert ended.latestOffset({"offset": 100}, ReadAllAvailable())["offset"] == 120
    paced = ViewsStreamReader({"path": log.directory, "rowsPerSecond": "200"})
    began = time.perf_counter()
    start = paced.latestOffset({"offset": 50}, ReadAllAvailable())
    assert start["offset"] == 51  # only the first row has arrived when the clock starts
    time.sleep(0.1)
    later = paced.latestOffset({"offset": 51}, ReadAllAvailable())["offset"]
    elapsed = time.perf_counter() - began  # >= 0.1 s; more on a busy machine
    # 200 rows/s: about 20 more rows after 0.1 s, never more than the time taken allows
    assert 51 + 19 <= later <= min(250, 51 + elapsed * 200 + 1)
    t0, first_offset = offset_clock(start)
    assert first_offset == 50
    assert arrival_ns([50, 60], t0, first_offset, 1000.0).tolist() == [t0, t0 + 10_000_000]


def test_the_fingerprint_sees_the_rows_not_their_order(spark, views):
    assert views_fingerprint(views) == views_fingerprint(views.repartition(5).orderBy("user_id"))
    assert views_fingerprint(views) != views_fingerprint(views.limit(249))
    assert views_fingerprint(views).startswith("250:")
