"""A measured figure with its spread: an :class:`Estimate` and the intervals it is made from.

A ratio printed alone says nothing about whether the next run would print the same. Every timed
figure a claim tests is an :class:`Estimate`: its value (a ratio of medians, a median) and an
interval that says how far the runs let it move:

- **bootstrap** (:func:`ratio_of_medians`, :func:`median_estimate`): the runs of each side are
  resampled with replacement, the statistic recomputed on each resample, and the central 95 %
  of those is the interval -- as criterion.rs does for a benchmark's change. With three runs a
  side the interval of a ratio of medians spans about ``[min a / max b, max a / min b]``: runs
  that overlap give an interval that holds 1. At so few runs its coverage is below the nominal
  95 % (the range of 3 runs holds their true median 3 times in 4, of 5 runs 15 times in 16), so
  "held" reads: even the runs' extremes agree. A prediction priced from other runs over this
  run's median (:func:`draws_over_median`) takes the prediction's own bootstrap distribution
  for the numerator's side;
- **order statistics** (:func:`quantile_interval`): the distribution-free interval of a
  percentile from the binomial law of the order statistics; a latency percentile of too few
  micro-batches has none;
- **run-to-run spread** (:func:`one_run`): a single run has no spread of its own; it gets its
  benchmark's documented run-to-run spread (``Benchmark.run_to_run_spread``, measured on this
  kind of machine), so one run concludes only an effect larger than that;
- **exact**: a count any run measures alike (a replay's hit ratio, bytes read, records per
  subtask) needs no interval.

A summary keeps the intervals of its figures under ``summary["intervals"][key]``
(:meth:`Estimate.to_json`); :func:`summary_estimate` reads one back, with the benchmark's
**physical bound** checked on it (:func:`bound_violation`): where two sides share a pipeline,
the job-level ratio lies between 1 and the operators' ratio, since work both sides do alike
dilutes a ratio and never amplifies it. A result that breaks the bound carries the error on its
estimate, and a claim over it is a measurement error, never a lesson.

Example::

    >>> est = ratio_of_medians([10.0, 11.0, 12.0], [1.0, 1.1, 0.9])
    >>> round(est.value, 2), est.runs, est.method
    (11.0, 3, 'bootstrap')
    >>> est.low < 11.0 < est.high, est.text(".1f", "x")
    (True, '11.0x [9.1..13.3], 3 runs')
    >>> ratio_of_medians([1.0, 1.3, 1.1], [1.2, 1.0, 1.1]).holds(1.0)
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "Estimate",
    "bound_violation",
    "draws_over_median",
    "exact",
    "lowest",
    "median_draws",
    "median_estimate",
    "one_run",
    "over",
    "quantile_interval",
    "ratio_of_medians",
    "summary_estimate",
]

#: The share of resampled statistics an interval holds.
CONFIDENCE = 0.95
#: Resamples per bootstrap interval (fixed seed: a result's interval is reproducible).
RESAMPLES = 4_000
BOOTSTRAP, SPREAD, EXACT, NONE = "bootstrap", "run-to-run spread", "exact", "no interval"
ORDER_STATISTICS = "order statistics"


@dataclass(frozen=True)
class Estimate:
    """A figure and its interval: ``value``, ``low`` .. ``high`` (``None``: no interval), the
    ``runs`` per side it was made from, the ``method`` (bootstrap, order statistics, run-to-run
    spread, exact, no interval) and ``error``: a broken physical bound, which makes the figure
    a measurement error.

    Formats as its value (``f"{est:.1f}"``), so a claim's sentence template takes it as it
    takes a number.
    """

    value: float
    low: float | None = None
    high: float | None = None
    runs: int = 1
    method: str = NONE
    error: str | None = None

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __float__(self) -> float:
        return float(self.value)

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    def holds(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval (an exact estimate: equals its value)."""
        if not self.has_interval:
            return value == self.value
        return self.low <= value <= self.high

    def text(self, spec: str = ".2f", unit: str = "") -> str:
        """``"34.0x [31.2..36.9], 5 runs"``: the value, its interval and what it rests on.

        Example::

            >>> Estimate(2.0, 1.5, 2.5, 3, BOOTSTRAP).text(".1f", "x")
            '2.0x [1.5..2.5], 3 runs'
            >>> Estimate(0.5, 0.5, 0.5, 1, EXACT).text(".0%")
            '50% (exact)'
            >>> Estimate(1.2, 1.0, 1.44, 1, SPREAD).text(".2f", "x")
            '1.20x [1.00..1.44], 1 run and its run-to-run spread'
        """
        head = f"{format(self.value, spec)}{unit}"
        if self.method == EXACT:
            return f"{head} (exact)"
        if not self.has_interval:
            return f"{head} (no interval: {self.runs} run{'s' * (self.runs != 1)})"
        span = f"[{format(self.low, spec)}..{format(self.high, spec)}]"
        if self.method == SPREAD:
            return f"{head} {span}, {self.runs} run and its run-to-run spread"
        return f"{head} {span}, {self.runs} run{'s' * (self.runs != 1)}"

    def scaled(self, factor: float) -> Estimate:
        """The estimate times a positive constant (e.g. a count over its total: a share), its
        interval with it.

        Example::

            >>> Estimate(18.0, 13.0, 24.0, 5, BOOTSTRAP).scaled(1 / 24).text(".0%")
            '75% [54%..100%], 5 runs'
        """
        if not factor > 0:
            raise ValueError(f"an estimate scales by a positive factor, got {factor}")
        low, high = ((None if b is None else b * factor) for b in (self.low, self.high))
        return replace(self, value=self.value * factor, low=low, high=high)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Estimate:
        """An estimate from :meth:`to_json` (or a bare number: no interval)."""
        if not isinstance(data, Mapping):
            return cls(float(data))
        return cls(**{k: data[k] for k in ("value", "low", "high", "runs", "method", "error")
                      if k in data})  # fmt: skip


def exact(value: float) -> Estimate:
    """A figure any run measures alike: its interval is itself.

    Example::

        >>> exact(0.5).text(".0%")
        '50% (exact)'
    """
    return Estimate(value, value, value, 1, EXACT)


def _present(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def ratio_of_medians(
    numerator: Sequence[float | None],
    denominator: Sequence[float | None],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Estimate | None:
    """The ratio of the two sides' medians, with a bootstrap interval (each side's runs
    resampled on their own); one run a side: the ratio without an interval (see
    :func:`one_run`). ``None`` values (runs that measured nothing) are left out; ``None`` when a
    side has no run.

    Example::

        >>> ratio_of_medians([4.0], [2.0])
        Estimate(value=2.0, low=None, high=None, runs=1, method='no interval', error=None)
        >>> ratio_of_medians([], [2.0]) is None
        True
    """
    a, b = _present(numerator), _present(denominator)
    if not len(a) or not len(b) or np.median(b) == 0:
        return None
    value = float(np.median(a) / np.median(b))
    runs = int(min(len(a), len(b)))
    if runs < 2:
        return Estimate(value, runs=runs)
    rng = np.random.default_rng(seed)
    top = np.median(rng.choice(a, (resamples, len(a))), axis=1)
    bottom = np.median(rng.choice(b, (resamples, len(b))), axis=1)
    ok = bottom != 0
    low, high = _percentiles(top[ok] / bottom[ok], confidence)
    return Estimate(value, min(low, value), max(high, value), runs, BOOTSTRAP)


def median_estimate(
    values: Sequence[float | None],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Estimate | None:
    """The median of ``values`` with a bootstrap interval (``None``: no value).

    Example::

        >>> est = median_estimate([3.0, 1.0, 2.0])
        >>> est.value, est.low, est.high
        (2.0, 1.0, 3.0)
    """
    a = _present(values)
    if not len(a):
        return None
    value = float(np.median(a))
    if len(a) < 2:
        return Estimate(value, runs=1)
    samples = median_draws(a, resamples=resamples, seed=seed)
    low, high = _percentiles(samples, confidence)
    return Estimate(value, min(low, value), max(high, value), len(a), BOOTSTRAP)


def median_draws(
    values: Sequence[float | None], *, resamples: int = RESAMPLES, seed: int = 0
) -> np.ndarray | None:
    """The bootstrap distribution of the median of ``values``: the medians of ``resamples``
    resamples with replacement (``None``: no value).

    Example::

        >>> draws = median_draws([3.0, 1.0, 2.0], resamples=1_000)
        >>> draws.shape, float(draws.min()), float(draws.max())
        ((1000,), 1.0, 3.0)
    """
    a = _present(values)
    if not len(a):
        return None
    rng = np.random.default_rng(seed)
    return np.median(rng.choice(a, (resamples, len(a))), axis=1)


def draws_over_median(
    value: float,
    draws: np.ndarray | None,
    runs: Sequence[float | None],
    *,
    confidence: float = CONFIDENCE,
    seed: int = 1_000,
) -> Estimate | None:
    """A figure over the median of ``runs`` (a prediction over a measurement), with the
    bootstrap interval of the quotient: ``draws``, the figure's own bootstrap distribution (one
    per resample), each over a resampled median of the runs (:func:`median_draws`), both sides
    resampled on their own as :func:`ratio_of_medians` does (``seed``: the runs' stream, apart
    from the small seeds a profile's resamples use, so that the two sides never draw alike).
    ``draws`` ``None`` (a figure with no spread): the runs' spread alone. ``None`` where no run
    measured anything.

    Example::

        >>> est = draws_over_median(100.0, np.full(RESAMPLES, 100.0), [40.0, 50.0, 80.0])
        >>> est.value, est.low, est.high
        (2.0, 1.25, 2.5)
    """
    a = _present(runs)
    if not len(a) or np.median(a) <= 0:
        return None
    quotient = float(value / np.median(a))
    if len(a) < 2:
        return Estimate(quotient, runs=len(a))
    resamples = RESAMPLES if draws is None else len(draws)
    bottom = median_draws(a, resamples=resamples, seed=seed)
    top = np.full(resamples, float(value)) if draws is None else np.asarray(draws, dtype=float)
    low, high = _percentiles(top / bottom, confidence)
    return Estimate(quotient, min(low, quotient), max(high, quotient), len(a), BOOTSTRAP)


def quantile_interval(
    samples: Sequence[float], q: float, *, confidence: float = CONFIDENCE
) -> Estimate | None:
    """The ``q`` quantile of ``samples`` with its distribution-free interval: the order
    statistics ``x(l) .. x(u)`` that hold the true quantile with probability ``confidence`` by
    the binomial law. With too few samples for that (e.g. a median of fewer than 6 micro-batches
    at 95 %) the estimate has no interval.

    Example::

        >>> est = quantile_interval(range(1, 101), 0.5)
        >>> est.value, est.low, est.high
        (50.5, 40.0, 61.0)
        >>> quantile_interval([2_661.0, 2_818.0], 0.5).has_interval
        False
    """
    from scipy.stats import binom

    x = np.sort(_present(list(samples)))
    n = len(x)
    if not n:
        return None
    value = float(np.quantile(x, q))
    tail = (1 - confidence) / 2
    # the largest l with P(B <= l - 1) <= tail and smallest u with P(B >= u) <= tail, B ~ Bin(n, q)
    low_rank = int(binom.ppf(tail, n, q))  # order statistic x(low_rank), 1-based
    high_rank = int(binom.ppf(1 - tail, n, q)) + 1
    if low_rank < 1 or high_rank > n:
        return Estimate(value, runs=n, method=ORDER_STATISTICS)  # too few samples for one
    return Estimate(value, float(x[low_rank - 1]), float(x[high_rank - 1]), n, ORDER_STATISTICS)


def lowest(estimates) -> Estimate | None:
    """The least of several figures (a speedup's worst over cardinalities), as an estimate:
    the least value, and the least low .. the least high of their intervals (the least of
    several quantities lies there when each lies in its own). ``estimates``: Estimates or their
    JSON; ``None`` for none.

    Example::

        >>> lowest([Estimate(2.0, 1.5, 2.5, 3, BOOTSTRAP), {"value": 1.2, "low": 0.9,
        ...         "high": 1.6, "runs": 3, "method": BOOTSTRAP}]).text(".1f", "x")
        '1.2x [0.9..1.6], 3 runs'
    """
    found = [e if isinstance(e, Estimate) else Estimate.from_json(e) for e in estimates if e]
    if not found:
        return None
    worst = min(found, key=lambda e: e.value)
    if not all(e.has_interval for e in found):
        return Estimate(worst.value, runs=worst.runs)
    return Estimate(
        worst.value,
        min(e.low for e in found),
        min(e.high for e in found),
        min(e.runs for e in found),
        worst.method,
    )


def one_run(value: float, spread: float | None) -> Estimate:
    """One run's figure, with its benchmark's documented run-to-run ``spread`` (relative: 0.3 is
    a run that may land 30 % either way) as its interval; no interval without one.

    Example::

        >>> one_run(2.0, 0.25).text(".2f", "x")
        '2.00x [1.60..2.50], 1 run and its run-to-run spread'
    """
    if spread is None:
        return Estimate(value, runs=1)
    return Estimate(value, value / (1 + spread), value * (1 + spread), 1, SPREAD)


def over(numerator: float | Estimate, estimate: Estimate) -> Estimate:
    """A figure over an estimate (a prediction over a measurement), with the interval the
    estimate gives it (its ends swap: a larger measurement, a smaller quotient) -- and, for a
    numerator that is an estimate too, its own interval's ends as well (from the lowest over
    the highest to the highest over the lowest: both spreads held, none narrowed); none where
    the estimate has none or its interval reaches 0.

    Example::

        >>> over(100.0, Estimate(50.0, 40.0, 80.0, 3, BOOTSTRAP)).text(".2f")
        '2.00 [1.25..2.50], 3 runs'
        >>> over(Estimate(100.0, 90.0, 120.0), Estimate(50.0, 40.0, 80.0, 3, BOOTSTRAP)).text(".2f")
        '2.00 [1.12..3.00], 3 runs'
    """
    value = float(numerator)
    low, high = value, value
    if isinstance(numerator, Estimate) and numerator.has_interval:
        low, high = numerator.low, numerator.high
    if not estimate.has_interval or estimate.low <= 0:
        return Estimate(value / estimate.value, runs=estimate.runs)
    return Estimate(
        value / estimate.value,
        low / estimate.high,
        high / estimate.low,
        estimate.runs,
        estimate.method,
    )


def bound_violation(job: Estimate, operator: Estimate) -> str | None:
    """Where a job-level ratio breaks its physical bound: the work both sides share dilutes a
    ratio, so the job's ratio lies between 1 and the operators' (on whichever side of 1 that
    is). A violation is one whose whole interval lies outside ``[min(1, op), max(1, op)]`` (the
    operators' interval included); the message gives both figures. ``None``: within the bound,
    or not checkable (a figure without an interval: one run's noise proves nothing).

    Example::

        >>> bound_violation(Estimate(47.5, 40.0, 55.0, 3, BOOTSTRAP),
        ...                 Estimate(25.0, 22.0, 28.0, 3, BOOTSTRAP))
        "job ratio above its operators' ratio (job 47.5x [40.0..55.0], 3 runs; operators 25.0x [22.0..28.0], 3 runs): work both sides share cannot amplify a ratio (a measurement error)"
        >>> bound_violation(Estimate(16.0, 14.0, 18.0), Estimate(25.0, 22.0, 28.0)) is None
        True
        >>> bound_violation(Estimate(1.1), Estimate(0.9)) is None  # one bare run each
        True
    """  # noqa: E501
    if not (job.has_interval and operator.has_interval):
        return None  # bare figures of one run: within their noise, no proof either way
    job_low, job_high, op_low, op_high = job.low, job.high, operator.low, operator.high
    if job_low > max(1.0, op_high):
        where = "above"
    elif job_high < min(1.0, op_low):
        where = "below"
    else:
        return None
    return (
        f"job ratio {where} its operators' ratio (job {job.text('.1f', 'x')}; operators "
        f"{operator.text('.1f', 'x')}): work both sides share cannot amplify a ratio (a "
        "measurement error)"
    )


def summary_estimate(
    result: Any,
    key: str,
    *,
    bounds: Mapping[str, str] | None = None,
    spread: float | None = None,
) -> Estimate | None:
    """Figure ``key`` of a result's summary as an :class:`Estimate`: its stored interval
    (``summary["intervals"][key]``), else one run's value widened by ``spread`` (the
    benchmark's run-to-run spread) when the result has one run, else no interval. ``bounds``
    (job key -> operator key) checks the physical bound: a figure that breaks it carries the
    error. ``None`` where the summary lacks the figure.

    Example::

        >>> summary = {"runs": 3, "speedup": 47.5, "operator_speedup": 25.0, "intervals": {
        ...     "speedup": {"value": 47.5, "low": 40.0, "high": 55.0, "runs": 3},
        ...     "operator_speedup": {"value": 25.0, "low": 22.0, "high": 28.0, "runs": 3}}}
        >>> est = summary_estimate({"summary": summary}, "speedup",
        ...                        bounds={"speedup": "operator_speedup"})
        >>> est.value, est.error is not None
        (47.5, True)
    """
    summary = (
        (result or {}).get("summary", {})
        if isinstance(result, Mapping)
        else (getattr(result, "summary", {}) or {})
    )
    value = summary.get(key)
    if value is None:
        return None
    stored = (summary.get("intervals") or {}).get(key)
    estimate = (
        Estimate.from_json(stored)
        if stored is not None
        else Estimate(float(value), runs=summary.get("runs") or 1)
    )
    if not estimate.has_interval and estimate.runs == 1:
        estimate = one_run(estimate.value, spread)
    partner = (bounds or {}).get(key)
    if partner is not None:
        operator = summary_estimate(result, partner, spread=spread)
        if operator is not None:
            estimate = replace(estimate, error=bound_violation(estimate, operator))
    return estimate
