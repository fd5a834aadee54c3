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

__all__ = ["THIS_RUN", "section_shown"]

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
        this size leaves the rescale section out, and no reference ships it
        (None, None)
    """
    if own is not None:
        print(f"{THIS_RUN}'s {what}:")
        return own, THIS_RUN
    reference = load_reference(benchmark) if reference is None else reference
    section = pick(reference["summary"]) if reference and "summary" in reference else None
    if section is None:
        print(f"this size leaves the {what} out, and no reference ships it")
        return None, None
    when = reference.get("provenance", {}).get("measured_at", "?")
    print(
        f"this size leaves the {what} out ({why}); here is the shipped reference's, measured "
        f"{when} at the full size:"
    )
    return section, f"the reference (measured {when})"
