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

from skewlab.inputs.views import ViewSpec, generate_views, key_load
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import TEMPLATE

__all__ = ["key_load_figure", "skew_explorer", "subtask_load_figure"]


def key_load_figure(loads: Mapping[str, object], *, title: str | None = None) -> go.Figure:
    """Per-key load curves (records per key by rank) on log-log axes, one trace per label.

    ``loads`` maps a label to a DataFrame with ``rank`` and ``records`` (see
    :func:`skewlab.inputs.views.key_load`). The default title states the hottest tweet's share
    of the views under each label.
    """
    fig = go.Figure()
    for label, load in loads.items():
        fig.add_trace(
            go.Scatter(x=load["rank"], y=load["records"], mode="lines+markers", name=label)
        )
    shares = [
        f"{label} {load['records'].max() / load['records'].sum():.1%}"
        for label, load in loads.items()
        if load["records"].sum()
    ]
    fig.update_layout(
        title=title or "The hottest tweet's share of views: " + ", ".join(shares),
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
) -> Explorer:
    """A Zipf-skew slider that regenerates the views in Spark and redraws the per-key load.

    The uniform curve is drawn once as the reference; each slider release generates
    ``n_views`` Zipf views with the new exponent. In a report the control is shown inert.

    Example::

        >>> explorer = skew_explorer(spark, n_views=10_000, n_users=500, n_tweets=200)  # doctest: +SKIP
        >>> explorer.update(skew=2.0).figures[0].layout.title.text                     # doctest: +SKIP
        'Records per tweet — hottest tweet carries 61.2% of views'
    """  # noqa: E501
    uniform: list = []  # drawn once, on the first redraw

    def draw(skew: float) -> list:
        if not uniform:
            spec = ViewSpec(n_views, n_users, n_tweets, seed=seed)
            uniform.append(key_load(generate_views(spark, spec)))
        spec = ViewSpec(n_views, n_users, n_tweets, "zipf", float(skew), seed)
        zipf = key_load(generate_views(spark, spec))
        top = zipf["share"].iloc[0] if len(zipf) else 0.0
        fig = key_load_figure({"uniform": uniform[0], f"zipf s={skew:g}": zipf})
        fig.update_layout(title=f"Records per tweet — hottest tweet carries {top:.1%} of views")
        return [fig]

    slider = widgets.FloatSlider(
        value=skew,
        min=0.1,
        max=3.0,
        step=0.1,
        description="Zipf skew s",
        continuous_update=False,
        style=WIDGET_STYLE,
    )
    return Explorer({"skew": slider}, draw).start()
