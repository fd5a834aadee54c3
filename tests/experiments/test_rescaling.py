"""The rescale experiment: the seed's Figure 3 assignment, the three restore ways on its 21
keys (counts checked exactly), and ``skewlab bench rescaling --size tiny`` end to end."""

from __future__ import annotations

import json

import pytest

from skewlab import paths
from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments import rescaling
from skewlab.experiments.chapters import headline_ratios
from skewlab.experiments.claims import chapter_claims
from skewlab.iomodel.restore_time import object_store_model


def test_figure_3_with_and_without_key_groups():
    table = rescaling.key_assignment_table(
        range(21), max_parallelism=10, old_parallelism=3, new_parallelism=4
    )
    # 3B: the old ranges [0,3] [4,6] [7,9], the new ranges [0,2] [3,4] [5,7] [8,9]
    by_group = table.drop_duplicates("key_group").set_index("key_group")
    assert by_group.old_subtask.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert by_group.new_subtask.tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 3, 3]
    # 3A: without key groups, new subtask 1 (key % 4 == 1) gathers keys of every old subtask
    assert set(table[table.new_modulo == 1].old_modulo) == {0, 1, 2}
    # with key groups, each new subtask reads from at most two old subtasks
    assert table.groupby("new_subtask").old_subtask.nunique().max() == 2
    with pytest.raises(SkewlabInputError, match="exceeds the max parallelism 10"):
        rescaling.key_assignment_table(range(3), max_parallelism=10, old_parallelism=3,
                                     new_parallelism=11)  # fmt: skip


def test_the_seed_example_restored_three_ways(tmp_path):
    rows = rescaling.seed_example(tmp_path, {"object_store": object_store_model(100, 85)})
    totals = {}
    for row in rows:
        t = totals.setdefault(row["way"], {"requests": 0, "keys_read": 0, "keys_kept": 0})
        for name in t:
            t[name] += row[name]
    assert totals["read_all"] == {"requests": 12, "keys_read": 84, "keys_kept": 21}
    assert totals["per_key_index"] == {"requests": 12 + 21, "keys_read": 21, "keys_kept": 21}
    assert totals["key_groups"] == {"requests": 6, "keys_read": 21, "keys_kept": 21}
    for row in rows:
        if row["way"] == "key_groups":
            assert row["bytes_read"] == row["owned_bytes"]
        expected = row["requests"] * 0.1 + row["bytes_read"] / 85e6
        assert row["modelled_seconds_object_store"] == pytest.approx(expected)


def test_bench_rescaling_tiny_end_to_end(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    assert main(["bench", "rescaling", "--size", "tiny", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    s = payload["summary"]
    assert s["digest_equal_after_rescale"] is True and s["keygroups_read_only_owned_bytes"]
    # 3 -> 4: each of 4 new subtasks reads every old file whole (headers included)
    assert 4.0 <= s["bytes_read_ratio_naive_over_keygroups"] < 4.1
    assert s["requests_ratio_index_over_keygroups"] > 10
    ways = {r["way"] for r in payload["rows"]}
    assert ways == {"read_all", "per_key_index", "key_groups", "rocksdb_clip", "rocksdb_copy",
                    "rocksdb_ingest"}  # fmt: skip
    assert {r["distribution"] for r in payload["rows"]} == {"identity", "uniform", "zipf"}
    assert len(list(tmp_path.glob("rescaling-tiny-*.json"))) == 1
    assert all(s[key] is not None for key in headline_ratios("rescaling"))  # bench compare's
    # the chapter's claims follow from how the restore ways read: they hold at any size
    outcomes = [c.evaluate(payload) for c in chapter_claims("rescaling")]
    assert [o.status for o in outcomes] == ["held"] * 4, [o.text for o in outcomes]


def test_bad_cases_are_refused_before_any_work():
    with pytest.raises(SkewlabInputError, match="exceeds the max parallelism 128"):
        rescaling.run_experiment("tiny", cases=[(3, 200)])


def test_a_buffers_in_flight_records_three_ways_on_real_runs(spark):
    from skewlab.inputs.views import ViewSpec, generate_views

    views = generate_views(spark, ViewSpec(2_000, 300, 200, seed=1)).cache()
    table = rescaling.in_flight_table(views, parallelism=2, new_parallelism=3, spark=spark)
    rows = table.set_index("in_flight")
    assert rows.loc["operator_state", "in_flight_elements"] > 0
    assert rows.loc["operator_state", "misrouted_at_new_parallelism"] > 0
    assert rows.loc["operator_state", "resumed_digest_equals_reference"] == "refused"
    assert rows.loc["flush", "in_flight_elements"] == 0
    assert rows.loc["keyed_state", "in_flight_elements"] > 0
    assert rows.loc["flush", "resumed_digest_equals_reference"] is True
    assert rows.loc["keyed_state", "resumed_digest_equals_reference"] is True
