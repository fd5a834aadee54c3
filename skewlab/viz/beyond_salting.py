"""Chapter 10's figures: key splitting (PKG, D-Choices, W-Choices) beside naive and salting.

Every function takes a ``skewlab bench splitting`` result (a ``BenchResult``, its JSON dict or
the shipped reference) or its summary; every sentence is computed from it, and every title,
caption and printed block says whose figures it shows (this run, the reference, simulated;
:func:`skewlab.viz.titles.whose_figures`). The measured job throughput is by slope (one over
the job's per-record cost between two input sizes,
:mod:`skewlab.experiments.rounds`); each speedup comes with its bootstrap interval.

Example::

    >>> from skewlab.experiments.splitting import run_experiment
    >>> result = run_experiment("tiny", progress=False)                    # doctest: +SKIP
    >>> splitting_table(result)                                            # doctest: +SKIP
    >>> print(describe_splitting(result))                                  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from skewlab.experiments.cache_admission import flip325_trace, zipf_trace
from skewlab.experiments.results import bench_rows, bench_summary
from skewlab.experiments.splitting import PAPERS, SIDES, routed_loads, zipf_senders
from skewlab.state.cache_admission import POLICIES, hits
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, TEMPLATE
from skewlab.viz.text import estimate_text, spread_text
from skewlab.viz.titles import whose_figures

__all__ = [
    "LABELS",
    "POLICY_LABELS",
    "admission_explorer",
    "admission_figure",
    "admission_table",
    "describe_policies",
    "format_policy_summary",
    "policy_figure",
    "policy_table",
    "describe_admission",
    "describe_splitting",
    "format_cache_admission_summary",
    "format_splitting_summary",
    "imbalance_figure",
    "simulated_figure",
    "simulated_throughput_figure",
    "describe_simulated_throughput",
    "splitting_explorer",
    "splitting_table",
    "throughput_figure",
]

#: How each side reads in a legend or a table.
LABELS = {
    "naive": "naive (hash by key group)",
    "salted": "salted, N = p",
    "pkg": "PKG (two choices)",
    "dchoices": "D-Choices",
    "wchoices": "W-Choices",
}


#: How each cache policy reads in a legend or a table.
POLICY_LABELS = {"lru": "LRU (FLIP-325)", "tinylfu": "W-TinyLFU", "opt": "OPT (offline ceiling)"}
_POLICY_COLORS = {"lru": COLORS["cached"], "tinylfu": COLORS["buffered"], "opt": COLORS["mark"]}


def _summary(result) -> dict[str, Any]:
    summary = bench_summary(result) if not _is_summary(result) else result
    return dict(summary)


def _is_summary(result) -> bool:
    return isinstance(result, dict) and "by_workload" in result


def _whose(result) -> str:
    """Whose figures ``result`` holds: the reference's, this run's, or -- for a bare summary,
    which does not say -- the summary's own ``shown`` (else "these runs")."""
    if _is_summary(result):
        return result.get("shown") or "these runs"
    return whose_figures(result)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


#: The measure this module's words describe; a summary taken with another says which it was.
SLOPE_MEASURE = "job_records_per_second"


def _measure_words(summary: dict[str, Any]) -> str:
    """How the summary's job throughput was measured: by slope, or -- for a summary taken
    before -- its own measure, named."""
    measure = summary.get("headline_measure", SLOPE_MEASURE)
    if measure == SLOPE_MEASURE:
        return (
            "job throughput by slope (one over the per-record job cost between a quarter of the "
            "views and all of them)"
        )
    return f"job throughput as {measure} (the measure this summary was taken with)"


def splitting_table(result) -> pd.DataFrame:
    """One row per workload, parallelism and side: job throughput by slope (median
    [min..max] over the rounds), its speedup over naive with its bootstrap interval, the
    routed stage's imbalance and skew score, state replicas per hot key, extra state bytes and
    order violations.

    Example::

        >>> splitting_table({"by_workload": []}).empty
        True
    """
    rows = []
    for entry in _summary(result)["by_workload"]:
        for side in SIDES:
            e = entry[side]
            rows.append({
                "workload": entry["workload"],
                "p": entry["parallelism"],
                "side": LABELS[side],
                "job records/s": spread_text(e["throughput"], ",.0f"),
                "speedup over naive": _speedup_text(e),
                "imbalance max/mean": e["imbalance_max_over_mean"]["median"],
                "skew score %": e["skew_score"]["median"],
                "replicas per hot key (10 hottest)": e["state_replicas_per_hot_key"],
                "extra state bytes": e["extra_state_bytes"],
                "order violations": e["order_violations"],
            })  # fmt: skip
    return pd.DataFrame(rows)


def _speedup_text(side: dict[str, Any]) -> str:
    """A side's speedup over naive with its interval (``-``: not measured)."""
    interval = side.get("speedup_over_naive_interval")
    if interval is None and side.get("speedup_over_naive") is not None:
        interval = {"value": side["speedup_over_naive"]}
    return estimate_text(interval, ".2f")


def _points(summary: dict[str, Any]) -> list[str]:
    return [f"{e['workload']}, p={e['parallelism']}" for e in summary["by_workload"]]


def _bars_by_side(result, measure: str, title: str, yaxis_title: str) -> go.Figure:
    """Per side and workload, the median of ``measure`` (a min / median / max spread of the
    runs) as a bar, min..max as its error bar."""
    summary = _summary(result)
    fig = go.Figure()
    for side in SIDES:
        spreads = [e[side][measure] for e in summary["by_workload"]]
        fig.add_bar(
            name=LABELS[side],
            x=_points(summary),
            y=[s["median"] for s in spreads],
            marker_color=COLORS[side],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [_gap(s["max"], s["median"]) for s in spreads],
                "arrayminus": [_gap(s["median"], s["min"]) for s in spreads],
            },
        )
    fig.update_layout(template=TEMPLATE, title=title, yaxis_title=yaxis_title, barmode="group")
    return fig


def _gap(high: float | None, low: float | None) -> float | None:
    return None if high is None or low is None else high - low


def imbalance_figure(result) -> go.Figure:
    """The routed stage's busiest subtask over the mean (median of runs, min..max), per side
    and workload (1 is perfect balance).

    Example::

        >>> len(imbalance_figure({"by_workload": []}).data)
        5
    """
    fig = _bars_by_side(
        result,
        "imbalance_max_over_mean",
        f"{_capital(_whose(result))}: busiest subtask over the mean (1 = perfectly balanced)",
        "max / mean records per subtask",
    )
    fig.add_hline(y=1, line_dash="dot", line_color=COLORS["parity"])
    return fig


def throughput_figure(result) -> go.Figure:
    """Job throughput by slope, median with min..max over the rounds, per side and workload.

    Example::

        >>> len(throughput_figure({"by_workload": []}).data)
        5
    """
    return _bars_by_side(
        result,
        "throughput",
        f"{_capital(_whose(result))}: job throughput by slope (median, min..max of the rounds)",
        "records / s",
    )


def simulated_figure(result) -> go.Figure:
    """Simulated (the routing alone, no job): the busiest subtask over the mean as ``p`` grows,
    per side, for each workload.

    Example::

        >>> len(simulated_figure({"by_workload": [], "simulated": []}).data)
        0
    """
    summary = _summary(result)
    fig = go.Figure()
    workloads = list(dict.fromkeys(r["workload"] for r in summary["simulated"]))
    for w, workload in enumerate(workloads):
        for side in SIDES:
            mine = [
                r
                for r in summary["simulated"]
                if (r["workload"], r["strategy"]) == (workload, side)
            ]
            fig.add_scatter(
                name=f"{LABELS[side]}, {workload}",
                x=[r["parallelism"] for r in mine],
                y=[r["imbalance_max_over_mean"] for r in mine],
                mode="lines+markers",
                line={"color": COLORS[side], "dash": ("solid", "dot", "dash", "dashdot")[w % 4]},
            )
    fig.update_layout(
        template=TEMPLATE,
        title=f"Simulated routing (the keys of {_whose(result)}): busiest subtask over the "
        "mean as p grows",
        xaxis={"title": "parallelism p", "type": "log"},
        yaxis={"title": "max / mean records per subtask", "type": "log"},
    )
    return fig


def simulated_throughput_figure(result) -> go.Figure:
    """Simulated from the measured per-record costs (no job runs): each side's job throughput
    over naive's as ``p`` grows, stages in turn as Spark runs them (solid) and the partial stage
    alone, as if the merge cost nothing (dotted), at the headline workload.

    Example::

        >>> len(simulated_throughput_figure({"by_workload": [], "simulated": []}).data)
        0
    """
    summary = _summary(result)
    rows = _modelled_rows(summary)
    fig = go.Figure()
    for side in SIDES[1:]:
        mine = [r for r in rows if r["strategy"] == side]
        if not mine:
            continue
        for key, dash, suffix in (
            ("speedup_over_naive_in_turn", "solid", ""),
            ("speedup_over_naive_partial_stage_only", "dot", ", partial stage alone"),
        ):
            fig.add_scatter(
                name=LABELS[side] + suffix,
                x=[r["parallelism"] for r in mine],
                y=[r[key] for r in mine],
                mode="lines+markers",
                line={"color": COLORS[side], "dash": dash},
            )
    if rows:
        fig.add_hline(y=1, line_dash="dot", line_color=COLORS["parity"])
    fig.update_layout(
        template=TEMPLATE,
        title=f"Simulated job throughput over naive's, {rows[0]['workload'] if rows else ''} "
        f"(from the per-record costs measured by {_whose(result)})",
        xaxis={"title": "parallelism p", "type": "log"},
        yaxis={"title": "throughput / naive's"},
    )
    return fig


def _modelled_rows(summary: dict[str, Any]) -> list[dict]:
    """The simulated rows with a modelled throughput, at the headline workload."""
    point = summary.get("headline_point") or {}
    rows = [r for r in summary.get("simulated") or [] if "speedup_over_naive_in_turn" in r]
    return [r for r in rows if r["workload"] == point.get("workload", r["workload"])]


def describe_simulated_throughput(result) -> str:
    """Sentences about the simulated throughput at the largest ``p``, computed from the result:
    what the model was calibrated on (whose runs), how close it came to those runs' own job
    times there, and each side's speedup over naive with and without the merge, each with the
    interval the costs' resamples give it.

    Example::

        >>> describe_simulated_throughput({"by_workload": [], "simulated": []})
        'nothing simulated'
    """
    summary = _summary(result)
    rows, model = _modelled_rows(summary), summary.get("model")
    if not rows or not model:
        return "nothing simulated"
    p = max(r["parallelism"] for r in rows)
    at = {r["strategy"]: r for r in rows if r["parallelism"] == p}
    checks = [c for c in model["check_at_calibration"] if c["workload"] == rows[0]["workload"]]
    slots = model["task_slots"]
    calibrated = model["calibrated_at_parallelism"]

    def speedup(row: dict, key: str) -> str:
        return estimate_text(row.get(f"{key}_interval") or {"value": row[key]}, ".2f")

    lines = [
        f"Simulated from the per-record costs measured by {_whose(result)}, "
        f"{rows[0]['workload']}, p={p}: job throughput over naive's, stages in turn "
        "(pipelined): "
        + ", ".join(
            f"{LABELS[s]} {speedup(at[s], 'speedup_over_naive_in_turn')} "
            f"({speedup(at[s], 'speedup_over_naive_pipelined')})"
            for s in SIDES[1:]
            if s in at
        )
        + "; the partial stage alone (a merge costing nothing): "
        + ", ".join(
            f"{LABELS[s]} {speedup(at[s], 'speedup_over_naive_partial_stage_only')}"
            for s in SIDES[1:]
            if s in at
        )
        + " (each interval: the simulation repeated over resamples of the rounds).",
        f"The costs were measured at p={calibrated} on {slots} task slots"
        + (f" ({summary['spark_master']})" if summary.get("spark_master") else "")
        + (
            " (more subtasks than slots: the check below mixes in the sharing)"
            if calibrated > slots
            else ""
        )
        + "; the model's job time there over the measured one (by slope): "
        + (
            ", ".join(
                f"{LABELS[c['strategy']]} {c['predicted_over_measured']:.2f}"
                for c in checks
                if c["predicted_over_measured"] is not None
            )
            or "none measured"
        )
        + ".",
    ]
    split = [
        c["predicted_over_measured"]
        for c in checks
        if c["strategy"] != "naive" and c["predicted_over_measured"] is not None
    ]
    if split and max(split) < 1:
        lines.append(
            "The model leaves out what only the split sides pay outside their operators (the "
            "senders' routing pass, the second shuffle): it gives them less time than they took "
            "in those runs, so their simulated speedups above are, if anything, too high."
        )
    elif split and min(split) > 1:
        lines.append(
            "The model gives the split sides more time than they took in those runs: their "
            "simulated speedups above are, if anything, too low."
        )
    return "\n".join(lines)


def describe_splitting(result) -> str:
    """Sentences about the headline point, computed from the result (whose figures they are,
    the speedups with their intervals, and the papers' claims beside them).

    Example::

        >>> describe_splitting({"by_workload": []})
        'nothing measured'
    """
    summary = _summary(result)
    point = summary.get("headline_point")
    if point is None:
        return "nothing measured"
    intervals = summary.get("intervals") or {}
    imb = {s: summary.get(f"imbalance_max_over_mean_{s}") for s in SIDES}
    speed = {
        s: intervals.get(f"speedup_over_naive_{s}")
        or ({"value": summary[f"speedup_over_naive_{s}"]}
            if summary.get(f"speedup_over_naive_{s}") else None)
        for s in SIDES
    }  # fmt: skip
    reps = {s: summary.get(f"state_replicas_per_hot_key_{s}") for s in SIDES}
    runs = summary.get("runs")
    lines = [
        f"{_capital(_whose(result))}, {point['workload']}, p={point['parallelism']}: the "
        "busiest subtask carries "
        + ", ".join(f"{imb[s]:.3f}x" + f" ({LABELS[s]})" for s in SIDES if imb[s] is not None)
        + " the mean.",
        f"Job throughput over naive's (ratios of the medians of {runs} round(s), with their "
        "bootstrap intervals): "
        + (
            ", ".join(
                f"{LABELS[s]} {estimate_text(speed[s], '.2f')}"
                for s in SIDES[1:]
                if speed[s] is not None
            )
            or "not measured (no job took longer over the larger input than over the smaller)"
        )
        + ".",
        "State replicas per hot key (the 10 hottest keys): "
        + ", ".join(f"{LABELS[s]} {reps[s]:.1f}" for s in SIDES if reps[s] is not None)
        + ".",
        f"Every digest equal to the reference's: {summary.get('all_digests_match')}.",
        "The papers: " + "; ".join(PAPERS.values()) + ".",
    ]
    return "\n".join(lines)


def format_splitting_summary(result) -> str:
    """What ``skewlab bench splitting`` prints, headed by whose figures they are.

    Example::

        >>> print(format_splitting_summary({"by_workload": []}))
        nothing measured
    """
    summary = _summary(result)
    if not summary["by_workload"]:
        return "nothing measured"
    table = splitting_table(summary)
    lines = [
        f"{_whose(result)}: {_measure_words(summary)}, records/s: median [min..max] of "
        f"{summary.get('runs')} round(s); speedup = side / naive of the medians ["
        "bootstrap interval]",
        table.to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        "",
    ]
    lines.append(describe_splitting(result))
    sim = summary.get("simulated") or []
    if sim:
        frame = pd.DataFrame(sim).pivot_table(
            index=["workload", "parallelism"], columns="strategy", values="imbalance_max_over_mean"
        )[list(SIDES)]
        lines += [
            "",
            f"simulated routing (no job) of the keys of {_whose(result)}, max / mean:",
            frame.round(3).to_string(),
        ]
    if _modelled_rows(summary):
        frame = pd.DataFrame(_modelled_rows(summary)).pivot_table(
            index=["workload", "parallelism"],
            columns="strategy",
            values="speedup_over_naive_in_turn",
        )[list(SIDES)]
        lines += [
            "",
            "simulated job throughput over naive's (stages in turn, from the per-record costs "
            f"measured by {_whose(result)}):",
            frame.round(3).to_string(),
            describe_simulated_throughput(result),
        ]
    return "\n".join(lines)


def splitting_explorer(
    n_records: int = 100_000, tweets: int = 20_000, skew: float = 1.0, parallelism: int = 4
) -> Explorer:
    """Sliders for skew, ``p``, D-Choices' ``d`` (0: the paper's bound) and the hot threshold
    (0: ``2 / (5 p)``): each side's routing of ``n_records`` Zipf keys (two senders) redrawn --
    simulated, no job runs.

    Example::

        >>> explorer = splitting_explorer(n_records=2_000, tweets=100)
        >>> _ = explorer.update(parallelism=8, choices=3)
        >>> explorer.figures[0].layout.title.text.startswith("Simulated")
        True
    """
    controls = {
        "skew": widgets.FloatSlider(
            value=skew, min=0.5, max=2.0, step=0.1, description="Zipf skew", style=WIDGET_STYLE
        ),
        "parallelism": widgets.IntSlider(
            value=parallelism, min=2, max=128, description="parallelism p", style=WIDGET_STYLE
        ),
        "choices": widgets.IntSlider(
            value=0, min=0, max=128, description="D-Choices d (0: the bound)", style=WIDGET_STYLE
        ),
        "hot_threshold": widgets.FloatSlider(
            value=0.0,
            min=0.0,
            max=0.5,
            step=0.01,
            description="hot threshold (0: 2/(5p))",
            style=WIDGET_STYLE,
        ),
    }

    def draw(skew, parallelism, choices, hot_threshold):
        keys, salts = zipf_senders(n_records, tweets, skew)
        d = min(choices, parallelism) if choices else 0
        fig = go.Figure()
        rows = []
        for side in SIDES:
            loads = routed_loads(
                keys, parallelism, side, salt_hashes=salts, choices=d, hot_threshold=hot_threshold
            )
            fig.add_bar(name=LABELS[side], x=list(range(parallelism)), y=loads.tolist(),
                        marker_color=COLORS[side])  # fmt: skip
            rows.append({"side": LABELS[side], "max / mean": round(loads.max() / loads.mean(), 3)})
        fig.update_layout(
            template=TEMPLATE,
            title=(
                f"Simulated routing: records per subtask, Zipf {skew:g}, p={parallelism}, "
                f"D-Choices d={d or 'by the bound'}"
            ),
            xaxis_title="subtask",
            yaxis_title="records",
            barmode="group",
        )
        return [fig, pd.DataFrame(rows)]

    return Explorer(controls, draw).start()


def admission_explorer(
    requests: int = 100_000, n_keys: int | None = None, skew: float = 1.0, capacity: int = 500
) -> Explorer:
    """Sliders for the cache size and the Zipf skew (or FLIP-325's key sequence): the hit ratio
    of LRU, W-TinyLFU and OPT over ``requests`` keys drawn over ``n_keys`` (default a tenth of
    the requests, the issue's ratio) redrawn -- simulated, a replay of the keys, no job runs.

    Example::

        >>> explorer = admission_explorer(requests=5_000)
        >>> _ = explorer.update(capacity=250, trace="FLIP-325's keys")
        >>> explorer.figures[0].layout.title.text
        "Simulated hit ratio, FLIP-325's keys, 250 entries"
        >>> explorer.outputs[1]["hit ratio"].tolist()[0]  # LRU at 250 entries: FLIP-325's 0 %
        0.0
    """
    n_keys = n_keys or max(requests // 10, 1)
    controls = {
        "capacity": widgets.IntSlider(
            value=capacity, min=10, max=2_000, step=10, description="cache entries",
            style=WIDGET_STYLE,
        ),
        "skew": widgets.FloatSlider(
            value=skew, min=0.5, max=1.5, step=0.1, description="Zipf skew", style=WIDGET_STYLE
        ),
        "trace": widgets.Dropdown(
            options=["Zipf", "FLIP-325's keys"], value="Zipf", description="keys",
            style=WIDGET_STYLE,
        ),
    }  # fmt: skip

    def draw(capacity, skew, trace):
        zipf = trace == "Zipf"
        keys = zipf_trace(requests, n_keys, skew) if zipf else flip325_trace(requests)
        name = f"Zipf {skew:g} over {n_keys:,} keys" if zipf else "FLIP-325's keys"
        ratios = {policy: hits(keys, capacity, policy) / requests for policy in POLICIES}
        fig = go.Figure()
        fig.add_bar(
            x=[POLICY_LABELS[p] for p in POLICIES],
            y=list(ratios.values()),
            marker_color=[_POLICY_COLORS[p] for p in POLICIES],
        )
        fig.update_layout(
            template=TEMPLATE,
            title=f"Simulated hit ratio, {name}, {capacity:,} entries",
            yaxis={"title": "hit ratio", "tickformat": ".0%", "range": [0, 1]},
        )
        table = pd.DataFrame(
            {"policy": [POLICY_LABELS[p] for p in POLICIES], "hit ratio": list(ratios.values())}
        )
        return [fig, table]

    return Explorer(controls, draw).start()


def admission_table(result) -> pd.DataFrame:
    """Simulated hit ratios: one row per trace and cache size, one column per policy.

    Example::

        >>> rows = [{"trace": "zipf1", "capacity": 500, "policy": p, "hit_ratio": h}
        ...         for p, h in (("lru", 0.4), ("tinylfu", 0.5), ("opt", 0.6))]
        >>> admission_table({"rows": rows, "summary": {}}).columns.tolist()
        ['trace', 'entries', 'LRU (FLIP-325)', 'W-TinyLFU', 'OPT (offline ceiling)']
    """
    rows = bench_rows(result)
    table = rows.pivot_table(
        index=["trace", "capacity"], columns="policy", values="hit_ratio", aggfunc="first"
    )[list(POLICIES)]
    table = (
        table.rename(columns=POLICY_LABELS).reset_index().rename(columns={"capacity": "entries"})
    )
    table.columns.name = None
    return table


def admission_figure(result) -> go.Figure:
    """Simulated hit ratio against cache size, one line per policy and trace.

    Example::

        >>> rows = [{"trace": "zipf1", "capacity": c, "policy": p, "hit_ratio": 0.5}
        ...         for c in (250, 500) for p in ("lru", "tinylfu", "opt")]
        >>> len(admission_figure({"rows": rows, "summary": {}}).data)
        3
    """
    rows = bench_rows(result)
    fig = go.Figure()
    dashes = ("solid", "dot", "dash", "dashdot")
    for t, trace in enumerate(dict.fromkeys(rows["trace"])):
        for policy in POLICIES:
            mine = rows[(rows["trace"] == trace) & (rows["policy"] == policy)]
            fig.add_scatter(
                name=f"{POLICY_LABELS[policy]}, {trace}",
                x=mine["capacity"].tolist(),
                y=mine["hit_ratio"].tolist(),
                mode="lines+markers",
                line={"color": _POLICY_COLORS[policy], "dash": dashes[t % len(dashes)]},
            )
    fig.update_layout(
        template=TEMPLATE,
        title="Simulated hit ratio against cache size",
        xaxis_title="cache entries",
        yaxis={"title": "hit ratio", "tickformat": ".0%"},
    )
    return fig


def describe_admission(result) -> str:
    """Sentences about the simulated hit ratios at 500 entries (FLIP-325's middle size), the
    issue's own simulation beside where the trace is its size.

    Example::

        >>> describe_admission({"summary": {"traces": [], "capacities": []}, "rows": []})
        'nothing simulated'
    """
    summary = bench_summary(result)
    if not summary.get("traces"):
        return "nothing simulated"
    capacity = 500 if 500 in summary["capacities"] else summary["capacities"][0]
    lines = []
    for trace in summary["traces"]:
        got = {p: summary.get(f"hit_ratio_{p}_{capacity}_{trace}") for p in POLICIES}
        lines.append(
            f"Simulated, {trace}, {capacity} entries: "
            + ", ".join(f"{POLICY_LABELS[p]} {got[p]:.1%}" for p in POLICIES)
            + "."
        )
    issue = summary.get("issue_simulation") or {}
    if summary.get("requests") == 1_000_000 and summary.get("n_keys") == 100_000:
        for trace, theirs in issue.items():
            ours = {p: summary.get(f"hit_ratio_{p}_1000_{trace}") for p in POLICIES}
            if None not in ours.values():
                lines.append(
                    f"The issue's own simulation, {trace}, 1,000 entries: "
                    + ", ".join(f"{POLICY_LABELS[p]} {theirs[p]:.1%}" for p in POLICIES)
                    + "; here: "
                    + ", ".join(f"{ours[p]:.1%}" for p in POLICIES)
                    + "."
                )
    return "\n".join(lines)


def format_cache_admission_summary(result) -> str:
    """What ``skewlab bench cache_admission`` prints: the simulated hit ratios and sentences.

    Example::

        >>> from skewlab.experiments.cache_admission import run_experiment
        >>> print(format_cache_admission_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
    """  # noqa: E501
    table = admission_table(result)
    return "\n".join(
        [
            f"simulated ({whose_figures(result)}: a replay of the keys, no job): hit ratio by "
            "policy",
            table.to_string(index=False, float_format=lambda v: f"{v:.3f}"),
            "",
            describe_admission(result),
        ]
    )


def _over_lru(summary: dict[str, Any], entry: dict[str, Any]) -> str:
    """W-TinyLFU's job throughput over LRU's at one trace and size: with its interval where the
    summary keeps one, else the rounds' median [min..max]."""
    key = f"tinylfu_over_lru_{entry['cache_size']}_{entry['trace']}"
    interval = (summary.get("intervals") or {}).get(key)
    if interval is not None:
        return estimate_text(interval, ".2f")
    return spread_text(entry["tinylfu_over_lru"], ".2f", "x")


def policy_table(result) -> pd.DataFrame:
    """Real runs (``skewlab bench state_cache --cache-policy tinylfu``): per trace and cache
    size, each policy's hit ratio (OPT replayed over the run's trace) and its job throughput
    over RocksDB alone's, median [min..max] over the rounds; W-TinyLFU's over LRU's with its
    interval where the summary keeps one.

    Example::

        >>> table = policy_table({"summary": {"policy_table": [{"trace": "zipf1",
        ...     "cache_size": 500, "hit_ratio_opt": 0.6, "hit_ratio_lru": 0.4,
        ...     "hit_ratio_tinylfu": 0.5, "speedup_lru": {"min": 1, "median": 1, "max": 1},
        ...     "speedup_tinylfu": {"min": 2, "median": 2, "max": 2},
        ...     "tinylfu_over_lru": {"min": 2, "median": 2, "max": 2}}]}})
        >>> table.columns.tolist()[:5]
        ['trace', 'entries', 'LRU hits', 'W-TinyLFU hits', 'OPT hits']
    """
    summary = bench_summary(result)
    rows = []
    for t in summary.get("policy_table") or []:
        rows.append({
            "trace": t["trace"],
            "entries": t["cache_size"],
            "LRU hits": t["hit_ratio_lru"],
            "W-TinyLFU hits": t["hit_ratio_tinylfu"],
            "OPT hits": t["hit_ratio_opt"],
            "LRU x RocksDB": spread_text(t["speedup_lru"], ".2f", "x"),
            "W-TinyLFU x RocksDB": spread_text(t["speedup_tinylfu"], ".2f", "x"),
            "W-TinyLFU / LRU": _over_lru(summary, t),
        })  # fmt: skip
    return pd.DataFrame(rows)


def policy_figure(result) -> go.Figure:
    """Real runs: hit ratio against cache size per policy, one panel per trace; OPT (replayed
    over each run's own trace) dashed; the title says whose runs.

    Example::

        >>> summary = {"policy_table": [{"trace": "zipf1", "cache_size": c, "hit_ratio_lru": .4,
        ...     "hit_ratio_tinylfu": .5, "hit_ratio_opt": .6} for c in (250, 500)]}
        >>> fig = policy_figure({"size": "tiny", "summary": summary})
        >>> len(fig.data), fig.layout.title.text.split(":")[0]
        (3, 'This run (tiny, this machine)')
    """
    from plotly.subplots import make_subplots

    table = bench_summary(result).get("policy_table") or []
    traces = list(dict.fromkeys(t["trace"] for t in table))
    fig = make_subplots(rows=1, cols=max(1, len(traces)), subplot_titles=traces, shared_yaxes=True)
    for col, trace in enumerate(traces, start=1):
        mine = [t for t in table if t["trace"] == trace]
        for policy in POLICIES:
            fig.add_scatter(
                name=POLICY_LABELS[policy],
                legendgroup=policy,
                showlegend=col == 1,
                x=[t["cache_size"] for t in mine],
                y=[t[f"hit_ratio_{policy}"] for t in mine],
                mode="lines+markers",
                line={"color": _POLICY_COLORS[policy], "dash": "dash" if policy == "opt" else None},
                row=1,
                col=col,
            )
    fig.update_layout(
        template=TEMPLATE,
        title=f"{_capital(whose_figures(result))}: hit ratio on real runs (the count job on "
        "Spark), by cache size",
        yaxis={"title": "hit ratio", "tickformat": ".0%"},
    )
    fig.update_xaxes(title_text="cache entries", type="category")
    return fig


def describe_policies(result, *, which: str | None = None) -> str:
    """Sentences about the policies on real runs at 500 entries (FLIP-325's middle size),
    computed from the summary; ``which`` says whose figures they are (default: the result's
    own, :func:`~skewlab.viz.titles.whose_figures`).

    Example::

        >>> describe_policies({"summary": {}})
        'no real runs of the cache policies (skewlab bench state_cache --cache-policy tinylfu)'
    """
    summary = bench_summary(result)
    table = summary.get("policy_table") or []
    if not table:
        return (
            "no real runs of the cache policies (skewlab bench state_cache --cache-policy tinylfu)"
        )
    which = which or whose_figures(result)
    sizes = sorted({t["cache_size"] for t in table})
    size = 500 if 500 in sizes else sizes[0]
    lines = []
    for t in (t for t in table if t["cache_size"] == size):
        gain = t["hit_ratio_tinylfu"] - t["hit_ratio_lru"]
        lines.append(
            f"{_capital(which)}, {t['trace']}, {size} entries: W-TinyLFU hits "
            f"{t['hit_ratio_tinylfu']:.1%} of lookups, LRU {t['hit_ratio_lru']:.1%} "
            f"({gain * 100:+.1f} points), OPT {t['hit_ratio_opt']:.1%}; job throughput "
            f"{_over_lru(summary, t)} LRU's."
        )
    if summary.get("policy_traces_match_runs"):
        lines.append(
            "Every run's hit count equals its access trace replayed by the pure-Python policy "
            "(an independent implementation), so OPT over that trace is the ceiling of the "
            "same lookups."
        )
    return "\n".join(lines)


def format_policy_summary(result, *, which: str | None = None) -> str:
    """The cache policies on real runs as text, headed by whose figures they are: the table
    and its sentences (what ``skewlab bench state_cache --cache-policy tinylfu`` prints after
    the seed's part).

    Example::

        >>> format_policy_summary({"summary": {}})
        'no real runs of the cache policies (skewlab bench state_cache --cache-policy tinylfu)'
    """
    summary = bench_summary(result)
    if not summary.get("policy_table"):
        return describe_policies(result, which=which)
    which = which or whose_figures(result)
    return "\n".join(
        [
            f"{which}: cache policies on real runs, {summary.get('policy_n', 0):,} records per "
            f"trace ({summary.get('policy_keys', 0):,} keys for Zipf): hit ratio measured, OPT "
            "replayed over each run's access trace; job throughput x RocksDB alone's, "
            "median [min..max]; W-TinyLFU / LRU with its interval over the rounds where kept",
            policy_table(result).to_string(index=False, float_format=lambda v: f"{v:.3f}"),
            describe_policies(result, which=which),
        ]
    )
