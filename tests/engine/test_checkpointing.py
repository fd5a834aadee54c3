"""Savepoints, checkpoints, restore and an injected failure around a real operator chain, on
real files: a retried subtask restores its latest checkpoint and replays from its position; a
savepoint published from every subtask restores at another parallelism, key group by key group.
(The same through Spark, with real task retries: tests/strategies/test_resume.py.)"""

from __future__ import annotations

import json

import pytest

from skewlab.engine.checkpointing import StateHandlingOperator, latest_checkpoint
from skewlab.engine.config import JobConfig
from skewlab.engine.operator import Operator, OperatorContext
from skewlab.engine.recovery import InjectedFailure, Recovery
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.savepoint import Savepoint, begin_savepoint, publish_savepoint
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError
from skewlab.operators.stateful import StatefulOperator
from skewlab.state import PickleSerializer, StateBackend
from skewlab.state.key_groups import assign_to_key_group
from skewlab.state.metadata_file import write_metadata

MAX_P = 16


class RunningCount(StatefulOperator):
    """A running count per key, emitted per record (what a keyed reduce does)."""

    columns = ("k", KEY_GROUP, "seq")

    def __init__(self, ctx):
        super().__init__(ctx, StateBackend("rocksdb"))

    def process(self, cols, n, arrivals):
        get, put = self.state.get, self.state.put
        for key, group in zip(cols["k"], cols[KEY_GROUP], strict=True):
            count = (get(group, key) or 0) + 1
            put(group, key, count)
            self.ctx.output.emit(key, count, 0)


class Stateless(Operator):
    columns = ("k",)

    def process(self, cols, n, arrivals):
        pass


def records(n: int, keys: int = 7, parallelism: int = 1, subtask: int = 0):
    """The records of one subtask (of ``parallelism``) in seq order, as the task loop hands
    them over."""
    rows = []
    for seq in range(n):
        key = f"key-{seq % keys}"
        group = assign_to_key_group(key, MAX_P)
        if group * parallelism // MAX_P == subtask:
            rows.append((key, group, seq))
    return {"k": [r[0] for r in rows], KEY_GROUP: [r[1] for r in rows], "seq": [r[2] for r in rows]}


def counts(n: int, keys: int = 7) -> dict[str, int]:
    out: dict[str, int] = {}
    for seq in range(n):
        out[f"key-{seq % keys}"] = out.get(f"key-{seq % keys}", 0) + 1
    return out


def wrapper(recovery: Recovery, *, parallelism=1, subtask=0, operator=RunningCount):
    stage = StageSpec("1:count", "k", operator, final=True, serializer=PickleSerializer())
    job = JobConfig(
        parallelism=parallelism, max_parallelism=MAX_P, disk_profile=None, recovery=recovery
    )
    return StateHandlingOperator(OperatorContext(stage, job, subtask), operator, recovery)


def feed(op, cols, step: int = 13) -> None:
    n = len(cols["seq"])
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        op.process({k: v[lo:hi] for k, v in cols.items()}, hi - lo, None)


def test_a_retried_subtask_restores_its_latest_checkpoint_and_replays_from_its_position(tmp_path):
    recovery = Recovery(checkpoint_interval=25, checkpoint_dir=str(tmp_path)).for_run()
    first = wrapper(recovery)
    feed(first, records(60))  # checkpoints after 25 and 50 records, then "crashes"
    first.close()
    chk = latest_checkpoint(recovery.run_checkpoint_dir(), "1:count", 0)
    assert chk is not None and chk.name == "chk-2"
    assert json.loads((chk / "_checkpoint").read_text())["position"] == 50
    second = wrapper(recovery)  # the retried attempt: same run, same subtask
    another = wrapper(recovery.for_run())  # another run over the same directory ...
    assert another.position == 0 and another.ctx.metrics.recovery["restored_from"] is None
    another.close()  # ... starts from nothing
    assert second.position == 50 and second.ctx.metrics.recovery["restored_from"] == "checkpoint"
    feed(second, records(100))  # the task reads its whole partition again
    second.finish()
    assert second.skipped == 50
    assert second.ctx.output.results == counts(100)  # every record counted once
    assert second.ctx.metrics.records_out == 100  # 50 emissions restored, 50 made again
    second.close()


def test_the_injected_failure_raises_at_its_record_after_the_ones_before(tmp_path):
    op = wrapper(Recovery(fail_at=37))
    with pytest.raises(InjectedFailure, match="source record 37"):
        feed(op, records(60))
    assert op.ctx.metrics.records_out == 37  # records 0..36 were processed, 37 was not
    op.close()


def stop_with_savepoint(tmp_path, parallelism: int, n: int):
    target = tmp_path / "savepoint"
    work = begin_savepoint(target)
    recovery = Recovery(stop_at=n, savepoint_dir=str(work))
    sinks = {}
    for subtask in range(parallelism):
        op = wrapper(recovery, parallelism=parallelism, subtask=subtask)
        feed(op, records(n, parallelism=parallelism, subtask=subtask))
        op.finish()
        sinks.update(op.ctx.output.results)
        op.close()
    published = publish_savepoint(
        work, target, max_parallelism=MAX_P, parallelism=parallelism, source_position=n
    )
    return target, published, sinks


@pytest.mark.parametrize(("old_p", "new_p"), [(3, 4), (4, 2), (2, 5)])
def test_a_savepoint_restores_at_another_parallelism_with_every_key_once(tmp_path, old_p, new_p):
    target, published, sink = stop_with_savepoint(tmp_path, old_p, 70)
    assert published.source_position == 70 and published.parallelism == old_p
    assert published.entries == 7 and not list(tmp_path.glob(".savepoint.inprogress-*"))
    restored: dict = {}
    for subtask in range(new_p):
        op = wrapper(Recovery(restore_from=str(target)), parallelism=new_p, subtask=subtask)
        entries = dict((k, v) for _, k, v in op.inner.backend.items())
        assert not set(entries) & set(restored)
        restored.update(entries)
        assert op.ctx.metrics.recovery["restored_keys"] == len(entries)
        op.close()
    assert restored == counts(70) == sink


def test_state_a_snapshot_holds_is_never_dropped_silently(tmp_path):
    target, _, _ = stop_with_savepoint(tmp_path, 2, 30)
    with pytest.raises(SkewlabInputError, match="keeps no state and cannot restore"):
        wrapper(Recovery(restore_from=str(target)), parallelism=2, operator=Stateless)


def test_an_incomplete_savepoint_is_never_published(tmp_path):
    target = tmp_path / "savepoint"
    work = begin_savepoint(target)
    op = wrapper(Recovery(stop_at=10, savepoint_dir=str(work)), parallelism=2, subtask=0)
    feed(op, records(10, parallelism=2))
    op.finish()
    op.close()  # subtask 1 never reports
    with pytest.raises(RuntimeError, match="savepoint incomplete"):
        publish_savepoint(work, target, max_parallelism=MAX_P, parallelism=2, source_position=10)
    assert not target.exists()
    with pytest.raises(SkewlabInputError, match="in-progress savepoint, never published"):
        Savepoint.load(work)
    with pytest.raises(SkewlabInputError, match="already exists"):
        begin_savepoint(tmp_path)


@pytest.fixture
def savepoint_path(tmp_path):
    return stop_with_savepoint(tmp_path, 2, 40)[0]


def edit(path, change):
    """Change a metadata file and re-sign it: the checks behind its checksum."""
    data = json.loads(path.read_text())
    change(data)
    write_metadata(path.parent, data)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: (p / "_metadata").unlink(), "has no _metadata file"),
        (lambda p: (p / "_metadata").write_text('{"kind": "skew'), "truncated or not JSON"),
        (lambda p: edit(p / "_metadata", lambda m: m.update(format_version=3)), "format version 3"),
        (
            lambda p: (p / "1-count/keyed-value/subtask-1.kgs").write_bytes(
                b"SKGS\x00\x00\x00\x01"
            ),
            "shorter than its offsets say",
        ),
        (lambda p: edit(p / "_metadata", lambda m: m.update(operators={})), "no operators"),
    ],
)
def test_a_damaged_savepoint_is_refused_whole(savepoint_path, damage, message):
    damage(savepoint_path)
    with pytest.raises(SkewlabInputError) as err:
        Savepoint.load(savepoint_path, verify=True)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_foreign_path_or_another_max_parallelism_is_refused(savepoint_path, tmp_path):
    with pytest.raises(SkewlabInputError, match="max parallelism 16; this job has 128"):
        Savepoint.load(savepoint_path, max_parallelism=128)
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(SkewlabInputError, match="is a file, not a directory"):
        Savepoint.load(tmp_path / "a-file")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SkewlabInputError, match="is empty"):
        Savepoint.load(tmp_path / "empty")
