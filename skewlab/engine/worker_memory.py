"""A memory cap on the Python workers of the Spark jobs submitted inside a ``with`` block.

Spark caps a Python worker's address space (``RLIMIT_AS``, set by the worker itself at a task's
start) when ``spark.executor.pyspark.memory`` is set, or when a stage's resource profile asks
for PySpark memory; the JVM hands the cap to the worker through the task's local property
``resource.pyspark.memory`` (divided by the executor's cores, ``resource.executor.cores``).
:func:`python_worker_memory_cap` sets those two local properties for the jobs this thread
submits, so one running session can run some jobs capped and others not, without a new JVM. A
capped worker runs in its own pool (Spark keys its worker pools by the workers' environment, the
cap included), so an uncapped job afterwards never lands in a capped worker.

What fails under the cap: an allocation beyond it raises ``MemoryError`` in the worker (the task
fails, and with it the job: Spark's local master does not retry a task); a cap below what the
worker needs to import its own libraries fails at import (``failed to map segment``).
:func:`memory_failure` tells the two apart from any other failure.

Example::

    >>> with python_worker_memory_cap(spark, 500):                      # doctest: +SKIP
    ...     run_count(words, "heap", spark=spark)                       # MemoryError at 4M keys
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from skewlab.errors import SkewlabInputError

__all__ = [
    "MEMORY_PROPERTY",
    "MIN_CAP_MB",
    "OUT_OF_MEMORY",
    "WORKER_DID_NOT_START",
    "memory_failure",
    "python_worker_memory_cap",
]

#: The task local property Spark's Python runner reads the workers' memory (MiB) from
#: (``ResourceProfile.PYSPARK_MEMORY_LOCAL_PROPERTY``).
MEMORY_PROPERTY = "resource.pyspark.memory"
#: ... and the executor cores it divides that memory by (``EXECUTOR_CORES_LOCAL_PROPERTY``).
CORES_PROPERTY = "resource.executor.cores"
#: A cap below this cannot even hold a Python interpreter.
MIN_CAP_MB = 64

#: How a job that failed under a cap failed.
OUT_OF_MEMORY = "out of memory"
WORKER_DID_NOT_START = "worker could not start"


@contextmanager
def python_worker_memory_cap(spark, cap_mb: int | None) -> Iterator[None]:
    """Cap each Python worker of the jobs submitted in this block at ``cap_mb`` MiB of address
    space (``None``: no cap, a no-op). The previous local properties come back afterwards.

    Refuses a session started with ``spark.executor.pyspark.memory`` (that cap would override
    this one) and a cap below :data:`MIN_CAP_MB`.

    Example::

        >>> with python_worker_memory_cap(spark, 400):                  # doctest: +SKIP
        ...     spark.range(10).mapInArrow(lambda b: b, "id long").count()
        10
    """
    if cap_mb is None:
        yield
        return
    if isinstance(cap_mb, bool) or not isinstance(cap_mb, int) or cap_mb < MIN_CAP_MB:
        raise SkewlabInputError(
            f"Python worker memory cap must be a whole number of MiB >= {MIN_CAP_MB}, "
            f"got {cap_mb!r}"
        )
    context = spark.sparkContext
    configured = context.getConf().get("spark.executor.pyspark.memory")
    if configured:
        raise SkewlabInputError(
            f"this Spark session already caps its Python workers (spark.executor.pyspark.memory"
            f" = {configured}), which overrides a cap per job: start a session without it"
        )
    before = {name: context.getLocalProperty(name) for name in (MEMORY_PROPERTY, CORES_PROPERTY)}
    context.setLocalProperty(MEMORY_PROPERTY, str(cap_mb))
    context.setLocalProperty(CORES_PROPERTY, "1")  # the whole cap for each worker
    try:
        yield
    finally:
        for name, value in before.items():
            context.setLocalProperty(name, value)


def memory_failure(error: BaseException) -> str | None:
    """How a job failed for want of memory under a cap -- :data:`OUT_OF_MEMORY` (an allocation
    raised ``MemoryError``) or :data:`WORKER_DID_NOT_START` (the worker could not map its own
    libraries) -- or ``None`` for any other failure (which a caller re-raises).

    Example::

        >>> memory_failure(RuntimeError("... MemoryError ..."))
        'out of memory'
        >>> memory_failure(RuntimeError("ImportError: x.so: failed to map segment from shared "
        ...                             "object"))
        'worker could not start'
        >>> memory_failure(ValueError("bad input")) is None
        True
    """
    text = str(error)
    if "failed to map segment" in text:
        return WORKER_DID_NOT_START
    if "MemoryError" in text or "cannot allocate memory" in text.lower():
        return OUT_OF_MEMORY
    return None
