"""Importing fio --output-format=json results as disk profiles."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.fio import profile_from_fio_json
from skewlab.iomodel.model import naive_pattern, per_key_ceiling

FIXTURE = Path(__file__).parents[1] / "fixtures" / "fio-randrw-8k.json"


def fixture_json() -> dict:
    return json.loads(FIXTURE.read_text())


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
