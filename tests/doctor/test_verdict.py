"""The doctor as a product: one options record behind the flags, the verdict first within 100
columns, the parallelism plan against Flink's own key-group assignment, keys redacted in every
output -- on a real diagnosis of generated views (a real local Spark)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re

import pytest

from skewlab.cli import main
from skewlab.doctor.diagnosis import diagnose
from skewlab.doctor.options import DoctorOptions, add_arguments
from skewlab.doctor.planning import (
    HIGHLY_COMPOSITE,
    even_parallelisms,
    key_groups_per_subtask,
    max_parallelism_choices,
)
from skewlab.doctor.redaction import redact, redact_key
from skewlab.doctor.schema import SCHEMA_VERSION, Diagnosis
from skewlab.doctor.verdict import WIDTH, gain_spread
from skewlab.doctor.viz import doctor_text, reference_check, write_html
from skewlab.errors import SkewlabInputError
from skewlab.experiments.references import load_reference
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.state.key_groups import (
    compute_default_max_parallelism,
    compute_operator_index_for_key_group,
)
from skewlab.viz.text import percent


def test_every_option_is_one_flag_with_the_records_default_and_help():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert DoctorOptions.from_namespace(parser.parse_args([])) == DoctorOptions()
    dests = {a.dest for a in parser._actions if a.dest != "help"}
    assert dests == {f.name for f in dataclasses.fields(DoctorOptions)}
    assert all(a.help for a in parser._actions)
    given = parser.parse_args(["--parallelism", "8", "3", "--engine", "spark", "--top", "5"])
    options = DoctorOptions.from_namespace(given)
    assert (options.parallelism, options.engines, options.top) == ((3, 8), ("spark",), 5)


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"window_seconds": 0}, "window seconds must be above 0"),
        ({"engines": ("flink", "storm")}, "unknown engine 'storm'"),
        ({"parallelism": (0,)}, "parallelism must be"),
        ({"top": 1_001}, "top must be"),
        ({"sketch_threshold": 0.0001}, "hot threshold (a share of the records) must be"),
        ({"target_rate": -1.0}, "target rate must be above 0"),
    ],
)
def test_a_bad_option_is_refused_when_made(values, says):
    with pytest.raises(SkewlabInputError, match=re.escape(says)):
        DoctorOptions(**values)


def test_a_bad_option_fails_before_the_records_are_read(tmp_path, capsys):
    missing = tmp_path / "no-such-records.parquet"  # never read: the option fails first
    assert main(["doctor", str(missing), "--key", "k", "--window-seconds", "0"]) == 2
    err = capsys.readouterr().err
    assert "window seconds must be above 0" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("p", "m"), [(6, 128), (4, 128), (7, 720), (128, 128), (3, 1000)])
def test_key_groups_per_subtask_equal_flinks_own_assignment(p, m):
    owners = [compute_operator_index_for_key_group(m, p, kg) for kg in range(m)]
    counts = [owners.count(i) for i in range(p)]
    groups = key_groups_per_subtask(p, m)
    assert (groups["most"], groups["fewest"]) == (max(counts), min(counts))
    assert groups["subtasks_with_most"] == counts.count(max(counts))
    assert (p in even_parallelisms(m)) == (max(counts) == min(counts))


@pytest.mark.parametrize("planned", [(1, 6), (2, 12), (4, 40), (10, 100)])
def test_the_max_parallelism_advised_splits_the_most_planned_parallelisms(planned):
    low, high = planned
    choices = max_parallelism_choices(planned)
    offered = [c["max_parallelism"] for c in choices]
    default = compute_default_max_parallelism(high)
    assert set(offered) == {default, *[m for m in HIGHLY_COMPOSITE if m >= high][:3]}
    for c in choices:
        assert c["even"] == [p for p in range(low, high + 1) if c["max_parallelism"] % p == 0]
        assert c["flink_default"] == (c["max_parallelism"] == default)
    best = choices[0]
    assert all(
        len(c["even"]) < len(best["even"]) or c["max_parallelism"] >= best["max_parallelism"]
        for c in choices
    )


@pytest.fixture(scope="module")
def report(spark):
    views = generate_views(spark, ViewSpec(20_000, 2_000, 500, distribution="zipf", skew=1.1,
                                           seed=5))  # fmt: skip
    return diagnose(views, "tweet_id", parallelism=(2, 6))


def test_the_text_opens_on_the_verdict_and_keeps_to_100_columns(report):
    check = reference_check()
    text = doctor_text(report, check=check)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    verdict = lines[: lines.index("details:")]
    distinct = report.input.distinct_keys
    assert verdict[0] == f"verdict: 20,000 records, key 'tweet_id', {distinct:,} distinct keys"
    top = report.hot_keys.top[0]
    assert verdict[1].startswith(f"  hottest keys: {top.key!r} {percent(top.share)}")
    said = " ".join(" ".join(verdict).split())  # the lines wrapped back into one
    six = report.engines["flink"].at(6)
    assert f"Flink P=6: busiest subtask {six.max_over_mean:.2f}x the mean" in said
    assert f"more than {report.hot_keys.max_speedup:.2f}x faster" in said
    # P=6 over 128 key groups: 2 subtasks with 22, 4 with 21 (FLINK-21695)
    assert "P=6 gives 2 of its subtasks 22 key groups and the rest 21" in said
    # the remedy's gain carries the spread the shipped check measured, computed here again
    rec = report.remedies["recommendation"]
    lows, highs = [], []
    checked = load_reference("remedy_check")["summary"]["workloads"]
    for w in checked:
        ends = {
            r["remedy"]: (r["predicted_over_measured_interval"]["low"],
                          r["predicted_over_measured_interval"]["high"])
            for r in w["remedies"] if r["predicted_over_measured"]
        }  # fmt: skip
        if rec["remedy"] in ends:
            lows.append(ends["naive_rocksdb"][0] / ends[rec["remedy"]][1])
            highs.append(ends["naive_rocksdb"][1] / ends[rec["remedy"]][0])
    gain = rec["speedup_over_baseline"]
    low, high = gain * min(lows), gain * max(highs)
    assert low < gain < high  # the check's noise spans the prediction
    assert f"remedy: {rec['remedy']}, predicted {gain:.2f}x" in said
    assert f"likely {low:.2f}x..{high:.2f}x" in said
    # every workload of the shipped check, the held-out one included
    assert gain_spread(rec["remedy"], check)["workloads"] == len(lows) == len(checked)


def test_without_a_check_the_gain_says_it_has_no_interval(report):
    text = " ".join(doctor_text(report, check=None).split())
    assert "no check of this remedy against real runs to put an interval on it" in text


def test_redacted_keys_leave_no_key_in_any_output(report, tmp_path):
    hidden = redact(report)
    keys = [r.key for r in report.hot_keys.top]
    outputs = {
        "text": doctor_text(hidden, check=None),
        "json": json.dumps(hidden.to_json(), default=str),
        "html": write_html(hidden, tmp_path / "doctor.html").read_text(),
    }
    for name, out in outputs.items():
        leaked = [k for k in keys if re.search(rf"\b{re.escape(str(k))}\b", out)]
        assert not leaked, f"{name} shows {leaked}"
        assert redact_key(keys[0]) in out
    assert [r.records for r in hidden.hot_keys.top] == [r.records for r in report.hot_keys.top]
    assert hidden.input.keys_redacted and not report.input.keys_redacted


def test_a_saved_diagnosis_loads_as_it_was_and_a_newer_schema_is_refused(report, tmp_path):
    saved = tmp_path / "diagnosis.json"
    saved.write_text(json.dumps(report.to_json(), default=str))
    data = json.loads(saved.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    loaded = Diagnosis.from_json(data)
    assert loaded == report  # every section, typed, back as it was
    assert doctor_text(loaded, check=None) == doctor_text(report, check=None)
    with pytest.raises(SkewlabInputError, match="schema version 2: this skewlab reads version 1"):
        Diagnosis.from_json({**data, "schema_version": 2})


def test_the_cli_json_is_the_typed_diagnosis_written_out(spark, tmp_path, capsys):
    views = generate_views(spark, ViewSpec(2_000, 200, 50, distribution="zipf", skew=1.1, seed=3))
    path = tmp_path / "views.parquet"
    views.write.parquet(str(path))
    args = ["doctor", str(path), "--key", "tweet_id", "--parallelism", "3", "--no-remedies"]
    assert main([*args, "--json"]) == 0
    loaded = Diagnosis.from_json(json.loads(capsys.readouterr().out))
    assert loaded.input.path == str(path) and loaded.parallelism.asked == (3,)
    assert sum(loaded.engines["flink"].at(3).loads) == 2_000
