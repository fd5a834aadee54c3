"""Saved benchmark results: the newest file of a size is the one a notebook shows, and it
says which size measured it; files under a benchmark's former name still count."""

from __future__ import annotations

import json
import os

from skewlab.experiments.results import BenchResult, latest_result


def _saved(directory, experiment, size, stamp, mtime):
    path = directory / f"{experiment}-{size}-{stamp}.json"
    body = {"experiment": experiment, "rows": [], "summary": {"runs": {"quick": 1}.get(size, 5)}}
    path.write_text(json.dumps(body))
    os.utime(path, (mtime, mtime))
    return path


def test_the_newest_file_of_the_asked_size_is_shown_with_its_size(tmp_path):
    _saved(tmp_path, "value-state", "full", "20261101T000000Z", 1_000)
    _saved(tmp_path, "value-state", "quick", "20261102T000000Z", 2_000)  # newer, but quick
    full = latest_result("value_state", tmp_path, size="full")  # written as 'value-state'
    assert (full["size"], full["summary"]["runs"]) == ("full", 5)  # older files: from the name
    assert latest_result("value_state", tmp_path)["size"] == "quick"
    assert latest_result("value_state", tmp_path, size="tiny") is None


def test_a_file_under_the_new_name_is_newer_than_one_under_the_former_name(tmp_path):
    _saved(tmp_path, "cache", "full", "20261101T000000Z", 1_000)
    (tmp_path / "cache-full-20261101T000000Z.json").write_text(
        '{"experiment": "cache", "profile": "full", "rows": [], "summary": {"label": "old"}}'
    )
    _saved(tmp_path, "state_cache", "full", "20261102T000000Z", 500)
    assert latest_result("state_cache", tmp_path, size="full")["experiment"] == "state_cache"
    assert latest_result("cache", tmp_path, size="full")["experiment"] == "state_cache"
    (tmp_path / "state_cache-full-20261102T000000Z.json").unlink()
    old = latest_result("state_cache", tmp_path, size="full")
    assert (old["summary"]["label"], old["size"]) == ("old", "full")  # the 'profile' field read


def test_a_written_result_records_its_size(tmp_path):
    BenchResult("buffering", "tiny", [{"x": 1}], {"runs": 1}).write(tmp_path)
    saved = latest_result("buffering", tmp_path)
    assert saved["size"] == "tiny"
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["size"] == "tiny"


def test_the_newest_result_is_the_newest_stamp_even_when_copied_files_reset_the_times(tmp_path):
    for stamp, mtime, label in (("20261105T000000Z", 1_000, "newer"),
                                ("20261101T000000Z", 9_000, "older, copied later")):  # fmt: skip
        path = _saved(tmp_path, "state_cache", "full", stamp, mtime)
        body = json.loads(path.read_text()) | {"summary": {"label": label}}
        path.write_text(json.dumps(body))
        os.utime(path, (mtime, mtime))
    assert latest_result("state_cache", tmp_path, size="full")["summary"]["label"] == "newer"
