"""Notebook 09's live sections as ``skewlab bench state_and_follow``: at tiny every sample record
reaches the checkpoint's state and the follow's windows; at quick the shipped reference's
sections, read back, hold together (state beside traffic at one partition count, every record
in a window) and say whose they are."""

from __future__ import annotations

import json

import pytest

from skewlab.doctor.state_and_follow import (
    PARTS,
    THRESHOLD,
    FollowSection,
    StateSection,
    run_experiment,
)
from skewlab.experiments.chapters import size_settings
from skewlab.experiments.references import load_reference


def _check_sections(state: StateSection, followed: FollowSection, records: int) -> None:
    """What holds of any run's sections: the store's partitions add up, the traffic is every
    record over the state's partition count, and the windows read every record once."""
    store = state.store
    assert sum(p.rows for p in store.partitions) == store.rows > 0
    assert sum(p.bytes for p in store.partitions) == store.bytes
    assert state.traffic is not None and state.traffic.partitions == store.num_partitions
    assert sum(state.traffic.loads) == records
    assert len(followed.windows) == PARTS and followed.threshold == THRESHOLD
    assert sum(w.records for w in followed.windows) == followed.windows[-1].run_records == records


def test_a_quick_size_shows_the_shipped_reference_read_back_as_sections(capsys):
    from skewlab.doctor.viz import describe_follow, describe_state, follow_shown, state_shown

    assert not size_settings("doctor_live_sections", "quick")["run"]
    reference = load_reference("state_and_follow")
    # no Spark, no records: the quick size never runs the sections
    state = state_shown("quick", None, None, "tweet_id", None)
    followed = follow_shown("quick", None, None, "tweet_id")
    said = capsys.readouterr().out
    assert said.count("the reference's ran over the sample records") == 2
    assert said.count("here are the shipped reference's, measured") == 2
    assert state.whose == followed.whose and state.whose.startswith("the reference (full, measured")
    _check_sections(state, followed, reference["summary"]["records"])
    assert describe_state(state).startswith("The reference's checkpoint (full, measured")
    assert describe_follow(followed).startswith(
        f"The reference's follow (full, measured {reference['provenance']['measured_at'][:10]}"
    )


@pytest.mark.long
def test_the_benchmark_at_tiny_counts_every_sample_record_into_the_state_and_the_windows(spark):
    from skewlab.doctor.diagnosis import read_records, sample_records
    from skewlab.doctor.viz import format_state_and_follow_summary

    result = run_experiment("tiny", spark=spark)
    records = read_records(spark, sample_records(spark, "tiny")).toPandas()
    summary = json.loads(json.dumps(result.summary))  # as a reference file keeps it
    state, followed = StateSection.from_json(summary), FollowSection.from_json(summary)
    assert summary["records"] == len(records) == size_settings("skew_doctor", "tiny")["n_views"]
    _check_sections(state, followed, len(records))
    # a count keeps one state row per key, whatever the key's traffic
    assert state.store.rows == records["tweet_id"].nunique()
    counts = records["tweet_id"].value_counts()
    for hot in followed.windows[-1].run_hot:  # the run's bounds hold for the true counts
        assert hot.lower <= counts[hot.key] <= hot.upper
    text = " ".join(format_state_and_follow_summary(result).split())
    assert text.startswith("this run (tiny, this machine): notebook 09's demonstrations")
    assert f"This run's checkpoint (tiny, this machine): {state.store.rows:,} state rows" in text
    assert f"This run's follow (tiny, this machine): 3 windows, {len(records):,} records" in text
