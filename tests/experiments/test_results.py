"""Saved benchmark results: the newest file of a profile is the one a notebook shows, and it
says which profile measured it."""

from __future__ import annotations

import json
import os

from skewlab.experiments.results import BenchResult, latest_result


def _saved(directory, experiment, profile, stamp, mtime):
    path = directory / f"{experiment}-{profile}-{stamp}.json"
    body = {"experiment": experiment, "rows": [], "summary": {"runs": {"quick": 1}.get(profile, 5)}}
    path.write_text(json.dumps(body))
    os.utime(path, (mtime, mtime))
    return path


def test_the_newest_file_of_the_asked_profile_is_shown_with_its_profile(tmp_path):
    _saved(tmp_path, "value-state", "full", "20261101T000000Z", 1_000)
    _saved(tmp_path, "value-state", "quick", "20261102T000000Z", 2_000)  # newer, but quick
    full = latest_result("value-state", tmp_path, profile="full")
    assert (full["profile"], full["summary"]["runs"]) == ("full", 5)  # older files: from the name
    assert latest_result("value-state", tmp_path)["profile"] == "quick"
    assert latest_result("value-state", tmp_path, profile="tiny") is None


def test_a_written_result_records_its_profile(tmp_path):
    BenchResult("buffering", "tiny", [{"x": 1}], {"runs": 1}).write(tmp_path)
    saved = latest_result("buffering", tmp_path)
    assert saved["profile"] == "tiny"
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["profile"] == "tiny"


def test_the_newest_result_is_the_newest_stamp_even_when_copied_files_reset_the_times(tmp_path):
    for stamp, mtime, label in (("20261105T000000Z", 1_000, "newer"),
                                ("20261101T000000Z", 9_000, "older, copied later")):  # fmt: skip
        path = _saved(tmp_path, "cache", "full", stamp, mtime)
        body = json.loads(path.read_text()) | {"summary": {"label": label}}
        path.write_text(json.dumps(body))
        os.utime(path, (mtime, mtime))
    assert latest_result("cache", tmp_path, profile="full")["summary"]["label"] == "newer"
