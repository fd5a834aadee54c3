"""The storage latency model: per-key ceilings, state-time distributions, modelled I/O.

Expected values are computed here by hand from the seed's printed figures and from made-up
profiles, not through the code under test.
"""

from __future__ import annotations

import json
import math

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.model import (
    AccessPattern,
    buffered_pattern,
    cached_pattern,
    ceiling_summary,
    modelled_io_seconds,
    modelled_records_per_second,
    naive_pattern,
    per_key_ceiling,
    sorted_pattern,
    state_time_distribution,
)
from skewlab.iomodel.profiles import DiskProfile, LatencyDistribution, load_disk_profile

# Seed 000, as printed: clat avg (read, write), lat avg (read, write).
SEED_READ_CLAT, SEED_WRITE_CLAT = 6160.87, 7706.99
SEED_READ_LAT, SEED_WRITE_LAT = 6161.17, 7707.56


def toy(read_us: float = 1000.0, write_us: float = 3000.0, **kwargs) -> DiskProfile:
    return DiskProfile(
        "toy", 8192, LatencyDistribution(read_us, **kwargs), LatencyDistribution(write_us, **kwargs)
    )


def test_naive_ceiling_for_the_article_is_about_72_records_per_key_per_second():
    by_hand_clat = 1e6 / (SEED_READ_CLAT + SEED_WRITE_CLAT)  # the brief's arithmetic: 72.109
    by_hand_lat = 1e6 / (SEED_READ_LAT + SEED_WRITE_LAT)  # what the model uses: 72.105
    ceiling = per_key_ceiling(load_disk_profile("ebs-article"), naive_pattern())
    assert ceiling == pytest.approx(by_hand_lat, rel=1e-12)
    assert ceiling == pytest.approx(by_hand_clat, rel=1e-4)
    assert abs(ceiling - 72.1) / 72.1 < 0.02
    # "That's a total of ~13.8ms on average" and "~70 records per key per second"
    per_record_ms = (SEED_READ_LAT + SEED_WRITE_LAT) / 1000
    assert 13.8 < per_record_ms < 13.9


def test_ceilings_by_hand_on_a_made_up_profile():
    p = toy(1000.0, 3000.0)  # R = 1 ms, W = 3 ms
    assert per_key_ceiling(p, naive_pattern()) == pytest.approx(1e6 / 4000)  # 250
    assert per_key_ceiling(p, buffered_pattern(10)) == pytest.approx(10 * 1e6 / 4000)  # 2500
    assert per_key_ceiling(p, buffered_pattern(1)) == pytest.approx(250)
    # write-back cache, hit ratio 0.75: a miss = 1 read + 1 write-back: 0.25 * 4 ms per record
    assert per_key_ceiling(p, cached_pattern(0.75)) == pytest.approx(1e6 / 1000)  # 1000
    assert per_key_ceiling(p, cached_pattern(0.0)) == pytest.approx(250)
    assert per_key_ceiling(p, cached_pattern(1.0)) == math.inf
    # sorted runs of 5 records: one 3 ms write per 5 records
    assert per_key_ceiling(p, sorted_pattern(5)) == pytest.approx(5 * 1e6 / 3000)


@pytest.mark.parametrize(
    "make, value",
    [(buffered_pattern, 0), (sorted_pattern, 0), (cached_pattern, 1.5), (cached_pattern, -0.1)],
)
def test_bad_model_parameters_are_refused(make, value):
    with pytest.raises(SkewlabInputError):
        make(value)


def test_percentiles_of_a_hand_made_bucket_distribution():
    # 20% in [100, 250) us, 60% in [250, 500), 20% in [500, 750): p50 = 250 + 250 * 30/60 = 375,
    # p99 = 500 + 250 * 19/20 = 737.5 (uniform inside a bucket).
    dist = LatencyDistribution(400.0, buckets=((250.0, 20.0), (500.0, 60.0), (750.0, 20.0)))
    assert dist.quantile_us(50) == pytest.approx(375.0)
    assert dist.quantile_us(99) == pytest.approx(737.5)
    profile = DiskProfile("hand", 8192, dist, LatencyDistribution(1.0, buckets=((2.0, 100),)))
    reads_only = AccessPattern("reads", reads_per_unit=1, writes_per_unit=0)
    sampled = state_time_distribution(profile, reads_only, samples=100_000, seed=1)
    assert sampled.p50_us == pytest.approx(375.0, rel=0.01)
    assert sampled.p99_us == pytest.approx(737.5, rel=0.01)
    assert sampled.source == "buckets"


def test_naive_state_time_sums_a_read_and_a_write():
    # read uniform in [500, 750) us, write uniform in [750, 1000): the sum is symmetric around
    # 625 + 875 = 1500 and lies in [1250, 1750).
    read = LatencyDistribution(625.0, buckets=((750.0, 100.0),))
    write = LatencyDistribution(875.0, buckets=((1000.0, 100.0),))
    d = state_time_distribution(DiskProfile("u", 8192, read, write), naive_pattern(), 50_000)
    assert d.mean_us == 1500.0
    assert d.p50_us == pytest.approx(1500.0, rel=0.01)
    assert 1250 <= d.p99_us < 1750 and d.p99_us > 1700
    buffered = state_time_distribution(
        DiskProfile("u", 8192, read, write), buffered_pattern(10), 50_000
    )
    assert buffered.p50_us == pytest.approx(150.0, rel=0.01)


def test_mean_only_profiles_have_no_percentiles():
    d = state_time_distribution(toy(), naive_pattern())
    assert d.mean_us == 4000.0 and d.p50_us is None and d.source == "mean only"


def test_state_time_sampling_is_reproducible():
    p = load_disk_profile("ebs-article")
    a = state_time_distribution(p, naive_pattern(), samples=10_000, seed=3)
    b = state_time_distribution(p, naive_pattern(), samples=10_000, seed=3)
    assert a == b


def test_ceiling_summary_keys():
    s = ceiling_summary(load_disk_profile("ebs-article"), samples=2000)
    for key in (
        "profile",
        "naive_records_per_key_per_second",
        "buffered_records_per_key_per_second",
        "cached_records_per_key_per_second",
        "sorted_records_per_key_per_second",
        "naive_state_time_p50_us",
        "naive_state_time_p99_us",
    ):
        assert key in s
    assert s["buffered_records_per_key_per_second"] == pytest.approx(
        100 * s["naive_records_per_key_per_second"]
    )
    assert ceiling_summary(toy(), hit_ratio=1.0)["cached_records_per_key_per_second"] is None


def test_modelled_io_seconds_by_hand():
    p = toy(1000.0, 3000.0)
    reads = {"a": 10, "b": 8, "c": 1}
    writes = {"a": 10, "b": 8, "c": 1, "d": 2}
    # a: 10 ms + 30 ms = 0.040 s; b: 0.032 s; c: 0.004 s; d (writes only): 0.006 s
    m = modelled_io_seconds(p, reads, writes)
    assert m.busiest_key == "a" and m.busiest_key_seconds == pytest.approx(0.040)
    assert m.seconds == pytest.approx(0.040) and m.bound == "key"
    assert m.io_seconds == pytest.approx(0.082)
    assert (m.keys, m.total_reads, m.total_writes) == (4, 19, 21)
    assert m.busiest_subtask is None and m.busiest_subtask_seconds is None

    # subtask 1 holds b, c and d: 0.032 + 0.004 + 0.006 = 0.042 s > key a's 0.040 s
    m = modelled_io_seconds(p, reads, writes, {"a": 0, "b": 1, "c": 1, "d": 1})
    assert m.subtask_seconds == pytest.approx({0: 0.040, 1: 0.042})
    assert m.busiest_subtask == 1 and m.seconds == pytest.approx(0.042)
    assert m.bound == "subtask"
    assert modelled_records_per_second(84, m) == pytest.approx(84 / 0.042)
    json.dumps(m.to_dict())


def test_modelled_io_seconds_of_an_empty_run_and_bad_input():
    m = modelled_io_seconds(toy(), {}, {})
    assert m.seconds == 0 and modelled_records_per_second(0, m) == math.inf
    with pytest.raises(SkewlabInputError, match="subtask for key 'b'"):
        modelled_io_seconds(toy(), {"a": 1, "b": 1}, {}, {"a": 0})
    with pytest.raises(SkewlabInputError, match=r"reads_per_key\['a'\] must be a whole number"):
        modelled_io_seconds(toy(), {"a": -1}, {})
    with pytest.raises(SkewlabInputError):
        modelled_records_per_second(-1, m)


def test_one_hot_key_reproduces_the_seed_ceiling():
    p = load_disk_profile("ebs-article")
    m = modelled_io_seconds(p, {"hot": 720}, {"hot": 720}, {"hot": 3})
    assert modelled_records_per_second(720, m) == pytest.approx(1e6 / (6161.17 + 7707.56))
