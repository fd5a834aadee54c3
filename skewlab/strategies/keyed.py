"""What the keyed view strategies share: the views' arrival order, one final stage, the fold.

Example::

    >>> VIEW_INPUT
    ('seq', 'view_id', 'user_id')
"""

from __future__ import annotations

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.stats_state import StatsSerializer, StatsState
from skewlab.engine.config import JobConfig
from skewlab.engine.job import StageOutput, collect_stage, run_stage
from skewlab.engine.metrics import fold_metrics
from skewlab.engine.stage import StageSpec
from skewlab.strategies.parameters import StrategyParameters

__all__ = ["VIEW_INPUT", "fold", "run_single_stage", "with_seq"]

#: The view columns every keyed strategy reads besides the key.
VIEW_INPUT = ("seq", "view_id", "user_id")


def with_seq(views):
    """Views with an arrival order: their ``seq``, or file order when a data set has none."""
    from pyspark.sql import functions as F

    if "seq" in views.columns:
        return views
    return views.withColumn("seq", F.monotonically_increasing_id())


def run_single_stage(
    spark,
    views,
    params: StrategyParameters,
    job: JobConfig,
    operator,
    *,
    order_by=("seq",),
    extra_input=(),
    buffers: bool = False,
):
    """``keyBy(tweet_id)`` then ``operator``, ending with the seed's ``.map(_.toStats)``;
    returns ``(RunResult, results)``."""
    stage = StageSpec(
        name="1:" + params.name,
        key_col="tweet_id",
        operator=operator,
        final=True,
        serializer=StatsSerializer,
        order_by=order_by,
        input_columns=(*VIEW_INPUT, *extra_input),
        output_map=StatsState.to_stats,
    )
    out = collect_stage(run_stage(with_seq(views), spark, stage, job), StatsSerializer)
    return fold(params, job, out, buffers=buffers), out.results


def fold(params: StrategyParameters, job: JobConfig, out: StageOutput, *, buffers=False):
    """The :class:`~skewlab.engine.metrics.RunResult` of a collected final stage."""
    return fold_metrics(
        params.name,
        job.parameters() | params.parameters(),
        out.metrics,
        keys=len(out.results),
        wall_seconds=out.wall_seconds,
        digest=result_digest(out.results),
        buffers=buffers,
        latency_profile=job.latency_profile,
        check_order=job.check_order,
    )
