"""Seed 000's keyed reduce as ``transformWithStateInPandas`` processors: Spark's own engine holds
the tweet's registers in a ``ValueState`` on its RocksDB state store.

Both processors see, per key and micro-batch, the rows Spark grouped for that tweet, each already
mapped by Spark to its register entries (``v_idx, v_rank, u_idx, u_rank``: the seed's
``StatsState.fromView`` as native ``xxhash64`` and bit arithmetic, the same upstream map for every
variant). What each does per micro-batch and key:

===============  ==================================  ===================================
                 :class:`PerRecordStats`             :class:`PerBatchStats`
===============  ==================================  ===================================
state reads      one ``ValueState.get`` per row       one per key
register merge   one row's two registers              every row's, ``np.maximum.at``
state writes     one ``ValueState.update`` per row    one per key
emissions        a running ``TweetStats`` per row     one ``TweetStats`` per key
registers out    on the key's last emission           on its one emission
===============  ==================================  ===================================

A ``ValueState`` call from Python is a round trip to the JVM's state server (which then reads or
writes RocksDB): the per-record processor pays two per row, the per-batch one two per key --
the micro-batch *is* seed 000's buffer. Each emission also carries what the engine needs for
its metrics: the input rows it covers (``records``), rows without a tweet (``rejected``: a null
key is counted, never folded), the Spark partition that ran it and the time spent inside
``handleInputRows`` (``operator_ns``, on the key's last emission; the same region for both).

Example::

    >>> PerBatchStats(precision=10).precision
    10
    >>> OUTPUT_COLUMNS[:3]
    ('tweet_id', 'view_count', 'viewer_count')
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import BinaryType, StructField, StructType

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.aggregates.stats_state import StatsState

__all__ = [
    "OUTPUT_COLUMNS",
    "OUTPUT_SCHEMA",
    "REGISTER_INPUT",
    "STATE_NAME",
    "STATE_SCHEMA",
    "PerBatchStats",
    "PerRecordStats",
]

#: The ValueState's name (``spark.read.format("statestore").option("stateVarName", ...)``).
STATE_NAME = "stats"
#: The tweet's state: its two register arrays (int8 bytes).
STATE_SCHEMA = StructType(
    [StructField("views", BinaryType(), True), StructField("viewers", BinaryType(), True)]
)
#: The register entries Spark computes per view before the processor (the upstream map).
REGISTER_INPUT = ("v_idx", "v_rank", "u_idx", "u_rank")
#: What every emission holds.
OUTPUT_SCHEMA = (
    "tweet_id string, view_count bigint, viewer_count bigint, views binary, viewers binary, "
    "records bigint, rejected bigint, partition int, operator_ns bigint"
)
OUTPUT_COLUMNS = tuple(part.split()[0] for part in OUTPUT_SCHEMA.split(", "))


class _TweetStatsProcessor(StatefulProcessor):
    """What both processors share: the state handle, null keys, the emission frame."""

    def __init__(self, precision: int = DEFAULT_PRECISION) -> None:
        self.precision = precision

    def init(self, handle) -> None:
        self.state = handle.getValueState(STATE_NAME, STATE_SCHEMA)

    def _registers(self) -> tuple[np.ndarray, np.ndarray]:
        """The tweet's registers from its state (zeros when it has none): one state read."""
        value = self.state.get()
        if value is None:
            m = 1 << self.precision
            return np.zeros(m, dtype=np.int8), np.zeros(m, dtype=np.int8)
        return (np.frombuffer(value[0], dtype=np.int8).copy(),
                np.frombuffer(value[1], dtype=np.int8).copy())  # fmt: skip

    def handleInputRows(self, key, rows, timerValues):
        from pyspark import TaskContext

        started = time.perf_counter_ns()
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else -1
        tweet = key[0]
        if tweet is None:
            rejected = sum(len(frame) for frame in rows)
            frame = _frame([None], [0], [0], [None], [None], [0], [rejected], partition)
        else:
            frame = self.fold(tweet, rows, partition)
        frame.iloc[-1, frame.columns.get_loc("operator_ns")] = time.perf_counter_ns() - started
        yield frame

    def fold(self, tweet: str, rows, partition: int) -> pd.DataFrame:
        raise NotImplementedError

    def close(self) -> None:
        pass


class PerRecordStats(_TweetStatsProcessor):
    """Per row: read the tweet's state, merge the row, write the state, emit its running
    ``TweetStats`` (seed 000's naive ``keyBy -> reduce -> map(toStats)``)."""

    def fold(self, tweet, rows, partition):
        get_registers, update = self._registers, self.state.update
        views_out, viewers_out = [], []
        views = viewers = None
        for frame in rows:
            v_idx, v_rank, u_idx, u_rank = (frame[c].to_numpy() for c in REGISTER_INPUT)
            for i in range(len(frame)):
                views, viewers = get_registers()
                if v_rank[i] > views[v_idx[i]]:
                    views[v_idx[i]] = v_rank[i]
                if u_rank[i] > viewers[u_idx[i]]:
                    viewers[u_idx[i]] = u_rank[i]
                update((views.tobytes(), viewers.tobytes()))
                stats = StatsState.from_registers(tweet, views, viewers).to_stats()
                views_out.append(stats.view_count)
                viewers_out.append(stats.viewer_count)
        n = len(views_out)
        blobs = [None] * (n - 1)
        return _frame(
            [tweet] * n, views_out, viewers_out, blobs + [views.tobytes()],
            blobs + [viewers.tobytes()], [1] * n, [0] * n, partition,
        )  # fmt: skip


class PerBatchStats(_TweetStatsProcessor):
    """Per key and micro-batch: read the state once, fold every row in, write it once, emit one
    ``TweetStats`` (seed 000's buffer, with the micro-batch as the buffer)."""

    def fold(self, tweet, rows, partition):
        views, viewers = self._registers()
        n = 0
        for frame in rows:
            v_idx, v_rank, u_idx, u_rank = (frame[c].to_numpy() for c in REGISTER_INPUT)
            np.maximum.at(views, v_idx.astype(np.intp), v_rank.astype(np.int8))
            np.maximum.at(viewers, u_idx.astype(np.intp), u_rank.astype(np.int8))
            n += len(frame)
        self.state.update((views.tobytes(), viewers.tobytes()))
        stats = StatsState.from_registers(tweet, views, viewers).to_stats()
        return _frame([tweet], [stats.view_count], [stats.viewer_count], [views.tobytes()],
                      [viewers.tobytes()], [n], [0], partition)  # fmt: skip


def _frame(tweets, view_counts, viewer_counts, views, viewers, records, rejected, partition):
    n = len(tweets)
    return pd.DataFrame(
        {
            "tweet_id": pd.Series(tweets, dtype=object),
            "view_count": np.asarray(view_counts, dtype=np.int64),
            "viewer_count": np.asarray(viewer_counts, dtype=np.int64),
            "views": pd.Series(views, dtype=object),
            "viewers": pd.Series(viewers, dtype=object),
            "records": np.asarray(records, dtype=np.int64),
            "rejected": np.asarray(rejected, dtype=np.int64),
            "partition": np.full(n, partition, dtype=np.int32),
            "operator_ns": np.zeros(n, dtype=np.int64),
        }
    )
