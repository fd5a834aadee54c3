"""The renderer switch: live figures in JupyterLab, self-contained HTML in a report; and
tables' numbers as a reader reads them.

In JupyterLab plotly's own renderer is used. When a notebook runs inside ``skewlab report``
(``SKEWLAB_REPORT=1`` in the kernel's environment), importing :mod:`skewlab.viz` switches
plotly to the ``skewlab_report`` renderer: plain HTML with plotly.js inlined once per notebook,
so the rendered HTML displays its charts with no network. Importing it also sets pandas'
display format for floats (:func:`readable_number`): a table shows ``128.1``, not
``128.100811``; the stored results keep every digit.

Example::

    >>> in_report() == (os.environ.get(REPORT_ENV) == "1")
    True
"""

from __future__ import annotations

import math
import os

import pandas as pd
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

__all__ = [
    "REPORT_ENV",
    "ReportRenderer",
    "begin_notebook",
    "in_report",
    "readable_number",
    "use_readable_tables",
    "use_report_renderer",
]

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


def readable_number(value: float) -> str:
    """A float as a table shows it: whole numbers with thousands separators, one or two
    decimals above 1, three significant digits below -- more where three would round a
    fraction up to 1 (a hit ratio of 0.99995 is not 1).

    Example::

        >>> [readable_number(v) for v in (128.100811, 6.254, 0.0073419, 25000.0, 1234.5678)]
        ['128.1', '6.25', '0.00734', '25,000', '1,235']
        >>> readable_number(0.99995), readable_number(0.5)
        ('0.99995', '0.5')
    """
    if not math.isfinite(value):
        return str(value)
    size = abs(value)
    if size >= 1000 or value.is_integer():
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    digits = 3
    while abs(float(f"{value:.{digits}g}")) >= 1 and digits < 8:
        digits += 1
    return f"{value:.{digits}g}"


def use_readable_tables() -> None:
    """Show every pandas float through :func:`readable_number` (display only: the values in a
    DataFrame, and in the results saved, keep every digit)."""
    pd.set_option("display.float_format", readable_number)


use_readable_tables()
