"""Shared fixtures: one real local SparkSession for every Spark test (never mocked), one
``local-cluster`` Spark (separate executor JVMs) for every cluster test, one tiny report for the
tests that read it.

Every Spark JVM the tests start (this process's, the cluster's, the subprocesses' and the
notebook kernels') compiles with the quick JIT only (``-XX:TieredStopAtLevel=1``, with the code
cache a tiered JVM would have: the quick JIT's default 48 MB fills in a JVM that runs every
notebook): the tests' Spark jobs last seconds, so their time is mostly JVM start-up and warm-up,
and nothing the tests assert is a timing of the JVM. The test processes' own JVMs also collect
garbage with the serial collector. A ``SKEWLAB_JAVA_OPTIONS`` already set (even to ``""``) is
kept, and then nothing is added to it.

The long end-to-end checks are skipped with a line saying so unless ``--e2e`` is given: the
whole runs of about ten seconds or more (marker ``long``: an experiment at its tiny size, the
tiny report and the tests that read it, a streaming query stopped and resumed, a test that
starts a process and its JVM), every notebook Run All in JupyterLab (marker ``e2e``) and every
check on a ``local-cluster`` master (marker ``cluster``: three more JVMs, a minute and a half of
the run). CI gives it after the README's command: the whole runs in two processes (``pytest
--e2e -m long``), then the rest in one (``pytest -n 0 --e2e -m "e2e or cluster"``).

The tests run in two processes (pytest-xdist, ``-n 2 --dist loadfile`` in pyproject.toml: each
takes a whole file at a time, so a module's fixture runs its experiment once), each with its own
SparkSession: one process left a quarter of the two cores idle (a test waits on its driver, its
Python workers, a subprocess, a streaming trigger). ``-n 0`` runs them in this process alone.

The tiny report is rendered once per run that selects a test reading it (every such test is
``long``), in a process of its own at a low priority, from the first test on (with two test
processes, the first to ask starts it and the other waits for its result). The files that read
it are sorted after every other and the browser tests last, so that in one process it is ready
when the first test that reads it starts; with two, pytest-xdist sends the files with the most
tests first whatever this order, so a reader may wait on the report.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from skewlab.engine.session import JAVA_OPTIONS_ENV
from skewlab.report.render import QUICK_JIT

# the quick JIT for every Spark JVM of the run, unless the person running the tests said else
os.environ.setdefault(JAVA_OPTIONS_ENV, QUICK_JIT)

#: two executors of one core and 1 GiB each, every JVM on this machine
LOCAL_CLUSTER = "local-cluster[2,1,1024]"


@pytest.fixture(scope="session")
def load_probe():
    """``load_probe(name)``: the probe ``docs/probes/<name>.py`` as a module (the probes are
    scripts, not a package)."""
    from skewlab import paths

    def load(name: str):
        path = paths.project_root() / "docs" / "probes" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(scope="session")
def spark():
    """The session skewlab itself makes (``local[*]`` unless SKEWLAB_SPARK_MASTER says else).

    Its driver JVM collects garbage with the serial collector, added to the quick JIT unless
    the person running the tests set their own options: a test process's JVM holds a small heap
    on two cores shared with the other test process, where G1's concurrent threads only take
    CPU from it."""
    from skewlab.engine.session import get_spark

    with pytest.MonkeyPatch.context() as env:
        if os.environ.get(JAVA_OPTIONS_ENV) == QUICK_JIT:
            env.setenv(JAVA_OPTIONS_ENV, f"{QUICK_JIT} -XX:+UseSerialGC")
        session = get_spark(app_name="skewlab-tests")
    yield session
    session.stop()


# The process that holds one SparkSession and runs the scripts sent to it. Requests and replies
# are one JSON line each on their own pipes (the JVMs may write to stdout and stderr, which go to
# a log). Each script runs in a fresh namespace with its prints captured; afterwards any
# streaming query it left is stopped and its cached data is dropped, so the next script starts
# from what a new process would see, bar the JVMs (and their Python workers) already running.
_RUNNER = r"""
import contextlib, io, json, os, sys, traceback

requests = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
replies = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")


def reply(**fields):
    replies.write(json.dumps(fields) + "\n")
    replies.flush()


from skewlab.engine.session import get_spark

spark = get_spark(app_name=sys.argv[3])
spark.range(4).count()  # the executors registered and ran a task
reply(ready=spark.sparkContext.master)
for line in requests:
    out, ok, error = io.StringIO(), True, ""
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(json.loads(line)["script"], "<script>", "exec"), {"__name__": "__main__"})
    except BaseException:
        ok, error = False, traceback.format_exc()
    finally:
        for query in spark.streams.active:
            query.stop()
        spark.catalog.clearCache()
    reply(ok=ok, stdout=out.getvalue(), error=error)
spark.stop()
"""


class SparkScripts:
    """One Python process with one SparkSession on ``master``, kept for the whole test run, that
    runs script after script (:meth:`run`) as ``python -c script`` would, without starting
    Spark's JVMs again for each.

    A script gets its session from ``skewlab.get_spark()`` (the one already made) and must not
    stop it. Example::

        proc = scripts.run("import skewlab\nprint(skewlab.get_spark().range(3).count())")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["3"]
    """

    def __init__(self, master: str, log: Path, start_timeout: float = 300) -> None:
        self.master, self.log = master, log
        env = {**os.environ, "SKEWLAB_SPARK_MASTER": master}
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        with log.open("w") as log_file:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _RUNNER, str(request_r), str(reply_w), "skewlab-tests"],
                pass_fds=(request_r, reply_w),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env=env,
            )
        os.close(request_r)
        os.close(reply_w)
        self._requests = os.fdopen(request_w, "w", encoding="utf-8")
        self._replies = reply_r
        self._pending = b""
        ready = self._reply(start_timeout)
        if ready is None or "ready" not in ready:
            self.close()
            raise RuntimeError(f"no Spark on {master} in the script runner:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]

    def _reply(self, timeout: float) -> dict | None:
        """The next reply line, or None when the process ended or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                return None
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                return None
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def run(self, script: str, timeout: float = 900) -> subprocess.CompletedProcess:
        """Run ``script`` in the process: its prints are ``stdout``; an exception gives
        ``returncode`` 1 and its traceback, then the log's tail, in ``stderr``."""
        args = ["<spark scripts on " + self.master + ">", script]
        if self.process.poll() is not None:
            return subprocess.CompletedProcess(args, 1, "", "runner is gone:\n" + self.log_tail())
        try:
            self._requests.write(json.dumps({"script": script}) + "\n")
            self._requests.flush()
        except BrokenPipeError:
            return subprocess.CompletedProcess(args, 1, "", "runner is gone:\n" + self.log_tail())
        reply = self._reply(timeout)
        if reply is None:  # hung or died: nothing later can trust it
            self.close(kill=True)
            why = f"no reply in {timeout:.0f} s" if self.process.returncode is None else "died"
            return subprocess.CompletedProcess(args, 1, "", f"runner {why}:\n{self.log_tail()}")
        if reply["ok"]:
            return subprocess.CompletedProcess(args, 0, reply["stdout"], "")
        return subprocess.CompletedProcess(
            args, 1, reply["stdout"], reply["error"] + "\n--- log ---\n" + self.log_tail()
        )

    def close(self, kill: bool = False) -> None:
        with contextlib.suppress(OSError):
            self._requests.close()  # the runner's loop ends: it stops Spark and exits
        if kill:
            self.process.kill()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError):
            os.close(self._replies)


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory):
    """One ``local-cluster`` Spark (a driver, two executor JVMs with their own Python workers),
    started once and shared by every cluster test: :class:`SparkScripts` on
    :data:`LOCAL_CLUSTER`. A test sends the script it would have run in a new process."""
    scripts = SparkScripts(LOCAL_CLUSTER, tmp_path_factory.mktemp("local-cluster") / "spark.log")
    yield scripts
    scripts.close()


def pytest_addoption(parser):
    parser.addoption(
        "--e2e",
        action="store_true",
        help="also run the long end-to-end checks (marker long: the whole runs of ten seconds "
        "or more -- an experiment at its tiny size, the tiny report and its readers, a streaming "
        "query stopped and resumed, a process and its JVM; marker e2e: "
        "every notebook Run All in JupyterLab and its controls moved; marker cluster: the "
        "local-cluster checks); CI runs them after the README's command with: pytest --e2e -m "
        'long, then pytest -n 0 --e2e -m "e2e or cluster"',
    )


#: the markers of the long end-to-end checks, which only ``--e2e`` runs
LONG_CHECKS = ("long", "e2e", "cluster")


def _reads_tiny_report(item) -> bool:
    return "tiny_report" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """The long end-to-end checks (markers ``long``, ``e2e`` and ``cluster``) are skipped, with
    a line saying how to run them, unless ``--e2e`` is given; the files that read the tiny
    report are sorted after every other, the browser tests last (each group in its own order):
    the report renders meanwhile."""
    unmarked = [
        i.nodeid for i in items if _reads_tiny_report(i) and not i.get_closest_marker("long")
    ]
    if unmarked:  # the README's command would render the report for them: they are long
        raise pytest.UsageError(f"a test that reads tiny_report must be marked long: {unmarked}")
    if not config.getoption("--e2e"):
        skip = pytest.mark.skip(reason="long end-to-end check: run it with --e2e (CI does)")
        for item in items:
            if any(item.get_closest_marker(name) for name in LONG_CHECKS):
                item.add_marker(skip)
    browser = Path(__file__).parent / "browser"
    readers = {item.path for item in items if _reads_tiny_report(item)}

    def place(item) -> int:
        return 2 if browser in item.path.parents else int(item.path in readers)

    items.sort(key=place)  # stable: each group keeps its order


# ``render_report("tiny")`` in a process of its own; its result comes back pickled
_RENDER = r"""
import os, pickle, sys
from skewlab.report import render_report

result = render_report("tiny", out=sys.argv[1], progress=False)
with open(sys.argv[2] + ".part", "wb") as f:
    pickle.dump(result, f)
os.replace(sys.argv[2] + ".part", sys.argv[2])  # whole, for a test process that waits on it
"""


def _nice_new_sessions_of(parent: subprocess.Popen, nice: int = 10) -> None:
    """Until ``parent`` ends, give each child of it that starts a session of its own (a Jupyter
    kernel does) the niceness ``nice`` for that whole session: with the scheduler's autogroups a
    process's own niceness only counts within its session, so a kernel and its Spark JVM would
    otherwise take as much CPU as every test together."""
    own, done = os.getsid(0), set()
    while parent.poll() is None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or entry.name in done:
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == parent.pid and os.getsid(int(entry.name)) != own:
                    done.add(entry.name)
                    (entry / "autogroup").write_text(str(nice))
        time.sleep(1)


class SharedReport:
    """The tiny report rendered into ``out`` by :class:`BackgroundReport`, here or in another
    test process (a pytest-xdist worker): :meth:`result` waits for its pickled
    ``ReportResult`` (or its ``.ended`` marker: it ended without one) and returns it."""

    def __init__(self, out: Path) -> None:
        self.pickled, self.log, self.ended = (
            out.parent / f"{out.name}.{ext}" for ext in ("pickle", "log", "ended")
        )

    def _wait(self, timeout: float) -> str:
        """Wait for the report to end: ``""``, or why it failed."""
        deadline = time.monotonic() + timeout
        while not (self.pickled.exists() or self.ended.exists()) and time.monotonic() < deadline:
            time.sleep(1)
        return "" if self.pickled.exists() else "in another test process"

    def result(self, timeout: float = 1800):
        import pickle

        failed = self._wait(timeout)
        if failed or not self.pickled.exists():
            log = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
            pytest.fail(f"the tiny report did not render ({failed or 'no result'}):\n{log}")
        with self.pickled.open("rb") as f:
            return pickle.load(f)


class BackgroundReport(SharedReport):
    """``render_report("tiny", out)`` started now in a subprocess at nice 10 (its kernel and
    Spark JVM too): :meth:`result` waits for it and returns its ``ReportResult``."""

    def __init__(self, out: Path) -> None:
        super().__init__(out)
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _RENDER, str(out), str(self.pickled)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=lambda: os.nice(10),
            )
        threading.Thread(target=_nice_new_sessions_of, args=(self.process,), daemon=True).start()

    def _wait(self, timeout: float) -> str:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
        self.ended.touch()  # for a test process that waits on it
        return "" if self.process.returncode == 0 else f"exit {self.process.returncode}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.ended.touch()


@pytest.fixture(scope="session", autouse=True)
def _tiny_report_started(request, tmp_path_factory):
    """Starts rendering the tiny report before the first test when a selected test that is not
    skipped reads it; once per run: with several test processes (pytest-xdist), the first to get
    here starts it and the others wait for its result."""
    items = request.session.items
    readers = [item for item in items if _reads_tiny_report(item)]
    if all(item.get_closest_marker("skip") for item in readers):
        yield None
        return
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        report = BackgroundReport(tmp_path_factory.mktemp("report"))
        yield report
        report.stop()  # a run stopped early (-x, Ctrl-C) does not leave it running
        return
    import fcntl

    shared = tmp_path_factory.getbasetemp().parent / "tiny-report"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        owner = not (shared / "report").exists()
        if owner:
            (shared / "report").mkdir()
    if not owner:
        yield SharedReport(shared / "report")
        return
    report = BackgroundReport(shared / "report")
    yield report
    # the other test processes may still read it: wait for it, unless the run was stopped
    if request.session.shouldstop or request.session.shouldfail:
        report.stop()
    else:
        report._wait(timeout=1800)


@pytest.fixture(scope="session")
def tiny_report(_tiny_report_started):
    """Every notebook rendered once at the tiny profile (``skewlab report``), shared by the
    report's tests and the browser's."""
    return _tiny_report_started.result()
