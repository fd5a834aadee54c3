"""``skewlab run --savepoint-at ... --resume-parallelism ...`` and ``skewlab savepoint PATH``:
a rescaled run printed beside the reference digest, and bad input (exit 2, one line)."""

from __future__ import annotations

import json
import re

import pytest

from skewlab.cli import main


def run_cli(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


VIEWS = ["--views", "2000", "--users", "200", "--tweets", "25", "--seed", "4"]


@pytest.fixture(scope="module")
def savepoint(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "sp"
    args = ["run", "naive", *VIEWS, "--parallelism", "2", "--savepoint-at", "900",
            "--resume-parallelism", "3", "--savepoint", str(path), "--json"]  # fmt: skip
    assert main(args) == 0
    return path


def test_a_rescaled_run_prints_both_jobs_and_the_reference_digest(savepoint, capsys, spark):
    args = ["run", "buffered", *VIEWS, "--parallelism", "3", "--savepoint-at", "700",
            "--resume-parallelism", "2", "--in-flight", "keyed_state", "--json"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    summary = out["summary"]
    assert summary["digest_equal"] and summary["result_digest"] == summary["reference_digest"]
    assert (summary["parallelism_before"], summary["parallelism_after"]) == (3, 2)
    assert (summary["records_before"], summary["records_after"]) == (700, 1300)
    assert out["after the restore"]["extra"]["recovery"]["restored_from"] == ["savepoint"]


def test_savepoint_checks_a_savepoint_whole_and_summarises_it(savepoint, capsys):
    assert main(["savepoint", str(savepoint), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["source_position"] == 900 and summary["parallelism"] == 2
    assert summary["operators"]["1:naive"]["keyed_states"] == {"value": 25}
    assert main(["savepoint", str(savepoint)]) == 0
    assert "operator 1:naive: keyed {'value': 25}" in capsys.readouterr().out


def one_line_error(argv, capsys) -> str:
    status = run_cli(argv)
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--savepoint-at", "10"], "--savepoint-at and --resume-parallelism go together"),
        (["--savepoint-at", "10", "--resume-parallelism", "200", "--parallelism", "2"],
         "new parallelism 200 exceeds the max parallelism 128"),
        (["--savepoint-at", "10", "--resume-parallelism", "5", "--max-parallelism", "4",
          "--parallelism", "2"], "exceeds the max parallelism 4"),
        (["--checkpoint-interval", "10"], "--checkpoint-interval needs --fail-at"),
        (["--fail-at", "10", "--savepoint-at", "5", "--resume-parallelism", "2"], "not both"),
        (["--savepoint-at", "0", "--resume-parallelism", "2"], "savepoint_at (--savepoint-at)"),
        (["--fail-at", "10"], "runs a failed task only once"),
    ],
)  # fmt: skip
def test_bad_savepoint_options_exit_2_with_one_line(args, message, capsys, spark):
    assert message in one_line_error(["run", "naive", "--views", "200", *args], capsys)


def test_a_savepoint_of_spark_sql_or_to_an_existing_path_is_refused(savepoint, capsys, spark):
    args = ["--views", "200", "--savepoint-at", "5", "--resume-parallelism", "2"]
    assert "cannot take savepoints" in one_line_error(["run", "spark_sql", *args], capsys)
    err = one_line_error(["run", "naive", *args, "--savepoint", str(savepoint)], capsys)
    assert "already exists" in err


def test_savepoint_refuses_damaged_or_foreign_paths(savepoint, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    assert "is a file" in one_line_error(["savepoint", str(tmp_path / "file")], capsys)
    assert "is empty" in one_line_error(["savepoint", str(tmp_path / "empty")], capsys)
    err = one_line_error(["savepoint", str(savepoint), "--max-parallelism", "64"], capsys)
    assert "max parallelism 128; this job has 64" in err
    state = next(savepoint.glob("*/keyed-value/subtask-0.kgs"))
    state.write_bytes(state.read_bytes()[:-3])
    assert "shorter than its offsets say" in one_line_error(["savepoint", str(savepoint)], capsys)


def test_savepoint_refuses_a_flipped_register_bit_naming_the_file_and_key_group(
    spark, tmp_path, capsys
):
    path = tmp_path / "sp"
    args = ["run", "naive", *VIEWS, "--parallelism", "2", "--savepoint-at", "900",
            "--resume-parallelism", "2", "--savepoint", str(path), "--json"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    state = next(path.glob("*/keyed-value/subtask-0.kgs"))
    data = bytearray(state.read_bytes())
    data[-20] ^= 0x04  # a register byte of the file's last value (before its block checksum)
    state.write_bytes(bytes(data))
    err = one_line_error(["savepoint", str(path)], capsys)
    assert re.search(
        r"state file subtask-0\.kgs: key group \d+: its \d+ bytes hash to 0x[0-9a-f]{16}, the "
        r"file's checksum is 0x[0-9a-f]{16}, the metadata's 0x[0-9a-f]{16}",
        err,
    ), err


def test_a_kept_savepoint_resumes_from_the_command_line(tmp_path, capsys, spark):
    savepoint = tmp_path / "kept"  # its own: another test here damages the module's savepoint
    take = ["run", "naive", *VIEWS, "--parallelism", "2", "--savepoint-at", "900",
            "--resume-parallelism", "3", "--savepoint", str(savepoint), "--json"]  # fmt: skip
    assert main(take) == 0
    capsys.readouterr()
    args = ["run", "naive", *VIEWS, "--from-savepoint", str(savepoint)]
    assert main([*args, "--resume-parallelism", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"] == {
        "savepoint": str(savepoint), "source_position": 900, "parallelism_before": 2,
        "parallelism_after": 3, "records_after": 1100, "restored_keys": 25,
    }  # fmt: skip
    assert out["after the restore"]["extra"]["recovery"]["restored_from"] == ["savepoint"]
    other = ["run", "naive", *VIEWS[:-1], "5", "--from-savepoint", str(savepoint)]
    assert "was taken on other input: 900 records before" in one_line_error(other, capsys)
    salted = ["run", "salted", *VIEWS, "--from-savepoint", str(savepoint)]
    assert "taken by strategy 'naive'" in one_line_error(salted, capsys)
    both = [*args, "--savepoint-at", "10"]
    assert "give no --savepoint-at" in one_line_error(both, capsys)


def test_the_savepoint_command_has_help_with_examples(capsys):
    assert run_cli(["savepoint", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "skewlab savepoint" in out
