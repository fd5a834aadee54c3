"""ipywidgets controls for JupyterLab: move a slider, rerun a real Spark job, redraw the chart.

In a rendered report the controls cannot run (there is no kernel); every notebook therefore
also shows a static figure for its report parameters.

Example::

    >>> from skewlab.widgets import skew_explorer
    >>> skew_explorer(spark, n_views=100_000, n_users=25_000, n_tweets=1_000)  # doctest: +SKIP
"""

from __future__ import annotations

import ipywidgets as widgets
from IPython.display import display

from skewlab.charts import in_report, key_load_figure
from skewlab.views import ViewSpec, generate_views, key_load


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
