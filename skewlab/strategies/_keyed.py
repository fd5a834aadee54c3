"""What the keyed strategies share: prepare the views, run one final stage, fold the metrics."""

from __future__ import annotations

from skewlab.runtime import StageSpec, collect_stage, fold_metrics, run_stage
from skewlab.stats import StatsSerializer, StatsState, result_digest

VIEW_INPUT = ("seq", "view_id", "user_id")


def with_seq(views):
    """Views with an arrival order: their ``seq``, or file order when a data set has none."""
    from pyspark.sql import functions as F

    if "seq" in views.columns:
        return views
    return views.withColumn("seq", F.monotonically_increasing_id())


def run_single_stage(spark, views, config, operator, *, order_by=("seq",), extra_input=()):
    """``keyBy(tweet_id)`` then ``operator``; returns ``(RunResult, results)``."""
    stage = StageSpec(
        name="1:" + config.strategy,
        config=config,
        key_col="tweet_id",
        operator=operator,
        final=True,
        serializer=StatsSerializer,
        order_by=order_by,
        input_columns=(*VIEW_INPUT, *extra_input),
        output=StatsState.to_stats,
    )
    out = collect_stage(run_stage(with_seq(views), spark, stage), StatsSerializer)
    return fold(config, out), out.results


def fold(config, out, *, buffers: bool = False):
    """The :class:`RunResult` of a collected final stage."""
    return fold_metrics(
        config.strategy,
        config.parameters(),
        out.metrics,
        keys=len(out.results),
        wall_seconds=out.wall_seconds,
        digest=result_digest(out.results),
        buffers=buffers,
        latency_profile=config.latency_profile,
        check_order=config.check_order,
    )
