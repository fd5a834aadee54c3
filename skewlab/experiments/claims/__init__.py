"""Claims: a chapter's lessons as data, each checked against the figures it is about.

A :class:`Claim` is one lesson of a chapter -- "buffering beats the naive reduce at 20 keys" --
with what it is checked on: a function from a result to named **figures** (``None`` where the
result did not measure them) and a **check** over those figures. A notebook never states a
measured outcome by hand: it shows its chapter's claims evaluated over the figures on the page
(:func:`evaluate`), each one three times -- over *this run*, over the chapter's **reference**
(the full-size result shipped with skewlab, :mod:`skewlab.experiments.references`) and beside
the **seed's** published figure -- and each marked with a **verdict**. A claim that does not
hold says why, in the chapter's words (:attr:`Claim.why`).

A verdict is a statistic. A timed figure is an :class:`~skewlab.experiments.intervals.Estimate`
with an interval (:mod:`skewlab.experiments.intervals`: a bootstrap over the runs, or one run
and its benchmark's documented run-to-run spread), and the check is made at the figures' value
and at every corner of their intervals:

- **held**: the check passes everywhere -- the runs cannot make it fail;
- **not held**: it fails everywhere;
- **inconclusive**: it passes somewhere and fails elsewhere (the runs cannot tell), or a timed
  figure has no interval at all;
- **measurement error**: a figure breaks a physical bound (a job ratio beyond its operators'
  ratio, :func:`~skewlab.experiments.intervals.bound_violation`): never rendered as a lesson;
- **not measured**: the result lacks a figure.

Corners suffice for the checks claims make (comparisons, their conjunctions, a band around a
value): such a check changes its answer inside a box of intervals only if it differs between
two of the box's corners or between a corner and the value. A claim over counts that every run
measures alike (a replay's hit ratios, bytes read) says so with ``exact=True`` and needs no
interval; any other claim whose figures carry none is inconclusive, never held.

Where a seed's lesson reverses on this runtime, the claim *is* the reversal
(``reverses_seed=True``), explained in :attr:`Claim.why` and measured.

Each chapter's claims live in ``skewlab.experiments.claims.<chapter id>`` as ``CLAIMS``
(:func:`chapter_claims`); they read results, they never run anything, and no experiment module
imports them (so a claim's wording can change without touching the timed code a reference's
fingerprint covers).

Example::

    >>> claim = Claim(
    ...     id="demo", source="buffering",
    ...     statement="buffering beats the naive reduce at 20 keys",
    ...     measured="buffered / naive job throughput at 20 keys: {speedup:.1f}x",
    ...     figures=lambda r: {"speedup": r["summary"].get("speedup_at_20_keys")},
    ...     check=lambda f: f["speedup"] > 1,
    ...     seed="about 45x (Flink, RocksDB)")
    >>> outcome = claim.evaluate({"summary": {"speedup_at_20_keys": 12.5}})
    >>> outcome.status, outcome.text
    ('inconclusive', 'buffered / naive job throughput at 20 keys: 12.5x')
    >>> from skewlab.experiments.intervals import Estimate
    >>> timed = Claim("demo", "buffering", "s", "{speedup:.1f}x",
    ...               figures=lambda r: {"speedup": r}, check=lambda f: f["speedup"] > 1)
    >>> timed.evaluate(Estimate(12.5, 9.0, 15.0, 5, "bootstrap")).status
    'held'
    >>> timed.evaluate(Estimate(1.03, 0.9, 1.2, 5, "bootstrap")).status
    'inconclusive'
    >>> timed.evaluate(Estimate(1.03, 0.9, 1.2, 5, "bootstrap")).interval_text
    '1.0x [0.9..1.2] (5 runs)'
    >>> claim.evaluate({"summary": {}}).status
    'not measured'
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skewlab.experiments.intervals import Estimate, median_estimate, summary_estimate

__all__ = [
    "HELD",
    "INCONCLUSIVE",
    "MEASUREMENT_ERROR",
    "NOT_HELD",
    "NOT_MEASURED",
    "STATUSES",
    "Claim",
    "Outcome",
    "chapter_claims",
    "claim",
    "count_held",
    "estimate",
    "figure_field",
    "latency_ends",
    "summary_of",
    "summary_value",
]

HELD, NOT_HELD, NOT_MEASURED = "held", "not held", "not measured"
INCONCLUSIVE, MEASUREMENT_ERROR = "inconclusive", "measurement error"
#: Every verdict, in the order counts and tables show them.
STATUSES = (HELD, NOT_HELD, INCONCLUSIVE, MEASUREMENT_ERROR, NOT_MEASURED)


def summary_of(result: Any) -> Mapping[str, Any]:
    """The summary of a result: a ``BenchResult``, its JSON dict or a reference."""
    if result is None:
        return {}
    if isinstance(result, Mapping):
        return result.get("summary", {})
    return getattr(result, "summary", {})


def summary_value(result: Any, key: str) -> Any:
    """One figure of a result's summary (``None`` where it has none).

    Example::

        >>> summary_value({"summary": {"speedup_1000": 5.2}}, "speedup_1000")
        5.2
    """
    return summary_of(result).get(key)


def _experiment_of(result: Any) -> str | None:
    if isinstance(result, Mapping):
        return result.get("experiment")
    return getattr(result, "experiment", None)


def estimate(result: Any, key: str) -> Estimate | None:
    """Figure ``key`` of a benchmark result's summary as an
    :class:`~skewlab.experiments.intervals.Estimate`: with its stored interval, or one run's
    value and its benchmark's run-to-run spread, and checked against the benchmark's physical
    bounds (its record's ``bounds``: job ratio -> operators' ratio).

    Example::

        >>> estimate({"experiment": "buffering", "summary": {"runs": 1, "x": 20.0}}, "x").text()
        '20.00 [2.90..138.00], 1 run and its run-to-run spread'
        >>> estimate({"summary": {}}, "x") is None
        True
    """
    from skewlab.experiments.chapters import BENCHMARKS

    bench = BENCHMARKS.get(_experiment_of(result) or "")
    return summary_estimate(
        result,
        key,
        bounds=bench.bounds if bench else None,
        spread=bench.run_to_run_spread if bench else None,
    )


def latency_ends(rows) -> dict[str, Any] | None:
    """The median latency at the shortest and the longest trigger interval of a latency sweep
    (rows with ``trigger_interval_ms`` and ``latency_p50_ms``; rows without an interval, a
    baseline, left out): ``short``, ``long``, ``p50_short``, ``p50_long``, each p50 the median
    over the sweep's rounds with its bootstrap interval (one round: no interval); ``None`` for
    fewer than two intervals.

    Example::

        >>> ends = latency_ends([
        ...     {"trigger_interval_ms": 500.0, "latency_p50_ms": 250.0},
        ...     {"trigger_interval_ms": 500.0, "latency_p50_ms": 262.0},
        ...     {"trigger_interval_ms": None, "latency_p50_ms": 0.2},
        ...     {"trigger_interval_ms": 10.0, "latency_p50_ms": 5.0},
        ...     {"trigger_interval_ms": 10.0, "latency_p50_ms": 6.0}])
        >>> ends["short"], ends["long"], ends["p50_long"].text(".0f")
        (10.0, 500.0, '256 [250..262], 2 runs')
    """
    by_interval: dict[float, list[float]] = {}
    for r in rows:
        interval = r.get("trigger_interval_ms")
        if interval is None or interval != interval or r.get("latency_p50_ms") is None:
            continue
        by_interval.setdefault(float(interval), []).append(float(r["latency_p50_ms"]))
    if len(by_interval) < 2:
        return None
    short, long = min(by_interval), max(by_interval)
    return {
        "short": short,
        "long": long,
        "p50_short": median_estimate(by_interval[short]),
        "p50_long": median_estimate(by_interval[long]),
    }


def figure_field(template: str, name: str) -> re.Match[str] | None:
    """Where figure ``name`` stands in a claim's measured sentence ``template``: ``{name}`` or
    ``{name:spec}`` and a unit sign right after it (``x``, ``%``); group 1 is its format spec
    (``None`` where it has none), so that a figure is written elsewhere as the claim writes it.

    Example::

        >>> figure_field("buffered / naive at 20 keys: {speedup:.1f}x", "speedup").group(0, 1)
        ('{speedup:.1f}x', '.1f')
        >>> figure_field("{n} workloads", "speedup") is None
        True
    """
    return re.search(r"\{" + re.escape(name) + r"(?::([^}]*))?\}(?:x|%)?", template)


def rows_of(result: Any) -> list[dict[str, Any]]:
    """The rows of a result (empty when a reference left them out)."""
    if result is None:
        return []
    if isinstance(result, Mapping):
        return result.get("rows") or []
    return getattr(result, "rows", None) or []


@dataclass(frozen=True)
class Outcome:
    """A claim evaluated over one result: ``status`` (one of :data:`STATUSES`), the figures it
    read, the measured sentence rendered from them (``text``) and ``note``: why a verdict is
    inconclusive or a measurement error."""

    claim: Claim
    status: str
    figures: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    note: str = ""

    @property
    def held(self) -> bool:
        return self.status == HELD

    @property
    def interval_text(self) -> str:
        """The measured sentence with each estimate's interval after its figure, in the
        claim's own format, and what the intervals rest on: ``"... 20 keys: 34.0x [31.2..36.9]
        (5 runs)"``; empty where no figure carries an interval."""
        if not self.figures or any(v is None for v in self.figures.values()):
            return ""
        template, runs, methods = self.claim.measured, set(), set()
        for name, value in self.figures.items():
            if not isinstance(value, Estimate) or not value.has_interval:
                continue
            if value.method == "exact":
                continue
            runs.add(value.runs)
            methods.add(value.method)
            match = figure_field(template, name)
            if match is None:
                continue
            spec = match.group(1) or ".3g"
            span = f" [{format(value.low, spec)}..{format(value.high, spec)}]"
            span = span.replace("{", "{{").replace("}", "}}")
            template = template[: match.end()] + span + template[match.end() :]
        if not runs:
            return ""
        fewest = min(runs)
        basis = f"{fewest} run{'s' * (fewest != 1)}"
        if "run-to-run spread" in methods:
            basis += "; one run: its benchmark's run-to-run spread"
        return f"{template.format(**self.figures)} ({basis})"


def verdict(
    check: Callable[[Mapping[str, Any]], bool], figures: Mapping[str, Any], *, exact: bool
) -> tuple[str, str]:
    """The verdict of ``check`` over ``figures`` (see the module doc) and, when inconclusive,
    why.

    Example::

        >>> from skewlab.experiments.intervals import Estimate
        >>> verdict(lambda f: f["r"] > 1, {"r": Estimate(3.0, 2.0, 4.0, 3, "bootstrap")},
        ...         exact=False)
        ('held', '')
        >>> verdict(lambda f: f["r"] > 1, {"r": Estimate(1.1, 0.8, 1.4, 3, "bootstrap")},
        ...         exact=False)
        ('inconclusive', 'the runs cannot tell: r 0.8..1.4 straddles what the claim tests')
        >>> verdict(lambda f: f["r"] > 1, {"r": 3.0}, exact=False)[0]
        'inconclusive'
        >>> verdict(lambda f: f["r"] > 1, {"r": 3.0}, exact=True)
        ('held', '')
    """
    point = {k: v.value if isinstance(v, Estimate) else v for k, v in figures.items()}
    estimates = {k: v for k, v in figures.items() if isinstance(v, Estimate)}
    if not exact and not estimates:
        return INCONCLUSIVE, "no interval: a timed figure measured without its spread"
    bare = [k for k, v in estimates.items() if not v.has_interval]
    if bare:
        samples = [k for k in bare if estimates[k].method == "order statistics"]
        if samples:
            n = min(estimates[k].runs for k in samples)
            return INCONCLUSIVE, (
                f"no interval for {', '.join(samples)}: {n} sample{'s' * (n != 1)} (e.g. "
                "micro-batches) are too few for a 95 % interval of that percentile"
            )
        runs = min(estimates[k].runs for k in bare)
        if runs > 1:  # several runs, no interval kept: a result from before intervals were
            return INCONCLUSIVE, (
                f"no interval for {', '.join(bare)}: its {runs} runs were saved without one "
                "(a result from before intervals were kept): re-measure it"
            )
        return INCONCLUSIVE, (
            f"no interval for {', '.join(bare)} (1 run and no documented run-to-run "
            "spread): measure with more runs (--runs 3)"
        )
    ranged = [k for k, v in estimates.items() if v.low != v.high]
    if len(ranged) > 10:
        raise ValueError(f"a claim over {len(ranged)} intervals: at most 10")
    answers = {bool(check(point))}
    for corner in itertools.product(*[(estimates[k].low, estimates[k].high) for k in ranged]):
        answers.add(bool(check({**point, **dict(zip(ranged, corner, strict=True))})))
    if answers == {True}:
        return HELD, ""
    if answers == {False}:
        return NOT_HELD, ""
    spans = ", ".join(
        f"{k} {format(estimates[k].low, '.3g')}..{format(estimates[k].high, '.3g')}" for k in ranged
    )
    return INCONCLUSIVE, f"the runs cannot tell: {spans} straddles what the claim tests"


@dataclass(frozen=True)
class Claim:
    """One lesson: ``statement`` (what it says), ``measured`` (a template over its figures),
    ``figures(result) -> dict`` (any value ``None``: not measured; a timed figure an
    :class:`~skewlab.experiments.intervals.Estimate`), ``check(figures) -> bool`` (given plain
    numbers), the ``seed``'s figure as published (``""`` where the seed has none), ``why``
    (when and why it may not hold; shown when it does not), ``exact`` (its figures are counts
    every run measures alike: no interval needed) and ``source``: the result it reads, a
    benchmark id (whose shipped reference it is also checked on) or another name for a result
    the notebook computes itself (no reference)."""

    id: str
    source: str
    statement: str
    measured: str
    figures: Callable[[Any], Mapping[str, Any] | None]
    check: Callable[[Mapping[str, Any]], bool]
    seed: str = ""
    why: str = ""
    reverses_seed: bool = False
    exact: bool = False

    def evaluate(self, result: Any) -> Outcome:
        """This claim over ``result`` (``None``: nothing measured)."""
        if result is None:
            return Outcome(self, NOT_MEASURED)
        try:
            figures = dict(self.figures(result) or {})
        except (KeyError, IndexError, TypeError, ZeroDivisionError):
            figures = {}
        if not figures or any(v is None for v in figures.values()):
            return Outcome(self, NOT_MEASURED, figures)
        text = self.measured.format(**figures)
        errors = [v.error for v in figures.values() if isinstance(v, Estimate) and v.error]
        if errors:
            return Outcome(self, MEASUREMENT_ERROR, figures, text, errors[0])
        status, note = verdict(self.check, figures, exact=self.exact)
        return Outcome(self, status, figures, text, note)


def chapter_claims(chapter_id: str) -> tuple[Claim, ...]:
    """The claims of chapter ``chapter_id`` (empty where it declares none).

    Example::

        >>> [c.id for c in chapter_claims("buffering")][:2]
        ['buffer_wins_at_20_keys', 'list_buffer_wins_at_20_keys']
    """
    try:
        module = importlib.import_module(f"{__name__}.{chapter_id}")
    except ModuleNotFoundError:
        return ()
    return tuple(module.CLAIMS)


def claim(chapter_id: str, claim_id: str) -> Claim:
    """One claim of a chapter, by its id.

    Example::

        >>> claim("state_cache", "cache_wins_at_all_hits").source
        'state_cache'
    """
    from skewlab.errors import SkewlabInputError

    by_id = {c.id: c for c in chapter_claims(chapter_id)}
    if claim_id not in by_id:
        raise SkewlabInputError(
            f"chapter {chapter_id!r} has no claim {claim_id!r}: use one of {', '.join(by_id)}"
        )
    return by_id[claim_id]


def count_held(statuses) -> dict[str, int]:
    """How many of ``statuses`` (an outcome's ``status``, one of :data:`STATUSES`) are each.

    Example::

        >>> c = Claim("x", "s", "s", "{v}", lambda r: {"v": r}, lambda f: f["v"] > 0, exact=True)
        >>> count_held(c.evaluate(v).status for v in (1, -1, None))
        {'held': 1, 'not held': 1, 'inconclusive': 0, 'measurement error': 0, 'not measured': 1}
    """
    counts = dict.fromkeys(STATUSES, 0)
    for status in statuses:
        counts[status] += 1
    return counts
