"""Notebook 04, the LRU state cache (FLIP-325): hit ratio and throughput against the cache size,
the 0%-hit record taken apart, and a cache-size slider.

Every function takes a :class:`~skewlab.experiments.results.BenchResult` of
:mod:`skewlab.experiments.state_cache` and returns a pandas DataFrame or a plotly figure.

Example::

    >>> from skewlab.experiments.state_cache import run_experiment
    >>> result = run_experiment("tiny", progress=False)                 # doctest: +SKIP
    >>> hit_ratio_curve_figure(result).show()                          # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from skewlab.experiments.results import BenchResult, bench_summary
from skewlab.experiments.state_cache import HEADLINE_MEASURE, SEED_HIT_RATIOS, SEED_SPEEDUPS
from skewlab.inputs.wordcount import flip325_input
from skewlab.strategies.count import run_count
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, LABELS, LEGEND_BELOW, TEMPLATE
from skewlab.viz.text import number, percent, spread_text, times

__all__ = [
    "cache_cost_table",
    "cache_size_explorer",
    "cache_speedup_figure",
    "cache_table",
    "describe",
    "format_summary",
    "hit_ratio_curve_figure",
    "zero_hit_cost_table",
]


SIDE_LABELS = LABELS["state_cache"]


def _size_label(size) -> str:
    return "none" if size is None else f"{size:,}"


def cache_table(result) -> pd.DataFrame:
    """Per side and cache size: the hit ratio, job throughput (the headline) and its speedup
    over RocksDB alone (median, min, max of the rounds) with the operator breakdown beside it,
    and the seed's figures."""
    rows = []
    for t in result.summary["by_cache_size"]:
        speedup = t.get("speedup") or {"median": None, "min": None, "max": None}
        rows.append(
            {
                "side": SIDE_LABELS[t["side"]],
                "cache entries": _size_label(t["cache_size"]),
                "hit ratio": t["hit_ratio"],
                "seed hit ratio": t["seed_hit_ratio"],
                "stateCacheHitRatio": t["state_cache_hit_ratio"],
                "job records/s": t[HEADLINE_MEASURE]["median"],
                "speedup (job)": speedup["median"],
                "min": speedup["min"],
                "max": speedup["max"],
                "seed speedup": t["seed_speedup"] if t["cache_size"] else None,
                "speedup (operator CPU)": t.get("operator_speedup"),
                "speedup (operator wall)": t.get("operator_wall_speedup"),
            }
        )
    return pd.DataFrame(rows)


def cache_cost_table(result) -> pd.DataFrame:
    """Microseconds per record at each side and cache size: of the whole job (the headline's
    inverse), and inside the operator (CPU and wall clock)."""
    rows = []
    for t in result.summary["by_cache_size"]:
        job = t[HEADLINE_MEASURE]["median"]
        ops, cpu = t["operator_records_per_second"], t["operator_cpu_records_per_second"]
        rows.append(
            {
                "side": SIDE_LABELS[t["side"]],
                "cache entries": _size_label(t["cache_size"]),
                "hit ratio": t["hit_ratio"],
                "job us per record": 1e6 / job if job else None,
                "operator CPU us per record": 1e6 / cpu if cpu else None,
                "operator wall-clock us per record": 1e6 / ops if ops else None,
            }
        )
    return pd.DataFrame(rows)


def zero_hit_cost_table(result) -> pd.DataFrame:
    """Nanoseconds per record at 0% hits, taken apart (``zero_hit_costs`` of the summary):
    RocksDB alone, what each cache's bookkeeping adds, and what RocksDB pays more for writing
    back the evicted key instead of the key it has just read -- one at a time, and in write
    batches. Empty when it was not measured."""
    columns = ["per record", "ns", "% of RocksDB alone"]
    costs = result.summary.get("zero_hit_costs")
    if not costs:
        return pd.DataFrame(columns=columns)
    base, entries, batch = costs["rocksdb_same_key_ns"], costs["max_entries"], costs["write_batch"]
    rows = [
        ("RocksDB alone: get(k), put(k)", base, 1.0),
        (
            f"+ FLIP-325's LRU bookkeeping ({entries} entries, 0% hits)",
            costs["bookkeeping_ns"],
            costs["bookkeeping_share"],
        ),
        (
            "+ RocksDB: put of the evicted key instead of k, one at a time",
            costs["rocksdb_evicted_key_ns"] - base,
            costs["write_locality_share"],
        ),
        (
            f"+ the batched write-back's bookkeeping ({entries} entries)",
            costs["bookkeeping_batched_ns"],
            costs["bookkeeping_batched_share"],
        ),
        (
            f"+ RocksDB: the evicted keys in write batches of {batch}, in key order",
            costs["rocksdb_evicted_batched_ns"] - base,
            costs["write_locality_batched_share"],
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
    """Hit ratio and job throughput against the cache size (the sweep), two y axes.

    The crosses are the seed's 0% / 50% / 100% points; ``highlight`` marks one size.
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
            x=list(SEED_HIT_RATIOS),
            y=list(SEED_HIT_RATIOS.values()),
            mode="markers",
            marker={"symbol": "x", "size": 11, "color": COLORS["seed"]},
            name="hit ratio (seed)",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=sizes,
            y=[p[HEADLINE_MEASURE] for p in sweep],
            mode="lines+markers",
            line={"dash": "dot", "color": COLORS["sorted"]},
            name="job records/s (FLIP-325 LRU)",
        ),
        secondary_y=True,
    )
    if base and base[HEADLINE_MEASURE]:
        fig.add_trace(
            go.Scatter(
                x=[min(sizes, default=0), max(sizes, default=1)],
                y=[base[HEADLINE_MEASURE]] * 2,
                mode="lines",
                line={"dash": "dash", "color": COLORS["rocksdb"]},
                name="job records/s (RocksDB, no cache)",
            ),
            secondary_y=True,
        )
    if highlight is not None:
        fig.add_vline(x=highlight, line={"color": COLORS["mark"], "width": 1})
    fig.update_layout(
        title=_sweep_title(sweep),
        template=TEMPLATE,
        xaxis={"title": "cache entries (state.backend.cache.max-entries-num)"},
        **LEGEND_BELOW,  # at the right a legend would cover the second y axis's title
    )
    fig.update_yaxes(
        title_text="hit ratio", range=[-0.05, 1.05], tickformat=".0%", secondary_y=False
    )
    fig.update_yaxes(title_text="job records per second", rangemode="tozero", secondary_y=True)
    return fig


def _sweep_title(sweep: list[dict]) -> str:
    """Where the sweep's hit ratio steps up: 'Hit ratio 0% from 50, 50% from 500, 100% from
    1,000 entries' (ratios rounded to the percent)."""
    steps: list[str] = []
    last = None
    for point in sorted(sweep, key=lambda p: p["cache_size"]):
        ratio = round(point["hit_ratio"] or 0.0, 2)
        if ratio != last:
            steps.append(f"{ratio:.0%} from {point['cache_size']:,}")
            last = ratio
    if not steps:
        return "FLIP-325 key pattern: hit ratio and job throughput vs LRU cache size"
    return "Hit ratio " + ", ".join(steps) + " entries (FLIP-325's keys)"


def cache_speedup_figure(result) -> go.Figure:
    """Bars: job throughput with each cache over RocksDB alone (the rounds' min and max as
    error bars) for FLIP-325's LRU and the batched write-back, beside the seed's (log scale)."""
    table = [t for t in result.summary["by_cache_size"] if t["cache_size"] is not None]
    fig = go.Figure()
    for side, color in (("lru", COLORS["cached"]), ("lru_batched", COLORS["lru_batched"])):
        mine = [t for t in table if t["side"] == side]
        fig.add_trace(
            go.Bar(
                x=[f"{t['cache_size']} entries" for t in mine],
                y=[t["speedup"]["median"] for t in mine],
                name=f"measured: {SIDE_LABELS[side]} (job throughput)",
                marker_color=color,
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [t["speedup"]["max"] - t["speedup"]["median"] for t in mine],
                    "arrayminus": [t["speedup"]["median"] - t["speedup"]["min"] for t in mine],
                },
                text=[f"{t['speedup']['median']:.2f}x" for t in mine],
            )
        )
    seed = [t for t in table if t["side"] == "lru"]
    fig.add_trace(
        go.Bar(
            x=[f"{t['cache_size']} entries" for t in seed],
            y=[t["seed_speedup"] for t in seed],
            name="seed: FLIP-325 LRU (Flink job)",
            marker_color=COLORS["seed"],
            text=[f"{t['seed_speedup']:g}x" for t in seed],
        )
    )
    fig.add_hline(y=1.0, line={"dash": "dash", "color": COLORS["rocksdb"]})
    lru = " / ".join(f"{t['speedup']['median']:.2f}x" for t in seed)
    sizes = " / ".join(f"{t['cache_size']:,}" for t in seed)
    fig.update_layout(
        title=f"FLIP-325's LRU: {lru} RocksDB's job throughput at {sizes} entries"
        if seed
        else "Job throughput with the cache, relative to RocksDB alone",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "x RocksDB's job throughput", "type": "log"},
    )
    return fig


def describe(result) -> str:
    """Sentences of what this run measured at 0% hits and at 100%, beside the seed's figures.

    Example::

        >>> summary = {"runs": 3, "speedup_250": 0.93, "speedup_250_batched": 1.01,
        ...     "speedup_1000": 4.2, "speedup_1000_batched": 4.1, "operator_speedup_1000": 19.0,
        ...     "hit_ratio_250": 0.0, "hit_ratio_1000": 0.99995, "write_batch": 128,
        ...     "all_digests_match": True}
        >>> print(describe({"summary": summary}))
        Measured here (median of 3 rounds): at 250 entries (hit ratio 0%) FLIP-325's LRU gives 0.93x RocksDB's job throughput and the batched write-back (128 per write batch) 1.01x; at 1,000 entries (hit ratio 99.995%) 4.20x and 4.10x, and 19.00x inside the operator alone. The seed's figures: 0.956x and 21.6x. Every run's counts equal the oracle's: True.
    """  # noqa: E501
    s = bench_summary(result)

    def x(value) -> str:
        return times(value, ".2f")

    text = (
        f"Measured here (median of {s['runs']} rounds): at 250 entries (hit ratio "
        f"{percent(s.get('hit_ratio_250'))}) FLIP-325's LRU gives {x(s.get('speedup_250'))} "
        f"RocksDB's job throughput and the batched write-back ({s.get('write_batch')} per "
        f"write batch) {x(s.get('speedup_250_batched'))}; at 1,000 entries (hit ratio "
        f"{percent(s.get('hit_ratio_1000'))}) {x(s.get('speedup_1000'))} and "
        f"{x(s.get('speedup_1000_batched'))}, and {x(s.get('operator_speedup_1000'))} inside "
        f"the operator alone. The seed's figures: {SEED_SPEEDUPS[250]:g}x and "
        f"{SEED_SPEEDUPS[1000]:g}x."
    )
    if "all_digests_match" in s:
        text += f" Every run's counts equal the oracle's: {s['all_digests_match']}."
    return text


def _speedup_text(s: dict | None) -> str:
    return spread_text(s, ".3f", "x") if s else "-"


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench state_cache`` prints: the measured table beside the seed's figures.

    Example::

        >>> from skewlab.experiments.state_cache import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        FLIP-325 count job, 20,000 records, parallelism 1, checkpoint every 1 s, 1 round(s); ...
    """
    s = result.summary
    lines = [
        f"FLIP-325 count job, {s['records']:,} records, parallelism 1, checkpoint every 1 s, "
        f"{s['runs']} round(s); headline: job throughput, speedup over RocksDB median "
        "[min..max] of the rounds",
        f"{'side':>20} {'cache':>6} {'hit ratio':>9} {'seed':>5} {'job rec/s':>10} "
        f"{'speedup':>28} {'seed':>6} {'op CPU':>7} {'op wall':>7}",
    ]
    for t in s["by_cache_size"]:
        size = "-" if t["cache_size"] is None else f"{t['cache_size']:,}"
        lines.append(
            f"{SIDE_LABELS[t['side']]:>20} {size:>6} {number(t['hit_ratio'], '9.1%')} "
            f"{number(t['seed_hit_ratio'], '5.0%'):>5} "
            f"{number(t[HEADLINE_MEASURE]['median'], '10,.0f')} "
            f"{_speedup_text(t.get('speedup')):>28} {number(t['seed_speedup'], '5.3g')}x "
            f"{number(t.get('operator_speedup'), '6.2f')}x "
            f"{number(t.get('operator_wall_speedup'), '6.2f')}x"
        )
    if s["sweep"]:
        points = ", ".join(
            f"{p['cache_size'] if p['cache_size'] is not None else 'none'}: "
            f"{number(p['hit_ratio'], '.0%', 'n/a')}"
            for p in s["sweep"]
        )
        lines.append(f"sweep (cache size: hit ratio): {points}")
    lines.append(
        f"batched write-back: {s.get('write_batch')} evicted entries per RocksDB write batch; "
        "op CPU / op wall: the same ratio of operator throughput per CPU / wall-clock second"
    )
    costs = s.get("zero_hit_costs")
    if costs:
        lines.append(
            f"0% hits taken apart ({costs['records']:,} records, no Spark, ns per record): "
            f"RocksDB alone {costs['rocksdb_same_key_ns']:,.0f}; the cache's bookkeeping "
            f"{costs['bookkeeping_ns']:+.0f} ({costs['bookkeeping_share']:+.1%}), batched "
            f"{costs['bookkeeping_batched_ns']:+.0f} ({costs['bookkeeping_batched_share']:+.1%});"
            f" RocksDB writing the evicted key instead of the key just read "
            f"{costs['rocksdb_evicted_key_ns'] - costs['rocksdb_same_key_ns']:+.0f} "
            f"({costs['write_locality_share']:+.1%}), in write batches of "
            f"{costs['write_batch']} "
            f"{costs['rocksdb_evicted_batched_ns'] - costs['rocksdb_same_key_ns']:+.0f} "
            f"({costs['write_locality_batched_share']:+.1%}); the seed's whole loss: "
            f"{costs['seed_loss_share']:.1%}"
        )
    lines.append(
        f"all counts match the oracle: {s['all_digests_match']}; every emission reached the "
        f"sink: {s['all_emissions_match']}"
    )
    if s.get("policy_table"):
        from skewlab.viz.beyond_salting import format_policy_summary

        lines += ["", format_policy_summary(result)]
    return "\n".join(lines)


def cache_size_explorer(
    spark, *, n_records: int, start: int = 500, result=None, write_batch: int = 1
) -> Explorer:
    """A cache-size slider: each release runs the FLIP-325 job on Spark with that many entries
    (0: no cache) and marks its hit ratio on the curve of ``result``'s sweep. Inert in a report.

    Example::

        >>> explorer = cache_size_explorer(spark, n_records=20_000)      # doctest: +SKIP
        >>> explorer.update(cache_entries=1000).figures[0]               # doctest: +SKIP
    """

    def draw(cache_entries: int) -> list:
        run = run_count(
            flip325_input(spark, n_records),
            "cached",
            spark=spark,
            parallelism=1,
            cache_entries=cache_entries,
            write_batch=write_batch if cache_entries else 1,
            emit="record",
            checkpoint_interval_ms=1000,
        )
        fig = (
            hit_ratio_curve_figure(result, highlight=cache_entries)
            if result is not None
            else make_subplots(specs=[[{"secondary_y": True}]])
        )
        fig.add_trace(
            go.Scatter(
                x=[cache_entries],
                y=[run.hit_ratio],
                mode="markers",
                marker={"size": 14, "symbol": "diamond", "color": COLORS["mark"]},
                name=f"this run: {cache_entries} entries",
            ),
            secondary_y=False,
        )
        label = widgets.HTML(
            f"<b>{cache_entries} entries</b>: hit ratio {run.hit_ratio or 0:.1%}, "
            f"{run.e2e_records_per_second:,.0f} job records/s, "
            f"{run.state_reads:,} RocksDB reads, {run.state_writes:,} RocksDB writes"
        )
        return [fig, label]

    slider = widgets.IntSlider(
        value=start,
        min=0,
        max=1500,
        step=50,
        description="cache entries",
        continuous_update=False,
        style=WIDGET_STYLE,
    )
    return Explorer({"cache_entries": slider}, draw).start()


def floor_table(summary: dict[str, Any]):
    """The floor taken apart: per job and parallelism, each part's cost per record (us), the
    floor and Spark's own aggregation per record.

    Example::

        >>> floor_table({"jobs": {"count": {"part_us_per_record": {"1": {"source": 0.1}},
        ...     "floor_us_per_record": {"1": 0.1}, "spark_sql_us_per_record": {"1": 0.05}}}})
             job  p  source  floor (engine job)  spark_sql
        0  count  1     0.1                 0.1       0.05
    """
    import pandas as pd

    rows = [
        {"job": job, "p": int(p), **parts,
         "floor (engine job)": of_job["floor_us_per_record"][p],
         "spark_sql": of_job["spark_sql_us_per_record"][p]}
        for job, of_job in summary["jobs"].items()
        for p, parts in of_job["part_us_per_record"].items()
    ]  # fmt: skip
    return pd.DataFrame(rows).round(3)


def format_floor_summary(result: BenchResult) -> str:
    """What ``skewlab bench floor`` prints: us per record, part by part, per job.

    Example::

        >>> from skewlab.experiments.floor import run_experiment
        >>> print(format_floor_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
    """  # noqa: E501
    summary = bench_summary(result)
    lines = [
        "us per record of each part (the difference of consecutive steps' median job times), "
        "the floor (the whole pass-through job) and Spark's own aggregation:",
        floor_table(summary).to_string(index=False),
    ]
    for job, of_job in summary["jobs"].items():
        for p, steps in of_job["steps"].items():
            lines.append(
                f"{job} job, p={p}, job seconds min / median / max: "
                + "; ".join(
                    f"{part} {s['min']:.3f} / {s['median']:.3f} / {s['max']:.3f}"
                    for part, s in steps.items()
                )
            )
    lines.append(f"every record emitted once: {summary['every_record_emitted']}")
    return "\n".join(lines)
