"""Reference results: what ``--save-reference`` writes (summary, rows up to a bound, provenance)
and what it refuses, and the fingerprint that says when the timed code changed since."""

from __future__ import annotations

import pytest

from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments import references
from skewlab.experiments.references import (
    MAX_ROWS_BYTES,
    load_reference,
    reference_status,
    save_reference,
    timed_modules,
)
from skewlab.experiments.results import BenchResult


def test_a_saved_reference_round_trips_with_its_provenance(tmp_path):
    result = BenchResult("value_state", "full", [{"run": 0, "ops": 1.5}], {"runs": 1, "x": 2.0})
    path = save_reference(result, tmp_path)
    assert path == tmp_path / "value_state.json"
    saved = load_reference("value_state", tmp_path)
    assert saved["summary"]["x"] == 2.0 and saved["rows"] == [{"run": 0, "ops": 1.5}]
    p = saved["provenance"]
    assert p["machine"] == result.summary["machine"] and p["measured_at"].endswith("Z")
    assert p["timed_modules"] == list(timed_modules("value_state"))
    assert reference_status(saved) == "current"


def test_rows_beyond_the_bound_are_left_out_and_the_summary_kept(tmp_path):
    rows = [{"run": i, "pad": "x" * 100} for i in range(MAX_ROWS_BYTES // 100)]
    save_reference(BenchResult("value_state", "full", rows, {"runs": 1}), tmp_path)
    saved = load_reference("value_state", tmp_path)
    assert saved["rows"] is None and saved["rows_left_out"].endswith("bytes")
    assert saved["summary"]["runs"] == 1


def test_a_reference_is_full_size_only_and_the_cli_says_so_before_any_run(tmp_path, capsys):
    with pytest.raises(SkewlabInputError, match="needs --size full"):
        save_reference(BenchResult("value_state", "quick", [], {}), tmp_path)
    assert main(["bench", "value_state", "--size", "tiny", "--save-reference"]) == 2
    assert "--save-reference needs --size full" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_fingerprint_follows_the_timed_code(monkeypatch):
    before = references.code_fingerprint("value_state")
    # another source text for one timed file: a different fingerprint
    real = references.Path.read_bytes
    first = timed_modules("value_state")[0]

    def edited(self):
        data = real(self)
        return data + b"\n# edited\n" if str(self).endswith(first) else data

    references.code_fingerprint.cache_clear()
    monkeypatch.setattr(references.Path, "read_bytes", edited)
    try:
        assert references.code_fingerprint("value_state") != before
    finally:
        monkeypatch.undo()
        references.code_fingerprint.cache_clear()
    assert references.code_fingerprint("value_state") == before


def test_every_shipped_reference_was_measured_by_the_timed_code_it_ships_with():
    # a change to a benchmark's timed code makes its reference say "re-measure" wherever it is
    # shown; a checkout must not ship one in that state (re-measure it with
    # `skewlab bench NAME --size full --save-reference` before the change lands)
    shipped = sorted(p.stem for p in references.references_dir().glob("*.json"))
    assert shipped, "no reference shipped"
    stale = [name for name in shipped if reference_status(load_reference(name)) != "current"]
    assert stale == [], f"stale references: {stale}"
