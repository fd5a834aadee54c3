"""Notebook 08, Spark Structured Streaming: the three variants over key cardinality beside the
seed's figure, the hot partition, latency over the trigger interval, rescaling a checkpoint,
what ``skewlab bench streaming`` prints, and sliders for the trigger interval and the skew.

Every figure builder takes what :mod:`skewlab.experiments.streaming` returns (a
:class:`~skewlab.experiments.results.BenchResult`, its JSON dict, or its parts) and returns a
plotly figure or a pandas DataFrame; :func:`streaming_explorer` reruns real queries.

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
from skewlab.experiments.chapters import SEED_KEYS
from skewlab.experiments.results import BenchResult, bench_rows, bench_summary
from skewlab.experiments.streaming import SEED_SPEEDUP_AT_20_KEYS, ratios_by_cardinality
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Streaming, run_strategy
from skewlab.strategies.streaming import VARIANTS, hot_partitions
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, LEGEND_BELOW, TEMPLATE
from skewlab.viz.reference_section import section_shown
from skewlab.viz.text import times
from skewlab.viz.titles import latency_title, seed_point

__all__ = [
    "batches_table",
    "bench_rows",
    "describe_rescale",
    "describe_shape",
    "format_summary",
    "hot_partition_figure",
    "latency_figure",
    "ratio_figure",
    "ratio_title",
    "rescale_table",
    "show_saved_benchmark",
    "streaming_explorer",
    "throughput_figure",
    "throughput_table",
]

_DASH = {"uniform": "solid", "zipf": "dash"}


def throughput_table(result) -> pd.DataFrame:
    """Min / median / max rows per second per distribution, key cardinality and variant.

    Example::

        >>> throughput_table({"summary": {"by_cardinality": [{"distribution": "uniform",
        ...     "cardinality": 20, "variant": "builtin", "min": 1, "median": 2, "max": 3,
        ...     "runs": 1}]}}).columns.tolist()
        ['distribution', 'cardinality', 'variant', 'min', 'median', 'max', 'runs']
    """
    return pd.DataFrame(bench_summary(result)["by_cardinality"])


def ratio_title(rows: pd.DataFrame) -> str:
    """What the throughput charts show, from the runs' medians: per-batch over per-record and
    builtin over per-batch at 20 keys (the seed's point; else the fewest keys measured), on
    uniform views where measured.

    Example::

        >>> rows = pd.DataFrame({"distribution": ["uniform"] * 3, "cardinality": [20] * 3,
        ...     "variant": ["per-record", "per-batch", "builtin"],
        ...     "records_per_second": [1_000.0, 4_000.0, 40_000.0]})
        >>> ratio_title(rows)
        'At 20 keys (uniform): per-batch 4.0x per-record, builtin 10.0x per-batch'
    """
    ratios = ratios_by_cardinality(rows.to_dict("records"))
    if not ratios:
        return "Spark Structured Streaming: throughput vs key cardinality"
    dist, by_k = next(iter(ratios.items()))  # uniform first, as the seed
    few = seed_point(by_k)
    parts = [
        f"{subject} {by_k[few][name]:.1f}x {over}"
        for name, subject, over in (
            ("per_batch_over_per_record", "per-batch", "per-record"),
            ("builtin_over_per_batch", "builtin", "per-batch"),
        )
        if by_k[few][name]
    ]
    return f"At {few:,} keys ({dist}): " + ", ".join(parts)


def throughput_figure(result, *, title: str | None = None) -> go.Figure:
    """Rows per second (over the micro-batches' time) against the number of distinct tweets,
    log-log: one colour per variant, solid for uniform views, dashed for Zipf; every run a dot.
    The default title states the ratios at 20 keys (:func:`ratio_title`)."""
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
        title=title or ratio_title(rows),
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": "rows / s over micro-batch time", "type": "log"},
        legend={"title": "variant (views)"},
    )
    return fig


def ratio_figure(result, *, title: str | None = None):
    """Per-batch over per-record and builtin over per-batch (medians) against the key
    cardinality, with seed 000's ~45x at 20 keys marked as the seed's (Flink, its machine).
    The default title states the ratios at 20 keys (:func:`ratio_title`)."""
    ratios = bench_summary(result)["ratios"]
    fig = go.Figure()
    for dist, by_k in ratios.items():
        ks = sorted(by_k, key=int)
        for name, color in (("per_batch_over_per_record", COLORS["per-batch"]),
                            ("builtin_over_per_batch", COLORS["builtin"])):  # fmt: skip
            fig.add_trace(go.Scatter(
                x=[int(k) for k in ks], y=[by_k[k][name] for k in ks], mode="lines+markers",
                line={"color": color, "dash": _DASH.get(dist, "solid")},
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
        title=title or f"{ratio_title(bench_rows(result))} (the seed: ~45x, Flink)",
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": "ratio of median rows / s (x)", "type": "log"},
    )
    return fig


def batches_table(run) -> pd.DataFrame:
    """One row per micro-batch of a streaming ``RunResult``: rows, duration, state rows
    updated, commit time, RocksDB gets and puts.

    Example::

        >>> from skewlab.engine.metrics import RunResult
        >>> r = RunResult("streaming", {}, 1, 1, 0, 1, 1, 1.0, 1.0, "d", extra={"batches": [
        ...     {"batch_id": 0, "rows": 1, "duration_ms": 9, "state_rows_updated": 1,
        ...      "state_commit_ms": 2, "state_memory_bytes": 0, "rocksdb": {}}]})
        >>> batches_table(r)["rows"].tolist()
        [1]
    """
    return pd.DataFrame(
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


def hot_partition_figure(run, hot_partition: int | None = None, *, title: str | None = None):
    """Per micro-batch, the processor's time in each Spark partition (bars) and the batch's
    duration (line): the partition that holds the hot key sets every batch's pace. The default
    title states the hot partition's share of the processor time."""
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
    default = (
        f"Per-record: partition {hot}{held} does {busiest[hot] / total:.0%} of "
        f"{len(busiest)} partitions' work; median batch {durations.median():,.0f} ms"
        if total > 0
        else "Per-record: processor time per partition, per micro-batch"
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


def latency_figure(latency, *, title: str | None = None):
    """p50 / p99 latency (a row's arrival to its micro-batch's delivery) against the trigger
    interval, with guides at half an interval and one interval.

    Example::

        >>> fig = latency_figure([{"trigger_interval_ms": 100.0, "latency_p50_ms": 900.0,
        ...     "latency_p99_ms": 1500.0, "source_rate": 1000.0, "variant": "per-batch"}])
        >>> len(fig.data)
        4
    """
    table = pd.DataFrame(latency).sort_values("trigger_interval_ms")
    x = table["trigger_interval_ms"]
    variant = table["variant"].iloc[0] if len(table) else "per-batch"
    fig = go.Figure()
    for column, name, dash in (("latency_p50_ms", "p50", "solid"),
                               ("latency_p99_ms", "p99", "dash")):  # fmt: skip
        fig.add_trace(go.Scatter(
            x=x, y=table[column], mode="lines+markers", name=f"{variant} {name}",
            line={"color": COLORS.get(variant, COLORS["line"]), "dash": dash},
            hovertemplate="interval %{x} ms: %{y:,.0f} ms<extra></extra>",
        ))  # fmt: skip
    for factor, name in ((0.5, "half an interval"), (1.0, "one interval")):
        fig.add_trace(go.Scatter(
            x=x, y=x * factor, mode="lines", name=name, hoverinfo="skip",
            line={"color": COLORS["guide"], "dash": "dot", "width": 1},
        ))  # fmt: skip
    rate = table["source_rate"].iloc[0] if len(table) else None
    fig.update_layout(
        title=title or latency_title(table, "rows", rate),
        template=TEMPLATE,
        xaxis={"title": "trigger interval (ms)", "type": "log"},
        yaxis={"title": "latency (ms), arrival to delivery", "type": "log"},
    )
    return fig


def rescale_shown(result, reference: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """The rescale section to show: this run's, or -- at a size that leaves it out (quick: its
    queries are a demonstration, not a claim) -- the shipped reference's, after a line that says
    which (``None`` when neither has one). ``reference`` defaults to the shipped one.

    Example::

        >>> rescale_shown({"summary": {"rescale": {"steps": []}}})
        this run's rescale section:
        {'steps': []}
    """
    own = bench_summary(result).get("rescale")
    section, _ = section_shown(
        own,
        "streaming",
        lambda summary: summary.get("rescale"),
        what="rescale section",
        why="its queries are a demonstration, not a claim",
        reference=reference,
    )
    return section


def rescale_table(rescale: Mapping[str, Any]) -> pd.DataFrame:
    """The rescale section's steps: what ran, on how many state partitions, rows read.

    Example::

        >>> rescale_table({"steps": [{"step": "start", "state_partitions": 4, "rows_read": 9}]}
        ...               ).to_dict("records")
        [{'step': 'start', 'state_partitions': 4, 'rows_read': 9}]
    """
    return pd.DataFrame(rescale["steps"])


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
    """Show a saved ``skewlab bench streaming`` result (notebook 08 passes
    ``latest_result("streaming", size="full")``), or say there is none.

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
    at_20 = s.get("per_batch_over_per_record_at_20_keys")
    print(
        f"size {saved.get('size', '?')}, {s['runs']} run(s) per point; per-batch / per-record "
        f"at 20 keys: " + (f"{at_20:.1f}x" if at_20 else "not measured")
        + f" (seed 000's buffer, Flink: ~{SEED_SPEEDUP_AT_20_KEYS:.0f}x); all digests match: "
        + str(s.get("all_digests_match"))
    )  # fmt: skip
    rows = bench_rows(saved)
    title = f"Saved benchmark ({saved.get('size', '?')} size): {ratio_title(rows)}"
    fig = throughput_figure(rows, title=title)
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
        return [hot_partition_figure(runs["per-record"]), pd.DataFrame(rows)]

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


def describe_shape(summary: dict[str, Any], distribution: str = "uniform") -> str:
    """One sentence on the measured shape of per-batch / per-record over key cardinality:
    whether it grows as the keys shrink (the seed's shape), from the figures themselves.

    Example::

        >>> print(describe_shape({"ratios": {"uniform": {
        ...     "20000": {"per_batch_over_per_record": 1.1},
        ...     "20": {"per_batch_over_per_record": 3.0}}}}))
        uniform views: per-batch / per-record grows from 1.1x at 20,000 keys to 3.0x at 20 keys: the seed's shape (the seed: ~45x at 20 keys, Flink).
        >>> print(describe_shape({"ratios": {"uniform": {}}}, "zipf"))
        zipf views: not measured at this size.
    """  # noqa: E501
    by_k = summary.get("ratios", {}).get(distribution, {})
    if not by_k:
        return f"{distribution} views: not measured at this size."
    points = sorted(
        ((int(k), v["per_batch_over_per_record"]) for k, v in by_k.items()
         if v.get("per_batch_over_per_record")),
        reverse=True,
    )  # fmt: skip
    if len(points) < 2:
        return (f"{distribution} views: one key cardinality measured at this size, so no "
                "shape to read; run a larger size for the sweep.")  # fmt: skip
    (k_hi, r_hi), (k_lo, r_lo) = points[0], points[-1]
    at_20 = dict(points).get(SEED_KEYS)
    low = f"{r_lo:.1f}x at {k_lo:,} keys"
    text = f"{distribution} views: per-batch / per-record "
    if r_lo > 1.25 * r_hi:
        text += f"grows from {r_hi:.1f}x at {k_hi:,} keys to {low}: the seed's shape"
    else:
        text += (f"does not grow as the keys shrink ({r_hi:.1f}x at {k_hi:,} keys, {low}): "
                 "not the seed's shape")  # fmt: skip
    seed = f"the seed: ~{SEED_SPEEDUP_AT_20_KEYS:.0f}x at 20 keys, Flink"
    if at_20 is not None and k_lo != 20:
        seed = f"{at_20:.1f}x at 20 keys; " + seed
    return f"{text} ({seed})."


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench streaming`` prints: the measured table (min / median / max rows per
    second) and the ratios beside the seed's headline; the latency and rescale sections.

    Example::

        >>> from skewlab.experiments.streaming import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        dist        keys  variant          min    median       max
        ...
    """
    s = result.summary
    lines = [f"{'dist':<8} {'keys':>7}  {'variant':<10} {'min':>9} {'median':>9} {'max':>9}"]
    for row in s["by_cardinality"]:
        lines.append(
            f"{row['distribution']:<8} {row['cardinality']:>7,}  {row['variant']:<10} "
            f"{row['min']:>9,.0f} {row['median']:>9,.0f} {row['max']:>9,.0f}"
        )
    at_20 = times(s["per_batch_over_per_record_at_20_keys"])
    builtin = times(s["builtin_over_per_batch_at_20_keys"])
    lines.append(
        f"at 20 keys (uniform): per-batch / per-record {at_20}, builtin / per-batch {builtin} "
        f"(the seed's buffer: ~{s['seed_speedup_at_20_keys']:.0f}x, Flink on its machine); "
        f"rows/s over micro-batch time, median of {s['runs']} run(s); all digests match the "
        f"reference: {s['all_digests_match']}"
    )
    for row in s.get("latency", []):
        lines.append(
            f"latency at {row['source_rate']:,.0f} rows/s, "
            f"trigger {row['trigger_interval_ms']:,.0f} ms: "
            f"p50 {row['latency_p50_ms']:,.0f} ms, p99 {row['latency_p99_ms']:,.0f} ms "
            f"over {row['batches']} micro-batches"
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
