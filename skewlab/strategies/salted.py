"""``salted``: key salting, as seed 000 describes it.

``keyBy (tweet, salt) -> reduce`` (a running partial per record, Flink-style) ``-> unsalt ->
keyBy tweet -> reduce``. The salt of a view is ``pmod(xxhash64(view_id), salt_buckets)``. The
HLL union survives the running partials (idempotent); a counter would not -- see
:mod:`skewlab.salting`. Salting spreads a hot key over ``salt_buckets`` subtasks but gives up
per-key order: the final reduce sees a key's records in whatever order the exchange delivers.

Spark runs the two stages one after the other (a shuffle is a stage barrier), so a record's
latency from the first operator to the final emission includes the rest of stage one: salted
latency here is a batch artefact, far above what a streaming exchange would add.

Example::

    >>> run_strategy(views, RunConfig("salted", salt_buckets=4))
"""

from __future__ import annotations

from functools import partial

from skewlab.operators import KeyedReduce, PartialsReduce
from skewlab.runtime import StageSpec, collect_stage, run_stage
from skewlab.stats import StatsSerializer, StatsState
from skewlab.strategies._keyed import VIEW_INPUT, fold, with_seq

SALTED_KEY = "_salted_key"


def salted_views(views, salt_buckets: int):
    """Views with ``_salted_key = tweet_id || '-' || salt`` (null tweet stays null)."""
    from pyspark.sql import functions as F

    salt = F.expr(f"pmod(xxhash64(view_id), {int(salt_buckets)})")
    return views.withColumn(SALTED_KEY, F.concat_ws("-", F.col("tweet_id"), salt.cast("string")))


def run(spark, views, config):
    from pyspark.sql import functions as F

    views = salted_views(with_seq(views), config.salt_buckets)
    # concat_ws skips nulls: keep a null tweet's salted key null, so it is rejected
    views = views.withColumn(
        SALTED_KEY, F.when(F.col("tweet_id").isNull(), None).otherwise(F.col(SALTED_KEY))
    )
    partials = StageSpec(
        name="1:salted-partial",
        config=config,
        key_col=SALTED_KEY,
        operator=partial(KeyedReduce, key_col=SALTED_KEY, emit_key_col="tweet_id"),
        final=False,
        serializer=StatsSerializer,
        input_columns=(*VIEW_INPUT, "tweet_id"),
    )
    final = StageSpec(
        name="2:salted-final",
        config=config,
        key_col="key",
        operator=PartialsReduce,
        final=True,
        serializer=StatsSerializer,
        order_by=(),  # arrival order is whatever the exchange delivers
        source=False,
        input_columns=("value", "arrival_ns", "seq"),
        output=StatsState.to_stats,
    )
    stage1 = run_stage(views, spark, partials)
    out = collect_stage(run_stage(stage1, spark, final), StatsSerializer)
    return fold(config, out), out.results
