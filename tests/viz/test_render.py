"""What a reader sees of tables and axes: a float shown with the digits that matter (the value
itself keeps every digit), and a log axis's minor ticks labelled with their whole value."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

import skewlab.viz  # noqa: F401 - importing the charts sets the display format
from skewlab.viz.palette import TEMPLATE


def test_a_table_shows_a_ratio_with_one_decimal_and_keeps_every_digit():
    table = pd.DataFrame({"tweet_id": ["tweet-0"], "over_count": [128.100811], "views": [2000]})
    page = table.to_html()
    assert "<td>128.1</td>" in page and "128.100811" not in page
    assert "<td>2000</td>" in page  # integers are left alone
    assert table["over_count"].iloc[0] == 128.100811


def test_a_log_axis_labels_its_minor_ticks_in_full():
    fig = go.Figure(go.Scatter(x=[1, 100], y=[0.05, 10]), layout={"template": TEMPLATE})
    fig.update_yaxes(type="log")
    assert fig.layout.template.layout.yaxis.minorloglabels == "complete"
    assert fig.layout.template.layout.xaxis.minorloglabels == "complete"
