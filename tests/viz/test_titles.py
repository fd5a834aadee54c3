"""Every chart's default title states the result it shows, computed from the figures plotted:
change a figure and the title's number changes with it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from skewlab.viz import (
    backlog,
    buffering,
    hot_keys,
    rescaling,
    salting,
    sorted_input,
    state_cache,
    streaming,
)
from skewlab.viz.titles import latency_title


def _buffering_rows(fast: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cardinality": [20, 20, 20_000, 20_000],
            "strategy": ["naive", "buffered"] * 2,
            "run": [0] * 4,
            "job_records_per_second": [10.0, fast, 10.0, 9.0],
        }
    )


@pytest.mark.parametrize("fast, expected", [(77.0, "7.70x"), (450.0, "45.0x")])
def test_buffering_titles_state_the_speedup_measured(fast, expected):
    rows = _buffering_rows(fast)
    for fig in (buffering.throughput_figure(rows), buffering.speedup_figure(rows)):
        title = fig.layout.title.text
        assert title.startswith(f"Buffering: {expected} naive at 20 keys, 0.90x at 20,000 keys (")
    # a result says whose figures it holds, and the title says it first
    result = {"size": "quick", "rows": rows.to_dict("records"), "summary": {}}
    title = buffering.throughput_figure(result).layout.title.text
    assert title.startswith(f"This run (quick, this machine): buffering {expected} naive")


def test_a_given_title_wins():
    assert buffering.throughput_figure(_buffering_rows(20.0), title="mine").layout.title.text == (
        "mine"
    )


def test_latency_titles_state_p50_at_the_shortest_and_longest_interval():
    sweep = pd.DataFrame(
        {
            "strategy": ["buffered", "buffered", "naive"],
            "trigger_interval_ms": [500.0, 10.0, np.nan],
            "source_rate": [2_000.0] * 3,
            "latency_p50_ms": [251.0, 6.25, 0.1],
            "latency_p99_ms": [499.0, 9.0, 0.2],
        }
    )
    title = buffering.latency_figure(sweep).layout.title.text
    assert title == (
        "p50 latency 6.2 ms at a 10 ms trigger interval, 251 ms at 500 ms (2,000 records/s paced)"
    )
    rows = [
        {"variant": "per-batch", "trigger_interval_ms": t, "source_rate": 1_000.0,
         "latency_p50_ms": p50, "latency_p99_ms": p50 * 2}
        for t, p50 in ((100.0, 1_500.0), (1_000.0, 2_700.0))
    ]  # fmt: skip
    assert streaming.latency_figure(rows).layout.title.text == (
        "p50 latency 1,500 ms at a 100 ms trigger interval, 2,700 ms at 1,000 ms "
        "(1,000 rows/s paced)"
    )
    assert latency_title(sweep.iloc[:0], "rows", None) == "Latency vs trigger interval"


def test_streaming_titles_state_the_ratios_at_20_keys():
    rows = pd.DataFrame(
        {
            "distribution": ["uniform"] * 3 + ["zipf"] * 3,
            "cardinality": [20] * 6,
            "variant": ["per-record", "per-batch", "builtin"] * 2,
            "records_per_second": [1_000.0, 3_000.0, 9_000.0, 500.0, 800.0, 900.0],
        }
    )
    result = {"rows": rows.to_dict("records"), "summary": {"ratios": {}}}
    expected = "At 20 keys (uniform): per-batch 3.00x per-record, builtin 3.00x per-batch"
    assert streaming.throughput_figure(result).layout.title.text == expected
    assert streaming.ratio_figure(result).layout.title.text.startswith(expected)
    zipf_only = rows[rows["distribution"] == "zipf"]
    assert streaming.ratio_title(zipf_only).startswith("At 20 keys (zipf): per-batch 1.60x")
    # a result says whose figures it holds, and the title says it first
    quick = {**result, "size": "quick"}
    assert streaming.throughput_figure(quick).layout.title.text == (
        f"This run (quick, this machine), a{expected[1:]}"
    )
    # runs give each ratio its interval over them
    three = pd.concat([rows.assign(run=i, records_per_second=rows["records_per_second"] * f)
                       for i, f in enumerate((0.9, 1.0, 1.1))])  # fmt: skip
    assert streaming.ratio_title(three).startswith("At 20 keys (uniform): per-batch 3.00x [")


def test_hot_partition_title_states_its_share_of_the_processor_time():
    subtasks = [
        {"batch": b, "partition": p, "operator_seconds": s, "records": 10}
        for b in (0, 1)
        for p, s in ((0, 0.3), (1, 0.1))
    ]
    batches = [
        {"batch_id": b, "duration_ms": d, "rows": 20, "state_rows_updated": 20,
         "state_commit_ms": 1, "state_memory_bytes": 0, "rocksdb": {}}
        for b, d in ((0, 400.0), (1, 600.0))
    ]  # fmt: skip
    run = SimpleNamespace(subtasks=subtasks, extra={"batches": batches})
    title = streaming.hot_partition_figure(run, 0).layout.title.text
    assert title == (
        "Per-record: partition 0 (holds tweet-0) does 75% of 2 partitions' work; "
        "median batch 500 ms"
    )
    title = streaming.hot_partition_figure(run, 0, whose="this run (quick, this machine)")
    assert title.layout.title.text.startswith("This run (quick, this machine), per-record: ")


def test_streaming_latency_title_names_whose_and_the_micro_batches_it_rests_on():
    rows = [
        {"variant": "per-batch", "trigger_interval_ms": t, "source_rate": 1_000.0,
         "latency_p50_ms": p50, "latency_p99_ms": p50 * 2, "batches": n}
        for t, p50, n in ((100.0, 2_818.0, 2), (3_000.0, 2_661.0, 2))
    ]  # fmt: skip
    fig = streaming.latency_figure(rows, whose="this run (quick, this machine)")
    assert fig.layout.title.text == (
        "This run (quick, this machine): p50 latency 2,818 ms at a 100 ms trigger interval, "
        "2,661 ms at 3,000 ms (1,000 rows/s paced); 2 and 2 micro-batches"
    )


def test_cache_titles_state_the_hit_ratio_steps_and_the_speedups():
    sweep = [
        {"cache_size": None, "hit_ratio": None, "job_records_per_second": 100.0},
        *(
            {"cache_size": size, "hit_ratio": ratio, "job_records_per_second": 100.0}
            for size, ratio in ((250, 0.0), (450, 0.0), (500, 0.5), (1_000, 0.9995))
        ),
    ]
    speedups = [
        {"cache_size": size, "side": side, "seed_speedup": seed,
         "speedup": {"min": x, "median": x, "max": x}}
        for size, seed, x in ((250, 0.956, 0.93), (500, 1.87, 1.8), (1_000, 21.6, 25.0))
        for side in ("lru", "lru_batched")
    ]  # fmt: skip
    result = SimpleNamespace(size="quick", summary={"sweep": sweep, "by_cache_size": speedups})
    assert state_cache.hit_ratio_curve_figure(result).layout.title.text == (
        "This run (quick, this machine), one run per size: hit ratio 0% from 250, 50% from 500, "
        "99.95% from 1,000 entries (FLIP-325's keys)"
    )
    # the claims' digits: two decimals below 10x, one above
    assert state_cache.cache_speedup_figure(result).layout.title.text == (
        "This run (quick, this machine): FLIP-325's LRU 0.93x / 1.80x / 25.0x RocksDB's job "
        "throughput at 250 / 500 / 1,000 entries (median of the rounds; the seed's beside)"
    )
    reference = {"size": "full", "summary": result.summary, "provenance": {
        "measured_at": "2026-11-26T20:11:40Z", "machine": {"cpu": "Xeon", "cores": 2}}}  # fmt: skip
    assert state_cache.cache_speedup_figure(reference).layout.title.text.startswith(
        "The reference (full, measured 2026-11-26 on Xeon, 2 cores): FLIP-325's LRU 0.93x"
    )


def test_sorted_titles_state_job_time_ratios_and_memory_growth():
    summary = {
        "n": 400_000, "k": 40_000, "key_type": "int", "rocksdb_over_sorted": 2.14,
        "heap_over_sorted": 0.84,
        "peak_memory_bytes_by_k": {"heap": {"400": 1_000, "40000": 4_000},
                                   "sorted": {"400": 1_000, "40000": 1_100}},
    }  # fmt: skip
    assert sorted_input._times_sorted(summary) == "RocksDB 2.14x sorted's job time, heap 0.84x"
    run = SimpleNamespace(size="quick", summary=summary)
    title = sorted_input.memory_by_k_figure(run).layout.title.text
    assert title == (
        "This run (quick, this machine), one traced run per K: K = 400 -> 40,000: the heap's "
        "traced peak grows 4.0x, sorted input's 1.10x"
    )


def test_value_state_title_states_the_update_ratios():
    ops = {"valueUpdate": {"heap": 26_760.0, "rocksdb": 1_000.0, "single_key": 77_100.0}}
    summary = {
        "ops_per_wall_ms": ops, "ops_per_wall_ms_min": ops, "ops_per_wall_ms_max": ops,
        "ops_per_cpu_ms": ops, "warmup_ops_per_wall_ms": ops, "seed_ops_per_ms": ops,
        "heap_over_rocksdb_update": 26.76, "single_key_over_heap_update": 2.88,
    }  # fmt: skip
    run = SimpleNamespace(size="quick", summary=summary)
    title = sorted_input.value_state_figure(run).layout.title.text
    assert title == (
        "This run (quick, this machine): ValueState, keys in order, valueUpdate heap 26.8x "
        "RocksDB, single-key 2.9x heap (medians of the runs; pale bars: the seed's)"
    )


def test_salting_titles_state_the_over_count_and_the_accounts_left_active():
    table = pd.DataFrame(
        {"tweet_id": ["a", "b"], "views": [10, 4], "salted_sum": [125, 8], "fixed_sum": [10, 4]}
    )
    assert salting.double_count_figure(table).layout.title.text == (
        "The seed's salted sum over-counts up to 12.5x; latest partials summed: exact"
    )
    table.loc[1, "fixed_sum"] = 5
    assert salting.double_count_figure(table).layout.title.text.endswith("summed: NOT exact")
    order = pd.DataFrame(
        {"strategy": ["salted", "buffered"], "users": [1_000, 1_000],
         "order_violations": [37, 0], "resurrected": [12, 0]}
    )  # fmt: skip
    assert salting.order_figure(order).layout.title.text == (
        "Deleted accounts left active, of 1,000 users: salted 12, buffered 0"
    )


def test_hot_keys_title_states_the_hottest_share():
    loads = {
        "uniform": pd.DataFrame({"rank": [1, 2, 3, 4], "records": [25, 25, 25, 25]}),
        "zipf s=1.1": pd.DataFrame({"rank": [1, 2, 3, 4], "records": [70, 20, 6, 4]}),
    }
    assert hot_keys.key_load_figure(loads).layout.title.text == (
        "The hottest tweet's share of views: uniform 25.0%, zipf s=1.1 70.0%"
    )


def test_backlog_titles_state_the_fastest_catch_up_and_the_capacity_ceiling():
    curves = pd.DataFrame(
        {
            "curve": ["Zipf, naive"] * 3 + ["Zipf, buffered"] * 3,
            "parallelism": [2, 4, 8] * 2,
            "catch_up_hours": [np.inf, 3.5, 2.25, 9.0, 1.5, 1.75],
            "capacity": [100.0, 180.0, 181.0, 500.0, 900.0, 900.0],
            "source": ["simulated"] * 6,
        }
    )
    assert backlog.catch_up_figure(curves).layout.title.text == (
        "Simulated lines, measured dots<br>fastest simulated catch-up: "
        "Zipf, naive 2.25 h at P=8; Zipf, buffered 1.50 h at P=4"
    )
    whose = "this run (quick, this machine)"
    assert backlog.capacity_figure(curves, whose=whose).layout.title.text == (
        "This run (quick, this machine): simulated lines from its measured rates, measured "
        "dots<br>highest simulated capacity: Zipf, naive 181 records/s from P=4; "
        "Zipf, buffered 900 records/s from P=4"
    )


def test_restore_title_states_what_key_groups_save():
    frame = pd.DataFrame(
        {
            "way": ["read_all", "per_key_index", "key_groups"],
            "bytes_read": [9_000, 1_000, 1_500],
            "requests": [3, 400, 8],
            "files_opened": [3, 3, 2],
            "keys_read": [90, 10, 15],
            "keys_kept": [10, 10, 10],
            "seconds": [0.1, 0.2, 0.05],
        }
    )
    title = rescaling.restore_ways_figure(frame, title="3 -> 4").layout.title.text
    assert title == (
        "3 -> 4: key groups read 6.0x fewer bytes than read all, filter, "
        "50.0x fewer requests than per-key index"
    )
