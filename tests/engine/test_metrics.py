"""Folding every subtask's metrics into one RunResult: which stage counts what."""

from __future__ import annotations

import json

import numpy as np
import pytest

from skewlab.engine.histogram import LatencyHistogram
from skewlab.engine.metrics import SubtaskMetrics, fold_metrics
from skewlab.iomodel.profiles import load_disk_profile


def histogram(*ns: int) -> list[int]:
    h = LatencyHistogram()
    h.record_many(np.array(ns))
    return h.to_list()


def two_stage_metrics() -> list[SubtaskMetrics]:
    return [
        SubtaskMetrics(
            "1:partial", 0, records_in=60, records_rejected=2, records_out=58,
            operator_ns=1_000_000_000, latency=histogram(10**9),
            state={"reads": 58, "writes": 58, "disk_reads_per_key": {"a": 50, "b": 8},
                   "disk_writes_per_key": {"a": 50, "b": 8}},
        ),
        SubtaskMetrics(
            "1:partial", 1, records_in=40, records_out=40, operator_ns=1_000_000_000,
            state={"reads": 40, "writes": 40, "disk_reads_per_key": {"c": 40},
                   "disk_writes_per_key": {"c": 40}},
        ),
        SubtaskMetrics(
            "2:final", 0, records_in=98, records_out=98, operator_ns=500_000_000,
            latency=histogram(1_000_000, 2_000_000, 3_000_000), order_violations=4,
            state={"reads": 98, "writes": 98, "cache_hits": 90, "cache_misses": 8},
        ),
    ]  # fmt: skip


def test_records_count_at_the_first_stage_emissions_and_latency_at_the_last():
    result = fold_metrics(
        "salted", {"p": 2}, two_stage_metrics(), keys=3, wall_seconds=4.0, digest="x",
        check_order=True,
    )  # fmt: skip
    assert (result.records_in, result.records_rejected, result.records_processed) == (100, 2, 98)
    assert result.records_out == 98  # the final stage's, not 58 + 40 + 98
    assert result.operator_seconds == 2.5 and result.operator_records_per_second == 98 / 2.5
    assert result.e2e_records_per_second == 98 / 4.0
    # the final stage's three latencies, not stage one's 1 s
    assert result.latency_p99_ms == pytest.approx(3.0, rel=0.06)
    assert result.order_violations == 4
    assert (result.state_reads, result.state_writes) == (196, 196)
    assert (result.cache_hits, result.cache_misses, result.cache_hit_ratio) == (90, 8, 90 / 98)
    json.loads(result.to_json())


def test_modelled_io_prices_the_disk_accesses_of_the_busiest_subtask():
    result = fold_metrics(
        "salted", {}, two_stage_metrics(), keys=3, wall_seconds=4.0, digest="x",
        latency_profile="ebs-article",
    )  # fmt: skip
    ebs = load_disk_profile("ebs-article")
    per_access = (ebs.read.mean_us + ebs.write.mean_us) / 1e6
    # subtask 0 of stage one does a's 50 and b's 8 read-writes one after the other
    assert result.modelled_io_seconds == pytest.approx(58 * per_access)
    assert result.extra["modelled_io"]["bound"] == "subtask"
    assert result.modelled_records_per_second == pytest.approx(98 / (58 * per_access))


def test_without_cache_counters_the_cache_columns_say_does_not_apply():
    metrics = [SubtaskMetrics("1:naive", 0, records_in=5, state={"reads": 5, "writes": 5})]
    result = fold_metrics("naive", {}, metrics, keys=1, wall_seconds=1.0, digest="x")
    assert result.cache_hits is None and result.cache_hit_ratio is None
    assert result.buffer_flushes is None and result.order_violations is None
    assert result.latency_p50_ms is None  # no emission, no latency
