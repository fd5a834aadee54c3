"""One notebook of a report: executed through papermill, rendered to standalone HTML.

Example::

    >>> from skewlab import paths
    >>> notebook_parameters(paths.notebooks_dir() / "00_hot_keys.ipynb", "tiny")
    {'size': 'tiny'}
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from skewlab.experiments.claims import (
    HELD,
    INCONCLUSIVE,
    MEASUREMENT_ERROR,
    NOT_HELD,
    NOT_MEASURED,
    count_held,
)
from skewlab.report.engine import ENGINE
from skewlab.report.kernel import SharedKernel, report_environment
from skewlab.report.timing import NotebookTiming, cell_durations
from skewlab.viz.claims import outcomes_from_notebook

__all__ = [
    "KERNEL_ARGUMENTS",
    "WIDGET_NOTE",
    "NotebookReport",
    "notebook_parameters",
    "render_notebook",
    "title_and_summary",
]

#: what the kernel is started with: its own warnings (e.g. "running over TCP without
#: encryption", about the loopback connection papermill makes) stay out of the terminal, and
#: its history stays in memory
KERNEL_ARGUMENTS = ["--log-level=ERROR", "--HistoryManager.hist_file=:memory:"]


def notebook_parameters(nb_path: Path, size: str) -> dict[str, object]:
    """The papermill parameters of one notebook in a report: its ``size``, which every lab
    notebook's ``parameters`` cell declares and reads its settings from
    (:func:`skewlab.experiments.chapters.size_settings`). A notebook without a ``parameters``
    cell gets none.

    Example::

        >>> from skewlab import paths
        >>> notebook_parameters(paths.notebooks_dir() / "00_hot_keys.ipynb", "tiny")
        {'size': 'tiny'}
    """
    cells = json.loads(Path(nb_path).read_text(encoding="utf-8")).get("cells", [])
    tagged = any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells)
    return {"size": size} if tagged else {}


@dataclass
class NotebookReport:
    """The outcome of one notebook: where its HTML is, whether it ran through, and where its
    time went (:class:`~skewlab.report.timing.NotebookTiming`)."""

    name: str
    title: str
    summary: str
    html: Path
    seconds: float
    error: str | None = None
    timing: NotebookTiming | None = field(default=None, repr=False)
    #: the claims the notebook showed, with their outcomes (:mod:`skewlab.viz.claims`)
    claims: list[dict] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def claims_line(self) -> str:
        """The notebook's claims by verdict, in this run and in the reference.

        Example::

            >>> nb = NotebookReport("03", "t", "s", Path("x.html"), 1.0, claims=[
            ...     {"this_run": "held", "reference": "held"},
            ...     {"this_run": "inconclusive", "reference": None},
            ...     {"this_run": "not measured", "reference": "not held"}])
            >>> nb.claims_line()
            'claims: this run 1 held, 1 inconclusive (1 not measured at this size, of 3); the reference 1 held, 1 not held (of 2)'
        """  # noqa: E501
        if not self.claims:
            return ""
        line = "claims: this run " + verdict_counts(c["this_run"] for c in self.claims)
        referenced = [c["reference"] for c in self.claims if c.get("reference") is not None]
        if referenced:
            line += "; the reference " + verdict_counts(referenced)
        return line


def verdict_counts(statuses) -> str:
    """``"5 held, 1 not held, 2 inconclusive (1 not measured at this size, of 9)"``: every
    verdict that occurs, and of how many claims.

    Example::

        >>> verdict_counts(["held", "held", "measurement error"])
        '2 held, 1 measurement error (of 3)'
    """
    statuses = list(statuses)
    counts = count_held(statuses)
    shown = [f"{counts[s]} {s}" for s in (HELD, NOT_HELD, INCONCLUSIVE, MEASUREMENT_ERROR)
             if counts[s]]  # fmt: skip
    tail = f"{counts[NOT_MEASURED]} not measured at this size, " if counts[NOT_MEASURED] else ""
    return f"{', '.join(shown) or 'none concluded'} ({tail}of {len(statuses)})"


#: how a chapter's notebook states its question, under its heading
QUESTION_MARK = "**The question:**"


def title_and_summary(nb_path: Path) -> tuple[str, str]:
    """The first heading of a notebook and the first sentence of the text after it (its
    question's line left out)."""
    nb = json.loads(nb_path.read_text())
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source = "".join(cell.get("source", []))
        lines = [ln.strip() for ln in source.splitlines() if ln.strip()]
        title = next((ln.lstrip("# ") for ln in lines if ln.startswith("#")), nb_path.stem)
        prose = " ".join(
            ln for ln in lines if not ln.startswith("#") and not ln.startswith(QUESTION_MARK)
        )
        summary = prose.split(". ")[0].rstrip(".") + "." if prose else ""
        return title, summary
    return nb_path.stem, ""


@cache
def _html_exporter():
    """The report's HTML exporter, made once per process: its templates compile once, not
    once per notebook."""
    from nbconvert import HTMLExporter

    templates = resources.files("skewlab") / "templates"
    exporter = HTMLExporter(
        template_name="skewlab_report",
        extra_template_basedirs=[str(templates)],
    )
    exporter.embed_images = True
    return exporter


WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = (
    "<p><em>An interactive control lives here: open the notebook in JupyterLab "
    "(<code>skewlab lab</code>) and use Run &#9656; Run All Cells; the static figure above "
    "shows the same chart for this report's parameters.</em></p>"
)


def _replace_widget_outputs(notebook) -> None:
    """Swap each widget view (dead without a kernel) for a note pointing to JupyterLab."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_MIMETYPE in data:
                output["data"] = {"text/html": WIDGET_NOTE}


_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.*?)(?P<comment>\s+#.*)?$")


def merge_parameters(notebook) -> None:
    r"""Show one parameters cell: the notebook's own (its comments say what each parameter
    means) with the values papermill injected written into it, and papermill's injected cell
    dropped. A name papermill injected that the notebook does not declare is added at the end.

    Example::

        >>> import nbformat
        >>> nb = nbformat.v4.new_notebook(cells=[
        ...     nbformat.v4.new_code_cell('size = "quick"  # tiny | quick | full\nseed = 1',
        ...                               metadata={"tags": ["parameters"]}),
        ...     nbformat.v4.new_code_cell('# Parameters\nsize = "tiny"\n',
        ...                               metadata={"tags": ["injected-parameters"]})])
        >>> merge_parameters(nb)
        >>> len(nb.cells), nb.cells[0].source
        (1, 'size = "tiny"  # tiny | quick | full\nseed = 1')
    """
    cells = notebook.cells
    tags = [set(c.get("metadata", {}).get("tags", [])) for c in cells]
    own = next((i for i, t in enumerate(tags) if "parameters" in t), None)
    injected = next((i for i, t in enumerate(tags) if "injected-parameters" in t), None)
    if own is None or injected is None:
        return
    values = {}
    for line in cells[injected].source.splitlines():
        match = _ASSIGNMENT.match(line)
        if match:
            values[match["name"]] = match["value"]
    lines = []
    for line in cells[own].source.splitlines():
        match = _ASSIGNMENT.match(line)
        if match and match["name"] in values:
            line = f"{match['name']} = {values.pop(match['name'])}{match['comment'] or ''}"
        lines.append(line)
    lines += [f"{name} = {value}  # set by skewlab report" for name, value in values.items()]
    cells[own].source = "\n".join(lines)
    if cells[injected].get("outputs"):
        cells[own]["outputs"] = cells[injected]["outputs"]
    del cells[injected]


def _describe_failure(exc: Exception) -> str:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        return f"cell {exc.exec_count} (cell index {exc.cell_index}): {exc.ename}: {exc.evalue}"
    return f"{type(exc).__name__}: {exc}"


def render_notebook(
    nb_path: Path,
    out_dir: Path,
    parameters: dict[str, object],
    kernel_name: str = "python3",
    *,
    kernel: SharedKernel | None = None,
) -> NotebookReport:
    """Execute one notebook with ``parameters`` and render it to ``out_dir/<name>.html``.

    With ``kernel`` (a :class:`~skewlab.report.kernel.SharedKernel`) the notebook runs in it,
    after the kernel is put back to a fresh state; without, a kernel is started for this
    notebook alone and stopped after it. A kernel start the notebook waited for is counted in
    its ``kernel`` seconds. The
    executed notebook is kept beside the page (``out_dir/executed/<name>.ipynb``). Execution
    errors are caught and recorded: the HTML shows the notebook up to and including the failing
    cell.

    Example::

        >>> report = render_notebook(path, Path("reports"), {"size": "tiny"})  # doctest: +SKIP
        >>> report.ok, report.timing.spark  # doctest: +SKIP
        (True, 4.2)
    """
    import nbformat
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / "executed" / nb_path.name
    executed.parent.mkdir(exist_ok=True)
    title, summary = title_and_summary(nb_path)
    started = time.perf_counter()
    error = None
    kernel_seconds = spark_seconds = 0.0
    with report_environment():
        own = kernel is None
        if own:
            kernel = SharedKernel(kernel_name, cwd=nb_path.parent, extra_arguments=KERNEL_ARGUMENTS)
        try:
            spark_before = kernel.prepare(cwd=nb_path.parent)
            kernel_seconds = kernel.take_start_seconds()
            pm.execute_notebook(
                str(nb_path),
                str(executed),
                parameters=parameters,
                kernel_name=kernel_name,
                cwd=str(nb_path.parent),
                progress_bar=False,
                log_output=False,
                request_save_on_cell_execute=False,  # no autosave while a cell runs
                engine_name=ENGINE,  # the executed notebook written once, at its end
                km=kernel.manager,
                kernel_client=kernel.notebook_client(),  # one connection for every notebook
            )
            spark_seconds = kernel.spark_start_seconds() - spark_before
        except Exception as exc:  # noqa: BLE001 - any failure is reported, the rest rendered
            error = _describe_failure(exc)
        finally:
            if own:
                kernel.shutdown()
    html_path = out_dir / f"{nb_path.stem}.html"
    source = executed if executed.exists() else nb_path
    notebook = nbformat.read(str(source), as_version=4)
    durations = cell_durations(notebook)
    claims = outcomes_from_notebook(notebook)
    # Widget state only replays in a live kernel; in a static page it would be dead weight
    # (an Output widget's state even carries a second copy of plotly.js).
    notebook.metadata.pop("widgets", None)
    _replace_widget_outputs(notebook)
    merge_parameters(notebook)
    rendering = time.perf_counter()
    body, _ = _html_exporter().from_notebook_node(notebook)
    html_path.write_text(body, encoding="utf-8")
    finished = time.perf_counter()
    timing = NotebookTiming(
        total=finished - started,
        kernel=kernel_seconds,
        spark=spark_seconds,
        code=sum(seconds for _, seconds in durations),
        render=finished - rendering,
        slowest=max(durations, key=lambda d: d[1]) if durations else None,
    )
    return NotebookReport(
        name=nb_path.stem,
        title=title,
        summary=summary,
        html=html_path,
        seconds=timing.total,
        error=error,
        timing=timing,
        claims=claims,
    )
