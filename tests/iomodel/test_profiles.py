"""Disk profiles: the seed's EBS profile transcribed, profiles on disk, fio's buckets."""

from __future__ import annotations

import math

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.profiles import (
    DiskProfile,
    LatencyDistribution,
    buckets_from_samples,
    check_block_size,
    list_disk_profiles,
    load_disk_profile,
    parse_size,
    save_profile,
)

# Seed 000, as printed: clat avg (read, write), lat avg (read, write).
SEED_READ_CLAT, SEED_WRITE_CLAT = 6160.87, 7706.99
SEED_READ_LAT, SEED_WRITE_LAT = 6161.17, 7707.56


def toy(read_us: float = 1000.0, write_us: float = 3000.0, **kwargs) -> DiskProfile:
    return DiskProfile(
        "toy", 8192, LatencyDistribution(read_us, **kwargs), LatencyDistribution(write_us, **kwargs)
    )


def test_ebs_article_is_the_seed_transcribed():
    p = load_disk_profile("ebs-article")
    assert p.block_size == 8 * 1024
    assert (p.read.mean_us, p.read.clat_mean_us, p.read.iops) == (6161.17, 6160.87, 1297)
    assert (p.write.mean_us, p.write.clat_mean_us, p.write.iops) == (7707.56, 7706.99, 1037)
    read = {upper: pct for upper, pct in p.read.buckets}
    write = {upper: pct for upper, pct in p.write.buckets}
    # "lat (usec) : 250=0.02%, 500=0.73%, 750=5.60%, 1000=10.17%" ... "lat (msec) : 2000=0.02%"
    assert read[250.0] == 0.02 and read[1000.0] == 10.17 and read[2000.0 * 1000] == 0.02
    assert read[4000.0] == 31.48 and len(read) == 15 and math.inf not in read
    # "4=87.85%" ... "2000=0.06%, >=2000=0.01%"
    assert write[4000.0] == 87.85 and write[500.0] == 0.01 and write[math.inf] == 0.01
    assert len(write) == 15
    assert sum(read.values()) == pytest.approx(100.02) and sum(write.values()) == pytest.approx(
        99.98
    )


def test_profile_round_trip_and_lookup(tmp_path):
    p = load_disk_profile("ebs-article")
    out = save_profile(p, tmp_path / "copy.json")
    assert load_disk_profile(out) == p
    assert load_disk_profile(str(out)) == p
    assert "ebs-article" in list_disk_profiles()
    with pytest.raises(SkewlabInputError, match="known: .*ebs-article"):
        load_disk_profile("no-such-profile")
    (tmp_path / "bad.json").write_text('{"name": "x", "block_size": 8192, "read": {}}')
    with pytest.raises(SkewlabInputError, match="has no write"):
        load_disk_profile(tmp_path / "bad.json")


def test_fio_buckets_are_lower_inclusive():
    # [500, 750) -> "750", 750 -> "1000", 2500 us -> [2, 4) ms -> "4" (msec)
    assert buckets_from_samples([600.0, 750.0, 2500.0, 3e6]) == (
        (750.0, 25.0),
        (1000.0, 25.0),
        (4000.0, 25.0),
        (math.inf, 25.0),
    )


def test_block_size_is_checked_not_scaled():
    p = load_disk_profile("ebs-article")
    assert parse_size("8k") == 8192 and check_block_size(p, "8k") == 8192
    assert check_block_size(p, None) == 8192
    with pytest.raises(SkewlabInputError, match="measured at 8192-byte blocks"):
        check_block_size(p, 16384)
    with pytest.raises(SkewlabInputError):
        parse_size("eight")


def test_the_names_before_disk_profile_still_work():
    import skewlab.iomodel as iomodel
    from skewlab.iomodel import disk_probe, profiles

    assert profiles.LatencyProfile is DiskProfile and iomodel.LatencyProfile is DiskProfile
    assert profiles.load_profile("ebs-article") == load_disk_profile("ebs-article")
    assert profiles.list_profiles() == list_disk_profiles()
    assert disk_probe.local_profile is disk_probe.local_disk_profile
    assert {"DiskProfile", "load_disk_profile", "list_disk_profiles"} <= set(iomodel.__all__)


def test_an_unknown_disk_profile_is_named_as_one():
    with pytest.raises(SkewlabInputError, match="^unknown disk profile 'floppy'; known: "):
        load_disk_profile("floppy")
