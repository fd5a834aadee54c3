"""Plotly figures of notebooks 02 (key salting) and 03 (memory buffering).

Every builder takes the plain tables the experiments return (pandas DataFrames, or a benchmark
result dict as written by ``skewlab bench``) and returns a ``plotly.graph_objects.Figure``;
the notebooks call ``.show()``. Importing :mod:`skewlab.charts` first switches plotly to the
offline report renderer inside ``skewlab report``.

Example::

    >>> import pandas as pd
    >>> rows = pd.DataFrame({
    ...     "cardinality": [1000, 1000, 20, 20], "strategy": ["naive", "buffered"] * 2,
    ...     "run": [0] * 4, "operator_records_per_second": [4e4, 8e4, 2e4, 1e6]})
    >>> fig = throughput_figure(rows)
    >>> fig.layout.xaxis.type, fig.layout.yaxis.type
    ('log', 'log')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from skewlab.charts import TEMPLATE

COLORS = {"naive": "#d62728", "buffered": "#1f77b4", "salted": "#ff7f0e"}
SEED_SPEEDUP_AT_20 = 45.0


def bench_rows(result: Mapping[str, Any] | Any) -> pd.DataFrame:
    """The rows of a benchmark result: a ``BenchResult``, its JSON dict, or a DataFrame.

    Example::

        >>> bench_rows({"rows": [{"cardinality": 1, "strategy": "naive"}]}).shape
        (1, 2)
    """
    if isinstance(result, pd.DataFrame):
        return result
    if hasattr(result, "frame"):
        return result.frame()
    return pd.DataFrame(result["rows"])


def median_throughput(rows, column: str = "operator_records_per_second"):
    """Median of ``column`` per (cardinality, strategy), one column per strategy, and the
    ``speedup`` (buffered / naive). ``rows``: anything :func:`bench_rows` takes.

    Example::

        >>> rows = pd.DataFrame({"cardinality": [20, 20], "strategy": ["naive", "buffered"],
        ...                      "operator_records_per_second": [1.0, 45.0]})
        >>> median_throughput(rows)["speedup"].tolist()
        [45.0]
    """
    table = (
        bench_rows(rows)
        .pivot_table(index="cardinality", columns="strategy", values=column, aggfunc="median")
        .sort_index(ascending=False)
    )
    table.columns.name = None
    if {"naive", "buffered"} <= set(table.columns):
        table["speedup"] = table["buffered"] / table["naive"]
    return table.reset_index()


def throughput_figure(
    result,
    *,
    column: str = "operator_records_per_second",
    title: str = "Throughput vs key cardinality (naive RocksDB vs buffered)",
) -> go.Figure:
    """Seed 000's figure: records/s against the number of distinct tweets, log-log axes.

    Lines through the medians per strategy; every run as a faint dot. ``result``: see
    :func:`bench_rows`. ``column``: ``operator_records_per_second`` (time inside the operators)
    or ``e2e_records_per_second`` (job wall time).
    """
    rows = bench_rows(result)
    medians = median_throughput(rows, column)
    fig = go.Figure()
    for strategy in [s for s in ("naive", "buffered") if s in medians.columns]:
        runs = rows[rows["strategy"] == strategy]
        color = COLORS.get(strategy)
        fig.add_trace(
            go.Scatter(
                x=runs["cardinality"],
                y=runs[column],
                mode="markers",
                marker={"color": color, "opacity": 0.35, "size": 6},
                name=f"{strategy} (each run)",
                showlegend=runs["run"].nunique() > 1 if "run" in runs else False,
                hovertemplate="%{x} keys: %{y:,.0f} rec/s<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=medians["cardinality"],
                y=medians[strategy],
                mode="lines+markers",
                line={"color": color},
                name=f"{strategy} (median)",
                hovertemplate="%{x} keys: %{y:,.0f} rec/s<extra></extra>",
            )
        )
    label = "operator" if column.startswith("operator") else "end-to-end"
    fig.update_layout(
        title=title,
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": f"{label} records / s", "type": "log"},
        legend={"title": "strategy"},
    )
    return fig


def speedup_figure(result, *, title: str = "Buffered / naive throughput") -> go.Figure:
    """The median speedup per key cardinality (log x), with the seed's ~45x at 20 keys."""
    medians = median_throughput(bench_rows(result))
    fig = go.Figure(
        go.Scatter(
            x=medians["cardinality"],
            y=medians["speedup"],
            mode="lines+markers",
            name="measured (median)",
            line={"color": COLORS["buffered"]},
            hovertemplate="%{x} keys: %{y:.1f}x<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[20],
            y=[SEED_SPEEDUP_AT_20],
            mode="markers",
            marker={"symbol": "star", "size": 14, "color": "#2ca02c"},
            name="seed 000: ~45x at 20 keys",
        )
    )
    fig.add_hline(y=1, line={"dash": "dot", "color": "#888"})
    fig.update_layout(
        title=title,
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": "speedup (x)", "type": "log"},
    )
    return fig


def latency_figure(
    sweep: pd.DataFrame, *, title: str = "Buffer latency vs trigger interval (paced source)"
) -> go.Figure:
    """p50 and p99 latency of the buffered runs against the trigger interval (log-log axes).

    Dotted guides: half an interval (what a record waits on average for a timer flush) and one
    interval. A ``naive`` row in ``sweep`` (see :func:`skewlab.latency_sweep.latency_sweep`)
    becomes a horizontal line: the per-record latency without a buffer.
    """
    buffered = sweep[sweep["strategy"] == "buffered"].sort_values("trigger_interval_ms")
    x = buffered["trigger_interval_ms"]
    fig = go.Figure()
    for column, name, dash in (
        ("latency_p50_ms", "p50", "solid"),
        ("latency_p99_ms", "p99", "dash"),
    ):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=buffered[column],
                mode="lines+markers",
                name=f"buffered {name}",
                line={"color": COLORS["buffered"], "dash": dash},
                hovertemplate="interval %{x} ms: %{y:.1f} ms<extra></extra>",
            )
        )
    for factor, name in ((0.5, "half an interval"), (1.0, "one interval")):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=x * factor,
                mode="lines",
                name=name,
                line={"color": "#999", "dash": "dot", "width": 1},
                hoverinfo="skip",
            )
        )
    naive = sweep[sweep["strategy"] == "naive"]
    if len(naive):
        row = naive.iloc[0]
        fig.add_hline(
            y=max(row["latency_p50_ms"], 1e-3),
            line={"color": COLORS["naive"], "dash": "dash"},
            annotation_text=f"naive p50 {row['latency_p50_ms']:.2g} ms",
        )
    rate = sweep["source_rate"].iloc[0] if len(sweep) else None
    fig.update_layout(
        title=f"{title} — {rate:,.0f} records/s" if rate else title,
        template=TEMPLATE,
        xaxis={"title": "trigger interval (ms)", "type": "log"},
        yaxis={"title": "latency (ms), arrival to emission", "type": "log"},
    )
    return fig


def double_count_figure(
    table: pd.DataFrame, *, title: str = "Counting views through salting"
) -> go.Figure:
    """Per tweet: the right count, the seed's sum of running partials, and the fixed sum.

    ``table``: :attr:`skewlab.salting.CounterResult.table` (log y: the wrong number is tens of
    times the right one).
    """
    fig = go.Figure()
    for column, name, color in (
        ("views", "right count (Spark groupBy)", "#2ca02c"),
        ("salted_sum", "seed's total + partialSum", COLORS["naive"]),
        ("fixed_sum", "latest partial per sub-key, summed", COLORS["buffered"]),
    ):
        fig.add_trace(
            go.Bar(
                x=table["tweet_id"],
                y=table[column],
                name=name,
                marker_color=color,
                hovertemplate="%{x}: %{y:,}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "tweet"},
        yaxis={"title": "view count", "type": "log"},
    )
    return fig


def order_figure(
    table: pd.DataFrame, *, title: str = "Per-user order: created, then deleted"
) -> go.Figure:
    """Order violations and resurrected accounts per strategy (:func:`~skewlab.salting.lifecycle_table`)."""  # noqa: E501
    fig = go.Figure()
    for column, name, color in (
        ("order_violations", "events applied after a later one", COLORS["salted"]),
        ("resurrected", "deleted accounts left active", COLORS["naive"]),
    ):
        fig.add_trace(
            go.Bar(
                x=table["strategy"],
                y=table[column],
                name=name,
                marker_color=color,
                text=table[column],
                textposition="outside",
            )
        )
    users = int(table["users"].max()) if len(table) else 0
    fig.update_layout(
        title=f"{title} ({users:,} users)",
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "strategy"},
        yaxis={"title": "count"},
    )
    return fig


def show_saved_benchmark(saved: Mapping[str, Any] | None) -> go.Figure | None:
    """Show a saved buffering benchmark (``latest_result("buffering")``), or say there is none.

    Prints the headline figure, shows :func:`throughput_figure` and returns it (``None`` when
    nothing was saved yet).

    Example::

        >>> show_saved_benchmark(None)
        no saved result yet: run `skewlab bench buffering --profile full`
    """
    if saved is None:
        print("no saved result yet: run `skewlab bench buffering --profile full`")
        return None
    summary = saved["summary"]
    at_20 = summary.get("speedup_at_20_keys")
    cards = len(summary.get("by_cardinality", []))
    print(
        f"{cards} cardinalities, {summary['runs']} run(s) each; speedup at 20 keys: "
        + (f"{at_20:.1f}x" if at_20 else "not measured")
        + f" (article: ~{SEED_SPEEDUP_AT_20:.0f}x); all digests match the reference: "
        + str(summary.get("all_digests_match"))
    )
    fig = throughput_figure(saved, title="Saved benchmark: throughput vs key cardinality")
    fig.show()
    return fig
