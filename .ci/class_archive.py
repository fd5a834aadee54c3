"""Write an archive of the classes Spark's JVM loads (class-data sharing, JDK 13+) and print the
``SKEWLAB_JAVA_OPTIONS`` that start later JVMs from it.

A Spark JVM spends about half of its start loading and verifying Spark's classes. One JVM here
runs what most of the tests' JVMs run first (a strategy on RocksDB, Spark SQL's aggregation, a
collect to pandas) and at its exit writes every class it loaded into ``PATH``
(``-XX:ArchiveClassesAtExit``); a JVM started with ``-XX:SharedArchiveFile=PATH`` maps them
instead. A JVM whose class path differs from the writer's (a local-cluster executor) or that
finds no archive starts as it would without the option, silently. The options printed are the
tests' own (the quick JIT) with the archive added.

CI writes it while it runs ruff and before the README's test command, which runs without it as
a newcomer's does; the steps after that start their JVMs from it. A developer who runs the
tests often can do the same::

    export SKEWLAB_JAVA_OPTIONS="$(python .ci/class_archive.py /tmp/spark-classes.jsa)"
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from skewlab.engine.session import JAVA_OPTIONS_ENV
from skewlab.report.render import QUICK_JIT


def write_archive(path: Path) -> str:
    """Run Spark's first jobs in a JVM that writes the classes it loaded to ``path`` at its exit;
    wait for it to exit and return the options that start a JVM from the archive."""
    if path.exists():
        sys.exit(f"class_archive: {path} exists; give a path to a new file")
    os.environ[JAVA_OPTIONS_ENV] = f"{QUICK_JIT} -Xlog:cds=off -XX:ArchiveClassesAtExit={path}"
    from pyspark import SparkContext

    from skewlab import JobConfig, ViewSpec, generate_views, get_spark, run_strategy

    spark = get_spark(app_name="class-archive")
    views = generate_views(spark, ViewSpec(n_views=2_000, n_users=500, n_tweets=20))
    for strategy in ("naive", "spark_sql"):
        run_strategy(views, strategy, JobConfig(parallelism=2))
    views.limit(10).toPandas()  # Arrow's collect, as the notebooks' tables
    spark.stop()
    jvm = SparkContext._gateway.proc  # it writes the archive as it exits: wait for that
    jvm.stdin.close()
    jvm.wait(timeout=300)
    if not path.exists():
        sys.exit(f"class_archive: the JVM exited ({jvm.returncode}) without writing {path}")
    return f"{QUICK_JIT} -XX:SharedArchiveFile={path}"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python .ci/class_archive.py PATH  (a new file, e.g. /tmp/spark.jsa)")
        sys.exit(2)
    print(write_archive(Path(sys.argv[1])))
