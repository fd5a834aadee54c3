"""The Spark session: master resolution, the Java check, and a real local-cluster run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from skewlab.engine.session import find_java, resolve_master
from skewlab.errors import JavaNotFoundError, SkewlabInputError


def test_master_comes_from_argument_then_environment_then_default(monkeypatch):
    monkeypatch.delenv("SKEWLAB_SPARK_MASTER", raising=False)
    assert resolve_master() == "local[*]"
    monkeypatch.setenv("SKEWLAB_SPARK_MASTER", "local-cluster[2,1,1024]")
    assert resolve_master() == "local-cluster[2,1,1024]"
    assert resolve_master("local[2]") == "local[2]"
    assert resolve_master("spark://host:7077") == "spark://host:7077"


def test_unknown_master_is_refused():
    with pytest.raises(SkewlabInputError, match="unknown Spark master 'lokal'"):
        resolve_master("lokal")
    for bad in ("local[abc]", "local[]", "local[2,x]"):  # Spark itself would fail only later
        with pytest.raises(SkewlabInputError, match="unknown Spark master"):
            resolve_master(bad)
    assert resolve_master("local[4,2]") == "local[4,2]"  # N threads, 2 task failures allowed


def test_java_17_or_newer_is_found():
    java = find_java()
    assert java.major >= 17


def test_missing_java_is_explained(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(JavaNotFoundError) as err:
        find_java()
    assert "JAVA_HOME" in str(err.value) and "environment.yml" in str(err.value)
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaNotFoundError, match="No Java found: Spark needs Java 17"):
        find_java()


def test_old_java_is_refused(monkeypatch, tmp_path):
    fake_home = tmp_path / "jdk8"
    (fake_home / "bin").mkdir(parents=True)
    java = fake_home / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"1.8.0_392\"' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(fake_home))
    with pytest.raises(JavaNotFoundError, match="found Java 8"):
        find_java()


def test_session_settings(spark):
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert int(spark.conf.get("spark.sql.shuffle.partitions")) == max(2, 2 * (os.cpu_count() or 1))
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    # a Python UDF runs in a worker with this interpreter
    from pyspark.sql import functions as F

    @F.udf("string")
    def worker_python(_):
        import sys as worker_sys

        return worker_sys.executable

    assert spark.range(1).select(worker_python("id")).first()[0] == sys.executable


def test_python_workers_reach_the_jvm_over_unix_domain_sockets_in_this_process_folder(spark):
    """No loopback TCP port between the JVM and its Python workers (see ``get_spark``)."""
    if not spark.sparkContext.master.startswith("local"):
        pytest.skip("Unix domain sockets are set for local masters only")
    from pathlib import Path

    from pyspark.sql import functions as F

    from skewlab.engine.session import _socket_dir

    @F.udf("string")
    def worker_socket_setting(_):
        import os as worker_os

        return worker_os.environ.get("PYTHON_UNIX_DOMAIN_ENABLED", "unset")

    assert spark.range(1).select(worker_socket_setting("id")).first()[0].lower() == "true"
    # the daemon's socket file sits in this process's folder (removed when the process exits)
    assert list(Path(_socket_dir()).glob(".*.sock"))


@pytest.mark.cluster
def test_local_cluster_gives_the_same_digest_as_pure_python(local_cluster):
    """Separate executor JVMs and Python workers: nothing may rely on driver-side globals."""
    script = textwrap.dedent(
        """
        from skewlab.engine.session import get_spark
        from skewlab.aggregates import reference_aggregate, result_digest, spark_reference_aggregate
        from skewlab.inputs.views import ViewSpec, generate_views

        spark = get_spark()
        assert spark.sparkContext.master.startswith("local-cluster"), spark.sparkContext.master
        df = generate_views(spark, ViewSpec(20_000, 1_000, 30, "zipf", 1.1, seed=4))
        rows = df.select("view_id", "user_id", "tweet_id").toPandas().itertuples(index=False)
        oracle = result_digest(reference_aggregate(rows))
        print(result_digest(spark_reference_aggregate(df)), oracle)
        """
    )
    proc = local_cluster.run(script, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    spark_digest, python_digest = proc.stdout.split()[-2:]
    assert spark_digest == python_digest


@pytest.mark.long
def test_skewlab_java_options_reach_the_driver_jvm_and_a_bad_one_is_refused_before_it_starts():
    script = textwrap.dedent(
        """
        from skewlab.engine.session import get_spark

        from skewlab.experiments.results import BenchResult

        spark = get_spark()
        print(BenchResult("probe", "tiny", [], {}).summary["java_options"])
        print(spark.sparkContext._jvm.java.lang.System.getProperty("skewlab.probe"))
        spark.stop()
        """
    )
    env = {**os.environ, "SKEWLAB_JAVA_OPTIONS": "-Dskewlab.probe=42 -XX:TieredStopAtLevel=1"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    *_, recorded, probe = proc.stdout.strip().splitlines()
    assert probe == "42"
    # a result made in that process records what its JVMs ran with
    assert recorded == "['-Dskewlab.probe=42', '-XX:TieredStopAtLevel=1']"
    env["SKEWLAB_JAVA_OPTIONS"] = "skewlab.probe=42"
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode != 0
    assert "SKEWLAB_JAVA_OPTIONS: 'skewlab.probe=42' is not a JVM option" in proc.stderr


def test_a_jvm_that_does_not_start_is_one_line_with_the_jvms_own_reason(tmp_path):
    """Spark refuses -Xmx among the JVM options (the heap is spark.driver.memory): the CLI's
    one line carries spark-submit's reason, not only where its log is."""
    env = {**os.environ, "SKEWLAB_JAVA_OPTIONS": "-Xmx1g"}
    proc = subprocess.run(
        [sys.executable, "-m", "skewlab", "run", "naive", "--views", "10"],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("skewlab run: failed: RuntimeError: Spark did not start: Error: Not "
                           "allowed to specify max heap(Xmx)"), last  # fmt: skip
    assert "the JVM's output is in " in last and proc.stderr.count("Traceback") == 0
