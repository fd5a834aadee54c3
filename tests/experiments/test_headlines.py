"""``skewlab bench compare``: a quick run's headline ratios against a full run's, read from the
result files ``skewlab bench`` writes."""

from __future__ import annotations

import os

from skewlab import paths
from skewlab.cli import main
from skewlab.experiments.chapters import headline_ratios
from skewlab.experiments.headlines import compare_sizes
from skewlab.experiments.machine import this_machine
from skewlab.experiments.references import load_reference
from skewlab.experiments.results import BenchResult


def _write(directory, experiment, size, summary, mtime):
    result = BenchResult(experiment, size, [{"run": 0}], summary)
    for path in result.write(directory):
        os.utime(path, (mtime, mtime))
    return result


def test_the_newest_quick_and_full_files_are_compared_ratio_by_ratio(tmp_path):
    keys = headline_ratios("state_cache")
    _write(tmp_path, "state_cache", "full", dict.fromkeys(keys, 20.0) | {"speedup_250": 0.9}, 2_000)
    _write(
        tmp_path, "state_cache", "quick", dict.fromkeys(keys, 22.0) | {"speedup_250": 0.7}, 3_000
    )
    rows, missing = compare_sizes(["state_cache", "sorted_input"], tmp_path)
    # no full file of sorted_input's own: its shipped reference stands in, so only quick is due
    assert missing == ["skewlab bench sorted_input --size quick"]
    assert {r["full_source"] for r in rows} == {"result file"}
    by_ratio = {r["ratio"]: r for r in rows}
    assert set(by_ratio) == set(keys)
    assert by_ratio["speedup_1000"]["difference"] == 22.0 / 20.0 - 1
    assert by_ratio["speedup_1000"]["within"] is True  # +10 %
    assert by_ratio["speedup_1000"]["seed"] == 21.6  # FLIP-325's figure beside both
    assert by_ratio["speedup_250"]["within"] is False  # 0.7 against 0.9: -22 %


def test_without_a_full_file_the_shipped_reference_is_the_full_side(tmp_path):
    keys = headline_ratios("state_cache")
    _write(tmp_path, "state_cache", "quick", dict.fromkeys(keys, 2.0), 3_000)
    rows, missing = compare_sizes(["state_cache"], tmp_path)
    reference = load_reference("state_cache")
    assert missing == [] and {r["full_source"] for r in rows} == {"reference"}
    by_ratio = {r["ratio"]: r for r in rows}
    assert by_ratio["speedup_1000"]["full"] == reference["summary"]["speedup_1000"]
    assert {r["reference_status"] for r in rows} == {"current"}


def test_the_cli_prints_the_table_and_says_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    keys = headline_ratios("buffering")
    _write(tmp_path, "buffering", "full", dict.fromkeys(keys, 40.0), 1_000)
    _write(tmp_path, "buffering", "quick", dict.fromkeys(keys, 30.0), 2_000)
    assert main(["bench", "compare", "buffering", "state_cache"]) == 0
    out, err = capsys.readouterr()
    assert "speedup_at_20_keys" in out and "-25.0%" in out and "outside 15%" in out
    assert "skewlab bench state_cache --size quick" in err
    assert main(["bench", "compare", "nope"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err


def test_compare_says_when_the_two_files_come_from_different_machines(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    keys = headline_ratios("buffering")
    here = this_machine()
    elsewhere = {**here, "boot_id": "00000000-another-boot"}
    _write(tmp_path, "buffering", "full", dict.fromkeys(keys, 40.0) | {"machine": elsewhere}, 1)
    _write(tmp_path, "buffering", "quick", dict.fromkeys(keys, 39.0), 2)  # recorded: this one
    rows, _ = compare_sizes(["buffering"], tmp_path)
    assert {r["same_machine"] for r in rows} == {False}
    assert rows[0]["quick_machine"] == here
    assert main(["bench", "compare", "buffering"]) == 0
    out = capsys.readouterr().out
    assert "buffering: quick and full were measured on different machines" in out
    assert "boot 00000000" in out

    _write(tmp_path, "buffering", "full", dict.fromkeys(keys, 40.0), 3)  # this machine too
    rows, _ = compare_sizes(["buffering"], tmp_path)
    assert {r["same_machine"] for r in rows} == {True}
    assert main(["bench", "compare", "buffering"]) == 0
    assert "machine" not in capsys.readouterr().out


def test_two_sizes_agree_where_their_intervals_overlap():
    from skewlab.experiments.headlines import compare_summaries

    def summary(value, low, high):
        interval = {"value": value, "low": low, "high": high, "runs": 3, "method": "bootstrap"}
        return {"runs": 3, "speedup_1000": value, "intervals": {"speedup_1000": interval}}

    apart = compare_summaries("state_cache", summary(9.0, 8.0, 10.0), summary(18.6, 17.0, 20.0))
    close = compare_summaries("state_cache", summary(17.5, 15.0, 19.0), summary(18.6, 17.0, 20.0))
    row = {r["ratio"]: r for r in apart}["speedup_1000"]
    assert row["intervals_overlap"] is False and row["quick_interval"].low == 8.0
    assert {r["ratio"]: r for r in close}["speedup_1000"]["intervals_overlap"] is True
    # a ratio without an interval on one side: no verdict on agreement
    bare = compare_summaries("state_cache", {"runs": 5, "speedup_1000": 9.0}, summary(18.6, 17, 20))
    assert {r["ratio"]: r for r in bare}["speedup_1000"]["intervals_overlap"] is None
