"""Notebook 00, the problem in pictures: per-key and per-subtask load, and a skew slider.

Example::

    >>> import pandas as pd
    >>> load = pd.DataFrame({"rank": [1, 2], "records": [90, 10]})
    >>> fig = key_load_figure({"zipf": load})
    >>> fig.layout.xaxis.type
    'log'
"""

from __future__ import annotations

from collections.abc import Mapping

import ipywidgets as widgets
import plotly.graph_objects as go
from IPython.display import display

from skewlab.inputs.views import ViewSpec, generate_views, key_load
from skewlab.viz.palette import TEMPLATE
from skewlab.viz.render import in_report

__all__ = ["key_load_figure", "skew_explorer", "subtask_load_figure"]


def key_load_figure(
    loads: Mapping[str, object], *, title: str = "Records per tweet, hottest first"
) -> go.Figure:
    """Per-key load curves (records per key by rank) on log-log axes, one trace per label.

    ``loads`` maps a label to a DataFrame with ``rank`` and ``records`` (see
    :func:`skewlab.inputs.views.key_load`).
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


def skew_explorer(
    spark,
    *,
    n_views: int,
    n_users: int,
    n_tweets: int,
    seed: int = 0,
    skew: float = 1.1,
) -> widgets.Widget:
    """A Zipf-skew slider that regenerates the views in Spark and redraws the per-key load.

    The uniform curve is drawn once as the reference; each slider release generates
    ``n_views`` Zipf views with the new exponent. In a report the control is shown inert.
    """
    slider = widgets.FloatSlider(
        value=skew,
        min=0.1,
        max=3.0,
        step=0.1,
        description="Zipf skew s",
        continuous_update=False,
        style={"description_width": "initial"},
    )
    out = widgets.Output()
    box = widgets.VBox([slider, out])
    if in_report():
        display(box)
        return box
    uniform = key_load(generate_views(spark, ViewSpec(n_views, n_users, n_tweets, seed=seed)))

    def redraw(change=None) -> None:
        spec = ViewSpec(n_views, n_users, n_tweets, "zipf", float(slider.value), seed)
        zipf = key_load(generate_views(spark, spec))
        top = zipf["share"].iloc[0] if len(zipf) else 0.0
        fig = key_load_figure({"uniform": uniform, f"zipf s={slider.value:g}": zipf})
        fig.update_layout(title=f"Records per tweet — hottest tweet carries {top:.1%} of views")
        out.clear_output(wait=True)
        with out:
            fig.show()

    slider.observe(redraw, names="value")
    redraw()
    display(box)
    return box
