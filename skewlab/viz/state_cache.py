"""Notebook 04, the LRU state cache (FLIP-325): hit ratio and throughput against the cache size,
the 0%-hit record taken apart, the batched write-back against its breakdown's prediction, and a
cache-size slider.

Every function takes a :class:`~skewlab.experiments.results.BenchResult` of
:mod:`skewlab.experiments.state_cache` or its JSON (the shipped reference is one) and returns a
pandas DataFrame (with ``caption=True``, a table captioned with whose figures it shows), a
plotly figure whose title starts with whose figures it plots, or sentences that say it first.
Every speedup is printed with its interval (``summary["intervals"]``).

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

from skewlab.experiments.claims.state_cache import batched_figures
from skewlab.experiments.intervals import Estimate
from skewlab.experiments.references import load_reference
from skewlab.experiments.results import BenchResult, bench_summary
from skewlab.experiments.state_cache import (
    EXPERIMENT,
    HEADLINE_MEASURE,
    SEED_HIT_RATIOS,
    SEED_SPEEDUPS,
)
from skewlab.inputs.wordcount import flip325_input
from skewlab.strategies.count import run_count
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, LABELS, LEGEND_BELOW, TEMPLATE
from skewlab.viz.reference_section import section_shown
from skewlab.viz.render import readable_number
from skewlab.viz.text import estimate_text, number, percent, times
from skewlab.viz.titles import whose_figures

__all__ = [
    "cache_cost_table",
    "cache_size_explorer",
    "cache_speedup_figure",
    "cache_table",
    "describe",
    "describe_batched",
    "format_floor_summary",
    "format_summary",
    "hit_ratio_curve_figure",
    "zero_hit_cost_table",
    "zero_hit_costs_shown",
]


SIDE_LABELS = LABELS["state_cache"]


def _size_label(size) -> str:
    return "none" if size is None else f"{size:,}"


def _whose(result) -> str:
    """Whose figures ``result`` holds, capitalised to open a title or a sentence."""
    whose = whose_figures(result)
    return whose[0].upper() + whose[1:]


def _run_of(result) -> str:
    """What the result's seed part ran: ``'3 rounds of 100,000 records'``."""
    s = bench_summary(result)
    runs = s.get("runs") or 0
    return f"{runs} round{'s' * (runs != 1)} of {s.get('records', 0):,} records"


def _styled(frame: pd.DataFrame, caption: str):
    """``frame`` as a table captioned ``caption``, its floats as a reader reads them."""
    floats = list(frame.select_dtypes("float").columns)
    return frame.style.format(readable_number, subset=floats, na_rep="-").set_caption(caption)


def _interval(entry: dict, name: str = "speedup") -> Estimate | None:
    stored = entry.get(f"{name}_interval")
    return None if stored is None else Estimate.from_json(stored)


def cache_table(result, *, caption: bool = False):
    """Per side and cache size: the hit ratio, job throughput (the headline) and its speedup
    over RocksDB alone (the median of the rounds' ratios, then with its interval) with the
    operator breakdown beside it, and the seed's figures. ``caption=True``: captioned with
    whose figures they are, for a notebook.

    Example::

        >>> summary = {"runs": 3, "records": 1_000, "by_cache_size": [{"side": "lru",
        ...     "cache_size": 1000, "hit_ratio": 0.999, "seed_hit_ratio": 1.0,
        ...     "state_cache_hit_ratio": 0.999, "job_records_per_second": {"median": 9e5},
        ...     "speedup": {"median": 4.2}, "seed_speedup": 21.6, "operator_speedup": 19.0,
        ...     "operator_wall_speedup": 18.0, "speedup_interval": {"value": 4.2, "low": 3.9,
        ...     "high": 4.4, "runs": 3, "method": "bootstrap"}}]}
        >>> cache_table({"size": "quick", "summary": summary})["speedup (job) [interval]"][0]
        '4.2x [3.9..4.4]'
    """
    rows = []
    for t in bench_summary(result)["by_cache_size"]:
        speedup = t.get("speedup") or {"median": None}
        rows.append(
            {
                "side": SIDE_LABELS[t["side"]],
                "cache entries": _size_label(t["cache_size"]),
                "hit ratio": t["hit_ratio"],
                "seed hit ratio": t["seed_hit_ratio"],
                "stateCacheHitRatio": t["state_cache_hit_ratio"],
                "job records/s": t[HEADLINE_MEASURE]["median"],
                "speedup (job)": speedup["median"],
                "speedup (job) [interval]": estimate_text(_interval(t), ".3g")
                if t["cache_size"]
                else None,
                "seed speedup": t["seed_speedup"] if t["cache_size"] else None,
                "speedup (operator CPU)": t.get("operator_speedup"),
                "speedup (operator wall)": t.get("operator_wall_speedup"),
            }
        )
    frame = pd.DataFrame(rows)
    if not caption:
        return frame
    return _styled(
        frame,
        f"{_whose(result)}, {_run_of(result)}: job throughput and its speedup over RocksDB "
        "alone, the median of the rounds' ratios [its bootstrap interval]; the "
        "operators' ratios beside it; the seed's figures (FLIP-325, the JVM) beside those",
    )


def cache_cost_table(result, *, caption: bool = False):
    """Microseconds per record at each side and cache size: of the whole job (the headline's
    inverse), and inside the operator (CPU and wall clock), medians of the rounds.
    ``caption=True``: captioned with whose figures they are."""
    rows = []
    for t in bench_summary(result)["by_cache_size"]:
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
    frame = pd.DataFrame(rows)
    if not caption:
        return frame
    return _styled(
        frame,
        f"{_whose(result)}, {_run_of(result)}: what one record costs, in the job and inside "
        "the operators (medians of the rounds)",
    )


def zero_hit_costs_shown(result):
    """The result whose 0%-hit breakdown to show: ``result`` where it measured one, else (a
    size that leaves the breakdown out: quick) the shipped reference, after a line saying
    whose figures follow. Give it to :func:`zero_hit_cost_table`.

    Example::

        >>> shown = zero_hit_costs_shown({"size": "quick", "summary": {"zero_hit_costs": None}})
        this size leaves the 0%-hit breakdown out (...); here is the shipped reference's, ...
        >>> bool(bench_summary(shown)["zero_hit_costs"])
        True
    """
    own = bench_summary(result).get("zero_hit_costs")
    reference = None if own else load_reference(EXPERIMENT)
    section, _ = section_shown(
        own,
        EXPERIMENT,
        lambda summary: summary.get("zero_hit_costs"),
        what="0%-hit breakdown",
        why="its claim needs more rounds than a quick report affords; "
        "`skewlab bench state_cache` runs it here",
        reference=reference,
    )
    return result if own or section is None else reference


def zero_hit_cost_table(result, *, caption: bool = False):
    """Nanoseconds per record at 0% hits, taken apart (``zero_hit_costs`` of the summary):
    RocksDB alone, what each cache's bookkeeping adds, and what RocksDB pays more for writing
    back the evicted key instead of the key it has just read -- one at a time, and in write
    batches; then what the parts predict (the median of the runs' own sums, with its
    interval). Empty when it was not measured. ``caption=True``: captioned with whose figures
    they are (measured without Spark).

    Example::

        >>> costs = {"records": 1_000, "max_entries": 250, "write_batch": 128, "runs": 3,
        ...     "rocksdb_same_key_ns": 3_000.0, "bookkeeping_ns": 60.0, "bookkeeping_share": 0.02,
        ...     "rocksdb_evicted_key_ns": 3_300.0, "write_locality_share": 0.1,
        ...     "bookkeeping_batched_ns": 120.0, "bookkeeping_batched_share": 0.04,
        ...     "rocksdb_evicted_batched_ns": 2_880.0, "write_locality_batched_share": -0.04,
        ...     "seed_loss_share": 0.044, "predicted_loss_share": 0.12,
        ...     "predicted_batched_change_share": -0.12, "intervals": {
        ...         "predicted_loss_share": {"value": 0.12, "low": 0.1, "high": 0.13, "runs": 3},
        ...         "predicted_batched_change_share": {"value": -0.12, "low": -0.14,
        ...                                            "high": -0.1, "runs": 3}}}
        >>> table = zero_hit_cost_table({"summary": {"zero_hit_costs": costs}})
        >>> last = table.iloc[-1]
        >>> last["per record"], float(last["% of RocksDB alone"]), last["[bootstrap interval]"]
        ('predicted: the batched write-back against FLIP-325 LRU', -12.0, '[-14.0..-10.0]')
    """
    columns = ["per record", "ns", "% of RocksDB alone", "[bootstrap interval]"]
    costs = bench_summary(result).get("zero_hit_costs")
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
    table = [
        (what, None if ns is None else round(ns), round(100 * share, 1), None)
        for what, ns, share in rows
    ]
    intervals = costs.get("intervals") or {}
    for what, name in (
        ("predicted: FLIP-325 LRU over RocksDB alone", "predicted_loss_share"),
        (
            "predicted: the batched write-back against FLIP-325 LRU",
            "predicted_batched_change_share",
        ),
    ):
        if costs.get(name) is None:
            continue
        est = Estimate.from_json(intervals.get(name, {"value": costs[name]}))
        span = f"[{100 * est.low:.1f}..{100 * est.high:.1f}]" if est.has_interval else None
        table.append((what, None, round(100 * costs[name], 1), span))
    frame = pd.DataFrame(table, columns=columns)
    if not caption:
        return frame
    return _styled(
        frame,
        f"{_whose(result)}, the 0%-hit record taken apart without Spark ({costs['records']:,} "
        f"records, median of {costs.get('runs', '?')} runs; a prediction: the median of the "
        "runs' own sums [its bootstrap interval]), beside the seed's whole loss",
    )


def hit_ratio_curve_figure(result, *, highlight: int | None = None) -> go.Figure:
    """Hit ratio and job throughput against the cache size (the sweep), two y axes.

    The crosses are the seed's 0% / 50% / 100% points; ``highlight`` marks one size. The title
    says whose sweep it is and where its hit ratio steps up.
    """
    summary = bench_summary(result)
    sweep = [p for p in summary["sweep"] if p["cache_size"] is not None]
    base = next((p for p in summary["sweep"] if p["cache_size"] is None), None)
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
        title=f"{_whose(result)}, one run per size: {_sweep_title(sweep)}",
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
    """Where the sweep's hit ratio steps up: 'hit ratio 0% from 50, 50% from 500, 98% from
    1,000 entries' (each step's ratio as :func:`~skewlab.viz.text.percent` writes it).

    Example::

        >>> _sweep_title([{"cache_size": 250, "hit_ratio": 0.0},
        ...               {"cache_size": 500, "hit_ratio": 0.5},
        ...               {"cache_size": 1000, "hit_ratio": 0.98}])
        "hit ratio 0% from 250, 50% from 500, 98% from 1,000 entries (FLIP-325's keys)"
    """
    steps: list[str] = []
    last = None
    for point in sorted(sweep, key=lambda p: p["cache_size"]):
        ratio = point["hit_ratio"] or 0.0
        if last is None or abs(ratio - last) > 0.005:
            steps.append(f"{percent(ratio)} from {point['cache_size']:,}")
            last = ratio
    if not steps:
        return "FLIP-325 key pattern: hit ratio and job throughput vs LRU cache size"
    return "hit ratio " + ", ".join(steps) + " entries (FLIP-325's keys)"


#: The digits the chapter's claims print each cache size's speedup with (``speedup_grows_with_
#: hits``): two decimals at 250 and 500 entries, one at 1,000.
_DIGITS = {250: ".2f", 500: ".2f", 1000: ".1f"}


def _speedup(value: float, size: int) -> str:
    """A speedup at ``size`` entries as the claims print it.

    Example::

        >>> _speedup(2.96, 1000), _speedup(0.876, 250)
        ('3.0x', '0.88x')
    """
    return times(value, _DIGITS.get(size, ".2f"))


def cache_speedup_figure(result) -> go.Figure:
    """Bars: job throughput with each cache over RocksDB alone (the median of the rounds'
    ratios, its interval as error bars) for FLIP-325's LRU and the batched write-back, beside
    the seed's (log scale); the title says whose figures they are first."""
    table = [t for t in bench_summary(result)["by_cache_size"] if t["cache_size"] is not None]
    fig = go.Figure()

    def span(t: dict) -> tuple[float, float]:
        est, median = _interval(t), t["speedup"]["median"]
        if est is not None and est.has_interval:
            return est.high - median, median - est.low
        return t["speedup"].get("max", median) - median, median - t["speedup"].get("min", median)

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
                    "array": [span(t)[0] for t in mine],
                    "arrayminus": [span(t)[1] for t in mine],
                },
                text=[_speedup(t["speedup"]["median"], t["cache_size"]) for t in mine],
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
    lru = " / ".join(_speedup(t["speedup"]["median"], t["cache_size"]) for t in seed)
    sizes = " / ".join(f"{t['cache_size']:,}" for t in seed)
    fig.update_layout(
        title=f"{_whose(result)}: FLIP-325's LRU {lru} RocksDB's job throughput at {sizes} "
        "entries (median of the rounds; the seed's beside)"
        if seed
        else f"{_whose(result)}: job throughput with the cache, relative to RocksDB alone",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "x RocksDB's job throughput", "type": "log"},
    )
    return fig


def _ratio(summary: dict, key: str, spec: str) -> str:
    """A ratio of the summary with its interval: ``'0.93x [0.90..0.95]'``, ``'-'``."""
    value = summary.get(key)
    if value is None:
        return "-"
    return estimate_text((summary.get("intervals") or {}).get(key) or value, spec)


def describe(result) -> str:
    """Sentences of what a result measured at 0% hits and at 100%, each speedup with its
    interval, saying whose figures they are, beside the seed's figures named as the seed's.

    Example::

        >>> def iv(v):
        ...     return {"value": v, "low": v * 0.9, "high": v * 1.1, "runs": 3}
        >>> summary = {"runs": 3, "records": 100_000, "speedup_250": 0.93,
        ...     "speedup_250_batched": 1.01, "speedup_1000": 4.2, "operator_speedup_1000": 19.0,
        ...     "hit_ratio_250": 0.0, "hit_ratio_1000": 0.99, "write_batch": 128,
        ...     "all_digests_match": True, "intervals": {"speedup_250": iv(0.93),
        ...     "speedup_250_batched": iv(1.01), "speedup_1000": iv(4.2),
        ...     "operator_speedup_1000": iv(19.0)}}
        >>> print(describe({"size": "quick", "summary": summary}))
        This run (quick, this machine), 3 rounds of 100,000 records, medians of the rounds' ratios [bootstrap interval]: at 250 entries (hit ratio 0%) FLIP-325's LRU gives 0.930x [0.837..1.023] RocksDB's job throughput and the batched write-back (128 per write batch) 1.010x [0.909..1.111]; at 1,000 entries (hit ratio 99%) 4.2x [3.8..4.6], and 19.0x [17.1..20.9] inside the operators alone (CPU). The seed's figures: 0.956x and 21.6x. Every run's counts equal the oracle's: True.
    """  # noqa: E501
    s = bench_summary(result)
    batched = ""
    if s.get("speedup_250_batched") is not None:
        batched = (
            f" and the batched write-back ({s.get('write_batch')} per write batch) "
            f"{_ratio(s, 'speedup_250_batched', '.3f')}"
        )
    at_1000 = f"{_ratio(s, 'speedup_1000', '.1f')}"  # with the claims' digits
    if s.get("speedup_1000_batched") is not None:
        at_1000 += f" and {_ratio(s, 'speedup_1000_batched', '.1f')}"
    text = (
        f"{_whose(result)}, {_run_of(result)}, medians of the rounds' ratios [bootstrap interval]: "
        f"at 250 entries (hit ratio {percent(s.get('hit_ratio_250'))}) FLIP-325's LRU gives "
        f"{_ratio(s, 'speedup_250', '.3f')} RocksDB's job throughput{batched}; at 1,000 entries "
        f"(hit ratio {percent(s.get('hit_ratio_1000'))}) {at_1000}, and "
        f"{_ratio(s, 'operator_speedup_1000', '.1f')} inside the operators alone (CPU). The "
        f"seed's figures: {SEED_SPEEDUPS[250]:g}x and {SEED_SPEEDUPS[1000]:g}x."
    )
    if "all_digests_match" in s:
        text += f" Every run's counts equal the oracle's: {s['all_digests_match']}."
    return text


def _direction(est: Estimate | None, pivot: float, below: str, above: str) -> str:
    """Which side of ``pivot`` the interval of ``est`` lies on, in words; where it reaches
    across, that its runs cannot tell; without an interval, that it has none."""
    if est is None:
        return "not measured"
    if not est.has_interval:
        return "without an interval to tell its direction by"
    if est.high < pivot:
        return below
    if est.low > pivot:
        return above
    return f"with an interval that reaches across {pivot:g}: its runs cannot tell {below} from " + (
        above
    )


def describe_batched(result, size: int = 250) -> str:
    """Which way the batched write-back went at ``size`` entries (0% hits): what the 0%-hit
    breakdown predicts for a record against FLIP-325's LRU, what the job measured, and whether
    the two went the same way -- each figure with its interval, saying whose they are.

    Example::

        >>> def iv(v, lo, hi):
        ...     return {"value": v, "low": lo, "high": hi, "runs": 3, "method": "bootstrap"}
        >>> summary = {"runs": 3, "records": 100_000, "zero_hit_predicted_batched_change": -0.15,
        ...     "batched_over_lru_250": 0.901, "operator_batched_over_lru_250": 0.92,
        ...     "zero_hit_costs": {"records": 50_000, "runs": 3}, "intervals": {
        ...         "zero_hit_predicted_batched_change": iv(-0.15, -0.17, -0.12),
        ...         "batched_over_lru_250": iv(0.901, 0.85, 0.95),
        ...         "operator_batched_over_lru_250": iv(0.92, 0.88, 0.96)}}
        >>> print(describe_batched({"size": "quick", "summary": summary}))
        This run (quick, this machine), at 250 entries (0% hits): the breakdown (no Spark, 50,000 records, 3 runs) predicts a record -15.0 % [-17.0..-12.0] with the batched write-back against FLIP-325's LRU: cheaper; the job (3 rounds of 100,000 records) measured the batched write-back's throughput 0.901x [0.850..0.950] the LRU's: dearer, and its operators' CPU throughput 0.920x [0.880..0.960]. The job went against the prediction.
    """  # noqa: E501
    s = bench_summary(result)
    figures = batched_figures(result, size)
    predicted, job, cpu = figures["predicted"], figures["job"], figures["cpu"]
    head = f"{_whose(result)}, at {size:,} entries (0% hits): "
    if job is None:
        return head + "the batched write-back did not run at this size."
    costs = s.get("zero_hit_costs") or {}
    said = []
    if predicted is not None:
        said.append(
            f"the breakdown (no Spark, {costs.get('records', 0):,} records, "
            f"{costs.get('runs', '?')} runs) predicts a record "
            f"{estimate_text(predicted, '+.1f', ' %')} with the batched write-back against "
            f"FLIP-325's LRU: {_direction(predicted, 0.0, 'cheaper', 'dearer')}"
        )
    measured = (
        f"the job ({_run_of(result)}) measured the batched write-back's throughput "
        f"{estimate_text(job, '.3f')} the LRU's: {_direction(job, 1.0, 'dearer', 'cheaper')}"
    )
    if cpu is not None:
        measured += f", and its operators' CPU throughput {estimate_text(cpu, '.3f')}"
    said.append(measured)
    text = head + "; ".join(said) + "."
    if predicted is None:
        return text
    expected, got = (
        _direction(predicted, 0.0, "cheaper", "dearer"),
        _direction(job, 1.0, "dearer", "cheaper"),
    )
    if {expected, got} <= {"cheaper", "dearer"}:
        verdict = "the way the breakdown predicted" if expected == got else "against the prediction"
        return f"{text} The job went {verdict}."
    return f"{text} The runs cannot tell whether the job went the way the breakdown predicted."


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench state_cache`` prints: whose figures, the measured table (each
    speedup the median of the rounds' ratios with its interval) beside the seed's figures, the
    batched write-back against its breakdown's prediction.

    Example::

        >>> from skewlab.experiments.state_cache import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        This run (tiny, this machine): FLIP-325 count job, 20,000 records, parallelism 1, ...
    """
    s = bench_summary(result)
    lines = [
        f"{_whose(result)}: FLIP-325 count job, {s['records']:,} records, parallelism 1, "
        f"checkpoint every 1 s, {s['runs']} round(s); headline: job throughput; speedup over "
        "RocksDB: the median of the rounds' ratios [bootstrap interval]",
        f"{'side':>20} {'cache':>6} {'hit ratio':>9} {'seed':>5} {'job rec/s':>10} "
        f"{'speedup':>28} {'seed':>6} {'op CPU':>7} {'op wall':>7}",
    ]
    for t in s["by_cache_size"]:
        size = "-" if t["cache_size"] is None else f"{t['cache_size']:,}"
        speedup = estimate_text(_interval(t), ".3f") if t["cache_size"] else "-"
        lines.append(
            f"{SIDE_LABELS[t['side']]:>20} {size:>6} {number(t['hit_ratio'], '9.1%')} "
            f"{number(t['seed_hit_ratio'], '5.0%'):>5} "
            f"{number(t[HEADLINE_MEASURE]['median'], '10,.0f')} "
            f"{speedup:>28} {number(t['seed_speedup'], '5.3g')}x "
            f"{number(t.get('operator_speedup'), '6.2f')}x "
            f"{number(t.get('operator_wall_speedup'), '6.2f')}x"
        )
    if s["sweep"]:
        points = ", ".join(
            f"{p['cache_size'] if p['cache_size'] is not None else 'none'}: "
            f"{number(p['hit_ratio'], '.0%', 'n/a')}"
            for p in s["sweep"]
        )
        lines.append(f"sweep, one run per size (cache size: hit ratio): {points}")
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
    if s.get("batched_over_lru_250") is not None or costs:
        lines.append(describe_batched(result))
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
            f"{run.state_reads:,} RocksDB reads, {run.state_writes:,} RocksDB writes (measured "
            f"now, on this machine: one job of {n_records:,} records)"
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
        f"{_whose(result)}: us per record of each part (the difference of consecutive steps' "
        "median job times), the floor (the whole pass-through job) and Spark's own "
        "aggregation:",
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
