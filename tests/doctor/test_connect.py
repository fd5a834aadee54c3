"""The doctor through Spark Connect: a Spark Connect server started here (pyspark's own, in a
JVM of its own), and the doctor's three modes run as a user of a remote Spark runs them
(``--remote sc://HOST:PORT`` or ``SPARK_REMOTE``) -- their figures held against the embedded
session's, and against exact counts where the doctor counts. The checks against a server are
long end-to-end checks (``--e2e``, as CI runs them); the refusals run in every test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from skewlab.cli import main
from skewlab.doctor.checkpoint_state import count_stream
from skewlab.doctor.spark_connect import (
    CONNECT_SCOPE,
    check_connect_server,
    doctor_master,
)
from skewlab.errors import SkewlabInputError


def remote_doctor(url: str | None, *args: str, env: dict | None = None):
    """``skewlab doctor ARGS`` in a process of its own, through the server at ``url``."""
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "SPARK_REMOTE" or not url}
    remote = ["--remote", url] if url else []
    return subprocess.run(
        [sys.executable, "-m", "skewlab", "doctor", *args, *remote],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip


def embedded_doctor(capsys, *args: str) -> str:
    """``skewlab doctor ARGS`` in this process, on the tests' embedded Spark."""
    capsys.readouterr()
    assert main(["doctor", *args]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> Path:
    """6,000 records: one key 2,400 of them, a Zipf tail of 1,000 keys, a time column."""
    import numpy as np

    rng = np.random.default_rng(7)
    tail = rng.zipf(1.3, 3_600) % 1_000
    keys = np.concatenate([np.full(2_400, 99_999), tail])
    rng.shuffle(keys)
    frame = pd.DataFrame({"user_id": keys.astype("int64"), "ts": np.arange(keys.size) * 0.001})
    path = tmp_path_factory.mktemp("records") / "clicks.parquet"
    frame.to_parquet(path)
    return path


@pytest.mark.e2e  # a Spark Connect server's JVM of its own: CI runs it (--e2e)
@pytest.mark.parametrize(
    "options",
    [(), ("--engine", "kafka", "--partitions", "6", "--sketch-threshold", "0.05")],
    ids=["defaults", "sketch"],
)
def test_records_diagnosed_through_spark_connect_give_the_embedded_sessions_figures(
    spark, capsys, connect_server, records, options
):
    args = (str(records), "--key", "user_id", "--time", "ts", "--json", *options)
    done = remote_doctor(connect_server, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    remote = json.loads(done.stdout)
    embedded = json.loads(embedded_doctor(capsys, *args))
    assert remote == embedded
    # and the figures are the records': the hot key and its exact count
    top = remote["hot_keys"]["top"][0]
    assert (top["key"], top["records"]) == (99_999, 2_400)


@pytest.mark.e2e
def test_a_checkpoints_state_read_through_spark_connect_is_the_embedded_sessions(
    spark, capsys, connect_server, tmp_path
):
    keys = ["hot"] * 3_000 + [f"k{j}" for j in range(500)]
    frame = spark.createDataFrame(pd.DataFrame({"page": keys, "n": range(len(keys))}))
    checkpoint = count_stream(spark, frame, "page", tmp_path / "q", partitions=4)
    args = ("--state", str(checkpoint), "--json", "--state-partitions", "2", "8")
    # the server's URL from Spark Connect's own variable this time
    done = remote_doctor(None, *args, env={"SPARK_REMOTE": connect_server})
    assert done.returncode == 0, done.stderr[-3000:]
    remote = json.loads(done.stdout)
    assert remote == json.loads(embedded_doctor(capsys, *args))
    (store,) = remote["stores"]
    assert store["rows"] == 501 and sum(p["rows"] for p in store["partitions"]) == 501
    # a count holds one row a key: the hot key's 3,000 records are 40 bytes of state, as any's
    assert {(k["rows"], k["bytes"]) for k in store["top_keys"]} == {(1, 40)}
    assert store["bytes"] == 501 * 40


def test_the_doctors_master_is_remote_then_spark_remote_then_skewlabs_own(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("SKEWLAB_SPARK_MASTER", "local[2]")
    assert doctor_master() == "local[2]"
    monkeypatch.setenv("SPARK_REMOTE", "sc://spark.example.com:15002")
    assert doctor_master() == "sc://spark.example.com:15002"
    assert doctor_master("sc://other:15002") == "sc://other:15002"
    with pytest.raises(SkewlabInputError, match="--remote 'spark://h:7077' is not a Spark Conn"):
        doctor_master("spark://h:7077")


def test_a_spark_connect_url_nothing_answers_at_is_one_line_exit_2(unanswered_url):
    with pytest.raises(SkewlabInputError, match="names no host"):
        check_connect_server("sc://:15002")
    done = remote_doctor(unanswered_url, "clicks.parquet", "--key", "k")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("skewlab doctor: error: no Spark Connect server answers")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["run", "naive", "--size", "tiny"], {"SPARK_REMOTE": "sc://127.0.0.1:15002"}),
        (["run", "naive", "--size", "tiny", "--master", "sc://127.0.0.1:15002"], {}),
        (["report", "--size", "tiny"], {"SKEWLAB_SPARK_MASTER": "sc://127.0.0.1:15002"}),
    ],
    ids=["SPARK_REMOTE", "--master", "SKEWLAB_SPARK_MASTER"],
)
def test_the_lab_outside_the_doctor_refuses_spark_connect_in_one_line_before_any_work(
    capsys, monkeypatch, tmp_path, argv, env
):
    monkeypatch.chdir(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == f"skewlab {argv[0]}: error: skewlab {argv[0]} cannot run over Spark Connect "
        f"(sc://127.0.0.1:15002): {CONNECT_SCOPE}"
    )
    assert list(tmp_path.iterdir()) == []  # no work: nothing written
