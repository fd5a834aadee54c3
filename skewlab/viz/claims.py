"""A chapter's claims as a notebook shows them: each lesson over this run, over the shipped
reference and beside the seed, marked with its verdict -- held, not held, inconclusive,
measurement error or not measured -- and the interval it rests on.

:func:`claims_table` evaluates the claims of a chapter (:mod:`skewlab.experiments.claims`) whose
sources the notebook passes (``buffering=result``, ``latency_sweep=sweep`` ...): a notebook may
show a chapter's claims in several places, each beside the figures it reads. For a source that
is a benchmark, the claim is also evaluated over the benchmark's reference
(:mod:`skewlab.experiments.references`), whose provenance is printed under the table, and which
says so when it was measured by other code than the running one.

The table opens with the chapter's question (:attr:`Chapter.question`) and its answer: the
claims the registry says answer it (``answered_by``), each with this run's and the reference's
verdict. The returned :class:`ClaimsTable` renders as HTML in a notebook and as text in a
terminal, and carries its outcomes as JSON (MIME type :data:`MIME_TYPE`), which ``skewlab
report`` counts on its index page.

Example::

    >>> table = claims_table("buffering", size="quick", buffering={
    ...     "experiment": "buffering", "summary": {"runs": 3, "speedup_at_20_keys": 12.0,
    ...     "intervals": {"speedup_at_20_keys": {"value": 12.0, "low": 9.5, "high": 14.0,
    ...                                          "runs": 3, "method": "bootstrap"}}}})
    >>> str(table).startswith("The question: How much faster does an in-memory buffer")
    True
    >>> str(table).splitlines()[3].split(": ", 1)[1]  # the answer: the first claim, this run
    'held -- buffered / naive job throughput at 20 keys: 12.0x [9.5..14.0] (3 runs)'
    >>> table.counts()["this_run"]["held"] >= 1
    True
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import BENCHMARKS
from skewlab.experiments.chapters import chapter as chapter_record
from skewlab.experiments.claims import (
    HELD,
    INCONCLUSIVE,
    MEASUREMENT_ERROR,
    NOT_HELD,
    NOT_MEASURED,
    Claim,
    Outcome,
    chapter_claims,
    count_held,
)
from skewlab.experiments.machine import describe_machine
from skewlab.experiments.references import load_reference, reference_status
from skewlab.viz.palette import COLORS

__all__ = ["MIME_TYPE", "ClaimsTable", "claims_table", "outcomes_from_notebook"]

#: The MIME type of a claims table's outcomes in an executed notebook.
MIME_TYPE = "application/vnd.skewlab.claims+json"
_MARKS = {
    HELD: "held",
    NOT_HELD: "NOT HELD",
    INCONCLUSIVE: "inconclusive",
    MEASUREMENT_ERROR: "MEASUREMENT ERROR",
    NOT_MEASURED: "not measured",
}
_COLORS = {
    HELD: COLORS["held"],
    NOT_HELD: COLORS["not_held"],
    INCONCLUSIVE: COLORS["not_measured"],
    MEASUREMENT_ERROR: COLORS["not_held"],
    NOT_MEASURED: COLORS["not_measured"],
}


@dataclass
class ClaimRow:
    """One claim: its outcome over this run and over the reference (``None``: no reference)."""

    claim: Claim
    this_run: Outcome
    reference: Outcome | None


@dataclass
class ClaimsTable:
    """The claims of one chapter over this run, the reference and the seed."""

    chapter: str
    size: str
    rows: list[ClaimRow]
    #: per benchmark source, its reference's provenance line (or that none ships yet)
    references: dict[str, str] = field(default_factory=dict)

    @property
    def published(self) -> str:
        """Whose figures the last column holds: the chapter's seed, or -- for a chapter beyond
        the seeds -- the papers its claims cite.

        Example::

            >>> ClaimsTable("beyond_salting", "tiny", []).published
            'the papers'
        """
        seed = chapter_record(self.chapter).seed
        return "the seed" if seed and seed != "-" else "the papers"

    @property
    def question(self) -> str:
        """The chapter's one question (the registry's :attr:`Chapter.question`)."""
        return chapter_record(self.chapter).question

    def answering_rows(self) -> list[ClaimRow]:
        """The rows of the claims that answer the chapter's question (its ``answered_by``), in
        the registry's order; none when this table holds none of them.

        Example::

            >>> [r.claim.id for r in ClaimsTable("buffering", "tiny", []).answering_rows()]
            []
        """
        by_id = {r.claim.id: r for r in self.rows}
        return [by_id[i] for i in chapter_record(self.chapter).answered_by if i in by_id]

    def answer(self) -> str:
        """The chapter's question and its answer as this table's claims give it (this run's
        verdict and figure, then the reference's); ``""`` when no answering claim is here.

        Example::

            >>> print(ClaimsTable("buffering", "tiny", []).answer() or "(none here)")
            (none here)
        """
        rows = self.answering_rows()
        if not rows:
            return ""
        lines = [f"The question: {self.question}", "The answer, from the claims below:"]
        for r in rows:
            lines.append(f"  {r.claim.statement}")
            lines.append(f"    this run ({self.size}): {_line(r.this_run)}")
            if r.reference is not None:
                lines.append(f"    reference (full): {_line(r.reference)}")
        return "\n".join(lines)

    def counts(self) -> dict[str, dict[str, int]]:
        """How many claims held, did not hold, and were not measured, in this run and in the
        reference (claims whose source has no reference count as not measured there)."""
        return {
            "this_run": count_held(r.this_run.status for r in self.rows),
            "reference": count_held(
                NOT_MEASURED if r.reference is None else r.reference.status for r in self.rows
            ),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "chapter": self.chapter,
            "size": self.size,
            "question": self.question,
            "answered_by": [r.claim.id for r in self.answering_rows()],
            "claims": [
                {
                    "id": r.claim.id,
                    "source": r.claim.source,
                    "statement": r.claim.statement,
                    "this_run": r.this_run.status,
                    "this_run_text": r.this_run.text,
                    "this_run_interval": r.this_run.interval_text,
                    "this_run_note": r.this_run.note,
                    "reference": None if r.reference is None else r.reference.status,
                    "reference_text": None if r.reference is None else r.reference.text,
                    "reference_interval": None
                    if r.reference is None
                    else r.reference.interval_text,
                    "reference_note": None if r.reference is None else r.reference.note,
                    "seed": r.claim.seed,
                    "reverses_seed": r.claim.reverses_seed,
                }
                for r in self.rows
            ],
            "references": self.references,
        }

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {
            "text/plain": str(self),
            "text/html": self._html(),
            MIME_TYPE: self.to_json(),
        }

    def __str__(self) -> str:
        answer = self.answer()
        lines = [answer, ""] if answer else []
        for r in self.rows:
            lines.append(r.claim.statement)
            lines.append(f"  this run ({self.size}): {_line(r.this_run)}")
            if r.reference is not None:
                lines.append(f"  reference (full): {_line(r.reference)}")
            if r.claim.seed:
                lines.append(f"  {self.published}: {r.claim.seed}")
            if r.this_run.status == NOT_HELD or (
                r.reference is not None and r.reference.status == NOT_HELD
            ):
                lines.append(f"  why: {r.claim.why}")
            for where, o in (("this run", r.this_run), ("the reference", r.reference)):
                if o is not None and o.note:
                    lines.append(f"  {where}, {o.status}: {o.note}")
        for source, line in self.references.items():
            lines.append(f"reference for {source}: {line}")
        return "\n".join(lines)

    def _html(self) -> str:
        head = (
            "<tr><th style='text-align:left'>claim</th>"
            f"<th style='text-align:left'>this run ({html.escape(self.size)}, this machine)</th>"
            "<th style='text-align:left'>reference (full size, shipped)</th>"
            f"<th style='text-align:left'>{self.published}</th></tr>"
        )
        body = []
        for r in self.rows:
            statement = html.escape(r.claim.statement)
            if r.claim.reverses_seed:
                statement += " <em>(the seed's lesson reverses here)</em>"
            body.append(
                f"<tr><td style='text-align:left'>{statement}</td>"
                f"<td style='text-align:left'>{_cell(r.this_run)}</td>"
                f"<td style='text-align:left'>{_cell(r.reference)}</td>"
                f"<td style='text-align:left'>{html.escape(r.claim.seed or '-')}</td></tr>"
            )
        notes = []
        for r in self.rows:
            for where, o in (("this run", r.this_run), ("the reference", r.reference)):
                if o is not None and o.note:
                    notes.append(
                        f"<li><b>{html.escape(o.status.capitalize())} in {where}:</b> "
                        f"{html.escape(r.claim.statement)} {html.escape(o.note)}</li>"
                    )
            failed = [
                where
                for where, o in (("this run", r.this_run), ("the reference", r.reference))
                if o is not None and o.status == NOT_HELD
            ]
            if failed or r.claim.reverses_seed:
                lead = (
                    f"Not held in {' and '.join(failed)}" if failed else "Why the lesson reverses"
                )
                notes.append(
                    f"<li><b>{lead}:</b> {html.escape(r.claim.statement)} "
                    f"{html.escape(r.claim.why)}</li>"
                )
        for source, line in self.references.items():
            notes.append(
                f"<li>Reference for <code>{html.escape(source)}</code>: {html.escape(line)}</li>"
            )
        return (
            "<div class='skewlab-claims'>" + self._answer_html() + "<table>"
            f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
            + (f"<ul>{''.join(notes)}</ul>" if notes else "")
            + "</div>"
        )

    def _answer_html(self) -> str:
        rows = self.answering_rows()
        if not rows:
            return ""
        items = "".join(
            f"<li>{html.escape(r.claim.statement)} <br>this run ({html.escape(self.size)}): "
            f"{_cell(r.this_run)}"
            + ("" if r.reference is None else f"; reference (full): {_cell(r.reference)}")
            + "</li>"
            for r in rows
        )
        return (
            "<div class='skewlab-answer'>"
            f"<p><b>The question:</b> {html.escape(self.question)}</p>"
            f"<p><b>The answer</b>, from the claims below:</p><ul>{items}</ul></div>"
        )


def _line(outcome: Outcome) -> str:
    text = outcome.interval_text or outcome.text
    return f"{_MARKS[outcome.status]}{f' -- {text}' if text else ''}"


def _cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return (
            f"<span style='color:{COLORS['not_measured']}'>no reference "
            "(measured by the notebook only)</span>"
        )
    mark = f"<b style='color:{_COLORS[outcome.status]}'>{html.escape(_MARKS[outcome.status])}</b>"
    text = outcome.interval_text or outcome.text
    return mark + (f": {html.escape(text)}" if text else "")


def _provenance_text(reference: dict[str, Any] | None) -> str:
    if reference is None:
        return "none shipped yet (skewlab bench BENCHMARK --size full --save-reference)"
    p = reference.get("provenance", {})
    commit = (p.get("commit") or "unknown")[:10]
    runs = reference.get("summary", {}).get("runs")
    rounds = f"{runs} round{'s' * (runs != 1)} per side, " if isinstance(runs, int) else ""
    status = reference_status(reference)
    return (
        f"measured {p.get('measured_at', '?')} by skewlab {p.get('skewlab_version', '?')} "
        f"(commit {commit}), {rounds}on {describe_machine(p.get('machine'))}; "
        + ("the timed code is the running code's" if status == "current" else status)
    )


def claims_table(chapter: str, *, size: str | None = None, **results: Any) -> ClaimsTable:
    """The claims of ``chapter`` whose sources are given (``source=result``), each evaluated
    over that result, over the source's reference when it is a benchmark, and beside the
    seed's figure. ``size`` names this run's size (default: the first result's ``size``).

    Example::

        >>> claims_table("buffering", nothing=1)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: chapter 'buffering' has no claims about 'nothing': its sources are buffering, latency_sweep
    """  # noqa: E501
    claims = chapter_claims(chapter)
    sources = list(dict.fromkeys(c.source for c in claims))
    unknown = [s for s in results if s not in sources]
    if unknown:
        raise SkewlabInputError(
            f"chapter {chapter!r} has no claims about {unknown[0]!r}: its sources are "
            f"{', '.join(sources) or 'none'}"
        )
    if size is None:  # a result's own size word (a DataFrame's .size is a count, not that)
        named = (
            r.get("size") if isinstance(r, Mapping) else getattr(r, "size", None)
            for r in results.values()
        )
        size = next((s for s in named if isinstance(s, str)), None) or "this size"
    references = {s: load_reference(s) for s in results if s in BENCHMARKS}
    rows = []
    for claim in claims:
        if claim.source not in results:
            continue
        reference = references.get(claim.source)
        rows.append(
            ClaimRow(
                claim,
                claim.evaluate(results[claim.source]),
                None if claim.source not in BENCHMARKS else claim.evaluate(reference),
            )
        )
    lines = {source: _provenance_text(ref) for source, ref in references.items()}
    return ClaimsTable(chapter, size, rows, lines)


def outcomes_from_notebook(notebook: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every claim outcome an executed notebook displayed (its claims tables' JSON), the last
    one of each claim id winning.

    Example::

        >>> nb = {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data",
        ...       "data": {MIME_TYPE: {"claims": [{"id": "a", "this_run": "held"}]}}}]}]}
        >>> outcomes_from_notebook(nb)
        [{'id': 'a', 'this_run': 'held'}]
    """
    found: dict[str, dict[str, Any]] = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) or []:
            data = (output.get("data") or {}).get(MIME_TYPE) or {}  # JSON: a dict in nbformat
            for claim in data.get("claims", []):
                found[claim["id"]] = claim
    return list(found.values())
