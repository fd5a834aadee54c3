"""StatsState: the semigroup laws, the oracle against plain Python, digests, Spark == Python."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import (
    reference_aggregate,
    spark_reference_aggregate,
    states_from_register_maxima,
)
from skewlab.aggregates.stats_state import StatsSerializer, StatsState, TweetStats, plus, to_stats
from skewlab.inputs.views import ViewSpec, generate_views

P = 8  # small sketches keep the property tests quick

VIEW = st.tuples(
    st.text(min_size=1, max_size=6), st.sampled_from(["u1", "u2", "u3", "u4"]), st.just("t")
)
STATES = st.lists(VIEW, max_size=8).map(
    lambda vs: reference_aggregate(vs, P).get("t", StatsState.empty("t", P))
)


@settings(max_examples=60, deadline=None)
@given(STATES, STATES, STATES)
def test_plus_is_associative_commutative_and_idempotent(a, b, c):
    assert plus(plus(a, b), c) == plus(a, plus(b, c))
    assert plus(a, b) == plus(b, a)
    assert plus(a, a) == a
    before = a.copy()
    plus(a, b)
    assert a == before  # plus does not mutate its arguments


@settings(max_examples=40, deadline=None)
@given(st.lists(VIEW, max_size=30))
def test_folding_single_views_equals_the_oracle(views):
    folded = None
    for view_id, user_id, tweet_id in views:
        one = StatsState.from_view(view_id, user_id, tweet_id, P)
        folded = one if folded is None else plus(folded, one)
    oracle = reference_aggregate(views, P)
    assert (folded is None) == (oracle == {})
    if folded is not None:
        assert folded == oracle["t"]


def _plain_python_registers(views, p):
    """Registers per tweet written out by hand from the HLL definition (no datasketch)."""
    m = 1 << p
    out = {}
    for view_id, user_id, tweet_id in views:
        regs = out.setdefault(tweet_id, [[0] * m, [0] * m])
        for sketch, value in ((0, view_id), (1, user_id)):
            h = xxhash.xxh64_intdigest(value.encode(), seed=42)
            idx, rank = h & (m - 1), (64 - p) - (h >> p).bit_length() + 1
            regs[sketch][idx] = max(regs[sketch][idx], rank)
    return out


def test_oracle_equals_plain_python_and_counts_are_close():
    rng = np.random.default_rng(7)
    views = [
        (f"view-{i}", f"user-{rng.integers(0, 3000)}", f"tweet-{rng.integers(0, 5)}")
        for i in range(20_000)
    ]
    oracle = reference_aggregate(views)
    plain = _plain_python_registers(views, oracle["tweet-0"].precision)
    assert sorted(oracle) == sorted(plain)
    for tweet_id, (views_reg, viewers_reg) in plain.items():
        assert oracle[tweet_id].views.reg.tolist() == views_reg
        assert oracle[tweet_id].viewers.reg.tolist() == viewers_reg
    # estimates within 4 standard errors (1.04/sqrt(1024) ~ 3.3%) of the exact counts
    for stats in to_stats(oracle):
        mine = [v for v in views if v[2] == stats.tweet_id]
        assert stats.view_count == pytest.approx(len(mine), rel=0.13)
        assert stats.viewer_count == pytest.approx(len({v[1] for v in mine}), rel=0.13)


def test_null_tweets_are_skipped_by_the_oracle():
    assert reference_aggregate([("v", "u", None)]) == {}


def test_digest_is_stable_and_sensitive():
    views = [("v1", "u1", "t1"), ("v2", "u2", "t2"), ("v3", "u1", "t1")]
    a = reference_aggregate(views)
    b = reference_aggregate(list(reversed(views)))
    assert result_digest(a) == result_digest(b)
    assert result_digest(a) == result_digest(dict(reversed(list(a.items()))))
    changed = {k: v.copy() for k, v in a.items()}
    changed["t2"].viewers.reg[0] += 1
    assert result_digest(changed) != result_digest(a)
    renamed = {"t3" if k == "t2" else k: v for k, v in a.items()}
    assert result_digest(renamed) != result_digest(a)
    assert result_digest({}) == result_digest({})


def test_serialisation_round_trip():
    state = reference_aggregate([("v1", "u1", "tweet-é"), ("v2", "u9", "tweet-é")])["tweet-é"]
    data = StatsSerializer.dumps(state)
    assert len(data) == 3 + len("tweet-é".encode()) + 2 * 1024
    assert StatsSerializer.loads(data) == state


def test_to_stats_and_merge_guard():
    state = StatsState.from_view("v", "u", "t")
    assert state.to_stats() == TweetStats("t", 1, 1)
    with pytest.raises(ValueError, match="cannot merge"):
        state.merge(StatsState.from_view("v", "u", "other"))


def test_states_from_register_maxima_keeps_the_max():
    got = states_from_register_maxima(
        np.array(["a", "a", "b"]), np.array([0, 0, 1]), np.array([3, 3, 0]), np.array([2, 5, 7]), 4
    )
    assert got["a"].views.reg[3] == 5 and got["a"].viewers.reg.sum() == 0
    assert got["b"].viewers.reg[0] == 7


@pytest.mark.parametrize("distribution", ["uniform", "zipf"])
def test_spark_sql_reference_equals_pure_python_reference(spark, distribution):
    spec = ViewSpec(30_000, 2_000, 50, distribution, 1.1, seed=11)
    df = generate_views(spark, spec)
    from_spark = spark_reference_aggregate(df)
    rows = df.select("view_id", "user_id", "tweet_id").toPandas().itertuples(index=False)
    from_python = reference_aggregate(rows)
    assert result_digest(from_spark) == result_digest(from_python)
    assert to_stats(from_spark) == to_stats(from_python)


def test_spark_reference_skips_null_tweets(spark):
    df = spark.createDataFrame(
        [("v1", "u1", "t1"), ("v2", "u2", None)], "view_id string, user_id string, tweet_id string"
    )
    assert sorted(spark_reference_aggregate(df)) == ["t1"]
