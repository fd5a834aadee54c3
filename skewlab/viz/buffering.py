"""Notebook 03, memory buffering (seed 000): throughput over key cardinality, latency over the
trigger interval, and the buffer's controls.

Every figure builder takes the plain tables the experiments return (pandas DataFrames, or a
benchmark result as written by ``skewlab bench``) and returns a
``plotly.graph_objects.Figure``; :func:`buffering_explorer` reruns real jobs from sliders.

Example::

    >>> import pandas as pd
    >>> rows = pd.DataFrame({
    ...     "cardinality": [1000, 1000, 20, 20], "strategy": ["naive", "buffered"] * 2,
    ...     "run": [0] * 4, "job_records_per_second": [4e4, 8e4, 2e4, 1e6]})
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

from skewlab.engine.config import JobConfig
from skewlab.experiments.buffering import (
    BUFFER_SIDES,
    HEADLINE_MEASURE,
    SEED_SPEEDUP_AT_20_KEYS,
    SIDES,
)
from skewlab.experiments.chapters import SEED_CARDINALITIES
from skewlab.experiments.latency_sweep import latency_sweep
from skewlab.experiments.results import BenchResult, bench_rows, bench_summary
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Naive, run_strategy
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, LABELS, TEMPLATE
from skewlab.viz.text import estimate_text, spread_text, times
from skewlab.viz.titles import latency_title, seed_point, whose_figures

__all__ = [
    "bench_rows",
    "buffering_explorer",
    "describe",
    "describe_latency",
    "format_summary",
    "latency_figure",
    "median_throughput",
    "show_saved_benchmark",
    "speedup_figure",
    "speedup_title",
    "throughput_figure",
]

MAX_COUNTS = (10, 100, 1_000, 10_000, 100_000)
INTERVALS_MS = (10, 20, 50, 100, 200, 500, 1_000)
SIDE_LABELS = LABELS["buffering"]


#: column -> (its y axis's words, its name in a title)
_MEASURE_NAMES = {
    HEADLINE_MEASURE: ("job (per-record cost by slope)", "job throughput"),
    "operator_records_per_second": ("operator", "operator throughput"),
}


def median_throughput(rows, column: str = HEADLINE_MEASURE):
    """Median of ``column`` per (cardinality, strategy), one column per strategy, and each
    buffer's speedup over naive (``speedup``: the vectorized buffer; ``speedup_list``: the
    seed's list buffer). ``rows``: anything :func:`bench_rows` takes; ``column``: the headline
    (job throughput: one over the per-record job cost by slope) by default, or
    ``operator_records_per_second``.

    Example::

        >>> rows = pd.DataFrame({"cardinality": [20, 20], "strategy": ["naive", "buffered"],
        ...                      "operator_records_per_second": [1.0, 45.0]})
        >>> median_throughput(rows, "operator_records_per_second")["speedup"].tolist()
        [45.0]
    """
    table = (
        bench_rows(rows)
        .pivot_table(index="cardinality", columns="strategy", values=column, aggfunc="median")
        .sort_index(ascending=False)
    )
    table.columns.name = None
    for side, suffix in BUFFER_SIDES.items():
        name = f"speedup{suffix}"
        if {"naive", side} <= set(table.columns):
            table[name] = table[side] / table["naive"]
    return table.reset_index()


def throughput_figure(
    result,
    *,
    column: str = HEADLINE_MEASURE,
    title: str | None = None,
    whose: str | None = None,
) -> go.Figure:
    """Seed 000's figure: records/s against the number of distinct tweets, log-log axes.

    Lines through the medians per side; every run as a faint dot. ``result``: see
    :func:`bench_rows`. ``column``: the headline, job throughput by slope (default),
    ``operator_records_per_second`` (time inside the operators) or ``e2e_records_per_second``
    (raw job wall time). The default title states the result: the buffer's speedup at the
    fewest keys measured and at the most, and whose figures they are (``whose``, default: this
    run or the reference, from ``result``; a bare table names none).
    """
    whose = whose or _whose(result)
    rows = bench_rows(result)
    medians = median_throughput(rows, column)
    fig = go.Figure()
    for strategy in [s for s in SIDES if s in medians.columns]:
        runs = rows[rows["strategy"] == strategy]
        color = COLORS.get(strategy)
        dash = {"buffered_list": "dot", "buffered_hotkey": "dash"}.get(strategy, "solid")
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
                line={"color": color, "dash": dash},
                name=f"{SIDE_LABELS.get(strategy, strategy)} (median)",
                hovertemplate="%{x} keys: %{y:,.0f} rec/s<extra></extra>",
            )
        )
    label, measure = _MEASURE_NAMES.get(column, ("job", "job throughput"))
    fig.update_layout(
        title=title or speedup_title(medians, measure, whose),
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": f"{label} records / s", "type": "log"},
        legend={"title": "strategy"},
    )
    return fig


def speedup_title(medians: pd.DataFrame, measure: str, whose: str | None = None) -> str:
    """A title that states the result of :func:`median_throughput`'s table: the buffer's
    speedup at the fewest keys measured and at the most (20 keys first, the seed's point), with
    as many digits as the claims print (two below 10x), and whose figures they are.

    Example::

        >>> medians = pd.DataFrame({"cardinality": [20_000, 20], "speedup": [0.98, 7.7]})
        >>> speedup_title(medians, "job throughput", "this run (quick, this machine)")
        'This run (quick, this machine): buffering 7.70x naive at 20 keys, 0.98x at 20,000 keys (job throughput)'
    """  # noqa: E501
    lead = f"{whose[0].upper()}{whose[1:]}: buffering" if whose else "Buffering:"
    if "speedup" not in medians.columns or not len(medians):
        return f"{lead} naive vs buffered, {measure} vs key cardinality"
    by_k = medians.set_index("cardinality")["speedup"]
    few = seed_point(by_k.index)

    def ratio(value: float) -> str:
        return times(value, ".2f" if value < 10 else ".1f")

    text = f"{lead} {ratio(by_k[few])} naive at {few:,} keys"
    if max(by_k.index) != few:
        text += f", {ratio(by_k[max(by_k.index)])} at {max(by_k.index):,} keys"
    return f"{text} ({measure})"


def speedup_figure(
    result, *, column: str = HEADLINE_MEASURE, title: str | None = None, whose: str | None = None
) -> go.Figure:
    """The median speedup per key cardinality (log x) of each buffer, with the seed's ~45x at
    20 keys; the default title states the speedup measured and whose it is
    (:func:`speedup_title`)."""
    whose = whose or _whose(result)
    medians = median_throughput(bench_rows(result), column)
    fig = go.Figure()
    for name, side, dash in (
        ("speedup", "buffered", "solid"),
        ("speedup_list", "buffered_list", "dot"),
        ("speedup_hotkey", "buffered_hotkey", "dash"),
    ):
        if name in medians.columns:
            fig.add_trace(
                go.Scatter(
                    x=medians["cardinality"],
                    y=medians[name],
                    mode="lines+markers",
                    name=f"{SIDE_LABELS[side]} (median)",
                    line={"color": COLORS["buffered"], "dash": dash},
                    hovertemplate="%{x} keys: %{y:.1f}x<extra></extra>",
                )
            )
    fig.add_trace(
        go.Scatter(
            x=[20],
            y=[SEED_SPEEDUP_AT_20_KEYS],
            mode="markers",
            marker={"symbol": "star", "size": 14, "color": COLORS["seed"]},
            name="seed 000: ~45x at 20 keys (the article's figure)",
        )
    )
    fig.add_hline(y=1, line={"dash": "dot", "color": COLORS["parity"]})
    fig.update_layout(
        title=title or speedup_title(medians, "the seed: ~45x at 20 keys", whose),
        template=TEMPLATE,
        xaxis={"title": "distinct tweets (key cardinality)", "type": "log"},
        yaxis={"title": "speedup (x)", "type": "log"},
    )
    return fig


def _whose(result) -> str | None:
    """Whose figures ``result`` holds, where it says (a table of rows alone does not)."""
    if isinstance(result, pd.DataFrame):
        return None
    return whose_figures(result if isinstance(result, Mapping) else result.to_json_dict())


def latency_figure(sweep: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """p50 and p99 latency of the buffered runs against the trigger interval (log-log axes).

    Dotted guides: half an interval (what a record waits on average for a timer flush) and one
    interval. A ``naive`` row in ``sweep`` (see
    :func:`skewlab.experiments.latency_sweep.latency_sweep`)
    becomes a horizontal line: the per-record latency without a buffer. The default title
    states the result (:func:`skewlab.viz.titles.latency_title`).
    """
    buffered = _sweep_medians(sweep)
    buffered = buffered[buffered["strategy"] == "buffered"].sort_values("trigger_interval_ms")
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
                line={"color": COLORS["guide"], "dash": "dot", "width": 1},
                hoverinfo="skip",
            )
        )
    naive = sweep[sweep["strategy"] == "naive"]
    if len(naive):
        row = naive.iloc[0]
        fig.add_hline(
            y=max(row["latency_p50_ms"], 1e-3),
            line={"color": COLORS["naive"], "dash": "dash"},
            # the line's own label: an annotation's y on a log axis is read as a power of ten
            label={"text": f"naive p50 {row['latency_p50_ms']:.2g} ms", "textposition": "end"},
        )
    rate = sweep["source_rate"].iloc[0] if len(sweep) else None
    fig.update_layout(
        title=title or latency_title(buffered, "records", rate),
        template=TEMPLATE,
        xaxis={"title": "trigger interval (ms)", "type": "log"},
        yaxis={"title": "latency (ms), arrival to emission", "type": "log"},
    )
    return fig


def describe(result) -> str:
    """A sentence of what a result measured at the fewest keys it ran with 20 or more (each
    speedup with its interval), saying whose figures they are, and the seed's figure named as
    the seed's.

    Example::

        >>> summary = {"runs": 5, "by_cardinality": [{"cardinality": 20,
        ...     "speedup_interval": {"value": 30.0, "low": 26.0, "high": 33.0, "runs": 5},
        ...     "operator_speedup_interval": {"value": 60.0, "low": 52.0, "high": 66.0}}]}
        >>> print(describe({"size": "quick", "summary": summary, "rows": []}))
        This run (quick, this machine), medians of 5 rounds: at 20 keys the vectorized buffer's job throughput is 30.0x [26.0..33.0] naive's; inside the operators alone, 60.0x [52.0..66.0]. The article's figure at 20 keys: ~45x.
    """  # noqa: E501
    summary = bench_summary(result)
    rows = [t for t in summary["by_cardinality"] if t["cardinality"] >= 20]
    if not rows:
        return "No cardinality of 20 keys or more was measured."
    t = min(rows, key=lambda row: row["cardinality"])
    names = {"": "the vectorized buffer's", "_list": "the seed's list buffer's",
             "_hotkey": "the hot-key buffer's"}  # fmt: skip
    job = [f"{names[x]} job throughput is {estimate_text(t[f'speedup{x}_interval'])} naive's"
           for x in names if t.get(f"speedup{x}_interval")]  # fmt: skip
    operator = [estimate_text(t[f"operator_speedup{x}_interval"])
                for x in names if t.get(f"operator_speedup{x}_interval")]  # fmt: skip
    whose = whose_figures(result)
    return (
        f"{whose[0].upper()}{whose[1:]}, medians of {summary['runs']} rounds: at "
        f"{t['cardinality']:,} keys {', '.join(job)}; inside the operators alone, "
        f"{' and '.join(operator)}. The article's figure at 20 keys: "
        f"~{SEED_SPEEDUP_AT_20_KEYS:.0f}x."
    )


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench buffering`` prints: the measured table (median [min..max]), each
    speedup with its interval, beside the seed's headline figure.

    Example::

        >>> from skewlab.experiments.buffering import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        this run (tiny, this machine): job throughput (per-record cost by slope) ...
    """
    s = result.summary
    whose = whose_figures(result)
    lines = [
        f"{whose}: job throughput (one over the per-record job cost by slope, N/4 to N "
        f"views), records/s: median [min..max] of {s['runs']} round(s); speedup = buffered / "
        "naive of the medians [bootstrap interval]",
        f"{'keys':>7}  {'naive':>26}"
        + "".join(f"  {SIDE_LABELS[side]:>28}  {'x':>18}" for side in s["sides"][1:]),
    ]
    suffixes = {side: suffix for side, suffix in BUFFER_SIDES.items() if side in s["sides"]}
    for t in s["by_cardinality"]:
        line = f"{t['cardinality']:>7,}  {spread_text(t['naive'], ',.0f'):>26}"
        for side, suffix in suffixes.items():
            line += f"  {spread_text(t[side], ',.0f'):>28}  "
            line += f"{estimate_text(t.get(f'speedup{suffix}_interval')):>18}"
        lines.append(line)
    intervals = s.get("intervals", {})
    seed = s["seed_speedup_at_20_keys"]
    headline = [
        f"{name} {estimate_text(intervals.get(key))}"
        for name, key in (("vectorized", "speedup_at_20_keys"), ("list", "speedup_at_20_keys_list"))
        if s.get(key) is not None
    ]
    operator = [
        f"{name} {estimate_text(intervals.get(key))}"
        for name, key in (("vectorized", "operator_speedup_at_20_keys"),
                          ("list", "operator_speedup_at_20_keys_list"))
        if s.get(key) is not None
    ]  # fmt: skip
    if headline:
        lines.append(
            f"headline at 20 keys: {', '.join(headline)} (the seed's figure: ~{seed:.0f}x); "
            f"operator throughput alone: {', '.join(operator)}"
        )
    elif any(t["cardinality"] == 20 for t in s["by_cardinality"]):
        lines.append(
            "headline at 20 keys: none (a side's job time did not grow from N/4 to N views, "
            f"so it has no throughput to divide: run more views) (the seed's figure: ~{seed:.0f}x)"
        )
    if s.get("min_speedup_over_cardinalities_hotkey") is not None:
        lines.append(
            "worst speedup over naive across the cardinalities: hot keys only "
            f"{estimate_text(intervals.get('min_speedup_over_cardinalities_hotkey'), '.2f')}, "
            f"vectorized {estimate_text(intervals.get('min_speedup_over_cardinalities'), '.2f')}"
        )
    lines.append(f"all digests match the reference: {s['all_digests_match']}")
    return "\n".join(lines)


def _x(value: float | None) -> str:
    """A speedup in the terminal table's column: ``' 45.0x'``, or ``'     -'``."""
    return times(value, "5.1f", "     -")


def _sweep_medians(sweep: pd.DataFrame) -> pd.DataFrame:
    """One row per strategy and trigger interval: the median over the sweep's rounds of its
    latencies and flushes (a sweep of one round: its rows)."""
    columns = [c for c in ("latency_p50_ms", "latency_p99_ms", "buffer_flushes") if c in sweep]
    keys = ["strategy", "trigger_interval_ms"]
    table = sweep.groupby(keys, dropna=False, sort=False)[columns].median().reset_index()
    rates = sweep.groupby(keys, dropna=False, sort=False)["source_rate"].first().reset_index()
    return table.merge(rates, on=keys)


def describe_latency(sweep: pd.DataFrame) -> str:
    """A sentence of what a latency sweep (:func:`~skewlab.experiments.latency_sweep.
    latency_sweep`) measured, medians over its rounds: the naive reduce's median latency, and
    the buffer's median and p99 with its number of flushes at the shortest and the longest
    trigger interval.

    Example::

        >>> sweep = pd.DataFrame({"strategy": ["naive", "buffered", "buffered"],
        ...     "trigger_interval_ms": [float("nan"), 10.0, 500.0], "source_rate": [2000] * 3,
        ...     "latency_p50_ms": [0.2, 5.1, 250.0], "latency_p99_ms": [0.9, 9.8, 495.0],
        ...     "buffer_flushes": [None, 1000, 20]})
        >>> print(describe_latency(sweep))
        This run (a source paced at 2,000 records/s, medians of 1 round): the naive reduce's median latency 0.2 ms; the buffer's median 5.1 ms (p99 9.8 ms, 1,000 flushes) at a 10 ms trigger interval and 250.0 ms (p99 495.0 ms, 20 flushes) at 500 ms.
    """  # noqa: E501
    rounds = int(sweep["run"].nunique()) if "run" in sweep else 1
    table = _sweep_medians(sweep)
    buffered = table[table["strategy"] == "buffered"].sort_values("trigger_interval_ms")
    naive = table[table["strategy"] == "naive"]
    if buffered.empty:
        return "No buffered run in this sweep."
    rate = float(table["source_rate"].iloc[0])

    def at(row) -> str:
        return (
            f"{row.latency_p50_ms:.1f} ms (p99 {row.latency_p99_ms:.1f} ms, "
            f"{row.buffer_flushes:,.0f} flushes)"
        )

    first, last = buffered.iloc[0], buffered.iloc[-1]
    text = (
        f"This run (a source paced at {rate:,.0f} records/s, medians of {rounds} "
        f"round{'s' * (rounds != 1)}): "
    )
    if not naive.empty:
        text += f"the naive reduce's median latency {naive.iloc[0].latency_p50_ms:.1f} ms; "
    text += (
        f"the buffer's median {at(first)} at a {first.trigger_interval_ms:g} ms trigger interval"
    )
    if len(buffered) > 1:
        text += f" and {at(last)} at {last.trigger_interval_ms:g} ms"
    return text + "."


def show_saved_benchmark(saved: Mapping[str, Any] | None) -> go.Figure | None:
    """Show a saved buffering benchmark (the shipped reference, ``load_reference("buffering")``, or
    a result file, ``latest_result("buffering")``), or say there is none.

    Prints the headline figure, shows :func:`throughput_figure` and returns it (``None`` when
    nothing was saved yet).

    Example::

        >>> show_saved_benchmark(None)
        no reference shipped yet: run `skewlab bench buffering --size full --save-reference`
    """
    if saved is None:
        print(
            "no reference shipped yet: run `skewlab bench buffering --size full --save-reference`"
        )
        return None
    summary = saved["summary"]
    # results saved before skewlab measured job throughput carry operator throughput only
    measure = summary.get("headline_measure", "operator_records_per_second")
    at_20 = summary.get("speedup_at_20_keys")
    cards = len(summary.get("by_cardinality", []))
    whose = whose_figures(saved)
    interval = (summary.get("intervals") or {}).get("speedup_at_20_keys")
    print(
        f"{whose[0].upper()}{whose[1:]}: {cards} cardinalities, {summary['runs']} round(s) "
        "each; speedup at 20 keys: "
        + (estimate_text(interval or {"value": at_20}) if at_20 else "not measured")
        + f" in {measure} (the article's figure: ~{SEED_SPEEDUP_AT_20_KEYS:.0f}x); all digests "
        + f"match the reference: {summary.get('all_digests_match')}"
    )
    if saved.get("rows") is None and "rows_left_out" in saved:
        print(f"its rows were left out ({saved['rows_left_out']} of JSON): no chart")
        return None
    rows = bench_rows(saved)
    medians = median_throughput(rows, measure)
    title = speedup_title(medians, measure.replace("_", " "), whose)
    fig = throughput_figure(rows, column=measure, title=title)
    fig.show()
    return fig


def _select(description: str, options: Sequence, value) -> widgets.SelectionSlider:
    return widgets.SelectionSlider(
        options=list(options),
        value=value,
        description=description,
        continuous_update=False,
        style=WIDGET_STYLE,
        layout={"width": "32rem"},
    )


def buffering_explorer(
    spark,
    *,
    n_views: int,
    n_users: int,
    cardinality: int = 20,
    max_count: int = Buffered().max_count,
    trigger_interval_ms: int = int(Buffered().trigger_interval_ms),
    source_rate: float = 5_000,
    paced_views: int = 5_000,
    parallelism: int | None = None,
    seed: int = 1,
) -> Explorer:
    """Sliders for key cardinality, ``max_count`` and the trigger interval; *Run* measures.

    One click generates ``n_views`` views over ``cardinality`` tweets and runs naive (RocksDB)
    and buffered as fast as possible (job throughput, one run each: a glimpse, not the
    benchmark), then buffered again over ``paced_views`` views at ``source_rate`` records/s
    (latency: meaningful only with a paced source).

    Example::

        >>> explorer = buffering_explorer(spark, n_views=20_000, n_users=5_000)  # doctest: +SKIP
        >>> explorer.update(cardinality=100).figures[0].layout.title.text       # doctest: +SKIP
    """

    def draw(cardinality: int, max_count: int, trigger_interval_ms: int) -> list:
        views = generate_views(spark, ViewSpec(n_views, n_users, cardinality, seed=seed)).cache()
        rows = []
        job = JobConfig(parallelism=parallelism, disk_profile=None)
        buffered = Buffered(max_count=max_count, trigger_interval_ms=trigger_interval_ms)
        try:
            for name, strategy in (("naive", Naive()), ("buffered", buffered)):
                result, _ = run_strategy(views, strategy, job, spark)
                rows.append(
                    {
                        "cardinality": cardinality,
                        "strategy": name,
                        "run": 0,
                        "e2e_records_per_second": result.e2e_records_per_second,
                    }
                )
        finally:
            views.unpersist()
        paced = generate_views(
            spark, ViewSpec(paced_views, n_users, min(cardinality, paced_views), seed=seed)
        )
        sweep = latency_sweep(
            paced,
            source_rate=source_rate,
            trigger_intervals=(trigger_interval_ms,),
            max_count=max_count,
            parallelism=parallelism,
            baseline=True,
        )
        speedup = rows[1]["e2e_records_per_second"] / rows[0]["e2e_records_per_second"]
        fig = throughput_figure(
            pd.DataFrame(rows),
            column="e2e_records_per_second",
            title=f"{cardinality:,} tweets: buffered's job throughput is {speedup:.1f}x naive's",
        )
        columns = ["strategy", "trigger_interval_ms", "max_count", "buffer_flushes",
                   "latency_p50_ms", "latency_p99_ms"]  # fmt: skip
        return [fig, latency_figure(sweep), sweep[columns]]

    controls = {
        "cardinality": _select("distinct tweets", SEED_CARDINALITIES, cardinality),
        "max_count": _select("max_count", MAX_COUNTS, max_count),
        "trigger_interval_ms": _select("trigger interval (ms)", INTERVALS_MS, trigger_interval_ms),
    }
    return Explorer(controls, draw, run_button=True).start()
