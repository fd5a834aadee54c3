"""Claims: a chapter's lessons as data, each checked against the figures it is about.

A :class:`Claim` is one lesson of a chapter -- "buffering beats the naive reduce at 20 keys" --
with what it is checked on: a function from a result to named **figures** (``None`` where the
result did not measure them) and a **check** over those figures. A notebook never states a
measured outcome by hand: it shows its chapter's claims evaluated over the figures on the page
(:func:`evaluate`), each one three times -- over *this run*, over the chapter's **reference**
(the full-size result shipped with skewlab, :mod:`skewlab.experiments.references`) and beside
the **seed's** published figure -- and each marked held, not held or not measured. A claim
that does not hold says why, in the chapter's words (:attr:`Claim.why`).

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
    ('held', 'buffered / naive job throughput at 20 keys: 12.5x')
    >>> claim.evaluate({"summary": {}}).status
    'not measured'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HELD",
    "NOT_HELD",
    "NOT_MEASURED",
    "Claim",
    "Outcome",
    "chapter_claims",
    "claim",
    "count_held",
    "latency_ends",
    "summary_of",
    "summary_value",
]

HELD, NOT_HELD, NOT_MEASURED = "held", "not held", "not measured"


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


def latency_ends(rows) -> dict[str, float] | None:
    """The median latency at the shortest and the longest trigger interval of a latency sweep
    (rows with ``trigger_interval_ms`` and ``latency_p50_ms``; rows without an interval, a
    baseline, left out): ``short``, ``long``, ``p50_short``, ``p50_long``; ``None`` for fewer
    than two intervals.

    Example::

        >>> latency_ends([{"trigger_interval_ms": 500.0, "latency_p50_ms": 250.0},
        ...               {"trigger_interval_ms": None, "latency_p50_ms": 0.2},
        ...               {"trigger_interval_ms": 10.0, "latency_p50_ms": 5.0}])
        {'short': 10.0, 'long': 500.0, 'p50_short': 5.0, 'p50_long': 250.0}
    """
    timed = sorted(
        (r for r in rows if r.get("trigger_interval_ms") == r.get("trigger_interval_ms")
         and r.get("trigger_interval_ms") is not None),
        key=lambda r: r["trigger_interval_ms"],
    )  # fmt: skip
    if len(timed) < 2:
        return None
    first, last = timed[0], timed[-1]
    return {
        "short": float(first["trigger_interval_ms"]),
        "long": float(last["trigger_interval_ms"]),
        "p50_short": float(first["latency_p50_ms"]),
        "p50_long": float(last["latency_p50_ms"]),
    }


def rows_of(result: Any) -> list[dict[str, Any]]:
    """The rows of a result (empty when a reference left them out)."""
    if result is None:
        return []
    if isinstance(result, Mapping):
        return result.get("rows") or []
    return getattr(result, "rows", None) or []


@dataclass(frozen=True)
class Outcome:
    """A claim evaluated over one result: ``status`` (held / not held / not measured), the
    figures it read and the measured sentence rendered from them (``text``)."""

    claim: Claim
    status: str
    figures: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @property
    def held(self) -> bool:
        return self.status == HELD


@dataclass(frozen=True)
class Claim:
    """One lesson: ``statement`` (what it says), ``measured`` (a template over its figures),
    ``figures(result) -> dict`` (any value ``None``: not measured), ``check(figures) -> bool``,
    the ``seed``'s figure as published (``""`` where the seed has none), ``why`` (when and why
    it may not hold; shown when it does not) and ``source``: the result it reads, a benchmark
    id (whose shipped reference it is also checked on) or another name for a result the
    notebook computes itself (no reference)."""

    id: str
    source: str
    statement: str
    measured: str
    figures: Callable[[Any], Mapping[str, Any] | None]
    check: Callable[[Mapping[str, Any]], bool]
    seed: str = ""
    why: str = ""
    reverses_seed: bool = False

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
        status = HELD if self.check(figures) else NOT_HELD
        return Outcome(self, status, figures, self.measured.format(**figures))


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
    """How many of ``statuses`` (an outcome's ``status``: held / not held / not measured) are
    each.

    Example::

        >>> c = Claim("x", "s", "s", "{v}", lambda r: {"v": r}, lambda f: f["v"] > 0)
        >>> count_held(c.evaluate(v).status for v in (1, -1, None))
        {'held': 1, 'not held': 1, 'not measured': 1}
    """
    counts = {HELD: 0, NOT_HELD: 0, NOT_MEASURED: 0}
    for status in statuses:
        counts[status] += 1
    return counts
