"""The one place a SparkSession is made.

The master comes from the ``master`` argument, then ``$SKEWLAB_SPARK_MASTER``, then ``local[*]``
(an embedded Spark: a laptop needs nothing but Java 17+). Logs are quiet, the UI is off unless
asked for, shuffle partitions are sized for the machine, and the Python workers run the very
interpreter that runs the driver (``PYSPARK_PYTHON``), so they import the same pandas.

Example::

    >>> from skewlab.engine.session import get_spark
    >>> spark = get_spark()                       # local[*]
    >>> spark.range(3).count()
    3
    >>> spark = get_spark("local-cluster[2,1,1024]")  # separate executor JVMs  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from skewlab.errors import JavaNotFoundError, SkewlabInputError

DEFAULT_MASTER = "local[*]"
MASTER_ENV = "SKEWLAB_SPARK_MASTER"
MIN_JAVA = 17
#: local, local[N], local[*], local[N,F] (F: task failures allowed), local-cluster[W,C,MB], or a
#: URL with a scheme (spark://, yarn://, k8s://, sc:// ...)
_MASTER_PATTERN = re.compile(
    r"^(local(\[(\d+|\*)(,\s*\d+)?\])?|local-cluster\[\d+,\s*\d+,\s*\d+\]|[a-z]+://.+)$"
)

_JAVA_FIX = (
    "Install a JDK 17 or newer and put its 'java' on PATH or set JAVA_HOME: "
    "'conda env create -f environment.yml' brings openjdk 17, or on Debian/Ubuntu "
    "'apt-get install openjdk-17-jre-headless', on macOS 'brew install openjdk@17'."
)


@dataclass(frozen=True)
class JavaRuntime:
    """A Java runtime found on this machine."""

    executable: str
    major: int
    version_line: str


def find_java() -> JavaRuntime:
    """Find the Java that Spark will launch (``$JAVA_HOME/bin/java``, else ``java`` on PATH).

    Raises :class:`~skewlab.errors.JavaNotFoundError` with the fix when there is none or it is
    older than Java 17.

    Example::

        >>> find_java().major >= 17
        True
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if not candidate.exists():
            raise JavaNotFoundError(
                f"JAVA_HOME is set to {java_home!r} but {candidate} does not exist. {_JAVA_FIX}"
            )
        executable = str(candidate)
    else:
        found = shutil.which("java")
        if found is None:
            raise JavaNotFoundError(f"No Java found: Spark needs Java {MIN_JAVA}+. {_JAVA_FIX}")
        executable = found
    try:
        proc = subprocess.run(
            [executable, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as exc:
        raise JavaNotFoundError(f"Could not run {executable}: {exc}. {_JAVA_FIX}") from exc
    text = proc.stderr + proc.stdout
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if proc.returncode != 0 or match is None:
        raise JavaNotFoundError(f"{executable} -version failed: {text.strip()[:200]}. {_JAVA_FIX}")
    major = int(match.group(1))
    if major == 1:  # "1.8.0_x" style
        major = int(match.group(2) or 0)
    line = text.strip().splitlines()[0]
    if major < MIN_JAVA:
        raise JavaNotFoundError(
            f"Spark 4 needs Java {MIN_JAVA}+, found Java {major} at {executable} ({line}). "
            f"{_JAVA_FIX}"
        )
    return JavaRuntime(executable=executable, major=major, version_line=line)


def resolve_master(master: str | None = None) -> str:
    """The master URL: the argument, else ``$SKEWLAB_SPARK_MASTER``, else ``local[*]``.

    Example::

        >>> resolve_master("local[2]")
        'local[2]'
    """
    chosen = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
    chosen = chosen.strip()
    if not _MASTER_PATTERN.match(chosen):
        raise SkewlabInputError(
            f"unknown Spark master {chosen!r}: use local, local[N], local[*], "
            "local-cluster[W,C,MB], spark://HOST:PORT, yarn:// or k8s:// "
            "(or sc:// for Spark Connect)"
        )
    return chosen


def check_spark_environment(master: str | None = None) -> str:
    """What Spark needs from this machine, checked before any work starts: a master URL skewlab
    knows (:func:`resolve_master`) and Java 17+ (:func:`find_java`). Returns the master URL;
    raises :class:`~skewlab.errors.SkewlabInputError` or
    :class:`~skewlab.errors.JavaNotFoundError` with the fix (the CLI exits 2 on either).

    Example::

        >>> check_spark_environment("local[2]")
        'local[2]'
        >>> check_spark_environment("local[abc]")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown Spark master 'local[abc]': use local, local[N], local[*], local-cluster[W,C,MB], spark://HOST:PORT, yarn:// or k8s:// (or sc:// for Spark Connect)
    """  # noqa: E501
    url = resolve_master(master)
    find_java()
    return url


def default_shuffle_partitions() -> int:
    """Two shuffle partitions per core of this machine (Spark's 200 is far too many locally)."""
    return max(2, 2 * (os.cpu_count() or 1))


def _log4j_options() -> str:
    conf = resources.files("skewlab") / "resources" / "log4j2.properties"
    return f"-Dlog4j2.configurationFile={conf}"


#: Extra options for Spark's JVMs (driver and executors), read once, at the JVM's start.
JAVA_OPTIONS_ENV = "SKEWLAB_JAVA_OPTIONS"


def java_options(extra: str | None = None) -> str:
    """The options skewlab starts Spark's JVMs with: its log settings, then ``extra``
    (default ``$SKEWLAB_JAVA_OPTIONS``), each of which must be a JVM option (``-...``).

    ``-XX:TieredStopAtLevel=1`` (the quick JIT compiler only) makes runs of a few seconds,
    such as the tiny profile's, start faster; leave it unset when measuring, since it slows
    long runs.

    Example::

        >>> java_options("-XX:TieredStopAtLevel=1").split()[-1]
        '-XX:TieredStopAtLevel=1'
        >>> java_options("TieredStopAtLevel=1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: ...'TieredStopAtLevel=1' is not a JVM option: ...
    """
    extra = os.environ.get(JAVA_OPTIONS_ENV, "") if extra is None else extra
    for option in extra.split():
        if not option.startswith("-"):
            raise SkewlabInputError(
                f"{JAVA_OPTIONS_ENV}: {option!r} is not a JVM option: each must start with "
                "'-' (e.g. -XX:TieredStopAtLevel=1)"
            )
    return " ".join([_log4j_options(), *extra.split()])


def java_options_in_use() -> list[str] | None:
    """The extra options (``$SKEWLAB_JAVA_OPTIONS``) this process's running Spark driver was
    started with: ``[]`` for none, ``None`` when no Spark driver runs in this process.

    Benchmark results record it (a quick-JIT run's figures are not comparable with a default
    one's).

    Example::

        >>> get_spark() is not None and java_options_in_use() == []  # doctest: +SKIP
        True
    """
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        return None
    # Spark puts its own defaults first; java_options() gave the log settings, then the extras
    started = (context.getConf().get("spark.driver.extraJavaOptions", "") or "").split()
    log = _log4j_options()
    return started[started.index(log) + 1 :] if log in started else []


#: The driver JVM's heap unless ``$SKEWLAB_DRIVER_MEMORY`` says otherwise (e.g. ``2g``).
DRIVER_MEMORY = "4g"
DRIVER_MEMORY_ENV = "SKEWLAB_DRIVER_MEMORY"


_MEMORY = re.compile(r"[1-9][0-9]*([kmgtp]b?|b)?", re.IGNORECASE)


def driver_memory(value: str | None = None) -> str:
    """The driver JVM's heap: ``value`` (default ``$SKEWLAB_DRIVER_MEMORY``, else
    :data:`DRIVER_MEMORY`), checked as Spark reads a memory size before a JVM starts.

    Example::

        >>> driver_memory("2g")
        '2g'
        >>> driver_memory("lots")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: SKEWLAB_DRIVER_MEMORY: 'lots' is not a memory size: ...
    """
    if value is None:
        value = os.environ.get(DRIVER_MEMORY_ENV) or DRIVER_MEMORY
    value = value.strip()
    if not _MEMORY.fullmatch(value):
        raise SkewlabInputError(
            f"{DRIVER_MEMORY_ENV}: {value!r} is not a memory size: use a whole number with a "
            "unit k, m, g or t (e.g. 2g, 4096m)"
        )
    return value


@functools.cache
def _socket_dir() -> str:
    """This process's folder for Spark's socket files, removed when the process exits.

    Spark leaves its Python daemon's socket file behind; one folder per process keeps a run's
    files together and takes them away with it.
    """
    folder = tempfile.mkdtemp(prefix="skewlab-sockets-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def get_spark(
    master: str | None = None,
    *,
    app_name: str = "skewlab",
    ui: bool = False,
    shuffle_partitions: int | None = None,
    config: dict[str, str] | None = None,
):
    """Return the SparkSession skewlab uses (made once per process, then reused).

    Args:
        master: a Spark master URL; default ``$SKEWLAB_SPARK_MASTER`` or ``local[*]``. A URL
            starting with ``sc://`` makes a Spark Connect session.
        app_name: the application name shown in Spark's UI and logs.
        ui: start Spark's web UI (off by default: quiet, and no port taken).
        shuffle_partitions: ``spark.sql.shuffle.partitions``; default two per core.
        config: extra Spark settings.

    Example::

        >>> spark = get_spark(config={"spark.sql.session.timeZone": "UTC"})
        >>> spark.conf.get("spark.sql.session.timeZone")
        'UTC'
    """
    from pyspark.sql import SparkSession

    url = check_spark_environment(master)
    # The workers must run this interpreter, or they cannot import pandas/skewlab.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    on_this_machine = url.startswith("local")  # local[*] and local-cluster: every JVM is here
    if on_this_machine:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    if url.startswith("sc://"):
        builder = SparkSession.builder.remote(url)
    else:
        builder = SparkSession.builder.master(url)
        jvm_options = java_options()
        builder = (
            builder.config("spark.ui.enabled", str(ui).lower())
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", jvm_options)
            .config("spark.executor.extraJavaOptions", jvm_options)
            .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
            # the driver JVM's heap (read once, at its start): Spark's 1g default cannot hold
            # the task results of a full-profile collect (200,000 tweets' registers)
            .config("spark.driver.memory", driver_memory())
        )
        if on_this_machine:
            # Python workers (and a transformWithState worker's state server) talk over Unix
            # domain sockets, not loopback TCP: Spark's loopback server socket takes a backlog
            # of 1 on an ephemeral port, and another local client still reconnecting to that
            # port (a shut-down Jupyter kernel's ZMQ peer, for one) can fill it, so the worker
            # fails ("Python worker failed to connect back"). A cluster's executors keep
            # Spark's default: this folder is not on their machines.
            builder = builder.config("spark.python.unix.domain.socket.enabled", "true").config(
                "spark.python.unix.domain.socket.dir", _socket_dir()
            )
    settings = {
        "spark.sql.shuffle.partitions": str(shuffle_partitions or default_shuffle_partitions()),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        **(config or {}),
    }
    builder = builder.appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = _get_or_create_quietly(builder)
    if not url.startswith("sc://"):
        spark.sparkContext.setLogLevel("ERROR")
        for key, value in settings.items():
            spark.conf.set(key, value)
    return spark


def jvm_log_path() -> Path:
    """Where the driver JVM's own stderr goes (start-up chatter, JVM warnings)."""
    return Path(tempfile.gettempdir()) / f"skewlab-spark-driver-{os.getpid()}.log"


#: Seconds this process has spent starting Spark (a new driver JVM and SparkContext).
_START_SECONDS = [0.0]


def spark_start_seconds() -> float:
    """Seconds this process has spent starting Spark so far: what ``skewlab report`` charges
    each notebook for (the first to ask for a session pays; the rest share it).

    Example::

        >>> spark_start_seconds() >= 0.0
        True
    """
    return _START_SECONDS[0]


def _first_error_line(log: Path | str, start: int = 0) -> str:
    """The first line the JVM or spark-submit wrote after byte ``start`` of ``log`` that says
    what went wrong (``Error: ...``, ``Unrecognized VM option ...``, ``Invalid ...``), or ``""``.
    """
    try:
        with open(log, "rb") as f:
            f.seek(start)
            text = f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""
    for line in text.splitlines():
        line = line.strip()
        if re.match(r"(Error|Exception|Unrecognized|Invalid|Could not)\b", line) or re.match(
            r"[\w.$]+(Error|Exception): ", line
        ):
            return line[:300]
    return ""


def _get_or_create_quietly(builder):
    """``getOrCreate`` with the new driver JVM's stderr sent to :func:`jvm_log_path`.

    The JVM prints warnings of its own (e.g. "Using incubator modules") straight to the
    process's stderr, which would land in every notebook; log4j output is already quiet.
    """
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:  # noqa: SLF001 - no public accessor
        return builder.getOrCreate()
    log = jvm_log_path()
    sys.stderr.flush()
    saved = os.dup(2)
    began = time.perf_counter()
    try:
        with open(log, "ab") as target:
            start = target.tell()
            os.dup2(target.fileno(), 2)
            try:
                return builder.getOrCreate()
            except Exception as exc:
                said = _first_error_line(log, start)
                raise RuntimeError(
                    f"Spark did not start{': ' + said if said else ''} (the JVM's output is in "
                    f"{log})"
                ) from exc
    finally:
        _START_SECONDS[0] += time.perf_counter() - began
        os.dup2(saved, 2)
        os.close(saved)


def stop_spark() -> None:
    """Stop the active SparkSession, if any (the next :func:`get_spark` makes a new one)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
