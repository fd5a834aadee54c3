"""The checks every parameter goes through, in one place: whole numbers, numbers, choices,
output directories.

Each check raises :class:`~skewlab.errors.SkewlabInputError` with one line that says what was
wrong and what is allowed, and returns the value (as the plain Python type) when it is fine.
``name`` is what the user typed or sees, e.g. ``"max_count (--max-count)"``.

Example::

    >>> from skewlab.validation import check_whole
    >>> check_whole("max_count (--max-count)", 1000, minimum=1)
    1000
    >>> check_whole("max_count (--max-count)", 0, minimum=1)
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: max_count (--max-count) must be a whole number >= 1, got 0
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skewlab.errors import SkewlabInputError

__all__ = ["check_choice", "check_number", "check_whole", "check_writable_dir", "is_whole"]


def is_whole(value: object) -> bool:
    """An ``int`` or a numpy integer, but not a ``bool``.

    Example::

        >>> is_whole(3), is_whole(3.0), is_whole(True)
        (True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_whole(
    name: str, value: Any, minimum: int | None = None, maximum: int | None = None
) -> int:
    """``value`` as an ``int`` if it is a whole number within ``[minimum, maximum]``.

    Example::

        >>> check_whole("precision", 10, 4, 16)
        10
        >>> check_whole("precision", 20, 4, 16)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: precision must be a whole number from 4 to 16, got 20
    """
    ok = is_whole(value)
    if ok and minimum is not None and value < minimum:
        ok = False
    if ok and maximum is not None and value > maximum:
        ok = False
    if not ok:
        raise SkewlabInputError(
            f"{name} must be a whole number{_bounds(minimum, maximum)}, got {value!r}"
        )
    return int(value)


def check_number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    unit: str = "",
) -> float:
    """``value`` as a ``float`` if it is a finite real number within the bounds.

    ``minimum`` / ``maximum`` are inclusive; ``above`` is an exclusive lower bound.

    Example::

        >>> check_number("source_rate (--source-rate)", 2_000, above=0, unit=" records/s")
        2000.0
        >>> check_number("hit ratio", 1.5, minimum=0, maximum=1)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: hit ratio must be a number from 0 to 1, got 1.5
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok and minimum is not None and value < minimum:
        ok = False
    if ok and maximum is not None and value > maximum:
        ok = False
    if ok and above is not None and not value > above:
        ok = False
    if not ok:
        bounds = f" > {above:g}" if above is not None else _bounds(minimum, maximum)
        raise SkewlabInputError(f"{name} must be a number{bounds}{unit}, got {value!r}")
    return float(value)


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``.

    Example::

        >>> check_choice("buffer (--buffer)", "ring", ("list", "vectorized"))
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown buffer (--buffer) 'ring': use one of list, vectorized
    """  # noqa: E501
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise SkewlabInputError(f"unknown {name} {value!r}: use one of {', '.join(options)}")
    return value


def _bounds(minimum: float | None, maximum: float | None) -> str:
    """`` from a to b`` / `` >= a`` / `` <= b`` / nothing (with its leading space)."""
    if minimum is not None and maximum is not None:
        return f" from {minimum:g} to {maximum:g}"
    if minimum is not None:
        return f" >= {minimum:g}"
    if maximum is not None:
        return f" <= {maximum:g}"
    return ""


def check_writable_dir(name: str, path: str | Path) -> Path:
    """``path`` as a :class:`~pathlib.Path` if a directory can be made or written there: it is
    not a file, no folder above it is a file, and the nearest one that exists is writable.
    Touches nothing.

    Example::

        >>> import tempfile
        >>> a_file = Path(tempfile.mkstemp()[1])
        >>> check_writable_dir("savepoint (--savepoint)", a_file / "sp")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: savepoint (--savepoint) '.../sp' cannot be made: '...' is a file
        >>> a_file.unlink()
    """  # noqa: E501
    path = Path(path)
    if path.is_file():
        raise SkewlabInputError(f"{name} {str(path)!r} exists and is a file, not a directory")
    for folder in [path, *path.parents]:
        if folder.is_dir():
            if not os.access(folder, os.W_OK | os.X_OK):
                raise SkewlabInputError(
                    f"{name} {str(path)!r} cannot be written: {str(folder)!r} is not writable"
                )
            return path
        if folder.exists() or folder.is_symlink():  # a file, a dangling link, a device
            raise SkewlabInputError(
                f"{name} {str(path)!r} cannot be made: {str(folder)!r} is a file"
            )
    return path
