"""Notebook 06's figures: Figure 3 drawn from the assignment, the restore ways' totals, operator
state's three modes, and the sliders' explorer."""

from __future__ import annotations

import pandas as pd

from skewlab.experiments.rescaling import (
    key_assignment_table,
    seed_example,
    source_offsets,
    summarize,
)
from skewlab.experiments.results import BenchResult
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.iomodel.restore_time import StorageReadModel, object_store_model
from skewlab.viz.rescaling import (
    assignment_figure,
    case_rows,
    cases_table,
    describe,
    files_read_comparison,
    format_summary,
    operator_state_figure,
    rescale_explorer,
    restore_ways_figure,
    restore_ways_table,
    seed_rows,
)


def seed_table():
    return key_assignment_table(range(21), max_parallelism=10, old_parallelism=3,
                                new_parallelism=4)  # fmt: skip


def test_figure_3_draws_each_keys_old_and_new_subtask_both_ways():
    table = seed_table()
    fig = assignment_figure(table)
    without, with_groups = fig.data
    assert list(without.z[0]) == table.new_modulo.tolist()
    assert list(with_groups.z[1]) == table.old_subtask.tolist()
    titles = [a.text for a in fig.layout.annotations]
    assert "reads up to 3 old files" in titles[0] and "reads up to 2 old files" in titles[1]


def test_files_read_side_by_side():
    comparison = files_read_comparison(seed_table())
    assert comparison["new subtask"].tolist() == [0, 1, 2, 3]
    assert comparison["old_files (hash % p)"].tolist() == [3, 3, 3, 3]
    assert comparison["old_files (key groups)"].tolist() == [1, 2, 2, 1]


def test_restore_ways_totals_and_job_time_from_the_slowest_subtask():
    frame = pd.DataFrame(
        {
            "way": ["read_all", "read_all", "key_groups", "key_groups"],
            "bytes_read": [10, 10, 3, 2],
            "requests": [2, 2, 1, 1],
            "files_opened": [2, 2, 1, 1],
            "keys_read": [4, 4, 2, 2],
            "keys_kept": [2, 2, 2, 2],
            "seconds": [0.1, 0.1, 0.1, 0.1],
            "modelled_seconds_ebs": [1.0, 3.0, 0.5, 0.2],
        }
    )
    table = restore_ways_table(frame)
    assert table.loc["read all, filter", "bytes_read"] == 20
    assert table.loc["key groups", "job_seconds_ebs"] == 0.5
    fig = restore_ways_figure(frame)
    assert [list(t.y) for t in fig.data][0] == [20, 5]


def test_operator_state_modes_and_the_explorer():
    fig = operator_state_figure(source_offsets(8, 3), 4)
    split, union, broadcast = fig.data
    assert sum(v is not None for row in split.z for v in row) == 8  # each element once
    assert sum(v is not None for row in union.z for v in row) == 8 * 4  # everywhere
    assert len(broadcast.y) == 4
    explorer = rescale_explorer(max_parallelism=8, old_parallelism=2, new_parallelism=3)
    assert explorer.figures[0].layout.title.text.startswith("Rescaling 2 -> 3")
    explorer.update(new_parallelism=6)  # moved as a person would: the figure follows
    assert explorer.figures[0].layout.title.text.startswith("Rescaling 2 -> 6")
    explorer.update(max_parallelism=4)  # p and p' never exceed the key groups
    assert explorer.controls["new_parallelism"].max == 4


def test_a_results_tables_sentences_and_printed_summary(tmp_path):
    # the seed example restored on real files, standing in for a realistic case as well
    models = {
        "ebs": StorageReadModel.from_profile(load_disk_profile("ebs-article")),
        "object_store": object_store_model(),
    }
    seed = [{k: v for k, v in r.items() if k != "request_bytes"}
            for r in seed_example(tmp_path, models)]  # fmt: skip
    case = [{**r, "case": "3->4", "distribution": "uniform"} for r in seed]
    native = [{**case[0], "way": "rocksdb_clip"}]
    summary = summarize(seed + case) | {"digest_equal_after_rescale": True}
    result = BenchResult("rescaling", "tiny", seed + case + native, summary)

    assert len(seed_rows(result)) == len(seed) and len(case_rows(result)) == len(case)
    table = cases_table(result).loc[("3->4", "uniform")]
    assert table.loc["read_all", "requests"] == 12 and table.loc["key_groups", "requests"] == 6
    slowest = max(r["modelled_seconds_ebs"] for r in case if r["way"] == "key_groups")
    assert table.loc["key_groups", "job_seconds_ebs"] == slowest
    assert list(table.index) == ["read_all", "per_key_index", "key_groups"]  # natives left out

    ratio = summary["bytes_read_ratio_naive_over_keygroups"]
    text = format_summary(result)
    assert text.startswith("seed 002, Figure 3") and f"{ratio:.3g}x" in text
    assert "digest equal after every rescale:        True" in text
    said = describe(result)
    assert "12 requests reading everything" in said and "6 requests by key-group ranges" in said
    assert f"{ratio:.2f}x the bytes of the key-group way" in said
