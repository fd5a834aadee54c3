"""The count operators, driven directly through the operator contract (no Spark)."""

from __future__ import annotations

from collections import Counter

import pytest

from skewlab.engine.config import JobConfig
from skewlab.engine.operator import OperatorContext
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import StageSpec
from skewlab.errors import UnsortedInputError
from skewlab.operators.count import KeyedCount, SortedCount, SortGroupCount
from skewlab.state import PickleSerializer, StateBackend
from skewlab.state.key_groups import assign_to_key_group


def _context(key_type: str = "bigint") -> OperatorContext:
    job = JobConfig(parallelism=1, max_parallelism=128, disk_profile=None)
    stage = StageSpec(
        "1:test", "word", SortedCount, final=True, serializer=PickleSerializer(), key_type=key_type
    )
    return OperatorContext(stage, job, 0)


def _batch(keys):
    return {"word": list(keys), KEY_GROUP: [assign_to_key_group(k, 128) for k in keys]}


def test_single_key_backend_error_surfaces_from_the_sorted_operator():
    keys = sorted([5, 5, 9, 9, 9], key=lambda k: (assign_to_key_group(k, 128), k))
    ctx = _context()
    op = SortedCount(ctx)
    op.process(_batch(keys), len(keys), None)
    # key 5's run ended; seeing it again is an error, not a fresh count of 1
    with pytest.raises(UnsortedInputError, match="input is not sorted by key"):
        op.process(_batch([keys[0]]), 1, None)
    assert ctx.output.results == Counter(keys)  # the finished runs, counted right
    op.close()


def test_emissions_that_do_not_add_up_to_the_counts_are_caught():
    ctx = _context()
    op = KeyedCount(ctx, StateBackend("heap"), emit="record")
    op.process(_batch([1, 1, 2]), 3, None)
    op.emissions.count_sum -= 1  # as if one emission had carried a stale count
    op.finish()
    assert op.close()["emissions_match"] is False


def test_sort_group_raises_the_same_error():
    ctx = _context()
    op = SortGroupCount(ctx)
    first, second = sorted([1, 2], key=lambda k: (assign_to_key_group(k, 128), k))
    op.process(_batch([first, second]), 2, None)
    with pytest.raises(UnsortedInputError):
        op.process(_batch([first]), 1, None)


def test_checkpoint_flushes_dirty_cache_entries_and_samples_the_gauge():
    ctx = _context()
    op = KeyedCount(ctx, StateBackend("cached", max_entries=10), emit="record")
    keys = [1, 2, 1, 1, 3]
    op.process(_batch(keys), len(keys), None)
    assert op.backend.stats.writes == 0  # write-back: nothing reached RocksDB yet
    op.checkpoint()
    assert op.backend.stats.writes == 3  # the three dirty keys
    assert op.gauge[-1][1] == pytest.approx(2 / 5)  # hits 2 of 5 lookups
    # each record's (key, count) reached the sink: 1, 1, 2, 3, 1
    assert (op.emissions.records, op.emissions.count_sum) == (5, 8)
    op.finish()
    assert ctx.output.results == {1: 3, 2: 1, 3: 1}
    stats = op.close()
    assert stats["checkpoints"] == 1
    assert stats["records_emitted"] == 5 and stats["emissions_match"]
