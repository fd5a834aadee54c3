"""skewlab's exceptions, and the one line that names a failure's cause.

Every check of user input raises :class:`SkewlabInputError` *before* Spark starts work, with one
line that says what was wrong and what is allowed. The CLI turns it into exit status 2. A
failure during the work (:class:`SkewlabRunError`, or any other exception) becomes one line
naming its cause (:func:`failure_cause`) and exit status 1.

Example::

    >>> from skewlab.errors import SkewlabInputError
    >>> raise SkewlabInputError("--tweets must be at least 1, got 0")
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: --tweets must be at least 1, got 0
"""

from __future__ import annotations

import re


class SkewlabError(Exception):
    """Base class of skewlab's own errors."""


class SkewlabInputError(SkewlabError, ValueError):
    """Bad input: a parameter, a path or a data set that skewlab cannot use (CLI exit status 2)."""


class JavaNotFoundError(SkewlabError, RuntimeError):
    """No usable Java runtime (17+) for Spark was found."""


class UnsortedInputError(SkewlabError, RuntimeError):
    """A single-key state backend saw a key again after its run had ended."""


class SkewlabRunError(SkewlabError, RuntimeError):
    """A failure during the work (a Spark job, a full disk): its one line names what failed and
    what was kept (CLI exit status 1)."""


#: a line that names an exception: ``ValueError: x``, ``: org.apache.spark.SparkException: y``
_RAISED = re.compile(r"^[\s:]*([\w.$]*(?:Error|Exception|error)): (.+)$")
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z_.]*\]")


def failure_cause(text: str, limit: int = 600) -> str:
    """The line of a failure's text that says what went wrong. Spark wraps a failure several
    times (a Java exception around a Python traceback around the cause): the last exception of
    a Python traceback if there is one, else the first exception line with one of Spark's error
    classes (``[FAILED_READ_FILE.NO_HINT]``), else the last exception line, else the first
    line. A streaming query's description (after ``=== Streaming Query ===``) is left out.

    Example::

        >>> failure_cause("Traceback\\nValueError: x\\nFileNotFoundError: no segment\\n=== Stream")
        'FileNotFoundError: no segment'
        >>> failure_cause(": o.a.SparkException: awaitResult:\\nCaused by: o.a.SparkException: [A.B] c")
        'o.a.SparkException: [A.B] c'
    """  # noqa: E501
    head = text.split("=== Streaming Query ===")[0]
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    named = []  # (index, "Name: message") in text order
    for i, line in enumerate(lines):
        match = _RAISED.match(line.removeprefix("Caused by: "))
        if match and "raised by the Python Proxy" not in line:
            named.append((i, f"{match.group(1)}: {match.group(2)}"))
    tracebacks = [i for i, line in enumerate(lines) if line.startswith("Traceback")]
    python = [found for i, found in named if tracebacks and i > tracebacks[-1]]
    with_class = [found for _, found in named if _ERROR_CLASS.search(found)]
    found = python[-1:] or with_class[:1] or [f for _, f in named][-1:] or lines[:1]
    line = found[0] if found else "unknown error"
    return line if len(line) <= limit else line[: limit - 3] + "..."
