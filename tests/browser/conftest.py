"""Real parts for the browser tests: JupyterLab started on a free loopback port with a token,
a real kernel, and Debian's Chromium driven by Playwright (its own browser download is not
used). Without ``/usr/bin/chromium`` every browser test is skipped with one line saying how to
get it."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from skewlab.engine.session import JAVA_OPTIONS_ENV
from skewlab.experiments.predictions import PREDICTIONS_LOG_ENV
from skewlab.report.render import QUICK_JIT
from skewlab.viz.render import REPORT_ENV

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NO_CHROMIUM = (
    f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium) "
    "to run the browser tests"
)
CHECKS_JS = (Path(__file__).parent / "chart_checks.js").read_text(encoding="utf-8")

#: JupyterLab settings for a test: every cell stays in the DOM (no windowing), nothing saved
#: behind the test's back, no news or update check over the network
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: its URL, its token and the folder it serves."""

    def __init__(self, root: Path, port: int, token: str, process: subprocess.Popen) -> None:
        self.root, self.port, self.token, self.process = root, port, token, process
        self.url = f"http://127.0.0.1:{port}"

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self, path: str | None = None) -> None:
        """Shut down the kernel of notebook ``path`` (every kernel when None)."""
        for session in self.api("/api/sessions"):
            if path is None or session.get("path") == path:
                self.api(f"/api/sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="session")
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(NO_CHROMIUM)
    return CHROMIUM


@pytest.fixture(scope="module")
def lab(chromium, tmp_path_factory):
    """JupyterLab on a free loopback port with a token; its kernels run this Python.

    It lives as long as its module, not the session: after it shuts a kernel down, the lab
    keeps reconnecting to that kernel's old loopback ports, and a later test's Spark could be
    given one of them for a server socket with a backlog of 1.
    """
    base = tmp_path_factory.mktemp("lab")
    root, settings = base / "notebooks", base / "settings"
    root.mkdir()
    for plugin, values in LAB_SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    env = dict(os.environ)
    env.pop(REPORT_ENV, None)  # a person at the sliders, not a report
    # the kernels' Spark JVMs compile with the quick JIT only: a tiny notebook's run is mostly
    # JVM start-up (notebook 08's tiny streaming runs: 53 s -> 45 s); nothing here is measured
    env[JAVA_OPTIONS_ENV] = QUICK_JIT
    env[PREDICTIONS_LOG_ENV] = str(base / "predictions.jsonl")  # the guesses the tests lock in
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(base / "workspaces")
    env["JUPYTER_RUNTIME_DIR"] = str(base / "runtime")
    port, token = _free_port(), secrets.token_hex(16)
    log = (base / "lab.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",
            "--allow-root",  # CI runs as root
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=root,
    )
    server = Lab(root, port, token, process)
    deadline = time.monotonic() + 90
    while True:
        try:
            server.api("/api/status")
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"JupyterLab did not start: {(base / 'lab.log').read_text()[-2000:]}")
            time.sleep(0.5)
    yield server
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.fixture(scope="session")
def browser_context(chromium, tmp_path_factory):
    """Chromium headless with a fresh profile (its own user-data-dir)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(chromium),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
        )
        context.add_init_script(CHECKS_JS)
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


def new_tab(context):
    """A fresh tab of ``context`` that records every uncaught page error and console error in
    its ``errors`` list."""
    tab = context.new_page()
    tab.errors = []
    tab.on("pageerror", lambda exc: tab.errors.append(f"page error: {exc}"))
    tab.on("console", lambda msg: _record_console_error(tab, msg))
    return tab


def _record_console_error(tab, msg) -> None:
    """A console error with the address it names (a failed resource's is that resource's)."""
    if msg.type != "error":
        return
    where = (msg.location or {}).get("url") or ""
    tab.errors.append(f"console {msg.type}: {msg.text}" + (f" [{where}]" if where else ""))


@pytest.fixture(scope="session")
def open_tab(browser_context):
    """Opens a fresh tab of the browser (:func:`new_tab`) each time it is called."""
    return lambda: new_tab(browser_context)


@pytest.fixture
def page(browser_context):
    """A fresh tab (:func:`new_tab`)."""
    tab = new_tab(browser_context)
    yield tab
    tab.close()


_LOG: list = []
_SECONDS: dict[str, float] = {"setup": 0.0, "call": 0.0, "teardown": 0.0}


def pytest_runtest_logreport(report):
    if "tests/browser/" in report.nodeid.replace("\\", "/"):
        _SECONDS[report.when] += report.duration


@pytest.fixture
def interactions() -> list:
    """What each browser test did and asserted, printed at the end of the run."""
    return _LOG


def pytest_terminal_summary(terminalreporter):
    if not any(_SECONDS.values()):
        return
    terminalreporter.section("browser interactions (what a person did, what the page showed)")
    for entry in _LOG:
        if isinstance(entry, tuple):
            what, name, amount = entry
            terminalreporter.line(f"{name}: {what} ({amount})")
        else:
            terminalreporter.line(
                f"{entry.notebook}: {entry.action} -> {entry.asserted} ({entry.seconds:.1f} s)"
            )
    terminalreporter.line(
        f"browser tests: {_SECONDS['call']:.0f} s in the tests, {_SECONDS['setup']:.0f} s set-up "
        "(JupyterLab, Chromium, and the tiny report when a browser test asks for it first), "
        f"{_SECONDS['teardown']:.0f} s teardown"
    )
