"""What the keyed view strategies share: the views' arrival order and the upstream map, one
final stage, the fold.

Every keyed strategy reads the same input columns (:data:`VIEW_INPUT`): the arrival order and
each view's single-view state, computed by Spark before ``keyBy``
(:func:`~skewlab.aggregates.stats_state.with_single_view_states`: the seed's
``.map(StatsState.fromView(_))``). What differs between strategies is only what their operators
do with them.

Example::

    >>> VIEW_INPUT
    ('seq', '_view_register', '_view_rank', '_user_register', '_user_rank')
"""

from __future__ import annotations

from functools import partial

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.stats_state import (
    SINGLE_VIEW_COLUMNS,
    StatsSerializer,
    StatsState,
    with_single_view_states,
)
from skewlab.engine.config import JobConfig
from skewlab.engine.job import StageOutput, collect_stage, run_stage
from skewlab.engine.metrics import fold_metrics
from skewlab.engine.stage import StageSpec
from skewlab.operators.reduce import KeyedReduce, PartialsReduce
from skewlab.strategies.parameters import StrategyParameters

__all__ = ["VIEW_INPUT", "fold", "run_single_stage", "split_key_stages", "upstream", "with_seq"]

#: The input columns every keyed strategy reads besides the key.
VIEW_INPUT = ("seq", *SINGLE_VIEW_COLUMNS)


def with_seq(views):
    """Views with an arrival order: their ``seq``, or file order when a data set has none."""
    from pyspark.sql import functions as F

    if "seq" in views.columns:
        return views
    return views.withColumn("seq", F.monotonically_increasing_id())


def upstream(views, params: StrategyParameters):
    """What every keyed strategy's first stage reads: the views with their arrival order and
    their single-view states (the upstream map), at the strategy's precision."""
    return with_single_view_states(with_seq(views), params.precision)


def run_single_stage(
    spark,
    views,
    params: StrategyParameters,
    job: JobConfig,
    operator,
    *,
    order_by=("seq",),
    buffers: bool = False,
):
    """The upstream map, ``keyBy(tweet_id)``, then ``operator``, ending with the seed's
    ``.map(_.toStats)``; returns ``(RunResult, results)``."""
    stage = StageSpec(
        name="1:" + params.name,
        key_col="tweet_id",
        operator=operator,
        final=True,
        serializer=StatsSerializer,
        order_by=order_by,
        input_columns=VIEW_INPUT,
        output_map=StatsState.to_stats,
    )
    out = collect_stage(run_stage(upstream(views, params), spark, stage, job), StatsSerializer)
    return fold(params, job, out, buffers=buffers), out.results


def split_key_stages(
    name: str, split_col: str, backend, precision: int
) -> tuple[StageSpec, StageSpec]:
    """The two stages of a strategy that splits keys (salting, key splitting): a running
    partial per sub-key (``keyBy split_col``, stage ``1:<name>-partial``), emitted under its
    tweet, then the partials' union per tweet (``keyBy tweet``, stage ``2:<name>-final``) in
    whatever order the exchange delivers them.

    Example::

        >>> stage1, stage2 = split_key_stages("salted", "_salted_key", None, 14)
        >>> stage1.name, stage1.key_col, stage2.name, stage2.order_by
        ('1:salted-partial', '_salted_key', '2:salted-final', ())
    """
    partials = StageSpec(
        name=f"1:{name}-partial",
        key_col=split_col,
        operator=partial(
            KeyedReduce,
            state_backend=backend,
            precision=precision,
            key_col=split_col,
            emit_key_col="tweet_id",
        ),
        final=False,
        serializer=StatsSerializer,
        input_columns=(*VIEW_INPUT, "tweet_id"),
    )
    final = StageSpec(
        name=f"2:{name}-final",
        key_col="key",
        operator=partial(PartialsReduce, state_backend=backend),
        final=True,
        serializer=StatsSerializer,
        order_by=(),  # arrival order is whatever the exchange delivers
        source=False,
        input_columns=("value", "arrival_ns", "seq"),
        output_map=StatsState.to_stats,
    )
    return partials, final


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
        latency_profile=job.disk_profile,
        check_order=job.check_order,
    )
