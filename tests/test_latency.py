"""Storage latency model: profiles, fio import, the per-key ceiling, modelled I/O, the probe, CLI.

Expected values are computed here by hand from the seed's printed figures and from made-up
profiles, not through the code under test.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from skewlab.cli import main
from skewlab.disk_probe import probe_disk
from skewlab.errors import SkewlabInputError
from skewlab.latency import (
    LatencyDistribution,
    LatencyProfile,
    buckets_from_samples,
    check_block_size,
    list_profiles,
    load_profile,
    parse_size,
    profile_from_fio_json,
    save_profile,
)
from skewlab.latency_model import (
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

FIXTURE = Path(__file__).parent / "fixtures" / "fio-randrw-8k.json"

# Seed 000, as printed: clat avg (read, write), lat avg (read, write).
SEED_READ_CLAT, SEED_WRITE_CLAT = 6160.87, 7706.99
SEED_READ_LAT, SEED_WRITE_LAT = 6161.17, 7707.56


def toy(read_us: float = 1000.0, write_us: float = 3000.0, **kwargs) -> LatencyProfile:
    return LatencyProfile(
        "toy", 8192, LatencyDistribution(read_us, **kwargs), LatencyDistribution(write_us, **kwargs)
    )


def fixture_json() -> dict:
    return json.loads(FIXTURE.read_text())


# --------------------------------------------------------------------------- the seed's profile


def test_ebs_article_is_the_seed_transcribed():
    p = load_profile("ebs-article")
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


def test_naive_ceiling_for_the_article_is_about_72_records_per_key_per_second():
    by_hand_clat = 1e6 / (SEED_READ_CLAT + SEED_WRITE_CLAT)  # the brief's arithmetic: 72.109
    by_hand_lat = 1e6 / (SEED_READ_LAT + SEED_WRITE_LAT)  # what the model uses: 72.105
    ceiling = per_key_ceiling(load_profile("ebs-article"), naive_pattern())
    assert ceiling == pytest.approx(by_hand_lat, rel=1e-12)
    assert ceiling == pytest.approx(by_hand_clat, rel=1e-4)
    assert abs(ceiling - 72.1) / 72.1 < 0.02
    # "That's a total of ~13.8ms on average" and "~70 records per key per second"
    per_record_ms = (SEED_READ_LAT + SEED_WRITE_LAT) / 1000
    assert 13.8 < per_record_ms < 13.9


# --------------------------------------------------------------------------- the model


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
    profile = LatencyProfile("hand", 8192, dist, LatencyDistribution(1.0, buckets=((2.0, 100),)))
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
    d = state_time_distribution(LatencyProfile("u", 8192, read, write), naive_pattern(), 50_000)
    assert d.mean_us == 1500.0
    assert d.p50_us == pytest.approx(1500.0, rel=0.01)
    assert 1250 <= d.p99_us < 1750 and d.p99_us > 1700
    buffered = state_time_distribution(
        LatencyProfile("u", 8192, read, write), buffered_pattern(10), 50_000
    )
    assert buffered.p50_us == pytest.approx(150.0, rel=0.01)


def test_mean_only_profiles_have_no_percentiles():
    d = state_time_distribution(toy(), naive_pattern())
    assert d.mean_us == 4000.0 and d.p50_us is None and d.source == "mean only"


def test_state_time_sampling_is_reproducible():
    p = load_profile("ebs-article")
    a = state_time_distribution(p, naive_pattern(), samples=10_000, seed=3)
    b = state_time_distribution(p, naive_pattern(), samples=10_000, seed=3)
    assert a == b


def test_ceiling_summary_keys():
    s = ceiling_summary(load_profile("ebs-article"), samples=2000)
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


# --------------------------------------------------------------------------- real runs


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
    with pytest.raises(SkewlabInputError, match="count"):
        modelled_io_seconds(toy(), {"a": -1}, {})
    with pytest.raises(SkewlabInputError):
        modelled_records_per_second(-1, m)


def test_one_hot_key_reproduces_the_seed_ceiling():
    p = load_profile("ebs-article")
    m = modelled_io_seconds(p, {"hot": 720}, {"hot": 720}, {"hot": 3})
    assert modelled_records_per_second(720, m) == pytest.approx(1e6 / (6161.17 + 7707.56))


# --------------------------------------------------------------------------- profiles on disk


def test_profile_round_trip_and_lookup(tmp_path):
    p = load_profile("ebs-article")
    out = save_profile(p, tmp_path / "copy.json")
    assert load_profile(out) == p
    assert load_profile(str(out)) == p
    assert "ebs-article" in list_profiles()
    with pytest.raises(SkewlabInputError, match="known: .*ebs-article"):
        load_profile("no-such-profile")
    (tmp_path / "bad.json").write_text('{"name": "x", "block_size": 8192, "read": {}}')
    with pytest.raises(SkewlabInputError, match="has no write"):
        load_profile(tmp_path / "bad.json")


def test_fio_buckets_are_lower_inclusive():
    # [500, 750) -> "750", 750 -> "1000", 2500 us -> [2, 4) ms -> "4" (msec)
    assert buckets_from_samples([600.0, 750.0, 2500.0, 3e6]) == (
        (750.0, 25.0),
        (1000.0, 25.0),
        (4000.0, 25.0),
        (math.inf, 25.0),
    )


def test_block_size_is_checked_not_scaled():
    p = load_profile("ebs-article")
    assert parse_size("8k") == 8192 and check_block_size(p, "8k") == 8192
    assert check_block_size(p, None) == 8192
    with pytest.raises(SkewlabInputError, match="measured at 8192-byte blocks"):
        check_block_size(p, 16384)
    with pytest.raises(SkewlabInputError):
        parse_size("eight")


# --------------------------------------------------------------------------- fio import


def test_fio_import_reproduces_the_fixture_means():
    raw = fixture_json()
    # Read the numbers straight from fio's JSON: the job that read, the job that wrote.
    (reader,) = [j for j in raw["jobs"] if j["read"]["total_ios"] > 0]
    (writer,) = [j for j in raw["jobs"] if j["write"]["total_ios"] > 0]
    p = profile_from_fio_json(FIXTURE)
    assert p.name == "fio-randrw-8k" and p.block_size == 8192
    assert p.read.mean_us == pytest.approx(reader["read"]["lat_ns"]["mean"] / 1000, rel=1e-12)
    assert p.write.mean_us == pytest.approx(writer["write"]["lat_ns"]["mean"] / 1000, rel=1e-12)
    assert p.read.clat_mean_us == pytest.approx(reader["read"]["clat_ns"]["mean"] / 1000)
    assert p.read.iops == pytest.approx(reader["read"]["iops"])
    assert p.write.iops == pytest.approx(writer["write"]["iops"])
    assert p.read.samples == reader["read"]["total_ios"]
    # each job did one direction only, so its latency histogram is that direction's
    assert dict(p.read.buckets)[50.0] == pytest.approx(reader["latency_us"]["50"])
    assert p.read.distribution_source == "percentiles" and p.read.buckets
    assert p.read.quantile_us(50) > 0
    assert per_key_ceiling(p, naive_pattern()) == pytest.approx(
        1e9 / (reader["read"]["lat_ns"]["mean"] + writer["write"]["lat_ns"]["mean"])
    )


def test_fio_import_of_a_mixed_job_uses_percentiles():
    raw = fixture_json()
    mixed = copy.deepcopy(raw)
    job = mixed["jobs"][0]
    job["write"] = copy.deepcopy(raw["jobs"][1]["write"])
    del mixed["jobs"][1]
    p = profile_from_fio_json(mixed, name="mixed")
    assert p.name == "mixed" and p.read.buckets == () and p.write.buckets == ()
    assert p.read.distribution_source == "percentiles"
    expected = raw["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"] / 1000
    assert p.read.quantile_us(50) == pytest.approx(expected)


def test_fio_import_of_separate_read_and_write_results():
    raw = fixture_json()
    reads, writes = copy.deepcopy(raw), copy.deepcopy(raw)
    del reads["jobs"][1]
    del writes["jobs"][0]
    p = profile_from_fio_json([reads, writes], name="two")
    assert p.write.mean_us == pytest.approx(raw["jobs"][1]["write"]["lat_ns"]["mean"] / 1000)
    with pytest.raises(SkewlabInputError, match="no write I/O"):
        profile_from_fio_json(reads)


def _without(path: list, data: dict | None = None) -> dict:
    data = copy.deepcopy(fixture_json() if data is None else data)
    node = data
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return data


@pytest.mark.parametrize(
    "path, message",
    [
        (["jobs", 0, "read", "lat_ns", "mean"], "fio result has no jobs[0].read.lat_ns.mean"),
        (["jobs", 1, "write", "lat_ns"], "fio result has no jobs[1].write.lat_ns"),
        (["jobs", 0, "read", "iops"], "fio result has no jobs[0].read.iops"),
        (["jobs", 1, "read"], "fio result has no jobs[1].read"),
        (["jobs", 0, "write", "total_ios"], "fio result has no jobs[0].write.total_ios"),
        (["jobs"], "fio result has no jobs"),
    ],
)
def test_partial_fio_json_names_the_missing_field(path, message):
    with pytest.raises(SkewlabInputError) as info:
        profile_from_fio_json(_without(path))
    assert message in str(info.value)


def test_bad_fio_files(tmp_path):
    with pytest.raises(SkewlabInputError, match="no such fio result file"):
        profile_from_fio_json(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(SkewlabInputError, match="not valid JSON"):
        profile_from_fio_json(tmp_path / "broken.json")
    with pytest.raises(SkewlabInputError, match=r"jobs\[0\]"):
        profile_from_fio_json({"jobs": []})


# --------------------------------------------------------------------------- the disk probe


def test_probe_measures_and_removes_its_file(tmp_path):
    p = probe_disk(size_mb=2, seconds=0.5, directory=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []
    assert p.block_size == 8192 and p.name == "local"
    for dist in (p.read, p.write):
        assert dist.mean_us > 0 and dist.min_us > 0 and dist.samples > 0
        assert sum(pct for _, pct in dist.buckets) == pytest.approx(100, abs=0.01)
        assert dist.quantile_us(50) > 0
    assert per_key_ceiling(p, naive_pattern()) > 0


def test_probe_falls_back_without_o_direct(tmp_path, monkeypatch):
    import skewlab.disk_probe as disk_probe

    def refuse(path, probe):
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(disk_probe, "_open_direct", refuse)
    with pytest.warns(RuntimeWarning, match="O_DIRECT is not available"):
        p = disk_probe.probe_disk(size_mb=1, seconds=0.2, directory=tmp_path, progress=False)
    assert p.read.mean_us > 0 and "buffered" in p.source
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kwargs", [{"size_mb": -1}, {"size_mb": 0}, {"seconds": 0}, {"block_size": 1000}]
)
def test_probe_refuses_bad_sizes(kwargs, tmp_path):
    with pytest.raises(SkewlabInputError):
        probe_disk(**{"directory": tmp_path, "progress": False, **kwargs})


# --------------------------------------------------------------------------- the CLI


def test_cli_latency_json(capsys):
    assert main(["latency", "--profile", "ebs-article", "--json", "--samples", "5000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["profile"] == "ebs-article"
    assert abs(out["naive_records_per_key_per_second"] - 72.1) / 72.1 < 0.02
    for key in ("buffered", "cached", "sorted"):
        assert out[f"{key}_records_per_key_per_second"] > out["naive_records_per_key_per_second"]
    assert out["naive_state_time_p50_us"] < out["naive_state_time_p99_us"]
    assert (out["buffer_size"], out["hit_ratio"], out["run_length"]) == (100, 0.5, 10)


def test_cli_latency_table_and_fio(capsys):
    assert main(["latency", "--fio", str(FIXTURE), "--buffer-size", "7"]) == 0
    out = capsys.readouterr().out
    assert "fio-randrw-8k" in out and "buffered (B=7)" in out
    assert main(["latency", "--fio", str(FIXTURE), "--json", "--samples", "100"]) == 0
    assert json.loads(capsys.readouterr().out)["block_size"] == 8192


@pytest.mark.parametrize(
    "argv, message",
    [
        (["latency", "--hit-ratio", "1.5"], "--hit-ratio"),
        (["latency", "--hit-ratio", "nan"], "--hit-ratio"),
        (["latency", "--buffer-size", "0"], "--buffer-size"),
        (["latency", "--run-length", "0"], "--run-length"),
        (["latency", "--profile", "nope"], "known: "),
        (["latency", "--fio", "/no/such/fio.json"], "no such fio result file"),
        (["latency", "--block-size", "16k"], "8192-byte blocks"),
        (["probe-disk", "--size", "-1"], "size"),
        (["probe-disk", "--seconds", "0"], "seconds"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_probe_disk_writes_a_profile(tmp_path, capsys):
    out = tmp_path / "disk.json"
    argv = ["probe-disk", "--size", "1", "--seconds", "0.3", "--dir", str(tmp_path)]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    p = load_profile(out)
    assert p.name == "disk" and p.read.mean_us > 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["disk.json"]
    assert np.isfinite(per_key_ceiling(p, naive_pattern()))
