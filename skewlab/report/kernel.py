"""One Jupyter kernel for every notebook of a report.

Started once by :func:`~skewlab.report.render_report`, it runs the notebooks one after the
other: the kernel, skewlab's imports and Spark's driver JVM are started once instead of once
per notebook, and every notebook runs through one connected client of it
(:meth:`SharedKernel.notebook_client`). Before each notebook the kernel is put back to a fresh
state (:data:`FRESH_NOTEBOOK`): the user namespace is reset (execution numbers start again at 1),
widgets are closed, Spark's cached tables are dropped and the offline plotly renderer will
inline plotly.js again in the notebook's first figure. A kernel that died (e.g. a notebook ran
out of memory) is started again for the next notebook, and that start is counted.

Example::

    >>> with SharedKernel(cwd="notebooks") as kernel:  # doctest: +SKIP
    ...     kernel.prepare()               # before each notebook
    ...     pm.execute_notebook(..., km=kernel.manager)
    ...     kernel.spark_start_seconds()   # seconds spent starting Spark in it so far
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skewlab.engine.session import JAVA_OPTIONS_ENV
from skewlab.viz.render import REPORT_ENV

__all__ = ["END_SPARK", "FRESH_NOTEBOOK", "KernelError", "SharedKernel", "report_environment"]

#: Run in the kernel before each notebook (not stored in the notebook, not counted as a cell).
FRESH_NOTEBOOK = """\
get_ipython().reset(new_session=True, aggressive=False)
import gc as _gc
import sys as _sys
if "ipywidgets" in _sys.modules:
    _sys.modules["ipywidgets"].Widget.close_all()
if "pyspark.sql" in _sys.modules:
    _active = _sys.modules["pyspark.sql"].SparkSession.getActiveSession()
    if _active is not None:
        _active.catalog.clearCache()
    del _active
if "skewlab.viz.render" in _sys.modules:
    _sys.modules["skewlab.viz.render"].begin_notebook()
_gc.collect()
del _gc, _sys
"""

#: Run in the kernel before it is shut down: Spark's driver JVM, its child, is ended and waited
#: for -- its stdin closed, as when any Python process that started it ends, so Spark's own
#: shutdown hooks run. A kernel still holding a child at its shutdown signals it and waits for it
#: (ipykernel), and the kernel's manager stops waiting after 2.5 s and terminates the kernel.
END_SPARK = """\
import sys as _sys
if "pyspark" in _sys.modules:
    _gateway = _sys.modules["pyspark"].SparkContext._gateway
    _jvm = getattr(_gateway, "proc", None)
    if _jvm is not None and _jvm.poll() is None:
        _jvm.stdin.close()
        _jvm.wait(timeout=60)
    del _gateway, _jvm
del _sys
"""

#: Evaluated in the kernel after a notebook: seconds spent starting Spark in it so far.
SPARK_START_EXPRESSION = (
    "__import__('skewlab.engine.session', fromlist=['spark_start_seconds'])"
    ".spark_start_seconds() if 'skewlab.engine.session' in __import__('sys').modules else 0.0"
)

#: Evaluated in the kernel after the notebooks: the extra options its Spark JVM started with.
JAVA_OPTIONS_EXPRESSION = (
    "__import__('skewlab.engine.session', fromlist=['java_options_in_use'])"
    ".java_options_in_use() if 'skewlab.engine.session' in __import__('sys').modules else None"
)


@contextlib.contextmanager
def report_environment(java_options: str | None = None) -> Iterator[None]:
    """``SKEWLAB_REPORT=1`` for the block (a kernel started inside it renders offline HTML and
    its widgets stay inert) and, if given, ``SKEWLAB_JAVA_OPTIONS=java_options`` (the options
    its Spark JVM starts with), then the old values back."""
    settings = {REPORT_ENV: "1"}
    if java_options is not None:
        settings[JAVA_OPTIONS_ENV] = java_options
    previous = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class KernelError(RuntimeError):
    """The shared kernel could not be prepared for the next notebook."""


class SharedKernel:
    """A running Jupyter kernel that papermill executes several notebooks in (``km=``).

    ``start_seconds`` adds up every start of the kernel process (the first, and any restart
    after a notebook killed it); :meth:`take_start_seconds` hands out what was added since it
    was last called, so each notebook is charged for the start it waited for.
    """

    def __init__(
        self,
        kernel_name: str = "python3",
        *,
        cwd: str | Path | None = None,
        extra_arguments: list[str] | None = None,
        startup_timeout: float = 120.0,
    ) -> None:
        self.kernel_name = kernel_name
        self.cwd = None if cwd is None else str(cwd)
        self.extra_arguments = list(extra_arguments or [])
        self.startup_timeout = startup_timeout
        self.manager = self._new_manager()
        self.start_seconds = 0.0
        self._charged = 0.0
        self._connection = None  # the client prepare() talks through, kept while the kernel runs
        self._notebook_connection = None  # the client notebooks run through (notebook_client)

    # -- life cycle
    def __enter__(self) -> SharedKernel:
        """The kernel starts at the first :meth:`prepare`: inside the first notebook's time."""
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def ensure_running(self) -> None:
        """Start the kernel if it is not running (the first time, or after it died)."""
        from jupyter_core.utils import run_sync

        if self.manager.has_kernel and run_sync(self.manager.is_alive)():
            return
        began = time.perf_counter()
        if self.manager.has_kernel:  # it died: clean up what is left, start with a new manager
            self._disconnect()
            with contextlib.suppress(Exception):  # the process is gone already
                run_sync(self.manager.shutdown_kernel)(now=True)
            self.manager = self._new_manager()
        kwargs: dict[str, Any] = {"extra_arguments": self.extra_arguments}
        if self.cwd is not None:
            kwargs["cwd"] = self.cwd
        run_sync(self.manager.start_kernel)(**kwargs)
        self._client()  # connected once it answers: the kernel is ready
        self.start_seconds += time.perf_counter() - began

    def _new_manager(self):
        from jupyter_client.manager import AsyncKernelManager

        return AsyncKernelManager(kernel_name=self.kernel_name)

    def end_spark(self) -> None:
        """End the Spark driver JVM the kernel started and wait for it (:data:`END_SPARK`), so
        that :meth:`shutdown` finds the kernel without a child to wait on. Call it with the
        kernel idle (after the last notebook): it runs in the kernel like a cell."""
        from jupyter_core.utils import run_sync

        if self.manager.has_kernel and run_sync(self.manager.is_alive)():
            with contextlib.suppress(KernelError, TimeoutError, RuntimeError):
                self._run(END_SPARK)  # a JVM that outlives this is stopped with the kernel

    def shutdown(self) -> None:
        """Stop the kernel (and with it the Spark driver JVM it started, if still running)."""
        from jupyter_core.utils import run_sync

        self._disconnect()
        if self.manager.has_kernel:
            run_sync(self.manager.shutdown_kernel)(now=False)

    def take_start_seconds(self) -> float:
        """Seconds spent starting the kernel since the last call."""
        seconds, self._charged = self.start_seconds - self._charged, self.start_seconds
        return seconds

    # -- between notebooks
    def prepare(self, cwd: str | Path | None = None) -> float:
        """Make sure the kernel runs and put it back to a fresh state for the next notebook,
        working in ``cwd`` (the notebook's folder) if given. Returns
        :meth:`spark_start_seconds` as it stands before the notebook."""
        self.ensure_running()
        code = FRESH_NOTEBOOK
        if cwd is not None:
            code += f"__import__('os').chdir({json.dumps(str(Path(cwd).resolve()))})\n"
        return self._start_seconds(code)

    def spark_start_seconds(self) -> float:
        """Seconds the kernel has spent starting Spark so far (0 if it never did)."""
        if not self.manager.has_kernel:
            return 0.0
        return self._start_seconds()

    def _start_seconds(self, code: str = "") -> float:
        """Run ``code``, then read the seconds spent starting Spark (0 where unreadable)."""
        seconds = self._evaluate(SPARK_START_EXPRESSION, code)
        return 0.0 if seconds is None else float(seconds)

    def spark_java_options(self) -> str | None:
        """The extra options the kernel's Spark JVM was started with
        (:func:`~skewlab.engine.session.java_options_in_use`), ``None`` if it started none or
        the kernel is gone (the last notebook killed it)."""
        from jupyter_core.utils import run_sync

        if not self.manager.has_kernel or not run_sync(self.manager.is_alive)():
            return None
        try:
            options = self._evaluate(JAVA_OPTIONS_EXPRESSION)
        except (KernelError, TimeoutError, RuntimeError):
            return None
        return None if options is None else " ".join(options)

    def _evaluate(self, expression: str, code: str = "") -> Any:
        """Run ``code``, then the value of one Python ``expression`` (a literal's repr) in the
        kernel, ``None`` where the kernel could not evaluate it."""
        value = self._run(code, {"value": expression}).get("value", {})
        if value.get("status") != "ok":
            return None
        return ast.literal_eval(value["data"]["text/plain"])

    def _client(self):
        """The kernel's client for :meth:`prepare`, connected once per kernel process (a
        connection waits for the kernel's first answer: a fraction of a second per call).

        The client belongs to the kernel's manager, so it judges the kernel alive by its
        process: a client of its own would judge by the heartbeat, which a kernel still
        starting (a few seconds on a busy machine) does not answer yet, and would call it dead."""
        from jupyter_client.blocking import BlockingKernelClient

        if self._connection is None:
            client = BlockingKernelClient(parent=self.manager)
            client.load_connection_info(self.manager.get_connection_info())
            client.start_channels()
            try:
                client.wait_for_ready(timeout=self.startup_timeout)
            except BaseException:
                client.stop_channels()
                raise
            self._connection = client
        return self._connection

    def notebook_client(self):
        """The kernel's asynchronous client that notebooks run through (papermill's
        ``kernel_client=`` with :data:`~skewlab.report.engine.ENGINE`), connected once per
        kernel process: a new client per notebook waits about 0.2 s to be ready.

        Like :meth:`_client` it has a session of its own, not the manager's: clients that share
        one session refuse each other's broadcast messages as replays ("Duplicate Signature"),
        and a notebook's client would then wait forever for its cell's output."""
        from jupyter_client.asynchronous import AsyncKernelClient
        from jupyter_core.utils import run_sync

        if self._notebook_connection is None:
            self.ensure_running()

            async def connect():
                client = AsyncKernelClient(parent=self.manager)
                client.load_connection_info(self.manager.get_connection_info())
                client.start_channels()
                try:
                    await client.wait_for_ready(timeout=self.startup_timeout)
                except BaseException:
                    client.stop_channels()
                    raise
                client.allow_stdin = False
                return client

            self._notebook_connection = run_sync(connect)()
        return self._notebook_connection

    def _disconnect(self) -> None:
        if self._connection is not None:
            self._connection.stop_channels()
            self._connection = None
        if self._notebook_connection is not None:
            self._notebook_connection.stop_channels()
            self._notebook_connection = None

    def _run(self, code: str, expressions: dict[str, str] | None = None) -> dict[str, Any]:
        reply = self._client().execute_interactive(
            code,
            silent=False,
            store_history=False,
            user_expressions=expressions or {},
            timeout=self.startup_timeout,
            output_hook=lambda _msg: None,
        )
        content = reply["content"]
        if content["status"] != "ok":
            raise KernelError(
                f"the shared kernel refused to prepare the next notebook: "
                f"{content.get('ename')}: {content.get('evalue')}"
            )
        return content.get("user_expressions", {})
