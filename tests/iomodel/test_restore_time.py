"""The modelled restore time: a disk from its disk profile, an object store from its
request latency and bandwidth; a job's time is its slowest subtask's."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.iomodel.restore_time import (
    OBJECT_STORE_BANDWIDTH_MB_S,
    OBJECT_STORE_LATENCY_MS,
    StorageReadModel,
    job_restore_seconds,
    object_store_model,
)

EBS = load_disk_profile("ebs-article")


@given(st.lists(st.integers(0, 10**7), max_size=20))
def test_a_disk_request_is_its_blocks_read_one_after_the_other(sizes):
    model = StorageReadModel.from_profile(EBS)
    expected = sum(max(1, math.ceil(b / 8192)) for b in sizes) * 6161.17e-6
    assert model.seconds(sizes) == pytest.approx(expected)


@given(st.lists(st.integers(0, 10**9), max_size=20))
def test_an_object_store_request_is_a_latency_then_its_bytes_at_the_bandwidth(sizes):
    model = object_store_model()
    expected = len(sizes) * OBJECT_STORE_LATENCY_MS / 1e3 + sum(sizes) / (
        OBJECT_STORE_BANDWIDTH_MB_S * 1e6
    )
    assert model.seconds(sizes) == pytest.approx(expected)


def test_many_small_requests_cost_more_than_one_read_of_the_same_bytes():
    """The seed's point against a per-key index, priced: one request per key pays one latency
    per key."""
    for model in (StorageReadModel.from_profile(EBS), object_store_model()):
        assert model.seconds([200] * 1000) > 30 * model.seconds([200_000])


def test_a_job_restores_as_slowly_as_its_slowest_subtask():
    model = object_store_model(10, 1)
    assert job_restore_seconds({0: [1_000_000], 1: [10, 10]}, model) == pytest.approx(1.01)
    assert job_restore_seconds([], model) == 0.0


def test_bad_parameters_are_refused():
    with pytest.raises(SkewlabInputError, match="bandwidth_mb_per_s must be a number > 0"):
        object_store_model(10, 0)
    with pytest.raises(SkewlabInputError, match="request_latency_ms"):
        object_store_model(-1, 10)
