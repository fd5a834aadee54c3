"""What a run measured: every subtask's counters, folded into one :class:`RunResult`.

Each subtask sends its :class:`SubtaskMetrics` to the driver (as JSON, beside its results);
:func:`fold_metrics` adds them up over the subtasks of every stage of a job. Records are
counted at the first stage (``records_in == records_processed + records_rejected``), emissions
and latencies at the final stage, operator time over all stages. State accesses that reached a
disk (RocksDB, a cache's misses and write-backs) become a **modelled I/O time** under a latency
profile (:func:`skewlab.iomodel.model.modelled_io_seconds`); heap and single-key state live in
memory and cost the model nothing.

Example::

    >>> m = SubtaskMetrics(stage="1:naive", subtask=0, records_in=10, records_out=10,
    ...                    operator_ns=2_000_000)
    >>> result = fold_metrics("naive", {}, [m], keys=3, wall_seconds=1.0, digest="d")
    >>> result.records_processed, result.operator_records_per_second
    (10, 5000.0)
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from skewlab.engine.histogram import LatencyHistogram
from skewlab.iomodel.model import ModelledIO, modelled_io_seconds, modelled_records_per_second
from skewlab.iomodel.profiles import load_disk_profile

__all__ = ["RunResult", "SubtaskMetrics", "fold_metrics", "json_default"]


@dataclass
class SubtaskMetrics:
    """One subtask's counters (sent to the driver as JSON).

    ``state`` is what the operator's :meth:`~skewlab.engine.operator.Operator.close` reported
    of its state backend; ``disk_reads_per_key`` / ``disk_writes_per_key`` in it are the
    accesses the latency model prices. ``peak_memory_bytes`` is the traced peak of the
    subtask's Python allocations, when the job traced memory (else 0).
    """

    stage: str
    subtask: int
    records_in: int = 0
    records_rejected: int = 0
    records_out: int = 0
    operator_ns: int = 0
    flushes: int = 0
    order_violations: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    latency: list[int] = field(default_factory=list)
    peak_memory_bytes: int = 0
    inputs: list[str] = field(default_factory=list)
    recovery: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    """What one strategy run measured. Every chart is made from these.

    Throughput two ways: ``operator_records_per_second`` (records / time inside the operators,
    summed over subtasks -- what Flink's operator metrics show) and ``e2e_records_per_second``
    (records / job wall time, Spark's overhead included). ``None`` means "does not apply".
    """

    strategy: str
    parameters: dict[str, Any]
    records_in: int
    records_processed: int
    records_rejected: int
    records_out: int
    keys: int
    wall_seconds: float
    operator_seconds: float
    result_digest: str
    operator_records_per_second: float | None = None
    e2e_records_per_second: float | None = None
    state_reads: int | None = None
    state_writes: int | None = None
    bytes_serialized: int | None = None
    cache_hits: int | None = None
    cache_misses: int | None = None
    cache_hit_ratio: float | None = None
    buffer_flushes: int | None = None
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    peak_memory_bytes: int | None = None
    order_violations: int | None = None
    latency_profile: str | None = None
    modelled_io_seconds: float | None = None
    modelled_records_per_second: float | None = None
    subtasks: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``subtasks`` and ``extra`` included)."""
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), default=json_default)

    def format_table(self) -> str:
        """A two-column text table for the terminal.

        Example::

            >>> r = RunResult("naive", {"parallelism": 2}, 10, 10, 0, 10, 3, 1.5, 0.25, "ab")
            >>> print(r.format_table().splitlines()[1])
            parameters                   parallelism=2
        """
        rows = []
        for key, value in self.to_dict().items():
            if key in ("subtasks", "extra"):
                continue
            if key == "parameters":
                value = ", ".join(f"{k}={v}" for k, v in value.items())
            elif isinstance(value, float):
                value = f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
            elif isinstance(value, int):
                value = f"{value:,}"
            rows.append((key, "-" if value is None else str(value)))
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def json_default(value: Any) -> Any:
    """``json.dumps``'s ``default`` for numpy scalars.

    Example::

        >>> json.dumps({"n": np.int64(3)}, default=json_default)
        '{"n": 3}'
    """
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def fold_metrics(
    strategy: str,
    parameters: dict[str, Any],
    metrics: list[SubtaskMetrics],
    *,
    keys: int,
    wall_seconds: float,
    digest: str,
    uses_state: bool = True,
    buffers: bool = False,
    latency_profile: str | None = None,
    check_order: bool = False,
) -> RunResult:
    """Fold every subtask's metrics (of every stage) into one :class:`RunResult`.

    With a ``latency_profile``, the per-key disk reads and writes of every stage become a
    modelled I/O time: one key's accesses cannot overlap, and one subtask does its keys one
    after another; the busier bound wins.
    """
    first = [m for m in metrics if m.stage == metrics[0].stage] if metrics else []
    final = [m for m in metrics if m.stage == metrics[-1].stage] if metrics else []
    records_in = sum(m.records_in for m in first)
    rejected = sum(m.records_rejected for m in first)
    processed = records_in - rejected
    operator_seconds = sum(m.operator_ns for m in metrics) / 1e9
    histogram = _latency_histogram(final)
    modelled = _modelled_io(metrics, latency_profile) if latency_profile else None
    return RunResult(
        strategy=strategy,
        parameters=parameters,
        records_in=records_in,
        records_processed=processed,
        records_rejected=rejected,
        records_out=sum(m.records_out for m in final),
        keys=keys,
        wall_seconds=wall_seconds,
        operator_seconds=operator_seconds,
        result_digest=digest,
        operator_records_per_second=processed / operator_seconds if operator_seconds else None,
        e2e_records_per_second=processed / wall_seconds if wall_seconds else None,
        **(_state_counters(metrics) if uses_state else {}),
        buffer_flushes=sum(m.flushes for m in metrics) if buffers else None,
        latency_p50_ms=histogram.quantile_ms(0.5),
        latency_p99_ms=histogram.quantile_ms(0.99),
        peak_memory_bytes=max((m.peak_memory_bytes for m in metrics), default=0) or None,
        order_violations=sum(m.order_violations for m in final) if check_order else None,
        latency_profile=latency_profile,
        modelled_io_seconds=modelled.seconds if modelled is not None else None,
        modelled_records_per_second=_modelled_rate(processed, modelled),
        subtasks=[_subtask_row(m) for m in metrics],
        extra=_extra(metrics, modelled),
    )


def _operator_inputs(metrics: list[SubtaskMetrics]) -> dict[str, list[str]]:
    """Per stage, the input columns its operators were handed (what their timed work starts
    from: the two sides of a like-for-like ratio must start from the same)."""
    inputs: dict[str, set[str]] = {}
    for m in metrics:
        inputs.setdefault(m.stage, set()).update(m.inputs)
    return {stage: sorted(columns) for stage, columns in sorted(inputs.items())}


def _extra(metrics: list[SubtaskMetrics], modelled: ModelledIO | None) -> dict[str, Any]:
    """The modelled I/O's breakdown, the operators' input columns and, for a job with
    savepoints or checkpoints, what its subtasks restored, checkpointed and replayed."""
    extra: dict[str, Any] = {"modelled_io": modelled.to_dict()} if modelled is not None else {}
    extra["operator_inputs"] = _operator_inputs(metrics)
    recoveries = [m.recovery for m in metrics if m.recovery]
    if recoveries:
        totals = ("restore_bytes", "restore_requests", "restored_keys", "checkpoints")
        extra["recovery"] = {name: sum(r.get(name, 0) for r in recoveries) for name in totals} | {
            "restore_seconds_max": max(r.get("restore_seconds", 0.0) for r in recoveries),
            "snapshot_seconds_max": max(r.get("snapshot_seconds", 0.0) for r in recoveries),
            "replay_skipped": sum(r.get("replay_skipped", 0) for r in recoveries),
            "restored_from": sorted(
                {r["restored_from"] for r in recoveries if r.get("restored_from")}
            ),
            "retried_subtasks": sum(1 for r in recoveries if r.get("attempt", 0) > 0),
        }
    return extra


def _latency_histogram(metrics: list[SubtaskMetrics]) -> LatencyHistogram:
    histogram = LatencyHistogram()
    for m in metrics:
        if m.latency:
            histogram.merge(LatencyHistogram.from_list(m.latency))
    return histogram


def _state_counters(metrics: list[SubtaskMetrics]) -> dict[str, Any]:
    """Reads, writes, bytes and the cache's hits and misses, summed over every subtask."""
    states = [m.state for m in metrics if m.state]

    def total(name: str) -> int:
        return int(sum(s.get(name) or 0 for s in states))

    hits, misses = total("cache_hits"), total("cache_misses")
    cached = any(s.get("cache_hits") or s.get("cache_misses") for s in states)
    return {
        "state_reads": total("reads"),
        "state_writes": total("writes"),
        "bytes_serialized": total("bytes_serialized"),
        "cache_hits": hits if cached else None,
        "cache_misses": misses if cached else None,
        "cache_hit_ratio": hits / (hits + misses) if cached and hits + misses else None,
    }


def _subtask_row(m: SubtaskMetrics) -> dict[str, Any]:
    return {
        "stage": m.stage,
        "subtask": m.subtask,
        "records": m.records_in,
        "operator_seconds": m.operator_ns / 1e9,
        "state_reads": m.state.get("reads"),
        "state_writes": m.state.get("writes"),
        "flushes": m.flushes,
    }


def _modelled_io(metrics: list[SubtaskMetrics], profile_name: str) -> ModelledIO:
    """The modelled I/O of a run: the disk accesses of every stage's keys and subtasks, the
    stages' keys and subtasks named apart."""
    reads: dict[str, int] = {}
    writes: dict[str, int] = {}
    subtask_of: dict[str, int] = {}
    stages = sorted({m.stage for m in metrics})
    width = 1 + max((m.subtask for m in metrics), default=0)
    for m in metrics:
        offset = stages.index(m.stage) * width
        for name, target in (("disk_reads_per_key", reads), ("disk_writes_per_key", writes)):
            for key, count in (m.state.get(name) or {}).items():
                scoped = f"{m.stage}/{key}"
                target[scoped] = target.get(scoped, 0) + int(count)
                subtask_of[scoped] = offset + m.subtask
    return modelled_io_seconds(load_disk_profile(profile_name), reads, writes, subtask_of)


def _modelled_rate(records: int, modelled: ModelledIO | None) -> float | None:
    if modelled is None:
        return None
    rate = modelled_records_per_second(records, modelled)
    return None if math.isinf(rate) else rate
