"""The probe behind docs/doctor.md's time-and-memory table (docs/probes/doctor_footprint.py)
reads what it says: a process's own peak resident memory, its descendants, and what it printed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from skewlab import paths

HOLD_MIB = 120


@pytest.fixture(scope="module")
def probe(load_probe):
    return load_probe("doctor_footprint")


def test_a_run_reports_the_peak_its_process_touched_and_what_it_printed(probe, tmp_path):
    code = (
        f"b = bytearray({HOLD_MIB} * 2**20); b[::4096] = b'x' * len(b[::4096]); "
        "import time; time.sleep(1.5); print('done')"
    )
    row = probe.run_once([sys.executable, "-c", code], dict(os.environ), tmp_path)
    assert row["exit"] == 0
    assert HOLD_MIB <= row["driver_peak_mib"] < HOLD_MIB + 200
    assert row["jvm_peak_mib"] == 0.0  # no JVM below it
    assert row["report_sha256"] == hashlib.sha256(b"done\n").hexdigest()


def test_descendants_finds_a_child_of_a_shell(probe):
    parent = subprocess.Popen(
        ["sh", "-c", f"{sys.executable} -c 'import time; time.sleep(5)' & wait"],
    )
    try:
        for _ in range(50):
            found = probe.descendants(parent.pid)
            if found:
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert len(found) == 1
        name, mib = probe.peak_mib(found[0])
        assert name.startswith("python") and mib > 1.0
    finally:
        for pid in probe.descendants(parent.pid):
            os.kill(pid, 9)
        parent.wait()
    assert probe.peak_mib(parent.pid) is None  # reaped: gone from /proc


def _fake_checkout(folder, says):
    package = folder / "skewlab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(f"print({says!r})\n")
    return folder


def test_measure_runs_the_checkout_it_is_given_not_the_working_directorys(probe, tmp_path):
    # run from inside one checkout (the output file beside it), measuring another
    here = _fake_checkout(tmp_path / "here", "the working directory's skewlab")
    given = _fake_checkout(tmp_path / "given", "the given checkout's skewlab")
    out = here / "runs.jsonl"
    probe.measure(out, tmp_path / "views.csv", 1, {"given": given})
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    printed = b"the given checkout's skewlab\n"
    assert row["exit"] == 0 and row["report_sha256"] == hashlib.sha256(printed).hexdigest()


@pytest.mark.long
def test_measure_finds_the_doctors_jvm_below_its_driver(probe, tmp_path):
    # a process and its JVM: the doctor on a small CSV, run as the probe runs it
    records = tmp_path / "clicks.csv"
    records.write_text("tweet_id\n" + "".join(f"{i % 7 if i % 3 else 0}\n" for i in range(3_000)))
    out = tmp_path / "runs.jsonl"
    probe.measure(out, records, 1, {"now": paths.project_root()})
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["exit"] == 0 and row["checkout"] == "now" and row["views"] == "clicks.csv"
    assert 50 < row["driver_peak_mib"] < row["jvm_peak_mib"]  # the JVM found below the driver
