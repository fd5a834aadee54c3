"""Plotly figures the notebooks show, and the renderer that makes reports self-contained.

In JupyterLab plotly's own renderer is used. When a notebook runs inside ``skewlab report``
(``SKEWLAB_REPORT=1`` in the kernel's environment), importing this module switches plotly to
the ``skewlab_report`` renderer: plain HTML with plotly.js inlined once per notebook, so the
rendered HTML displays its charts with no network.

Example::

    >>> import pandas as pd
    >>> load = pd.DataFrame({"rank": [1, 2], "records": [90, 10]})
    >>> fig = key_load_figure({"zipf": load})
    >>> fig.layout.xaxis.type
    'log'
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

REPORT_ENV = "SKEWLAB_REPORT"
TEMPLATE = "plotly_white"


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


def in_report() -> bool:
    """True inside ``skewlab report``: no one can move a slider, so widgets skip their work.

    (Drawing into an ipywidgets ``Output`` during a papermill run also stalls nbclient.)
    """
    return os.environ.get(REPORT_ENV) == "1"


def key_load_figure(
    loads: Mapping[str, object], *, title: str = "Records per tweet, hottest first"
) -> go.Figure:
    """Per-key load curves (records per key by rank) on log-log axes, one trace per label.

    ``loads`` maps a label to a DataFrame with ``rank`` and ``records`` (see
    :func:`skewlab.views.key_load`).
    """
    fig = go.Figure()
    for label, load in loads.items():
        fig.add_trace(
            go.Scatter(x=load["rank"], y=load["records"], mode="lines+markers", name=label)
        )
    fig.update_layout(
        title=title,
        template=TEMPLATE,
        xaxis={"title": "tweet rank (1 = hottest)", "type": "log"},
        yaxis={"title": "records", "type": "log"},
        legend={"title": "distribution"},
    )
    return fig


def subtask_load_figure(
    loads: Mapping[str, object], *, title: str = "Records per subtask"
) -> go.Figure:
    """Bars of records per operator subtask, one group per label.

    ``loads`` maps a label to a DataFrame with ``subtask`` and ``records``.
    """
    fig = go.Figure()
    for label, load in loads.items():
        fig.add_trace(go.Bar(x=load["subtask"], y=load["records"], name=label))
    fig.update_layout(
        title=title,
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "subtask (operator index)", "dtick": 1},
        yaxis={"title": "records"},
    )
    return fig
