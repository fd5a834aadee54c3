"""ipywidgets controls of notebooks 02 and 03: change a parameter, rerun real Spark jobs, redraw.

Each control is a few sliders, a *Run* button and an ``Output`` the figures are shown into with
``fig.show()`` (plotly's ``FigureWidget`` needs anywidget, which the lab does not ship). Inside
``skewlab report`` (:func:`skewlab.charts.in_report`) the controls are displayed inert and no job
runs; the notebooks show static figures for their parameters instead.

Example::

    >>> from skewlab.widgets_skew import buffering_explorer
    >>> buffering_explorer(spark, n_views=20_000, n_users=5_000)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import pandas as pd
from IPython.display import display

from skewlab.charts import in_report
from skewlab.charts_skew import double_count_figure, latency_figure, throughput_figure

CARDINALITIES = (20_000, 10_000, 5_000, 1_000, 500, 100, 50, 20, 10, 5, 2, 1)
MAX_COUNTS = (10, 100, 1_000, 10_000, 100_000)
INTERVALS_MS = (10, 20, 50, 100, 200, 500, 1_000)
_STYLE = {"description_width": "initial"}


def _select(description: str, options: Sequence, value) -> widgets.SelectionSlider:
    return widgets.SelectionSlider(
        options=list(options),
        value=value,
        description=description,
        continuous_update=False,
        style=_STYLE,
        layout={"width": "32rem"},
    )


def buffering_explorer(
    spark,
    *,
    n_views: int,
    n_users: int,
    cardinality: int = 20,
    max_count: int = 1_000,
    trigger_interval_ms: int = 100,
    source_rate: float = 5_000,
    paced_views: int = 5_000,
    parallelism: int | None = None,
    seed: int = 1,
) -> widgets.Widget:
    """Sliders for key cardinality, ``max_count`` and the trigger interval; *Run* measures.

    One click generates ``n_views`` views over ``cardinality`` tweets and runs naive (RocksDB)
    and buffered as fast as possible (throughput), then buffered again over ``paced_views``
    views at ``source_rate`` records/s (latency: meaningful only with a paced source).
    """
    from skewlab.latency_sweep import latency_sweep
    from skewlab.runtime import RunConfig
    from skewlab.strategies import run_strategy
    from skewlab.views import ViewSpec, generate_views

    card = _select("distinct tweets", CARDINALITIES, cardinality)
    count = _select("max_count", MAX_COUNTS, max_count)
    interval = _select("trigger interval (ms)", INTERVALS_MS, trigger_interval_ms)
    button = widgets.Button(description="Run", button_style="primary", icon="play")
    status = widgets.HTML()
    out = widgets.Output()
    box = widgets.VBox([card, count, interval, widgets.HBox([button, status]), out])
    if in_report():
        display(box)
        return box

    def run(_=None) -> None:
        button.disabled = True
        status.value = "running on Spark…"
        try:
            views = generate_views(spark, ViewSpec(n_views, n_users, card.value, seed=seed))
            views = views.cache()
            rows = []
            for name, config in (
                ("naive", RunConfig("naive", parallelism=parallelism, latency_profile=None)),
                (
                    "buffered",
                    RunConfig(
                        "buffered",
                        parallelism=parallelism,
                        max_count=count.value,
                        trigger_interval_ms=interval.value,
                        latency_profile=None,
                    ),
                ),
            ):
                result, _ = run_strategy(views, config, spark)
                rows.append(
                    {
                        "cardinality": card.value,
                        "strategy": name,
                        "run": 0,
                        "operator_records_per_second": result.operator_records_per_second,
                    }
                )
            views.unpersist()
            paced = generate_views(
                spark, ViewSpec(paced_views, n_users, min(card.value, paced_views), seed=seed)
            )
            sweep = latency_sweep(
                paced,
                source_rate=source_rate,
                trigger_intervals=(interval.value,),
                max_count=count.value,
                parallelism=parallelism,
                baseline=True,
            )
            frame = pd.DataFrame(rows)
            speedup = (
                rows[1]["operator_records_per_second"] / rows[0]["operator_records_per_second"]
            )
            fig = throughput_figure(
                frame, title=f"{card.value:,} tweets: buffered is {speedup:.1f}x naive"
            )
            out.clear_output(wait=True)
            with out:
                fig.show()
                latency_figure(sweep).show()
                display(sweep[["strategy", "trigger_interval_ms", "max_count", "buffer_flushes",
                               "latency_p50_ms", "latency_p99_ms"]])  # fmt: skip
            status.value = ""
        except Exception as exc:  # noqa: BLE001 - shown to the person at the sliders
            status.value = f"<span style='color:#b00'>{type(exc).__name__}: {exc}</span>"
        finally:
            button.disabled = False

    button.on_click(run)
    display(box)
    return box


def salting_explorer(
    views, *, salt_buckets: int = 4, parallelism: int | None = 2
) -> widgets.Widget:
    """A salt-buckets slider: each release reruns the salted counter and redraws the counts.

    More buckets spread a hot key further, and each sub-key carries fewer records -- so the
    seed's sum of running partials over-counts less, yet never becomes right.
    """
    from skewlab.salting import salted_counter

    slider = widgets.IntSlider(
        value=salt_buckets,
        min=1,
        max=32,
        description="salt buckets",
        continuous_update=False,
        style=_STYLE,
    )
    out = widgets.Output()
    box = widgets.VBox([slider, out])
    if in_report():
        display(box)
        return box

    def redraw(change=None) -> None:
        result = salted_counter(views, salt_buckets=int(slider.value), parallelism=parallelism)
        table = result.table
        worst = table["over_count"].max()
        fig = double_count_figure(
            table, title=f"{slider.value} salt buckets: the seed's sum is up to {worst:.1f}x"
        )
        out.clear_output(wait=True)
        with out:
            fig.show()
            display(table)

    slider.observe(redraw, names="value")
    redraw()
    display(box)
    return box
