"""Chart titles that state the result a chart shows, computed from the figures it plots.

A reader skimming a report reads the title first; "Latency vs trigger interval" tells them
what the axes are, "p50 latency 55 ms at a 100 ms trigger interval, 510 ms at 1,000 ms" tells
them what was measured. The figure builders use these when no title is given.

Example::

    >>> import pandas as pd
    >>> sweep = pd.DataFrame({"trigger_interval_ms": [10.0, 500.0],
    ...                       "latency_p50_ms": [7.5, 260.0]})
    >>> latency_title(sweep, "records", 2_000)
    'p50 latency 7.5 ms at a 10 ms trigger interval, 260 ms at 500 ms (2,000 records/s paced)'
"""

from __future__ import annotations

import pandas as pd

from skewlab.experiments.chapters import SEED_KEYS

__all__ = ["latency_title", "milliseconds", "seed_point", "whose_figures"]


def whose_figures(result, size: str | None = None) -> str:
    """Whose figures a chart, table or printed block shows, for its title or caption: a
    shipped reference (a result with a ``provenance``: when and on what it was measured) or
    this run (its size, on this machine).

    Example::

        >>> whose_figures({"size": "quick", "summary": {}})
        'this run (quick, this machine)'
        >>> whose_figures({"size": "full", "provenance": {"measured_at": "2026-11-26T19:02:14Z",
        ...     "machine": {"cpu": "AMD EPYC", "cores": 2}}})
        'the reference (full, measured 2026-11-26 on AMD EPYC, 2 cores)'

    A :class:`~skewlab.experiments.results.BenchResult` read back from a reference keeps its
    provenance (``BenchResult.from_json_dict``), and is named the same way.
    """
    if isinstance(result, dict):
        provenance = result.get("provenance")
    else:
        provenance = getattr(result, "provenance", None)
    if size is None:
        size = result.get("size") if isinstance(result, dict) else getattr(result, "size", None)
    if provenance:
        machine = provenance.get("machine") or {}
        on = f" on {machine.get('cpu')}, {machine.get('cores')} cores" if machine else ""
        when = (provenance.get("measured_at") or "?")[:10]
        return f"the reference ({size or 'full'}, measured {when}{on})"
    return f"this run ({size or '?'}, this machine)"


def seed_point(cardinalities) -> int:
    """The key cardinality a title quotes: the seed's 20 if measured, else the fewest keys.

    Example::

        >>> seed_point([20_000, 20, 1]), seed_point([1_000, 100])
        (20, 100)
    """
    measured = {int(k) for k in cardinalities}
    return SEED_KEYS if SEED_KEYS in measured else min(measured)


def milliseconds(value: float) -> str:
    """A latency in ms with the digits a reader needs: ``7.5``, ``55``, ``1,200``.

    Example::

        >>> milliseconds(7.456), milliseconds(54.6), milliseconds(1234.0)
        ('7.5', '55', '1,234')
    """
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def latency_title(sweep: pd.DataFrame, unit: str, rate: float | None) -> str:
    """What a latency-vs-trigger-interval chart shows: p50 at the shortest and the longest
    interval of ``sweep`` (columns ``trigger_interval_ms``, ``latency_p50_ms``), and the paced
    source's ``rate`` in ``unit`` per second."""
    table = sweep.dropna(subset=["latency_p50_ms"]).sort_values("trigger_interval_ms")
    paced = f" ({rate:,.0f} {unit}/s paced)" if rate else ""
    if not len(table):
        return f"Latency vs trigger interval{paced}"
    first, last = table.iloc[0], table.iloc[-1]
    text = (
        f"p50 latency {milliseconds(first['latency_p50_ms'])} ms at a "
        f"{first['trigger_interval_ms']:,.0f} ms trigger interval"
    )
    if len(table) > 1:
        text += (
            f", {milliseconds(last['latency_p50_ms'])} ms at {last['trigger_interval_ms']:,.0f} ms"
        )
    return text + paced
