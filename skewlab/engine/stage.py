"""A stage -- one ``keyBy`` and the operator chain after it -- and the rows it emits, as Arrow.

A :class:`StageSpec` says which column to key by, which operator chain each subtask runs, in
which order the records reach it, and what it emits. A job is one stage or several, with an
exchange between them (salting uses two).

Every stage's output rows have one schema: a ``kind`` and the columns of each kind --

============  ==================================================================
``record``    an emission for the next stage: ``key``, ``value`` (serialised),
              ``arrival_ns`` and ``seq`` of the record it came from
``result``    a final per-key value: ``key``, ``value`` (serialised)
``metrics``   one per subtask: its :class:`~skewlab.engine.metrics.SubtaskMetrics` as JSON
============  ==================================================================

Example::

    >>> spark_schema("string")
    'kind string, key string, value binary, arrival_ns long, seq long, metrics string'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from skewlab.engine.metrics import SubtaskMetrics, json_default

__all__ = [
    "KIND_METRICS",
    "KIND_RECORD",
    "KIND_RESULT",
    "StageSpec",
    "arrow_schema",
    "metrics_batch",
    "record_batch",
    "result_batch",
    "spark_schema",
]

# the rows a stage emits: records for the next stage, final results, or a subtask's metrics
KIND_RECORD, KIND_RESULT, KIND_METRICS = "record", "result", "metrics"


@dataclass
class StageSpec:
    """One keyed stage: ``keyBy(key_col)`` then the operator chain ``operator``.

    Attributes:
        name: ``"<n>:<what>"``; stages are ordered by name.
        key_col: the column to key by.
        operator: the chain each subtask runs: ``operator(ctx) -> Operator``.
        final: whether this stage's emissions are the job's results (else: the next stage's
            input).
        serializer: ``dumps`` / ``loads`` of the values it emits.
        key_type: Spark type of the emitted keys (``string`` or ``bigint``).
        order_by: the order records reach the operator in (default: arrival, ``seq``; ``()``:
            as the exchange delivers them).
        input_columns: columns the operator reads besides the key and its routing.
        output_map: the chained ``map`` after a final reduce, applied to every emission (seed
            000's ``.map(_.toStats)``); the sink keeps each key's latest output.
        source: whether this stage reads from the (paced) source; a stage behind an exchange
            is not paced again -- its input arrives when the upstream stage emits it.
    """

    name: str
    key_col: str
    operator: Callable[..., Any]
    final: bool
    serializer: Any
    key_type: str = "string"
    order_by: tuple[str, ...] = ("seq",)
    input_columns: tuple[str, ...] = ()
    output_map: Callable[[Any], Any] | None = None
    source: bool = True


def spark_schema(key_type: str) -> str:
    """The Spark DDL of a stage's output rows."""
    return f"kind string, key {key_type}, value binary, arrival_ns long, seq long, metrics string"


def arrow_schema(key_type: str):
    """The Arrow schema of a stage's output rows (``key_type``: ``string`` or ``bigint``)."""
    import pyarrow as pa

    key = pa.string() if key_type == "string" else pa.int64()
    return pa.schema(
        [
            ("kind", pa.string()),
            ("key", key),
            ("value", pa.binary()),
            ("arrival_ns", pa.int64()),
            ("seq", pa.int64()),
            ("metrics", pa.string()),
        ]
    )


def result_batch(schema, keys: list[Any], values: list[bytes]):
    """Final per-key values as one Arrow batch."""
    import pyarrow as pa

    n = len(keys)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([KIND_RESULT] * n),
            pa.array(keys, type=schema.field("key").type),
            pa.array(values, type=pa.binary()),
            pa.nulls(n, pa.int64()),
            pa.nulls(n, pa.int64()),
            pa.nulls(n, pa.string()),
        ],
        schema=schema,
    )


def record_batch(schema, keys: list[Any], values: list[bytes], arrivals: list[int], seqs):
    """Emissions for the next stage as one Arrow batch."""
    import pyarrow as pa

    n = len(keys)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([KIND_RECORD] * n),
            pa.array(keys, type=schema.field("key").type),
            pa.array(values, type=pa.binary()),
            pa.array(arrivals, type=pa.int64()),
            pa.array(seqs, type=pa.int64()),
            pa.nulls(n, pa.string()),
        ],
        schema=schema,
    )


def metrics_batch(schema, metrics: SubtaskMetrics):
    """One subtask's metrics as a one-row Arrow batch."""
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [
            pa.array([KIND_METRICS]),
            pa.nulls(1, schema.field("key").type),
            pa.nulls(1, pa.binary()),
            pa.nulls(1, pa.int64()),
            pa.nulls(1, pa.int64()),
            pa.array([json.dumps(asdict(metrics), default=json_default)]),
        ],
        schema=schema,
    )


def split_metrics_rows(batch, schema, passthrough: list) -> Any:
    """``batch`` without the ``metrics`` rows of an upstream stage, which are set aside in
    ``passthrough`` (they travel along to the driver)."""
    import pyarrow as pa

    if "kind" not in batch.schema.names:
        return batch
    kinds = batch.column("kind").to_numpy(zero_copy_only=False)
    is_metrics = kinds == KIND_METRICS
    if not is_metrics.any():
        return batch
    passthrough.append(batch.filter(pa.array(is_metrics)).select(schema.names))
    return batch.filter(pa.array(~is_metrics))


def decode_rows(table, serializer) -> Iterator[tuple[str, Any, Any]]:
    """``(kind, key, value or SubtaskMetrics)`` for every row of a stage's collected output."""
    kinds = table.column("kind").to_pylist()
    keys = table.column("key").to_pylist()
    values = table.column("value").to_pylist()
    blobs = table.column("metrics").to_pylist()
    for kind, key, value, blob in zip(kinds, keys, values, blobs, strict=True):
        if kind == KIND_RESULT:
            yield kind, key, serializer.loads(value)
        elif kind == KIND_METRICS:
            yield kind, None, SubtaskMetrics(**json.loads(blob))
