"""The salting lesson on real Spark runs: the double count, the HLL union, and order."""

from __future__ import annotations

from collections import Counter

import pytest
import xxhash

from skewlab.errors import SkewlabInputError
from skewlab.experiments.claims import claim
from skewlab.experiments.salting import (
    lifecycle_order,
    lifecycle_table,
    salted_counter,
    salted_hll,
)
from skewlab.inputs.lifecycle import ACTIVE, CREATED, DELETED, apply_event, lifecycle_events
from skewlab.inputs.views import ViewSpec, generate_views

SALTS = 4


@pytest.fixture(scope="module")
def views(spark):
    df = generate_views(spark, ViewSpec(2_000, 500, 5, seed=3)).cache()
    df.count()
    yield df
    df.unpersist()


@pytest.fixture(scope="module")
def events(spark):
    df = lifecycle_events(spark, 1_000).cache()
    df.count()
    yield df
    df.unpersist()


def _salt(view_id: str, buckets: int) -> int:
    """Spark's ``pmod(xxhash64(view_id), buckets)``, computed here in Python."""
    return xxhash.xxh64_intdigest(view_id.encode(), seed=42) % buckets


def test_summing_running_partials_over_counts_by_the_closed_form(views):
    result = salted_counter(views, salt_buckets=SALTS, parallelism=2)
    rows = views.select("view_id", "tweet_id").collect()
    sub_keys = Counter((r.tweet_id, _salt(r.view_id, SALTS)) for r in rows)
    # a sub-key with n records emits 1, 2, ..., n: the seed's sum adds up n(n+1)/2
    expected = Counter()
    for (tweet, _), n in sub_keys.items():
        expected[tweet] += n * (n + 1) // 2
    exact = Counter(r.tweet_id for r in rows)

    table = result.table.set_index("tweet_id")
    assert set(table.index) == set(exact)
    for tweet, n in exact.items():
        assert table.loc[tweet, "views"] == n
        assert table.loc[tweet, "salted_sum"] == expected[tweet]
        assert table.loc[tweet, "salted_sum"] > n  # the wrong number really is wrong
        assert table.loc[tweet, "fixed_sum"] == n
    assert result.run.records_processed == len(rows)
    # every record paid a state access in each of the two stages
    assert result.run.state_reads == 2 * len(rows)


def test_the_hll_union_survives_the_same_running_partials(views):
    result = salted_hll(views, salt_buckets=SALTS, parallelism=2)
    assert result.digest == result.reference_digest
    assert result.table["registers_match"].all()
    assert (result.table["salted_estimate"] == result.table["reference_estimate"]).all()
    assert result.matches


def test_lifecycle_events_put_created_before_deleted(events):
    rows = events.orderBy("seq").collect()
    assert len(rows) == 2_000
    first: dict[str, tuple[int, str]] = {}
    for r in rows:
        if r.user_id in first:
            assert (first[r.user_id][1], r.event) == (CREATED, DELETED)
            assert first[r.user_id][0] < r.seq
        else:
            first[r.user_id] = (r.seq, r.event)
    assert len(first) == 1_000
    assert apply_event(apply_event(None, DELETED), CREATED) == ACTIVE


def test_salting_breaks_per_key_order_and_the_buffer_keeps_it(events):
    salted = lifecycle_order(events, "salted", salt_buckets=SALTS, parallelism=2)
    buffered = lifecycle_order(events, "buffered", parallelism=2, max_count=100)

    assert salted.users == buffered.users == 1_000
    assert salted.violations > 0
    # each user has two events: a swapped pair is one violation and one resurrected account
    assert salted.resurrected == salted.violations
    assert sum(s == ACTIVE for s in salted.statuses.values()) == salted.resurrected

    assert buffered.violations == 0
    assert buffered.resurrected == 0
    assert set(buffered.statuses.values()) == {DELETED}
    assert buffered.run.buffer_flushes >= 2_000 // 100 // 2


def test_one_subtask_keeps_order_even_when_salted(events):
    # all sub-keys on one subtask: one path, in arrival order -- the swap needs parallelism
    assert lifecycle_order(events, "salted", parallelism=1).violations == 0


def test_lifecycle_refuses_bad_input(spark, events):
    with pytest.raises(SkewlabInputError, match="unknown strategy 'naive'"):
        lifecycle_order(events, "naive")
    with pytest.raises(SkewlabInputError, match="salt_buckets"):
        lifecycle_order(events, "salted", salt_buckets=0)
    with pytest.raises(SkewlabInputError, match="n_users"):
        lifecycle_events(spark, 0)


def test_the_chapters_claims_read_these_runs(views, events):
    # the double count and the order lost follow from the mechanism: they hold at any size
    counter = salted_counter(views, salt_buckets=SALTS, parallelism=2)
    double = claim("salting", "running_partials_double_count").evaluate(counter)
    assert double.held and double.figures["worst"] == counter.table["over_count"].max()
    order = lifecycle_table(events, salt_buckets=SALTS, parallelism=2)
    lost = claim("salting", "salting_loses_order").evaluate(order)
    assert lost.held, lost.text
    in_order = order.assign(order_violations=0)  # a salted run that kept every user's order
    assert not claim("salting", "salting_loses_order").evaluate(in_order).held
