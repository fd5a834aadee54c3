"""The operator contract: what an operator sees of its subtask (context, output, timers)."""

from __future__ import annotations

from skewlab.engine.config import JobConfig
from skewlab.engine.operator import Operator, OperatorContext, TimerService
from skewlab.engine.stage import StageSpec
from skewlab.state import PickleSerializer, StateBackend
from skewlab.state.key_groups import KeyGroupRange


def context(*, final=True, output_map=None, subtask=1, **job) -> OperatorContext:
    stage = StageSpec(
        "1:x", "k", Operator, final=final, serializer=PickleSerializer(), output_map=output_map
    )
    settings = {"parallelism": 2, "max_parallelism": 128, "disk_profile": None} | job
    return OperatorContext(stage, JobConfig(**settings), subtask)


def test_the_context_knows_its_subtask_and_key_groups():
    ctx = context(subtask=1)
    assert ctx.subtask == 1 and ctx.key_group_range == KeyGroupRange(64, 127)
    assert ctx.metrics.stage == "1:x" and ctx.metrics.subtask == 1


def test_keyed_state_is_the_subtasks_and_tracked_only_when_priced_or_asked():
    ctx = context(disk_profile="ebs-article")
    with ctx.create_keyed_state_backend(StateBackend("rocksdb")) as on_disk:
        assert on_disk.key_group_range == KeyGroupRange(64, 127) and on_disk.track_keys
    with ctx.create_keyed_state_backend(StateBackend("heap")) as in_memory:
        assert not in_memory.track_keys  # the model prices only disk accesses
    with context(track_keys=True).create_keyed_state_backend(StateBackend("heap")) as asked:
        assert asked.track_keys


def test_check_order_counts_records_of_a_key_that_arrive_after_a_later_one():
    ctx = context()
    for key, seq in [("a", 1), ("b", 2), ("a", 0), ("a", 3), ("b", 1)]:
        ctx.check_order(key, seq)
    assert ctx.metrics.order_violations == 2


def test_the_final_output_keeps_the_latest_value_and_its_mapped_output():
    ctx = context(output_map=lambda v: v * 10)
    ctx.output.emit("a", 1, arrival_ns=0)
    ctx.output.emit_batch("a", 2, [(0, 3)])  # one emission that includes three records
    assert ctx.output.results == {"a": 2} and ctx.output.mapped == {"a": 20}
    assert ctx.metrics.records_out == 2
    ctx.output.flush_latencies()
    assert ctx.output.histogram.total == 4  # a latency per record included


def test_a_stage_that_is_not_final_serialises_what_it_emits():
    ctx = context(final=False)
    ctx.output.emit("a", {"n": 1}, arrival_ns=5, seq=9)
    assert ctx.output.forward_keys == ["a"] and ctx.output.forward_seqs == [9]
    assert PickleSerializer().loads(ctx.output.forward_values[0]) == {"n": 1}
    assert ctx.output.results == {}


def test_timers_fire_in_time_order_and_only_when_due():
    timers = TimerService()
    for t in (30, 10, 20):
        timers.register_processing_time_timer(t)
    assert timers.pop_due(5) == [] and timers.next_timer_ns() == 10
    assert timers.pop_due(25) == [10, 20] and timers.pop_due(100) == [30]
    assert timers.next_timer_ns() is None
