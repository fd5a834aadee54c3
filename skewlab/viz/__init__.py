"""Presentation, one module per lesson, in one palette: figures, tables, sentences, what
``skewlab bench`` prints, and JupyterLab controls.

==================  ===============================================================
``palette``         one colour per strategy, backend and neutral line; the side labels; the
                    plotly template
``render``          :func:`setup_notebook`: live figures in JupyterLab, self-contained HTML
                    in a report, readable floats in tables
``explorer``        :class:`~skewlab.viz.explorer.Explorer`: controls and the figures they
                    redraw; the controls' one style
``titles``          chart titles that state the result a chart shows
``text``            numbers in sentences and terminal tables: percent, ``4.2x``,
                    ``median [min..max]``
``claims``          a chapter's claims over this run, the reference and the seed, marked
                    held / not held (what a notebook says about a measured outcome)
``hot_keys``        notebook 00: per-key and per-subtask load, a skew slider
``ebs_latency``     notebook 01: the EBS arithmetic, ceilings, measured vs modelled
``salting``         notebook 02: the double count, the per-tweet summary, the order lost, a
                    salt slider
``buffering``       notebook 03: throughput over cardinality, latency over the interval, the
                    sentences, ``bench buffering``'s table
``state_cache``     notebook 04: FLIP-325's hit ratio and speedups, its tables and sentences,
                    ``bench state_cache``'s table, a cache-size slider
``sorted_input``    notebook 05: FLIP-140's WordCount, memory at two K, ValueState; their
                    tables, sentences, ``bench sorted_input`` / ``value_state``'s tables
``rescaling``       notebook 06: key groups (Figure 3), the restore ways' tables and figures,
                    the sentences, ``bench rescaling``'s table, operator state
``backlog``         notebook 07: catch-up time against parallelism, the measured table, the
                    sentences, ``bench backlog``'s summary
``streaming``       notebook 08: Spark Structured Streaming, the hot partition, rescaling, the
                    shape's sentence, ``bench streaming``'s table
``beyond_salting``  notebook 10: key splitting's table, figures, sentences and controls,
                    ``bench splitting``'s summary
``predictions``     predict, then run: a question's slider and *Lock in* before a measurement,
                    the guess beside this run's, the reference's and the seed's figure after
``step_through``    a traced run played back: play / previous / next in JupyterLab, the
                    same steps as a plotly figure's frames in a report
``reference_section``  a section a size leaves out: this run's, or the shipped reference's
==================  ===============================================================

Measurement lives in :mod:`skewlab.experiments`; everything here only shows it. Importing
:mod:`skewlab.viz` changes no global state: each notebook calls :func:`setup_notebook` once in
its import cell (pandas' float format; inside ``skewlab report``, plotly's offline renderer).

Example::

    >>> from skewlab import viz
    >>> viz.COLORS["buffered"]
    '#1f77b4'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from skewlab.viz import (
    backlog,
    beyond_salting,
    buffering,
    claims,
    ebs_latency,
    hot_keys,
    predictions,
    rescaling,
    salting,
    sorted_input,
    state_cache,
    step_through,
    streaming,
)
from skewlab.viz.palette import COLORS, LABELS, TEMPLATE
from skewlab.viz.render import in_report, setup_notebook, use_report_renderer


def summary_formatter(bench: Any) -> Callable[[Any], str]:
    """What ``skewlab bench`` prints for a benchmark of the chapter registry: the function its
    record names (``bench.formatter``) in its chapter's module here (``bench.viz_module``).

    Example::

        >>> from skewlab.experiments.chapters import benchmark
        >>> summary_formatter(benchmark("value_state")).__qualname__
        'format_value_state_summary'
    """
    return getattr(importlib.import_module(bench.viz_module), bench.formatter)


__all__ = [
    "COLORS",
    "LABELS",
    "TEMPLATE",
    "backlog",
    "beyond_salting",
    "buffering",
    "claims",
    "ebs_latency",
    "hot_keys",
    "in_report",
    "predictions",
    "rescaling",
    "salting",
    "setup_notebook",
    "sorted_input",
    "state_cache",
    "step_through",
    "streaming",
    "summary_formatter",
    "use_report_renderer",
]
