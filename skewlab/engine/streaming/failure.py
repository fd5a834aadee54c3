"""What went wrong in a streaming query, in Spark's words, in one line.

Spark wraps a failure several times (a Java exception around a Python traceback around the
cause); :func:`failure_cause` finds the line that says what went wrong, and
:class:`StreamingQueryFailed` names the micro-batch that failed.

Example::

    >>> StreamingQueryFailed(2, "/tmp/c", "FileNotFoundError: gone").batch_id
    2
"""

from __future__ import annotations

import re

from skewlab.errors import SkewlabError

__all__ = ["StreamingQueryFailed", "failure_cause"]


class StreamingQueryFailed(SkewlabError, RuntimeError):
    """A streaming query stopped with an error; ``batch_id`` is the micro-batch that failed."""

    def __init__(self, batch_id: int | None, checkpoint: str, cause: str) -> None:
        self.batch_id, self.checkpoint, self.cause = batch_id, checkpoint, cause
        where = f"micro-batch {batch_id}" if batch_id is not None else "the query"
        super().__init__(
            f"{where} failed: {cause}; the checkpoint {checkpoint} is usable: start the query "
            "again with the same checkpoint directory to resume from the last committed batch"
        )


_CAUSE = re.compile(r"^[\s:]*([\w.$]*(?:Error|Exception)): (.+)$")


def failure_cause(text: str) -> str:
    """The line of a streaming failure that says what went wrong: the last ``SomeError: ...``
    line before Spark's query description (Python tracebacks nest inside Java ones).

    Example::

        >>> failure_cause("Traceback\\nValueError: x\\nFileNotFoundError: no segment\\n=== Stream")
        'FileNotFoundError: no segment'
    """
    head = text.split("=== Streaming Query ===")[0]
    found = [f"{m.group(1)}: {m.group(2)}" for m in map(_CAUSE.match, head.splitlines()) if m]
    found = [line for line in found if "raised by the Python Proxy" not in line]
    if found:
        return found[-1][:600]
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    return lines[0][:600] if lines else "unknown error"
