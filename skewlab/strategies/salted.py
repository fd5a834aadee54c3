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

    >>> run_strategy(views, RunConfig("salted", salt_buckets=4))  # doctest: +SKIP
"""

from __future__ import annotations

from functools import partial

from skewlab.operators import KeyedReduce, PartialsReduce
from skewlab.runtime import StageSpec, collect_stage, run_stage
from skewlab.stats import StatsSerializer, StatsState
from skewlab.strategies._keyed import VIEW_INPUT, fold, with_seq

SALT, SALTED_KEY = "_salt", "_salted_key"


def with_salt(df, key_col: str, id_col: str, salt_buckets: int):
    """``df`` with ``_salt = pmod(xxhash64(id_col), salt_buckets)`` and
    ``_salted_key = key || '-' || salt`` (null when the key is null, so it is rejected).

    The salt is a function of the record's id (a rerun salts every record
    the same way).
    """
    from pyspark.sql import functions as F

    salt = F.expr(f"pmod(xxhash64({id_col}), {int(salt_buckets)})").cast("long")
    salted = F.when(F.col(key_col).isNull(), F.lit(None).cast("string")).otherwise(
        F.concat_ws("-", F.col(key_col), salt.cast("string"))
    )
    return df.withColumn(SALT, salt).withColumn(SALTED_KEY, salted)


def run(spark, views, config):
    views = with_salt(with_seq(views), "tweet_id", "view_id", config.salt_buckets)
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
