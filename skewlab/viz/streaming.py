"""Notebook 08, Spark Structured Streaming: the three variants over key cardinality beside the
seed's figure, the hot partition, latency over the trigger interval, rescaling a checkpoint,
what ``skewlab bench streaming`` prints, and sliders for the trigger interval and the skew.

Every figure builder takes what :mod:`skewlab.experiments.streaming` returns (a
:class:`~skewlab.experiments.results.BenchResult`, its JSON dict, or its parts) and returns a
plotly figure or a pandas DataFrame; :func:`streaming_explorer` reruns real queries. Every
title, caption (a table's columns' name) and printed block says whose figures it shows
(:func:`~skewlab.viz.titles.whose_figures`: this run or the reference; the seed's figure named
as the seed's), and each ratio or latency is printed with its interval where it has one.

Example::

    >>> rows = pd.DataFrame({
    ...     "distribution": ["uniform"] * 3, "cardinality": [20] * 3, "run": [0] * 3,
    ...     "variant": ["per-record", "per-batch", "builtin"],
    ...     "records_per_second": [100.0, 400.0, 900.0]})
    >>> fig = throughput_figure(rows)
    >>> fig.layout.xaxis.type, len(fig.data)
    ('log', 6)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import RunResult
from skewlab.experiments.intervals import Estimate
from skewlab.experiments.references import load_reference
from skewlab.experiments.results import BenchResult, bench_rows, bench_summary
from skewlab.experiments.streaming import SEED_SPEEDUP_AT_20_KEYS, ratios_by_cardinality
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Streaming, run_strategy
from skewlab.strategies.streaming import VARIANTS, hot_partitions
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, LEGEND_BELOW, TEMPLATE
from skewlab.viz.reference_section import section_shown
from skewlab.viz.text import estimate_text
from skewlab.viz.titles import latency_title, milliseconds, seed_point, whose_figures

__all__ = [
    "batches_table",
    "bench_rows",
    "describe_rescale",
    "describe_shape",
    "format_hot_partition_summary",
    "format_summary",
    "hot_partition_figure",
    "hot_partition_shown",
    "provider_error_text",
    "latency_figure",
    "latency_table",
    "ratio_figure",
    "ratio_title",
    "rescale_table",
    "rescale_whose",
    "show_saved_benchmark",
    "streaming_explorer",
    "throughput_figure",
    "throughput_table",
]

_DASH = {"uniform": "solid", "zipf": "dash"}


def _whose(result) -> str | None:
    """Whose figures ``result`` holds, where it says (a table of rows alone does not)."""
    if result is None or isinstance(result, pd.DataFrame):
        return None
    if isinstance(result, Mapping):
        return whose_figures(result) if ("size" in result or "provenance" in result) else None
    return whose_figures(result.to_json_dict())


def _capital(whose: str) -> str:
    return f"{whose[0].upper()}{whose[1:]}"


def throughput_table(result) -> pd.DataFrame:
    """Min / median / max rows per second per distribution, key cardinality and variant; its
    caption (whose figures) is the columns' name.

    Example::

        >>> table = throughput_table({"size": "quick", "summary": {"by_cardinality": [
        ...     {"distribution": "uniform", "cardinality": 20, "variant": "builtin", "min": 1,
        ...      "median": 2, "max": 3, "runs": 1}]}})
        >>> table.columns.tolist(), table.columns.name
        (['distribution', 'cardinality', 'variant', 'min', 'median', 'max', 'runs'], 'this run (quick, this machine): rows / s over micro-batch time')
    """  # noqa: E501
    table = pd.DataFrame(bench_summary(result)["by_cardinality"])
    whose = _whose(result)
    table.columns.name = f"{whose + ': ' if whose else ''}rows / s over micro-batch time"
    return table


def _ratio_text(entry: Mapping[str, Any], name: str, spec: str = ".1f") -> str | None:
    """One ratio of ``summary["ratios"]`` with its interval where it has one."""
    value = entry.get(name)
    if not value:
        return None
    return estimate_text(entry.get(f"{name}_interval") or {"value": value}, spec)


def ratio_title(rows: pd.DataFrame, whose: str | None = None) -> str:
    """What the throughput charts show, from the runs' medians: per-batch over per-record and
    builtin over per-batch at 20 keys (the seed's point; else the fewest keys measured), on
    uniform views where measured, each with its interval over the runs where it has one, and
    whose figures they are (``whose``); with two decimals, as the claims print them.

    Example::

        >>> rows = pd.DataFrame({"distribution": ["uniform"] * 3, "cardinality": [20] * 3,
        ...     "variant": ["per-record", "per-batch", "builtin"],
        ...     "records_per_second": [1_000.0, 4_000.0, 40_000.0]})
        >>> ratio_title(rows)
        'At 20 keys (uniform): per-batch 4.00x per-record, builtin 10.00x per-batch'
        >>> ratio_title(rows, "this run (quick, this machine)")
        'This run (quick, this machine), at 20 keys (uniform): per-batch 4.00x per-record, builtin 10.00x per-batch'
    """  # noqa: E501
    lead = f"{_capital(whose)}, at" if whose else "At"
    ratios = ratios_by_cardinality(rows.to_dict("records"))
    if not ratios:
        head = f"{_capital(whose)}: " if whose else ""
        return f"{head}Spark Structured Streaming: throughput vs key cardinality"
    dist, by_k = next(iter(ratios.items()))  # uniform first, as the seed
    few = seed_point(by_k)
    parts = [  # as many digits as the claims print
        f"{subject} {_ratio_text(by_k[few], name, '.2f')} {over}"
        for name, subject, over in (
            ("per_batch_over_per_record", "per-batch", "per-record"),
            ("builtin_over_per_batch", "builtin", "per-batch"),
        )
        if by_k[few][name]
    ]
    return f"{lead} {few:,} keys ({dist}): " + ", ".join(parts)


def throughput_figure(result, *, title: str | None = None, whose: str | None = None) -> go.Figure:
    """Rows per second (over the micro-batches' time) against the number of distinct tweets,
    log-log: one colour per variant, solid for uniform views, dashed for Zipf; every run a dot.
    The default title states the ratios at 20 keys and whose figures they are
    (:func:`ratio_title`; ``whose`` defaults to the result's own: this run or the reference)."""
    whose = whose or _whose(result)
    rows = bench_rows(result)
    fig = go.Figure()
    for dist in [d for d in ("uniform", "zipf") if d in set(rows["distribution"])]:
        for variant in VARIANTS:
            runs = rows[(rows["distribution"] == dist) & (rows["variant"] == variant)]
            if not len(runs):
                continue
            medians = runs.groupby("cardinality")["records_per_second"].median().sort_index()
            color = COLORS[variant]
            fig.add_trace(go.Scatter(
                x=runs["cardinality"], y=runs["records_per_second"], mode="markers",
                marker={"color": color, "opacity": 0.35, "size": 6}, showlegend=False,
                hovertemplate=f"{variant}, {dist}: " + "%{x} keys, %{y:,.0f} rows/s<extra></extra>",
            ))  # fmt: skip
            fig.add_trace(go.Scatter(
                x=medians.index, y=medians.values, mode="lines+markers",
                line={"color": color, "dash": _DASH[dist]}, name=f"{variant} ({dist})",
                hovertemplate="%{x} keys: %{y:,.0f} rows/s<extra></extra>",
            ))  # fmt: skip
    fig.update_layout(
        title=title or ratio_title(rows, whose),
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": "rows / s over micro-batch time", "type": "log"},
        legend={"title": "variant (views)"},
    )
    return fig


def _ratio_bars(by_k: Mapping[str, Any], ks: list[str], name: str) -> dict | None:
    """The runs' intervals of one ratio as asymmetric error bars (``None``: none)."""
    ests = [Estimate.from_json(by_k[k][f"{name}_interval"]) if by_k[k].get(f"{name}_interval")
            else None for k in ks]  # fmt: skip
    if not any(e is not None and e.has_interval for e in ests):
        return None
    up = [e.high - e.value if e is not None and e.has_interval else 0.0 for e in ests]
    down = [e.value - e.low if e is not None and e.has_interval else 0.0 for e in ests]
    return {"type": "data", "symmetric": False, "array": up, "arrayminus": down}


def ratio_figure(result, *, title: str | None = None, whose: str | None = None):
    """Per-batch over per-record and builtin over per-batch (medians, with their intervals
    over the runs as error bars) against the key cardinality, with seed 000's ~45x at 20 keys
    marked as the seed's (Flink, its machine). The default title states the ratios at 20 keys
    and whose figures they are (:func:`ratio_title`)."""
    whose = whose or _whose(result)
    ratios = bench_summary(result)["ratios"]
    fig = go.Figure()
    for dist, by_k in ratios.items():
        ks = sorted(by_k, key=int)
        for name, color in (("per_batch_over_per_record", COLORS["per-batch"]),
                            ("builtin_over_per_batch", COLORS["builtin"])):  # fmt: skip
            fig.add_trace(go.Scatter(
                x=[int(k) for k in ks], y=[by_k[k][name] for k in ks], mode="lines+markers",
                line={"color": color, "dash": _DASH.get(dist, "solid")},
                error_y=_ratio_bars(by_k, ks, name),
                name=f"{name.replace('_over_', ' / ').replace('_', '-')} ({dist})",
                hovertemplate="%{x} keys: %{y:.1f}x<extra></extra>",
            ))  # fmt: skip
    fig.add_trace(go.Scatter(
        x=[20], y=[SEED_SPEEDUP_AT_20_KEYS], mode="markers",
        marker={"symbol": "star", "size": 14, "color": COLORS["seed"]},
        name="seed 000: buffered / naive ~45x at 20 keys (Flink)",
    ))  # fmt: skip
    fig.add_hline(y=1, line={"dash": "dot", "color": COLORS["parity"]})
    fig.update_layout(
        title=title or f"{ratio_title(bench_rows(result), whose)} (the seed: ~45x, Flink)",
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": "ratio of median rows / s (x)", "type": "log"},
    )
    return fig


def batches_table(run, whose: str | None = None) -> pd.DataFrame:
    """One row per micro-batch of a streaming ``RunResult``: rows, duration, state rows
    updated, commit time, RocksDB gets and puts; with ``whose``, its caption (the columns'
    name) says whose run it is.

    Example::

        >>> from skewlab.engine.metrics import RunResult
        >>> r = RunResult("streaming", {}, 1, 1, 0, 1, 1, 1.0, 1.0, "d", extra={"batches": [
        ...     {"batch_id": 0, "rows": 1, "duration_ms": 9, "state_rows_updated": 1,
        ...      "state_commit_ms": 2, "state_memory_bytes": 0, "rocksdb": {}}]})
        >>> batches_table(r)["rows"].tolist()
        [1]
    """
    table = pd.DataFrame(
        [
            {
                "batch": b["batch_id"],
                "rows": b["rows"],
                "duration_ms": b["duration_ms"],
                "state_rows_updated": b["state_rows_updated"],
                "state_commit_ms": b["state_commit_ms"],
                "state_memory_bytes": b["state_memory_bytes"],
                "rocksdb_gets": b["rocksdb"].get("rocksdbGetCount"),
                "rocksdb_puts": b["rocksdb"].get("rocksdbPutCount"),
            }
            for b in run.extra["batches"]
        ]
    )
    if whose:
        table.columns.name = f"{whose}: Spark's progress per micro-batch"
    return table


def hot_partition_figure(
    run, hot_partition: int | None = None, *, title: str | None = None, whose: str | None = None
):
    """Per micro-batch, the processor's time in each Spark partition (bars) and the batch's
    duration (line): the partition that holds the hot key sets every batch's pace. The default
    title states the hot partition's share of the processor time, and whose run it is
    (``whose``)."""
    subtasks = pd.DataFrame(run.subtasks)
    durations = batches_table(run).set_index("batch")["duration_ms"]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for partition in sorted(subtasks["partition"].unique()):
        part = subtasks[subtasks["partition"] == partition]
        hot = partition == hot_partition
        fig.add_trace(go.Bar(
            x=part["batch"], y=part["operator_seconds"] * 1000,
            name=f"partition {partition}" + (" (holds tweet-0)" if hot else ""),
            marker={"color": COLORS["per-record"] if hot else COLORS["cold_partition"]},
            customdata=part["records"],
            hovertemplate="batch %{x}: %{y:,.0f} ms, %{customdata} rows<extra></extra>",
        ), secondary_y=False)  # fmt: skip
    fig.add_trace(go.Scatter(
        x=durations.index, y=durations.values, mode="lines+markers", name="batch duration",
        line={"color": COLORS["line"]}, hovertemplate="batch %{x}: %{y:,.0f} ms<extra></extra>",
    ), secondary_y=True)  # fmt: skip
    busiest = subtasks.groupby("partition")["operator_seconds"].sum()
    total = busiest.sum()
    hot = hot_partition if hot_partition in busiest.index else busiest.idxmax()
    held = " (holds tweet-0)" if hot == hot_partition else ""
    lead = f"{_capital(whose)}, per-record" if whose else "Per-record"
    default = (
        f"{lead}: partition {hot}{held} does {busiest[hot] / total:.0%} of "
        f"{len(busiest)} partitions' work; median batch {durations.median():,.0f} ms"
        if total > 0
        else f"{lead}: processor time per partition, per micro-batch"
    )
    fig.update_layout(
        title=title or default,
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "micro-batch", "dtick": 1},  # whole batches, no 0.5
        **LEGEND_BELOW,  # at the right a legend would cover the second y axis's title
    )
    fig.update_yaxes(title_text="time inside the processor (ms)", secondary_y=False)
    fig.update_yaxes(title_text="micro-batch duration (ms)", secondary_y=True, rangemode="tozero")
    return fig


def hot_partition_shown(result) -> tuple[RunResult, int | None]:
    """The hot-partition run of a ``skewlab bench hot_partition`` result (this run's
    :class:`~skewlab.experiments.results.BenchResult` or a reference's dict) as a
    :class:`~skewlab.engine.metrics.RunResult`, and the state partition holding ``tweet-0``:
    what :func:`hot_partition_figure` and :func:`batches_table` draw.

    Example::

        >>> run = RunResult("streaming", {}, 1, 1, 0, 1, 1, 1.0, 1.0, "d")
        >>> saved = {"summary": {"run": run.to_dict(), "hot_partition": 1}}
        >>> shown, hot = hot_partition_shown(saved)
        >>> shown == run, hot
        (True, 1)
    """
    summary = bench_summary(result)
    return RunResult(**summary["run"]), summary["hot_partition"]


def provider_error_text(result) -> str:
    """What Spark said when ``transformWithStateInPandas`` started on its default provider, in a
    ``skewlab bench hot_partition`` result, after a line saying whose run it was.

    Example::

        >>> print(provider_error_text({"size": "tiny", "summary": {
        ...     "default_provider_error": "[STORE_BACKEND_NOT_SUPPORTED_FOR_TWS] ..."}}))
        What Spark said, this run (tiny, this machine):
        [STORE_BACKEND_NOT_SUPPORTED_FOR_TWS] ...
    """
    said = bench_summary(result)["default_provider_error"]
    return f"What Spark said, {whose_figures(result)}:\n{said}"


def format_hot_partition_summary(result: BenchResult) -> str:
    """What ``skewlab bench hot_partition`` prints: whose run, the partition holding ``tweet-0``
    with its share of the processor's time and of the rows, Spark's progress per micro-batch,
    and what Spark said on its default provider.

    Example::

        >>> from skewlab.experiments.hot_partition import run_experiment
        >>> result = run_experiment("tiny", progress=False)                 # doctest: +SKIP
        >>> print(format_hot_partition_summary(result))                     # doctest: +SKIP
        this run (tiny, this machine): partition 2 of 4 holds tweet-0: 61% of ...
    """
    summary = bench_summary(result)
    run, hot = hot_partition_shown(result)
    time_share, row_share = summary["hot_partition_time_share"], summary["hot_partition_row_share"]
    shares = (
        f"{time_share:.0%} of the processor's time, {row_share:.0%} of the rows"
        if time_share is not None and row_share is not None
        else "its shares unknown"
    )
    oracle = "equal to" if summary["digest_matches_reference"] else "DIFFERENT FROM"
    return "\n".join([
        f"{whose_figures(result)}: partition {hot} of {summary['parallelism']} holds tweet-0: "
        f"{shares} (Zipf s={summary['skew']:g}, {summary['n_views']:,} views; registers "
        f"{oracle} Spark SQL's)",
        batches_table(run).to_string(index=False),
        "",
        provider_error_text(result),
    ])  # fmt: skip


def _latency_rows(latency) -> pd.DataFrame:
    """The sweep's rows by trigger interval, with ``p50_ms`` the median over micro-batches
    (the rows' p50 where a result predates it) and its interval."""
    table = pd.DataFrame(latency).sort_values("trigger_interval_ms").reset_index(drop=True)
    ests = [
        Estimate.from_json(r["latency_p50_over_batches"])
        if isinstance(r.get("latency_p50_over_batches"), Mapping)
        else Estimate(float(r["latency_p50_ms"]), runs=int(r.get("batches") or 1))
        for r in table.to_dict("records")
    ]
    table["p50_ms"] = [e.value for e in ests]
    table["p50_low"] = [e.low if e.has_interval else None for e in ests]
    table["p50_high"] = [e.high if e.has_interval else None for e in ests]
    table["p50_text"] = [_p50_text(e) for e in ests]
    return table


def _p50_text(estimate: Estimate) -> str:
    tail = "" if estimate.has_interval else " (no interval)"
    return estimate_text(estimate, ",.0f", " ms") + tail


def latency_figure(latency, *, title: str | None = None, whose: str | None = None):
    """p50 latency (the median over micro-batches of each one's median row latency, with its
    order-statistics interval as error bars where the micro-batches are enough for one) and
    the rows' p99 (a row's arrival to its micro-batch's delivery) against the trigger
    interval, with guides at half an interval and one interval. The default title states the
    p50s, the micro-batches they rest on and whose figures they are (``whose``).

    Example::

        >>> fig = latency_figure([{"trigger_interval_ms": 100.0, "latency_p50_ms": 900.0,
        ...     "latency_p99_ms": 1500.0, "source_rate": 1000.0, "variant": "per-batch",
        ...     "batches": 2}])
        >>> len(fig.data), fig.layout.title.text
        (4, 'p50 latency 900 ms at a 100 ms trigger interval (1,000 rows/s paced); 2 micro-batches')
    """  # noqa: E501
    table = _latency_rows(latency)
    x = table["trigger_interval_ms"]
    variant = table["variant"].iloc[0] if len(table) else "per-batch"
    color = COLORS.get(variant, COLORS["line"])
    bars = None
    if table["p50_low"].notna().any():
        bars = {
            "type": "data", "symmetric": False,
            "array": (table["p50_high"] - table["p50_ms"]).fillna(0).tolist(),
            "arrayminus": (table["p50_ms"] - table["p50_low"]).fillna(0).tolist(),
        }  # fmt: skip
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=x, y=table["p50_ms"], mode="lines+markers", error_y=bars,
        name=f"{variant} p50 (median over micro-batches)", line={"color": color},
        hovertemplate="interval %{x} ms: %{y:,.0f} ms<extra></extra>",
    ))  # fmt: skip
    fig.add_trace(go.Scatter(
        x=x, y=table["latency_p99_ms"], mode="lines+markers", name=f"{variant} p99 (rows)",
        line={"color": color, "dash": "dash"},
        hovertemplate="interval %{x} ms: %{y:,.0f} ms<extra></extra>",
    ))  # fmt: skip
    for factor, name in ((0.5, "half an interval"), (1.0, "one interval")):
        fig.add_trace(go.Scatter(
            x=x, y=x * factor, mode="lines", name=name, hoverinfo="skip",
            line={"color": COLORS["guide"], "dash": "dot", "width": 1},
        ))  # fmt: skip
    rate = table["source_rate"].iloc[0] if len(table) else None
    default = latency_title(table.assign(latency_p50_ms=table["p50_ms"]), "rows", rate)
    if "batches" in table and len(table):
        counts = [f"{int(n)}" for n in table["batches"]]
        default += f"; {' and '.join(counts) if len(counts) < 3 else ', '.join(counts)} "
        default += "micro-batches"
    if whose:
        default = f"{_capital(whose)}: {default}"
    fig.update_layout(
        title=title or default,
        template=TEMPLATE,
        xaxis={"title": "trigger interval (ms)", "type": "log"},
        yaxis={"title": "latency (ms), arrival to delivery", "type": "log"},
    )
    return fig


def latency_table(result) -> pd.DataFrame:
    """The latency sweep of a result: per trigger interval its micro-batches, rows per batch,
    mean batch time, the p50 over micro-batches with its interval (text), and the rows' p50
    and p99; its caption (whose figures) is the columns' name.

    Example::

        >>> table = latency_table({"size": "tiny", "summary": {"latency": [
        ...     {"trigger_interval_ms": 100.0, "batches": 2, "rows_per_batch": 150.0,
        ...      "mean_batch_ms": 700.0, "latency_p50_ms": 900.0, "latency_p99_ms": 1500.0,
        ...      "source_rate": 600.0, "variant": "per-batch"}]}})
        >>> table["p50 over micro-batches"].tolist(), table.columns.name
        (['900 ms (no interval)'], 'this run (tiny, this machine): per-batch latency, source paced at 600 rows/s')
    """  # noqa: E501
    rows = _latency_rows(bench_summary(result).get("latency") or [])
    if rows.empty:
        return rows
    table = pd.DataFrame(
        {
            "trigger interval ms": rows["trigger_interval_ms"],
            "micro-batches": rows["batches"],
            "rows per batch": rows["rows_per_batch"],
            "mean batch ms": rows["mean_batch_ms"],
            "p50 over micro-batches": rows["p50_text"],
            "rows' p50 ms": rows["latency_p50_ms"],
            "rows' p99 ms": rows["latency_p99_ms"],
        }
    )
    whose = _whose(result)
    what = f"{rows['variant'].iloc[0]} latency, source paced at {rows['source_rate'].iloc[0]:,.0f}"
    table.columns.name = f"{whose + ': ' if whose else ''}{what} rows/s"
    return table


def rescale_shown(result, reference: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """The rescale section to show: this run's (``result``; ``None``: no run), or -- at a size
    that leaves it out (quick: its queries are a demonstration, not a claim) -- the shipped
    reference's, after a line that says which (``None`` when neither has one). ``reference``
    defaults to the shipped one.

    Example::

        >>> rescale_shown({"summary": {"rescale": {"steps": []}}})
        this run's rescale section:
        {'steps': []}
    """
    own = None if result is None else bench_summary(result).get("rescale")
    section, _ = section_shown(
        own,
        "streaming",
        lambda summary: summary.get("rescale"),
        what="rescale section",
        why="its queries are a demonstration, not a claim",
        reference=reference,
    )
    return section


def rescale_whose(result, reference: Mapping[str, Any] | None = None) -> str | None:
    """Whose rescale section :func:`rescale_shown` shows: this run's (``result``; ``None``: no
    run), else the shipped reference's (``None``: neither has one).

    Example::

        >>> rescale_whose({"size": "tiny", "summary": {"rescale": {"steps": []}}})
        'this run (tiny, this machine)'
    """
    if result is not None:
        data = result if isinstance(result, Mapping) else result.to_json_dict()
        if bench_summary(data).get("rescale") is not None:
            return whose_figures(data)
    reference = load_reference("streaming") if reference is None else reference
    if not reference or not reference.get("summary", {}).get("rescale"):
        return None
    return whose_figures(reference)


def rescale_table(rescale: Mapping[str, Any], whose: str | None = None) -> pd.DataFrame:
    """The rescale section's steps: what ran, on how many state partitions, rows read; with
    ``whose`` (:func:`rescale_whose`), its caption is the columns' name.

    Example::

        >>> rescale_table({"steps": [{"step": "start", "state_partitions": 4, "rows_read": 9}]}
        ...               ).to_dict("records")
        [{'step': 'start', 'state_partitions': 4, 'rows_read': 9}]
    """
    table = pd.DataFrame(rescale["steps"])
    if whose:
        table.columns.name = f"{whose}: the rescale section's steps"
    return table


def describe_rescale(rescale: Mapping[str, Any]) -> str:
    """What rescaling the checkpoint did, in lines: the restart's partitions asked for and kept,
    what Spark said, the offset log's conf, each offline repartition step, and whether the
    resumed query's digest equals the reference.

    Example::

        >>> print(describe_rescale({"restart_asked": 8, "restart_kept": 4, "spark_said": [],
        ...     "offset_log_conf": {"spark.sql.shuffle.partitions": "4"},
        ...     "repartition": ["repartitioned 4 -> 8"],
        ...     "resumed_digest_matches_reference": True}))
        restart asked for 8 partitions; the query kept 4
        Spark said:
          (nothing in the driver's log)
        its offset log records: {'spark.sql.shuffle.partitions': '4'}
        repartitioned 4 -> 8
        resumed digest equals the reference: True
    """
    said = rescale.get("spark_said") or ["(nothing in the driver's log)"]
    return "\n".join([
        f"restart asked for {rescale['restart_asked']} partitions; "
        f"the query kept {rescale['restart_kept']}",
        "Spark said:", *(f"  {line}" for line in said),
        f"its offset log records: {rescale['offset_log_conf']}",
        *(str(step) for step in rescale.get("repartition", [])),
        "resumed digest equals the reference: "
        f"{rescale.get('resumed_digest_matches_reference')}",
    ])  # fmt: skip


def show_saved_benchmark(saved: Mapping[str, Any] | None) -> go.Figure | None:
    """Show a saved ``skewlab bench streaming`` result (notebook 08 passes the shipped
    reference, ``load_reference("streaming")``), or say there is none: a line naming whose
    figures they are, the headline with its interval, and :func:`throughput_figure`.

    Example::

        >>> show_saved_benchmark(None)
        no reference shipped yet: run `skewlab bench streaming --size full --save-reference`
    """
    if saved is None:
        print(
            "no reference shipped yet: run `skewlab bench streaming --size full --save-reference`"
        )
        return None
    s = saved["summary"]
    whose = whose_figures(saved)
    at_20 = s.get("per_batch_over_per_record_at_20_keys")
    interval = (s.get("intervals") or {}).get("per_batch_over_per_record_at_20_keys")
    print(
        f"{_capital(whose)}: {s['runs']} run(s) per point; per-batch / per-record at 20 keys: "
        + (estimate_text(interval or {"value": at_20}, ".2f") if at_20 else "not measured")
        + f" (seed 000's buffer, Flink: ~{SEED_SPEEDUP_AT_20_KEYS:.0f}x); all digests match: "
        + str(s.get("all_digests_match"))
    )  # fmt: skip
    fig = throughput_figure(saved, whose=whose)
    fig.show()
    return fig


def streaming_explorer(
    spark,
    *,
    n_views: int,
    n_users: int,
    trigger_interval_ms: int = 100,
    skew: float = 1.2,
    source_rate: float = 1_000,
    parallelism: int = 4,
    seed: int = 1,
) -> Explorer:
    """Sliders for the trigger interval and the Zipf skew; *Run* streams ``n_views`` views over
    20 tweets at ``source_rate`` rows/s through the per-record and per-batch variants and shows
    the per-record run's partitions and both runs' throughput and latency.

    Example::

        >>> explorer = streaming_explorer(spark, n_views=2_000, n_users=500)   # doctest: +SKIP
        >>> explorer.update(trigger_interval_ms=500).outputs[1]               # doctest: +SKIP
    """

    def draw(trigger_interval_ms: int, skew: float) -> list:
        spec = ViewSpec(n_views, n_users, 20, "zipf", skew, seed)
        views = generate_views(spark, spec).cache()
        job = JobConfig(parallelism=parallelism, source_rate=source_rate, disk_profile=None)
        rows, runs = [], {}
        try:
            for variant in ("per-record", "per-batch"):
                params = Streaming(variant=variant, trigger_interval_ms=trigger_interval_ms,
                                   max_rows_per_trigger=None)  # fmt: skip
                result, _ = run_strategy(views, params, job, spark)
                runs[variant] = result
                hot = hot_partitions(result)
                rows.append({"variant": variant, "trigger interval ms": trigger_interval_ms,
                             "Zipf skew": skew, "rows/s": result.extra["records_per_second"],
                             "micro-batches": len(result.extra["batches"]),
                             "latency p50 ms": result.latency_p50_ms,
                             "latency p99 ms": result.latency_p99_ms,
                             "hot partition's time share": max(
                                 (h["time_share"] or 0 for h in hot), default=None)})  # fmt: skip
        finally:
            views.unpersist()
        whose = "this run (the explorer's settings, this machine)"
        table = pd.DataFrame(rows)
        table.columns.name = whose
        return [hot_partition_figure(runs["per-record"], whose=whose), table]

    controls = {
        "trigger_interval_ms": widgets.SelectionSlider(
            options=[50, 100, 250, 500, 1_000, 2_000], value=trigger_interval_ms,
            description="trigger interval (ms)", continuous_update=False, style=WIDGET_STYLE,
        ),
        "skew": widgets.SelectionSlider(
            options=[0.5, 0.8, 1.0, 1.2, 1.5, 2.0], value=skew, description="Zipf skew",
            continuous_update=False, style=WIDGET_STYLE,
        ),
    }  # fmt: skip
    return Explorer(controls, draw, run_button=True).start()


def describe_shape(result, distribution: str = "uniform") -> str:
    """The measured per-batch / per-record ratio at each key cardinality of one distribution,
    most keys first, each with its interval over the runs, and whose figures they are; whether
    that is the seed's shape is the chapter's claim, not this line's.

    Example::

        >>> print(describe_shape({"size": "full", "summary": {"ratios": {"uniform": {
        ...     "20000": {"per_batch_over_per_record": 1.1},
        ...     "20": {"per_batch_over_per_record": 3.0}}}}}))
        This run (full, this machine), uniform views: per-batch / per-record 1.10x at 20,000 keys, 3.00x at 20 keys (the seed: ~45x at 20 keys, Flink).
        >>> print(describe_shape({"size": "quick", "summary": {"ratios": {"uniform": {}}}}, "zipf"))
        This run (quick, this machine), zipf views: not measured at this size.
    """  # noqa: E501
    whose = _whose(result)
    lead = f"{_capital(whose)}, {distribution}" if whose else distribution.capitalize()
    by_k = bench_summary(result).get("ratios", {}).get(distribution, {})
    points = sorted(
        ((int(k), v) for k, v in by_k.items() if v.get("per_batch_over_per_record")),
        key=lambda kv: -kv[0],
    )
    if not points:
        return f"{lead} views: not measured at this size."
    texts = [f"{_ratio_text(v, 'per_batch_over_per_record', '.2f')} at {k:,} keys"
             for k, v in points]  # fmt: skip
    if len(points) < 2:
        tail = "one key cardinality measured at this size: no shape to read"
    else:
        tail = f"the seed: ~{SEED_SPEEDUP_AT_20_KEYS:.0f}x at 20 keys, Flink"
    return f"{lead} views: per-batch / per-record {', '.join(texts)} ({tail})."


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench streaming`` prints: whose figures, the measured table (min /
    median / max rows per second) and the ratios with their intervals beside the seed's
    headline; the latency (each p50 over micro-batches with its interval) and rescale sections.

    Example::

        >>> from skewlab.experiments.streaming import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        this run (tiny, this machine): rows / s over micro-batch time, 1 run(s)
        dist        keys  variant          min    median       max
        ...
    """
    data = result if isinstance(result, Mapping) else result.to_json_dict()
    s = data["summary"]
    intervals = s.get("intervals") or {}
    lines = [
        f"{whose_figures(data)}: rows / s over micro-batch time, {s['runs']} run(s)",
        f"{'dist':<8} {'keys':>7}  {'variant':<10} {'min':>9} {'median':>9} {'max':>9}",
    ]
    for row in s["by_cardinality"]:
        lines.append(
            f"{row['distribution']:<8} {row['cardinality']:>7,}  {row['variant']:<10} "
            f"{row['min']:>9,.0f} {row['median']:>9,.0f} {row['max']:>9,.0f}"
        )

    def ratio(key: str) -> str:
        value = s.get(key)
        return "-" if value is None else estimate_text(intervals.get(key) or {"value": value},
                                                       ".2f")  # fmt: skip

    lines.append(
        f"at 20 keys (uniform): per-batch / per-record "
        f"{ratio('per_batch_over_per_record_at_20_keys')}, builtin / per-batch "
        f"{ratio('builtin_over_per_batch_at_20_keys')} [bootstrap interval over the runs; "
        f"none from one run] (the seed's buffer: ~{s['seed_speedup_at_20_keys']:.0f}x, Flink "
        f"on its machine); all digests match the reference: {s['all_digests_match']}"
    )
    latency = _latency_rows(s.get("latency") or [])
    for row in latency.itertuples():
        lines.append(
            f"latency at {row.source_rate:,.0f} rows/s, trigger {row.trigger_interval_ms:,.0f} "
            f"ms: p50 over {row.batches} micro-batches {row.p50_text}; rows' p99 "
            f"{milliseconds(row.latency_p99_ms)} ms"
        )
    rescale = s.get("rescale")
    if rescale:
        lines.append(
            f"restart asking for {rescale['restart_asked']} partitions kept "
            f"{rescale['restart_kept']}; " + "; ".join(
                f"repartition {e['from']} -> {e['to']}: "
                + ("done, state per key unchanged: " + str(e["state_unchanged_per_key"])
                   if e["done"] else f"NOT done ({e['reason']})")
                for e in rescale["repartition"]
            )
            + (f"; resumed on {rescale['resumed_partitions']} partitions, digest matches: "
               f"{rescale['resumed_digest_matches_reference']}"
               if rescale["repartition_available"] else "")
        )  # fmt: skip
    return "\n".join(lines)
