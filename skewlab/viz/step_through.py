"""A step-through of a traced run: play, previous, next over the engine's own records.

A :class:`~skewlab.experiments.step_through.Trace` is a real run's per-record log; each step
is drawn as one chart of the state after it, titled with what the step did
(:meth:`~skewlab.experiments.step_through.Trace.describe`):

============  =================================================================================
key groups    records so far per subtask, stacked by key: a hot key's whole load on one subtask
buffer        per key, the records its subtask's buffer holds and the records merged into keyed
              state; each flush empties the buffer in one read and one write per key
cache         per key, the records counted so far, coloured by whether the LRU holds its object;
              hits, misses, evictions and RocksDB's reads and writes so far in the title
salting       stage 1's running count per sub-key; stage 2's sum of the running partials per
              tweet (the seed's) beside the right count
rescaling     key groups across: the savepoint's files (keys' states as dots), the new subtasks'
              ranges; a restore's spans read from each old file, a record's key group
============  =================================================================================

:func:`step_through` shows it where the reader is: in JupyterLab a
:class:`StepThrough` widget (*Play*, *previous*, *next*, a step slider); in a rendered report,
where no kernel answers a click, :func:`step_through_figure` -- the same charts as the frames of
one plotly figure with its own slider and *Play* / *Pause*, which run in the page.

Example::

    >>> from skewlab.experiments.step_through import Trace
    >>> events = [{"kind": "record", "stage": "1:count", "subtask": s, "step": 0, "key": k,
    ...            "key_group": g, "seq": i, "state": {}, "out": {}, "emitted": []}
    ...           for i, (s, k, g) in enumerate([(0, "a", 3), (1, "b", 70)])]
    >>> trace = Trace("key_groups", {"parallelism": 2}, events, {}, 2, {0: (0, 63), 1: (64, 127)})
    >>> figure = step_through_figure(trace); len(figure.frames)
    2
    >>> viewer = StepThrough(trace); viewer.next(); viewer.step
    1
    >>> viewer.previous(); viewer.figure.layout.title.text.split(":")[0]
    'record 1 of 2'
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
from IPython import get_ipython
from IPython.display import display
from plotly.subplots import make_subplots

from skewlab.experiments.step_through import Trace
from skewlab.viz.palette import COLORS, SUBTASK_COLORS, TEMPLATE
from skewlab.viz.render import in_report

__all__ = ["StepThrough", "step_figure", "step_through", "step_through_figure", "summary"]

_HELD, _MERGED = COLORS["buffered"], COLORS["at_rest"]
_CACHED, _NOT_CACHED = COLORS["cached"], COLORS["at_rest"]
#: A legend in a row between the title and the plot: the slider and its buttons are below
_LEGEND_ABOVE = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0}
_TITLE_FONT = {"size": 14}  # a step's line is long: it says what the step did
#: The ms between steps when playing.
PLAY_INTERVAL_MS = 700


def _keys(trace: Trace, stage: str | None = None) -> list[str]:
    """A stage's keys (default: the first stage's) in the order they first arrive (a chart's
    x axis keeps still)."""
    stage = stage or trace.source_stage
    return list(
        dict.fromkeys(
            str(e["key"]) for e in trace.events if e["kind"] == "record" and e["stage"] == stage
        )
    )


def _subtask_label(trace: Trace, subtask: int) -> str:
    if subtask in trace.key_group_ranges:
        lo, hi = trace.key_group_ranges[subtask]
        return f"subtask {subtask}<br>key groups {lo}-{hi}"
    return f"subtask {subtask}"


def _old_row(subtask: int) -> str:
    return f"savepoint: subtask-{subtask}.kgs"


def _new_row(subtask: int) -> str:
    return f"new subtask {subtask}"


def _rescaling_traces(trace: Trace, step: dict[str, Any]) -> list[go.BaseTraceType]:
    """Key groups on x: the savepoint's files (their entries as dots), the new subtasks'
    ranges, what this step reads or where its record goes."""
    event, files = step["event"], trace.parameters["savepoint"]
    old = [(_old_row(i), f["key_groups"]) for i, f in enumerate(files)]
    new = [(_new_row(s), list(r)) for s, r in sorted(trace.key_group_ranges.items())]
    current = event["subtask"]
    spans = [(r["file"], r["key_groups"]) for r in event.get("reads", [])]
    row_of = {f["file"]: _old_row(i) for i, f in enumerate(files)}
    dots = [
        (lo + i + 0.5, _old_row(n))
        for n, f in enumerate(files)
        for i, count in enumerate(f["entries"])
        if count
        for lo in [f["key_groups"][0]]
    ]
    record = []
    if event["kind"] == "record":
        record = [(event["key_group"] + 0.5, _new_row(current))]
    color = SUBTASK_COLORS[current % len(SUBTASK_COLORS)]

    def bar(name, rows, colors, **kwargs):
        return go.Bar(
            name=name, orientation="h", y=[r for r, _ in rows],
            base=[kg[0] for _, kg in rows], x=[kg[1] - kg[0] + 1 for _, kg in rows],
            marker_color=colors, **kwargs,
        )  # fmt: skip

    return [
        bar("an old subtask's file: its key groups", old, COLORS["at_rest"]),
        bar("a new subtask's key groups", new,
            [color if r == _new_row(current) else COLORS["at_rest"] for r, _ in new]),
        bar("read at this step", [(row_of[f], kg) for f, kg in spans], color, opacity=0.85),
        go.Scatter(name="a key's state in the savepoint", mode="markers",
                   x=[x for x, _ in dots], y=[y for _, y in dots],
                   marker={"color": COLORS["mark"], "size": 7}),
        go.Scatter(name="this record's key group", mode="markers", x=[x for x, _ in record],
                   y=[y for _, y in record],
                   marker={"color": COLORS["mark"], "size": 13, "symbol": "diamond",
                           "line": {"color": "white", "width": 2}}),
    ]  # fmt: skip


def _bars(trace: Trace, step: dict[str, Any]) -> list[go.BaseTraceType]:
    """The traces of one step (the same traces, in the same order, at every step)."""
    if trace.mechanism == "rescaling":
        return _rescaling_traces(trace, step)
    keys = _keys(trace)
    if trace.mechanism == "key_groups":
        subtasks = list(range(trace.parameters["parallelism"]))
        labels = [_subtask_label(trace, s) for s in subtasks]
        by_subtask = {s: {} for s in subtasks}
        for event in trace.events[: step["index"] + 1]:
            if event["kind"] == "record":
                cell = by_subtask[event["subtask"]]
                cell[str(event["key"])] = cell.get(str(event["key"]), 0) + 1
        return [
            go.Bar(
                name=key,
                x=labels,
                y=[by_subtask[s].get(key, 0) for s in subtasks],
                marker_color=SUBTASK_COLORS[i % len(SUBTASK_COLORS)],
            )
            for i, key in enumerate(keys)
        ]
    per_key = step["records_per_key"]
    if trace.mechanism == "salting":
        final_stage = max(e["stage"] for e in trace.events)
        tweets = _keys(trace, final_stage)
        sums = step["emitted"].get(final_stage, {})
        return [
            go.Bar(name="stage 1: a sub-key's running count", x=keys,
                   y=[per_key.get(k, 0) for k in keys], marker_color=COLORS["salted"]),
            go.Bar(name="stage 2: the seed's sum of running partials", x=tweets,
                   y=[sums.get(t, (0, 0))[0] for t in tweets], marker_color=COLORS["naive"],
                   xaxis="x2", yaxis="y2"),
            go.Bar(name="stage 2: the right count", x=tweets,
                   y=[sums.get(t, (0, 0))[1] for t in tweets], marker_color=COLORS["correct"],
                   xaxis="x2", yaxis="y2"),
        ]  # fmt: skip
    if trace.mechanism == "buffer":
        held = {k: n for buffer in step["buffered"].values() for k, n in buffer.items()}
        return [
            go.Bar(name="merged into keyed state", x=keys,
                   y=[per_key.get(k, 0) - held.get(k, 0) for k in keys], marker_color=_MERGED),
            go.Bar(name="held in the buffer", x=keys, y=[held.get(k, 0) for k in keys],
                   marker_color=_HELD),
        ]  # fmt: skip
    cached = {k for keys_ in step["cached_keys"].values() for k in keys_}
    return [
        go.Bar(
            name="records counted",
            x=keys,
            y=[per_key.get(k, 0) for k in keys],
            marker_color=[_CACHED if k in cached else _NOT_CACHED for k in keys],
            text=["cached" if k in cached else "" for k in keys],
            textposition="outside",
        )
    ]


def _title(trace: Trace, step: dict[str, Any]) -> str:
    line = trace.describe(step)
    totals = step["totals"]
    if trace.mechanism == "cache":
        detail = (
            f"so far: hits {totals['cache_hits']}, misses {totals['cache_misses']}, "
            f"evictions {totals['evictions']}; RocksDB reads {totals['reads']}, "
            f"writes {totals['writes']}"
        )
    elif trace.mechanism == "buffer":
        records = sum(step["records_per_subtask"])
        detail = (
            f"so far: records {records}, flushes {totals['flushes']}; keyed state reads "
            f"{totals['reads']}, writes {totals['writes']}"
        )
    elif trace.mechanism == "rescaling":
        p = trace.parameters
        detail = (
            f"a savepoint taken at parallelism {p['old_parallelism']} after "
            f"{p['savepoint_at']} records, restored at parallelism {p['parallelism']}; "
            f"max parallelism {p['max_parallelism']}"
        )
    elif trace.mechanism == "salting":
        detail = (
            f"so far: views {sum(step['records_per_subtask'])} in stage 1; RocksDB reads "
            f"{totals['reads']}, writes {totals['writes']} over both stages"
        )
    else:
        detail = "so far: " + ", ".join(
            f"subtask {s}: {n}" for s, n in enumerate(step["records_per_subtask"])
        )
    return f"{line}<br><sub>{detail}</sub>"


def _steps(trace: Trace) -> list[dict[str, Any]]:
    return [step | {"index": i} for i, step in enumerate(trace.steps())]


def _layout(trace: Trace) -> dict[str, Any]:
    """The layout every step shares: axes that keep still from the first step to the last."""
    last = trace.steps()[-1]
    common = {
        "template": TEMPLATE,
        "height": 460,
        "margin": {"t": 110},
    }
    if trace.mechanism == "rescaling":
        rows = [_old_row(i) for i in range(trace.parameters["old_parallelism"])]
        rows += [_new_row(s) for s in range(trace.parameters["parallelism"])]
        return common | {
            "barmode": "overlay",
            "xaxis": {"title": "key group", "range": [0, trace.parameters["max_parallelism"]]},
            "yaxis": {"categoryorder": "array", "categoryarray": rows[::-1]},
            "legend": _LEGEND_ABOVE,
            "margin": {"t": 160, "l": 200},
        }
    if trace.mechanism == "salting":
        final_stage = max(e["stage"] for e in trace.events)
        ceiling = max([v[0] for v in last["emitted"].get(final_stage, {}).values()] + [1])
        layout = make_subplots(rows=1, cols=2, horizontal_spacing=0.12).layout.to_plotly_json()
        layout["xaxis"] |= {"title": "stage 1: sub-key"}
        layout["xaxis2"] |= {"title": "stage 2: tweet"}
        layout["yaxis"] |= {
            "title": "records",
            "range": [0, max(last["records_per_key"].values()) * 1.15],
        }
        layout["yaxis2"] |= {"title": "count", "range": [0, ceiling * 1.15]}
        return layout | common | {"barmode": "group", "legend": _LEGEND_ABOVE, "margin": {"t": 160}}
    ceiling = max(last["records_per_subtask"] + [1])
    if trace.mechanism != "key_groups":
        ceiling = max(last["records_per_key"].values())
    return common | {
        "barmode": "stack",
        "yaxis": {"title": "records", "range": [0, ceiling * 1.15]},
        "xaxis": {"title": "subtask" if trace.mechanism == "key_groups" else "key"},
        "legend": {"title": "key" if trace.mechanism == "key_groups" else None},
    }


def step_figure(trace: Trace, index: int) -> go.Figure:
    """The chart of step ``index`` (from 0) of ``trace``."""
    steps = _steps(trace)
    if not 0 <= index < len(steps):
        raise IndexError(f"step {index} of a trace of {len(steps)} steps (0..{len(steps) - 1})")
    step = steps[index]
    title = {"text": _title(trace, step), "font": _TITLE_FONT}
    # ``meta``: the step the chart draws, from 1 as the label counts (a page can tell which
    # step a chart shows while the next one is on its way)
    return go.Figure(
        _bars(trace, step), layout=_layout(trace) | {"title": title, "meta": {"step": index + 1}}
    )


def step_through_figure(trace: Trace) -> go.Figure:
    """Every step as a frame of one figure, with a step slider and *Play* / *Pause*: a
    step-through that runs in a rendered page, with no kernel."""
    steps = _steps(trace)
    frames = [
        go.Frame(data=_bars(trace, s), name=str(i), layout={"title": {"text": _title(trace, s)}})
        for i, s in enumerate(steps)
    ]
    now = {"mode": "immediate", "transition": {"duration": 0}}
    slider = {
        "active": 0,
        "currentvalue": {"prefix": "step "},
        "x": 0.1,
        "len": 0.9,
        "y": 0,
        "yanchor": "top",
        "pad": {"b": 10, "t": 70},
        "steps": [
            {
                "label": str(i + 1),
                "method": "animate",
                "args": [[str(i)], now | {"frame": {"duration": 0, "redraw": True}}],
            }
            for i in range(len(steps))
        ],
    }
    play = {
        "type": "buttons",
        "direction": "left",
        "x": 0.1,
        "y": 0,
        "xanchor": "right",
        "yanchor": "top",
        "pad": {"r": 10, "t": 97},
        "buttons": [
            {
                "label": "Play",
                "method": "animate",
                "args": [
                    None,
                    {
                        "frame": {"duration": PLAY_INTERVAL_MS, "redraw": True},
                        "transition": {"duration": 0},  # a step is a jump, not a glide
                        "fromcurrent": True,
                    },
                ],
            },
            {
                "label": "Pause",
                "method": "animate",
                "args": [[None], now | {"frame": {"duration": 0, "redraw": False}}],
            },
        ],
    }
    shared = _layout(trace)
    layout = shared | {
        "title": {"text": _title(trace, steps[0]), "font": _TITLE_FONT},
        "sliders": [slider],
        "updatemenus": [play],
        "height": shared["height"] + 140,
        "margin": shared["margin"] | {"b": 160},  # room for the slider and its buttons
    }
    return go.Figure(data=frames[0].data, frames=frames, layout=layout)


class StepThrough:
    """The JupyterLab step-through: *Play* / *Pause*, *previous*, *next* and a step slider
    over ``trace``; each step redraws its chart. :meth:`next`, :meth:`previous` and
    :meth:`show_step` do from code what the buttons do."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._steps = _steps(trace)
        last = len(self._steps) - 1
        self.slider = widgets.IntSlider(value=0, min=0, max=last, description="step",
                                        readout=False, continuous_update=True)  # fmt: skip
        self.play = widgets.Play(value=0, min=0, max=last, interval=PLAY_INTERVAL_MS)
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.previous_button = widgets.Button(description="previous", icon="step-backward")
        self.next_button = widgets.Button(description="next", icon="step-forward")
        self.previous_button.on_click(lambda _: self.previous())
        self.next_button.on_click(lambda _: self.next())
        self.label = widgets.HTML()
        self.out = widgets.Output()
        self.figure: go.Figure | None = None
        self._shown = False  # on the page: steps draw into it (see Explorer._draw_outputs)
        self.slider.observe(lambda change: self._draw(change["new"]), names="value")
        controls = widgets.HBox([self.play, self.previous_button, self.next_button, self.slider])
        self.widget = widgets.VBox([controls, self.label, self.out])
        self.widget.add_class("skewlab-step-through")
        self._draw(0)

    @property
    def step(self) -> int:
        """The step shown (from 0)."""
        return self.slider.value

    def show_step(self, index: int) -> None:
        """Show step ``index`` (from 0), clipped to the trace."""
        self.slider.value = max(0, min(index, self.slider.max))

    def next(self) -> None:
        """One step on."""
        self.show_step(self.step + 1)

    def previous(self) -> None:
        """One step back."""
        self.show_step(self.step - 1)

    def _draw(self, index: int) -> None:
        self.figure = step_figure(self.trace, index)
        if self._shown and get_ipython() is not None:  # a page and a kernel: draw the chart
            self.out.clear_output(wait=True)
            with self.out:
                self.figure.show()
        # after the chart: the page gets the step's chart before the label that names it
        self.label.value = f"step {index + 1} of {len(self._steps)}"

    def _ipython_display_(self) -> None:
        display(self.widget)
        self._shown = True
        self._draw(self.step)


def step_through(trace: Trace) -> StepThrough | go.Figure:
    """The step-through of ``trace`` for where it is shown: the widget in JupyterLab, the
    animated figure in a rendered report (display the result, or end a cell with it).

    Example::

        >>> trace = experiments.step_through.trace_cache(spark)          # doctest: +SKIP
        >>> viz.step_through.step_through(trace)                          # doctest: +SKIP
    """
    return step_through_figure(trace) if in_report() else StepThrough(trace)


def summary(trace: Trace) -> str:
    """What this run's trace shows, in one paragraph computed from it.

    Example::

        >>> print(summary(trace))                                          # doctest: +SKIP
        This run's trace: 24 records through an LRU of 4 entries over 6 keys in a cycle ...
    """
    last = trace.steps()[-1]
    totals, n = last["totals"], trace.records
    if trace.mechanism == "key_groups":
        per = last["records_per_subtask"]
        busiest = max(range(len(per)), key=per.__getitem__)
        hottest, hot_n = max(last["records_per_key"].items(), key=lambda kv: kv[1])
        return (
            f"This run's trace: {n} records over {len(last['records_per_key'])} keys at "
            f"parallelism {len(per)}; subtask {busiest} received {per[busiest]} of them "
            f"({per[busiest] / n:.0%}) where an even share is {n / len(per):.0f}; the hottest "
            f"key, {hottest}, alone sent {hot_n} ({hot_n / n:.0%}), all to one subtask."
        )
    if trace.mechanism == "salting":
        source = trace.source_stage
        sent = sum(len(e["emitted"]) for e in trace.events if e["stage"] == source)
        sums = "; ".join(
            f"{tweet}: {seeds} where its right count is {right} ({seeds / right:.1f}x)"
            for tweet, (seeds, right) in sorted(trace.results.items())
        )
        return (
            f"This run's trace: {n} views of {len(trace.results)} tweets, each salted into "
            f"{trace.parameters['salt_buckets']} sub-keys; stage 1 sent {sent} running counts "
            f"downstream, and the seed's sum of them came to {sums}."
        )
    if trace.mechanism == "rescaling":
        p = trace.parameters
        restores = [e for e in trace.events if e["kind"] == "restore"]
        opened = [e["restored"]["files_opened"] for e in restores]
        kept = sum(e["restored"]["keys_kept"] for e in restores)
        in_savepoint = sum(sum(f["entries"]) for f in p["savepoint"])
        return (
            f"This run's trace: a savepoint of {len(p['savepoint'])} files (parallelism "
            f"{p['old_parallelism']}) restored at parallelism {p['parallelism']}: the new "
            f"subtasks opened {', '.join(map(str, opened))} file(s) each and kept {kept} of the "
            f"savepoint's {in_savepoint} entries between them, each reading only the key groups "
            f"it owns; then {n} more records at the new parallelism."
        )
    if trace.mechanism == "buffer":
        return (
            f"This run's trace: {n} records through a buffer of "
            f"{trace.parameters['max_count']}; {totals['flushes']} flushes wrote keyed state "
            f"{totals['writes']} times (with {totals['reads']} reads), where the naive reduce "
            f"reads and writes it once per record: {n} each."
        )
    lookups = totals["cache_hits"] + totals["cache_misses"]
    ratio = totals["cache_hits"] / lookups if lookups else 0.0
    return (
        f"This run's trace: {n} records over {trace.parameters['n_keys']} keys in a cycle, "
        f"through an LRU of {trace.parameters['cache_entries']} entries: "
        f"{totals['cache_hits']} hits of {lookups} lookups ({ratio:.0%}), "
        f"{totals['evictions']} evictions, RocksDB read {totals['reads']} times and "
        f"written {totals['writes']} times."
    )
