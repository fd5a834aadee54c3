"""Notebook 07, the outage backlog (seed 002): catch-up time and capacity against parallelism,
measured points filled, simulated ones open; the measured figures as a table and in sentences,
what ``skewlab bench backlog`` prints; sliders for the outage, the rate, the skew and the
strategy.

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
from skewlab.experiments.results import BenchResult
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, CURVE_COLORS, TEMPLATE
from skewlab.viz.text import percent

__all__ = [
    "backlog_explorer",
    "capacity_figure",
    "catch_up_figure",
    "describe",
    "format_summary",
    "measured_table",
]


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
            measured = measured[:0]
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
                    hovertemplate=f"P=%{{x}}: %{{y:,.3g}} {unit} measured<extra>{label}</extra>",
                )
            )
    return traces


def _fastest(curves: pd.DataFrame) -> str:
    """Each curve's fastest catch-up and the parallelism that gives it."""
    parts = []
    for label, group in curves.groupby("curve", sort=False):
        finite = group[np.isfinite(group["catch_up_hours"])]
        if not len(finite):
            parts.append(f"{label} never")
            continue
        best = finite.loc[finite["catch_up_hours"].idxmin()]
        parts.append(f"{label} {best['catch_up_hours']:.2f} h at P={int(best['parallelism'])}")
    return "Fastest catch-up after the outage<br>" + "; ".join(parts)


def _ceiling(curves: pd.DataFrame) -> str:
    """Each curve's highest capacity and the smallest parallelism within 1% of it."""
    parts = []
    for label, group in curves.groupby("curve", sort=False):
        top = group["capacity"].max()
        first = group[group["capacity"] >= 0.99 * top]["parallelism"].min()
        parts.append(f"{label} {top:,.0f} records/s from P={int(first)}")
    return "Capacity levels off where the busiest subtask is full<br>" + "; ".join(parts)


def catch_up_figure(curves: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Catch-up time (hours, log) against parallelism (log), one line per curve; a curve that
    never catches up at some parallelism leaves that point out. The default title states each
    curve's fastest catch-up."""
    fig = go.Figure(_traces(curves, "catch_up_hours", "h"))
    fig.update_layout(
        title=title or _fastest(curves),
        template=TEMPLATE,
        xaxis={"title": "parallelism after the restore", "type": "log"},
        yaxis={"title": "hours until caught up and scaled back", "type": "log"},
    )
    return fig


def capacity_figure(
    curves: pd.DataFrame,
    *,
    rate: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """Records/s the job can take at each parallelism (simulated line, measured dots); with
    ``rate``, the input rate as a horizontal line. The default title states where each curve's
    capacity levels off (the busiest subtask decides)."""
    fig = go.Figure(_traces(curves, "capacity", "records/s"))
    if rate is not None:
        fig.add_hline(y=rate, line_dash="dot", annotation_text="input rate")
    fig.update_layout(
        title=title or _ceiling(curves),
        template=TEMPLATE,
        xaxis={"title": "parallelism", "type": "log"},
        yaxis={"title": "records/s", "type": "log"},
    )
    return fig


def measured_table(result: BenchResult) -> pd.DataFrame:
    """The figures measured on real runs, one row per curve.

    Example::

        >>> from skewlab.experiments.backlog import run_experiment
        >>> measured_table(run_experiment("tiny", progress=False)).index.tolist()  # doctest: +SKIP
        ['uniform, naive', 'Zipf, naive', 'Zipf, buffered']
    """
    rows = []
    for m in result.summary["measured"]:
        capacity = m["measured_capacity"]
        rows.append(
            {
                "curve": m["label"],
                "per_subtask_rate": m["per_subtask_rate"],
                "capacity_at_1": capacity.get("1"),
                "capacity_at_2": capacity.get("2"),
                "hottest_key_share": m["hottest_key_share"],
                "keys": m["keys"],
                "state_bytes_per_key": m["state_bytes_per_key"],
                "snapshot_us_per_kib": m["snapshot_seconds_per_byte"] * 1024e6,
                "restore_us_per_kib": m["restore_seconds_per_byte"] * 1024e6,
                "task_startup_seconds": m["task_startup_seconds"],
            }
        )
    return pd.DataFrame(rows).set_index("curve")


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
    """The run's own figures, in sentences (what the notebook states).

    Example::

        >>> from skewlab.experiments.backlog import run_experiment
        >>> print(describe(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        The input arrives at 1,234 records/s and the outage lasted 4 h: a backlog of ...
    """
    s = result.summary
    measured = {m["label"]: m for m in s["measured"]}
    parts = [
        f"The input arrives at {s['rate_records_per_second']:,.0f} records/s and the outage "
        f"lasted {s['outage_hours']:g} h: a backlog of "
        f"{s['rate_records_per_second'] * s['outage_hours'] * 3600:,.0f} records."
    ]
    for label, _, _ in CURVES:
        m = measured[label]
        best, hours, ceiling = _simulated(s, label)
        outcome = (
            "never catches up"
            if best is None
            else f"catches up fastest at parallelism {best} ({hours:.2f} h)"
        )
        parts.append(
            f"{label}: one subtask measured {m['per_subtask_rate']:,.0f} records/s, the hottest "
            f"key holds {percent(m['hottest_key_share'])} of the records, the simulated capacity "
            f"tops out at {ceiling:,.0f} records/s, and the job {outcome}."
        )
    startup = s["measured"][0]["task_startup_seconds"]
    parts.append(f"Spark started each extra task in {startup:.3f} s here (measured).")
    return " ".join(parts)


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench backlog`` prints: the measured inputs and each curve's best
    parallelism.

    Example::

        >>> from skewlab.experiments.backlog import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        outage 4 h at 1,234 records/s; normal parallelism 2
        ...
    """
    s = result.summary
    lines = [
        f"outage {s['outage_hours']:g} h at {s['rate_records_per_second']:,.0f} records/s; "
        f"normal parallelism {s['normal_parallelism']}",
        "measured (this machine, real runs):",
    ]
    for m in s["measured"]:
        lines.append(
            f"  {m['label']:<16} per-subtask {m['per_subtask_rate']:,.0f} rec/s, "
            f"hottest key {m['hottest_key_share']:.1%} of records"
        )
    lines.append("simulated (from the measured figures):")
    for label, _, _ in CURVES:
        best, hours, ceiling = _simulated(s, label)
        text = "never catches up" if best is None else f"best at {best}: {hours:.2f} h"
        lines.append(f"  {label:<16} {text}; capacity ceiling {ceiling:,.0f} rec/s")
    return "\n".join(lines)


def backlog_explorer(
    inputs: Sequence[MeasuredInputs],
    *,
    outage_hours: float = 4.0,
    rate: float = 10_000.0,
    normal_parallelism: int = 2,
) -> Explorer:
    """Sliders for the outage's length, the input rate, the key skew, the strategy and the cost
    of starting a subtask (the measured one to begin with): each change recomputes the catch-up
    curve from the measured inputs (no Spark). The skew slider re-draws the keys' shares from the
    Zipf law (the per-subtask rate stays the measured one)."""
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
        if math.isinf(best["catch_up_hours"]):
            text = "never catches up at any parallelism: the rate is above every capacity"
        else:
            text = (
                f"best at P={int(best['parallelism'])}: {best['catch_up_hours']:.2f} h; the "
                f"hottest key ({hottest:.1%}) caps the job at {ceiling:,.0f} records/s"
            )
        share = max_subtask_share(shares, normal_parallelism, base.max_parallelism)
        normal = base.per_subtask_rate / share
        capacity = capacity_figure(
            curve,
            rate=rate,
            title=f"Capacity (normal: {normal:,.0f} records/s at P={normal_parallelism})",
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
