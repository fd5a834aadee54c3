"""Numbers as the lessons write them, in sentences and in the terminal's tables: a share as a
percent, a ratio as ``4.2x``, a value or ``-`` where nothing was measured, a spread of runs as
``median [min..max]``.

Example::

    >>> percent(0.99995), times(4.21), times(None), number(1234.5, ",.0f")
    ('99.995%', '4.2x', '-', '1,234')
    >>> spread_text({"min": 1.0, "median": 2.0, "max": 3.5}, ".1f")
    '2.0 [1.0..3.5]'
"""

from __future__ import annotations

import math

__all__ = ["estimate_text", "number", "percent", "spread_text", "times"]


def percent(share: float | None) -> str:
    """``share`` (a fraction) as a percent: one decimal at most where that is exact enough, two
    significant digits for a share under 0.1%, more decimals where one would round it to 100%;
    ``-`` for ``None`` -- never rounded to 0% when something was there, nor to 100% when
    something was missing.

    Example::

        >>> [percent(v) for v in (0.0, 0.5, 0.135, 0.99995, 2.9e-05, 1.0)]
        ['0%', '50%', '13.5%', '99.995%', '0.0029%', '100%']
        >>> percent(None)
        '-'
    """
    if share is None:
        return "-"
    value = share * 100
    if 0 < abs(value) < 0.1:
        decimals = 1 - math.floor(math.log10(abs(value)))
    else:
        decimals = 1
        while value != 100 and round(value, decimals) == 100 and decimals < 9:
            decimals += 1
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") + "%"


def number(value: float | None, spec: str, missing: str = "-") -> str:
    """``value`` formatted by ``spec``, or ``missing`` where nothing was measured (``None``).

    Example::

        >>> number(0.5, ".0%"), number(None, ".0%"), number(None, ".0%", "n/a")
        ('50%', '-', 'n/a')
    """
    return missing if value is None else format(value, spec)


def times(value: float | None, spec: str = ".1f", missing: str = "-") -> str:
    """A ratio as ``4.2x`` (``spec`` for the number), or ``missing`` for ``None``.

    Example::

        >>> times(21.6), times(0.956, ".2f"), times(None, "5.1f", "     -")
        ('21.6x', '0.96x', '     -')
    """
    return missing if value is None else f"{format(value, spec)}x"


def spread_text(spread: dict, spec: str, unit: str = "") -> str:
    """A spread of runs (:func:`~skewlab.experiments.results.spread`: ``min``, ``median``,
    ``max``) as ``median [min..max]``, each by ``spec`` (``unit`` after the median, e.g. ``x``);
    one figure where the runs do not spread (one run: its min, median and max are one value);
    ``-`` when nothing was measured.

    Example::

        >>> spread_text({"min": 9_000.0, "median": 12_500.0, "max": 13_000.0}, ",.0f")
        '12,500 [9,000..13,000]'
        >>> spread_text({"min": 17_413.0, "median": 17_413.0, "max": 17_413.0}, ",.0f")
        '17,413'
        >>> spread_text({"min": 0.91, "median": 0.93, "max": 0.95}, ".3f", "x")
        '0.930x [0.910..0.950]'
        >>> spread_text({"min": None, "median": None, "max": None}, ".2f")
        '-'
    """
    if spread["median"] is None:
        return "-"
    median = format(spread["median"], spec) + unit
    low, high = format(spread["min"], spec), format(spread["max"], spec)
    return median if low == high else f"{median} [{low}..{high}]"


def estimate_text(estimate, spec: str = ".1f", unit: str = "x", missing: str = "-") -> str:
    """A figure with its interval (:class:`~skewlab.experiments.intervals.Estimate` or its
    JSON) as ``34.0x [31.2..36.9]``; the figure alone where it has no interval; ``missing`` for
    ``None``.

    Example::

        >>> estimate_text({"value": 34.0, "low": 31.2, "high": 36.9, "runs": 5})
        '34.0x [31.2..36.9]'
        >>> estimate_text({"value": 1.03, "runs": 1}, ".2f"), estimate_text(None)
        ('1.03x', '-')
    """
    from skewlab.experiments.intervals import Estimate

    if estimate is None:
        return missing
    est = estimate if isinstance(estimate, Estimate) else Estimate.from_json(estimate)
    head = f"{format(est.value, spec)}{unit}"
    if not est.has_interval or est.low == est.high:
        return head
    return f"{head} [{format(est.low, spec)}..{format(est.high, spec)}]"
