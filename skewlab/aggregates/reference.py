"""The oracle every strategy is checked against: the same per-tweet HLL registers, computed
independently of the keyed runtime.

* :func:`reference_aggregate` -- plain Python, one ``datasketch`` ``update`` per view;
* :func:`spark_reference_aggregate` -- Spark SQL with native functions only (``xxhash64``, bit
  arithmetic, ``max``), registers assembled on the driver.

Example::

    >>> res = reference_aggregate([("v1", "u1", "t1"), ("v2", "u1", "t1")])
    >>> res["t1"].to_stats()
    TweetStats(tweet_id='t1', view_count=2, viewer_count=1)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from skewlab.aggregates.hll import DEFAULT_PRECISION, spark_register_columns
from skewlab.aggregates.stats_state import StatsState

__all__ = ["reference_aggregate", "spark_reference_aggregate", "states_from_register_maxima"]


def reference_aggregate(
    views: Iterable[tuple[str, str, str]], precision: int = DEFAULT_PRECISION
) -> dict[str, StatsState]:
    """The oracle: one datasketch ``update`` per view, per tweet. ``views`` yields
    ``(view_id, user_id, tweet_id)``; rows whose ``tweet_id`` is None are skipped.

    Example::

        >>> res = reference_aggregate([("v1", "u1", "t1"), ("v2", "u1", "t1")])
        >>> res["t1"].to_stats()
        TweetStats(tweet_id='t1', view_count=2, viewer_count=1)
    """
    result: dict[str, StatsState] = {}
    for view_id, user_id, tweet_id in views:
        if tweet_id is None:
            continue
        state = result.get(tweet_id)
        if state is None:
            state = result[tweet_id] = StatsState.empty(tweet_id, precision)
        state.add(view_id, user_id)
    return result


def spark_reference_aggregate(df, precision: int = DEFAULT_PRECISION) -> dict[str, StatsState]:
    """The same registers as :func:`reference_aggregate`, computed by Spark SQL natively.

    Per view two (sketch, register index, rank) triples are made with ``xxhash64`` and bit
    arithmetic; ``max(rank)`` per (tweet, sketch, index) is Spark's hash aggregation (partial +
    final); the driver lays the maxima into register arrays. Null tweet ids are skipped.

    Example::

        >>> res = spark_reference_aggregate(views_df)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    v_idx, v_rank = spark_register_columns(F.xxhash64("view_id"), precision)
    u_idx, u_rank = spark_register_columns(F.xxhash64("user_id"), precision)
    entries = F.array(
        F.struct(F.lit(0).alias("sketch"), v_idx.alias("idx"), v_rank.alias("rank")),
        F.struct(F.lit(1).alias("sketch"), u_idx.alias("idx"), u_rank.alias("rank")),
    )
    maxima = (
        df.where(F.col("tweet_id").isNotNull())
        .select("tweet_id", F.inline(entries))
        .groupBy("tweet_id", "sketch", "idx")
        .agg(F.max("rank").alias("rank"))
        .toPandas()
    )
    return states_from_register_maxima(
        maxima["tweet_id"].to_numpy(),
        maxima["sketch"].to_numpy(),
        maxima["idx"].to_numpy(),
        maxima["rank"].to_numpy(),
        precision,
    )


def states_from_register_maxima(
    tweet_ids: np.ndarray,
    sketch: np.ndarray,
    idx: np.ndarray,
    rank: np.ndarray,
    precision: int = DEFAULT_PRECISION,
) -> dict[str, StatsState]:
    """Build states from rows ``(tweet_id, sketch 0=views/1=viewers, register index, rank)``."""
    m = 1 << precision
    keys, codes = np.unique(tweet_ids.astype(object), return_inverse=True)
    regs = np.zeros(len(keys) * 2 * m, dtype=np.int8)
    flat = (codes.astype(np.intp) * 2 + sketch.astype(np.intp)) * m + idx.astype(np.intp)
    np.maximum.at(regs, flat, rank.astype(np.int8))
    regs = regs.reshape(len(keys), 2, m)
    return {
        str(k): StatsState.from_registers(str(k), regs[i, 0].copy(), regs[i, 1].copy())
        for i, k in enumerate(keys)
    }
