"""The cache policies on real runs: seed 003's count job on Spark with an LRU and a W-TinyLFU
cache, each run's hits checked against its access trace replayed by the pure-Python policy, its
counts against numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from skewlab.errors import SkewlabInputError
from skewlab.experiments.cache_policy import run_policies, subtask_traces, summarize_policies
from skewlab.state.key_groups import assign_key_to_parallel_operator


@pytest.fixture(scope="module")
def policy_rows(spark):
    return run_policies(
        spark,
        n=6_000,
        n_keys=3_000,
        sizes=(60,),
        runs=1,
        parallelism=1,
        checkpoint_interval_ms=1_000.0,
        skews=(None, 0.8),
    )


def test_every_run_hits_as_its_trace_replayed_and_counts_exactly(policy_rows):
    cached = [r for r in policy_rows if r["cache_size"]]
    assert {(r["trace"], r["side"]) for r in cached} == {
        (t, s) for t in ("flip325", "zipf08") for s in ("lru", "tinylfu")
    }
    assert all(r["hits_match_replay"] for r in cached)
    assert all(r["digest_matches_oracle"] for r in policy_rows)
    assert all(r["emissions_match"] for r in policy_rows)
    assert all(r["records"] == 6_000 and r["rejected"] == 0 for r in policy_rows)


def test_tinylfu_beats_lru_on_zipf_and_opt_bounds_both(policy_rows):
    s = summarize_policies(policy_rows)
    assert s["hit_ratio_lru_60_flip325"] == 0  # 60 entries, 500 keys between repeats
    assert s["hit_ratio_tinylfu_60_flip325"] > 0  # admission keeps some of them
    assert s["hit_ratio_lru_60_zipf08"] < s["hit_ratio_tinylfu_60_zipf08"]
    for trace in ("flip325", "zipf08"):
        opt = s[f"hit_ratio_opt_60_{trace}"]
        assert opt >= max(s[f"hit_ratio_lru_60_{trace}"], s[f"hit_ratio_tinylfu_60_{trace}"])
    assert s["speedup_60_tinylfu"] == s["speedup_60_tinylfu_flip325"] > 0
    # every timed ratio keeps its interval under its own key (one round here: its value alone)
    for key in ("tinylfu_over_lru_60_zipf08", "speedup_60_lru_zipf08", "speedup_60_tinylfu"):
        assert s["intervals"][key]["value"] == pytest.approx(s[key])
        assert s["intervals"][key]["runs"] == 1
    assert not any(k.startswith("hit_ratio") for k in s["intervals"])  # counts need none
    assert s["policy_traces_match_runs"] and s["policy_digests_match"]


def test_a_subtasks_trace_is_its_key_groups_keys_in_order():
    keys = np.array([5, 1, 5, 9, 2, 1, 7], dtype=np.int64)
    traces = subtask_traces(keys, 2, 128)
    assert sorted(k for t in traces for k in t) == sorted(keys.tolist())
    for index, trace in enumerate(traces):
        assert all(assign_key_to_parallel_operator(k, 128, 2) == index for k in trace)
        assert trace == [k for k in keys.tolist() if k in set(trace)]  # input order kept


def test_bad_sizes_are_refused_before_any_job(spark):
    with pytest.raises(SkewlabInputError, match="records and keys"):
        run_policies(
            spark, n=0, n_keys=10, sizes=(5,), runs=1, parallelism=1, checkpoint_interval_ms=1e3
        )
