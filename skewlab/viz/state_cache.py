"""Notebook 04, the LRU state cache (FLIP-325): hit ratio and throughput against the cache size,
the 0%-hit record taken apart, and a cache-size slider.

Every function takes a :class:`~skewlab.experiments.results.BenchResult` of
:mod:`skewlab.experiments.cache` and returns a pandas DataFrame or a plotly figure.

Example::

    >>> from skewlab.experiments.cache import run_experiment
    >>> result = run_experiment("tiny", progress=False)                 # doctest: +SKIP
    >>> hit_ratio_curve_figure(result).show()                          # doctest: +SKIP
"""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from IPython.display import display
from plotly.subplots import make_subplots

from skewlab.inputs.wordcount import flip325_input
from skewlab.strategies.count import run_count
from skewlab.viz.palette import COLORS, TEMPLATE
from skewlab.viz.render import in_report

__all__ = [
    "cache_cost_table",
    "cache_size_explorer",
    "cache_speedup_figure",
    "cache_table",
    "hit_ratio_curve_figure",
    "zero_hit_cost_table",
]


def cache_table(result) -> pd.DataFrame:
    """Measured hit ratio and speedup per cache size, beside the seed's figures."""
    rows = []
    for t in result.summary["by_cache_size"]:
        rows.append(
            {
                "cache entries": "none (RocksDB)" if t["cache_size"] is None else t["cache_size"],
                "hit ratio": t["hit_ratio"],
                "seed hit ratio": t["seed_hit_ratio"],
                "stateCacheHitRatio (per-second mean)": t["state_cache_hit_ratio"],
                "operator records per CPU s": t.get("operator_cpu_records_per_second"),
                "speedup (operator CPU)": t["speedup"],
                "seed speedup": t["seed_speedup"],
                "speedup (operator wall clock)": t.get("speedup_wall"),
                "speedup (Spark job)": t["speedup_e2e"],
            }
        )
    return pd.DataFrame(rows)


def cache_cost_table(result) -> pd.DataFrame:
    """Microseconds per record inside the operator at each cache size (CPU and wall clock)."""
    rows = []
    for t in result.summary["by_cache_size"]:
        ops, cpu = t["operator_records_per_second"], t.get("operator_cpu_records_per_second")
        rows.append(
            {
                "cache entries": "none (RocksDB)" if t["cache_size"] is None else t["cache_size"],
                "hit ratio": t["hit_ratio"],
                "CPU us per record": 1e6 / cpu if cpu else None,
                "wall-clock us per record": 1e6 / ops if ops else None,
            }
        )
    return pd.DataFrame(rows)


def zero_hit_cost_table(result) -> pd.DataFrame:
    """Nanoseconds per record at 0% hits, taken apart (``zero_hit_costs`` of the summary):
    RocksDB alone, what the cache's bookkeeping adds, and what RocksDB pays more for writing
    back the evicted key instead of the key it has just read. Empty when it was not measured.
    """
    columns = ["per record", "ns", "% of RocksDB alone"]
    costs = result.summary.get("zero_hit_costs")
    if not costs:
        return pd.DataFrame(columns=columns)
    base = costs["rocksdb_same_key_ns"]
    rows = [
        ("RocksDB alone: get(k), put(k)", base, 1.0),
        (
            f"+ the cache's bookkeeping ({costs['max_entries']} entries, 0% hits)",
            costs["bookkeeping_ns"],
            costs["bookkeeping_share"],
        ),
        (
            "+ RocksDB: put of the evicted key instead of k",
            costs["rocksdb_evicted_key_ns"] - base,
            costs["write_locality_share"],
        ),
        ("the seed's whole loss at 0% hits (JVM)", None, costs["seed_loss_share"]),
    ]
    return pd.DataFrame(
        [
            (what, None if ns is None else round(ns), round(100 * share, 1))
            for what, ns, share in rows
        ],
        columns=columns,
    )


def hit_ratio_curve_figure(result, *, highlight: int | None = None) -> go.Figure:
    """Hit ratio and operator throughput against the cache size (the sweep), two y axes.

    The dotted lines are the seed's 0% / 50% / 100% points; ``highlight`` marks one size.
    """
    sweep = [p for p in result.summary["sweep"] if p["cache_size"] is not None]
    base = next((p for p in result.summary["sweep"] if p["cache_size"] is None), None)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    sizes = [p["cache_size"] for p in sweep]
    fig.add_trace(
        go.Scatter(
            x=sizes,
            y=[p["hit_ratio"] for p in sweep],
            mode="lines+markers",
            line={"shape": "hv", "color": COLORS["cached"]},
            name="hit ratio (measured)",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=[250, 500, 1000],
            y=[0.0, 0.5, 1.0],
            mode="markers",
            marker={"symbol": "x", "size": 11, "color": COLORS["seed"]},
            name="hit ratio (seed)",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=sizes,
            y=[p["operator_cpu_records_per_second"] for p in sweep],
            mode="lines+markers",
            line={"dash": "dot", "color": COLORS["sorted"]},
            name="records per operator CPU second (cached)",
        ),
        secondary_y=True,
    )
    if base and base["operator_cpu_records_per_second"]:
        fig.add_trace(
            go.Scatter(
                x=[min(sizes, default=0), max(sizes, default=1)],
                y=[base["operator_cpu_records_per_second"]] * 2,
                mode="lines",
                line={"dash": "dash", "color": COLORS["rocksdb"]},
                name="records per operator CPU second (RocksDB, no cache)",
            ),
            secondary_y=True,
        )
    if highlight is not None:
        fig.add_vline(x=highlight, line={"color": "#444", "width": 1})
    fig.update_layout(
        title="FLIP-325 key pattern: hit ratio and throughput vs LRU cache size",
        template=TEMPLATE,
        xaxis={"title": "cache entries (state.backend.cache.max-entries-num)"},
        legend={"orientation": "h", "y": -0.25},
    )
    fig.update_yaxes(
        title_text="hit ratio", range=[-0.05, 1.05], tickformat=".0%", secondary_y=False
    )
    fig.update_yaxes(
        title_text="records per operator CPU second", rangemode="tozero", secondary_y=True
    )
    return fig


def cache_speedup_figure(result) -> go.Figure:
    """Bars: throughput with the cache over RocksDB alone, measured vs the seed (log scale)."""
    table = [t for t in result.summary["by_cache_size"] if t["cache_size"] is not None]
    labels = [f"{t['cache_size']} entries" for t in table]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[t["speedup"] for t in table],
            name="measured (operator CPU time)",
            marker_color=COLORS["cached"],
            text=[f"{t['speedup']:.2f}x" if t["speedup"] else "" for t in table],
        )
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[t.get("speedup_wall") for t in table],
            name="measured (operator wall clock)",
            marker_color="#ffbb78",
        )
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[t["speedup_e2e"] for t in table],
            name="measured (Spark job wall time)",
            marker_color="#fdd0a2",
        )
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[t["seed_speedup"] for t in table],
            name="seed (Flink, JVM)",
            marker_color=COLORS["seed"],
            text=[f"{t['seed_speedup']:g}x" for t in table],
        )
    )
    fig.add_hline(y=1.0, line={"dash": "dash", "color": COLORS["rocksdb"]})
    fig.update_layout(
        title="Throughput with the LRU cache, relative to RocksDB alone",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "x RocksDB throughput", "type": "log"},
    )
    return fig


def cache_size_explorer(spark, *, n_records: int, start: int = 500, result=None):
    """A cache-size slider: each release runs the FLIP-325 job on Spark with that many entries
    and redraws the curve (``result``'s sweep) with the new point marked. Inert in a report."""
    slider = widgets.IntSlider(
        value=start,
        min=0,
        max=1500,
        step=50,
        description="cache entries",
        continuous_update=False,
        style={"description_width": "initial"},
    )
    label = widgets.HTML()
    out = widgets.Output()
    box = widgets.VBox([slider, label, out])
    if in_report():
        display(box)
        return box

    def redraw(change=None) -> None:
        size = int(slider.value)
        run = run_count(
            flip325_input(spark, n_records),
            "cached",
            spark=spark,
            parallelism=1,
            cache_entries=size,
            emit="record",
            checkpoint_interval_ms=1000,
        )
        label.value = (
            f"<b>{size} entries</b>: hit ratio {run.hit_ratio:.1%}, "
            f"{run.operator_cpu_records_per_second:,.0f} records per operator CPU second, "
            f"{run.state_reads:,} RocksDB reads, {run.state_writes:,} RocksDB writes"
        )
        out.clear_output(wait=True)
        if result is not None:
            with out:
                hit_ratio_curve_figure(result, highlight=size).show()

    slider.observe(redraw, names="value")
    redraw()
    display(box)
    return box
