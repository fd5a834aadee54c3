"""What went wrong in a streaming query, in Spark's words, in one line.

Spark wraps a failure several times (a Java exception around a Python traceback around the
cause); :func:`~skewlab.errors.failure_cause` finds the line that says what went wrong, and
:class:`StreamingQueryFailed` names the micro-batch that failed.

Example::

    >>> StreamingQueryFailed(2, "/tmp/c", "FileNotFoundError: gone").batch_id
    2
"""

from __future__ import annotations

from skewlab.errors import SkewlabError, failure_cause

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
