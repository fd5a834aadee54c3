"""Render the lab's notebooks to a self-contained HTML report.

Each notebook in ``notebooks/`` is executed through papermill with a profile (``tiny``,
``quick`` or ``full``: the sizes of :mod:`skewlab.experiments.profiles`), rendered to standalone
HTML with nbconvert (skewlab's template: plotly.js inlined, no CDN), and linked from an
``index.html`` with a one-line summary each. A failing notebook is reported with its name and
cell; the other reports are still written.

Example::

    >>> from skewlab.report import render_report
    >>> result = render_report("quick", out="reports")  # doctest: +SKIP
    >>> result.ok, result.index  # doctest: +SKIP
    (True, PosixPath('reports/index.html'))
"""

from __future__ import annotations

import html
import json
import os
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from skewlab import paths
from skewlab.errors import SkewlabInputError
from skewlab.experiments.profiles import PROFILES
from skewlab.validation import check_choice
from skewlab.viz.render import REPORT_ENV

#: what the kernel is started with: its own warnings (e.g. "running over TCP without
#: encryption", about the loopback connection papermill makes) stay out of the terminal
KERNEL_ARGUMENTS = ["--log-level=ERROR"]


def notebook_parameters(nb_path: Path, profile: str) -> dict[str, object]:
    """The papermill parameters of one notebook in a report: its ``profile``, which every lab
    notebook's ``parameters`` cell declares and reads its sizes from
    (:mod:`skewlab.experiments.profiles`). A notebook without a ``parameters`` cell gets none.

    Example::

        >>> from skewlab import paths
        >>> notebook_parameters(paths.notebooks_dir() / "00_hot_keys.ipynb", "tiny")
        {'profile': 'tiny'}
    """
    cells = json.loads(Path(nb_path).read_text(encoding="utf-8")).get("cells", [])
    tagged = any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells)
    return {"profile": profile} if tagged else {}


@dataclass
class NotebookReport:
    """The outcome of one notebook: where its HTML is, and whether it ran through."""

    name: str
    title: str
    summary: str
    html: Path
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ReportResult:
    """Every notebook's outcome and the index page."""

    profile: str
    index: Path
    notebooks: list[NotebookReport] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(nb.ok for nb in self.notebooks)

    @property
    def failures(self) -> list[NotebookReport]:
        return [nb for nb in self.notebooks if not nb.ok]


def notebook_paths(directory: Path | None = None) -> list[Path]:
    """The lab's notebooks, in their numbered order."""
    directory = directory or paths.notebooks_dir()
    return sorted(p for p in directory.glob("*.ipynb") if not p.name.startswith("."))


def title_and_summary(nb_path: Path) -> tuple[str, str]:
    """The first heading of a notebook and the first sentence of the text after it."""
    nb = json.loads(nb_path.read_text())
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source = "".join(cell.get("source", []))
        lines = [ln.strip() for ln in source.splitlines() if ln.strip()]
        title = next((ln.lstrip("# ") for ln in lines if ln.startswith("#")), nb_path.stem)
        prose = " ".join(ln for ln in lines if not ln.startswith("#"))
        summary = prose.split(". ")[0].rstrip(".") + "." if prose else ""
        return title, summary
    return nb_path.stem, ""


def _html_exporter():
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
    "<p><em>An interactive control lives here in JupyterLab (<code>skewlab lab</code>); "
    "the static figure above shows the same chart for this report's parameters.</em></p>"
)


def _replace_widget_outputs(notebook) -> None:
    """Swap each widget view (dead without a kernel) for a note pointing to JupyterLab."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_MIMETYPE in data:
                output["data"] = {"text/html": WIDGET_NOTE}


def _describe_failure(exc: Exception) -> str:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        return f"cell {exc.exec_count} (cell index {exc.cell_index}): {exc.ename}: {exc.evalue}"
    return f"{type(exc).__name__}: {exc}"


def render_notebook(
    nb_path: Path, out_dir: Path, parameters: dict[str, object], kernel_name: str = "python3"
) -> NotebookReport:
    """Execute one notebook with ``parameters`` and render it to ``out_dir/<name>.html``.

    The executed notebook is kept beside it (``out_dir/executed/<name>.ipynb``). Execution
    errors are caught and recorded: the HTML shows the notebook up to and including the failing
    cell.
    """
    import nbformat
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / "executed" / nb_path.name
    executed.parent.mkdir(exist_ok=True)
    title, summary = title_and_summary(nb_path)
    started = time.perf_counter()
    error = None
    previous = os.environ.get(REPORT_ENV)
    os.environ[REPORT_ENV] = "1"
    try:
        pm.execute_notebook(
            str(nb_path),
            str(executed),
            parameters=parameters,
            kernel_name=kernel_name,
            cwd=str(nb_path.parent),
            progress_bar=False,
            log_output=False,
            extra_arguments=KERNEL_ARGUMENTS,
        )
    except Exception as exc:  # noqa: BLE001 - any failure is reported, the rest still rendered
        error = _describe_failure(exc)
    finally:
        if previous is None:
            os.environ.pop(REPORT_ENV, None)
        else:
            os.environ[REPORT_ENV] = previous
    html_path = out_dir / f"{nb_path.stem}.html"
    source = executed if executed.exists() else nb_path
    notebook = nbformat.read(str(source), as_version=4)
    # Widget state only replays in a live kernel; in a static page it would be dead weight
    # (an Output widget's state even carries a second copy of plotly.js).
    notebook.metadata.pop("widgets", None)
    _replace_widget_outputs(notebook)
    body, _ = _html_exporter().from_notebook_node(notebook)
    html_path.write_text(body, encoding="utf-8")
    return NotebookReport(
        name=nb_path.stem,
        title=title,
        summary=summary,
        html=html_path,
        seconds=time.perf_counter() - started,
        error=error,
    )


def write_index(result: ReportResult) -> Path:
    """Write ``index.html``: one line per notebook, linking its HTML, failures marked."""
    rows = []
    for nb in result.notebooks:
        status = (
            f'<span class="fail">failed: {html.escape(nb.error or "")}</span>'
            if not nb.ok
            else f'<span class="ok">{nb.seconds:.0f} s</span>'
        )
        rows.append(
            f'<li><a href="{html.escape(nb.html.name)}">{html.escape(nb.title)}</a> '
            f"&mdash; {html.escape(nb.summary)} {status}</li>"
        )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>skewlab report</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; }}
body {{ line-height: 1.5; }}
li {{ margin: .6rem 0; }} .ok {{ color: #666; font-size: .9em; }}
.fail {{ color: #b00; font-weight: bold; }}
</style></head>
<body>
<h1>skewlab &mdash; hot keys in stateful stream aggregation</h1>
<p>Profile <code>{html.escape(result.profile)}</code>, rendered in {result.seconds:.0f} s.
Every chart was measured on Apache Spark when this report was made.</p>
<ol>
{chr(10).join(rows)}
</ol>
</body></html>
"""
    result.index.write_text(page, encoding="utf-8")
    return result.index


def render_report(
    profile: str = "quick",
    out: str | Path | None = None,
    *,
    notebooks: list[Path] | None = None,
    progress: bool = True,
    kernel_name: str = "python3",
) -> ReportResult:
    """Execute and render every notebook with a report profile's parameters.

    Args:
        profile: ``quick`` (minutes), ``full`` (the seeds' sizes), or ``tiny`` (seconds; what
            the tests render).
        out: output directory (default ``reports/``); must not be an existing file.
        notebooks: the notebooks to run (default: all of ``notebooks/``).
        progress: show a progress bar.

    Example::

        >>> render_report("quick").ok  # doctest: +SKIP
        True
    """
    from tqdm.auto import tqdm

    check_choice("report profile (--profile)", profile, PROFILES)
    out_dir = Path(out) if out is not None else paths.reports_dir()
    if out_dir.exists() and not out_dir.is_dir():
        raise SkewlabInputError(f"output path {str(out_dir)!r} exists and is a file")
    nb_paths = notebook_paths() if notebooks is None else list(notebooks)
    if not nb_paths:
        raise SkewlabInputError(f"no notebooks found in {paths.notebooks_dir()}")
    out_dir.mkdir(parents=True, exist_ok=True)
    result = ReportResult(profile=profile, index=out_dir / "index.html")
    started = time.perf_counter()
    bar = tqdm(nb_paths, desc="report", unit="notebook", disable=not progress)
    for nb_path in bar:
        bar.set_postfix_str(nb_path.stem)
        params = notebook_parameters(nb_path, profile)
        result.notebooks.append(render_notebook(nb_path, out_dir, params, kernel_name))
    result.seconds = time.perf_counter() - started
    write_index(result)
    return result
