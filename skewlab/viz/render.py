"""The renderer switch: live figures in JupyterLab, self-contained HTML in a report; and
tables' numbers as a reader reads them.

Importing :mod:`skewlab.viz` changes nothing outside skewlab: every notebook calls
:func:`setup_notebook` once, in its import cell. In JupyterLab plotly's own renderer stays;
when the notebook runs inside ``skewlab report`` (``SKEWLAB_REPORT=1`` in the kernel's
environment, :data:`REPORT_ENV`) plotly switches to the ``skewlab_report`` renderer: plain HTML
with plotly.js inlined once per notebook, so the rendered HTML displays its charts with no
network. Either way pandas shows floats through :func:`readable_number`: a table shows
``128.1``, not ``128.100811``; the stored results keep every digit.

Example::

    >>> in_report() == (os.environ.get(REPORT_ENV) == "1")
    True
"""

from __future__ import annotations

import math
import os

import pandas as pd
import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer

from skewlab.errors import SkewlabInputError

__all__ = [
    "REPORT_ENV",
    "REPORT_RENDERER",
    "ReportRenderer",
    "begin_notebook",
    "in_report",
    "readable_number",
    "setup_notebook",
    "use_readable_tables",
    "use_report_renderer",
]

#: Set to ``1`` in a notebook's kernel by ``skewlab report``.
REPORT_ENV = "SKEWLAB_REPORT"
#: The name of the report renderer in ``plotly.io.renderers``.
REPORT_RENDERER = "skewlab_report"


class ReportRenderer(MimetypeRenderer):
    """``text/html`` output with plotly.js inlined in the first figure only (offline reports);
    a figure with frames (a step-through) waits for its *Play* button, never plays on load.

    Example::

        >>> renderer = ReportRenderer()
        >>> "plotly.js" in renderer.to_mimebundle({"data": [], "layout": {}})["text/html"]
        True
        >>> renderer.plotlyjs_sent, len(renderer.to_mimebundle({"data": []})["text/html"]) < 5_000
        (True, True)
        >>> framed = {"data": [], "frames": [{"name": "step 1", "data": []}]}
        >>> "Plotly.animate" in renderer.to_mimebundle(framed)["text/html"]
        False
    """

    def __init__(self) -> None:
        # plotly shallow-copies a renderer per figure: keep the flag in a shared dict
        self._shared = {"plotlyjs_sent": False}

    @property
    def plotlyjs_sent(self) -> bool:
        """Whether a figure of this page has inlined plotly.js already."""
        return self._shared["plotlyjs_sent"]

    def begin_page(self) -> None:
        """A new page: its first figure inlines plotly.js again."""
        self._shared["plotlyjs_sent"] = False

    def to_mimebundle(self, fig_dict):
        html = pio.to_html(
            fig_dict,
            include_plotlyjs=not self._shared["plotlyjs_sent"],
            include_mathjax=False,
            full_html=False,
            auto_play=False,
            validate=False,
            config={"displaylogo": False},
        )
        self._shared["plotlyjs_sent"] = True
        return {"text/html": html}


#: The one report renderer (registered with plotly by :func:`use_report_renderer`).
_RENDERER = ReportRenderer()


def use_report_renderer(force: bool = False) -> bool:
    """Register the self-contained report renderer with plotly (as :data:`REPORT_RENDERER`)
    and make it the default when in a report (or ``force``); True when it is the default.

    Example::

        >>> use_report_renderer() == in_report()
        True
    """
    if REPORT_RENDERER not in pio.renderers:
        pio.renderers[REPORT_RENDERER] = _RENDERER
    if force or in_report():
        pio.renderers.default = REPORT_RENDERER
        return True
    return False


def setup_notebook() -> None:
    """What every notebook calls once, in its import cell: a notebook asked to run over Spark
    Connect (``$SPARK_REMOTE`` or ``$SKEWLAB_SPARK_MASTER`` an ``sc://`` URL) is refused in one
    line before any work, as the lab's commands are (only the skew doctor runs there:
    :data:`~skewlab.engine.connect_scope.CONNECT_SCOPE`); pandas shows floats as a reader
    reads them (:func:`use_readable_tables`) and, inside ``skewlab report``, plotly renders
    self-contained HTML (:func:`use_report_renderer`). Importing :mod:`skewlab.viz` does
    none of it.

    Example::

        >>> import pandas as pd
        >>> with pd.option_context("display.float_format", None):  # put back afterwards
        ...     setup_notebook()
        ...     pd.get_option("display.float_format") is readable_number
        True
    """
    from skewlab.engine.connect_scope import CONNECT_SCOPE, connect_url

    url = connect_url()
    if url is not None:
        raise SkewlabInputError(
            f"a notebook cannot run over Spark Connect ({url}): {CONNECT_SCOPE}"
        )
    use_report_renderer()
    use_readable_tables()


def begin_notebook() -> None:
    """A new page begins (``skewlab report`` runs its notebooks in one kernel): the next figure
    inlines plotly.js again, so each notebook's HTML works on its own.

    Example::

        >>> begin_notebook()
        >>> _RENDERER.plotlyjs_sent
        False
    """
    _RENDERER.begin_page()


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
