"""JobConfig: the job's settings, validated before Spark works, resolved per machine."""

from __future__ import annotations

import pytest

from skewlab.engine.config import DEFAULT_DISK_PROFILE, DEFAULT_LATENCY_PROFILE, JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.state.key_groups import KeyGroupRange


def test_resolved_fills_parallelism_and_flinks_default_max_parallelism():
    job = JobConfig().resolved(default_parallelism=6)
    assert (job.parallelism, job.max_parallelism) == (6, 128)
    assert JobConfig(parallelism=200).resolved(2).max_parallelism == 512  # pow2(300)
    assert JobConfig(parallelism=3, max_parallelism=5).resolved(2).max_parallelism == 5


def test_key_group_ranges_of_the_subtasks_cover_every_key_group_once():
    job = JobConfig(parallelism=3, max_parallelism=128)
    ranges = [job.key_group_range(i) for i in range(3)]
    assert ranges == [KeyGroupRange(0, 42), KeyGroupRange(43, 85), KeyGroupRange(86, 127)]
    with pytest.raises(ValueError, match="resolved"):
        JobConfig().key_group_range(0)


def test_parameters_record_the_source_rate_only_when_paced():
    assert "source_rate" not in JobConfig(parallelism=2).parameters()
    assert JobConfig(source_rate=500.0).parameters()["source_rate"] == 500.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"parallelism": 0}, "parallelism (--parallelism) must be a whole number >= 1, got 0"),
        ({"parallelism": 2.5}, "got 2.5"),
        ({"max_parallelism": 0}, "max_parallelism (--max-parallelism) must be a whole number"),
        ({"parallelism": 8, "max_parallelism": 4}, "must not exceed max_parallelism (4)"),
        ({"source_rate": -1}, "source_rate (--source-rate) must be a number > 0 records/s"),
        ({"source_rate": float("inf")}, "source_rate"),
        ({"disk_profile": "floppy"}, "unknown disk profile 'floppy'; known: ebs-article"),
    ],
)
def test_bad_settings_are_one_line_errors(kwargs, message):
    with pytest.raises(SkewlabInputError) as info:
        JobConfig(**kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_disk_profile_defaults_to_the_seeds_ebs_volume():
    assert JobConfig().disk_profile == DEFAULT_DISK_PROFILE == "ebs-article"
    assert JobConfig(disk_profile=None).disk_profile is None


def test_the_old_latency_profile_keyword_still_works_with_a_deprecation_warning():
    with pytest.warns(
        DeprecationWarning, match=r"latency_profile=\.\.\.\) is deprecated, use disk_prof"
    ):
        job = JobConfig(parallelism=2, latency_profile=None)
    assert job == JobConfig(parallelism=2, disk_profile=None)
    assert job.latency_profile is None and JobConfig().latency_profile == "ebs-article"
    assert DEFAULT_LATENCY_PROFILE == DEFAULT_DISK_PROFILE
    with pytest.warns(DeprecationWarning), pytest.raises(SkewlabInputError, match="'floppy'"):
        JobConfig(latency_profile="floppy")
    with pytest.raises(TypeError, match="disk_profile only"):
        JobConfig(latency_profile=None, disk_profile=None)
    with pytest.raises(AttributeError):
        job.latency_profile = "ebs-article"  # read-only, like every field of a frozen config
