"""Figures, tables and JupyterLab controls, one module per lesson, in one palette.

==================  ===============================================================
``palette``         one colour per strategy and backend, the plotly template
``render``          live figures in JupyterLab, self-contained HTML in a report
``hot_keys``        notebook 00: per-key and per-subtask load, a skew slider
``ebs_latency``     notebook 01: the EBS arithmetic, ceilings, measured vs modelled
``salting``         notebook 02: the double count, the order lost, a salt slider
``buffering``       notebook 03: throughput over cardinality, latency over the interval
``state_cache``     notebook 04: FLIP-325's hit ratio and speedups, a cache-size slider
``sorted_input``    notebook 05: FLIP-140's WordCount, memory at two K, ValueState
``rescaling``       notebook 06: key groups (Figure 3), the restore ways, operator state
``backlog``         notebook 07: the outage backlog, catch-up time against parallelism
``streaming``       notebook 08: Spark Structured Streaming, the hot partition, rescaling
==================  ===============================================================

Importing :mod:`skewlab.viz` inside ``skewlab report`` switches plotly to the offline report
renderer (:mod:`skewlab.viz.render` does it when imported).

Example::

    >>> from skewlab import viz
    >>> viz.COLORS["buffered"]
    '#1f77b4'
"""

from __future__ import annotations

from skewlab.viz import (
    backlog,
    buffering,
    ebs_latency,
    hot_keys,
    rescaling,
    salting,
    sorted_input,
    state_cache,
    streaming,
)
from skewlab.viz.palette import COLORS, LABELS, TEMPLATE
from skewlab.viz.render import in_report, use_report_renderer

__all__ = [
    "COLORS",
    "LABELS",
    "TEMPLATE",
    "backlog",
    "buffering",
    "ebs_latency",
    "hot_keys",
    "in_report",
    "rescaling",
    "salting",
    "sorted_input",
    "state_cache",
    "streaming",
    "use_report_renderer",
]
