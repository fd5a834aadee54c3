"""The skewlab command line: generate end to end, and bad arguments (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from skewlab.cli import main
from skewlab.cli.run import strategy_options
from skewlab.strategies import STRATEGIES


def run_cli(argv: list[str]) -> int:
    """The exit status of ``skewlab ARGV`` (argparse's own errors exit via SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _read(spark, path) -> pd.DataFrame:
    return spark.read.parquet(str(path)).toPandas().sort_values("seq").reset_index(drop=True)


def test_generate_writes_the_views_and_is_repeatable(spark, tmp_path, capsys):
    args = ["generate", "--views", "10000", "--users", "2500", "--tweets", "20", "--seed", "1"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert "wrote 10,000 views (20 distinct tweets, uniform)" in capsys.readouterr().out
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    first, second = _read(spark, tmp_path / "a"), _read(spark, tmp_path / "b")
    assert len(first) == 10_000
    assert first["tweet_id"].nunique() == 20
    pd.testing.assert_frame_equal(first, second)
    assert (tmp_path / "a" / "_skewlab_views.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--views", "-5"], "n_views (--views) must be a whole number >= 0, got -5"),
        (["--views", "10", "--tweets", "0"], "n_tweets (--tweets) must be a whole number >= 1"),
        (["--views", "10", "--users", "-1"], "n_users (--users) must be a whole number >= 1"),
        (["--views", "10", "--distribution", "pareto"], "distribution (--distribution) 'pareto'"),
        (["--views", "10", "--distribution", "zipf", "--skew", "0"], "Zipf skew (--skew)"),
        (["--views", "10", "--distribution", "zipf", "--skew", "-2"], "Zipf skew (--skew)"),
        (["--views", "ten"], "argument --views: invalid int value: 'ten'"),
        (["--tweets", "3"], "the following arguments are required: --views"),
        (["--views", "10", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_generate_bad_arguments_exit_2_with_one_line(args, message, capsys):
    status = run_cli(["generate", *args])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert message in err
    assert len(err.splitlines()) == 1, err


def test_generate_refuses_an_output_path_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "views.parquet"
    target.write_text("a file")
    assert main(["generate", "--views", "10", "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"skewlab generate: error: output path '{target}' exists and is a file, not a directory"
    )


def test_generate_never_deletes_a_users_files(tmp_path, capsys):
    target = tmp_path / "data"
    target.mkdir()
    (target / "thesis.tex").write_text("three years of work")
    for extra in ([], ["--overwrite"]):
        assert main(["generate", "--views", "10", "--out", str(target), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.splitlines() == [
            f"skewlab generate: error: output directory '{target}' is not empty and is not a view "
            "set skewlab wrote (no _skewlab_views.json); choose a new or empty directory"
        ]
    assert (target / "thesis.tex").read_text() == "three years of work"
    assert sorted(p.name for p in target.iterdir()) == ["thesis.tex"]


def test_generate_replaces_its_own_view_set_only_with_overwrite(spark, tmp_path, capsys):
    target = tmp_path / "views"
    args = ["generate", "--views", "30", "--tweets", "3", "--out", str(target)]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 2
    assert capsys.readouterr().err.strip() == (
        f"skewlab generate: error: output directory '{target}' already holds a view set; "
        "pass --overwrite to replace it"
    )
    (target / "notes.txt").write_text("mine")
    assert main([*args, "--overwrite"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"skewlab generate: error: output directory '{target}' holds a view set and also "
        "'notes.txt', which skewlab did not write; move it away first"
    )
    (target / "notes.txt").unlink()
    assert main([*args[:2], "40", *args[3:], "--overwrite"]) == 0
    assert spark.read.parquet(str(target)).count() == 40


def test_the_installed_entry_point_prints_no_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "skewlab", "generate", "--views", "10", "--tweets", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "skewlab generate: error: n_tweets (--tweets) must be a whole number >= 1, got 0"
    ]


@pytest.mark.parametrize("command", ["generate", "report", "lab", "run", "bench"])
def test_every_command_has_help_with_examples(command, capsys):
    assert run_cli([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and f"skewlab {command}" in out


RUN_JSON_KEYS = {
    "strategy",
    "records_in",
    "records_out",
    "operator_records_per_second",
    "e2e_records_per_second",
    "state_reads",
    "state_writes",
    "cache_hit_ratio",
    "latency_p50_ms",
    "latency_p99_ms",
    "result_digest",
    "modelled_io_seconds",
}


def test_run_prints_one_json_object_with_the_documented_keys(spark, capsys):
    from skewlab.aggregates import result_digest, spark_reference_aggregate
    from skewlab.inputs.views import ViewSpec, generate_views

    args = ["--views", "3000", "--users", "200", "--tweets", "7", "--seed", "3"]
    assert main(["run", "cached", *args, "--cache-entries", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= RUN_JSON_KEYS
    assert out["strategy"] == "cached" and out["records_in"] == 3000
    assert 0 < out["cache_hit_ratio"] < 1
    reference = spark_reference_aggregate(generate_views(spark, ViewSpec(3000, 200, 7, seed=3)))
    assert out["result_digest"] == result_digest(reference)


def test_run_reads_a_saved_view_set_and_prints_a_table(spark, tmp_path, capsys):
    assert main(["generate", "--views", "500", "--tweets", "3", "--out", str(tmp_path / "v")]) == 0
    assert main(["run", "sorted", "--views", str(tmp_path / "v")]) == 0
    out = capsys.readouterr().out
    assert "records_in                   500" in out
    assert "keys                         3" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fastest"], "unknown strategy 'fastest'"),
        (["naive", "--backend", "memcached"], "unknown backend (--backend) 'memcached'"),
        (["buffered", "--max-count", "0"], "max_count (--max-count) must be a whole number >= 1"),
        (["buffered", "--trigger-interval-ms", "-5"], "trigger_interval_ms"),
        (["naive", "--parallelism", "300", "--max-parallelism", "128"], "parallelism"),
        (["naive", "--max-parallelism", "0"], "from 1 to 32768"),
        (["sorted", "--salt-buckets", "4"], "strategy 'sorted' has no option --salt-buckets"),
        (["naive", "--max-count", "10"], "its options: --backend, --cache-entries"),
        (["salted", "--salt-buckets", "0"], "salt_buckets (--salt-buckets)"),
        (["naive", "--views", "no/such/dir"], "neither a number of views nor an existing"),
        (["naive", "--tweets", "0"], "n_tweets (--tweets)"),
        (["naive", "--disk", "floppy"], "unknown disk profile 'floppy'"),
        (["dchoices", "--choices", "1"], "choices (--choices) must be a whole number >= 2"),
        (
            ["dchoices", "--views", "50", "--choices", "3", "--parallelism", "2"],
            "at most the parallelism 2",
        ),
        (["wchoices", "--hot-threshold", "1.5"], "strictly between 0 and 1"),
        (["pkg", "--choices", "3"], "strategy 'pkg' has no option --choices"),
    ],
)
def test_run_bad_arguments_exit_2_with_one_line(args, message, capsys):
    status = run_cli(["run", *args])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert message in err
    assert len(err.splitlines()) == 1, err


def test_bench_refuses_bad_runs(capsys):
    assert run_cli(["bench", "buffering", "--runs", "0"]) == 2
    assert "runs (--runs) must be a whole number >= 1" in capsys.readouterr().err


RUN_DEPRECATION = (
    "skewlab run naive: --latency-profile is deprecated, use --disk "
    "(it will be removed in the next release)"
)


def test_run_latency_profile_still_works_and_prints_one_deprecation_line(tmp_path, capsys):
    from skewlab.cli import build_parser
    from skewlab.cli.run import job_from_args
    from skewlab.iomodel.profiles import list_disk_profiles, load_disk_profile, save_profile

    disk = save_profile(load_disk_profile("ebs-article"), tmp_path / "disk.json")
    args = build_parser().parse_args(["run", "naive", "--disk", str(disk)])
    assert job_from_args(args).disk_profile == str(disk)
    assert capsys.readouterr().err == ""
    args = build_parser().parse_args(["run", "naive", "--latency-profile", str(disk)])
    assert job_from_args(args).disk_profile == str(disk)
    assert capsys.readouterr().err.splitlines() == [RUN_DEPRECATION]
    assert build_parser().parse_args(["run", "naive"]).disk == "ebs-article"

    assert run_cli(["run", "naive", "--latency-profile", "floppy"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        RUN_DEPRECATION,
        "skewlab run: error: unknown disk profile 'floppy'; known: "
        + ", ".join(list_disk_profiles()),
    ]


def _own_options(help_text: str, strategy: str) -> list[str]:
    """The options listed in the "<strategy>'s options" group of a help text."""
    block = help_text.split(f"{strategy}'s options:\n", 1)[1].split("\n\n", 2)[1]
    return [line.split()[0] for line in block.splitlines() if line.startswith("  --")]


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_run_strategy_help_lists_exactly_its_own_fields_as_options(strategy, capsys):
    from dataclasses import fields

    assert run_cli(["run", strategy, "--help"]) == 0
    out = capsys.readouterr().out
    cls = STRATEGIES[strategy]
    flags = ["--" + f.name.replace("_", "-") for f in fields(cls)]
    assert sorted(_own_options(out, strategy)) == sorted(flags)
    for f in fields(cls):  # each with its one-line doc
        assert " ".join(f.metadata["doc"].split()[:3]) in " ".join(out.split())
    assert "examples:" in out and f"skewlab run {strategy}" in out
    assert ("--savepoint-at N" in out) == cls.resumable  # savepoints: only where they work
    others = {flag for c in STRATEGIES.values() for flag in strategy_options(c)} - set(flags)
    assert not [flag for flag in others if f"{flag} " in out], "another strategy's option"


def test_run_rejects_every_other_strategys_option_with_one_line(capsys):
    for strategy, cls in STRATEGIES.items():
        own = strategy_options(cls)
        foreign = {flag for c in STRATEGIES.values() for flag in strategy_options(c)} - set(own)
        for flag in sorted(foreign):
            assert run_cli(["run", strategy, "--views", "10", flag, "1"]) == 2
            err = capsys.readouterr().err.strip()
            assert err == (
                f"skewlab run: error: strategy {strategy!r} has no option {flag}; "
                f"its options: {', '.join(own)}"
            )


def test_run_options_are_built_from_the_parameters_classes():
    from skewlab.cli import build_parser
    from skewlab.cli.run import strategy_from_args
    from skewlab.strategies import Buffered, Streaming

    argv = ["run", "buffered", "--max-count", "7", "--trigger-interval-ms", "0", "--buffer", "list"]
    args = build_parser().parse_args(argv)
    assert strategy_from_args(args) == Buffered(max_count=7, trigger_interval_ms=0, buffer="list")
    args = build_parser().parse_args(["run", "streaming", "--max-rows-per-trigger", "50"])
    assert strategy_from_args(args) == Streaming(max_rows_per_trigger=50)
    args = build_parser().parse_args(["run", "naive", "--precision", "12"])
    assert strategy_from_args(args).precision == 12


def test_run_savepoint_options_of_a_strategy_without_savepoints_get_its_one_line(capsys):
    for strategy, cls in STRATEGIES.items():
        if cls.resumable:
            continue
        assert run_cli(["run", strategy, "--views", "10", "--fail-at", "3"]) == 2
        err = capsys.readouterr().err.strip()
        assert f"strategy {strategy!r} cannot take savepoints here" in err
        assert len(err.splitlines()) == 1


def test_run_help_lists_each_strategy_with_its_own_options(capsys):
    assert run_cli(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for strategy, cls in STRATEGIES.items():
        assert f"{strategy} {' '.join(strategy_options(cls))}" in out
    assert "savepoints and failures (naive, salted, buffered, cached, sorted):" in out


def test_a_failure_during_the_job_is_one_line_and_exit_1_its_traceback_with_debug(
    spark, tmp_path, capsys
):
    """A view set whose Parquet part is damaged inside (its magic bytes intact, so it passes
    the up-front check): Spark's read fails in a task; the CLI names what failed in one line."""
    from skewlab.inputs.views import ViewSpec, generate_views

    views = tmp_path / "views"
    generate_views(spark, ViewSpec(500, 20, 5)).coalesce(1).write.parquet(str(views))
    part = next(views.glob("part-*"))
    data = bytearray(part.read_bytes())
    data[4:68] = b"\xff" * 64
    part.write_bytes(bytes(data))
    assert main(["run", "naive", "--views", str(views)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("skewlab run: failed: ") and "FAILED_READ_FILE" in err, err
    assert "--debug" in err
    with pytest.raises(Exception, match="o[0-9]+"):  # the Py4J error itself, whole
        main(["--debug", "run", "naive", "--views", str(views)])


def test_a_bad_driver_memory_is_refused_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("SKEWLAB_DRIVER_MEMORY", "lots")
    assert main(["run", "naive", "--views", "100"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "skewlab run: error: SKEWLAB_DRIVER_MEMORY: 'lots' is not a memory size: use a whole "
        "number with a unit k, m, g or t (e.g. 2g, 4096m)"
    )


def test_a_python_workers_failure_is_named_by_its_own_exception_line(spark):
    """A real Python worker's failure: the one line is the worker's exception, not Spark's
    'An exception was thrown from the Python worker:'."""
    from pyspark.sql import functions as F

    from skewlab.cli import failure_line

    @F.udf("long")
    def boom(x):
        raise ValueError(f"no value for {x}")

    with pytest.raises(Exception) as info:
        spark.range(3).select(boom("id")).collect()
    line = failure_line(info.value)
    assert "\n" not in line
    assert line.startswith("PythonException: ValueError: no value for "), line


def test_a_savepoint_path_under_a_file_is_refused_before_any_job(tmp_path, capsys):
    """It used to fail with FileExistsError after the first job had run."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("a user's file")
    argv = ["run", "naive", "--views", "200", "--savepoint-at", "100", "--resume-parallelism",
            "2", "--savepoint", str(a_file / "sp")]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        f"skewlab run: error: savepoint (--savepoint) '{a_file / 'sp'}' cannot be made: "
        f"'{a_file}' is a file"
    )
    assert a_file.read_text() == "a user's file"


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("JAVA_HOME", "/nonexistent-jdk", "JAVA_HOME is set to '/nonexistent-jdk'"),
        ("SKEWLAB_SPARK_MASTER", "local[abc]", "unknown Spark master 'local[abc]'"),
    ],
)
def test_a_newcomers_first_errors_exit_2_in_one_line_before_any_work(
    monkeypatch, capsys, tmp_path, variable, value, says
):
    monkeypatch.setenv(variable, value)
    out = tmp_path / "report"
    for args in (
        ["run", "naive", "--views", "100"],
        ["report", "--size", "tiny", "--out", str(out)],
    ):
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and says in err, err
    assert not out.exists()  # the report refused before writing anything
