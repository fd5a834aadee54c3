"""``buffered``: seed 000's in-memory buffer, then keyBy -> reduce of the partials.

The buffer is operator-level (one per subtask, for all its keys), flushed when it holds
``max_count`` records or every ``trigger_interval_ms``; per-key order is kept because a key's
records never leave their subtask. Three buffers: ``list`` (the seed's ``Vector`` per key,
reduced at flush), ``preaggregate`` (one running state per key) and ``vectorized`` (Arrow
slices, hashes computed by Spark, registers folded with numpy -- identical registers).

Example::

    >>> from skewlab.runtime import RunConfig
    >>> config = RunConfig("buffered", trigger_interval_ms=100, max_count=1000)
    >>> run_strategy(views, config)  # doctest: +SKIP
"""

from __future__ import annotations

from skewlab.hll import spark_register_columns
from skewlab.operators import BUFFERS, USER_RANK, USER_REGISTER, VIEW_RANK, VIEW_REGISTER
from skewlab.runtime import StageSpec, collect_stage, run_stage
from skewlab.stats import StatsSerializer, StatsState
from skewlab.strategies._keyed import VIEW_INPUT, fold, with_seq


def run(spark, views, config):
    from pyspark.sql import functions as F

    extra = ()
    views = with_seq(views)
    if config.buffer == "vectorized":
        # the user sketch's registers sit after the view sketch's in a key's slot
        m = 1 << config.precision
        v_idx, v_rank = spark_register_columns(F.xxhash64("view_id"), config.precision)
        u_idx, u_rank = spark_register_columns(F.xxhash64("user_id"), config.precision)
        views = views.select(
            "*",
            v_idx.alias(VIEW_REGISTER),
            v_rank.alias(VIEW_RANK),
            (u_idx + F.lit(m)).alias(USER_REGISTER),
            u_rank.alias(USER_RANK),
        )
        extra = (VIEW_REGISTER, VIEW_RANK, USER_REGISTER, USER_RANK)
    stage = StageSpec(
        name="1:buffered",
        config=config,
        key_col="tweet_id",
        operator=BUFFERS[config.buffer],
        final=True,
        serializer=StatsSerializer,
        input_columns=(*VIEW_INPUT, *extra),
        output=StatsState.to_stats,
    )
    out = collect_stage(run_stage(views, spark, stage), StatsSerializer)
    return fold(config, out, buffers=True), out.results
