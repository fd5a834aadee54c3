"""Notebook 07, the outage backlog (seed 002): catch-up time and capacity against parallelism,
measured points filled (with the interval of their rounds), simulated ones open; the measured
figures as a table and in sentences, what ``skewlab bench backlog`` prints; sliders for the
outage, the rate, the skew and the strategy. Every title, caption and printed block says whose
figures it shows (:func:`~skewlab.viz.titles.whose_figures`) and which of them are simulated.

Example::

    >>> from skewlab.experiments.backlog import EXAMPLE_INPUTS, catch_up_curve
    >>> curve = catch_up_curve(EXAMPLE_INPUTS, outage_hours=4, rate=700, normal_parallelism=2)
    >>> [t.name for t in catch_up_figure(curve).data]
    ['example (simulated)']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import ipywidgets as widgets
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from skewlab.experiments.backlog import (
    CURVES,
    MeasuredInputs,
    catch_up_curve,
    curve_key,
    max_subtask_share,
    zipf_shares,
)
from skewlab.experiments.intervals import Estimate
from skewlab.experiments.results import BenchResult
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, CURVE_COLORS, TEMPLATE
from skewlab.viz.text import estimate_text, percent
from skewlab.viz.titles import whose_figures

__all__ = [
    "backlog_explorer",
    "capacity_figure",
    "caption",
    "catch_up_figure",
    "describe",
    "format_summary",
    "measured_table",
    "missing_dots",
]


def _error_bars(measured: pd.DataFrame, column: str, y: pd.Series) -> dict | None:
    """The rounds' interval of the measured dots as asymmetric error bars (``None``: none)."""
    low, high = f"measured_{column}_low", f"measured_{column}_high"
    if low not in measured or high not in measured:
        return None
    lows = pd.to_numeric(measured[low], errors="coerce")
    highs = pd.to_numeric(measured[high], errors="coerce")
    if not (np.isfinite(lows) & np.isfinite(highs)).any():
        return None
    return {
        "type": "data",
        "symmetric": False,
        "array": (highs - y).clip(lower=0).fillna(0).tolist(),
        "arrayminus": (y - lows).clip(lower=0).fillna(0).tolist(),
    }


def _traces(curves: pd.DataFrame, column: str, unit: str) -> list[go.Scatter]:
    traces = []
    for label, group in curves.groupby("curve", sort=False):
        color = CURVE_COLORS.get(label, COLORS["unlisted"])
        finite = group[np.isfinite(group[column])]
        traces.append(
            go.Scatter(
                x=finite["parallelism"],
                y=finite[column],
                mode="lines+markers",
                name=f"{label} (simulated)",
                line={"color": color},
                marker={"symbol": "circle-open", "size": 8},
                hovertemplate=f"P=%{{x}}: %{{y:,.3g}} {unit}<extra>{label}</extra>",
            )
        )
        # the dots are the measured figures themselves, never the simulation at a measured P
        measured = group[group["source"] == "measured"]
        if f"measured_{column}" in measured:
            y = pd.to_numeric(measured[f"measured_{column}"], errors="coerce")
            measured, y = measured[np.isfinite(y)], y[np.isfinite(y)]
        else:  # a result from before the measured figures had their own column
            measured, y = measured[:0], pd.Series(dtype=float)
        if len(measured):
            traces.append(
                go.Scatter(
                    x=measured["parallelism"],
                    y=y,
                    mode="markers",
                    name=f"{label} (measured here)"
                    if column == "capacity"
                    else f"{label} (from the capacity measured here)",
                    marker={"color": color, "size": 11, "symbol": "circle"},
                    error_y=_error_bars(measured, column, y),
                    hovertemplate=f"P=%{{x}}: %{{y:,.3g}} {unit} measured<extra>{label}</extra>",
                )
            )
    return traces


def _lead(whose: str | None) -> str:
    """A title's first words: whose measured rates the simulated lines start from."""
    if not whose:
        return "Simulated lines, measured dots"
    return f"{whose[0].upper()}{whose[1:]}: simulated lines from its measured rates, measured dots"


def _fastest(curves: pd.DataFrame, whose: str | None = None) -> str:
    """Each curve's fastest simulated catch-up and the parallelism that gives it."""
    parts = []
    for label, group in curves.groupby("curve", sort=False):
        finite = group[np.isfinite(group["catch_up_hours"])]
        if not len(finite):
            parts.append(f"{label} never")
            continue
        best = finite.loc[finite["catch_up_hours"].idxmin()]
        parts.append(f"{label} {best['catch_up_hours']:.2f} h at P={int(best['parallelism'])}")
    return f"{_lead(whose)}<br>fastest simulated catch-up: " + "; ".join(parts)


def _ceiling(curves: pd.DataFrame, whose: str | None = None) -> str:
    """Each curve's highest simulated capacity and the smallest parallelism within 1% of it."""
    parts = []
    for label, group in curves.groupby("curve", sort=False):
        top = group["capacity"].max()
        first = group[group["capacity"] >= 0.99 * top]["parallelism"].min()
        parts.append(f"{label} {top:,.0f} records/s from P={int(first)}")
    return f"{_lead(whose)}<br>highest simulated capacity: " + "; ".join(parts)


def missing_dots(curves: pd.DataFrame) -> str:
    """Which measured points the catch-up chart has no dot for, and why: a capacity measured
    not above the input rate gives no catch-up time (``""``: every measured point has its dot).

    Example::

        >>> curves = pd.DataFrame({"curve": ["Zipf, naive"] * 2, "parallelism": [1, 2],
        ...     "source": ["measured"] * 2, "measured_catch_up_hours": [float("inf"), 3.5]})
        >>> missing_dots(curves)
        'No measured dot for Zipf, naive at P=1: its measured capacity is not above the input rate, so it never catches up.'
    """  # noqa: E501
    if "measured_catch_up_hours" not in curves:
        return ""
    measured = curves[curves["source"] == "measured"]
    hours = pd.to_numeric(measured["measured_catch_up_hours"], errors="coerce")
    absent = measured[~np.isfinite(hours)]
    if absent.empty:
        return ""
    parts = [
        f"{label} at P={', '.join(str(int(p)) for p in group['parallelism'])}"
        for label, group in absent.groupby("curve", sort=False)
    ]
    return (
        f"No measured dot for {'; '.join(parts)}: its measured capacity is not above the input "
        "rate, so it never catches up."
    )


def catch_up_figure(
    curves: pd.DataFrame, *, title: str | None = None, whose: str | None = None
) -> go.Figure:
    """Catch-up time (hours, log) against parallelism (log), one line per curve; a curve that
    never catches up at some parallelism leaves that point out, and a note under the chart
    names the measured points left out (:func:`missing_dots`). The default title states each
    curve's fastest simulated catch-up and whose measured rates the lines start from
    (``whose``: :func:`~skewlab.viz.titles.whose_figures`)."""
    fig = go.Figure(_traces(curves, "catch_up_hours", "h"))
    fig.update_layout(
        title=title or _fastest(curves, whose),
        template=TEMPLATE,
        xaxis={"title": "parallelism after the restore", "type": "log"},
        yaxis={"title": "hours until caught up and scaled back", "type": "log"},
    )
    note = missing_dots(curves)
    if note:
        fig.add_annotation(
            text=note, xref="paper", yref="paper", x=0, y=-0.22, showarrow=False,
            xanchor="left", align="left", font={"size": 11},
        )  # fmt: skip
        fig.update_layout(margin={"b": 110})
    return fig


def capacity_figure(
    curves: pd.DataFrame,
    *,
    rate: float | None = None,
    title: str | None = None,
    whose: str | None = None,
) -> go.Figure:
    """Records/s the job can take at each parallelism (simulated line, measured dots with the
    interval of their rounds); with ``rate``, the input rate as a horizontal line. The default
    title states each curve's highest simulated capacity and whose measured rates the lines
    start from."""
    fig = go.Figure(_traces(curves, "capacity", "records/s"))
    if rate is not None:
        # the line's own label: an annotation's y on a log axis is read as a power of ten
        fig.add_hline(y=rate, line_dash="dot", label={"text": "input rate", "textposition": "end"})
    fig.update_layout(
        title=title or _ceiling(curves, whose),
        template=TEMPLATE,
        xaxis={"title": "parallelism", "type": "log"},
        yaxis={"title": "records/s", "type": "log"},
    )
    return fig


def _interval(summary: dict, key: str, measured: dict | None = None) -> Estimate | None:
    """Figure ``key`` of a summary with its interval; a measured rate of a summary that has no
    such key (from before the rounds) read from its curve's ``measured`` row."""
    stored = (summary.get("intervals") or {}).get(key)
    if stored is not None:
        return Estimate.from_json(stored)
    value = summary.get(key)
    if value is None and measured is not None:
        if key.endswith("per_subtask_rate"):
            value = measured.get("per_subtask_rate")
        elif key.endswith("capacity_at_2"):
            value = measured.get("measured_capacity", {}).get("2")
    return None if value is None else Estimate(float(value), runs=summary.get("runs") or 1)


def _rounds(summary: dict) -> str:
    runs = summary.get("runs") or 1
    return f"median{'s' * (runs != 1)} of {runs} round{'s' * (runs != 1)}"


def caption(result, what: str) -> str:
    """A table's caption: whose figures, and what they are.

    Example::

        >>> caption({"size": "quick", "summary": {"runs": 3}}, "measured on real runs")
        'this run (quick, this machine): measured on real runs, medians of 3 rounds'
    """
    data = result if isinstance(result, dict) else result.to_json_dict()
    return f"{whose_figures(data)}: {what}, {_rounds(data.get('summary', {}))}"


def measured_table(result: BenchResult) -> pd.DataFrame:
    """The figures measured on real runs, one row per curve: medians of the rounds and, as
    text, the interval of each rate and of the simulated over the measured capacity at P=2
    (the simulation's check); its caption (whose figures) is the columns' name.

    Example::

        >>> from skewlab.experiments.backlog import run_experiment
        >>> measured_table(run_experiment("tiny", progress=False)).index.tolist()  # doctest: +SKIP
        ['uniform, naive', 'Zipf, naive', 'Zipf, buffered']
    """
    data = result if isinstance(result, dict) else result.to_json_dict()
    s = data["summary"]
    rows = []
    for m in s["measured"]:
        key = curve_key(m["label"])
        capacity = m["measured_capacity"]
        rows.append(
            {
                "curve": m["label"],
                "per_subtask_rate": m["per_subtask_rate"],
                "per_subtask_rate [interval]": estimate_text(
                    _interval(s, f"{key}_per_subtask_rate", m), ",.0f", ""
                ),
                "capacity_at_2": capacity.get("2"),
                "capacity_at_2 [interval]": estimate_text(
                    _interval(s, f"{key}_capacity_at_2", m), ",.0f", ""
                ),
                "simulated / measured at 2": estimate_text(
                    _interval(s, f"{key}_simulated_over_measured_at_2"), ".2f"
                ),
                "hottest_key_share": m["hottest_key_share"],
                "keys": m["keys"],
                "state_bytes_per_key": m["state_bytes_per_key"],
                "snapshot_us_per_kib": m["snapshot_seconds_per_byte"] * 1024e6,
                "restore_us_per_kib": m["restore_seconds_per_byte"] * 1024e6,
                "task_startup_seconds": m["task_startup_seconds"],
            }
        )
    table = pd.DataFrame(rows).set_index("curve")
    table.columns.name = caption(data, "measured on real runs")
    return table


def _simulated(summary: dict, label: str) -> tuple[int | None, float | None, float]:
    """A curve's best parallelism (``None``: it never catches up), its catch-up hours there,
    and its capacity ceiling, from a summary."""
    key = curve_key(label)
    return (
        summary[f"{key}_best_parallelism"],
        summary[f"{key}_best_hours"],
        summary[f"{key}_capacity_ceiling"],
    )


def describe(result: BenchResult) -> str:
    """The run's own figures, in sentences (what the notebook states): whose they are, which
    were measured and which simulated, each with the interval of its rounds.

    Example::

        >>> from skewlab.experiments.backlog import run_experiment
        >>> print(describe(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        This run (tiny, this machine), medians of 2 rounds: the input arrives at 1,234 ...
    """
    data = result if isinstance(result, dict) else result.to_json_dict()
    s = data["summary"]
    whose = whose_figures(data)
    measured = {m["label"]: m for m in s["measured"]}
    parts = [
        f"{whose[0].upper()}{whose[1:]}, {_rounds(s)}: the input arrives at "
        f"{s['rate_records_per_second']:,.0f} records/s and the outage lasted "
        f"{s['outage_hours']:g} h: a backlog of "
        f"{s['rate_records_per_second'] * s['outage_hours'] * 3600:,.0f} records."
    ]
    for label, _, _ in CURVES:
        m = measured[label]
        key = curve_key(label)
        best, _, _ = _simulated(s, label)
        rate = estimate_text(_interval(s, f"{key}_per_subtask_rate", m), ",.0f", "")
        at_2 = estimate_text(_interval(s, f"{key}_capacity_at_2", m), ",.0f", "")
        ceiling = estimate_text(_interval(s, f"{key}_capacity_ceiling"), ",.0f", "")
        hours = estimate_text(_interval(s, f"{key}_best_hours"), ".2f", " h")
        outcome = (
            "never catches up"
            if best is None
            else f"catches up fastest at parallelism {best} ({hours})"
        )
        parts.append(
            f"{label}: measured, one subtask {rate} records/s at P=1 and {at_2} records/s "
            f"for the job at P=2; the hottest key holds {percent(m['hottest_key_share'])} of "
            f"the records; simulated, the capacity tops out at {ceiling} records/s and the "
            f"job {outcome}."
        )
    startup = s["measured"][0]["task_startup_seconds"]
    parts.append(f"Spark started each extra task in {startup:.3f} s (measured).")
    return " ".join(parts)


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench backlog`` prints: whose figures, the measured inputs with their
    intervals and each curve's simulated best parallelism.

    Example::

        >>> from skewlab.experiments.backlog import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        this run (tiny, this machine): outage 4 h at 1,234 records/s; normal parallelism 2
        ...
    """
    data = result if isinstance(result, dict) else result.to_json_dict()
    s = data["summary"]
    lines = [
        f"{whose_figures(data)}: outage {s['outage_hours']:g} h at "
        f"{s['rate_records_per_second']:,.0f} records/s; normal parallelism "
        f"{s['normal_parallelism']}",
        f"measured (real runs, {_rounds(s)} [bootstrap interval]):",
    ]
    for m in s["measured"]:
        key = curve_key(m["label"])
        lines.append(
            f"  {m['label']:<16} per-subtask "
            f"{estimate_text(_interval(s, f'{key}_per_subtask_rate', m), ',.0f', '')} rec/s, "
            f"at P=2 {estimate_text(_interval(s, f'{key}_capacity_at_2', m), ',.0f', '')} "
            "rec/s, "
            f"hottest key {m['hottest_key_share']:.1%} of records"
        )
    lines.append("simulated (from the measured figures, once per round):")
    for label, _, _ in CURVES:
        key = curve_key(label)
        best, _, _ = _simulated(s, label)
        hours = estimate_text(_interval(s, f"{key}_best_hours"), ".2f", " h")
        text = "never catches up" if best is None else f"best at {best}: {hours}"
        ceiling = estimate_text(_interval(s, f"{key}_capacity_ceiling"), ",.0f", "")
        check = estimate_text(_interval(s, f"{key}_simulated_over_measured_at_2"), ".2f")
        lines.append(
            f"  {label:<16} {text}; capacity ceiling {ceiling} rec/s; simulated / measured "
            f"at P=2 {check}"
        )
    return "\n".join(lines)


def backlog_explorer(
    inputs: Sequence[MeasuredInputs],
    *,
    outage_hours: float = 4.0,
    rate: float = 10_000.0,
    normal_parallelism: int = 2,
    whose: str = "the measured rates",
) -> Explorer:
    """Sliders for the outage's length, the input rate, the key skew, the strategy and the cost
    of starting a subtask (the measured one to begin with): each change recomputes the catch-up
    curve from the measured inputs (no Spark). The skew slider re-draws the keys' shares from the
    Zipf law (the per-subtask rate stays the measured one). Its titles say the curves are
    simulated, from ``whose`` rates (e.g. :func:`~skewlab.viz.titles.whose_figures`)."""
    by_strategy = {}
    for i in inputs:
        by_strategy.setdefault(i.strategy, i)
    hours = widgets.FloatSlider(
        value=outage_hours,
        min=0.5,
        max=24,
        step=0.5,
        description="outage (h)",
        continuous_update=False,
        style=WIDGET_STYLE,
    )
    records = widgets.FloatLogSlider(
        value=rate,
        base=10,
        min=2,
        max=7,
        step=0.1,
        description="rate (records/s)",
        continuous_update=False,
        style=WIDGET_STYLE,
    )
    skew = widgets.FloatSlider(
        value=1.1,
        min=0.0,
        max=2.0,
        step=0.1,
        description="Zipf skew (0: uniform)",
        continuous_update=False,
        style=WIDGET_STYLE,
    )
    strategy = widgets.Dropdown(
        options=list(by_strategy), description="strategy", style=WIDGET_STYLE
    )
    measured_startup = max(next(iter(by_strategy.values())).task_startup_seconds, 1e-3)
    startup = widgets.FloatLogSlider(
        value=measured_startup,
        base=10,
        min=-3,
        max=2,
        step=0.25,
        description="start-up per subtask (s)",
        continuous_update=False,
        style=WIDGET_STYLE,
    )

    def draw(
        outage_hours: float, rate: float, skew: float, strategy: str, startup_seconds: float
    ) -> list:
        base = replace(by_strategy[strategy], task_startup_seconds=startup_seconds)
        n_keys = len(base.key_shares)
        shares = (
            {k: 1 / n_keys for k in zipf_shares(n_keys, 1.0)}
            if skew == 0
            else zipf_shares(n_keys, skew)
        )
        curve = catch_up_curve(
            base,
            outage_hours=outage_hours,
            rate=rate,
            normal_parallelism=normal_parallelism,
            key_shares=shares,
        )
        curve["curve"] = f"{strategy}, skew {skew:g}"
        hottest = max(shares.values())
        ceiling = base.per_subtask_rate / hottest
        best = curve.loc[curve["catch_up_hours"].idxmin()]
        lead = f"Simulated at the sliders' settings from {whose}"
        if math.isinf(best["catch_up_hours"]):
            text = f"{lead}: never catches up at any parallelism (the rate is above every capacity)"
        else:
            text = (
                f"{lead}: best at P={int(best['parallelism'])}, {best['catch_up_hours']:.2f} h; "
                f"the hottest key ({hottest:.1%}) caps the job at {ceiling:,.0f} records/s"
            )
        normal_p = normal_parallelism
        share = max_subtask_share(shares, normal_p, base.max_parallelism)
        normal = base.per_subtask_rate / share
        capacity = capacity_figure(
            curve,
            rate=rate,
            title=f"{lead}: capacity {normal:,.0f} records/s at the normal P={normal_p}",
        )
        return [catch_up_figure(curve, title=text), capacity]

    controls = {
        "outage_hours": hours,
        "rate": records,
        "skew": skew,
        "strategy": strategy,
        "startup_seconds": startup,
    }
    return Explorer(controls, draw).start()
