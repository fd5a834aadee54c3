"""A per-record trace of a real run: what each subtask's operator did with each record.

:func:`traced_stage` returns a stage whose operator chain is the stage's own, wrapped in a
:class:`TracedOperator`. The wrapper hands the real operator its records **one at a time**
(the slices a paced source hands it, at their smallest), and after each record -- and after each
timer and the end of input -- appends one event to ``<directory>/<stage>-<subtask>.jsonl``:

==================  ==========================================================================
``kind``            ``record``, ``timer``, ``finish`` or ``restore`` (state read back from a
                    savepoint before the first record)
``stage``           the stage's name; ``subtask``: the subtask that handled it; ``step``: its
                    place in that subtask's log
``key``             the record's key, its ``key_group`` (Flink's) and its ``seq`` (arrival)
``state``           what the step did to the keyed state backend: the change of its counters
                    (``reads``, ``writes``, ``cache_hits``, ``cache_misses``, ``evictions``)
``out``             the change of the subtask's metrics: ``records_out``, ``flushes``,
                    ``records_rejected``
``emitted``         what the step emitted, ``[key, value]`` pairs: every record a stage sends
                    downstream; at the final stage, the record's key's value in the sink
``buffered``        a buffer's records held after the step, ``buffered_keys`` its keys
``cached_keys``     a cache's keys after the step (of the keys this subtask has seen)
``final``           (``finish`` only) every key's state at the end, through the stage's
                    ``output_map`` (what the run's sink receives)
``reads``           (``restore`` only) per old state file the subtask read: the file, the key
                    groups it holds and the key groups read from it; ``restored``: what the
                    restore counted (files opened, entries kept, bytes read)
==================  ==========================================================================

The trace is the run's own: the operator, its state backend and Spark's routing are the ones an
untraced run uses, and :func:`read_trace` brings the subtasks' logs together in an order the run
could have taken: stage after stage, as Spark runs them (a shuffle is a stage barrier); within a
stage, in arrival order (``seq``) where each subtask received its records in that order, else
each subtask's own order, subtasks taking turns; a subtask's end of input after its records.
Feeding one record at a time is slow; trace small inputs (a few hundred records).

Example::

    >>> import tempfile
    >>> from skewlab.engine import JobConfig, OperatorContext, StageSpec
    >>> from skewlab.operators.count import KeyedCount
    >>> from skewlab.state import StateBackend
    >>> from functools import partial
    >>> directory = tempfile.mkdtemp()
    >>> stage = StageSpec(name="1:count", key_col="word", final=True, serializer=None,
    ...                   operator=partial(KeyedCount, state_backend=StateBackend("heap")))
    >>> stage = traced_stage(stage, directory)
    >>> ctx = OperatorContext(stage, JobConfig(parallelism=1).resolved(1), 0)
    >>> op = stage.operator(ctx)
    >>> op.process({"word": [7, 7], "_key_group": [3, 3], "seq": [0, 1]}, 2, None)
    >>> op.finish(); _ = op.close()
    >>> [(e["kind"], e["key"], e["state"]) for e in read_trace(directory)]   # doctest: +NORMALIZE_WHITESPACE
    [('record', 7, {'reads': 1, 'writes': 1}), ('record', 7, {'reads': 1, 'writes': 1}),
     ('finish', None, {})]
    >>> read_trace(directory)[-1]["final"]
    {'7': 2}
"""  # noqa: E501

from __future__ import annotations

import json
from dataclasses import fields, replace
from functools import partial
from pathlib import Path
from typing import Any

from skewlab.engine.operator import Operator, OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError

__all__ = ["STATE_COUNTERS", "TracedOperator", "json_value", "read_trace", "traced_stage"]

#: The keyed state backend's counters a step's ``state`` reports the change of.
STATE_COUNTERS = ("reads", "writes", "cache_hits", "cache_misses", "evictions")
#: The subtask's metrics a step's ``out`` reports the change of.
_OUT_COUNTERS = ("records_out", "flushes", "records_rejected")


def _log_name(stage_name: str) -> str:
    """A stage's name as its subtasks' log files start."""
    return stage_name.replace(":", "-")


def traced_stage(stage: StageSpec, directory: str | Path) -> StageSpec:
    """``stage`` with its operator chain traced into ``directory`` (made if missing; absolute,
    so that every Spark worker on this machine writes where the driver reads). The stage also
    hands its subtasks ``seq``, the records' arrival order, which the trace reports.

    A directory already holding a trace of a stage of that name is refused: a second run's
    events would mix with the first's in :func:`read_trace`.
    """
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    held = sorted(directory.glob(f"{_log_name(stage.name)}-*.jsonl"))
    if held:
        raise SkewlabInputError(
            f"{directory} already holds a trace of stage {stage.name!r} ({held[0].name}): "
            "trace each run into an empty directory"
        )
    return replace(
        stage,
        operator=partial(TracedOperator, inner=stage.operator, directory=str(directory)),
        input_columns=tuple(dict.fromkeys((*stage.input_columns, "seq"))),
    )


class TracedOperator(Operator):
    """The operator ``inner(ctx)``, fed one record at a time, its every step logged. See the
    module doc."""

    def __init__(self, ctx: OperatorContext, *, inner, directory: str) -> None:
        super().__init__(ctx)
        self.inner = inner(ctx)
        wanted = (ctx.stage.key_col, KEY_GROUP, "seq")
        self.numpy_columns = self.inner.numpy_columns
        self.arrow_columns = self.inner.arrow_columns
        other_forms = {*self.numpy_columns, *self.arrow_columns}
        self.columns = tuple(
            dict.fromkeys((*self.inner.columns, *(c for c in wanted if c not in other_forms)))
        )
        log = Path(directory) / f"{_log_name(ctx.stage.name)}-{ctx.subtask}.jsonl"
        self._log = open(log, "w")  # noqa: SIM115  (a task retried rewrites its subtask's log)
        self._step = 0
        self._seen: dict[Any, None] = {}  # this subtask's keys, in first-seen order
        self._last_seq = -1
        self._forwarded = 0  # records sent downstream so far (a non-final stage)

    # -- what the wrapped operator's state and metrics say
    def _counters(self) -> tuple[dict[str, int], dict[str, int]]:
        backend = getattr(self.inner, "backend", None)
        state = {}
        if backend is not None:
            stats = backend.stats
            state = {c: getattr(stats, c) for c in STATE_COUNTERS}
        metrics = self.ctx.metrics
        return state, {c: getattr(metrics, c) for c in _OUT_COUNTERS}

    def _cached_keys(self) -> list | None:
        backend = getattr(self.inner, "backend", None)
        cache = getattr(backend, "_cache", None)
        core = cache() if cache is not None else None
        if core is None:
            return None
        # membership only: ``key in core`` neither counts a lookup nor moves the key
        return [key for key in self._seen if key in core]

    def _emitted(self, key: Any, emissions: int) -> list:
        """The step's ``emissions`` as ``[key, value]``: a non-final stage's, read back from
        what it sends downstream; the final stage's, the record's key's value in the sink."""
        if not emissions:
            return []
        output, stage = self.ctx.output, self.ctx.stage
        if not output.final:
            keys = output.forward_keys[self._forwarded :]
            values = output.forward_values[self._forwarded :]
            self._forwarded = len(output.forward_keys)
            loads = stage.serializer.loads
            return [[k, json_value(loads(v))] for k, v in zip(keys, values, strict=True)]
        if key is None or key not in output.results:
            return []
        mapped = stage.output_map or (lambda value: value)
        return [[key, json_value(mapped(output.results[key]))]]

    def _write(self, kind: str, before, **fields_) -> None:
        state_after, out_after = self._counters()
        state_before, out_before = before
        event: dict[str, Any] = {
            "kind": kind,
            "stage": self.ctx.stage.name,
            "subtask": self.ctx.subtask,
            "step": self._step,
            "key": None,
            "key_group": None,
            "seq": self._last_seq,
            **fields_,
            "state": _changed(state_before, state_after),
            "out": _changed(out_before, out_after),
            "emitted": self._emitted(
                fields_.get("key"), out_after["records_out"] - out_before["records_out"]
            ),
        }
        groups = getattr(self.inner, "groups", None)
        if isinstance(groups, dict) and isinstance(getattr(self.inner, "count", None), int):
            event["buffered"] = self.inner.count
            event["buffered_keys"] = list(groups)
        cached = self._cached_keys()
        if cached is not None:
            event["cached_keys"] = cached
        self._log.write(json.dumps(event, default=_json_key) + "\n")
        self._step += 1

    # -- the operator contract
    def process(self, cols, n, arrivals) -> None:
        key_col = self.ctx.stage.key_col
        for i in range(n):
            one = {c: v[i : i + 1] for c, v in cols.items()}
            key = _item(cols[key_col], i)
            self._seen.setdefault(key, None)
            self._last_seq = _item(cols["seq"], i)
            before = self._counters()
            self.inner.process(one, 1, None if arrivals is None else arrivals[i : i + 1])
            self._write("record", before, key=key, key_group=_item(cols[KEY_GROUP], i))

    def on_timer(self, timestamp_ns: int) -> None:
        before = self._counters()
        self.inner.on_timer(timestamp_ns)
        self._write("timer", before)

    def finish(self) -> None:
        before = self._counters()
        self.inner.finish()
        backend = getattr(self.inner, "backend", None)
        final = None
        if backend is not None:
            mapped = self.ctx.stage.output_map or (lambda value: value)
            final = {_json_key(k): json_value(mapped(v)) for _, k, v in backend.items()}
        self._write("finish", before, final=final)

    def snapshot_state(self, context) -> None:
        self.inner.snapshot_state(context)

    def initialize_state(self, context) -> None:
        io = context.io
        counted = ("files_opened", "keys_kept", "bytes_read")
        before_io = {c: getattr(io, c) for c in counted}
        before = self._counters()
        self.inner.initialize_state(context)
        reads = []
        operator = None
        if context.savepoint is not None:
            operator = context.savepoint.operators.get(self.ctx.stage.name)
        for name, snapshot in operator.keyed.items() if operator is not None else ():
            for handle, common in snapshot.overlapping(context.key_group_range):
                reads.append(
                    {
                        "state": name,
                        "file": handle.file,
                        "file_key_groups": [handle.key_group_range.start_key_group,
                                            handle.key_group_range.end_key_group],
                        "key_groups": [common.start_key_group, common.end_key_group],
                    }
                )  # fmt: skip
        restored = {c: getattr(io, c) - before_io[c] for c in counted}
        self._write("restore", before, reads=reads, restored=restored)

    def close(self) -> dict[str, Any]:
        try:
            return self.inner.close()
        finally:
            self._log.close()


def read_trace(directory: str | Path) -> list[dict[str, Any]]:
    """Every subtask's events from ``directory``, merged (see the module doc for the order):
    stage by stage; within a stage by ``seq`` where every subtask received its records in
    ``seq`` order (a timer after the record before it), else by each subtask's steps; the
    stage's ``finish`` events last.

    A directory without a trace is refused.
    """
    directory = Path(directory)
    logs = sorted(directory.glob("*.jsonl"))
    if not logs:
        raise SkewlabInputError(f"no trace in {directory}: a traced run writes <stage>-<n>.jsonl")
    events = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    in_seq_order = {}
    for e in sorted(events, key=lambda e: (e["stage"], e["subtask"], e["step"])):
        if e["kind"] == "record":
            last = in_seq_order.get((e["stage"], e["subtask"]), (True, -1))
            in_seq_order[e["stage"], e["subtask"]] = (last[0] and e["seq"] >= last[1], e["seq"])
    by_seq = {
        stage: all(ok for (name, _), (ok, _) in in_seq_order.items() if name == stage)
        for stage, _ in in_seq_order
    }

    def order(e: dict[str, Any]):
        position = (e["seq"], e["kind"] != "record") if by_seq.get(e["stage"]) else (e["step"], 0)
        return (e["stage"], e["kind"] == "finish", *position, e["subtask"], e["step"])

    return sorted(events, key=order)


def _item(values, i: int):
    """Value ``i`` of a column in any of the forms an operator receives (list, numpy, Arrow)."""
    value = values[i]
    if hasattr(value, "as_py"):
        return value.as_py()
    return value.item() if hasattr(value, "item") else value


def _changed(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def _json_key(key: Any) -> Any:
    return key if isinstance(key, str) else str(key)


def json_value(value: Any) -> Any:
    """A state value or an emitted one as the trace writes it (JSON): numbers and strings as
    they are, a dataclass (a tweet's statistics) as its fields, tuples as lists, mapping keys
    as strings.

    Example::

        >>> json_value((3, {0: 2, 1: 1}))
        [3, {'0': 2, '1': 1}]
    """
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: json_value(getattr(value, f.name)) for f in fields(value)}
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {_json_key(k): json_value(v) for k, v in value.items()}
    return value
