"""skewlab bench: bad input before any work, one JSON object with --json, result files."""

from __future__ import annotations

import json

import pytest

from skewlab import paths
from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments import sorted_input, state_cache, value_state


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sorted_input.run_experiment("quick", 1, n=10, k=11), "K=11 > N=10"),
        (lambda: sorted_input.run_experiment("quick", 1, n=0, k=1), "N \\(records\\)"),
        (lambda: sorted_input.run_experiment("quick", 1, k=0), "K \\(distinct keys\\)"),
        (lambda: sorted_input.run_experiment("quick", 1, key_type="uuid"), "unknown key type"),
        (lambda: sorted_input.run_experiment("huge", 1), r"unknown size \(--size\) 'huge'"),
        (lambda: state_cache.run_experiment("quick", 1, sizes=(250, -1)), "cache size"),
        (lambda: state_cache.run_experiment("quick", 1, costs_n=-1), "costs N"),
        (
            lambda: state_cache.run_experiment("quick", 0),
            "runs \\(--runs\\) must be a whole number >= 1",
        ),
        (lambda: value_state.run_experiment("quick", 1, keys=0), "keys must be"),
    ],
)
def test_bad_benchmark_input_is_refused_before_any_work(call, message):
    with pytest.raises(SkewlabInputError, match=message):
        call()


def test_cli_knows_the_new_experiments_and_keeps_bufferings_options(capsys):
    assert main(["bench", "sorted_input", "--key-type", "float", "--json"]) == 2
    assert "unknown key type 'float'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["bench", "buffering", "--size", "quick", "--runs", "1", "--parallelism", "2",
              "--key-type", "int"])  # fmt: skip
    assert info.value.code == 2  # --key-type belongs to sorted_input only


def test_cli_value_state_prints_one_json_object(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    assert main(["bench", "value-state", "--profile", "tiny", "--json"]) == 0  # former spellings
    out, err = capsys.readouterr()
    payload = json.loads(out)
    assert payload["experiment"] == "value_state"
    assert "skewlab bench: 'value-state' is deprecated, use 'value_state'" in err
    assert "--profile is deprecated, use --size" in err
    assert {"heap_over_rocksdb_add", "single_key_over_heap_add"} <= set(payload["summary"])
    assert payload["summary"]["headline_measure"] == "ops_per_wall_ms"
    assert len(list(tmp_path.glob("value_state-tiny-*.json"))) == 1


def test_cli_prints_the_summary_its_chapters_viz_module_formats(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    assert main(["bench", "value_state", "--size", "tiny"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "This run (tiny, this machine): ValueState, 2,000 keys in (key group, key) order, 1 run(s)"
    )
    assert "valueAdd's warm-up pass" in out and "results: " in out
