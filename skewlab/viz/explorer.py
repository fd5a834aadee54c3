"""An explorer: notebook controls (sliders, a *Run* button) and the figures they redraw.

Every live widget of the notebooks is an :class:`Explorer`. Its ``draw`` function takes the
controls' values and returns what to show -- plotly figures first, then anything else
(tables, text). Moving a control redraws; :meth:`Explorer.update` sets controls from code and
redraws (what a test, or a script, does with no one at the sliders); :attr:`Explorer.figures`
holds what the last redraw drew. In a ``skewlab report`` nobody can move a control: the
explorer shows its controls and draws nothing.

A redraw replaces the charts in the widget's output area (``fig.show()``), the one way a figure
is drawn everywhere in skewlab. plotly's ``FigureWidget`` (with ``anywidget``) was tried in
JupyterLab 4.6 in Chromium: it updates in place and keeps a zoom, but executed by papermill it
leaves only a widget reference and a ``text/plain`` repr in the notebook -- no chart without a
live kernel -- and its saved widget state carries its own copy of plotly.js; so skewlab keeps
the one redraw path. The first drawing waits until the widget is on the page (a chart drawn
into an output area not yet shown is laid out without its tick labels).

Example::

    >>> import ipywidgets as widgets, plotly.graph_objects as go
    >>> def draw(n):
    ...     return [go.Figure(go.Bar(y=list(range(n))))]
    >>> explorer = Explorer({"n": widgets.IntSlider(value=3, min=1, max=9)}, draw)
    >>> _ = explorer.redraw(); len(explorer.figures[0].data[0].y)
    3
    >>> _ = explorer.update(n=5); len(explorer.figures[0].data[0].y)
    5
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
from IPython import get_ipython
from IPython.display import display

from skewlab.errors import SkewlabInputError
from skewlab.viz.render import in_report

__all__ = ["WIDGET_STYLE", "Explorer"]

#: Every control's style: its description shown whole, not cut at ipywidgets' default width.
WIDGET_STYLE = {"description_width": "initial"}


class Explorer:
    """Controls by name, and ``draw(**values) -> [figure, ..., other output]``.

    With ``run_button`` the redraw waits for a *Run* click (for work that takes seconds on
    Spark); otherwise every change of a control redraws. An error in ``draw`` is shown beside
    the controls (the person at the sliders sees it) and kept in :attr:`error`.
    """

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        draw: Callable[..., list[Any]],
        *,
        run_button: bool = False,
    ) -> None:
        self.controls = dict(controls)
        self.draw = draw
        self.figures: list[go.Figure] = []
        self.outputs: list[Any] = []
        self.error: Exception | None = None
        self.status = widgets.HTML()
        self.status.add_class("skewlab-explorer-status")
        self.out = widgets.Output()
        self.button = (
            widgets.Button(description="Run", button_style="primary", icon="play")
            if run_button
            else None
        )
        rows: list[widgets.Widget] = list(self.controls.values())
        rows.append(widgets.HBox([self.button, self.status]) if self.button else self.status)
        self.widget = widgets.VBox([*rows, self.out])
        self.widget.add_class("skewlab-explorer")
        self._holding = False
        self._shown = False  # the widget is on the page: redraws draw into it
        self.live = not in_report()
        if not self.live:
            return
        if self.button is not None:
            self.button.on_click(lambda _: self.redraw())
        else:
            for control in self.controls.values():
                control.observe(self._changed, names="value")

    @property
    def values(self) -> dict[str, Any]:
        """The controls' current values, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def _changed(self, change=None) -> None:
        if not self._holding:
            self.redraw()

    def redraw(self) -> Explorer:
        """Draw with the controls' current values (into the widget's output area)."""
        if self.button is not None:
            self.button.disabled = True
            self.status.value = "running on Spark…"
        try:
            outputs = list(self.draw(**self.values))
        except Exception as exc:  # noqa: BLE001 - shown to the person at the sliders
            self.error = exc
            self.status.value = f"<span style='color:#b00'>{type(exc).__name__}: {exc}</span>"
            return self
        finally:
            if self.button is not None:
                self.button.disabled = False
        self.error = None
        self.status.value = ""
        self.outputs = outputs
        self.figures = [o for o in outputs if isinstance(o, go.Figure)]
        if self._shown:
            self._draw_outputs()
        return self

    def _draw_outputs(self) -> None:
        """Draw the last outputs into the widget's output area (only once it is on the page:
        a chart drawn into an output area that is not yet shown is laid out at no width --
        no tick labels, its legend over the axis title -- until the next redraw)."""
        if get_ipython() is None:  # no kernel (a script, a test): nothing to draw into
            return
        self.out.clear_output(wait=True)
        with self.out:
            for item in self.outputs:
                if isinstance(item, go.Figure):
                    item.show()
                else:
                    display(item)

    def update(self, **values: Any) -> Explorer:
        """Set controls by name and redraw once, e.g. ``explorer.update(salt_buckets=8)``."""
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise SkewlabInputError(
                f"unknown control(s) {', '.join(unknown)}: this explorer has "
                f"{', '.join(self.controls)}"
            )
        self._holding = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._holding = False
        return self.redraw()

    def start(self) -> Explorer:
        """The first drawing (none in a report, or before a *Run* click)."""
        if self.live and self.button is None:
            self.redraw()
        return self

    def _ipython_display_(self) -> None:
        display(self.widget)
        self._shown = True
        if self.outputs:
            self._draw_outputs()

    def __repr__(self) -> str:
        return f"Explorer({', '.join(f'{k}={v!r}' for k, v in self.values.items())})"
