"""What a reader sees of tables and axes: a float shown with the digits that matter (the value
itself keeps every digit), and a log axis's minor ticks labelled with their whole value; and
who sets that up: a notebook's ``setup_notebook()``, never the import of :mod:`skewlab.viz`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import plotly.graph_objects as go
import pytest

from skewlab.viz.palette import TEMPLATE
from skewlab.viz.render import REPORT_ENV, REPORT_RENDERER, setup_notebook

#: Run in a fresh interpreter: plotly's and pandas' global state before and after importing
#: skewlab.viz, and after setup_notebook().
STATE = """
import json, pandas as pd, plotly.io as pio

def state():
    fmt = pd.get_option("display.float_format")
    return {"renderer": pio.renderers.default, "float_format": getattr(fmt, "__name__", fmt),
            "registered": "skewlab_report" in pio.renderers}

before = state()
import skewlab.viz
imported = state()
skewlab.viz.setup_notebook()
print(json.dumps({"before": before, "imported": imported, "set_up": state()}))
"""


def _states(report: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != REPORT_ENV}
    if report:
        env[REPORT_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", STATE], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout.splitlines()[-1])


def test_importing_viz_changes_no_global_state_and_setup_notebook_does_in_a_report():
    assert REPORT_RENDERER in STATE
    states = _states(report=True)
    assert states["imported"] == states["before"]
    assert states["before"]["float_format"] is None and not states["before"]["registered"]
    assert states["set_up"] == {
        "renderer": REPORT_RENDERER,
        "float_format": "readable_number",
        "registered": True,
    }


def test_outside_a_report_setup_notebook_keeps_plotlys_own_renderer():
    states = _states(report=False)
    assert states["imported"] == states["before"]
    assert states["set_up"]["renderer"] == states["before"]["renderer"] != REPORT_RENDERER
    assert states["set_up"]["float_format"] == "readable_number"


def test_a_table_shows_a_ratio_with_one_decimal_and_keeps_every_digit():
    table = pd.DataFrame({"tweet_id": ["tweet-0"], "over_count": [128.100811], "views": [2000]})
    with pd.option_context("display.float_format", None):
        setup_notebook()
        page = table.to_html()
    assert "<td>128.1</td>" in page and "128.100811" not in page
    assert "<td>2000</td>" in page  # integers are left alone
    assert table["over_count"].iloc[0] == 128.100811


def test_a_log_axis_labels_its_minor_ticks_in_full():
    fig = go.Figure(go.Scatter(x=[1, 100], y=[0.05, 10]), layout={"template": TEMPLATE})
    fig.update_yaxes(type="log")
    assert fig.layout.template.layout.yaxis.minorloglabels == "complete"
    assert fig.layout.template.layout.xaxis.minorloglabels == "complete"


def test_a_notebook_asked_to_run_over_spark_connect_is_refused_in_one_line_before_any_work(
    monkeypatch,
):
    from skewlab.engine.session import MASTER_ENV
    from skewlab.errors import SkewlabInputError

    monkeypatch.delenv(MASTER_ENV, raising=False)
    for variable in ("SPARK_REMOTE", MASTER_ENV):
        monkeypatch.setenv(variable, " sc://spark.example.com:15002 ")
        with pd.option_context("display.float_format", None):
            with pytest.raises(SkewlabInputError) as refused:
                setup_notebook()
            assert pd.get_option("display.float_format") is None  # refused before any work
        message = str(refused.value)
        assert message.startswith(
            "a notebook cannot run over Spark Connect (sc://spark.example.com:15002): only the "
        )
        assert "\n" not in message and "SPARK_REMOTE unset" in message
        monkeypatch.delenv(variable)
    monkeypatch.setenv(MASTER_ENV, "local[2]")  # a classic master is not refused
    with pd.option_context("display.float_format", None):
        setup_notebook()
