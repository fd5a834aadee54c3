"""Notebook 05, sorted input with single-key state (FLIP-140): WordCount time per strategy,
peak memory at two K, the unsorted-input error, and the ValueState micro-benchmark.

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

from skewlab.inputs.wordcount import wordcount_input
from skewlab.strategies.count import run_count
from skewlab.viz.palette import COLORS, LABELS, TEMPLATE

__all__ = [
    "memory_by_k_figure",
    "strategy_table",
    "strategy_time_figure",
    "unsorted_input_demo",
    "value_state_figure",
    "value_state_table",
]


def strategy_table(result) -> pd.DataFrame:
    """Seconds, records/s and peak memory per strategy, beside the seed's milliseconds."""
    sorted_row = next((t for t in result.summary["by_strategy"] if t["strategy"] == "sorted"), {})
    seed_sorted = sorted_row.get("seed_ms")
    rows = []
    for t in result.summary["by_strategy"]:
        mem = t["peak_memory_bytes"]
        rows.append(
            {
                "strategy": LABELS.get(t["strategy"], t["strategy"]),
                "key type": t["key_type"],
                "operator s": t["operator_seconds"],
                "operator CPU s": t.get("operator_cpu_seconds"),
                "wall s": t["wall_seconds"],
                "operator records/s": t["operator_records_per_second"],
                "peak memory MiB": None if mem is None else mem / 2**20,
                "x sorted (operator)": _over(
                    t["operator_seconds"], sorted_row.get("operator_seconds")
                ),
                "x sorted (CPU)": _over(
                    t.get("operator_cpu_seconds"), sorted_row.get("operator_cpu_seconds")
                ),
                "x sorted (wall)": _over(t["wall_seconds"], sorted_row.get("wall_seconds")),
                "seed ms": t["seed_ms"],
                "seed x sorted": _over(t["seed_ms"], seed_sorted),
            }
        )
    return pd.DataFrame(rows)


def _over(a: Any, b: Any) -> float | None:
    return a / b if a is not None and b else None


def strategy_time_figure(result) -> go.Figure:
    """Bars: each strategy's time relative to sorted input -- operator time, job wall time and
    the seed's job time -- so the three scales compare at a glance."""
    table = strategy_table(result)
    fig = go.Figure()
    for column, name, color in (
        ("x sorted (operator)", "measured: operator time", COLORS["sorted"]),
        ("x sorted (CPU)", "measured: operator CPU time", "#74c476"),
        ("x sorted (wall)", "measured: Spark job wall time", "#98df8a"),
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
    fig.add_hline(y=1.0, line={"dash": "dash", "color": "#444"})
    s = result.summary
    fig.update_layout(
        title=f"WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys: time / sorted",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "time relative to sorted input (1 = sorted)", "type": "log"},
    )
    return fig


def memory_by_k_figure(result) -> go.Figure:
    """Peak memory of the Python worker at two K: sorted (flat) vs keyed heap (grows with K)."""
    by_k = result.summary["peak_memory_bytes_by_k"]
    fig = go.Figure()
    for strategy in ("heap", "sorted"):
        points = sorted((int(k), v) for k, v in by_k.get(strategy, {}).items())
        fig.add_trace(
            go.Bar(
                x=[f"K = {k:,}" for k, _ in points],
                y=[v / 2**20 for _, v in points],
                name=LABELS[strategy],
                marker_color=COLORS[strategy],
            )
        )
    fig.update_layout(
        title="Peak memory growth of a subtask's Python worker, by number of keys",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "MiB over the worker's baseline"},
    )
    return fig


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
    """ops/ms (per CPU ms, per wall-clock ms, and of the untimed warm-up pass) per operation and
    backend, beside the seed's."""
    s = result.summary
    rows = []
    for op, by_backend in s["ops_per_ms"].items():
        for backend, ops in by_backend.items():
            rows.append(
                {
                    "operation": op,
                    "backend": backend,
                    "ops/ms": ops,
                    "ops/wall-clock ms": s.get("ops_per_wall_ms", {}).get(op, {}).get(backend),
                    "warm-up pass ops/ms": s.get("warmup_ops_per_ms", {}).get(op, {}).get(backend),
                    "seed ops/ms": s["seed_ops_per_ms"][op][backend],
                }
            )
    table = pd.DataFrame(rows)
    rates = [c for c in table.columns if c.endswith("ops/ms")]
    return table.astype({c: "float" for c in rates}).round(0).astype({c: "Int64" for c in rates})


def value_state_figure(result) -> go.Figure:
    """Grouped bars of ops/ms, measured (solid) and the seed's (pale), log scale."""
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
    fig.update_layout(
        title="ValueState micro-benchmark (keys in order)",
        template=TEMPLATE,
        barmode="group",
        yaxis={"title": "ops/ms", "type": "log"},
    )
    return fig
