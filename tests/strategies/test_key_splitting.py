"""Key splitting (PKG, D-Choices, W-Choices) against the oracle, and what its senders decide."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.state.key_groups import assign_key_to_parallel_operator
from skewlab.strategies import run_strategy
from skewlab.strategies.key_splitting import (
    SPLIT_KEY,
    DChoices,
    Pkg,
    Sender,
    WChoices,
    dchoices_d,
    with_split_keys,
)


def _zipf_keys(n: int, keys: int, s: float, seed: int = 5) -> list[str]:
    rng = np.random.default_rng(seed)
    weights = np.arange(1, keys + 1, dtype=float) ** -s
    drawn = rng.choice(keys, size=n, p=weights / weights.sum())
    return [f"tweet-{i}" for i in drawn]


@pytest.mark.parametrize("scheme", ["pkg", "dchoices", "wchoices"])
def test_every_candidate_is_a_sub_key_flink_routes_to_its_subtask(scheme):
    sender = Sender(scheme, parallelism=4)
    for key in ("tweet-0", "tweet-17", "user-ä", "x"):
        candidates = sender.candidates(key)
        assert candidates[0] == (assign_key_to_parallel_operator(key, 128, 4), key)
        assert len({s for s, _ in candidates}) == len(candidates)  # distinct subtasks
        assert len(candidates) == (2 if scheme == "pkg" else 4)
        for subtask, sub_key in candidates:
            assert assign_key_to_parallel_operator(sub_key, 128, 4) == subtask


def test_pkg_balances_a_hot_key_that_hashing_cannot():
    keys = _zipf_keys(20_000, 1_000, 1.5)
    hashed = Counter(assign_key_to_parallel_operator(k, 128, 4) for k in keys)
    sender = Sender("pkg", parallelism=4)
    sender.route(keys)
    assert sender.loads.sum() == len(keys)
    naive_imbalance = max(hashed.values()) / (len(keys) / 4)
    pkg_imbalance = sender.loads.max() / sender.loads.mean()
    assert pkg_imbalance < naive_imbalance
    # the hottest key (Zipf 1.5: ~38 % of the records) is more than one subtask's share: two
    # choices cannot balance it, all four can
    w = Sender("wchoices", parallelism=4)
    w.route(keys)
    assert w.loads.max() / w.loads.mean() < pkg_imbalance
    assert w.loads.max() / w.loads.mean() < 1.01


def test_a_cold_key_on_level_candidates_stays_on_its_own_subtask():
    sender = Sender("pkg", parallelism=4)
    assert sender.route(["tweet-3"]) == ["tweet-3"]
    assert sender.loads[assign_key_to_parallel_operator("tweet-3", 128, 4)] == 1


def test_null_keys_pass_through_unrouted():
    sender = Sender("dchoices", parallelism=2)
    assert sender.route([None, "a", None]) == [None, "a", None]
    assert sender.records == 1 and sender.loads.sum() == 1


def test_dchoices_d_grows_with_the_hottest_key_and_stays_within_the_workers():
    assert dchoices_d(0.02, 0.05, 2, 16) < dchoices_d(0.2, 0.3, 2, 16) <= 16
    assert dchoices_d(0.9, 0.95, 1, 4) == 4
    assert dchoices_d(0.3, 0.3, 1, 2) == 2


def test_a_given_d_limits_the_hot_keys_candidates():
    sender = Sender("dchoices", parallelism=8, choices=3, hot_threshold=0.1)
    out = sender.route(["hot"] * 300 + _zipf_keys(300, 2_000, 0.5))
    used = {s for s, k in sender.candidates("hot") if k in set(out[:300])}
    assert len(used) == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"choices": 1}, r"choices \(--choices\) must be a whole number >= 2"),
        ({"choices": 5}, "at most the parallelism 4"),
        ({"hot_threshold": 1.0}, "strictly between 0 and 1"),
        ({"hot_threshold": -0.1}, "strictly between 0 and 1"),
    ],
)
def test_bad_choices_and_thresholds_are_refused(options, message):
    with pytest.raises(SkewlabInputError, match=message):
        Sender("dchoices", parallelism=4, **options)


def test_an_unknown_scheme_is_refused():
    with pytest.raises(SkewlabInputError, match="use one of pkg, dchoices, wchoices"):
        Sender("shuffle", parallelism=2)


def test_choices_above_the_parallelism_fail_before_spark_works(spark):
    views = generate_views(spark, ViewSpec(100, 10, 5, seed=1))
    jobs_before = spark.sparkContext.statusTracker().getJobIdsForGroup()
    with pytest.raises(SkewlabInputError, match="at most the parallelism 2"):
        run_strategy(views, DChoices(choices=3), JobConfig(parallelism=2))
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs_before


@pytest.fixture(scope="module")
def zipf_views(spark):
    spec = ViewSpec(6_000, 700, 300, "zipf", 1.3, seed=21)
    views = generate_views(spark, spec, num_partitions=3).cache()
    yield views, result_digest(spark_reference_aggregate(views))
    views.unpersist()


@pytest.mark.parametrize(
    "params",
    [Pkg(), DChoices(), DChoices(choices=3, backend="heap"), WChoices(hot_threshold=0.05)],
    ids=lambda p: f"{p.name}-{p.parameters()}",
)
def test_every_scheme_equals_the_reference_and_accounts_for_every_record(zipf_views, params):
    views, reference = zipf_views
    result, states = run_strategy(views, params, JobConfig(parallelism=4, check_order=True))
    assert result.result_digest == reference
    assert result.records_in == result.records_processed == 6_000
    assert result.records_rejected == 0
    assert result.keys == len(states)
    partial_loads = [s["records"] for s in result.subtasks if s["stage"].endswith("partial")]
    assert sum(partial_loads) == 6_000
    assert result.order_violations is not None


def test_the_partial_stage_receives_exactly_what_the_senders_routed(spark, zipf_views):
    """Each sub-key lands on the subtask its sender chose: records per subtask of the run equal
    the senders' own load vectors, summed."""
    from pyspark.sql import functions as F

    views, _ = zipf_views
    job = JobConfig(parallelism=4)
    result, _ = run_strategy(views, Pkg(), job)
    routed = (
        with_split_keys(views.select("tweet_id"), "tweet_id", lambda: Sender("pkg", 4, 128))
        .groupBy(SPLIT_KEY)
        .agg(F.count(F.lit(1)).alias("n"))
        .toPandas()
    )
    by_subtask = Counter()
    for sub_key, n in zip(routed[SPLIT_KEY], routed["n"], strict=True):
        by_subtask[assign_key_to_parallel_operator(sub_key, 128, 4)] += int(n)
    partial = {
        s["subtask"]: s["records"] for s in result.subtasks if s["stage"].endswith("partial")
    }
    assert {k: v for k, v in by_subtask.items() if v} == {k: v for k, v in partial.items() if v}
