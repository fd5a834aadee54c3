"""The subtask loop, driven with Arrow batches and no Spark: routing check, columns, slices,
pacing, timers, the end of input, and the rows it yields."""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import pytest

from skewlab.engine.config import JobConfig
from skewlab.engine.operator import Operator
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import KIND_METRICS, KIND_RECORD, KIND_RESULT, StageSpec, decode_rows
from skewlab.engine.task import run_subtask
from skewlab.state import PickleSerializer

SERIALIZER = PickleSerializer()


def batch(keys, subtask=0, start=0):
    n = len(keys)
    return pa.RecordBatch.from_pydict(
        {
            "k": keys,
            KEY_GROUP: [64 * subtask] * n,  # p 2, max p 128: subtask 1 owns groups 64-127
            "seq": list(range(start, start + n)),
            "x": [float(i) for i in range(n)],
        }
    )


class Recorder(Operator):
    """Counts what it is handed, emits a running count per key, records the calls."""

    columns = ("k", "seq")
    numpy_columns = ("x",)
    arrow_columns = ("k",)

    def __init__(self, ctx, timer_after_ns=None):
        super().__init__(ctx)
        self.calls: list = []
        self.counts: dict = {}
        if timer_after_ns is not None:
            ctx.timers.register_processing_time_timer(time.time_ns() + timer_after_ns)

    def process(self, cols, n, arrivals):
        assert isinstance(cols["x"], np.ndarray) and isinstance(cols["k"], pa.Array)
        self.calls.append(("process", n, None if arrivals is None else len(arrivals)))
        for key in cols["k"].to_pylist():
            self.counts[key] = self.counts.get(key, 0) + 1
            self.ctx.output.emit(key, self.counts[key], time.time_ns())

    def on_timer(self, timestamp_ns):
        self.calls.append(("timer", timestamp_ns <= time.time_ns()))

    def finish(self):
        self.calls.append(("finish",))

    def close(self):
        self.calls.append(("close",))
        return {"reads": 7}


def run(batches, *, final=True, source_rate=None, **operator_options):
    operators = []

    def factory(ctx):
        operators.append(Recorder(ctx, **operator_options))
        return operators[-1]

    stage = StageSpec("1:test", "k", factory, final=final, serializer=SERIALIZER)
    job = JobConfig(parallelism=2, source_rate=source_rate, disk_profile=None).resolved(2)
    out = pa.Table.from_batches(list(run_subtask(stage, job, iter(batches), subtask=0)))
    return operators[0], out


def test_every_record_reaches_the_operator_and_results_and_metrics_come_out():
    op, out = run([batch(["a", "b", "a"]), batch(["a"], start=3)])
    assert [c[0] for c in op.calls] == ["process", "process", "finish", "close"]
    rows = list(decode_rows(out, SERIALIZER))
    results = {key: value for kind, key, value in rows if kind == KIND_RESULT}
    (metrics,) = [value for kind, _, value in rows if kind == KIND_METRICS]
    assert results == {"a": 3, "b": 1}  # the sink keeps each key's latest emission
    assert (metrics.records_in, metrics.records_out, metrics.subtask) == (4, 4, 0)
    assert metrics.state == {"reads": 7} and metrics.operator_ns > 0
    assert sum(metrics.latency) == 4  # one latency per emission at the final stage


def test_a_stage_that_is_not_final_forwards_its_emissions():
    _, out = run([batch(["a", "a"])], final=False)
    kinds = out.column("kind").to_pylist()
    assert kinds.count(KIND_RECORD) == 2 and kinds.count(KIND_METRICS) == 1
    records = out.filter(pa.compute.equal(out.column("kind"), KIND_RECORD))
    assert [SERIALIZER.loads(v) for v in records.column("value").to_pylist()] == [1, 2]


def test_a_record_of_another_subtask_is_a_routing_error():
    with pytest.raises(RuntimeError, match="routing error: subtask 0 received records of operator"):
        run([batch(["a"], subtask=1)])


def test_upstream_metrics_rows_travel_along_and_are_not_records():
    upstream = pa.RecordBatch.from_pydict(  # what an upstream stage's output looks like
        {
            "kind": [KIND_METRICS, KIND_RECORD],
            "key": [None, "a"],
            "value": [None, SERIALIZER.dumps(1)],
            "arrival_ns": [None, 0],
            "seq": [None, 1],
            "metrics": ['{"stage": "0:up", "subtask": 3}', None],
            "k": [None, "a"],
            KEY_GROUP: [-1, 0],
            "x": [0.0, 1.0],
        }
    )
    op, out = run([upstream])
    assert op.counts == {"a": 1}  # only the record reached the operator
    blobs = [b for b in out.column("metrics").to_pylist() if b]
    assert any('"0:up"' in b for b in blobs) and len(blobs) == 2


def test_a_due_timer_fires_before_the_next_slice():
    op, _ = run([batch(["a"]), batch(["b"], start=1)], timer_after_ns=0)
    assert op.calls[:3] == [("timer", True), ("process", 1, None), ("process", 1, None)]


def test_a_paced_source_releases_slices_no_faster_than_the_rate():
    began = time.perf_counter()
    op, _ = run([batch([f"k{i}" for i in range(500)])], source_rate=2_000)
    elapsed = time.perf_counter() - began
    slices = [c for c in op.calls if c[0] == "process"]
    assert sum(n for _, n, _ in slices) == 500
    assert all(n == 2 and released == 2 for _, n, released in slices)  # 1 ms of records each
    assert elapsed >= 499 / 2_000  # record 499 is released 0.2495 s after record 0


class GroupRecorder(Operator):
    """Keeps the key groups it is handed, in each form an operator can ask for."""

    def __init__(self, ctx, form):
        super().__init__(ctx)
        self.form = form
        setattr(self, form, ("k", KEY_GROUP) if form == "columns" else (KEY_GROUP,))
        self.groups: list = []

    def process(self, cols, n, arrivals):
        groups = cols[KEY_GROUP]
        kind = {"columns": list, "numpy_columns": np.ndarray, "arrow_columns": pa.Array}
        assert isinstance(groups, kind[self.form])
        self.groups.extend(groups if self.form == "columns" else groups.tolist())


@pytest.mark.parametrize("form", ["columns", "numpy_columns", "arrow_columns"])
@pytest.mark.parametrize(
    "keys", [["a", None, "é", "a"], [3, 1 << 40, -7], [3, None, 5]], ids=["str", "long", "null"]
)
def test_at_one_subtask_the_key_groups_are_computed_from_the_keys(form, keys):
    from skewlab.state.key_groups import assign_to_key_group

    ops: list = []
    stage = StageSpec(
        "1:kg",
        "k",
        lambda ctx: ops.append(GroupRecorder(ctx, form)) or ops[-1],
        final=True,
        serializer=SERIALIZER,
    )
    job = JobConfig(parallelism=1, disk_profile=None).resolved(1)
    key_type = pa.string() if isinstance(keys[0], str) else pa.int64()
    no_groups = pa.RecordBatch.from_arrays([pa.array(keys, key_type)], names=["k"])
    list(run_subtask(stage, job, iter([no_groups]), subtask=0))
    assert ops[0].groups == [-1 if k is None else assign_to_key_group(k, 128) for k in keys]
