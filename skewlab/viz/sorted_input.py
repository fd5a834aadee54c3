"""Notebook 05, sorted input with single-key state (FLIP-140): WordCount time per strategy,
peak memory at two K, the runs under a memory cap per Python worker, the unsorted-input error,
and the ValueState micro-benchmark.

Every function takes a :class:`~skewlab.experiments.results.BenchResult` of
:mod:`skewlab.experiments.sorted_input` or :mod:`skewlab.experiments.value_state`, or its JSON
(the shipped reference is one), and returns a pandas DataFrame (with ``caption=True``, a table
captioned with whose figures it shows), a plotly figure whose title starts with whose figures it
plots, or sentences that say it first. Every ratio is printed with its interval
(``summary["intervals"]``).

Example::

    >>> from skewlab.experiments.sorted_input import run_experiment
    >>> result = run_experiment("tiny", progress=False)                 # doctest: +SKIP
    >>> strategy_time_figure(result).show()                            # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from skewlab.engine.worker_memory import OUT_OF_MEMORY, WORKER_DID_NOT_START
from skewlab.experiments.intervals import Estimate
from skewlab.experiments.memory_cap import EXPERIMENT as MEMORY_CAP
from skewlab.experiments.memory_cap import FINISHED
from skewlab.experiments.memory_cap import STRATEGIES as CAP_STRATEGIES
from skewlab.experiments.references import load_reference
from skewlab.experiments.results import BenchResult, bench_summary
from skewlab.experiments.sorted_input import HEADLINE_MEASURE, RATIOS, ratio_spread
from skewlab.experiments.value_state import BACKENDS, OPERATIONS, SEED_OPS_PER_MS, SHORT_NAMES
from skewlab.experiments.value_state import RATIOS as VALUE_STATE_RATIOS
from skewlab.inputs.wordcount import wordcount_input
from skewlab.strategies.count import run_count
from skewlab.viz.palette import COLORS, LABELS, TEMPLATE
from skewlab.viz.reference_section import THIS_RUN, summary_shown
from skewlab.viz.render import readable_number
from skewlab.viz.text import estimate_text, number, spread_text, times
from skewlab.viz.titles import whose_figures

__all__ = [
    "describe",
    "describe_memory_cap",
    "describe_value_state",
    "format_memory_cap_summary",
    "format_summary",
    "format_value_state_summary",
    "memory_by_k_figure",
    "memory_cap_figure",
    "memory_cap_shown",
    "memory_cap_table",
    "strategy_table",
    "strategy_time_figure",
    "unsorted_input_demo",
    "value_state_figure",
    "value_state_table",
]


#: How the count strategies read in a legend or a table.
STRATEGY_LABELS = LABELS["count"]


def _whose(result) -> str:
    """Whose figures ``result`` holds, capitalised to open a title or a sentence."""
    whose = whose_figures(result)
    return whose[0].upper() + whose[1:]


def _rows(result) -> list[dict[str, Any]]:
    """A result's rows: a ``BenchResult``'s or its JSON's (a reference ships its rows)."""
    if isinstance(result, dict):
        return result.get("rows") or []
    return getattr(result, "rows", None) or []


def _styled(frame: pd.DataFrame, caption: str):
    """``frame`` as a table captioned ``caption``, its floats as a reader reads them."""
    floats = list(frame.select_dtypes("float").columns)
    return frame.style.format(readable_number, subset=floats, na_rep="-").set_caption(caption)


def _estimate(summary: dict, key: str) -> Estimate | None:
    """A ratio of the summary with its interval where it has one (``None``: not measured)."""
    if summary.get(key) is None:
        return None
    return Estimate.from_json((summary.get("intervals") or {}).get(key) or summary[key])


def _job_over_sorted(summary: dict, strategy: str) -> Estimate | None:
    """A strategy's job time over sorted input's, with its interval (sort-then-group's: the
    inverse of sorted input's over it)."""
    if strategy == "sorted":
        return None
    if strategy == "sort_group":
        inverse = _estimate(summary, "sorted_over_sort_group")
        if inverse is None or not inverse.value:
            return None
        if not inverse.has_interval or not inverse.low:
            return Estimate(1 / inverse.value, runs=inverse.runs)
        return Estimate(1 / inverse.value, 1 / inverse.high, 1 / inverse.low, inverse.runs,
                        inverse.method)  # fmt: skip
    return _estimate(summary, f"{strategy}_over_sorted")


def strategy_table(result, *, caption: bool = False):
    """Per strategy: job seconds (the headline, median [min, max]) and the breakdown beside
    it, each strategy's time over sorted input's (the median of the rounds' ratios, then with
    its interval), beside the seed's. ``caption=True``: captioned with whose figures they are.

    Example::

        >>> summary = {"runs": 3, "n": 100, "k": 10, "key_type": "int", "by_strategy": [
        ...     {"strategy": "heap", "key_type": "int", "input_order": "exchange",
        ...      "job_seconds": {"min": 1.0, "median": 1.1, "max": 1.2},
        ...      "job_records_per_second": 90.0, "operator_cpu_seconds": {"median": 0.1},
        ...      "operator_seconds": {"median": 0.1}, "peak_memory_bytes": None,
        ...      "seed_ms": 30_126}], "heap_over_sorted": 0.7, "intervals": {
        ...     "heap_over_sorted": {"value": 0.7, "low": 0.6, "high": 0.8, "runs": 3}}}
        >>> strategy_table({"summary": summary, "rows": []})["x sorted (job) [interval]"][0]
        '0.70x [0.60..0.80]'
    """
    s = bench_summary(result)
    rows = []
    by_name = {t["strategy"]: t for t in s["by_strategy"]}
    seed_sorted = by_name.get("sorted", {}).get("seed_ms")
    for t in s["by_strategy"]:
        name, mem = t["strategy"], t["peak_memory_bytes"]
        rows.append(
            {
                "strategy": STRATEGY_LABELS.get(name, name),
                "key type": t["key_type"],
                "input order": t["input_order"],
                "job s": t["job_seconds"]["median"],
                "job s (min)": t["job_seconds"]["min"],
                "job s (max)": t["job_seconds"]["max"],
                "job records/s": t["job_records_per_second"],
                "operator CPU s": t["operator_cpu_seconds"]["median"],
                "operator wall s": t["operator_seconds"]["median"],
                "traced peak MiB": None if mem is None else mem / 2**20,
                "x sorted (job)": _x_sorted(result, name, HEADLINE_MEASURE),
                "x sorted (job) [interval]": "-"
                if name == "sorted"
                else estimate_text(_job_over_sorted(s, name), ".2f"),
                "x sorted (operator CPU)": _x_sorted(result, name, "operator_cpu_seconds"),
                "seed ms": t["seed_ms"],
                "seed x sorted": _over(t["seed_ms"], seed_sorted),
            }
        )
    frame = pd.DataFrame(rows)
    if not caption:
        return frame
    return _styled(
        frame,
        f"{_whose(result)}: WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys, "
        f"{s['runs']} round(s); job seconds median [min, max]; x sorted: the median of the "
        "rounds' ratios [bootstrap interval]; the seed's Flink job times (FLIP-140) beside",
    )


def _x_sorted(result, strategy: str, field: str) -> float | None:
    if strategy == "sorted":
        return 1.0
    return ratio_spread(_rows(result), strategy, "sorted", field)["median"]


def _over(a: Any, b: Any) -> float | None:
    return a / b if a is not None and b else None


def strategy_time_figure(result) -> go.Figure:
    """Bars: each strategy's job time relative to sorted input's (the headline, the interval
    of the rounds' ratio as error bars), its operators' CPU time relative to sorted's, and the
    seed's; the title says whose figures they are first."""
    table = strategy_table(result)
    summary = bench_summary(result)
    fig = go.Figure()
    job = [_job_over_sorted(summary, _name(result, label)) for label in table["strategy"]]
    fig.add_trace(
        go.Bar(
            x=table["strategy"],
            y=table["x sorted (job)"],
            name="measured: Spark job time (sort included)",
            marker_color=COLORS["sorted"],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [_gap(e.high, e.value) if e and e.has_interval else 0.0 for e in job],
                "arrayminus": [_gap(e.value, e.low) if e and e.has_interval else 0.0 for e in job],
            },
            text=[f"{v:.2f}" if pd.notna(v) else "" for v in table["x sorted (job)"]],
        )
    )
    for column, name, color in (
        (
            "x sorted (operator CPU)",
            "measured: operator CPU time (no sort)",
            COLORS["operator_cpu"],
        ),
        ("seed x sorted", "seed: Flink job time", COLORS["seed"]),
    ):
        fig.add_trace(
            go.Bar(
                x=table["strategy"],
                y=table[column],
                name=name,
                marker_color=color,
                text=[f"{v:.2f}" if pd.notna(v) else "" for v in table[column]],
            )
        )
    fig.add_hline(y=1.0, line={"dash": "dash", "color": COLORS["mark"]})
    s = summary
    fig.update_layout(
        title=f"{_whose(result)}: WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} "
        f"keys, median of {s['runs']} round(s): " + _times_sorted(s),
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "time relative to sorted input (1 = sorted)", "type": "log"},
    )
    return fig


def _times_sorted(summary: dict) -> str:
    """'RocksDB 2.14x sorted's job time, heap 0.84x' from the summary's job-time ratios."""
    parts = [
        f"{name} {summary[key]:.2f}x"
        for name, key in (("RocksDB", "rocksdb_over_sorted"), ("heap", "heap_over_sorted"))
        if summary.get(key)
    ]
    if not parts:
        return "time / sorted"
    return f"{parts[0]} sorted's job time" + "".join(f", {p}" for p in parts[1:])


def _name(result, label: str) -> str:
    return next(
        t["strategy"]
        for t in bench_summary(result)["by_strategy"]
        if STRATEGY_LABELS.get(t["strategy"], t["strategy"]) == label
    )


def _gap(a: float | None, b: float | None) -> float:
    return a - b if a is not None and b is not None else 0.0


def _memory_title(by_k: dict) -> str:
    """How much each side's traced peak grows from the smaller K to the larger (with the
    claim's digits: two decimals for sorted input's, one for the heap's)."""
    growth = {}
    for strategy in ("heap", "sorted"):
        peaks = [v for _, v in sorted((int(k), v) for k, v in by_k.get(strategy, {}).items())]
        if len(peaks) < 2 or not peaks[0]:
            return "peak memory of a subtask (traced Python allocations), by number of keys"
        growth[strategy] = peaks[-1] / peaks[0]
    ks = sorted(int(k) for k in by_k["heap"])
    return (
        f"K = {ks[0]:,} -> {ks[-1]:,}: the heap's traced peak grows {growth['heap']:.1f}x, "
        f"sorted input's {growth['sorted']:.2f}x"
    )


def memory_by_k_figure(result) -> go.Figure:
    """Traced peak of a subtask's Python allocations at two K: sorted input (one key's state at
    a time) vs the keyed heap backend (every key's); the title says whose figures they are."""
    by_k = bench_summary(result)["peak_memory_bytes_by_k"]
    fig = go.Figure()
    for strategy in ("heap", "sorted"):
        points = sorted((int(k), v) for k, v in by_k.get(strategy, {}).items())
        fig.add_trace(
            go.Bar(
                x=[f"K = {k:,}" for k, _ in points],
                y=[v / 2**20 for _, v in points],
                name=STRATEGY_LABELS[strategy],
                marker_color=COLORS[strategy],
                text=[f"{v / 2**20:.1f}" for _, v in points],
            )
        )
    fig.update_layout(
        title=f"{_whose(result)}, one traced run per K: {_memory_title(by_k)}",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "MiB, traced peak"},
    )
    return fig


def describe(result) -> str:
    """Sentences of what a result measured -- job time ratios (the headline, each the median
    of the rounds' ratios with its interval) and operator CPU ratios, traced peak memory at two
    K -- saying whose figures they are, beside the seed's ratios, named as the seed's.

    Example::

        >>> def iv(v):
        ...     return {"value": v, "low": v * 0.9, "high": v * 1.1, "runs": 3}
        >>> summary = {"runs": 3, "n": 2_000_000, "k": 200_000, "rocksdb_over_sorted": 2.5,
        ...     "heap_over_sorted": 1.2, "sorted_over_sort_group": 1.05,
        ...     "rocksdb_over_sorted_operator_cpu": 30.0, "heap_over_sorted_operator_cpu": 3.0,
        ...     "intervals": {"rocksdb_over_sorted": iv(2.5), "heap_over_sorted": iv(1.2)},
        ...     "seed_ratios": {"rocksdb_over_sorted": 7.46, "heap_over_sorted": 1.95,
        ...                     "sorted_over_sort_group": 1.12},
        ...     "peak_memory_bytes_by_k": {"heap": {"2000": 2**20, "200000": 50 * 2**20},
        ...                                "sorted": {"2000": 2**20, "200000": 2**20}},
        ...     "all_digests_match": True}
        >>> print(describe({"size": "quick", "summary": summary}))
        This run (quick, this machine), 2,000,000 records, 200,000 keys, medians of the 3 rounds' ratios [bootstrap interval]: RocksDB's job took 2.50x [2.25..2.75] sorted input's, the heap's 1.20x [1.08..1.32] sorted input's, sorted input's 1.05x the sort-then-group baseline's; inside the operators (CPU), RocksDB 30.00x and the heap 3.00x. The seed's job times: 7.46x, 1.95x and 1.12x. Traced peak memory (one untimed run per K): heap 1.0 MiB at K=2,000, 50.0 MiB at K=200,000; sorted input 1.0 MiB at K=2,000, 1.0 MiB at K=200,000. Every run's counts equal Spark's groupBy().count(): True.
    """  # noqa: E501
    s = bench_summary(result)
    seed = s["seed_ratios"]

    def x(key: str) -> str:
        est = _estimate(s, key)
        return "-" if est is None else estimate_text(est, ".2f")

    job = [
        f"{name} {x(key)} {over}"
        for name, key, over in (
            ("RocksDB's job took", "rocksdb_over_sorted", "sorted input's"),
            ("the heap's", "heap_over_sorted", "sorted input's"),
            ("sorted input's", "sorted_over_sort_group", "the sort-then-group baseline's"),
        )
        if s.get(key) is not None
    ]
    operators = [
        f"{name} {x(key)}"
        for name, key in (
            ("RocksDB", "rocksdb_over_sorted_operator_cpu"),
            ("the heap", "heap_over_sorted_operator_cpu"),
        )
        if s.get(key) is not None
    ]
    text = (
        f"{_whose(result)}, {s['n']:,} records, {s['k']:,} keys, medians of the {s['runs']} "
        f"rounds' ratios [bootstrap interval]: {', '.join(job) or 'no ratio measured'}; inside the "
        f"operators (CPU), {' and '.join(operators) or 'none'}. The seed's job times: "
        f"{times(seed['rocksdb_over_sorted'], '.2f')}, {times(seed['heap_over_sorted'], '.2f')} "
        f"and {times(seed['sorted_over_sort_group'], '.2f')}."
    )
    memory = s.get("peak_memory_bytes_by_k") or {}
    parts = []
    for strategy, name in (("heap", "heap"), ("sorted", "sorted input")):
        points = sorted((int(k), v) for k, v in memory.get(strategy, {}).items())
        if points:
            at = ", ".join(f"{v / 2**20:.1f} MiB at K={k:,}" for k, v in points)
            parts.append(f"{name} {at}")
    if parts:
        text += " Traced peak memory (one untimed run per K): " + "; ".join(parts) + "."
    if "all_digests_match" in s:
        text += f" Every run's counts equal Spark's groupBy().count(): {s['all_digests_match']}."
    return text


def describe_value_state(result) -> str:
    """A sentence of what the ValueState run measured for ``valueAdd`` against ``valueUpdate``
    on the heap (the seed's heap is slower on add, an overwrite in tables twice as large), and
    the single-key backend's lead, beside the seed's.

    Example::

        >>> ops = {"valueAdd": {"heap": 9000.0, "single_key": 20000.0},
        ...        "valueUpdate": {"heap": 12000.0, "single_key": 30000.0}}
        >>> summary = {"keys": 500_000, "runs": 5, "ops_per_wall_ms": ops,
        ...     "seed_ops_per_ms": {"valueAdd": {"heap": 9206.249, "single_key": 18282.074},
        ...                         "valueUpdate": {"heap": 12916.056}}}
        >>> print(describe_value_state({"size": "quick", "summary": summary}))
        This run (quick, this machine), 500,000 keys, medians of 5 runs, ops per wall-clock ms: the heap's valueAdd runs at 0.75x its valueUpdate (the seed's: 0.71x), and the single-key backend's valueAdd at 2.22x the heap's (the seed's: 1.99x).
    """  # noqa: E501
    s = bench_summary(result)
    ops, seed = s["ops_per_wall_ms"], s["seed_ops_per_ms"]
    add, update = ops["valueAdd"]["heap"], ops["valueUpdate"]["heap"]
    lead = ops["valueAdd"]["single_key"] / add
    seed_add = seed["valueAdd"]["heap"]
    return (
        f"{_whose(result)}, {s['keys']:,} keys, medians of {s['runs']} runs, ops per "
        f"wall-clock ms: the heap's valueAdd runs at {add / update:.2f}x its valueUpdate (the "
        "seed's: "
        f"{seed_add / seed['valueUpdate']['heap']:.2f}x), and the single-key backend's "
        f"valueAdd at {lead:.2f}x the heap's (the seed's: "
        f"{seed['valueAdd']['single_key'] / seed_add:.2f}x)."
    )


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench sorted_input`` prints: whose figures, the measured table (median
    [min..max]) and each ratio, the median of the rounds' with its interval, beside the
    seed's.

    Example::

        >>> from skewlab.experiments.sorted_input import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        This run (tiny, this machine): WordCount, 20,000 records, 2,000 int keys, 1 round(s); ...
    """
    s = bench_summary(result)
    lines = [
        f"{_whose(result)}: WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys, "
        f"{s['runs']} round(s); headline: job seconds (sort included), median [min..max]; "
        "ratios: the median of the rounds' ratios [bootstrap interval]",
        f"{'strategy':>10}  {'job s':>22}  {'op CPU s':>8}  {'op wall s':>9}  "
        f"{'job rec/s':>10}  {'seed ms':>8}",
    ]
    for t in s["by_strategy"]:
        lines.append(
            f"{t['strategy']:>10}  {spread_text(t['job_seconds'], '.2f'):>22}  "
            f"{number(t['operator_cpu_seconds']['median'], '8.2f')}  "
            f"{number(t['operator_seconds']['median'], '9.2f')}  "
            f"{t['job_records_per_second']:>10,.0f}  {number(t['seed_ms'], '8,')}"
        )
    seed = s["seed_ratios"]
    for name in RATIOS:
        if name not in seed:
            continue
        lines.append(
            f"{name}: job {estimate_text(_estimate(s, name), '.2f', '')} (seed {seed[name]:.2f}, "
            f"measured / seed {number(_over(s[name], seed[name]), '.2f')}); operator CPU "
            f"{number(s[name + '_operator_cpu'], '.2f')}, operator wall "
            f"{number(s[name + '_operator_wall'], '.2f')}"
        )
    lines.append(
        "spark_sql_over_sorted (job): "
        + estimate_text(_estimate(s, "spark_sql_over_sorted"), ".2f", "")
    )
    for strategy, by_k in s["peak_memory_bytes_by_k"].items():
        lines.append(
            f"traced peak memory of {strategy}: "
            + ", ".join(f"K={int(k):,}: {v / 2**20:.1f} MiB" for k, v in by_k.items())
        )
    lines.append(f"all counts match Spark's groupBy().count(): {s['all_digests_match']}")
    return "\n".join(lines)


def format_value_state_summary(result: BenchResult) -> str:
    """What ``skewlab bench value_state`` prints: whose figures, the measured table (median
    [min..max]) beside the seed's, each ratio the median of the runs' with its interval.

    Example::

        >>> from skewlab.experiments.value_state import run_experiment
        >>> print(format_value_state_summary(run_experiment("tiny", progress=False)))  # doctest: +ELLIPSIS
        This run (tiny, this machine): ValueState, 2,000 keys in (key group, key) order, 1 run(s); headline: ops per wall-clock ms (JMH's), median [min..max]; ratios: the median of the runs' ratios [bootstrap interval]
        ...
        valueAdd's warm-up pass (the new keys inserted, not timed by JMH): heap ..., rocksdb ..., single_key ... ops/ms; heap/rocksdb ...x
    """  # noqa: E501
    s = bench_summary(result)
    lines = [
        f"{_whose(result)}: ValueState, {s['keys']:,} keys in (key group, key) order, "
        f"{s['runs']} run(s); headline: ops per wall-clock ms (JMH's), median [min..max]; "
        "ratios: the median of the runs' ratios [bootstrap interval]",
        f"{'operation':<12} {'backend':<10} {'ops/ms':>24} {'ops/CPU ms':>10} "
        f"{'seed ops/ms':>12} {'/ seed':>7}",
    ]
    for op in OPERATIONS:
        for b in BACKENDS:
            if b not in s["ops_per_wall_ms"][op]:
                continue
            median = s["ops_per_wall_ms"][op][b]
            measured = (
                f"{median:,.0f} [{s['ops_per_wall_ms_min'][op][b]:,.0f}.."
                f"{s['ops_per_wall_ms_max'][op][b]:,.0f}]"
            )
            seed = SEED_OPS_PER_MS[op][b]
            lines.append(
                f"{op:<12} {b:<10} {measured:>24} {s['ops_per_cpu_ms'][op][b]:>10,.0f} "
                f"{seed:>12,.0f} {median / seed:>7.2f}"
            )
    seed = s["seed_ratios"]
    for name in VALUE_STATE_RATIOS:
        lines.append(
            f"{name}: "
            + "; ".join(
                f"{op} {estimate_text(_estimate(s, f'{name}_{SHORT_NAMES[op]}'), '.2f')} "
                f"(CPU {number(s[f'{name}_{SHORT_NAMES[op]}_cpu'], '.2f')}x, "
                f"seed {seed[f'{name}_{SHORT_NAMES[op]}']:.2f}x)"
                for op in OPERATIONS
            )
        )
    first = s["warmup_ops_per_wall_ms"]["valueAdd"]
    lines.append(
        "valueAdd's warm-up pass (the new keys inserted, not timed by JMH): "
        + ", ".join(f"{b} {first[b]:,.0f}" for b in BACKENDS if b in first)
        + f" ops/ms; heap/rocksdb {number(s['heap_over_rocksdb_add_first_pass'], '.1f')}x"
    )
    return "\n".join(lines)


def unsorted_input_demo(spark, n: int = 2_000, k: int = 70) -> str:
    """Run the sorted strategy on input left in arrival order; return the error's one line.

    Example::

        >>> unsorted_input_demo(spark)                      # doctest: +SKIP
        'UnsortedInputError: input is not sorted by key: key 8 (key group 15) came after ...'
    """
    try:
        run_count(wordcount_input(spark, n, k), "sorted", spark=spark, input_order="arrival")
    except Exception as exc:  # Spark wraps the worker's exception
        lines = [ln for ln in str(exc).splitlines() if "UnsortedInputError:" in ln]
        if lines:
            return lines[-1].strip().removeprefix("skewlab.errors.")
        raise
    raise AssertionError("the sorted strategy accepted unsorted input")


def value_state_table(result, *, caption: bool = False):
    """ops/ms per operation and backend: per wall-clock ms (the headline, JMH's measure, median
    with min and max), per CPU ms and of the untimed warm-up pass beside it, and the seed's.
    ``caption=True``: captioned with whose figures they are."""
    s = bench_summary(result)
    rows = []
    for op, by_backend in s["ops_per_wall_ms"].items():
        for backend, ops in by_backend.items():
            seed = s["seed_ops_per_ms"][op][backend]
            rows.append(
                {
                    "operation": op,
                    "backend": backend,
                    "ops/ms": ops,
                    "min ops/ms": s["ops_per_wall_ms_min"][op][backend],
                    "max ops/ms": s["ops_per_wall_ms_max"][op][backend],
                    "ops/CPU ms": s["ops_per_cpu_ms"][op][backend],
                    "warm-up pass ops/ms": s["warmup_ops_per_wall_ms"][op][backend],
                    "seed ops/ms": seed,
                    "measured / seed": ops / seed,
                }
            )
    table = pd.DataFrame(rows)
    rates = [c for c in table.columns if c.endswith("ops/ms") or c == "ops/CPU ms"]
    table = table.astype({c: "float" for c in rates}).round({c: 0 for c in rates})
    table = table.astype({c: "Int64" for c in rates}).round({"measured / seed": 2})
    if not caption:
        return table
    return _styled(
        table,
        f"{_whose(result)}: ValueState over {s['keys']:,} keys, median [min, max] of "
        f"{s['runs']} run(s), each backend alone in a compiled loop (no Spark); the seed's "
        "JMH figures (FLIP-140) beside",
    )


def value_state_figure(result) -> go.Figure:
    """Grouped bars of ops per wall-clock ms, measured (solid, the runs' min and max as error
    bars) and the seed's (pale), log scale; the title says whose figures they are and the
    valueUpdate ratios with the claims' digits."""
    table = value_state_table(result)
    fig = go.Figure()
    for backend in ("heap", "rocksdb", "single_key"):
        part = table[table["backend"] == backend]
        fig.add_trace(
            go.Bar(
                x=part["operation"],
                y=part["ops/ms"],
                name=f"{backend} (measured)",
                marker_color=COLORS[backend],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": part["max ops/ms"] - part["ops/ms"],
                    "arrayminus": part["ops/ms"] - part["min ops/ms"],
                },
            )
        )
        fig.add_trace(
            go.Bar(
                x=part["operation"],
                y=part["seed ops/ms"],
                name=f"{backend} (seed)",
                marker_color=COLORS[backend],
                opacity=0.35,
            )
        )
    summary = bench_summary(result)
    ratios = [
        f"{name} {summary[key]:.1f}x {over}"
        for name, key, over in (
            ("heap", "heap_over_rocksdb_update", "RocksDB"),
            ("single-key", "single_key_over_heap_update", "heap"),
        )
        if summary.get(key)
    ]
    fig.update_layout(
        title=f"{_whose(result)}: ValueState, keys in order, valueUpdate "
        + ", ".join(ratios)
        + " (medians of the runs; pale bars: the seed's)"
        if ratios
        else f"{_whose(result)}: ValueState micro-benchmark (keys in order)",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "ops per wall-clock ms", "type": "log"},
    )
    return fig


# --- where memory decides: the memory-cap benchmark (skewlab.experiments.memory_cap) ---

#: How each outcome of a capped run is drawn: (colour, marker symbol).
_CAP_MARKS = {
    FINISHED: (COLORS["held"], "circle"),
    OUT_OF_MEMORY: (COLORS["not_held"], "x"),
    WORKER_DID_NOT_START: (COLORS["not_measured"], "square"),
}
#: The two sides' names in the memory-cap table, figure and sentences.
_CAP_NAMES = {"heap": "heap", "sorted": "sorted input"}


def memory_cap_shown(result) -> dict[str, Any] | None:
    """The memory-cap summary to show: this run's (``result``, a
    :class:`~skewlab.experiments.results.BenchResult` or its JSON) or, where a size leaves
    the run out (``result`` is ``None``: tiny and quick reports), the shipped reference's.
    The summary comes back with ``shown`` saying whose figures they are (this run's size,
    or the reference's date and machine), and a line says it too (``None`` when neither
    exists).

    Example::

        >>> memory_cap_shown({"size": "full", "summary": {"k": 10}})
        this run's memory-cap runs:
        {'k': 10, 'shown': 'this run (full, this machine)'}
    """
    summary = summary_shown(
        result, MEMORY_CAP, what="memory-cap runs", why="the seed's millions of keys"
    )
    if summary is None:
        return None
    whose = whose_figures(load_reference(MEMORY_CAP) if result is None else result)
    return {**summary, "shown": whose}


def _cap_label(cap: int | None) -> str:
    return "no cap" if cap is None else f"{cap:,} MiB"


def memory_cap_table(summary: dict[str, Any], *, caption: bool = False):
    """Per cap on each Python worker: how heap and sorted input ended, and their job seconds
    where they finished. ``caption=True``: captioned with whose runs they are
    (``summary["shown"]``, :func:`memory_cap_shown`).

    Example::

        >>> memory_cap_table({"by_cap": [{"cap_mb": 400, "heap": "out of memory",
        ...     "heap_job_seconds": None, "sorted": "finished", "sorted_job_seconds": 2.0}]}
        ...     ).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
        [{'cap per Python worker': '400 MiB', 'heap': 'out of memory', 'heap job s': '-',
          'sorted input': 'finished', 'sorted input job s': '2.00'}]
    """
    rows = []
    for entry in summary["by_cap"]:
        row = {"cap per Python worker": _cap_label(entry["cap_mb"])}
        for strategy in CAP_STRATEGIES:
            label = _CAP_NAMES[strategy]
            row[label] = entry[strategy]
            row[f"{label} job s"] = number(entry[f"{strategy}_job_seconds"], ".2f")
        rows.append(row)
    frame = pd.DataFrame(rows)
    if not caption:
        return frame
    shown = summary.get("shown") or THIS_RUN
    return _styled(
        frame,
        f"{shown[0].upper()}{shown[1:]}: WordCount at {summary['k']:,} keys, {summary['n']:,} "
        f"records, under a memory cap per Python worker, {summary.get('runs', 1)} run(s) "
        "per cap and side: how each ended, and its job seconds where it finished",
    )


def _cap_order(outcome: str | None) -> int:
    order = list(_CAP_MARKS)
    return order.index(outcome) if outcome in order else len(order)


def memory_cap_figure(summary: dict[str, Any]) -> go.Figure:
    """Each side's outcome under each cap: finished (with its job seconds), out of memory, or
    the worker could not start.

    Example::

        >>> fig = memory_cap_figure({"k": 4_000_000, "shown": "this run", "by_cap": [
        ...     {"cap_mb": 400, "heap": "out of memory", "heap_job_seconds": None,
        ...      "sorted": "finished", "sorted_job_seconds": 2.0}]})
        >>> [t.name for t in fig.data]
        ['finished', 'out of memory']
    """
    points: dict[str, list[tuple[str, str, str]]] = {}
    for entry in summary["by_cap"]:
        for strategy in CAP_STRATEGIES:
            outcome, seconds = entry[strategy], entry[f"{strategy}_job_seconds"]
            text = f"{seconds:.1f} s" if seconds is not None else (outcome or "")
            points.setdefault(outcome, []).append(
                (_cap_label(entry["cap_mb"]), _CAP_NAMES[strategy], text)
            )
    fig = go.Figure()
    for outcome, marks in sorted(points.items(), key=lambda item: _cap_order(item[0])):
        color, symbol = _CAP_MARKS.get(outcome, (COLORS["unlisted"], "diamond"))
        fig.add_trace(
            go.Scatter(
                x=[m[0] for m in marks],
                y=[m[1] for m in marks],
                text=[m[2] for m in marks],
                mode="markers+text",
                textposition="top center",
                marker={"color": color, "symbol": symbol, "size": 16},
                name=outcome,
            )
        )
    shown = summary["shown"]
    fig.update_layout(
        title=f"{shown[0].upper()}{shown[1:]}: WordCount at {summary['k']:,} keys under a "
        "memory cap per Python worker",
        template=TEMPLATE,
        xaxis={"title": "address space each Python worker may use", "type": "category"},
        yaxis={"title": "", "type": "category"},
    )
    return fig


def describe_memory_cap(summary: dict[str, Any]) -> str:
    """What the memory-cap runs show, in sentences computed from ``summary`` and naming whose
    runs they are (``summary["shown"]``).

    Example::

        >>> print(describe_memory_cap({"shown": "this run (full, this machine)", "n": 40,
        ...     "k": 4, "caps_mb": [400], "smallest_cap_finished_mb": {"heap": None,
        ...     "sorted": 400}, "sorted_only_caps_mb": [400], "all_digests_match": True,
        ...     "records_accounted": True}))
        This run (full, this machine), 40 records, 4 keys: sorted input finished under a cap as small as 400 MiB per Python worker; the heap finished under none of the caps (400 MiB), only without one. Under 400 MiB sorted input finished where the heap ran out of memory. Every finished run's counts equal Spark's groupBy().count(): True; every record accounted for: True.
    """  # noqa: E501
    smallest = summary["smallest_cap_finished_mb"]
    caps = ", ".join(f"{c:,}" for c in summary["caps_mb"])

    def finished(strategy: str) -> str:
        name = {"heap": "the heap", "sorted": "sorted input"}[strategy]
        if smallest[strategy] is None:
            return f"{name} finished under none of the caps ({caps} MiB), only without one"
        return (
            f"{name} finished under a cap as small as {smallest[strategy]:,} MiB per Python worker"
        )

    shown = summary["shown"]
    text = (
        f"{shown[0].upper()}{shown[1:]}, {summary['n']:,} records, {summary['k']:,} keys: "
        f"{finished('sorted')}; {finished('heap')}. "
    )
    both = summary["sorted_only_caps_mb"]
    if both:
        text += (
            f"Under {', '.join(f'{c:,}' for c in both)} MiB sorted input finished where the "
            "heap ran out of memory. "
        )
    else:
        text += "No cap separated them: under none did sorted input finish and the heap fail. "
    return text + (
        f"Every finished run's counts equal Spark's groupBy().count(): "
        f"{summary['all_digests_match']}; every record accounted for: "
        f"{summary['records_accounted']}."
    )


def format_memory_cap_summary(result: BenchResult) -> str:
    """What ``skewlab bench memory_cap`` prints: each cap's outcomes and the sentences.

    Example::

        >>> from skewlab.experiments.memory_cap import run_experiment
        >>> print(format_memory_cap_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
    """  # noqa: E501
    summary = {**bench_summary(result), "shown": whose_figures(result)}
    table = memory_cap_table(summary).to_string(index=False)
    return f"{table}\n{describe_memory_cap(summary)}"
