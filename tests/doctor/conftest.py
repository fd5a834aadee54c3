"""The doctor's tests' shared fixtures: a Spark Connect server of their own."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skewlab.engine.session import java_options


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unanswered_url() -> str:
    """An ``sc://`` URL of a port nothing listens on."""
    return f"sc://127.0.0.1:{_free_port()}"


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    """A Spark Connect server on this machine, ``local[2]``, its Python workers this
    interpreter; yields its ``sc://`` URL."""
    import pyspark

    port = _free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("SPARK_REMOTE", None)
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(submit), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
             "--name", "skewlab-tests-connect", "--master", "local[2]",
             "--driver-java-options", java_options(""),
             "--conf", f"spark.connect.grpc.binding.port={port}",
             "--conf", "spark.ui.enabled=false"],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
