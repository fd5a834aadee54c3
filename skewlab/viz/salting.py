"""Notebook 02, key salting (seed 000): the double count of running partials, the per-tweet
summary of the counts, the order lost, and a salt-buckets slider.

Example::

    >>> import pandas as pd
    >>> table = pd.DataFrame({"tweet_id": ["t0"], "views": [10], "salted_sum": [55],
    ...                       "fixed_sum": [10]})
    >>> [trace.name for trace in double_count_figure(table).data][0]
    'right count (Spark groupBy)'
"""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from skewlab.experiments.salting import CounterResult, HllResult, salted_counter
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, TEMPLATE

__all__ = ["double_count_figure", "order_figure", "salting_explorer", "salting_summary"]


def double_count_figure(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Per tweet: the right count, the seed's sum of running partials, and the fixed sum.

    ``table``: :attr:`skewlab.experiments.salting.CounterResult.table` (log y: the wrong number
    is tens of times the right one). The default title states the worst over-count and whether
    the fixed sum is exact.
    """
    fig = go.Figure()
    for column, name, color in (
        ("views", "right count (Spark groupBy)", COLORS["correct"]),
        ("salted_sum", "seed's total + partialSum", COLORS["naive"]),
        ("fixed_sum", "latest partial per sub-key, summed", COLORS["buffered"]),
    ):
        fig.add_trace(
            go.Bar(
                x=table["tweet_id"],
                y=table[column],
                name=name,
                marker_color=color,
                hovertemplate="%{x}: %{y:,}<extra></extra>",
            )
        )
    if title is None and len(table):
        worst = (table["salted_sum"] / table["views"]).max()
        exact = "exact" if (table["fixed_sum"] == table["views"]).all() else "NOT exact"
        title = (
            f"The seed's salted sum over-counts up to {worst:.1f}x; latest partials summed: {exact}"
        )
    fig.update_layout(
        title=title or "Counting views through salting",
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "tweet"},
        yaxis={"title": "view count", "type": "log"},
    )
    return fig


def salting_summary(counter: CounterResult, hll: HllResult) -> pd.DataFrame:
    """Per tweet: the right count, the seed's salted counter, the fix, and the HLL union.

    Example::

        >>> from skewlab.experiments.salting import salted_counter, salted_hll
        >>> salting_summary(salted_counter(views), salted_hll(views))   # doctest: +SKIP
    """
    hll_cols = hll.table[["tweet_id", "salted_estimate", "registers_match"]].rename(
        columns={"salted_estimate": "hll_estimate", "registers_match": "hll_registers_match"}
    )
    return counter.table.merge(hll_cols, on="tweet_id", how="left")


def order_figure(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Order violations and resurrected accounts per strategy
    (:func:`~skewlab.experiments.salting.lifecycle_table`); the default title states each
    strategy's count of deleted accounts left active."""
    fig = go.Figure()
    for column, name, color in (
        ("order_violations", "events applied after a later one", COLORS["salted"]),
        ("resurrected", "deleted accounts left active", COLORS["naive"]),
    ):
        fig.add_trace(
            go.Bar(
                x=table["strategy"],
                y=table[column],
                name=name,
                marker_color=color,
                text=table[column],
                textposition="outside",
            )
        )
    users = int(table["users"].max()) if len(table) else 0
    fig.update_layout(
        title=title
        or "Deleted accounts left active, of "
        + f"{users:,} users: "
        + ", ".join(f"{r.strategy} {r.resurrected:,}" for r in table.itertuples()),
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "strategy"},
        yaxis={"title": "count"},
    )
    return fig


def salting_explorer(views, *, salt_buckets: int = 4, parallelism: int | None = 2) -> Explorer:
    """A salt-buckets slider: each release reruns the salted counter and redraws the counts.

    More buckets spread a hot key further, and each sub-key carries fewer records -- so the
    seed's sum of running partials over-counts less, yet never becomes right.

    Example::

        >>> explorer = salting_explorer(views)                        # doctest: +SKIP
        >>> explorer.update(salt_buckets=16).figures[0].layout.title.text  # doctest: +SKIP
    """

    def draw(salt_buckets: int) -> list:
        table = salted_counter(views, salt_buckets=int(salt_buckets), parallelism=parallelism).table
        worst = table["over_count"].max()
        title = f"{salt_buckets} salt buckets: the seed's sum is up to {worst:.1f}x"
        return [double_count_figure(table, title=title), table]

    slider = widgets.IntSlider(
        value=salt_buckets,
        min=1,
        max=32,
        description="salt buckets",
        continuous_update=False,
        style=WIDGET_STYLE,
    )
    return Explorer({"salt_buckets": slider}, draw).start()
