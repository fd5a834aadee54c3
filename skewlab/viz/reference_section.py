"""A notebook section that a size may leave out: this run's figures, or the shipped reference's.

Some sections take minutes at any size worth showing (notebook 05's memory-cap runs at millions
of keys, notebook 08's checkpoint rescale); a quick report leaves their run out and shows the
reference shipped with skewlab (:mod:`skewlab.experiments.references`) instead, after a line
that says whose figures follow.

Example::

    >>> section, whose = section_shown({"steps": []}, "streaming", lambda s: s.get("rescale"),
    ...                                what="rescale section", why="a demonstration")
    this run's rescale section:
    >>> whose
    'this run'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from skewlab.experiments.references import load_reference
from skewlab.experiments.results import bench_summary

__all__ = ["THIS_RUN", "run_or_reference", "section_shown", "summary_shown"]

#: Whose figures a section shows when this run measured them.
THIS_RUN = "this run"


def section_shown(
    own: Mapping[str, Any] | None,
    benchmark: str,
    pick: Callable[[Mapping[str, Any]], Any],
    *,
    what: str,
    why: str,
    reference: Mapping[str, Any] | None = None,
) -> tuple[Any, str | None]:
    """``(section, whose)``: this run's section ``own`` when it has one, else ``pick`` of the
    shipped reference's summary of ``benchmark`` (``reference`` overrides the shipped one),
    printing which; ``(None, None)`` when neither has it. ``whose`` is ``"this run"`` or
    ``"the reference (measured <when>)"``, for the sentences about the section.

    Example::

        >>> section_shown(None, "streaming", lambda s: s.get("rescale"), what="rescale section",
        ...               why="a demonstration", reference={"summary": {}})
        this size leaves the rescale section out (a demonstration), and no reference ships it
        (None, None)
    """
    if own is not None:
        print(f"{THIS_RUN}'s {what}:")
        return own, THIS_RUN
    reference = load_reference(benchmark) if reference is None else reference
    section = pick(reference["summary"]) if reference and "summary" in reference else None
    when = _say_left_out(what, why, None if section is None else reference, "it", "is")
    return (None, None) if section is None else (section, f"the reference (measured {when})")


def _say_left_out(what: str, why: str, reference, it: str, are: str) -> str | None:
    """Print that this size leaves ``what`` out and whether the shipped ``reference`` (``None``:
    none ships it) is shown instead; its measuring time, if shown."""
    if reference is None:
        print(f"this size leaves the {what} out ({why}), and no reference ships {it}")
        return None
    when = reference.get("provenance", {}).get("measured_at", "?")
    print(
        f"this size leaves the {what} out ({why}); here {are} the shipped reference's, "
        f"measured {when} at the full size:"
    )
    return when


def summary_shown(result, benchmark: str, *, what: str, why: str) -> dict[str, Any] | None:
    """A benchmark's whole summary to show: this run's (``result``, a
    :class:`~skewlab.experiments.results.BenchResult` or its JSON) or, where a size leaves the
    run out (``result`` is ``None``), the shipped reference's; with ``shown`` saying which, and
    a line saying it too (``None`` when neither exists).

    Example::

        >>> summary_shown({"summary": {"k": 10}}, "memory_cap", what="runs", why="long")
        this run's runs:
        {'k': 10, 'shown': 'this run'}
    """
    own = None if result is None else bench_summary(result)
    summary, whose = section_shown(own, benchmark, lambda s: s, what=what, why=why)
    return None if summary is None else {**summary, "shown": whose}


def run_or_reference(
    part: str,
    size: str,
    benchmark: str,
    run: Callable[[], Any],
    *,
    what: str,
    why: str,
    as_result: bool = False,
) -> tuple[Any, Any]:
    """``(this_run, shown)`` for a notebook section that a size may leave out: where ``part``'s
    settings at ``size`` say ``run`` (:func:`skewlab.experiments.chapters.size_settings`),
    ``run()`` measures it and both are its result; else ``this_run`` is ``None`` (what a claims
    table takes for "not measured") and ``shown`` is ``benchmark``'s shipped reference, whole
    (rows and summary), with a line saying whose figures follow; with ``as_result`` as a
    :class:`~skewlab.experiments.results.BenchResult` that keeps its provenance (for a section
    whose code takes a result).

    Example::

        >>> this_run, shown = run_or_reference(
        ...     "streaming_runs", "quick", "streaming", lambda: 1 / 0,
        ...     what="throughput and latency runs", why="one run concludes no claim")
        this size leaves the throughput and latency runs out (one run concludes no claim); here are the shipped reference's, measured ...
        >>> this_run is None, shown["experiment"]
        (True, 'streaming')
    """  # noqa: E501
    from skewlab.experiments.chapters import size_settings

    if size_settings(part, size)["run"]:
        result = run()
        return result, result
    reference = load_reference(benchmark)
    _say_left_out(what, why, reference, "them", "are")
    if as_result and reference is not None:
        from skewlab.experiments.results import BenchResult

        return None, BenchResult.from_json_dict(reference)
    return None, reference
