"""Render the lab's notebooks to a self-contained HTML report.

Each notebook in ``notebooks/`` is executed through papermill at one size (``tiny``,
``quick`` or ``full``: :func:`skewlab.experiments.chapters.size_settings`), all of them in one
shared Jupyter kernel, rendered to standalone HTML with nbconvert (skewlab's template: plotly.js
inlined, no CDN), and linked from an ``index.html`` with a one-line summary each. A failing
notebook is reported with its name and cell; the other reports are still written. Where each
notebook's time went is measured (kernel start, Spark start, its cells, the HTML).

===============  ==================================================================
``render``       :func:`render_report`: every notebook, one kernel, the index
``notebook``     :func:`render_notebook`: one notebook executed and rendered
``kernel``       :class:`SharedKernel`: one kernel, reset between notebooks
``timing``       :class:`NotebookTiming`: a notebook's seconds, taken apart
``index``        ``index.html``
===============  ==================================================================

Example::

    >>> from skewlab.report import render_report
    >>> result = render_report("quick", out="reports")  # doctest: +SKIP
    >>> result.ok, result.index  # doctest: +SKIP
    (True, PosixPath('reports/index.html'))
"""

from __future__ import annotations

from skewlab.report.kernel import SharedKernel
from skewlab.report.notebook import (
    WIDGET_NOTE,
    NotebookReport,
    notebook_parameters,
    render_notebook,
    title_and_summary,
)
from skewlab.report.render import ReportResult, notebook_paths, render_report, select_notebooks
from skewlab.report.timing import NotebookTiming, format_timings

__all__ = [
    "WIDGET_NOTE",
    "NotebookReport",
    "NotebookTiming",
    "ReportResult",
    "SharedKernel",
    "format_timings",
    "notebook_parameters",
    "notebook_paths",
    "render_notebook",
    "render_report",
    "select_notebooks",
    "title_and_summary",
]
