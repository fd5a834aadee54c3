"""A stage on Spark at parallelism 1: the order records reach the one subtask, and the key
groups it computes itself."""

from __future__ import annotations

import pytest

from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, run_stage
from skewlab.engine.operator import Operator
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import StageSpec
from skewlab.state import PickleSerializer
from skewlab.state.key_groups import assign_to_key_group


class KeyOrder(Operator):
    """Keeps every key in the order it came, with the key group it was handed."""

    columns = ("word", KEY_GROUP)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.seen: list = []

    def process(self, cols, n, arrivals):
        self.seen.extend(zip(cols["word"], cols[KEY_GROUP], strict=True))

    def finish(self):
        self.ctx.output.emit_batch(0, self.seen, ())


def _run(spark, df):
    stage = StageSpec(
        "1:order", "word", KeyOrder, final=True, serializer=PickleSerializer(), key_type="bigint"
    )
    out_df = run_stage(df, spark, stage, JobConfig(parallelism=1, disk_profile=None).resolved(1))
    plan = out_df._jdf.queryExecution().executedPlan().toString()
    return plan, collect_stage(out_df, stage.serializer).results[0]


def _longs(spark, lo, hi):
    return spark.range(lo, hi, numPartitions=2).selectExpr("id AS word", "id AS seq")


def test_an_input_already_in_arrival_order_is_not_sorted_again(spark):
    df = _longs(spark, 0, 20_000).cache()
    plan, seen = _run(spark, df)
    assert "Sort" not in plan and "Exchange" not in plan
    assert [k for k, _ in seen] == list(range(20_000))
    # the key groups the subtask computed itself are Flink's
    assert all(g == assign_to_key_group(k, 128) for k, g in seen[:2_000])


@pytest.mark.parametrize("cached", [True, False])
def test_one_subtask_reads_its_input_partitions_in_turn_each_in_arrival_order(spark, cached):
    # partitions [10,000..20,000) then [0..10,000), each shuffled inside: each is sorted into
    # arrival order and they are read one after another, as a source subtask reads its splits
    later = _longs(spark, 10_000, 20_000).sortWithinPartitions("word", ascending=False)
    earlier = _longs(spark, 0, 10_000).sortWithinPartitions("word", ascending=False)
    df = later.union(earlier)
    df = df.cache() if cached else df
    plan, seen = _run(spark, df)
    assert "Sort" in plan
    keys = [k for k, _ in seen]
    assert sorted(keys) == list(range(20_000))
    assert keys == list(range(10_000, 20_000)) + list(range(10_000))
