"""The buffering lesson's figures: medians and speedups, log axes, the naive baseline."""

from __future__ import annotations

import pandas as pd

from skewlab.viz.buffering import latency_figure, median_throughput, throughput_figure


def test_figures_of_the_buffering_notebook():
    rows = pd.DataFrame(
        {
            "cardinality": [20, 20, 20, 20, 1000, 1000],
            "strategy": ["naive", "buffered", "buffered", "buffered_list", "naive", "buffered"],
            "run": [0, 0, 1, 0, 0, 0],
            "job_records_per_second": [10.0, 400.0, 600.0, 100.0, 10.0, 20.0],
            "operator_records_per_second": [20.0, 4000.0, 6000.0, 1000.0, 20.0, 40.0],
        }
    )
    medians = median_throughput({"rows": rows.to_dict("records")})  # the headline by default
    assert medians.set_index("cardinality")["speedup"].to_dict() == {1000: 2.0, 20: 50.0}
    assert medians.set_index("cardinality")["speedup_list"].to_dict()[20] == 10.0
    operator = median_throughput(rows, "operator_records_per_second").set_index("cardinality")
    assert operator["speedup"].to_dict() == {1000: 2.0, 20: 250.0}
    fig = throughput_figure(rows)
    assert (fig.layout.xaxis.type, fig.layout.yaxis.type) == ("log", "log")
    assert "job (per-record cost by slope)" in fig.layout.yaxis.title.text
    medians_drawn = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in medians_drawn] == [
        "naive (RocksDB) (median)",
        "buffered, vectorized (median)",
        "buffered, the seed's list (median)",
    ]
    sweep = pd.DataFrame(
        {
            "strategy": ["naive", "buffered", "buffered"],
            "trigger_interval_ms": [float("nan"), 20.0, 200.0],
            "source_rate": [2000.0] * 3,
            "latency_p50_ms": [0.1, 10.0, 100.0],
            "latency_p99_ms": [1.0, 20.0, 200.0],
        }
    )
    fig = latency_figure(sweep)
    assert list(fig.data[0].x) == [20.0, 200.0] and list(fig.data[0].y) == [10.0, 100.0]
    (naive,) = fig.layout.shapes  # the naive baseline, labelled on the line itself
    assert naive.y0 == naive.y1 == 0.1 and naive.label.text == "naive p50 0.1 ms"
    # an annotation at y=0.1 on this log axis would sit at 10**0.1 ms (and at 10**120 ms for a
    # baseline of 120 ms, stretching the axis over a hundred decades)
    assert fig.layout.annotations == ()
