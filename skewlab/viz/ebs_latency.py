"""Notebook 01, the EBS latency math (seed 000): charts and tables of the storage latency model.

Every function returns a plotly figure, a pandas DataFrame or an ipywidgets widget; notebooks
only call these and show the result.

Example::

    >>> from skewlab.iomodel.profiles import load_disk_profile
    >>> fig = bucket_histogram_figure(load_disk_profile("ebs-article"))
    >>> [trace.name for trace in fig.data]
    ['read', 'write']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.model import (
    DEFAULT_BUFFER_SIZE,
    DEFAULT_HIT_RATIO,
    DEFAULT_RUN_LENGTH,
    DEFAULT_SAMPLES,
    MODELLED_STRATEGIES,
    naive_pattern,
    per_key_ceiling,
    per_key_ceiling_from_means,
    state_time_distribution,
    strategy_patterns,
)
from skewlab.iomodel.profiles import FIO_BUCKET_UPPER_US, DiskProfile, bucket_label
from skewlab.viz.palette import COLORS, DIRECTION_COLORS, TEMPLATE

__all__ = [
    "arithmetic_steps",
    "bucket_histogram_figure",
    "ceiling_curve",
    "ceiling_curve_figure",
    "ceiling_explorer",
    "ceiling_figure",
    "profiles_ceiling_figure",
    "profiles_table",
    "state_time_table",
]


def arithmetic_steps(profile: DiskProfile) -> pd.DataFrame:
    """Seed 000's arithmetic for ``profile``, one row per step (quantity, value, unit).

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> steps = arithmetic_steps(load_disk_profile("ebs-article"))
        >>> round(float(steps.set_index("quantity").loc["records per key per second", "value"]), 1)
        72.1
    """
    read_ms = profile.read.mean_us / 1000.0
    write_ms = profile.write.mean_us / 1000.0
    total_ms = read_ms + write_ms
    rows = [
        ("mean read latency (fio lat avg)", read_ms, "ms"),
        ("mean write latency (fio lat avg)", write_ms, "ms"),
        ("one read + one write per record", total_ms, "ms"),
        ("records per key per second", 1000.0 / total_ms, "records/s"),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value", "unit"])


def bucket_histogram_figure(
    profile: DiskProfile, direction: str | None = None, log_y: bool = False
) -> go.Figure:
    """fio's latency histogram of ``profile`` as bars, read and write side by side (or one
    ``direction``), on fio's bucket labels from the first to the last non-empty bucket.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> fig = bucket_histogram_figure(load_disk_profile("ebs-article"), "write")
        >>> fig.data[0].x[4], fig.data[0].y[4]
        ('4ms', 87.85)
    """
    directions = ["read", "write"] if direction is None else [direction]
    for name in directions:
        if name not in ("read", "write"):
            raise SkewlabInputError(f"direction must be 'read' or 'write', got {name!r}")
    dists = {name: getattr(profile, name) for name in directions}
    used = [u for d in dists.values() for u, _ in d.buckets]
    fig = go.Figure()
    if used:
        uppers = [u for u in FIO_BUCKET_UPPER_US if min(used) <= u <= max(used)]
        labels = [bucket_label(u) for u in uppers]
        for name, dist in dists.items():
            percent = dict(dist.buckets)
            fig.add_bar(
                name=name,
                x=labels,
                y=[percent.get(u, 0.0) for u in uppers],
                marker_color=DIRECTION_COLORS[name],
                hovertemplate="%{x}: %{y:.2f}%<extra>" + name + "</extra>",
            )
    fig.update_layout(
        title=f"{profile.name}: latency histogram in fio's buckets ({profile.block_size} B)",
        xaxis_title="bucket (upper bound; a bucket holds I/Os from the previous bound up to it)",
        yaxis_title="% of I/Os",
        barmode="group",
        template=TEMPLATE,
    )
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def state_time_table(
    profile: DiskProfile,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
    samples: int = DEFAULT_SAMPLES,
) -> pd.DataFrame:
    """Per strategy: disk reads and writes per record, the per-key ceiling, and the per-record
    state time (us) from the means and, by Monte Carlo over the buckets, its mean, p50 and p99.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> t = state_time_table(load_disk_profile("ebs-article"), samples=1000)
        >>> float(t.loc["naive", "mean from means (us)"])
        13868.73
    """
    rows = {}
    for name, pattern in strategy_patterns(buffer_size, hit_ratio, run_length).items():
        dist = state_time_distribution(profile, pattern, samples=samples)
        rows[name] = {
            "access pattern": pattern.label,
            "reads/record": pattern.reads_per_record,
            "writes/record": pattern.writes_per_record,
            "records/key/s": per_key_ceiling(profile, pattern),
            "mean from means (us)": dist.mean_us,
            "sampled mean (us)": dist.sampled_mean_us,
            "p50 (us)": dist.p50_us,
            "p99 (us)": dist.p99_us,
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _ceilings(
    read_us: float, write_us: float, buffer_size: int, hit_ratio: float, run_length: int
) -> tuple[list[str], list[float]]:
    patterns = strategy_patterns(buffer_size, hit_ratio, run_length)
    labels = [p.label for p in patterns.values()]
    values = [per_key_ceiling_from_means(read_us, write_us, p) for p in patterns.values()]
    return labels, values


def _bar_values(values: Sequence[float]) -> tuple[list[float | None], list[str]]:
    ys = [None if math.isinf(v) else v for v in values]
    texts = ["unbounded (no disk access)" if math.isinf(v) else f"{v:,.0f}" for v in values]
    return ys, texts


def ceiling_figure(
    read_us: float,
    write_us: float,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
    title: str | None = None,
) -> go.Figure:
    """Per-key ceiling (records per key per second) of each strategy for mean latencies, as bars
    on a log axis.

    Example::

        >>> fig = ceiling_figure(6161.17, 7707.56)
        >>> round(fig.data[0].y[0], 1)
        72.1
    """
    labels, values = _ceilings(read_us, write_us, buffer_size, hit_ratio, run_length)
    ys, texts = _bar_values(values)
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=ys,
            text=texts,
            textposition="outside",
            marker_color=[COLORS[s] for s in MODELLED_STRATEGIES],
            hovertemplate="%{x}: %{y:,.1f} records/key/s<extra></extra>",
        )
    )
    fig.update_layout(
        title=title
        or f"Per-key ceiling at read {read_us:,.0f} us, write {write_us:,.0f} us (mean latencies)",
        yaxis_title="records per key per second (log)",
        yaxis_type="log",
        template=TEMPLATE,
        showlegend=False,
    )
    return fig


def ceiling_explorer(
    profile: DiskProfile,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
) -> Any:
    """Sliders (read latency, write latency, buffer size per key, cache hit ratio, run length)
    redrawing :func:`ceiling_figure` as they move (an :class:`~skewlab.viz.explorer.Explorer`).

    The hit-ratio slider stops at 0.99: at 1.0 nothing reaches the disk and the ceiling is
    unbounded. The latency sliders have no step, so they open at the profile's exact means.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> explorer = ceiling_explorer(load_disk_profile("ebs-article"))
        >>> explorer.update(buffer_size=500).figures[0].layout.title.text
        'Per-key ceiling at read 6,161 us, write 7,708 us'
    """
    import ipywidgets as widgets

    from skewlab.viz.explorer import Explorer

    def draw(
        read_us: float, write_us: float, buffer_size: int, hit_ratio: float, run_length: int
    ) -> list:
        title = f"Per-key ceiling at read {read_us:,.0f} us, write {write_us:,.0f} us"
        return [ceiling_figure(read_us, write_us, buffer_size, hit_ratio, run_length, title)]

    style = {"description_width": "12rem"}
    layout = widgets.Layout(width="40rem")

    def log_slider(description: str, value: float) -> Any:
        return widgets.FloatLogSlider(
            value=value,
            base=10,
            min=0,
            max=6,
            # no step: a step snaps the start (the profile's 6,161.17 us would open at 6,166)
            step=None,
            description=description,
            readout_format=",.0f",
            style=style,
            layout=layout,
            continuous_update=False,
        )

    controls = {
        "read_us": log_slider("read latency (us)", profile.read.mean_us),
        "write_us": log_slider("write latency (us)", profile.write.mean_us),
        "buffer_size": widgets.IntSlider(
            value=buffer_size,
            min=1,
            max=max(1000, buffer_size),
            description="buffer size per key",
            style=style,
            layout=layout,
            continuous_update=False,
        ),
        "hit_ratio": widgets.FloatSlider(
            value=min(hit_ratio, 0.99),
            min=0.0,
            max=0.99,
            step=0.01,
            description="cache hit ratio",
            style=style,
            layout=layout,
            continuous_update=False,
        ),
        "run_length": widgets.IntSlider(
            value=run_length,
            min=1,
            max=max(1000, run_length),
            description="sorted run length",
            style=style,
            layout=layout,
            continuous_update=False,
        ),
    }
    return Explorer(controls, draw).start()


def ceiling_curve(
    profile: DiskProfile,
    parameter: str = "buffer_size",
    values: Sequence[float] | None = None,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
) -> pd.DataFrame:
    """Per-key ceiling of every strategy as one ``parameter`` (``buffer_size``, ``hit_ratio`` or
    ``run_length``) sweeps ``values``; columns ``[parameter, "strategy",
    "records_per_key_per_second"]`` (``inf`` where nothing reaches the disk).

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> df = ceiling_curve(load_disk_profile("ebs-article"), "buffer_size", [1, 10])
        >>> df[df.strategy == "buffered"].records_per_key_per_second.round(1).tolist()
        [72.1, 721.0]
    """
    defaults = {
        "buffer_size": [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
        "hit_ratio": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99],
        "run_length": [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    }
    if parameter not in defaults:
        raise SkewlabInputError(f"parameter must be one of {', '.join(defaults)}, got {parameter}")
    rows = []
    for value in defaults[parameter] if values is None else values:
        params = {"buffer_size": buffer_size, "hit_ratio": hit_ratio, "run_length": run_length}
        params[parameter] = value
        for name, pattern in strategy_patterns(**params).items():
            rows.append((value, name, per_key_ceiling(profile, pattern)))
    return pd.DataFrame(rows, columns=[parameter, "strategy", "records_per_key_per_second"])


def ceiling_curve_figure(curve: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Lines of a :func:`ceiling_curve` frame, one per strategy, log axes where they help.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> fig = ceiling_curve_figure(ceiling_curve(load_disk_profile("ebs-article")))
        >>> [t.name for t in fig.data]
        ['naive', 'buffered', 'cached', 'sorted']
    """
    parameter = curve.columns[0]
    fig = go.Figure()
    for name in MODELLED_STRATEGIES:
        part = curve[curve.strategy == name]
        y = part.records_per_key_per_second.where(~part.records_per_key_per_second.isin([math.inf]))
        fig.add_scatter(
            x=part[parameter],
            y=y,
            name=name,
            mode="lines+markers",
            line_color=COLORS[name],
        )
    fig.update_layout(
        title=title or f"Per-key ceiling vs {parameter.replace('_', ' ')}",
        xaxis_title=parameter.replace("_", " "),
        yaxis_title="records per key per second (log)",
        yaxis_type="log",
        template=TEMPLATE,
    )
    if parameter != "hit_ratio":
        fig.update_xaxes(type="log")
    return fig


def profiles_table(
    profiles: Sequence[DiskProfile],
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
    samples: int = 50_000,
) -> pd.DataFrame:
    """One row per profile: mean and p50/p99 latencies, the naive per-record state time's
    p50/p99 (Monte Carlo), and each strategy's per-key ceiling.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> t = profiles_table([load_disk_profile("ebs-article")], samples=1000)
        >>> round(float(t.loc["ebs-article", "naive records/key/s"]), 1)
        72.1
    """
    rows = {}
    for profile in profiles:
        naive = state_time_distribution(profile, naive_pattern(), samples=samples)
        row: dict[str, Any] = {"block size (B)": profile.block_size}
        for direction in ("read", "write"):
            dist = getattr(profile, direction)
            row[f"{direction} mean (us)"] = dist.mean_us
            row[f"{direction} p50 (us)"] = dist.quantile_us(50)
            row[f"{direction} p99 (us)"] = dist.quantile_us(99)
        row["naive state time p50 (us)"] = naive.p50_us
        row["naive state time p99 (us)"] = naive.p99_us
        for name, pattern in strategy_patterns(buffer_size, hit_ratio, run_length).items():
            row[f"{name} records/key/s"] = per_key_ceiling(profile, pattern)
        rows[profile.name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def profiles_ceiling_figure(
    profiles: Sequence[DiskProfile],
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
) -> go.Figure:
    """Per-key ceilings of every strategy, one group of bars per profile, log axis; the title
    states naive's ceiling on each profile.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> fig = profiles_ceiling_figure([load_disk_profile("ebs-article")])
        >>> fig.data[0].name
        'ebs-article'
    """
    fig = go.Figure()
    naive = []
    for profile in profiles:
        patterns = strategy_patterns(buffer_size, hit_ratio, run_length)
        values = [per_key_ceiling(profile, p) for p in patterns.values()]
        naive.append(f"{profile.name} {values[0]:,.0f}")
        ys, texts = _bar_values(values)
        fig.add_bar(
            name=profile.name,
            x=[p.label for p in patterns.values()],
            y=ys,
            text=texts,
            textposition="outside",
        )
    fig.update_layout(
        title="Naive's per-key ceiling, records per key per second: " + ", ".join(naive),
        yaxis_title="records per key per second (log)",
        yaxis_type="log",
        barmode="group",
        template=TEMPLATE,
    )
    return fig


def measured_vs_modelled_table(results: Sequence[Any]) -> pd.DataFrame:
    """One row per run: measured operator throughput beside the modelled one on its profile.

    ``results`` are :class:`skewlab.engine.metrics.RunResult`; runs without a latency profile or
    without state accesses (``spark_sql``) show no modelled figures.
    """
    rows = []
    for r in results:
        label = r.strategy + (
            f" ({r.parameters.get('buffer')})" if "buffer" in r.parameters else ""
        )
        rows.append(
            {
                "run": label,
                "records": r.records_processed,
                "state reads": r.state_reads,
                "state writes": r.state_writes,
                "measured records/s (this machine, operators)": r.operator_records_per_second,
                "modelled I/O seconds": r.modelled_io_seconds,
                "modelled records/s": r.modelled_records_per_second,
                "profile": r.latency_profile,
                "bound by": (r.extra.get("modelled_io") or {}).get("bound"),
            }
        )
    return pd.DataFrame(rows).set_index("run")


def describe_modelled(table: pd.DataFrame) -> str:
    """What :func:`measured_vs_modelled_table` shows for the runs it holds, as sentences computed
    from its figures: each run's modelled throughput for the whole job on its profile and what
    bounds it, and -- for a buffered run beside a naive one -- how many times fewer state
    accesses the buffer made and how many times the modelled rate rose (two figures, each
    given: they need not be equal, since the model also prices the busiest key and subtask).

    Example::

        >>> table = pd.DataFrame({"state reads": [10_000, 100], "state writes": [10_000, 140],
        ...     "modelled records/s": [110.7, 8_000.0], "profile": ["ebs-article"] * 2,
        ...     "bound by": ["subtask", "subtask"]}, index=["naive", "buffered (vectorized)"])
        >>> print(describe_modelled(table))
        This run's state accesses, modelled on ebs-article: naive 111 records/s for the whole job (bound by the busiest subtask); buffered (vectorized) 8,000 records/s (bound by the busiest subtask). The buffer made 83.3x fewer state accesses than naive, and its modelled rate is 72.3x naive's.
    """  # noqa: E501
    modelled = table[table["modelled records/s"].notna()]
    if modelled.empty:
        return "No run of this table has a modelled figure (no disk profile, or no state access)."
    profile = modelled["profile"].iloc[0]
    parts = [
        f"{run} {row['modelled records/s']:,.0f} records/s"
        + (" for the whole job" if i == 0 else "")
        + (f" (bound by the busiest {row['bound by']})" if row.get("bound by") else "")
        for i, (run, row) in enumerate(modelled.iterrows())
    ]
    text = f"This run's state accesses, modelled on {profile}: {'; '.join(parts)}."
    naive = [r for r in modelled.index if r.startswith("naive")]
    buffered = [r for r in modelled.index if r.startswith("buffered")]
    if naive and buffered:
        n, b = modelled.loc[naive[0]], modelled.loc[buffered[0]]
        accesses = (n["state reads"] + n["state writes"]) / (b["state reads"] + b["state writes"])
        rate = b["modelled records/s"] / n["modelled records/s"]
        text += (
            f" The buffer made {accesses:,.1f}x fewer state accesses than naive, and its "
            f"modelled rate is {rate:,.1f}x naive's."
        )
    return text


def _measured_vs_modelled_title(table: pd.DataFrame, measured: str, profile: str) -> str:
    """'naive: 20,000 records/s measured here, 72 modelled on ebs-article' (the first run
    with a modelled figure)."""
    parts = [
        f"{run}: {row[measured]:,.0f} records/s measured here, "
        f"{row['modelled records/s']:,.0f} modelled on {profile}"
        for run, row in table.iterrows()
        if pd.notna(row["modelled records/s"]) and pd.notna(row[measured])
    ]
    return parts[0] if parts else "A real run: measured throughput beside its modelled throughput"


def measured_vs_modelled_figure(table: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Grouped bars (log scale): measured throughput here vs modelled on the profile's disk;
    the default title states both figures for the first run that has a modelled one."""
    fig = go.Figure()
    measured = "measured records/s (this machine, operators)"
    fig.add_trace(go.Bar(x=table.index, y=table[measured], name="measured on this machine"))
    profile = table["profile"].dropna().iloc[0] if table["profile"].notna().any() else "profile"
    fig.add_trace(
        go.Bar(x=table.index, y=table["modelled records/s"], name=f"modelled on {profile}")
    )
    fig.update_layout(
        title=title or _measured_vs_modelled_title(table, measured, profile),
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "records per second", "type": "log"},
        xaxis={"title": "strategy"},
    )
    return fig
