"""Predict, then run: the control that asks before a measurement, and the reveal after it.

:func:`ask` shows a chapter's question (:mod:`skewlab.experiments.predictions`) with a slider in
the question's unit and a *Lock in* button; a locked-in guess is recorded
(``data/predictions.jsonl``, or ``$SKEWLAB_PREDICTIONS``) and the slider freezes.
:func:`reveal`, placed after the measurement, sets the guess beside this run's figure, the
shipped reference's and the seed's -- each computed from the result by the chapter's claim,
never typed. Run All runs the reveal before anyone has guessed: it waits, and fills in the
moment the guess is locked in.

In a rendered report nobody can guess: the question is shown before the measurement and the
answer after it, both as text.

Example::

    >>> question = ask("state_cache", "hit_ratio_at_250_entries")
    >>> question.slider.value = 40; question.lock_in(record=False); question.guess
    0.4
    >>> answer = reveal(question, state_cache={"summary": {"hit_ratio_250": 0.0,
    ...     "hit_ratio_500": 0.5, "hit_ratio_1000": 0.9995, "records": 2_000_000}})
    >>> "You predicted 40.0%" in answer.html.value
    True
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython.display import HTML, display

from skewlab.errors import SkewlabInputError
from skewlab.experiments.predictions import (
    Answers,
    Prediction,
    prediction,
    predictions_log,
    record_guess,
)
from skewlab.viz.explorer import WIDGET_STYLE
from skewlab.viz.render import in_report

__all__ = ["Ask", "Reveal", "ask", "reveal"]


class Ask:
    """The question and its control. :meth:`lock_in` does what the button does."""

    def __init__(self, p: Prediction) -> None:
        self.prediction = p
        self.guess: float | None = None
        self._locked: list[Callable[[], None]] = []
        percent = p.unit == "%"
        label = f"your guess ({p.unit.strip()})" if p.unit.strip() else "your guess"
        common = {"description": label, "style": WIDGET_STYLE, "continuous_update": False}
        if p.log:  # whole numbers where the scale starts at 1 and spans thousands
            readout = ",.0f" if p.low >= 1 and p.high > 1_000 else ".3g"
            self.slider = widgets.FloatLogSlider(
                value=p.start, base=10, min=math.log10(p.low), max=math.log10(p.high),
                step=0.05, readout_format=readout, **common,
            )  # fmt: skip
        elif percent:
            self.slider = widgets.IntSlider(
                value=round(p.start * 100), min=round(p.low * 100), max=round(p.high * 100),
                **common,
            )  # fmt: skip
        else:
            self.slider = widgets.FloatSlider(
                value=p.start, min=p.low, max=p.high, step=0.1, readout_format=".1f", **common
            )
        self.button = widgets.Button(description="Lock in", button_style="primary", icon="lock")
        self.button.on_click(lambda _: self.lock_in())
        self.status = widgets.HTML()
        question = widgets.HTML(f"<b>Predict first:</b> {html.escape(p.question)}")
        self.widget = widgets.VBox(
            [question, widgets.HBox([self.slider, self.button]), self.status]
        )
        self.widget.add_class("skewlab-prediction")

    def lock_in(self, *, record: bool = True) -> None:
        """Take the slider's value as the guess, record it (``record``), freeze the control."""
        p = self.prediction
        value = float(self.slider.value)
        self.guess = value / 100 if p.unit == "%" else value
        where = ""
        if record:
            record_guess(p, self.guess)
            where = f" (recorded in {predictions_log()})"
        self.slider.disabled = self.button.disabled = True
        self.status.value = f"Locked in: {html.escape(p.format(self.guess))}{where}."
        for callback in self._locked:
            callback()

    def on_lock_in(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when the guess is locked in."""
        self._locked.append(callback)

    def _ipython_display_(self) -> None:
        if in_report():
            text = html.escape(self.prediction.question)
            display(HTML(f"<p class='skewlab-prediction'><b>Predict first:</b> {text}</p>"))
        else:
            display(self.widget)


class Reveal:
    """The answer beside the guess: fills in when the guess is locked in."""

    def __init__(self, question: Ask, answers: Answers) -> None:
        self.question = question
        self.answers = answers
        self.html = widgets.HTML()
        self.html.add_class("skewlab-reveal")
        question.on_lock_in(self._draw)
        self._draw()

    def text(self) -> str:
        """The answer as HTML: the guess (if any), this run's figure, the reference's, the
        seed's."""
        a, p = self.answers, self.question.prediction
        lines = [f"<b>The prediction:</b> {html.escape(p.question)}"]
        guess = self.question.guess
        if guess is not None:
            beside = a.beside(guess)
            lines.append(
                f"You predicted {html.escape(p.format(guess))}"
                + (f": {html.escape(beside)}." if beside else ".")
            )
        elif not in_report():
            lines.append("<i>Lock in your prediction above to see it beside the figures.</i>")
            return "<br>".join(lines)
        figures = [f"this run: {html.escape(a.text(a.this_run))}"]
        if a.reference is not None:
            figures.append(f"the reference (full size): {html.escape(a.text(a.reference))}")
        if a.seed:
            figures.append(f"the seed: {html.escape(a.seed)}")
        lines.append("; ".join(figures) + ".")
        return "<br>".join(lines)

    def _draw(self) -> None:
        self.html.value = self.text()

    def _ipython_display_(self) -> None:
        if in_report():
            display(HTML(f"<p class='skewlab-reveal'>{self.text()}</p>"))
        else:
            display(self.html)


def ask(chapter: str, prediction_id: str) -> Ask:
    """The question ``prediction_id`` of ``chapter`` with its control (display it, or end a
    cell with it), to be answered by :func:`reveal` after the measurement.

    Example::

        >>> guess = viz.predictions.ask("buffering", "buffer_speedup_at_20_keys")  # doctest: +SKIP
    """
    return Ask(prediction(chapter, prediction_id))


def reveal(question: Ask, **results: Any) -> Reveal:
    """The answer to ``question`` from the result its claim reads (``source=result``, as
    :func:`~skewlab.viz.claims.claims_table` takes them), beside the locked-in guess.

    Example::

        >>> viz.predictions.reveal(guess, buffering=result)                # doctest: +SKIP
    """
    source = question.prediction.claim().source
    if source not in results:
        raise SkewlabInputError(
            f"the answer to {question.prediction.id!r} is read from the {source!r} result: "
            f"pass {source}=..., got {', '.join(results) or 'nothing'}"
        )
    return Reveal(question, question.prediction.answers(results[source]))
