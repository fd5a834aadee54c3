"""The renderer switch: live figures in JupyterLab, self-contained HTML in a report.

In JupyterLab plotly's own renderer is used. When a notebook runs inside ``skewlab report``
(``SKEWLAB_REPORT=1`` in the kernel's environment), importing :mod:`skewlab.viz` switches
plotly to the ``skewlab_report`` renderer: plain HTML with plotly.js inlined once per notebook,
so the rendered HTML displays its charts with no network.

Example::

    >>> in_report() == (os.environ.get(REPORT_ENV) == "1")
    True
"""

from __future__ import annotations

import os

import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

__all__ = ["REPORT_ENV", "ReportRenderer", "begin_notebook", "in_report", "use_report_renderer"]

#: Set to ``1`` in a notebook's kernel by ``skewlab report``.
REPORT_ENV = "SKEWLAB_REPORT"


class ReportRenderer(MimetypeRenderer):
    """``text/html`` output with plotly.js inlined in the first figure only (offline reports)."""

    def __init__(self) -> None:
        # plotly shallow-copies a renderer per figure: keep the flag in a shared dict
        self._shared = {"plotlyjs_sent": False}

    def to_mimebundle(self, fig_dict):
        html = pio.to_html(
            fig_dict,
            include_plotlyjs=not self._shared["plotlyjs_sent"],
            include_mathjax=False,
            full_html=False,
            validate=False,
            config={"displaylogo": False},
        )
        self._shared["plotlyjs_sent"] = True
        return {"text/html": html}


def use_report_renderer(force: bool = False) -> bool:
    """Switch plotly to the self-contained report renderer when in a report (or ``force``)."""
    if "skewlab_report" not in pio.renderers:
        pio.renderers["skewlab_report"] = ReportRenderer()
    if force or os.environ.get(REPORT_ENV) == "1":
        pio.renderers.default = "skewlab_report"
        return True
    return False


use_report_renderer()


def begin_notebook() -> None:
    """A new page begins (``skewlab report`` runs its notebooks in one kernel): the next figure
    inlines plotly.js again, so each notebook's HTML works on its own.

    Example::

        >>> begin_notebook()
        >>> pio.renderers["skewlab_report"]._shared["plotlyjs_sent"]
        False
    """
    renderer = pio.renderers["skewlab_report"]
    renderer._shared["plotlyjs_sent"] = False  # noqa: SLF001 - the renderer's own flag


def in_report() -> bool:
    """True inside ``skewlab report``: no one can move a slider, so widgets skip their work.

    (Drawing into an ipywidgets ``Output`` during a papermill run also stalls nbclient.)
    """
    return os.environ.get(REPORT_ENV) == "1"
