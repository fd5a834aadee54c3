"""skewlab latency and skewlab probe-disk."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skewlab.cli import main
from skewlab.iomodel.model import naive_pattern, per_key_ceiling
from skewlab.iomodel.profiles import list_disk_profiles, load_disk_profile

FIXTURE = Path(__file__).parents[1] / "fixtures" / "fio-randrw-8k.json"


def fixture_json() -> dict:
    return json.loads(FIXTURE.read_text())


def test_cli_latency_json(capsys):
    assert main(["latency", "--disk", "ebs-article", "--json", "--samples", "5000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["profile"] == "ebs-article"
    assert abs(out["naive_records_per_key_per_second"] - 72.1) / 72.1 < 0.02
    for key in ("buffered", "cached", "sorted"):
        assert out[f"{key}_records_per_key_per_second"] > out["naive_records_per_key_per_second"]
    assert out["naive_state_time_p50_us"] < out["naive_state_time_p99_us"]
    assert (out["buffer_size"], out["hit_ratio"], out["run_length"]) == (100, 0.5, 10)


DEPRECATION = (
    "skewlab latency: --profile is deprecated, use --disk (it will be removed in the next release)"
)


def test_cli_latency_disk_names_the_disk_profile_and_prints_no_deprecation(capsys):
    assert main(["latency", "--disk", "ebs-article", "--samples", "100"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("disk profile ebs-article: 8192-byte blocks")
    assert captured.err == ""


def test_cli_latency_profile_still_works_and_prints_one_deprecation_line(capsys):
    assert main(["latency", "--disk", "ebs-article", "--json", "--samples", "100"]) == 0
    new = capsys.readouterr()
    assert main(["latency", "--profile", "ebs-article", "--json", "--samples", "100"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and json.loads(old.out)["profile"] == "ebs-article"
    assert old.err.splitlines() == [DEPRECATION]
    assert main(["latency", "--profile", "nope"]) == 2  # the value is checked as --disk's is
    assert capsys.readouterr().err.splitlines() == [
        DEPRECATION,
        "skewlab latency: error: unknown disk profile 'nope'; known: "
        + ", ".join(list_disk_profiles()),
    ]


def test_cli_latency_help_shows_disk_not_the_deprecated_profile(capsys):
    with pytest.raises(SystemExit):
        main(["latency", "--help"])
    out = capsys.readouterr().out
    assert "--disk NAME|FILE" in out and "--profile NAME" not in out


def test_cli_latency_refuses_profile_and_fio_together(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["latency", "--profile", "ebs-article", "--fio", str(FIXTURE)])
    assert exit_.value.code == 2
    assert "argument --fio: not allowed with argument --profile" in capsys.readouterr().err


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
        (["latency", "--disk", "nope"], "unknown disk profile 'nope'; known: "),
        (["latency", "--fio", "/no/such/fio.json"], "no such fio result file"),
        (["latency", "--block-size", "16k"], "8192-byte blocks"),
        (["probe-disk", "--size-mb", "-1"], "size"),
        (["probe-disk", "--seconds", "0"], "seconds"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_probe_disk_writes_a_profile(tmp_path, capsys):
    out = tmp_path / "disk.json"
    argv = ["probe-disk", "--size", "1", "--seconds", "0.3", "--dir", str(tmp_path)]  # former
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "wrote" in printed.out and "--size is deprecated, use --size-mb" in printed.err
    p = load_disk_profile(out)
    assert p.name == "disk" and p.read.mean_us > 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["disk.json"]
    assert np.isfinite(per_key_ceiling(p, naive_pattern()))
    # probing again replaces its own disk profile; a user's file at --out is never replaced
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "settings"}')
    capsys.readouterr()
    assert main([*argv, "--out", str(mine), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"skewlab probe-disk: error: --out '{mine}' exists and is not a disk "
                          "profile ("), err  # fmt: skip
    assert mine.read_text() == '{"my": "settings"}'
