"""The doctor's verdict, first: a few lines that answer "which keys are hot, where does it hurt,
what do I do" before the details -- the hottest keys and their share; per engine at the user's
parallelism the busiest subtask or partition and its skew score; the ceiling no parallelism
passes; the recommended remedy with its predicted gain, the spread the doctor's own check of
its predictions measured, and its price; and the parallelism an operator can plan with.

Every figure comes from the diagnosis (:func:`~skewlab.doctor.diagnosis.diagnose`'s dict) or,
for the spread, from the remedy check it is given (its shipped reference by default): nothing
here is typed by hand.

Example::

    >>> from skewlab.doctor.schema import EXAMPLE, Diagnosis
    >>> report = Diagnosis.from_json({**EXAMPLE, "engines": {},
    ...     "parallelism": {"asked": [4], "max_parallelism": 128}})
    >>> print("\\n".join(verdict_lines(report, check=None)))
    verdict: 10 records, key 'k', 2 distinct keys
      hottest keys: 'a' 80%
      ceiling: no parallelism runs a keyed aggregation more than 1.25x faster than one subtask (the
        hottest key's 80% stays on one subtask)
      parallelism: P=4 splits Flink's 128 key groups evenly (32 each); to run anywhere from P=4 to P=8,
        max parallelism 840 splits 5 of those 5 evenly (128: 2); it is fixed once state exists: choose
        it before the first savepoint
"""  # noqa: E501

from __future__ import annotations

import textwrap
from typing import Any

from skewlab.doctor.planning import key_groups_per_subtask, max_parallelism_choices
from skewlab.doctor.remedies import BASELINE
from skewlab.doctor.schema import Diagnosis, FlinkLoads, PartitionLoads
from skewlab.state.key_groups import UPPER_BOUND_MAX_PARALLELISM
from skewlab.viz.text import percent

__all__ = ["ENGINE_NAMES", "WIDTH", "gain_spread", "verdict_lines", "wrap"]

#: The terminal width every line of the doctor's text keeps to.
WIDTH = 100
#: How the engines are named in every sentence.
ENGINE_NAMES = {"flink": "Flink", "spark": "Spark", "kafka": "Kafka"}


def wrap(line: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """``line`` in lines of at most ``width`` columns, the first at ``indent``, the rest two
    columns further in.

    Example::

        >>> wrap("a " * 60, indent="  ", width=40)[:2]
        ['  a a a a a a a a a a a a a a a a a a a', '    a a a a a a a a a a a a a a a a a a']
    """
    return textwrap.wrap(
        line, width=width, initial_indent=indent, subsequent_indent=indent + "  ",
        break_on_hyphens=False,
    )  # fmt: skip


def gain_spread(remedy: str, check: dict[str, Any] | None) -> dict[str, Any] | None:
    """How far a predicted gain over the baseline landed from the measured gain in the doctor's
    check against real runs (``check``: a ``remedy_check`` summary): per workload, the measured
    gain over the predicted one is the baseline's predicted / measured over the remedy's; its
    lowest and highest over the workloads, from the ends of their intervals where the check
    has them (the runs' noise included), with the number of workloads. ``None`` without a
    check or without the remedy measured in it.

    Example::

        >>> check = {"workloads": [{"remedies": [
        ...     {"remedy": "naive_rocksdb", "predicted_over_measured": 1.0},
        ...     {"remedy": "buffered", "predicted_over_measured": 1.25,
        ...      "predicted_over_measured_interval": {"value": 1.25, "low": 1.0, "high": 2.0}}]}]}
        >>> gain_spread("buffered", check)
        {'low': 0.5, 'high': 1.0, 'workloads': 1}
    """
    if not check:
        return None
    lows, highs = [], []
    for workload in check.get("workloads") or []:
        rows = {r["remedy"]: r for r in workload["remedies"]}
        base, mine = rows.get(BASELINE), rows.get(remedy)
        if not (base and mine and base.get("predicted_over_measured")
                and mine.get("predicted_over_measured")):  # fmt: skip
            continue
        b_low, b_high = _ends(base)
        r_low, r_high = _ends(mine)
        lows.append(b_low / r_high)
        highs.append(b_high / r_low)
    if not lows:
        return None
    return {"low": min(lows), "high": max(highs), "workloads": len(lows)}


def _ends(row: dict[str, Any]) -> tuple[float, float]:
    """A predicted / measured ratio's interval ends (its value twice where it has none)."""
    interval = row.get("predicted_over_measured_interval") or {}
    value = row["predicted_over_measured"]
    return interval.get("low") or value, interval.get("high") or value


def _engine_line(name: str, engine: FlinkLoads | PartitionLoads, parallelism: int | None) -> str:
    label = ENGINE_NAMES.get(name, name)
    if isinstance(engine, FlinkLoads):
        sub = engine.at(parallelism)
        return (
            f"{label} P={sub.parallelism}: busiest subtask {sub.max_over_mean:.2f}x the mean "
            f"({percent(sub.busiest_share)} of the records), skew score {sub.skew_score:.0f} %"
        )
    return (
        f"{label}, {engine.partitions} partitions: busiest partition "
        f"{engine.max_over_mean:.2f}x the mean ({percent(engine.busiest_share)}), skew "
        f"score {engine.skew_score:.0f} %"
    )


def _remedy_line(report: Diagnosis, check: dict[str, Any] | None) -> str | None:
    priced = report.remedies
    if not priced:
        why = report.remedies_unpriced
        return f"remedy: not priced ({why})" if why else None
    rec = priced["recommendation"]
    gain = rec["speedup_over_baseline"]
    line = f"remedy: {rec['remedy']}, predicted {gain:.2f}x {BASELINE}'s job throughput"
    spread = gain_spread(rec["remedy"], check)
    if spread is not None:
        low, high = gain * spread["low"], gain * spread["high"]
        line += (
            f", likely {low:.2f}x..{high:.2f}x (the gains the doctor's check against real runs "
            f"measured were {spread['low']:.2f}..{spread['high']:.2f} of its predictions, "
            f"{spread['workloads']} workloads, their intervals' ends; "
            f"{check.get('shown', 'the reference')})"
        )
    else:
        line += " (no check of this remedy against real runs to put an interval on it)"
    return f"{line}; it costs: {rec['costs']}"


def _parallelism_line(report: Diagnosis) -> str | None:
    asked, m = report.parallelism.asked, report.parallelism.max_parallelism
    if not asked or not m:
        return None
    uneven = {p: key_groups_per_subtask(p, m) for p in asked if m % p}
    even = [p for p in asked if not m % p]
    parts = []
    if even:
        ps, each = ", ".join(map(str, even)), ", ".join(str(m // p) for p in even)
        verb = "splits" if len(even) == 1 else "split"
        parts.append(f"P={ps} {verb} Flink's {m} key groups evenly ({each} each)")
    for p, groups in uneven.items():
        parts.append(
            f"P={p} gives {groups['subtasks_with_most']} of its subtasks {groups['most']} key "
            f"groups and the rest {groups['fewest']} (one more: {percent(1 / groups['fewest'])} "
            "more records where keys spread evenly)"
        )
    low, high = min(asked), min(2 * max(asked), UPPER_BOUND_MAX_PARALLELISM)
    planned = high - low + 1
    best = max_parallelism_choices((low, high))[0]
    now = sum(1 for p in range(low, high + 1) if not m % p)
    if len(best["even"]) > now:  # advice only where another max parallelism splits more
        parts.append(
            f"to run anywhere from P={low} to P={high}, max parallelism "
            f"{best['max_parallelism']} splits {len(best['even'])} of those {planned} evenly "
            f"({m}: {now}); it is fixed once state exists: choose it before the first savepoint"
        )
    return "parallelism: " + "; ".join(parts)


def verdict_lines(report: Diagnosis, check: dict[str, Any] | None) -> list[str]:
    """The verdict (see the module doc), each line wrapped to :data:`WIDTH` columns.
    ``check`` is the doctor's check against real runs whose spread the remedy's gain carries
    (a ``remedy_check`` summary with ``shown``; ``None``: no interval)."""
    i, hot = report.input, report.hot_keys
    lines = [f"verdict: {i.records:,} records, key {i.key!r}, {i.distinct_keys:,} distinct keys"]
    top = ", ".join(f"{r.key!r} {percent(r.share)}" for r in hot.top[:3])
    body = [f"hottest keys: {top or 'none (every key is null)'}"]
    for name, engine in report.engines.items():
        body.append(_engine_line(name, engine, report.parallelism.largest))
    if hot.max_speedup:
        body.append(
            f"ceiling: no parallelism runs a keyed aggregation more than "
            f"{hot.max_speedup:.2f}x faster than one subtask (the hottest key's "
            f"{percent(hot.hottest_share)} stays on one subtask)"
        )
    body += [line for line in (_remedy_line(report, check), _parallelism_line(report)) if line]
    for line in body:
        lines += wrap(line, indent="  ")
    return lines
