"""Reading a streaming query's state back from its checkpoint, with Spark's own data sources.

* ``spark.read.format("statestore")`` reads one stateful operator's state at a committed
  micro-batch (default the latest): one row per state key, with its ``partition_id``; a
  ``transformWithState`` operator's state variable is chosen with ``stateVarName``.
* ``spark.read.format("state-metadata")`` describes the operators: name, number of state
  partitions, the batches the checkpoint holds, the state variables.

Example::

    >>> state = read_state(spark, "/tmp/q/checkpoint", state_var="stats")   # doctest: +SKIP
    >>> state.columns                                                        # doctest: +SKIP
    ['key', 'value', 'partition_id']
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_state", "state_metadata", "state_partitions"]


def read_state(spark, checkpoint: str | Path, *, state_var: str | None = None,
               batch_id: int | None = None):  # fmt: skip
    """The state of the checkpoint's (first) stateful operator: a DataFrame of ``key``,
    ``value`` and ``partition_id``."""
    reader = spark.read.format("statestore")
    if state_var is not None:
        reader = reader.option("stateVarName", state_var)
    if batch_id is not None:
        reader = reader.option("batchId", int(batch_id))
    return reader.load(str(checkpoint))


def state_metadata(spark, checkpoint: str | Path):
    """``state-metadata`` of the checkpoint as pandas: one row per stateful operator."""
    return spark.read.format("state-metadata").load(str(checkpoint)).toPandas()


def state_partitions(spark, checkpoint: str | Path, **options) -> list[int]:
    """The state partitions that hold keys, read from the state itself (``partition_id``)."""
    rows = read_state(spark, checkpoint, **options).select("partition_id").distinct().collect()
    return sorted(int(r.partition_id) for r in rows)
