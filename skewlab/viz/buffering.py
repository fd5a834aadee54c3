"""Notebook 03, memory buffering (seed 000): throughput over key cardinality, latency over the
trigger interval, and the buffer's controls.

Every figure builder takes the plain tables the experiments return (pandas DataFrames, or a
benchmark result as written by ``skewlab bench``) and returns a
``plotly.graph_objects.Figure``; :func:`buffering_explorer` reruns real jobs from sliders.

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

from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from IPython.display import display

from skewlab.engine.config import JobConfig
from skewlab.experiments.buffering import SEED_SPEEDUP_AT_20_KEYS
from skewlab.experiments.latency_sweep import latency_sweep
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Naive, run_strategy
from skewlab.viz.palette import COLORS, TEMPLATE
from skewlab.viz.render import in_report

__all__ = [
    "bench_rows",
    "buffering_explorer",
    "latency_figure",
    "median_throughput",
    "show_saved_benchmark",
    "speedup_figure",
    "throughput_figure",
]

CARDINALITIES = (20_000, 10_000, 5_000, 1_000, 500, 100, 50, 20, 10, 5, 2, 1)
MAX_COUNTS = (10, 100, 1_000, 10_000, 100_000)
INTERVALS_MS = (10, 20, 50, 100, 200, 500, 1_000)
_STYLE = {"description_width": "initial"}


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
            y=[SEED_SPEEDUP_AT_20_KEYS],
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
    interval. A ``naive`` row in ``sweep`` (see
    :func:`skewlab.experiments.latency_sweep.latency_sweep`)
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
        + f" (article: ~{SEED_SPEEDUP_AT_20_KEYS:.0f}x); all digests match the reference: "
        + str(summary.get("all_digests_match"))
    )
    fig = throughput_figure(saved, title="Saved benchmark: throughput vs key cardinality")
    fig.show()
    return fig


def _select(description: str, options: Sequence, value) -> widgets.SelectionSlider:
    return widgets.SelectionSlider(
        options=list(options),
        value=value,
        description=description,
        continuous_update=False,
        style=_STYLE,
        layout={"width": "32rem"},
    )


def buffering_explorer(
    spark,
    *,
    n_views: int,
    n_users: int,
    cardinality: int = 20,
    max_count: int = 1_000,
    trigger_interval_ms: int = 100,
    source_rate: float = 5_000,
    paced_views: int = 5_000,
    parallelism: int | None = None,
    seed: int = 1,
) -> widgets.Widget:
    """Sliders for key cardinality, ``max_count`` and the trigger interval; *Run* measures.

    One click generates ``n_views`` views over ``cardinality`` tweets and runs naive (RocksDB)
    and buffered as fast as possible (throughput), then buffered again over ``paced_views``
    views at ``source_rate`` records/s (latency: meaningful only with a paced source).
    """
    card = _select("distinct tweets", CARDINALITIES, cardinality)
    count = _select("max_count", MAX_COUNTS, max_count)
    interval = _select("trigger interval (ms)", INTERVALS_MS, trigger_interval_ms)
    button = widgets.Button(description="Run", button_style="primary", icon="play")
    status = widgets.HTML()
    out = widgets.Output()
    box = widgets.VBox([card, count, interval, widgets.HBox([button, status]), out])
    if in_report():
        display(box)
        return box

    def run(_=None) -> None:
        button.disabled = True
        status.value = "running on Spark…"
        try:
            views = generate_views(spark, ViewSpec(n_views, n_users, card.value, seed=seed))
            views = views.cache()
            rows = []
            job = JobConfig(parallelism=parallelism, latency_profile=None)
            for name, strategy in (
                ("naive", Naive()),
                ("buffered", Buffered(max_count=count.value, trigger_interval_ms=interval.value)),
            ):
                result, _ = run_strategy(views, strategy, job, spark)
                rows.append(
                    {
                        "cardinality": card.value,
                        "strategy": name,
                        "run": 0,
                        "operator_records_per_second": result.operator_records_per_second,
                    }
                )
            views.unpersist()
            paced = generate_views(
                spark, ViewSpec(paced_views, n_users, min(card.value, paced_views), seed=seed)
            )
            sweep = latency_sweep(
                paced,
                source_rate=source_rate,
                trigger_intervals=(interval.value,),
                max_count=count.value,
                parallelism=parallelism,
                baseline=True,
            )
            frame = pd.DataFrame(rows)
            speedup = (
                rows[1]["operator_records_per_second"] / rows[0]["operator_records_per_second"]
            )
            fig = throughput_figure(
                frame, title=f"{card.value:,} tweets: buffered is {speedup:.1f}x naive"
            )
            out.clear_output(wait=True)
            with out:
                fig.show()
                latency_figure(sweep).show()
                display(sweep[["strategy", "trigger_interval_ms", "max_count", "buffer_flushes",
                               "latency_p50_ms", "latency_p99_ms"]])  # fmt: skip
            status.value = ""
        except Exception as exc:  # noqa: BLE001 - shown to the person at the sliders
            status.value = f"<span style='color:#b00'>{type(exc).__name__}: {exc}</span>"
        finally:
            button.disabled = False

    button.on_click(run)
    display(box)
    return box
