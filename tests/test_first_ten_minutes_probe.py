"""The probe behind docs/report.md's cold runs (docs/probes/first_ten_minutes.py) clones the
commit it is given with ``shared`` beside it, and reads its figures from what the report wrote
(``timings.json``, ``claims.json``), not from its printed text."""

from __future__ import annotations

import doctest
import subprocess
from pathlib import Path

import pytest

from skewlab.report import NotebookReport, ReportResult
from skewlab.report.render import write_claims, write_timings
from skewlab.report.timing import NotebookTiming


@pytest.fixture(scope="module")
def probe(load_probe):
    return load_probe("first_ten_minutes")


def test_its_examples_hold(probe):
    assert doctest.testmod(probe).failed == 0


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_run_clones_the_commit_it_is_given_with_shared_beside_it(probe, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    for text in ("first", "second"):
        (repo / "README.md").write_text(text)
        _git("add", "README.md", cwd=repo)
        _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", text, cwd=repo)
    first = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=repo, check=True,
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    shared = tmp_path / "shared"
    (shared / "seeds").mkdir(parents=True)
    clone = probe.clean_clone(repo, first, shared, tmp_path / "run")
    assert (clone / "README.md").read_text() == "first"
    # the layout CI gives: ../shared beside the clone
    assert (clone.parent / "shared" / "seeds").is_dir()
    assert (clone.parent / "shared").resolve() == shared.resolve()


def _written_report(tmp_path: Path) -> ReportResult:
    """A report's result as render_report leaves it, written by the package's own writers."""
    claims = [
        {"id": "a", "this_run": "held", "reference": "held"},
        {"id": "b", "this_run": "inconclusive", "reference": "held"},
        {"id": "c", "this_run": "not measured", "reference": "not held"},
        {"id": "d", "this_run": "measurement error", "reference": None},
    ]
    notebooks = [
        NotebookReport("00_hot_keys", "t", "s", tmp_path / "00_hot_keys.html", 17.64,
                       timing=NotebookTiming(17.64, 0.5, 4.4, 16.2, 0.5, (3, 6.45))),
        NotebookReport("03_buffering", "t", "s", tmp_path / "03_buffering.html", 14.71,
                       timing=NotebookTiming(14.71, 0.0, 0.0, 13.9, 0.1, (19, 6.32)),
                       claims=claims),
    ]  # fmt: skip
    result = ReportResult("quick", tmp_path / "index.html", notebooks, seconds=125.0)
    write_timings(result)
    write_claims(result)
    return result


def test_a_runs_figures_are_what_the_report_wrote(probe, tmp_path):
    _written_report(tmp_path)
    figures = probe.report_figures(tmp_path)
    assert figures["report_seconds"] == 125.0
    # over the quick size's 120 s only for a report of every notebook: this one has two
    assert figures["over_budget"] is False
    assert figures["notebooks"] == {"00_hot_keys": 17.64, "03_buffering": 14.71}
    assert figures["slowest_cell"]["03_buffering"] == [19, 6.32]
    assert list(figures["claims"]) == ["03_buffering"]  # 00 showed no claim
    buffering = figures["claims"]["03_buffering"]
    assert buffering["this_run"] == ["held", "inconclusive", "not measured", "measurement error"]
    assert buffering["reference"] == 3


def test_the_table_shows_each_run_each_notebook_and_each_chapters_live_claims(probe, tmp_path):
    _written_report(tmp_path)
    row = {"kind": "report", "commit": "b6a67c5" + "0" * 33, "at": "2026-12-07T16:30:00+00:00",
           "cpu_probe_seconds": [1.13, 1.07, 1.09], "install_seconds": 55.2,
           "page_cache_dropped": True, "whole_seconds": 130.4, "exit": 0,
           **probe.report_figures(tmp_path)}  # fmt: skip
    later = dict(row, notebooks={"00_hot_keys": 15.0, "03_buffering": 12.0})
    lines = probe.table([row, later]).splitlines()
    assert lines[2] == (
        "| 1 | 2026-12-07 16:30 | b6a67c5 | 1.07-1.13 | 55 | 125.0 | 130.4 | no | yes | - |"
    )
    assert "| 00_hot_keys | 17.6 | 15.0 | 16.3 [15.0..17.6] |" in lines
    assert (
        "| 03_buffering | 1 held, 1 inconclusive, 1 measurement error (1 not measured at this "
        "size, of 4) | 1 held, 1 inconclusive, 1 measurement error (1 not measured at this size, "
        "of 4) | 3 of 4 |"
    ) in lines
