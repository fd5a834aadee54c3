"""The salting lesson's figures: every strategy and column drawn, on the scales they need."""

from __future__ import annotations

import pandas as pd

from skewlab.viz.salting import double_count_figure, order_figure


def test_salting_figures_show_every_strategy_and_column():
    table = pd.DataFrame(
        {"tweet_id": ["tweet-0"], "views": [10], "salted_sum": [30], "fixed_sum": [10]}
    )
    fig = double_count_figure(table)
    assert [list(t.y) for t in fig.data] == [[10], [30], [10]]
    assert fig.layout.yaxis.type == "log"
    order = pd.DataFrame(
        {
            "strategy": ["salted", "buffered"],
            "users": [100, 100],
            "order_violations": [20, 0],
            "resurrected": [20, 0],
        }
    )
    fig = order_figure(order)
    assert [list(t.x) for t in fig.data] == [["salted", "buffered"]] * 2
    assert list(fig.data[0].y) == [20, 0]
