"""Notebook 05, sorted input with single-key state (FLIP-140): WordCount time per strategy,
peak memory at two K, the runs under a memory cap per Python worker, the unsorted-input error,
and the ValueState micro-benchmark.

Every function takes a :class:`~skewlab.experiments.results.BenchResult` of
:mod:`skewlab.experiments.sorted_input` or :mod:`skewlab.experiments.value_state` and returns a
pandas DataFrame or a plotly figure.

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
from skewlab.experiments.memory_cap import EXPERIMENT as MEMORY_CAP
from skewlab.experiments.memory_cap import FINISHED
from skewlab.experiments.memory_cap import STRATEGIES as CAP_STRATEGIES
from skewlab.experiments.results import BenchResult, bench_summary
from skewlab.experiments.sorted_input import HEADLINE_MEASURE, RATIOS, ratio_spread
from skewlab.experiments.value_state import BACKENDS, OPERATIONS, SEED_OPS_PER_MS, SHORT_NAMES
from skewlab.experiments.value_state import RATIOS as VALUE_STATE_RATIOS
from skewlab.inputs.wordcount import wordcount_input
from skewlab.strategies.count import run_count
from skewlab.viz.palette import COLORS, LABELS, TEMPLATE
from skewlab.viz.reference_section import THIS_RUN, summary_shown
from skewlab.viz.text import number, spread_text, times

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


def strategy_table(result) -> pd.DataFrame:
    """Per strategy: job seconds (the headline, median [min, max]) and the breakdown beside
    it, each strategy's time over sorted input's (per run, median), beside the seed's."""
    s = result.summary
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
                "x sorted (operator CPU)": _x_sorted(result, name, "operator_cpu_seconds"),
                "seed ms": t["seed_ms"],
                "seed x sorted": _over(t["seed_ms"], seed_sorted),
            }
        )
    return pd.DataFrame(rows)


def _x_sorted(result, strategy: str, field: str) -> float | None:
    if strategy == "sorted":
        return 1.0
    return ratio_spread(result.rows, strategy, "sorted", field)["median"]


def _over(a: Any, b: Any) -> float | None:
    return a / b if a is not None and b else None


def strategy_time_figure(result) -> go.Figure:
    """Bars: each strategy's job time relative to sorted input's (the headline, with the
    runs' min and max), its operators' CPU time relative to sorted's, and the seed's."""
    table = strategy_table(result)
    fig = go.Figure()
    job = [ratio_spread(result.rows, _name(result, label), "sorted") for label in table["strategy"]]
    fig.add_trace(
        go.Bar(
            x=table["strategy"],
            y=table["x sorted (job)"],
            name="measured: Spark job time (sort included)",
            marker_color=COLORS["sorted"],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [_gap(s["max"], s["median"]) for s in job],
                "arrayminus": [_gap(s["median"], s["min"]) for s in job],
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
    s = result.summary
    fig.update_layout(
        title=f"WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys: "
        + _times_sorted(s),
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
        for t in result.summary["by_strategy"]
        if STRATEGY_LABELS.get(t["strategy"], t["strategy"]) == label
    )


def _gap(a: float | None, b: float | None) -> float:
    return a - b if a is not None and b is not None else 0.0


def _memory_title(by_k: dict) -> str:
    """How much each side's traced peak grows from the smaller K to the larger."""
    growth = {}
    for strategy in ("heap", "sorted"):
        peaks = [v for _, v in sorted((int(k), v) for k, v in by_k.get(strategy, {}).items())]
        if len(peaks) < 2 or not peaks[0]:
            return "Peak memory of a subtask (traced Python allocations), by number of keys"
        growth[strategy] = peaks[-1] / peaks[0]
    ks = sorted(int(k) for k in by_k["heap"])
    return (
        f"K = {ks[0]:,} -> {ks[-1]:,}: the heap's traced peak grows {growth['heap']:.1f}x, "
        f"sorted input's {growth['sorted']:.1f}x"
    )


def memory_by_k_figure(result) -> go.Figure:
    """Traced peak of a subtask's Python allocations at two K: sorted input (one key's state at
    a time) vs the keyed heap backend (every key's)."""
    by_k = result.summary["peak_memory_bytes_by_k"]
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
        title=_memory_title(by_k),
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "MiB, traced peak"},
    )
    return fig


def describe(result) -> str:
    """Sentences of what this run measured -- job time ratios (the headline) and operator CPU
    ratios, traced peak memory at two K -- beside the seed's ratios, named as the seed's.

    Example::

        >>> summary = {"runs": 3, "n": 2_000_000, "k": 200_000, "rocksdb_over_sorted": 2.5,
        ...     "heap_over_sorted": 1.2, "sorted_over_sort_group": 1.05,
        ...     "rocksdb_over_sorted_operator_cpu": 30.0, "heap_over_sorted_operator_cpu": 3.0,
        ...     "seed_ratios": {"rocksdb_over_sorted": 7.46, "heap_over_sorted": 1.95,
        ...                     "sorted_over_sort_group": 1.12},
        ...     "peak_memory_bytes_by_k": {"heap": {"2000": 2**20, "200000": 50 * 2**20},
        ...                                "sorted": {"2000": 2**20, "200000": 2**20}},
        ...     "all_digests_match": True}
        >>> print(describe({"summary": summary}))
        Measured here (2,000,000 records, 200,000 keys, median of 3 runs): RocksDB's job took 2.50x sorted input's, the heap's 1.20x, and sorted input 1.05x the sort-then-group baseline's; inside the operators (CPU), RocksDB 30.00x and the heap 3.00x. The seed's job times: 7.46x, 1.95x and 1.12x. Traced peak memory: heap 1.0 MiB at K=2,000, 50.0 MiB at K=200,000; sorted input 1.0 MiB at K=2,000, 1.0 MiB at K=200,000. Every run's counts equal Spark's groupBy().count(): True.
    """  # noqa: E501
    s = bench_summary(result)
    seed = s["seed_ratios"]

    def x(value) -> str:
        return times(value, ".2f")

    text = (
        f"Measured here ({s['n']:,} records, {s['k']:,} keys, median of {s['runs']} runs): "
        f"RocksDB's job took {x(s.get('rocksdb_over_sorted'))} sorted input's, the heap's "
        f"{x(s.get('heap_over_sorted'))}, and sorted input "
        f"{x(s.get('sorted_over_sort_group'))} the sort-then-group baseline's; inside the "
        f"operators (CPU), RocksDB {x(s.get('rocksdb_over_sorted_operator_cpu'))} and the heap "
        f"{x(s.get('heap_over_sorted_operator_cpu'))}. The seed's job times: "
        f"{x(seed['rocksdb_over_sorted'])}, {x(seed['heap_over_sorted'])} and "
        f"{x(seed['sorted_over_sort_group'])}."
    )
    memory = s.get("peak_memory_bytes_by_k") or {}
    parts = []
    for strategy, name in (("heap", "heap"), ("sorted", "sorted input")):
        points = sorted((int(k), v) for k, v in memory.get(strategy, {}).items())
        if points:
            at = ", ".join(f"{v / 2**20:.1f} MiB at K={k:,}" for k, v in points)
            parts.append(f"{name} {at}")
    if parts:
        text += " Traced peak memory: " + "; ".join(parts) + "."
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
        >>> print(describe_value_state({"summary": summary}))
        Measured here (500,000 keys, median of 5 runs, ops per wall-clock ms): the heap's valueAdd runs at 0.75x its valueUpdate (the seed's: 0.71x), and the single-key backend's valueAdd at 2.22x the heap's (the seed's: 1.99x).
    """  # noqa: E501
    s = bench_summary(result)
    ops, seed = s["ops_per_wall_ms"], s["seed_ops_per_ms"]
    add, update = ops["valueAdd"]["heap"], ops["valueUpdate"]["heap"]
    lead = ops["valueAdd"]["single_key"] / add
    seed_add = seed["valueAdd"]["heap"]
    return (
        f"Measured here ({s['keys']:,} keys, median of {s['runs']} runs, ops per wall-clock "
        f"ms): the heap's valueAdd runs at {add / update:.2f}x its valueUpdate (the seed's: "
        f"{seed_add / seed['valueUpdate']['heap']:.2f}x), and the single-key backend's "
        f"valueAdd at {lead:.2f}x the heap's (the seed's: "
        f"{seed['valueAdd']['single_key'] / seed_add:.2f}x)."
    )


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench sorted_input`` prints: the measured table (median [min..max])
    beside the seed's.

    Example::

        >>> from skewlab.experiments.sorted_input import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        WordCount, 20,000 records, 2,000 int keys, 1 run(s); headline: job seconds ...
    """
    s = result.summary
    lines = [
        f"WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys, {s['runs']} run(s); "
        "headline: job seconds (sort included), median [min..max]",
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
            f"{name}: job {spread_text(s[name + '_spread'], '.2f')} (seed {seed[name]:.2f}, "
            f"measured / seed {number(_over(s[name], seed[name]), '.2f')}); operator CPU "
            f"{number(s[name + '_operator_cpu'], '.2f')}, operator wall "
            f"{number(s[name + '_operator_wall'], '.2f')}"
        )
    lines.append(
        f"spark_sql_over_sorted (job): {spread_text(s['spark_sql_over_sorted_spread'], '.2f')}"
    )
    for strategy, by_k in s["peak_memory_bytes_by_k"].items():
        lines.append(
            f"traced peak memory of {strategy}: "
            + ", ".join(f"K={int(k):,}: {v / 2**20:.1f} MiB" for k, v in by_k.items())
        )
    lines.append(f"all counts match Spark's groupBy().count(): {s['all_digests_match']}")
    return "\n".join(lines)


def format_value_state_summary(result: BenchResult) -> str:
    """What ``skewlab bench value_state`` prints: the measured table (median [min..max])
    beside the seed's.

    Example::

        >>> from skewlab.experiments.value_state import run_experiment
        >>> print(format_value_state_summary(run_experiment("tiny", progress=False)))  # doctest: +ELLIPSIS
        ValueState, 2,000 keys in (key group, key) order, 1 run(s); headline: ops per wall-clock ms (JMH's), median [min..max]
        ...
        valueAdd's warm-up pass (the new keys inserted, not timed by JMH): heap ..., rocksdb ..., single_key ... ops/ms; heap/rocksdb ...x
    """  # noqa: E501
    s = result.summary
    lines = [
        f"ValueState, {s['keys']:,} keys in (key group, key) order, {s['runs']} run(s); "
        "headline: ops per wall-clock ms (JMH's), median [min..max]",
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
                f"{op} {number(s[f'{name}_{SHORT_NAMES[op]}'], '.2f')}x "
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


def value_state_table(result) -> pd.DataFrame:
    """ops/ms per operation and backend: per wall-clock ms (the headline, JMH's measure, median
    with min and max), per CPU ms and of the untimed warm-up pass beside it, and the seed's."""
    s = result.summary
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
    return table.astype({c: "Int64" for c in rates}).round({"measured / seed": 2})


def value_state_figure(result) -> go.Figure:
    """Grouped bars of ops per wall-clock ms, measured (solid, the runs' min and max as error
    bars) and the seed's (pale), log scale."""
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
    summary = result.summary
    ratios = [
        f"{name} {summary[key]:.{digits}f}x {over}"
        for name, key, over, digits in (
            ("heap", "heap_over_rocksdb_update", "RocksDB", 0),
            ("single-key", "single_key_over_heap_update", "heap", 1),
        )
        if summary.get(key)
    ]
    fig.update_layout(
        title="ValueState, keys in order: valueUpdate " + ", ".join(ratios)
        if ratios
        else "ValueState micro-benchmark (keys in order)",
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
    The summary comes back with ``shown`` saying which, and a line says it too (``None``
    when neither exists).

    Example::

        >>> memory_cap_shown({"summary": {"k": 10}})
        this run's memory-cap runs:
        {'k': 10, 'shown': 'this run'}
    """
    return summary_shown(
        result, MEMORY_CAP, what="memory-cap runs", why="millions of keys: minutes, not seconds"
    )


def _cap_label(cap: int | None) -> str:
    return "no cap" if cap is None else f"{cap:,} MiB"


def memory_cap_table(summary: dict[str, Any]) -> pd.DataFrame:
    """Per cap on each Python worker: how heap and sorted input ended, and their job seconds
    where they finished.

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
    return pd.DataFrame(rows)


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
    fig.update_layout(
        title=f"WordCount at {summary['k']:,} keys under a memory cap per Python worker "
        f"({summary['shown']})",
        template=TEMPLATE,
        xaxis={"title": "address space each Python worker may use", "type": "category"},
        yaxis={"title": "", "type": "category"},
    )
    return fig


def describe_memory_cap(summary: dict[str, Any]) -> str:
    """What the memory-cap runs show, in sentences computed from ``summary`` and naming whose
    runs they are (``summary["shown"]``).

    Example::

        >>> print(describe_memory_cap({"shown": "this run", "n": 40, "k": 4, "caps_mb": [400],
        ...     "smallest_cap_finished_mb": {"heap": None, "sorted": 400},
        ...     "sorted_only_caps_mb": [400], "all_digests_match": True,
        ...     "records_accounted": True}))
        In this run (40 records, 4 keys): sorted input finished under a cap as small as 400 MiB per Python worker; the heap finished under none of the caps (400 MiB), only without one. Under 400 MiB sorted input finished where the heap ran out of memory. Every finished run's counts equal Spark's groupBy().count(): True; every record accounted for: True.
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

    text = (
        f"In {summary['shown']} ({summary['n']:,} records, {summary['k']:,} keys): "
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
    summary = {**bench_summary(result), "shown": THIS_RUN}
    table = memory_cap_table(summary).to_string(index=False)
    return f"{table}\n{describe_memory_cap(summary)}"
