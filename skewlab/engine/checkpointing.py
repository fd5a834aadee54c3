"""Savepoints, periodic checkpoints, restore and an injected failure, around any operator chain.

When a job has :class:`~skewlab.engine.recovery.Recovery` settings, :func:`prepare_stage` wraps
each stage's operator in a :class:`StateHandlingOperator` (Flink's
``StreamOperatorStateHandler``) and bounds the source stage's input to ``[restored position,
stop_at)``. The wrapper

1. **restores** before the first record: from the subtask's latest checkpoint when an earlier
   attempt *of this run* left one (a retried task; each run has its own run id and directory,
   so a reused checkpoint directory never hands it another run's), else from the savepoint
   being restored -- the operator's
   :meth:`~skewlab.engine.operator.Operator.initialize_state` reads the key groups its subtask
   owns (:func:`skewlab.state.restore.restore_key_groups`) and its share of operator state;
2. replays its input: records before the restored position are skipped (they are in the
   checkpoint), the rest go to the operator -- split at every ``checkpoint_interval`` records,
   where it **checkpoints**: the operator's state (``Operator.snapshot_state``), the sink's
   pending output and the counters, and the position (one past the last ``seq``);
3. **fails** on purpose at source record ``fail_at`` on the task's first attempt;
4. at the end, **stops with a savepoint** (the operator snapshots instead of ``finish``: no
   drain) or finishes as usual.

Each subtask of the source stage reads its own split of the source (the records of its key
groups, in ``seq`` order) and no record crosses between subtasks before the exchange, so one
subtask's checkpoint -- its state plus its split's position -- is a consistent cut, as a Flink
source subtask's checkpoint is for its own partitions. The sink's output is part of the
checkpoint (a transactional sink's pending transaction is in Flink too): a retried attempt
starts from it and commits once, when the task succeeds. Stages behind an exchange take no
checkpoints: their input is the upstream stage's materialised output, and a retried task
reads it again from the start (from the restored savepoint, if any).

Example::

    >>> from skewlab.engine.recovery import Recovery
    >>> latest_checkpoint("/nonexistent", "1:naive", 0) is None
    True
"""

from __future__ import annotations

import json
import pickle
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from skewlab.engine.config import JobConfig
from skewlab.engine.operator import Operator, OperatorContext
from skewlab.engine.recovery import InjectedFailure, Recovery
from skewlab.engine.savepoint import OPERATOR_STATE, Savepoint, operator_directory
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError
from skewlab.state.api import KeyedStateBackend, Serializer
from skewlab.state.metadata_file import write_json_atomically
from skewlab.state.operator_state import OperatorStateSnapshot, write_operator_state
from skewlab.state.restore import RestoreIO, restore_key_groups
from skewlab.state.snapshot import (
    FILE_MAGIC,
    KeyGroupsStateHandle,
    KeyGroupsWriter,
    decode_entries,
    read_span,
    serializer_name,
    write_keyed_snapshot,
)

__all__ = [
    "StateHandlingOperator",
    "StateInitializationContext",
    "StateSnapshotContext",
    "latest_checkpoint",
    "prepare_stage",
]

_CHECKPOINT = "_checkpoint"


def prepare_stage(df, stage: StageSpec, job: JobConfig) -> tuple[Any, StageSpec]:
    """``df`` bounded to the source positions the job's recovery asks for, and ``stage`` with
    its operator wrapped in a :class:`StateHandlingOperator` (both unchanged without one)."""
    recovery = job.recovery
    if recovery is None:
        return df, stage
    if recovery.checkpoints:  # this run's own checkpoints, never another run's
        recovery = recovery.for_run()
    if stage.source:
        from pyspark.sql import functions as F

        if "seq" not in df.columns:
            raise SkewlabInputError(
                "a job with savepoints or checkpoints needs a 'seq' column (the source position)"
            )
        if recovery.restore_from is not None:
            position = Savepoint.load(recovery.restore_from).source_position
            df = df.filter(F.col("seq") >= F.lit(position))
        if recovery.stop_at is not None:
            df = df.filter(F.col("seq") < F.lit(recovery.stop_at))
    inner = stage.operator

    def wrapped(ctx: OperatorContext) -> StateHandlingOperator:
        return StateHandlingOperator(ctx, inner, recovery)

    return df, replace(stage, operator=wrapped)


def _attempt_number() -> int:
    """The Spark task's attempt (0 outside Spark)."""
    try:
        from pyspark import TaskContext
    except ImportError:  # pragma: no cover
        return 0
    context = TaskContext.get()
    return 0 if context is None else context.attemptNumber()


def _subtask_checkpoints(root: str, operator_id: str, subtask: int) -> Path:
    return Path(root) / operator_directory(operator_id) / f"subtask-{subtask}"


def latest_checkpoint(root: str, operator_id: str, subtask: int) -> Path | None:
    """The latest complete checkpoint directory of one subtask under ``root`` (one run's
    directory, :meth:`~skewlab.engine.recovery.Recovery.run_checkpoint_dir`), or ``None``."""
    directory = _subtask_checkpoints(root, operator_id, subtask)
    if not directory.is_dir():
        return None
    done = [
        p for p in directory.iterdir() if p.name.startswith("chk-") and (p / _CHECKPOINT).is_file()
    ]
    return max(done, key=lambda p: int(p.name.split("-")[1]), default=None)


class StateSnapshotContext:
    """Where an operator writes its state: one subtask's part of a savepoint or checkpoint.

    ``in_flight`` is the job's policy for records in flight (see
    :mod:`~skewlab.engine.recovery`); ``kind`` is ``"savepoint"`` or ``"checkpoint"``.
    """

    def __init__(
        self,
        directory: Path,
        *,
        kind: str,
        subtask: int,
        ctx: OperatorContext,
        in_flight: str,
    ) -> None:
        self.directory = directory
        self.kind = kind
        self.subtask = subtask
        self.key_group_range = ctx.key_group_range
        self.max_parallelism = ctx.job.max_parallelism
        self.in_flight = in_flight
        self.keyed: dict[str, dict[str, Any]] = {}
        self.list_states: dict[str, tuple[str, list[bytes]]] = {}
        directory.mkdir(parents=True, exist_ok=True)

    def write_keyed_state(
        self, name: str, backend: KeyedStateBackend, serializer: Serializer
    ) -> None:  # noqa: E501
        """Write a keyed backend's entries of this subtask's key groups as keyed state ``name``."""
        directory = self.directory / f"keyed-{name}"
        directory.mkdir(exist_ok=True)
        handle = write_keyed_snapshot(
            backend, directory, self.subtask, serializer, key_group_range=self.key_group_range
        )
        self._record(name, handle, serializer)

    def keyed_writer(self, name: str, serializer: Serializer) -> KeyedStateWriter:
        """An incremental writer of keyed state ``name`` (entries in ascending key groups)."""
        directory = self.directory / f"keyed-{name}"
        directory.mkdir(exist_ok=True)
        return KeyedStateWriter(self, name, directory, serializer)

    def _record(self, name: str, handle: KeyGroupsStateHandle, serializer: Serializer) -> None:
        self.keyed[name] = {"handle": handle.to_dict(), "serializer": serializer_name(serializer)}

    def add_list_state(self, name: str, elements: list[bytes], mode: str) -> None:
        """Operator (list) state ``name``: serialised elements, redistributed by ``mode``."""
        self.list_states[name] = (mode, list(elements))

    def manifest(self, operator_id: str, parallelism: int) -> dict[str, Any]:
        """Write the operator-state file (if any); what this subtask wrote, as a dict."""
        out: dict[str, Any] = {
            "operator": operator_id,
            "subtask": self.subtask,
            "parallelism": parallelism,
            "max_parallelism": self.max_parallelism,
            "keyed": self.keyed,
        }
        if self.list_states:
            directory = self.directory / OPERATOR_STATE
            directory.mkdir(exist_ok=True)
            handle = write_operator_state(
                directory,
                self.subtask,
                {name: elements for name, (_, elements) in self.list_states.items()},
            )
            out["operator_state"] = {
                "handle": handle,
                "modes": {name: mode for name, (mode, _) in self.list_states.items()},
            }
        return out


class KeyedStateWriter:
    """Keyed state written entry by entry (:meth:`StateSnapshotContext.keyed_writer`)."""

    def __init__(
        self, context: StateSnapshotContext, name: str, directory: Path, serializer: Serializer
    ) -> None:
        self.context, self.name, self.serializer = context, name, serializer
        self._dumps = serializer.dumps
        self._writer = KeyGroupsWriter(
            directory / f"subtask-{context.subtask}.kgs", context.key_group_range
        )

    def add(self, key_group: int, key: Any, value: Any) -> None:
        """Append one entry (in ascending key-group order)."""
        self._writer.add(key_group, key, self._dumps(value))

    def close(self) -> None:
        """Finish the file and record it in the snapshot."""
        self.context._record(self.name, self._writer.close(), self.serializer)


class StateInitializationContext:
    """What an operator restores from: a savepoint (rescaled to this subtask's key groups) or
    this subtask's own latest checkpoint. Counts what it read in :attr:`io`."""

    def __init__(
        self,
        ctx: OperatorContext,
        *,
        savepoint: Savepoint | None = None,
        checkpoint: Path | None = None,
        in_flight: str = "flush",
    ) -> None:
        self.ctx = ctx
        self.savepoint = savepoint
        self.checkpoint = checkpoint
        self.in_flight = in_flight
        self.subtask = ctx.subtask
        self.key_group_range = ctx.key_group_range
        self.io = RestoreIO("key_groups", ctx.subtask, ctx.key_group_range)
        self._manifest = (
            json.loads((checkpoint / _CHECKPOINT).read_text()) if checkpoint is not None else None
        )
        operator_id = ctx.stage.name
        self._operator = None if savepoint is None else savepoint.operators.get(operator_id)
        self._read: set[str] = set()

    @property
    def is_restored(self) -> bool:
        """Whether there is state to restore (a checkpoint, or the savepoint has this operator)."""
        return self._manifest is not None or self._operator is not None

    def keyed_state(self, name: str, serializer: Serializer) -> list[tuple[int, Any, Any]]:
        """The entries of keyed state ``name`` in this subtask's key groups (``[]`` if none)."""
        loads = serializer.loads
        self._read.add(f"keyed {name}")
        if self._manifest is not None:
            info = self._manifest["keyed"].get(name)
            if info is None:
                return []
            self._check_serializer(info["serializer"], serializer, name)
            handle = KeyGroupsStateHandle.from_dict(info["handle"], name)
            path = self.checkpoint / f"keyed-{name}" / handle.file
            self.io.files_opened += 1
            data = read_span(path, len(FILE_MAGIC), handle.length)
            self.io.read(len(data))
            out = [
                (kg, key, loads(raw))
                for kg, key, raw in decode_entries(data, handle, handle.key_group_range)
            ]
            self.io.keys_read += len(out)
            self.io.keys_kept += len(out)
            return out
        if self._operator is None or name not in self._operator.keyed:
            return []
        snapshot = self._operator.keyed[name]
        self._check_serializer(snapshot.value_serializer, serializer, name)
        entries, io = restore_key_groups(snapshot, self.key_group_range, loads=loads)
        for counter in ("files_opened", "keys_read", "keys_kept", "seconds"):
            setattr(self.io, counter, getattr(self.io, counter) + getattr(io, counter))
        for size in io.request_bytes:
            self.io.read(size)
        return entries

    def list_state(self, name: str) -> list[bytes]:
        """This subtask's elements of operator (list) state ``name`` after redistribution."""
        self._read.add(f"list {name}")
        if self._manifest is not None:
            info = self._manifest.get("operator_state")
            if not info or name not in info["modes"]:
                return []
            snapshot = OperatorStateSnapshot(
                self.checkpoint / OPERATOR_STATE, info["modes"], (info["handle"],)
            )
            return snapshot.elements(0, name)
        state = None if self._operator is None else self._operator.operator_state
        if state is None or name not in state.modes:
            return []
        return state.restore(self.ctx.job.parallelism, self.subtask)[name]

    def unrestored(self) -> list[str]:
        """State the snapshot holds for this operator that it did not read (never silently
        dropped: the wrapper refuses it)."""
        if self._manifest is not None:
            held = [f"keyed {n}" for n in self._manifest["keyed"]]
            held += [
                f"list {n}" for n in (self._manifest.get("operator_state") or {}).get("modes", {})
            ]
        elif self._operator is not None:
            held = [f"keyed {n}" for n in self._operator.keyed]
            state = self._operator.operator_state
            held += [f"list {n}" for n in (state.modes if state is not None else {})]
        else:
            held = []
        return sorted(set(held) - self._read)

    @staticmethod
    def _check_serializer(written: str, serializer: Serializer, name: str) -> None:
        if written != serializer_name(serializer):
            raise SkewlabInputError(
                f"keyed state {name!r} was written with {written!r}; this operator reads "
                f"{serializer_name(serializer)!r}"
            )


class StateHandlingOperator(Operator):
    """An operator chain with its savepoints, checkpoints, restore and injected failure (see
    the module doc). The chain itself is :attr:`inner`."""

    def __init__(self, ctx: OperatorContext, inner_factory, recovery: Recovery) -> None:
        super().__init__(ctx)
        self.recovery = recovery
        self.inner: Operator = inner_factory(ctx)
        inner = self.inner
        self.columns = tuple(inner.columns)
        self.numpy_columns = tuple(inner.numpy_columns)
        self.arrow_columns = tuple(inner.arrow_columns)
        if "seq" not in (*self.columns, *self.numpy_columns, *self.arrow_columns):
            self.numpy_columns = (*self.numpy_columns, "seq")
        self.source = ctx.stage.source
        self.attempt = _attempt_number()
        self.position = 0
        self.last_seq: int | None = None
        self.since_checkpoint = 0
        self.checkpoints_taken = 0
        self.skipped = 0
        self._checkpointing = self.source and recovery.checkpoints
        self._fail_at = recovery.fail_at if (self.source and self.attempt == 0) else None
        self._restore()

    # -- restore ----------------------------------------------------------------------------

    def _restore(self) -> None:
        recovery, ctx = self.recovery, self.ctx
        checkpoint = None
        if self._checkpointing:
            checkpoint = latest_checkpoint(
                recovery.run_checkpoint_dir(), ctx.stage.name, ctx.subtask
            )
        savepoint = None
        if checkpoint is None and recovery.restore_from is not None:
            savepoint = Savepoint.load(
                recovery.restore_from, max_parallelism=ctx.job.max_parallelism
            )
        init = StateInitializationContext(
            ctx, savepoint=savepoint, checkpoint=checkpoint, in_flight=recovery.in_flight
        )
        began = time.perf_counter()
        if init.is_restored:
            self.inner.initialize_state(init)
            left = init.unrestored()
            if left:
                raise SkewlabInputError(
                    f"operator {ctx.stage.name!r} did not restore its snapshot's {', '.join(left)}"
                    " (state is never dropped silently)"
                )
        seconds = time.perf_counter() - began
        restored_from = "checkpoint" if checkpoint else ("savepoint" if init.is_restored else None)
        if checkpoint is not None:
            self._restore_checkpointed_output(checkpoint)
        ctx.metrics.recovery = {
            "attempt": self.attempt,
            "restored_from": restored_from,
            "restore_seconds": seconds,
            "restore_bytes": init.io.bytes_read,
            "restore_requests": init.io.requests,
            "restore_files": init.io.files_opened,
            "restored_keys": init.io.keys_kept,
        }

    def _restore_checkpointed_output(self, checkpoint: Path) -> None:
        """The checkpoint's position, counters and the sink's pending output."""
        manifest = json.loads((checkpoint / _CHECKPOINT).read_text())
        self.position = int(manifest["position"])
        self.last_seq = self.position - 1
        metrics = self.ctx.metrics
        for name, value in manifest["counters"].items():
            setattr(metrics, name, value)
        with open(checkpoint / "sink.pickle", "rb") as f:
            sink = pickle.load(f)
        output = self.ctx.output
        output.results.update(sink["results"])
        output.mapped.update(sink["mapped"])
        for name in ("forward_keys", "forward_values", "forward_arrivals", "forward_seqs"):
            getattr(output, name).extend(sink[name])
        from skewlab.engine.histogram import LatencyHistogram

        output.histogram.merge(LatencyHistogram.from_list(sink["latency"]))

    # -- processing ---------------------------------------------------------------------------

    def process(self, cols, n, arrivals) -> None:
        if not self.source or not (
            self.position or self._checkpointing or self._fail_at is not None
        ):  # noqa: E501
            self.inner.process(cols, n, arrivals)
            return
        seqs = np.asarray(
            cols["seq"].to_numpy() if hasattr(cols["seq"], "to_numpy") else cols["seq"]
        )
        i = int(np.searchsorted(seqs, self.position)) if self.position else 0
        self.skipped += i
        fail_index = None
        if self._fail_at is not None:
            found = np.flatnonzero(seqs == self._fail_at)
            if found.size and found[0] >= i:
                fail_index = int(found[0])
        while i < n:
            hi = n
            if self._checkpointing:
                hi = min(hi, i + self.recovery.checkpoint_interval - self.since_checkpoint)
            if fail_index is not None and fail_index < hi:
                hi = fail_index
            if hi > i:
                part = {k: v[i:hi] for k, v in cols.items()}
                self.inner.process(part, hi - i, None if arrivals is None else arrivals[i:hi])
                self.since_checkpoint += hi - i
                self.last_seq = int(seqs[hi - 1])
            i = hi
            if fail_index is not None and i == fail_index:
                raise InjectedFailure(
                    f"injected failure at source record {self._fail_at} (subtask "
                    f"{self.ctx.subtask}, attempt {self.attempt})"
                )
            if self._checkpointing and self.since_checkpoint >= self.recovery.checkpoint_interval:
                self._checkpoint()

    def on_timer(self, timestamp_ns: int) -> None:
        self.inner.on_timer(timestamp_ns)

    # -- checkpoints and savepoints -----------------------------------------------------------

    def _checkpoint(self) -> None:
        ctx = self.ctx
        number = self.checkpoints_taken + 1
        base = _subtask_checkpoints(self.recovery.run_checkpoint_dir(), ctx.stage.name, ctx.subtask)
        work = base / f"chk-{number}.inprogress-{self.attempt}"
        shutil.rmtree(work, ignore_errors=True)
        context = StateSnapshotContext(
            work, kind="checkpoint", subtask=ctx.subtask, ctx=ctx, in_flight=self.recovery.in_flight
        )
        self.inner.snapshot_state(context)
        manifest = context.manifest(ctx.stage.name, ctx.job.parallelism)
        output = ctx.output
        output.flush_latencies()
        sink = {
            "results": output.results,
            "mapped": output.mapped,
            "forward_keys": output.forward_keys,
            "forward_values": output.forward_values,
            "forward_arrivals": output.forward_arrivals,
            "forward_seqs": output.forward_seqs,
            "latency": output.histogram.to_list(),
        }
        with open(work / "sink.pickle", "wb") as f:
            pickle.dump(sink, f, protocol=5)
        metrics = ctx.metrics
        manifest["position"] = (self.last_seq if self.last_seq is not None else -1) + 1
        manifest["counters"] = {
            name: getattr(metrics, name)
            for name in ("records_rejected", "records_out", "flushes", "order_violations")
        }
        write_json_atomically(work / _CHECKPOINT, manifest)
        target = base / f"chk-{number}"
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
        previous = base / f"chk-{number - 1}"
        shutil.rmtree(previous, ignore_errors=True)  # one retained, Flink's default
        self.checkpoints_taken = number
        self.since_checkpoint = 0

    def finish(self) -> None:
        recovery, ctx = self.recovery, self.ctx
        if not recovery.stops:
            self.inner.finish()
            self._report()
            return
        directory = Path(recovery.savepoint_dir) / operator_directory(ctx.stage.name)
        context = StateSnapshotContext(
            directory,
            kind="savepoint",
            subtask=ctx.subtask,
            ctx=ctx,
            in_flight=recovery.in_flight,
        )
        began = time.perf_counter()
        self.inner.snapshot_state(context)
        manifest = context.manifest(ctx.stage.name, ctx.job.parallelism)
        write_json_atomically(directory / f"subtask-{ctx.subtask}.manifest", manifest)
        ctx.metrics.recovery["snapshot_seconds"] = time.perf_counter() - began
        self._report()

    def _report(self) -> None:
        self.ctx.metrics.recovery.update(
            checkpoints=self.checkpoints_taken, replay_skipped=self.skipped
        )

    def close(self) -> dict[str, Any]:
        return self.inner.close()
