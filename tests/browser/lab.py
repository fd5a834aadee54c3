"""A notebook open in JupyterLab, driven the way a person drives it: Run All from the menu,
sliders moved with the arrow keys or by typing into their readout, dropdown options picked,
buttons clicked. What it asserts it reads from the page (the SVG plotly drew, the widgets'
text), never from the kernel."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from skewlab import paths

if TYPE_CHECKING:  # the browser tests' own import: not needed to collect them without one
    from playwright.sync_api import Locator

#: a failed request in a JupyterLab server's log, and the error of the race behind it
_FAILED_KERNEL_LIST = re.compile(r"\] 500 GET (/api/kernels\?\S+)")
_LAST_ACTIVITY_RACE = (
    "The 'last_activity' trait of a ServerKernelManager instance expected a datetime"
)
#: how a tab records a failed resource (conftest's ``new_tab``): the message, then its address
RESOURCE_500 = "console error: Failed to load resource: the server responded with a status of 500"


def kernel_list_races(log: str) -> set[str]:
    """The ``GET /api/kernels?...`` requests a JupyterLab server's ``log`` answered with 500
    because a kernel was still starting -- jupyter_server's ``list_kernels`` reads a starting
    kernel's ``last_activity`` before it is set, an upstream race the next notebook's kernel,
    started in a second tab, can meet -- each as its path and query; a 500 with any other cause
    is not among them."""
    races, since = set(), 0
    for match in _FAILED_KERNEL_LIST.finditer(log):
        if _LAST_ACTIVITY_RACE in log[since : match.start()]:
            races.add(match.group(1))
        since = match.end()
    return races


def unexplained_errors(errors: list[str], races: set[str]) -> list[str]:
    """A tab's recorded errors less the failed kernel lists that were the server's race."""
    return [
        e for e in errors
        if not (e.startswith(RESOURCE_500) and any(e.endswith(f"{uri}]") for uri in races))
    ]  # fmt: skip


#: a person waits this long for a redraw at most (a Run button's Spark job included)
REDRAW_SECONDS = 90
RUN_ALL_SECONDS = 300

CELLS_DONE = """() => {
  const panel = window.jupyterapp.shell.currentWidget.node;
  const prompts = [...panel.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
  return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
}"""

KERNEL_READY = """async () => {
  const context = window.jupyterapp.shell.currentWidget.context;
  await context.sessionContext.ready;
  await context.sessionContext.session.kernel.info;
}"""
KERNEL_IDLE = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.context.sessionContext.session?.kernel;
  return kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""

BAD_OUTPUTS = """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
  .map(o => o.innerText)
  .filter(t => /Traceback|Error displaying widget|model not found/.test(t))
  .map(t => t.slice(0, 400))"""


def tiny_copy(name: str, folder: Path) -> Path:
    """The lab's notebook ``name`` with papermill's parameters for the tiny profile, in
    ``folder`` (the notebook itself is never changed)."""
    nb = load_notebook_node(str(paths.notebooks_dir() / name))
    nb = parameterize_notebook(nb, {"size": "tiny"})
    target = folder / name
    nbformat.write(nb, str(target))
    return target


@dataclass
class Interaction:
    """One thing a person did and what the page showed after it."""

    notebook: str
    action: str
    asserted: str
    seconds: float


@dataclass
class LabNotebook:
    page: object
    lab: object
    name: str
    log: list[Interaction] = field(default_factory=list)
    run_started: float = 0.0
    #: which of the notebook's live widgets the actions go to (-1: the last)
    explorer_index: int = -1

    def open(self) -> LabNotebook:
        # reset: a fresh workspace of the notebook's own (two tabs of the lab may be open at
        # once), this notebook alone (no tab of an earlier test restored)
        workspace = Path(self.name).stem
        self.page.goto(
            f"{self.lab.url}/lab/workspaces/{workspace}/tree/{self.name}"
            f"?reset&token={self.lab.token}"
        )
        self.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        # the notebook's kernel started and answered (JupyterLab may swap the first kernel it
        # starts for another: Run All before that loses the cells)
        self.page.evaluate(KERNEL_READY)
        self.page.wait_for_function(KERNEL_IDLE, timeout=60_000, polling=250)
        return self

    def start_run_all(self) -> None:
        """Run > Run All Cells, as from the menu (returns once clicked)."""
        self.run_started = time.perf_counter()
        self.page.get_by_role("menuitem", name="Run", exact=True).click()
        self.page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    def wait_run_all(self) -> float:
        """Wait until every code cell has run; the seconds since Run All was clicked."""
        try:
            self.page.wait_for_function(CELLS_DONE, timeout=RUN_ALL_SECONDS * 1000, polling=500)
        except Exception as exc:
            prompts = self.page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
            self.page.screenshot(path=str(self.lab.root.parent / f"{self.name}.png"))
            raise AssertionError(
                f"{self.name}: Run All did not finish in {RUN_ALL_SECONDS} s; prompts {prompts}; "
                f"outputs with errors {self.bad_outputs()}"
            ) from exc
        return time.perf_counter() - self.run_started

    @property
    def explorer(self):
        """The notebook's live widget (an Explorer's box): the last, or the
        :attr:`explorer_index`-th of several."""
        return self.page.locator(".skewlab-explorer").nth(self.explorer_index)

    @property
    def step_through(self):
        """The notebook's step-through widget (play / previous / next over a traced run)."""
        return self.page.locator(".skewlab-step-through").first

    def step_chart(self) -> dict:
        """The step-through's chart as :meth:`charts` reads it."""
        return self.charts(self.step_through)[0]

    def step_title(self) -> str:
        """The title of the step-through's chart: what the step shown did."""
        return self.step_chart()["title"]

    def step_drawn(self) -> int:
        """The step (from 1) the step-through's chart draws, which its label names once the
        chart is there (the chart of a step clicked past can still be on its way)."""
        return int(self.step_chart()["meta"]["step"])

    def charts(self, root: Locator | None = None) -> list[dict]:
        """Title, trace names, legend, tick labels and text of each chart (of ``root``)."""
        target = root if root is not None else self.explorer
        return target.evaluate("el => window.skewlabCharts(el)")

    def chart_problems(self, settle_seconds: float = 3.0) -> list[str]:
        """Legibility problems of every chart in the notebook (outputs and widget) that last.

        plotly draws a chart, measures its tick labels and lays its margins out again: a chart
        caught between the two can show its axis title over its tick labels for a moment. A
        problem counts when it is still there after ``settle_seconds`` of looking again every
        half second; one seen once and gone is logged with the interactions."""
        script = "() => window.skewlabChartProblems(document.querySelector('.jp-Notebook'))"
        first = self.page.evaluate(script)
        lasting, deadline = list(first), time.perf_counter() + settle_seconds
        while lasting and time.perf_counter() < deadline:
            time.sleep(0.5)
            now = set(self.page.evaluate(script))
            lasting = [problem for problem in lasting if problem in now]
        gone = [problem for problem in first if problem not in lasting]
        if gone:
            self.log.append(
                Interaction(self.name, "look at the charts again", f"gone: {gone}", settle_seconds)
            )
        return lasting

    def bad_outputs(self) -> list[str]:
        return self.page.evaluate(BAD_OUTPUTS)

    def status(self) -> str:
        """The explorer's status line ("" in a notebook whose live widgets are only a
        prediction, a step-through or exercises)."""
        if not self.page.locator(".skewlab-explorer").count():
            return ""
        return self.explorer.locator(".skewlab-explorer-status").inner_text().strip()

    def explorer_text(self) -> str:
        return self.explorer.inner_text()

    # -- a person's actions --------------------------------------------------------------------

    def control(self, description: str):
        label = self.page.locator(
            "label.widget-label", has_text=re.compile(rf"^{re.escape(description)}$")
        )
        return self.explorer.locator(".widget-inline-hbox", has=label).first

    def readout(self, description: str) -> str:
        return self.control(description).locator(".widget-readout").inner_text().strip()

    def type_into_slider(self, description: str, value: str) -> None:
        """Click the slider's readout, replace its number, press Enter."""
        readout = self.control(description).locator(".widget-readout")
        readout.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(value)
        self.page.keyboard.press("Enter")

    def press_on_slider(self, description: str, key: str, times: int = 1) -> None:
        """Focus the slider's handle and press an arrow key."""
        handle = self.control(description).locator(".noUi-handle").first
        handle.focus()
        for _ in range(times):
            handle.press(key)

    def pick(self, description: str, option: str) -> None:
        self.control(description).locator("select").select_option(label=option)

    def click(self, button: str) -> None:
        self.explorer.get_by_role("button", name=button).click()

    def expect(
        self,
        action: str,
        asserted: str,
        check: Callable[[], bool],
        started: float,
        root: Locator | None = None,
    ) -> Interaction:
        """Wait until ``check()`` holds (the page changed as the control says), log it. On a
        timeout the message shows ``root``'s charts and text (default: the explorer's)."""
        deadline = started + REDRAW_SECONDS
        while True:
            try:
                if check():
                    break
            except (IndexError, KeyError, ValueError):
                pass  # the redraw is under way: the chart is not there yet
            if time.perf_counter() > deadline:
                shown = self.explorer if root is None else root
                raise AssertionError(
                    f"{self.name}: after {action!r}, expected {asserted}; the page shows "
                    f"{self.charts(shown)} / {shown.inner_text()[:600]!r} / status "
                    f"{self.status()!r}"
                )
            time.sleep(0.25)
        seconds = time.perf_counter() - started
        record = Interaction(self.name, action, asserted, round(seconds, 1))
        self.log.append(record)
        return record

    def table(self) -> list[dict[str, str]]:
        """The rows of the explorer's last table (a pandas DataFrame's HTML), by column name."""
        return self.explorer.evaluate(
            """el => {
              const tables = el.querySelectorAll('table');
              if (!tables.length) return [];
              const t = tables[tables.length - 1];
              const head = [...t.querySelectorAll('thead th')].map(th => th.textContent.trim());
              return [...t.querySelectorAll('tbody tr')].map(tr => {
                const cells = [...tr.children].map(c => c.textContent.trim());
                return Object.fromEntries(head.map((h, i) => [h, cells[i]]).filter(([h]) => h));
              });
            }"""
        )


class NotebookQueue:
    """Notebooks opened and run one ahead of the test that drives them.

    When a test takes notebook i, notebook i+1 (in ``order``) is opened in a tab of its own and
    its Run All clicked, so it runs while the test waits for notebook i and moves its controls:
    on 2 cores one kernel waiting for its Spark JVM, or Chromium drawing, leaves a core to the
    other. Each notebook still has its own kernel and its own tab, as a person's would.

    Example::

        queue = NotebookQueue(open_tab, lab, ["00_hot_keys.ipynb", "01_ebs_latency.ipynb"])
        nb = queue.take("00_hot_keys.ipynb")   # 01 starts running in a second tab
        seconds = nb.wait_run_all()
        queue.done(nb)
    """

    def __init__(self, open_tab: Callable, lab, order: list[str], ahead: int = 1):
        self.open_tab, self.lab, self.order, self.ahead = open_tab, lab, list(order), ahead
        self.running: dict[str, LabNotebook] = {}

    def _start(self, name: str) -> None:
        tiny_copy(name, self.lab.root)
        nb = LabNotebook(self.open_tab(), self.lab, name).open()
        nb.start_run_all()
        self.running[name] = nb

    def take(self, name: str) -> LabNotebook:
        """Notebook ``name``, its Run All clicked (now, or when an earlier take started it);
        the next ``ahead`` notebooks of the order are started before it is returned."""
        if name not in self.running:
            self._start(name)
        nb = self.running.pop(name)
        position = self.order.index(name) if name in self.order else len(self.order)
        for following in self.order[position + 1 : position + 1 + self.ahead]:
            if following not in self.running:
                self._start(following)
        nb.page.bring_to_front()
        return nb

    def done(self, nb: LabNotebook) -> None:
        """Close the notebook's tab and shut down its kernel."""
        nb.page.close()
        self.lab.shutdown_kernels(nb.name)

    def close(self) -> None:
        """Close what was started and never taken (a test run with -k)."""
        for nb in list(self.running.values()):
            self.done(nb)
        self.running.clear()
