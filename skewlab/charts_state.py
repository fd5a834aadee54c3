"""Tables, charts and a widget for the state-backend notebooks (04: FLIP-325, 05: FLIP-140).

Every function takes a :class:`~skewlab.benchmarks.BenchResult` of :mod:`skewlab.benchmarks.cache`,
:mod:`skewlab.benchmarks.sorted` or :mod:`skewlab.benchmarks.value_state` and returns a pandas
DataFrame or a plotly figure; notebooks only call these and show the result.

Example::

    >>> from skewlab.benchmarks.cache import run_experiment
    >>> result = run_experiment("quick", n=20_000, sweep_n=10_000)    # doctest: +SKIP
    >>> hit_ratio_curve_figure(result).show()                          # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from skewlab.charts import TEMPLATE, in_report

__all__ = [
    "STRATEGY_COLORS",
    "cache_cost_table",
    "zero_hit_cost_table",
    "cache_size_explorer",
    "cache_speedup_figure",
    "cache_table",
    "hit_ratio_curve_figure",
    "memory_by_k_figure",
    "strategy_table",
    "strategy_time_figure",
    "unsorted_input_demo",
    "value_state_figure",
    "value_state_table",
]

#: One colour per count strategy / backend, shared by the charts of notebooks 04 and 05.
STRATEGY_COLORS = {
    "rocksdb": "#d62728",
    "heap": "#9467bd",
    "cached": "#ff7f0e",
    "sort_group": "#7f7f7f",
    "sorted": "#2ca02c",
    "single_key": "#2ca02c",
    "spark_sql": "#1f77b4",
    "seed": "#bcbd22",
}
LABELS = {
    "rocksdb": "keyed, RocksDB",
    "heap": "keyed, heap",
    "sort_group": "sort + group, no state (DataSet)",
    "sorted": "sorted input, single-key state",
    "spark_sql": "Spark groupBy().count()",
}


# --------------------------------------------------------------------------- FLIP-325


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
            line={"shape": "hv", "color": STRATEGY_COLORS["cached"]},
            name="hit ratio (measured)",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=[250, 500, 1000],
            y=[0.0, 0.5, 1.0],
            mode="markers",
            marker={"symbol": "x", "size": 11, "color": STRATEGY_COLORS["seed"]},
            name="hit ratio (seed)",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=sizes,
            y=[p["operator_cpu_records_per_second"] for p in sweep],
            mode="lines+markers",
            line={"dash": "dot", "color": STRATEGY_COLORS["sorted"]},
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
                line={"dash": "dash", "color": STRATEGY_COLORS["rocksdb"]},
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
            marker_color=STRATEGY_COLORS["cached"],
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
            marker_color=STRATEGY_COLORS["seed"],
            text=[f"{t['seed_speedup']:g}x" for t in table],
        )
    )
    fig.add_hline(y=1.0, line={"dash": "dash", "color": STRATEGY_COLORS["rocksdb"]})
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
    import ipywidgets as widgets
    from IPython.display import display

    from skewlab.wordcount import flip325_input, run_count

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


# --------------------------------------------------------------------------- FLIP-140


def strategy_table(result) -> pd.DataFrame:
    """Seconds, records/s and peak memory per strategy, beside the seed's milliseconds."""
    sorted_row = next((t for t in result.summary["by_strategy"] if t["strategy"] == "sorted"), {})
    seed_sorted = sorted_row.get("seed_ms")
    rows = []
    for t in result.summary["by_strategy"]:
        mem = t["peak_memory_bytes"]
        rows.append(
            {
                "strategy": LABELS.get(t["strategy"], t["strategy"]),
                "key type": t["key_type"],
                "operator s": t["operator_seconds"],
                "operator CPU s": t.get("operator_cpu_seconds"),
                "wall s": t["wall_seconds"],
                "operator records/s": t["operator_records_per_second"],
                "peak memory MiB": None if mem is None else mem / 2**20,
                "x sorted (operator)": _over(
                    t["operator_seconds"], sorted_row.get("operator_seconds")
                ),
                "x sorted (CPU)": _over(
                    t.get("operator_cpu_seconds"), sorted_row.get("operator_cpu_seconds")
                ),
                "x sorted (wall)": _over(t["wall_seconds"], sorted_row.get("wall_seconds")),
                "seed ms": t["seed_ms"],
                "seed x sorted": _over(t["seed_ms"], seed_sorted),
            }
        )
    return pd.DataFrame(rows)


def _over(a: Any, b: Any) -> float | None:
    return a / b if a is not None and b else None


def strategy_time_figure(result) -> go.Figure:
    """Bars: each strategy's time relative to sorted input -- operator time, job wall time and
    the seed's job time -- so the three scales compare at a glance."""
    table = strategy_table(result)
    fig = go.Figure()
    for column, name, color in (
        ("x sorted (operator)", "measured: operator time", STRATEGY_COLORS["sorted"]),
        ("x sorted (CPU)", "measured: operator CPU time", "#74c476"),
        ("x sorted (wall)", "measured: Spark job wall time", "#98df8a"),
        ("seed x sorted", "seed: Flink job time", STRATEGY_COLORS["seed"]),
    ):
        fig.add_trace(
            go.Bar(
                x=table["strategy"],
                y=table[column],
                name=name,
                marker_color=color,
                text=[f"{v:.2f}" if pd.notna(v) else "" for v in table[column]],
            )
        )
    fig.add_hline(y=1.0, line={"dash": "dash", "color": "#444"})
    s = result.summary
    fig.update_layout(
        title=f"WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys: time / sorted",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "time relative to sorted input (1 = sorted)", "type": "log"},
    )
    return fig


def memory_by_k_figure(result) -> go.Figure:
    """Peak memory of the Python worker at two K: sorted (flat) vs keyed heap (grows with K)."""
    by_k = result.summary["peak_memory_bytes_by_k"]
    fig = go.Figure()
    for strategy in ("heap", "sorted"):
        points = sorted((int(k), v) for k, v in by_k.get(strategy, {}).items())
        fig.add_trace(
            go.Bar(
                x=[f"K = {k:,}" for k, _ in points],
                y=[v / 2**20 for _, v in points],
                name=LABELS[strategy],
                marker_color=STRATEGY_COLORS[strategy],
            )
        )
    fig.update_layout(
        title="Peak memory growth of a subtask's Python worker, by number of keys",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "MiB over the worker's baseline"},
    )
    return fig


def unsorted_input_demo(spark, n: int = 2_000, k: int = 70) -> str:
    """Run the sorted strategy on input left in arrival order; return the error's one line.

    Example::

        >>> unsorted_input_demo(spark)                      # doctest: +SKIP
        'UnsortedInputError: input is not sorted by key: key 8 (key group 15) came after ...'
    """
    from skewlab.wordcount import run_count, wordcount_input

    try:
        run_count(wordcount_input(spark, n, k), "sorted", spark=spark, input_order="arrival")
    except Exception as exc:  # Spark wraps the worker's exception
        lines = [ln for ln in str(exc).splitlines() if "UnsortedInputError:" in ln]
        if lines:
            return lines[-1].strip().removeprefix("skewlab.errors.")
        raise
    raise AssertionError("the sorted strategy accepted unsorted input")


def value_state_table(result) -> pd.DataFrame:
    """ops/ms (per CPU ms, per wall-clock ms, and of the untimed warm-up pass) per operation and
    backend, beside the seed's."""
    s = result.summary
    rows = []
    for op, by_backend in s["ops_per_ms"].items():
        for backend, ops in by_backend.items():
            rows.append(
                {
                    "operation": op,
                    "backend": backend,
                    "ops/ms": ops,
                    "ops/wall-clock ms": s.get("ops_per_wall_ms", {}).get(op, {}).get(backend),
                    "warm-up pass ops/ms": s.get("warmup_ops_per_ms", {}).get(op, {}).get(backend),
                    "seed ops/ms": s["seed_ops_per_ms"][op][backend],
                }
            )
    table = pd.DataFrame(rows)
    rates = [c for c in table.columns if c.endswith("ops/ms")]
    return table.astype({c: "float" for c in rates}).round(0).astype({c: "Int64" for c in rates})


def value_state_figure(result) -> go.Figure:
    """Grouped bars of ops/ms, measured (solid) and the seed's (pale), log scale."""
    table = value_state_table(result)
    fig = go.Figure()
    for backend in ("heap", "rocksdb", "single_key"):
        part = table[table["backend"] == backend]
        fig.add_trace(
            go.Bar(
                x=part["operation"],
                y=part["ops/ms"],
                name=f"{backend} (measured)",
                marker_color=STRATEGY_COLORS[backend],
            )
        )
        fig.add_trace(
            go.Bar(
                x=part["operation"],
                y=part["seed ops/ms"],
                name=f"{backend} (seed)",
                marker_color=STRATEGY_COLORS[backend],
                opacity=0.35,
            )
        )
    fig.update_layout(
        title="ValueState micro-benchmark (keys in order)",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "ops/ms", "type": "log"},
    )
    return fig
