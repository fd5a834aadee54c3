"""The transformWithState processors' fold, through pyspark's own TwsTester (one key at a time;
the end-to-end runs on the RocksDB state store are in tests/strategies/test_streaming.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pyspark.sql.streaming.tws_tester import TwsTester

from skewlab.aggregates.hll import hashes_of, register_index_and_rank
from skewlab.aggregates.reference import reference_aggregate
from skewlab.operators.streaming_stats import (
    OUTPUT_COLUMNS,
    STATE_NAME,
    PerBatchStats,
    PerRecordStats,
)


def _rows(view_ids, user_ids, precision=10):
    v_idx, v_rank = register_index_and_rank(hashes_of(view_ids), precision)
    u_idx, u_rank = register_index_and_rank(hashes_of(user_ids), precision)
    columns = {"v_idx": v_idx.astype(np.int32), "v_rank": v_rank,
               "u_idx": u_idx.astype(np.int32), "u_rank": u_rank}  # fmt: skip
    return pd.DataFrame({"tweet_id": "t", **columns})


VIEWS = [f"view-{i}" for i in range(40)]
USERS = [f"user-{i % 7}" for i in range(40)]


def _expected(n):
    return reference_aggregate([(v, u, "t") for v, u in zip(VIEWS[:n], USERS[:n], strict=True)])[
        "t"
    ]


@pytest.mark.parametrize("processor", [PerRecordStats, PerBatchStats])
def test_two_micro_batches_end_with_the_reference_registers(processor):
    tester = TwsTester(processor(precision=10), outputMode="Update")
    first = tester.testInPandas("t", _rows(VIEWS[:25], USERS[:25]))
    second = tester.testInPandas("t", _rows(VIEWS[25:], USERS[25:]))
    expected = _expected(40)
    views, viewers = tester.peekValueState(STATE_NAME, "t")
    assert np.frombuffer(views, np.int8).tolist() == expected.views_reg.tolist()
    assert np.frombuffer(viewers, np.int8).tolist() == expected.viewers_reg.tolist()
    last = second.iloc[-1]
    assert np.frombuffer(last["views"], np.int8).tolist() == expected.views_reg.tolist()
    assert (last["view_count"], last["viewer_count"]) == (40, 7)
    for out, n in ((first, 25), (second, 15)):
        assert tuple(out.columns) == OUTPUT_COLUMNS
        assert out["records"].sum() == n and out["rejected"].sum() == 0
        assert out["operator_ns"].iloc[-1] > 0 and (out["operator_ns"].iloc[:-1] == 0).all()
        assert out["views"].iloc[:-1].isna().all() and out["views"].iloc[-1] is not None
    if processor is PerRecordStats:  # one running TweetStats per row
        assert len(first) == 25 and len(second) == 15
        running = pd.concat([first, second])["view_count"].tolist()
        assert running == sorted(running) and running[0] == 1
    else:  # one per key and micro-batch
        assert len(first) == len(second) == 1


def test_a_null_key_is_counted_as_rejected_and_leaves_no_state():
    tester = TwsTester(PerRecordStats(precision=10), outputMode="Update")
    out = tester.testInPandas(None, _rows(VIEWS[:3], USERS[:3]))
    assert out["rejected"].tolist() == [3] and out["records"].tolist() == [0]
    assert tester.peekValueState(STATE_NAME, None) is None
