"""Notebook 08's figures from plain results: what each one draws."""

from __future__ import annotations

import pandas as pd

from skewlab.engine.metrics import RunResult
from skewlab.experiments.streaming import summarize
from skewlab.viz import streaming
from skewlab.viz.palette import COLORS

ROWS = [
    {"distribution": d, "cardinality": k, "variant": v, "run": 0, "records_per_second": x * f,
     "digest_matches_reference": True, "state_matches_reference": True}
    for d, f in (("uniform", 1.0), ("zipf", 2.0))
    for k in (1_000, 20)
    for v, x in (("per-record", 100.0), ("per-batch", 300.0), ("builtin", 900.0))
]  # fmt: skip


def test_throughput_and_ratio_figures_draw_every_variant_and_the_seed_figure():
    fig = streaming.throughput_figure(pd.DataFrame(ROWS))
    names = [t.name for t in fig.data if t.name]
    assert names == [f"{v} ({d})" for d in ("uniform", "zipf")
                     for v in ("per-record", "per-batch", "builtin")]  # fmt: skip
    result = {"rows": ROWS, "summary": summarize(ROWS)}
    ratio = streaming.ratio_figure(result)
    star = [t for t in ratio.data if t.name and t.name.startswith("seed 000")]
    assert len(star) == 1 and list(star[0].y) == [45.0] and list(star[0].x) == [20]
    per_batch = next(t for t in ratio.data if t.name == "per-batch / per-record (uniform)")
    assert list(per_batch.y) == [3.0, 3.0]
    assert streaming.throughput_table(result)["median"].max() == 1_800.0


def test_the_hot_partition_is_drawn_in_the_hot_colour_beside_the_batch_durations():
    run = RunResult(
        "streaming", {}, 10, 10, 0, 10, 2, 1.0, 1.0, "d",
        subtasks=[{"batch": b, "partition": p, "records": 4 if p == 1 else 1,
                   "operator_seconds": 0.4 if p == 1 else 0.1}
                  for b in (0, 1) for p in (0, 1)],
        extra={"batches": [{"batch_id": b, "rows": 5, "duration_ms": 500, "state_rows_updated": 5,
                            "state_commit_ms": 1, "state_memory_bytes": 0, "rocksdb": {}}
                           for b in (0, 1)]},
    )  # fmt: skip
    fig = streaming.hot_partition_figure(run, hot_partition=1)
    bars = [t for t in fig.data if t.type == "bar"]
    assert [b.marker.color for b in bars] == [COLORS["cold_partition"], COLORS["per-record"]]
    assert bars[1].name == "partition 1 (holds tweet-0)"
    assert list(fig.data[-1].y) == [500, 500]


def test_printed_blocks_and_captions_name_whose_figures_and_print_intervals():
    three = [{**r, "run": i, "records_per_second": r["records_per_second"] * f}
             for i, f in enumerate((0.9, 1.0, 1.1)) for r in ROWS]  # fmt: skip
    summary = summarize(three)
    summary["latency"] = [
        {"variant": "per-batch", "trigger_interval_ms": 100.0, "source_rate": 1_000.0,
         "batches": 2, "rows_per_batch": 250.0, "mean_batch_ms": 900.0,
         "latency_p50_ms": 2_818.0, "latency_p99_ms": 2_985.0,
         "batch_latency_ms": [2_700.0, 2_900.0],
         "latency_p50_over_batches": {"value": 2_800.0, "runs": 2}},
    ]  # fmt: skip
    result = {"size": "quick", "rows": three, "summary": summary}
    printed = streaming.format_summary(result)
    assert printed.startswith("this run (quick, this machine): rows / s over micro-batch time")
    assert "per-batch / per-record 3.00x [" in printed  # three runs: an interval
    assert "p50 over 2 micro-batches 2,800 ms (no interval)" in printed
    table = streaming.latency_table(result)
    assert table.columns.name.startswith("this run (quick, this machine): per-batch latency")
    assert streaming.throughput_table(result).columns.name.startswith("this run (quick,")
    # the shape's figures, each with its interval; whether it is the seed's shape is the claim's
    shape = streaming.describe_shape(result, "uniform")
    assert shape.startswith("This run (quick, this machine), uniform views: per-batch / ")
    assert "3.00x [" in shape and "seed's shape" not in shape
