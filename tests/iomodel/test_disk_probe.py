"""The disk probe: this machine's disk measured the way the seed measured EBS."""

from __future__ import annotations

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.disk_probe import probe_disk
from skewlab.iomodel.model import naive_pattern, per_key_ceiling


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
    import skewlab.iomodel.disk_probe as disk_probe

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
