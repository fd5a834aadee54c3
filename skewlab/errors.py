"""Exceptions skewlab raises for input a user can fix.

Every check of user input raises :class:`SkewlabInputError` *before* Spark starts work, with one
line that says what was wrong and what is allowed. The CLI turns it into exit status 2.

Example::

    >>> from skewlab.errors import SkewlabInputError
    >>> raise SkewlabInputError("--tweets must be at least 1, got 0")
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: --tweets must be at least 1, got 0
"""

from __future__ import annotations


class SkewlabError(Exception):
    """Base class of skewlab's own errors."""


class SkewlabInputError(SkewlabError, ValueError):
    """Bad input: a parameter, a path or a data set that skewlab cannot use (CLI exit status 2)."""


class JavaNotFoundError(SkewlabError, RuntimeError):
    """No usable Java runtime (17+) for Spark was found."""


class UnsortedInputError(SkewlabError, RuntimeError):
    """A single-key state backend saw a key again after its run had ended."""
