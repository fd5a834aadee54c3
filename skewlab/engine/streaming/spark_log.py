"""What Spark's driver logs while something runs: its own words, read from the driver JVM's log.

skewlab keeps Spark's JVM quiet (errors only) and sends the driver JVM's output to
:func:`skewlab.engine.session.jvm_log_path`. :func:`spark_warnings` lets one Spark logger speak
at WARN level for the duration of a block and hands back the lines it wrote -- e.g. the
checkpoint's state partitions overriding ``spark.sql.shuffle.partitions`` on a restart. A
session skewlab did not start has no such log: the lines are then empty.

Example::

    >>> with spark_warnings(spark, OFFSET_METADATA_LOGGER) as said:   # doctest: +SKIP
    ...     query.start()
    >>> said()                                                        # doctest: +SKIP
    ["WARN OffsetSeqMetadata: Updating the value of conf '...' from '7' to '4'."]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from skewlab.engine.session import jvm_log_path

__all__ = ["OFFSET_METADATA_LOGGER", "spark_warnings"]

#: The logger that says when a checkpoint's recorded settings override the session's.
OFFSET_METADATA_LOGGER = "org.apache.spark.sql.execution.streaming.checkpointing.OffsetSeqMetadata"


@contextmanager
def spark_warnings(spark, logger: str) -> Iterator[Callable[[], list[str]]]:
    """Let ``logger`` log at WARN within the block; yields a function returning its lines."""
    log = jvm_log_path()
    start = log.stat().st_size if log.exists() else 0
    levels = spark.sparkContext._jvm.org.apache.logging.log4j  # noqa: SLF001 - log4j's API
    configurator = levels.core.config.Configurator
    name = logger.rsplit(".", 1)[-1]

    def said() -> list[str]:
        if not log.exists():
            return []
        with open(log, "rb") as handle:
            handle.seek(start)
            text = handle.read().decode("utf-8", "replace")
        return [line.strip() for line in text.splitlines() if f" {name}: " in line]

    configurator.setLevel(logger, levels.Level.WARN)
    try:
        yield said
    finally:
        configurator.setLevel(logger, levels.Level.ERROR)
