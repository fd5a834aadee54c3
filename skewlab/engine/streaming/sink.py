"""An idempotent sink by micro-batch id (``foreachBatch``): what a query emitted, batch by batch.

Spark's ``foreachBatch`` is at-least-once: a micro-batch that was running when a query stopped
or failed runs again, with the same id and the same rows, when the query resumes. The sink
writes micro-batch ``b`` to ``<directory>/batch_id=b`` *replacing* whatever was there, and
records when it delivered it, so a batch delivered twice is counted once.

Example::

    >>> sink = BatchSink("/tmp/sink")
    >>> sink.deliveries()
    {}
    >>> query = stream.writeStream.foreachBatch(sink).start()        # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from pathlib import Path

__all__ = ["BatchSink"]

_DELIVERED = "_delivered"


class BatchSink:
    """``foreachBatch(BatchSink(directory))``; :meth:`read` gives every batch's rows back."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def __call__(self, frame, batch_id: int) -> None:
        frame.write.mode("overwrite").parquet(str(self.directory / f"batch_id={int(batch_id)}"))
        marks = self.directory / _DELIVERED
        marks.mkdir(parents=True, exist_ok=True)
        (marks / f"{int(batch_id)}.json").write_text(json.dumps({"ns": time.time_ns()}))

    def deliveries(self) -> dict[int, int]:
        """``{batch id: when it was (last) delivered, ns}``."""
        marks = self.directory / _DELIVERED
        if not marks.is_dir():
            return {}
        return {int(p.stem): json.loads(p.read_text())["ns"] for p in marks.glob("*.json")}

    def read(self, spark, schema: str):
        """Every delivered batch's rows with their ``batch_id`` (an empty frame of ``schema``
        when nothing was delivered)."""
        if not any(self.directory.glob("batch_id=*")):
            return spark.createDataFrame([], f"{schema}, batch_id bigint")
        return spark.read.schema(f"{schema}, batch_id bigint").parquet(str(self.directory))
