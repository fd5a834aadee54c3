"""One palette for every chart: a strategy or backend has the same colour in every lesson.

Example::

    >>> COLORS["naive"] == COLORS["rocksdb"]     # the naive reduce runs on RocksDB
    True
    >>> COLORS["buffered"] != COLORS["spark_sql"] and COLORS["salted"] != COLORS["cached"]
    True
    >>> LABELS["count"]["rocksdb"], LABELS["state_cache"]["rocksdb"]
    ('keyed, RocksDB', 'RocksDB, no cache')
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

__all__ = [
    "COLORS",
    "CURVE_COLORS",
    "DIRECTION_COLORS",
    "LABELS",
    "LEGEND_BELOW",
    "SUBTASK_COLORS",
    "TEMPLATE",
]

#: plotly's template for every figure: plotly_white, with a log axis's minor ticks labelled
#: with their whole value (0.2, 0.5, 2, 5) rather than a lone digit beside the decade's label
TEMPLATE = "skewlab"
pio.templates[TEMPLATE] = go.layout.Template(
    pio.templates["plotly_white"],
    layout={
        "xaxis": {"minorloglabels": "complete"},
        "yaxis": {"minorloglabels": "complete"},
    },
)

#: Layout for a legend in rows under a chart (for a chart with a second y axis, whose title a
#: legend at the right would cover): a fixed height and bottom margin, the legend a fixed
#: distance below the plot, under the x axis's title and tick labels (plotly's automatic margin
#: does not move the axis title out of a legend's way)
LEGEND_BELOW = {
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.24, "x": 0},
    "margin": {"b": 150},
    "height": 560,
}

#: One colour per strategy, state backend and reference line.
COLORS = {
    "naive": "#d62728",
    "rocksdb": "#d62728",  # naive = keyed state on RocksDB
    "buffered": "#1f77b4",
    "buffered_hotkey": "#6baed6",  # the buffer for hot keys only: a paler "buffered"
    "salted": "#8c564b",
    "cached": "#ff7f0e",
    "heap": "#9467bd",
    "sort_group": "#7f7f7f",
    "sorted": "#2ca02c",
    "single_key": "#2ca02c",  # sorted = single-key state
    "spark_sql": "#17becf",
    "pkg": "#e377c2",  # key splitting (chapter 10)
    "dchoices": "#393b79",
    "wchoices": "#17a589",
    "per-record": "#d62728",  # streaming: a state read and write per record, as naive
    "per-batch": "#1f77b4",  # streaming: the micro-batch as the buffer, as buffered
    "builtin": "#17becf",  # streaming: Spark's own aggregation, as spark_sql
    "seed": "#bcbd22",  # a figure the seed published
    "correct": "#2ca02c",  # a right answer beside a wrong one
    "lru_batched": "#8c564b",  # the batched write-back beside FLIP-325's LRU ("cached")
    "operator_cpu": "#74c476",  # operators' CPU time beside a job time (a paler "sorted")
    "cold_partition": "#9fb4c7",  # a partition without the hot key
    "unlisted": "#7f7f7f",  # a curve with no colour of its own (an explorer's)
    "at_rest": "#c7c7c7",  # a step-through's quiet bar: records merged, a key not cached
    # a claim's outcome (viz.claims)
    "held": "#2ca02c",
    "not_held": "#d62728",
    "not_measured": "#7f7f7f",
    # neutral lines and marks
    "guide": "#999",  # dotted guides: half an interval, one interval
    "parity": "#888",  # the 1x line of a ratio chart
    "mark": "#444",  # a marked size, this run's point, sorted input's 1x line
    "line": "#333",  # a measure beside the bars (a micro-batch's duration)
}

#: Read and write latencies.
DIRECTION_COLORS = {"read": "#1f77b4", "write": "#d62728"}

#: How a side reads in a legend or a table, one table per thing compared, by the ids the
#: experiments' rows carry (one id may mean a side in two tables: ``rocksdb`` is a count
#: strategy and FLIP-325's side without a cache).
LABELS = {
    # skewlab.strategies.count's strategies: chapter 05's WordCount
    "count": {
        "rocksdb": "keyed, RocksDB",
        "heap": "keyed, heap",
        "sort_group": "sort + group, no state (DataSet)",
        "sorted": "sorted input, single-key state",
        "spark_sql": "Spark groupBy().count()",
    },
    # skewlab.experiments.buffering.SIDES: chapter 03
    "buffering": {
        "naive": "naive (RocksDB)",
        "buffered": "buffered, vectorized",
        "buffered_list": "buffered, the seed's list",
        "buffered_hotkey": "buffered, hot keys only",
    },
    # skewlab.experiments.state_cache.SIDES: chapter 04
    "state_cache": {
        "rocksdb": "RocksDB, no cache",
        "lru": "FLIP-325 LRU",
        "lru_batched": "batched write-back",
    },
    # skewlab.state.restore.RESTORE_WAYS: chapter 06
    "restore": {
        "read_all": "read all, filter",
        "per_key_index": "per-key index",
        "key_groups": "key groups",
    },
}

#: One colour per subtask index (figures of key groups and operator state), cycled.
SUBTASK_COLORS = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b",
    "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
)  # fmt: skip

#: The outage-backlog curves: the strategy's colour, uniform keys in the heap's.
CURVE_COLORS = {
    "uniform, naive": COLORS["heap"],
    "Zipf, naive": COLORS["naive"],
    "Zipf, buffered": COLORS["buffered"],
}
