"""Every live widget of the notebooks, driven from code as a person at the sliders would: its
update function called outside papermill with a changed value, and its figure checked to
change the way the value says. Real Spark, real RocksDB; no browser (issue 16 adds one)."""

from __future__ import annotations

import pytest

from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.viz.buffering import buffering_explorer
from skewlab.viz.ebs_latency import ceiling_explorer
from skewlab.viz.hot_keys import skew_explorer
from skewlab.viz.render import REPORT_ENV
from skewlab.viz.salting import salting_explorer
from skewlab.viz.state_cache import cache_size_explorer


@pytest.fixture(autouse=True)
def live(monkeypatch):
    monkeypatch.delenv(REPORT_ENV, raising=False)  # a person at the sliders, not a report


def test_ceiling_explorer_redraws_the_buffered_ceiling_with_the_buffer_size():
    explorer = ceiling_explorer(load_disk_profile("ebs-article"), buffer_size=10)

    def bars() -> dict[str, float]:
        labels, ys = explorer.figures[0].data[0].x, explorer.figures[0].data[0].y
        return {label.split(" (")[0]: y for label, y in zip(labels, ys, strict=True)}

    before = bars()
    explorer.update(buffer_size=100)
    after = bars()
    assert explorer.figures[0].data[0].x[1] == "buffered (B=100)"
    assert after["buffered"] == pytest.approx(10 * before["buffered"])  # ten times the records
    assert after["naive"] == before["naive"]  # the other strategies do not buffer


def test_salting_explorer_reruns_the_salted_counter(spark):
    views = generate_views(spark, ViewSpec(2_000, 100, 20, "zipf", 1.5, seed=3))
    explorer = salting_explorer(views, salt_buckets=2, parallelism=2)
    title = explorer.figures[0].layout.title.text
    assert title.startswith("2 salt buckets")
    explorer.update(salt_buckets=8)
    assert explorer.figures[0].layout.title.text.startswith("8 salt buckets")
    table = explorer.outputs[1]
    assert (table["salted_sum"] >= table["views"]).all()  # the seed's sum over-counts


def test_skew_explorer_regenerates_the_views_with_the_new_exponent(spark):
    explorer = skew_explorer(spark, n_views=5_000, n_users=200, n_tweets=100, skew=0.5)
    low = explorer.figures[0]
    explorer.update(skew=2.5)
    high = explorer.figures[0]
    assert [t.name for t in high.data] == ["uniform", "zipf s=2.5"]

    def hottest_share(fig) -> float:
        return float(fig.layout.title.text.split("carries ")[1].split("%")[0])

    assert hottest_share(high) > 2 * hottest_share(low)  # steeper: the hottest carries more


def test_cache_size_explorer_runs_the_flip325_job_at_the_new_size(spark):
    explorer = cache_size_explorer(spark, n_records=5_000, start=250)
    marker = explorer.figures[0].data[-1]
    assert (list(marker.x), list(marker.y)) == ([250], [0.0])  # 250 entries never hit
    explorer.update(cache_entries=1000)
    marker = explorer.figures[0].data[-1]
    assert (list(marker.x), list(marker.y)) == ([1000], [pytest.approx(0.8)])  # 1,000 warm-up
    assert "1000 entries" in explorer.outputs[1].value


def test_buffering_explorer_measures_on_run(spark):
    explorer = buffering_explorer(
        spark, n_views=2_000, n_users=500, paced_views=400, source_rate=4_000, parallelism=1
    )
    assert explorer.figures == []  # nothing runs before *Run*
    explorer.update(cardinality=50, max_count=100, trigger_interval_ms=50)
    throughput, latency, table = explorer.outputs
    assert throughput.layout.title.text.startswith("50 tweets:")
    assert set(table["strategy"]) >= {"buffered"}
    assert list(table.loc[table["strategy"] == "buffered", "max_count"]) == [100]
    explorer.update(cardinality=5)
    assert explorer.figures[0].layout.title.text.startswith("5 tweets:")


@pytest.mark.long
def test_streaming_explorer_streams_at_the_chosen_trigger_interval(spark):
    from skewlab.viz.streaming import streaming_explorer

    explorer = streaming_explorer(
        spark, n_views=600, n_users=200, source_rate=1_200, parallelism=2, skew=1.5
    )
    assert explorer.figures == []  # nothing runs before *Run*
    explorer.update(trigger_interval_ms=250, skew=2.0)
    table = explorer.outputs[1]
    assert list(table["variant"]) == ["per-record", "per-batch"]
    assert set(table["trigger interval ms"]) == {250} and set(table["Zipf skew"]) == {2.0}
    assert (table["micro-batches"] >= 1).all()


def test_in_a_report_the_controls_are_shown_and_nothing_runs(monkeypatch):
    monkeypatch.setenv(REPORT_ENV, "1")
    explorer = ceiling_explorer(load_disk_profile("ebs-article"))
    assert explorer.figures == [] and not explorer.live
    explorer.controls["buffer_size"].value = 50  # no one can move it; if they could, no work
    assert explorer.figures == []


def test_an_error_while_drawing_is_shown_beside_the_controls_and_keeps_the_last_figure():
    import ipywidgets as widgets
    import plotly.graph_objects as go

    from skewlab.errors import SkewlabInputError
    from skewlab.viz.explorer import Explorer

    def draw(n: int) -> list:
        if n > 5:
            raise SkewlabInputError(f"n must be at most 5, got {n}")
        return [go.Figure(go.Bar(y=[n]))]

    explorer = Explorer({"n": widgets.IntSlider(value=2, max=9)}, draw).start()
    explorer.update(n=7)
    assert "SkewlabInputError: n must be at most 5, got 7" in explorer.status.value
    assert list(explorer.figures[0].data[0].y) == [2]
    explorer.update(n=3)
    assert explorer.status.value == "" and list(explorer.figures[0].data[0].y) == [3]
    with pytest.raises(SkewlabInputError, match="unknown control"):
        explorer.update(m=1)
