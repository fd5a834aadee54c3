"""The skew doctor's report: text for a terminal, figures for a notebook, one HTML page.

Every function takes the :class:`~skewlab.doctor.schema.Diagnosis` that
:func:`skewlab.doctor.diagnosis.diagnose` returns; every sentence is computed from it, and every
title says whose figures it shows: counted or routed on the records given (no job runs),
predicted from a cost profile (whose it names), or -- for the doctor's check against real runs
-- this run's or the reference's (:mod:`skewlab.doctor.remedy_check`), each figure measured
there with its interval.

Example::

    >>> report = diagnose(views, key="tweet_id")                        # doctest: +SKIP
    >>> print(doctor_text(report))                                     # doctest: +SKIP
    >>> write_html(report, "doctor.html")                              # doctest: +SKIP
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio

from skewlab.doctor.catalog import DENSITY_PRICED
from skewlab.doctor.diagnosis import diagnose, read_records
from skewlab.doctor.live_hot_keys import FollowWindow
from skewlab.doctor.remedies import BASELINE
from skewlab.doctor.remedy_check import EXPERIMENT as REMEDY_CHECK
from skewlab.doctor.remedy_check import (
    SESSION_SOURCE,
    TOLERANCE,
    measured_interval,
    predicted_estimate,
    within_tolerance,
)
from skewlab.doctor.remedy_costs import (
    ALONE,
    BALANCED,
    MEASURE,
)
from skewlab.doctor.schema import Diagnosis, FlinkLoads
from skewlab.doctor.state_and_follow import EXPERIMENT as STATE_AND_FOLLOW
from skewlab.doctor.state_and_follow import (
    THRESHOLD,
    FollowSection,
    StateSection,
    follow_section,
    state_section,
)
from skewlab.doctor.verdict import ENGINE_NAMES, WIDTH, verdict_lines, wrap
from skewlab.engine.partitioners import ENGINES
from skewlab.errors import SkewlabInputError
from skewlab.experiments.intervals import Estimate, over
from skewlab.experiments.references import load_reference
from skewlab.experiments.results import BenchResult, bench_summary
from skewlab.state.key_groups import UPPER_BOUND_MAX_PARALLELISM
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, TEMPLATE
from skewlab.viz.reference_section import run_or_reference, summary_shown
from skewlab.viz.text import estimate_text, percent
from skewlab.viz.titles import whose_figures

__all__ = [
    "check_html_out",
    "doctor_explorer",
    "doctor_text",
    "engine_loads_figure",
    "hot_keys_figure",
    "parallelism_figure",
    "write_html",
]


def _engine_lines(report: Diagnosis) -> list[str]:
    lines = []
    for name, engine in report.engines.items():
        label = ENGINE_NAMES[name]
        if isinstance(engine, FlinkLoads):
            lines.append(
                f"{label}, {engine.max_parallelism} key groups: busiest key group "
                f"{engine.key_groups.max_over_mean:.2f}x the mean"
                + (
                    f"; {engine.null_keys_refused:,} records with a null key would be "
                    "refused (keyBy throws)"
                    if engine.null_keys_refused
                    else ""
                )
            )
            for sub in engine.subtasks:
                lines.append(
                    f"  P={sub.parallelism}: busiest subtask {sub.max_over_mean:.2f}x the "
                    f"mean ({percent(sub.busiest_share)} of the records), skew score "
                    f"{sub.skew_score:.0f} %"
                )
        else:
            nulls = "null keys included" if engine.null_keys_included else "null keys left out"
            lines.append(
                f"{label}, {engine.partitions} partitions ({nulls}): busiest partition "
                f"{engine.max_over_mean:.2f}x the mean ({percent(engine.busiest_share)}), "
                f"skew score {engine.skew_score:.0f} %"
            )
    return lines


@functools.cache
def reference_check() -> dict[str, Any] | None:
    """The shipped reference's check of the doctor against real runs (its summary, with
    ``shown`` naming whose it is), or ``None`` where none is shipped; read once (package data),
    not on every redraw. Callers only read it."""
    reference = load_reference(REMEDY_CHECK)
    if reference is None:
        return None
    return {**reference["summary"], "shown": whose_figures(reference)}


def doctor_text(report: Diagnosis, *, check: dict[str, Any] | None | str = "reference") -> str:
    """The report as text of at most :data:`~skewlab.doctor.verdict.WIDTH` columns: the verdict
    first (:func:`~skewlab.doctor.verdict.verdict_lines`: hot keys, where it hurts, the ceiling,
    the remedy with the spread of ``check`` -- by default the shipped reference's check of the
    doctor against real runs -- and the parallelism to plan with), then the details: input,
    hot keys, Zipf fit, the hottest key's peak, each engine's loads, what parallelism can do,
    and every remedy priced.

    Example::

        >>> from skewlab.doctor.schema import EXAMPLE
        >>> report = Diagnosis.from_json({**EXAMPLE, "engines": {}})
        >>> print(doctor_text(report, check=None))  # doctest: +NORMALIZE_WHITESPACE
        verdict: 10 records, key 'k', 2 distinct keys
          hottest keys: 'a' 80%
          ceiling: no parallelism runs a keyed aggregation more than 1.25x faster than one
            subtask (the hottest key's 80% stays on one subtask)
          parallelism: P=2 splits Flink's 128 key groups evenly (64 each); to run anywhere from
            P=2 to P=4, max parallelism 720 splits 3 of those 3 evenly (128: 2); it is fixed
            once state exists: choose it before the first savepoint
        <BLANKLINE>
        details:
        10 records, key 'k': 2 distinct keys (exact), 0 with a null key (0%)
        hot keys (exact):
            1. 'a'  8 records  80%
        the hottest key holds 80% of the keyed records: no parallelism speeds a keyed
          aggregation up more than 1.25x, since its one key is on one subtask
    """
    if check == "reference":
        check = reference_check()
    details = [line for text in _detail_lines(report) for line in _wrapped(text)]
    return "\n".join([*verdict_lines(report, check), "", "details:", *details])


def _wrapped(text: str) -> list[str]:
    """A line of the details within the width (a table's rows are kept as they are)."""
    if len(text) <= WIDTH or "\n" in text:
        return text.split("\n")
    indent = text[: len(text) - len(text.lstrip())]
    return wrap(text.strip(), indent=indent)


def _detail_lines(report: Diagnosis) -> list[str]:
    i, hot = report.input, report.hot_keys
    lines = [
        f"{i.records:,} records, key {i.key!r}: {i.distinct_keys:,} distinct keys "
        f"({i.distinct_method}), {i.null_keys:,} with a null key ({percent(i.null_share)})",
        f"hot keys ({hot.method}):",
    ]
    for row in hot.top:
        lines.append(f"  {row.rank:>3}. {row.key!r}  {row.records:,} records  {percent(row.share)}")
    sketch = hot.sketch
    if sketch:
        lines.append(
            f"at the source (a frequent-items sketch of 2**{sketch['lg_max_map_size']} entries "
            f"per partition, {sketch['sources']} merged; error at most "
            f"{sketch['error_bound']:,.0f} records): {len(sketch['hot'])} keys may hold "
            f"{percent(sketch['threshold'])} or more; "
            + (
                f"every one of the {sketch['exact_hot_keys']} the exact counts put there is "
                "among them"
                if sketch["finds_every_exact_hot_key"]
                else "it missed a key the exact counts put there"
            )
        )
    zipf = report.zipf
    if zipf:
        lines.append(
            f"Zipf exponent {zipf.exponent:.2f} (least squares on log count over log rank of "
            f"the {zipf.ranks:,} hottest keys, R^2 {zipf.r_squared:.3f})"
        )
    peak = report.peak
    if peak:
        lines.append(
            f"hottest key {peak.key!r}: at most {peak.peak_records:,} records in one "
            f"{peak.window_seconds:g} s window ({peak.peak_records_per_second:,.3g} "
            f"records/s) over {peak.windows:,} windows"
        )
    if hot.max_speedup:
        lines.append(
            f"the hottest key holds {percent(hot.hottest_share)} of the keyed records: no "
            f"parallelism speeds a keyed aggregation up more than {hot.max_speedup:.2f}x, "
            "since its one key is on one subtask"
        )
    for cache in report.cache:
        lines.append(
            f"an LRU cache of {cache['cache_entries']:,} entries per subtask (Flink, "
            f"P={cache['parallelism']}), replayed on these records in {cache['order']}: "
            f"hit ratio {percent(cache['hit_ratio'])} ({cache['hits']:,} hits, "
            f"{cache['misses']:,} misses)"
        )
    lines += _engine_lines(report)
    sweep = report.parallelism.sweep
    if sweep:
        best = max(sweep, key=lambda r: r["speedup"])
        lines.append(
            f"Flink, every P up to {report.parallelism.max_parallelism}: the best "
            f"speedup over one subtask is {best['speedup']:.2f}x, at P={best['parallelism']} "
            f"(busiest subtask {best['max_over_mean']:.2f}x the mean, of which the key-group "
            f"ranges alone give {best['range_unevenness']:.2f}x)"
        )
    target = report.parallelism.target
    if target:
        wanted = (
            f"to take {target['target_rate']:,.0f} records/s with {target['subtask_rate']:,.0f} "
            f"records/s per subtask ({target.get('subtask_rate_source', 'given')})"
        )
        if target["parallelism"] is not None:
            lines.append(
                f"{wanted}, the smallest Flink parallelism is P={target['parallelism']} (its "
                f"busiest subtask gets {target['busiest_rate']:,.0f} records/s)"
            )
        else:
            lines.append(
                f"{wanted}, no parallelism up to {report.parallelism.max_parallelism} "
                f"does: the best leaves {target['busiest_rate']:,.0f} records/s on one subtask, "
                f"the hottest key alone {target['hottest_key_rate']:,.0f}"
            )
    lines += remedy_lines(report.remedies)
    if report.remedies_unpriced:
        lines.append(f"remedies not priced: {report.remedies_unpriced}")
    return lines


def remedy_table(priced: dict[str, Any]):
    """Every remedy's predicted job throughput, speed over naive RocksDB, p99 latency, memory on
    the busiest subtask and what it costs.

    Example::

        >>> remedy_table(report.remedies).columns[0]                  # doctest: +SKIP
        'remedy'
    """
    import pandas as pd

    return pd.DataFrame([
        {
            "remedy": r["remedy"] + ("" if r["eligible"] else " (bounded input only)"),
            "records/s": round(r["records_per_second"]),
            f"x {BASELINE}": round(r["speedup_over_baseline"], 2),
            "p99 latency ms": round(r["latency_p99_ms"], 3),
            "state in memory": _bytes(r["memory_bytes"]),
            "what it costs": r["costs"],
        }
        for r in priced["remedies"]
    ])  # fmt: skip


def _bytes(n: int) -> str:
    """A size for a table or sentence: MiB, KiB, or bytes under one KiB ("-" for none).

    Example::

        >>> _bytes(96), _bytes(3072), _bytes(5 * 2**20), _bytes(0)
        ('96 B', '3 KiB', '5.0 MiB', '-')
    """
    if n >= 2**20:
        return f"{n / 2**20:,.1f} MiB"
    if n >= 2**10:
        return f"{n / 2**10:,.0f} KiB"
    return f"{n:,} B" if n else "-"


def remedy_lines(priced: dict[str, Any] | None) -> list[str]:
    """The remedy section of :func:`doctor_text`: where its figures come from, the table, the
    recommendation and its reasons."""
    if not priced:
        return []
    profile = priced["cost_profile"]
    disk = priced["disk_profile"]
    rec = priced["recommendation"]
    lines = [
        f"which remedy pays, Flink P={priced['parallelism']} (salting with "
        f"{priced['salt_buckets']} salts): job throughput predicted "
        f"from per-record costs measured by skewlab bench remedy_costs ({profile['source']}; "
        f"{profile['aggregate']}, p={profile['parallelism']}) and this input's counts replayed "
        f"(LRU of {priced['cache_entries']:,}: hit ratio {percent(priced['hit_ratio'] or 0)}; "
        f"the buffer folds {priced['records_per_flushed_key']:.1f} records per flushed key); "
        + (
            f"state accesses on disk modelled on the {disk} profile"
            if disk
            else "state on this machine's disk, as measured (no disk profile: --disk-profile "
            "ebs-article models seed 000's EBS)"
        ),
        *(
            [
                f"{priced['parallelism']} subtasks priced on this machine, where the costs were "
                f"measured with {profile['parallelism']} side by side: they share those "
                f"{profile['parallelism']} (the job takes at least their total over "
                f"{profile['parallelism']})"
            ]
            if priced["parallelism"] > profile["parallelism"]
            else []
        ),
        remedy_table(priced).drop(columns="what it costs").to_string(index=False),
        "what each costs:",
        *(f"  {r['remedy']}: {r['costs']}" for r in priced["remedies"]),
        f"recommended: {rec['remedy']} ({rec['speedup_over_baseline']:.2f}x {BASELINE}) -- "
        + "; ".join(rec["reasons"][1:])
        + f"; it costs: {rec['costs']}",
    ]
    for name, why in rec["excluded"].items():
        lines.append(f"not weighed: {name}, {why}")
    return lines


def remedies_figure(report: Diagnosis) -> go.Figure:
    """Predicted job throughput of every remedy on these keys, the recommended one marked.

    Example::

        >>> remedies_figure(report).data[0].type                         # doctest: +SKIP
        'bar'
    """
    priced = report.remedies
    if not priced:
        fig = go.Figure()
        why = report.remedies_unpriced or "remedies off"
        fig.update_layout(template=TEMPLATE, title=f"Remedies not priced: {why}")
        return fig
    rows = priced["remedies"]
    best = priced["best"]
    fig = go.Figure(
        go.Bar(
            x=[r["remedy"] for r in rows],
            y=[r["records_per_second"] for r in rows],
            marker_color=[COLORS[r["remedy"].removeprefix("naive_")] for r in rows],
            marker_line_width=[3 if r["remedy"] == best else 0 for r in rows],
            marker_line_color="black",
            text=[f"{r['speedup_over_baseline']:.2f}x" for r in rows],
            textposition="outside",
            hovertemplate="%{x}: %{y:,.0f} records/s<extra></extra>",
        )
    )
    fig.update_layout(
        template=TEMPLATE,
        title=f"Which remedy pays at P={priced['parallelism']} (predicted from the cost profile "
        f"of {priced['cost_profile']['source']}; x {BASELINE}); recommended: {best}",
        xaxis_title="remedy",
        yaxis_title="job records/s (predicted)",
    )
    return fig


def hot_keys_figure(report: Diagnosis) -> go.Figure:
    """The top keys' share of the records.

    Example::

        >>> from skewlab.doctor.schema import EXAMPLE
        >>> fig = hot_keys_figure(Diagnosis.from_json(EXAMPLE))
        >>> fig.data[0].y[0]
        80.0
    """
    top = report.hot_keys.top
    fig = go.Figure(
        go.Bar(
            x=[str(r.key) for r in top],
            y=[100 * r.share for r in top],
            marker_color=COLORS["naive"],
            text=[f"{r.records:,}" for r in top],
        )
    )
    fig.update_layout(
        title=f"The hottest keys of {report.input.key!r}: share of the records (counted "
        "on these records)",
        template=TEMPLATE,
        xaxis={"title": "key", "type": "category"},
        yaxis={"title": "% of the records"},
    )
    return fig


def engine_loads_figure(report: Diagnosis, parallelism: int | None = None) -> go.Figure:
    """Records per subtask (Flink, at ``parallelism``: default the first asked) and per
    partition (Spark, Kafka), side by side, each titled with its skew score.

    Example::

        >>> from skewlab.doctor.schema import EXAMPLE
        >>> fig = engine_loads_figure(Diagnosis.from_json(EXAMPLE))
        >>> [t.name for t in fig.data]
        ['Flink P=2 (skew score 50 %)', 'Spark (skew score 75 %)']
    """
    fig = go.Figure()
    for name, engine in report.engines.items():
        if isinstance(engine, FlinkLoads):
            first = engine.subtasks[0].parallelism
            sub = engine.at(first if parallelism is None else parallelism)
            loads, score = list(sub.loads), sub.skew_score
            label = f"Flink P={sub.parallelism}"
        else:
            loads, score, label = list(engine.loads), engine.skew_score, ENGINE_NAMES[name]
        fig.add_trace(
            go.Bar(x=list(range(len(loads))), y=loads, name=f"{label} (skew score {score:.0f} %)")
        )
    fig.update_layout(
        title="Where the load lands: records per subtask or partition (these records, routed "
        "as each engine routes them; no job runs)",
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "subtask / partition"},
        yaxis={"title": "records"},
    )
    return fig


def _owned(whose: str, thing: str) -> str:
    """``thing`` as ``whose``'s, opening a sentence: "This run's checkpoint", "The reference's
    checkpoint (full, measured ...)".

    Example::

        >>> _owned("the reference (full, measured 2026-12-08)", "follow")
        "The reference's follow (full, measured 2026-12-08)"
    """
    owner, _, rest = whose.partition(" (")
    return f"{owner[:1].upper()}{owner[1:]}'s {thing}" + (f" ({rest}" if rest else "")


#: Why a quick report shows notebook 09's live sections from the reference.
_LIVE_WHY = (
    "a demonstration: it concludes no claim; the reference's ran over the sample records; "
    "`skewlab bench state_and_follow` runs it here, and size 'tiny' or 'full' in this notebook on "
    "these records"
)


def _section_shown(run: Callable[[], Any], size: str, what: str, section):
    """``run()``'s section where the registry's ``doctor_live_sections`` runs at ``size``, else
    ``section`` read from the shipped ``state_and_follow`` reference, naming whose it is
    (:func:`~skewlab.viz.reference_section.run_or_reference` decides and says which)."""
    this_run, shown = run_or_reference(
        "doctor_live_sections", size, STATE_AND_FOLLOW, run, what=what, why=_LIVE_WHY
    )
    if this_run is not None or shown is None:
        return this_run
    return section.from_json(shown["summary"], whose_figures(shown))


def state_shown(size: str, spark, records, key: str, report: Diagnosis) -> StateSection | None:
    """Notebook 09's state section: where the registry's ``doctor_live_sections`` runs at
    ``size``, ``records`` counted per ``key`` into a checkpoint made now and read back beside
    ``report``'s Spark loads (:func:`~skewlab.doctor.state_and_follow.state_section`); else the
    shipped reference's, after a line saying so (``None`` where none ships).

    Example::

        >>> state = state_shown("quick", None, None, "tweet_id", None)     # doctest: +ELLIPSIS
        this size leaves the checkpoint state out (...); here are the shipped reference's, ...
        >>> state.whose.startswith("the reference")
        True
    """
    run = functools.partial(state_section, spark, records, key, report)
    return _section_shown(run, size, "checkpoint state", StateSection)


def follow_shown(
    size: str, spark, records, key: str, *, time: str | None = None, threshold: float = THRESHOLD
) -> FollowSection | None:
    """Notebook 09's follow section: where the registry's ``doctor_live_sections`` runs at
    ``size``, ``records`` followed live by ``key`` in windows (:func:`~skewlab.doctor.
    state_and_follow.follow_section`), a :class:`HotKeysBoard` shown and redrawn as each window
    ends; else the shipped reference's windows (and its threshold), after a line saying so
    (``None`` where none ships).

    Example::

        >>> followed = follow_shown("quick", None, None, "tweet_id")       # doctest: +ELLIPSIS
        this size leaves the live follow out (...); here are the shipped reference's, ...
        >>> len(followed.windows)
        3
    """

    def run() -> FollowSection:
        from IPython.display import display

        board = HotKeysBoard()
        display(board)
        return follow_section(
            spark, records, key, time=time, threshold=threshold, on_window=board.update
        )

    return _section_shown(run, size, "live follow", FollowSection)


def state_figure(section: StateSection) -> go.Figure:
    """Per state partition, its share of the state's bytes beside its share of the records
    (the diagnosis' Spark loads, where their partition count is the state's).

    Example::

        >>> fig = state_figure(state_section(spark, records, "tweet_id", report))  # doctest: +SKIP
        >>> [t.name for t in fig.data]                                      # doctest: +SKIP
        ['records (skew score 75 %)', 'state bytes (skew score 3 %)']
    """  # noqa: E501
    store, traffic = section.store, section.traffic
    fig = go.Figure()
    partitions = list(range(store.num_partitions))
    if traffic is not None:
        total = sum(traffic.loads) or 1
        fig.add_trace(go.Bar(
            x=partitions, y=[n / total for n in traffic.loads],
            name=f"records (skew score {traffic.skew_score:.0f} %)",
        ))  # fmt: skip
    fig.add_trace(go.Bar(
        x=partitions, y=[p.bytes / (store.bytes or 1) for p in store.partitions],
        name=f"state bytes (skew score {store.skew_score:.0f} %)",
    ))  # fmt: skip
    fig.update_layout(
        title=f"The state's skew beside the traffic's: {store.name}; {section.whose}'s checkpoint",
        template=TEMPLATE,
        barmode="group",
        xaxis={"title": "state partition"},
        yaxis={"title": "share", "tickformat": ".0%"},
    )
    return fig


def describe_state(section: StateSection) -> str:
    """One paragraph on the state's skew beside the traffic's, computed from the section's
    checkpoint and loads, naming whose they are.

    Example::

        >>> from skewlab.doctor.checkpoint_state import StatePartition, StateReport, StateStore
        >>> store = StateStore(0, "stateStoreSave", "default", None, 1, 0, rows=64, bytes=3072,
        ...                    partitions=(StatePartition(0, 64, 3072),), busiest_share=1.0)
        >>> print(describe_state(StateSection(StateReport("ck", "k", (store,)), None)))
        This run's checkpoint: 64 state rows (3 KiB) over 1 state partitions; the busiest holds 100% of the
          state's bytes (skew score 0 %).
    """  # noqa: E501
    store, traffic = section.store, section.traffic
    text = (
        f"{_owned(section.whose, 'checkpoint')}: {store.rows:,} state rows ({_bytes(store.bytes)}) "
        f"over {store.num_partitions} state partitions; the busiest holds "
        f"{percent(store.busiest_share)} of the state's bytes (skew score "
        f"{store.skew_score:.0f} %)."
    )
    if traffic is not None:
        text += (
            f" The same records routed the same way put {percent(traffic.busiest_share)} of "
            f"the records on the busiest partition (skew score {traffic.skew_score:.0f} %)"
        )
        text += (
            ": the state is more even than the traffic." if store.skew_score < traffic.skew_score
            else ": the state is no more even than the traffic."
        )  # fmt: skip
    return "\n".join(wrap(text))


class HotKeysBoard:
    """The hot keys of each window as a follow counts it, in a widget that redraws per window
    (``follow``'s ``on_window``: :meth:`update`), and the windows seen (:attr:`windows`);
    ``then`` is called after each (a :class:`~skewlab.doctor.live_hot_keys.FileDrops`' next
    file).

    Example::

        >>> board = HotKeysBoard()
        >>> board.windows
        []
    """

    def __init__(self, then: Callable[[FollowWindow], None] | None = None) -> None:
        self.windows: list[FollowWindow] = []
        self.then = then
        self.widget = widgets.HTML("<pre>waiting for the first window</pre>")

    def update(self, window: FollowWindow) -> None:
        """Show ``window`` (and call ``then`` with it, e.g. to drop the next file)."""
        self.windows.append(window)
        self.widget.value = f"<pre>{html.escape(window.to_text())}</pre>"
        if self.then is not None:
            self.then(window)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def follow_figure(section: FollowSection) -> go.Figure:
    """Each key hot in any window: its share of each window's records (its estimate; a window
    where it was not listed shows none), the section's threshold a dashed line.

    Example::

        >>> from skewlab.doctor.live_hot_keys import HotKeyNow
        >>> hot = HotKeyNow("a", 50, 50, 50, 0.5, {}, 0, "t", 1)
        >>> w = FollowWindow(0, 0, "t", 100, 0, 100, 0, 1.0, 1.0, (hot,), (hot,))
        >>> [t.name for t in follow_figure(FollowSection((w,), 0.2)).data]
        ['a']
    """
    windows = section.windows
    fig = go.Figure()
    peak: dict[str, float] = {}
    for w in windows:
        for h in w.hot:
            peak[h.key] = max(peak.get(h.key, 0.0), h.share)
    keys = sorted(peak, key=lambda k: -peak[k])
    for key in keys:
        shares = [next((h.share for h in w.hot if h.key == key), None) for w in windows]
        fig.add_trace(go.Scatter(
            x=[w.window for w in windows], y=shares, name=str(key), mode="lines+markers",
        ))  # fmt: skip
    fig.add_hline(y=section.threshold, line_dash="dash", annotation_text="threshold")
    fig.update_layout(
        title=f"Hot keys per window as the doctor followed the stream: {section.whose}'s windows",
        template=TEMPLATE,
        xaxis={"title": "window (one micro-batch)", "dtick": 1},
        yaxis={"title": "share of the window's records", "tickformat": ".0%"},
    )
    return fig


def describe_follow(section: FollowSection) -> str:
    """One paragraph on a follow's windows, computed from them, naming whose they are.

    Example::

        >>> print(describe_follow(FollowSection((), 0.05)))
        This run's follow counted no window.
    """
    windows = section.windows
    if not windows:
        return f"{_owned(section.whose, 'follow')} counted no window."
    last = windows[-1]
    text = (
        f"{_owned(section.whose, 'follow')}: {len(windows)} windows, {last.run_records:,} records "
        f"({last.run_null_keys:,} with a null key)."
    )
    if last.run_hot:
        named = "; ".join(
            f"{h.key} {percent(h.share)} of the run's records ({h.lower:,}..{h.upper:,})"
            + (f", hot in the last {h.windows_hot} windows since window {h.hot_since}"
               if h.windows_hot else ", not hot in the last window")
            for h in last.run_hot
        )  # fmt: skip
        text += f" Hot over the run: {named}."
    else:
        text += " No key reached the threshold over the run."
    return "\n".join(wrap(text))


def format_state_and_follow_summary(result) -> str:
    """What ``skewlab bench state_and_follow`` prints: whose run, the state's text and the
    paragraph setting it beside the traffic, then each window's hot keys and the follow's
    paragraph.

    Example::

        >>> from skewlab.doctor.state_and_follow import run_experiment
        >>> print(format_state_and_follow_summary(run_experiment("tiny")))  # doctest: +SKIP
    """
    summary, whose = bench_summary(result), whose_figures(result)
    state = StateSection.from_json(summary, whose)
    followed = FollowSection.from_json(summary, whose)
    return "\n\n".join([
        f"{whose}: notebook 09's demonstrations over {summary['records']:,} sample records",
        state.state.to_text(),
        describe_state(state),
        *(w.to_text() for w in followed.windows),
        describe_follow(followed),
    ])  # fmt: skip


def parallelism_figure(report: Diagnosis) -> go.Figure:
    """Flink's speedup over one subtask for every swept P, beside the ceiling the hottest key
    sets and what the key-group ranges alone would allow.

    Example::

        >>> from skewlab.doctor.schema import EXAMPLE
        >>> report = Diagnosis.from_json({**EXAMPLE, "parallelism": {
        ...     "max_parallelism": 4, "asked": [2], "sweep": [{"parallelism": 1, "speedup": 1.0,
        ...     "range_unevenness": 1.0}, {"parallelism": 2, "speedup": 1.5,
        ...     "range_unevenness": 1.0}]}})
        >>> [t.name for t in parallelism_figure(report).data]
        ['speedup: total / busiest subtask', 'key-group ranges alone: P / unevenness', 'the hottest key: no P beats 1.25x']
    """  # noqa: E501
    sweep = report.parallelism.sweep or []
    ps = [r["parallelism"] for r in sweep]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=ps, y=[r["speedup"] for r in sweep], name="speedup: total / busiest subtask")
    )
    fig.add_trace(
        go.Scatter(
            x=ps,
            y=[p / r["range_unevenness"] for p, r in zip(ps, sweep, strict=True)],
            name="key-group ranges alone: P / unevenness",
            line={"dash": "dot", "color": COLORS["guide"]},
        )
    )
    ceiling = report.hot_keys.max_speedup
    if ceiling:
        fig.add_trace(
            go.Scatter(
                x=ps,
                y=[ceiling] * len(ps),
                name=f"the hottest key: no P beats {ceiling:.2f}x",
                line={"dash": "dash", "color": COLORS["not_held"]},
            )
        )
    fig.update_layout(
        title=f"What parallelism can do (Flink, max parallelism "
        f"{report.parallelism.max_parallelism}; computed from these records' keys, no job "
        "runs)",
        template=TEMPLATE,
        xaxis={"title": "parallelism P"},
        yaxis={"title": "speedup over one subtask"},
    )
    return fig


#: The head every page :func:`write_html` writes starts with: how it knows a page of its own.
_PAGE_HEAD = "<!DOCTYPE html><html><head><meta charset='utf-8'><title>skewlab doctor</title>"
#: The page's style: the text wraps inside the window, nothing scrolls sideways.
_PAGE_STYLE = (
    "<meta name='viewport' content='width=device-width'><style>"
    "body{font-family:sans-serif;max-width:1200px;margin:0 auto;padding:0 1em}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere}"
    ".plotly-graph-div{max-width:100%}</style>"
)


def check_html_out(path: str | Path) -> Path:
    """``path`` as the doctor's HTML page may be written there: a new file, or a page the doctor
    wrote before; anything else (a file skewlab did not write, a folder) raises
    :class:`~skewlab.errors.SkewlabInputError` -- check it before any work.

    Example::

        >>> check_html_out("doctor-report-that-does-not-exist.html").name
        'doctor-report-that-does-not-exist.html'
    """
    out = Path(path)
    if out.is_dir():
        raise SkewlabInputError(f"--html {str(out)!r} is a folder: give a file name")
    if out.exists():
        with out.open(encoding="utf-8", errors="replace") as page:
            ours = page.read(len(_PAGE_HEAD)) == _PAGE_HEAD
        if not ours:
            raise SkewlabInputError(
                f"--html {str(out)!r} exists and is not a page skewlab doctor wrote: give a "
                "new file name (skewlab replaces only its own pages)"
            )
    return out


def write_html(report: Diagnosis, path: str | Path) -> Path:
    """One self-contained HTML page (plotly inlined, no network) with the text and figures,
    at a path :func:`check_html_out` allows.

    Example::

        >>> write_html(report, "doctor.html")                            # doctest: +SKIP
        PosixPath('doctor.html')
    """
    out = check_html_out(path)
    figures = [hot_keys_figure(report), engine_loads_figure(report)]
    if report.parallelism.sweep:
        figures.append(parallelism_figure(report))
    if report.remedies:
        figures.append(remedies_figure(report))
    parts = [
        pio.to_html(fig, full_html=False, include_plotlyjs=i == 0) for i, fig in enumerate(figures)
    ]
    page = (
        f"{_PAGE_HEAD}{_PAGE_STYLE}</head><body>"
        f"<h1>skewlab doctor: {html.escape(str(report.input.key))}</h1>"
        f"<pre>{html.escape(doctor_text(report))}</pre>{''.join(parts)}</body></html>"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


#: The max parallelisms the explorer offers: Flink's default floor, up to its bound.
MAX_PARALLELISMS = tuple(2**i for i in range(7, 16))


def doctor_explorer(
    spark,
    path: str,
    key: str,
    *,
    engine: str = "all",
    parallelism: int = 4,
    max_parallelism: int = 128,
    partitions: int | None = None,
) -> Explorer:
    """Controls for the records' path, the key column, the engine, Flink's parallelism P and
    max parallelism M; *Run* diagnoses the records (:func:`skewlab.diagnose`) and draws where
    the load lands at P, what every P up to M can do, and the report's text.

    ``partitions`` (Spark's and Kafka's) follows P unless given.

    Example::

        >>> explorer = doctor_explorer(spark, "data/views.parquet", "tweet_id")  # doctest: +SKIP
        >>> explorer.update(parallelism=8).figures[0].layout.title.text          # doctest: +SKIP
        'Where the load lands at P=8: records per subtask or partition (these records, ...'
    """

    def draw(path: str, key: str, engine: str, parallelism: int, max_parallelism: int) -> list:
        records = read_records(spark, path)
        report = diagnose(
            records,
            key,
            engines=engine,
            parallelism=(parallelism,),
            max_parallelism=max_parallelism,
            partitions=partitions or parallelism,
            remedies=False,  # the loads only: the notebook prices the remedies once
        )
        loads = engine_loads_figure(report, parallelism)
        loads.update_layout(
            title=f"Where the load lands at P={parallelism}: records per subtask or partition "
            "(these records, routed as each engine routes them; no job runs)"
        )
        shown = [loads]
        if report.parallelism.sweep:
            shown.append(parallelism_figure(report))
        text = widgets.HTML(f"<pre>{html.escape(doctor_text(report))}</pre>")
        return [*shown, text]

    controls = {
        "path": widgets.Text(value=path, description="records (path)", style=WIDGET_STYLE),
        "key": widgets.Text(value=key, description="key column", style=WIDGET_STYLE),
        "engine": widgets.Dropdown(
            options=[*ENGINES, "all"], value=engine, description="engine", style=WIDGET_STYLE
        ),
        "parallelism": widgets.IntSlider(
            value=parallelism,
            min=1,
            max=64,
            description="parallelism P",
            style=WIDGET_STYLE,
        ),
        "max_parallelism": widgets.Dropdown(
            options=[m for m in MAX_PARALLELISMS if m <= UPPER_BOUND_MAX_PARALLELISM],
            value=max_parallelism,
            description="max parallelism M",
            style=WIDGET_STYLE,
        ),
    }
    return Explorer(controls, draw, run_button=True).start()


def cost_profile_table(profile: dict[str, Any], table: str = "per_record_us"):
    """The cost profile as a table: per remedy, job time per record of the busiest subtask
    (us; ``table="operator_us"``: the operator's time alone) at each density.

    Example::

        >>> from skewlab.doctor.remedy_costs import load_cost_profile
        >>> list(cost_profile_table(load_cost_profile()).columns)[:2]
        ['remedy', '5 per key']
    """
    import pandas as pd

    columns = [f"{n:,.0f} per key" for n in profile["records_per_key"]]
    rows = [
        {"remedy": name, **dict(zip(columns, profile[table][name], strict=True))}
        for name in DENSITY_PRICED
    ]
    return pd.DataFrame(rows).round(2)


def spark_side_lines(profile: dict[str, Any]) -> list[str]:
    """Each remedy's Spark side as the profile measured it (us): per record of the job, per
    record of the busiest subtask, per key's result collected.

    Example::

        >>> side = {"job_record_us": 2.8, "busiest_record_us": 1.6, "key_us": 13.5,
        ...         "key_us_measured": 13.5, "busiest_record_from": "subtask 0 alone"}
        >>> spark_side_lines({"spark_side": {"sorted": side}})[1]
        '  sorted: 2.80 / 1.60 / 13.50'
    """
    lines = ["Spark's side (us): a record of the job / of the busiest subtask / a key's result:"]
    for name, side in profile["spark_side"].items():
        source = side["busiest_record_from"]
        note = "" if source == ALONE else f" (busiest: {source})"
        kept = side["key_us_measured"]
        if kept < 0:
            note += f" (a key measured {kept:.2f}, held at 0)"
        lines.append(
            f"  {name}: {side['job_record_us']:.2f} / {side['busiest_record_us']:.2f} / "
            f"{side['key_us']:.2f}{note}"
        )
    return lines


def form_on_view_sets_table(checked: list[dict[str, Any]]):
    """The job-time form on the profile's own view sets
    (:func:`~skewlab.doctor.remedy_costs.form_on_view_sets`, kept in the summary as
    ``form_on_view_sets``) as a table: per remedy and view set, its busiest subtask's share,
    the job time measured and the form's, and predicted / measured job throughput with its
    interval.

    Example::

        >>> from skewlab.doctor.remedy_costs import run_experiment
        >>> result = run_experiment("tiny", progress=False)                      # doctest: +SKIP
        >>> form_on_view_sets_table(result.summary["form_on_view_sets"])         # doctest: +SKIP
    """
    import pandas as pd

    table = []
    for row in checked:
        ratio = Estimate.from_json(row["predicted_over_measured"])
        label = f"{row['cardinality']:,} keys" + (
            "" if row["view_set"] == BALANCED else f", {row['view_set']}"
        )
        table.append({
            "remedy": row["remedy"], "view set": label,
            "busiest share": round(row["busiest_share"], 2),
            "measured (s)": round(row["measured_seconds"], 3),
            "form (s)": round(row["form_seconds"], 3),
            "predicted / measured": round(ratio.value, 2),
            "interval": f"[{ratio.low:.2f}..{ratio.high:.2f}]" if ratio.has_interval else "-",
        })  # fmt: skip
    return pd.DataFrame(table)


def format_remedy_costs_summary(result: BenchResult) -> str:
    """What ``skewlab bench remedy_costs`` prints, headed by whose figures they are: the cost
    profile the doctor prices with, and each remedy's job time by slope at each cardinality with
    its interval over the rounds.

    Example::

        >>> from skewlab.doctor.remedy_costs import run_experiment
        >>> print(format_remedy_costs_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
    """  # noqa: E501
    summary = bench_summary(result)
    profile = summary["cost_profile"]
    runs = summary.get("runs")
    intervals = summary.get("intervals") or {}
    by_slope = summary.get(MEASURE) or {}
    if profile is None:
        return "\n".join([
            f"{whose_figures(result)}: no cost profile -- {summary.get('cost_profile_error')}",
            *_by_slope_lines(by_slope, intervals),
            f"every digest equal to Spark SQL's: {summary['all_digests_match']}",
        ])  # fmt: skip
    buffer = profile["buffer"]
    how = (
        "the job's time by slope (its cost per record between a quarter of the views and all of "
        "them, times the records: fixed costs cancelled)"
        if summary.get("headline_measure") == MEASURE
        else "the job's time as this summary measured it (before the slope)"
    )
    lines = [
        f"{whose_figures(result)}: job time per record of the busiest subtask (us), {how}, "
        f"p={profile['parallelism']}, medians of {runs if runs is not None else 'the'} "
        "round(s):",
        cost_profile_table(profile).to_string(index=False),
        "of which the operator's own time per record of the busiest subtask (us):",
        cost_profile_table(profile, "operator_us").to_string(index=False),
        *spark_side_lines(profile),
        *_form_lines(summary),
        f"cache: {profile['miss_us']:.2f} us per miss over the heap"
        if profile["miss_us"] is not None
        else "cache: no misses measured",
        "buffer, us per record by records folded per flushed key: "
        + ", ".join(
            f"{x:,.1f}: {y:.2f}"
            for x, y in zip(buffer["records_per_flushed_key"], buffer["per_record_us"], strict=True)
        ),
        "salting's first stage per record (us): "
        + ", ".join(f"{c:.2f}" for c in profile["salted_stage_one_us"]),
    ]
    lines += _by_slope_lines(by_slope, intervals)
    lines.append(f"every digest equal to Spark SQL's: {summary['all_digests_match']}")
    return "\n".join(lines)


def _form_lines(summary: dict[str, Any]) -> list[str]:
    """The form on the profile's own view sets (:func:`form_on_view_sets_table`), where the
    summary has it."""
    table = form_on_view_sets_table(summary.get("form_on_view_sets") or [])
    if table.empty:
        return []
    return [
        "the job-time form on the profile's own view sets, predicted / measured job throughput",
        "(the even sets' Spark side is fitted to them; interval: the rounds' median's):",
        table.to_string(index=False),
    ]


def _by_slope_lines(by_slope: dict[str, Any], intervals: dict[str, Any]) -> list[str]:
    """Each remedy's job time by slope per cardinality, with its interval over the rounds."""
    if not by_slope:
        return []
    lines = ["job time by slope (s), median [bootstrap interval] per cardinality:"]
    for name, per_card in by_slope.items():
        shown = [
            f"{int(k):,} keys "
            + estimate_text(intervals.get(f"{MEASURE}_{name}_{k}") or {"value": v}, ".3f", " s")
            for k, v in per_card.items()
            if v is not None
        ]
        lines.append(f"  {name}: " + ", ".join(shown))
    return lines


def _measured(entry: dict[str, Any], runs: int) -> Any:
    return measured_interval(entry, runs)


def _verdict_word(ratio) -> str:
    """Whether a prediction is within the tolerance: at every end of its interval, at none, or
    the runs cannot tell."""
    if not ratio.has_interval:
        at = "yes" if abs(ratio.value - 1) <= TOLERANCE else "no"
        return f"{at} at the median (no interval)"
    inside = [abs(x - 1) <= TOLERANCE for x in (ratio.low, ratio.high)]
    if all(inside):
        return "yes"
    if ratio.high < 1 - TOLERANCE or ratio.low > 1 + TOLERANCE:
        return "no"
    return "the runs cannot tell"


def _workload_label(workload: dict[str, Any]) -> str:
    """A workload's name, with "held out" where the model was not tuned on its records."""
    return workload["workload"] + (" (held out)" if workload.get("held_out") else "")


def _predicted(entry: dict[str, Any]) -> Estimate:
    return predicted_estimate(
        entry["predicted_records_per_second"], entry.get("predicted_interval")
    )


def _predicted_text(entry: dict[str, Any]) -> str:
    """A prediction with the spread of the profile's runs it was priced from, where it has one."""
    return estimate_text(_predicted(entry), ",.0f", "")


def operator_check_table(summary: dict[str, Any] | None):
    """The operators' own part of each prediction, per workload (rows) and remedy (columns):
    the operator time the doctor priced from the replay's counts over the operator time the
    runs measured (median of the rounds, by slope) -- where a job-time miss comes from the
    operator's pricing rather than Spark's side. Empty for a summary written before it was kept.

    Example::

        >>> w = {"workload": "zipf", "held_out": False, "remedies": [
        ...     {"remedy": "buffered", "predicted_operator_seconds": 0.9,
        ...      "measured_operator_seconds": 1.0}]}
        >>> operator_check_table({"workloads": [w]}).to_dict("records")
        [{'workload': 'zipf', 'buffered': 0.9}]
    """
    import pandas as pd

    rows = []
    for w in (summary or {}).get("workloads", []):
        ratios = {
            r["remedy"]: round(r["predicted_operator_seconds"] / r["measured_operator_seconds"], 2)
            for r in w["remedies"]
            # a slope within its noise can measure no time, or less than none: no ratio
            if r.get("predicted_operator_seconds") is not None
            and (r.get("measured_operator_seconds") or 0.0) > 0
        }
        if ratios:
            rows.append({"workload": _workload_label(w), **ratios})
    return pd.DataFrame(rows)


def remedy_check_table(summary: dict[str, Any] | None):
    """Predicted beside measured job throughput, per workload and remedy: the prediction with
    the spread of the cost profile's runs it was priced from, the measured median over the
    rounds with its bootstrap interval, predicted / measured with the interval both give it,
    and whether it is within the tolerance (or the runs cannot tell).

    Example::

        >>> remedy_check_table({"workloads": []}).empty
        True
    """
    import pandas as pd

    if summary is None:
        return pd.DataFrame()
    runs = summary.get("runs") or 1
    rows = []
    for w in summary["workloads"]:
        for r in w["remedies"]:
            measured = _measured(r, runs)
            if measured is None:
                rows.append({
                    "workload": _workload_label(w), "remedy": r["remedy"],
                    "predicted rec/s [interval]": _predicted_text(r),
                    "measured rec/s [interval]": "-", "predicted / measured": "-",
                    f"within {TOLERANCE:.0%}": "not measured",
                })  # fmt: skip
                continue
            ratio = (
                Estimate.from_json(r["predicted_over_measured_interval"])
                if r.get("predicted_over_measured_interval")
                else over(_predicted(r), measured)
            )
            rows.append({
                "workload": _workload_label(w),
                "remedy": r["remedy"],
                "predicted rec/s [interval]": _predicted_text(r),
                "measured rec/s [interval]": estimate_text(measured, ",.0f", ""),
                "predicted / measured": estimate_text(ratio, ".2f", ""),
                f"within {TOLERANCE:.0%}": _verdict_word(ratio),
            })  # fmt: skip
    return pd.DataFrame(rows)


def _pair_counts(workload: dict[str, Any], runs: int) -> dict[str, int]:
    """How many pairs of remedies the runs order as predicted, against, or not at all."""
    entries = {r["remedy"]: _measured(r, runs) for r in workload["remedies"]}
    counts = {"as predicted": 0, "against": 0, "untold": 0}
    ranking = [r for r in workload["ranking_predicted"] if entries.get(r) is not None]
    for i, faster in enumerate(ranking):
        for slower in ranking[i + 1 :]:
            a, b = entries[faster], entries[slower]
            if a.has_interval and b.has_interval and a.low > b.high:
                counts["as predicted"] += 1
            elif a.has_interval and b.has_interval and a.high < b.low:
                counts["against"] += 1
            else:
                counts["untold"] += 1
    return counts


def format_remedy_check_summary(result: BenchResult) -> str:
    """What ``skewlab bench remedy_check`` prints, headed by whose figures they are:
    predictions beside measurements (with their intervals), the counts, and what the runs say
    of each ranking.

    Example::

        >>> from skewlab.doctor.remedy_check import run_experiment
        >>> print(format_remedy_check_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
    """  # noqa: E501
    summary = bench_summary(result)
    runs = summary.get("runs") or 1
    lines = [
        f"{whose_figures(result)}: the doctor's predictions beside real runs, measured job "
        f"throughput by slope (median of {runs} round(s) [bootstrap interval]); priced "
        f"with: {profile_source(summary)}",
        remedy_check_table(summary).to_string(index=False),
    ]
    operators = operator_check_table(summary)
    if not operators.empty:
        lines += [
            "of which the operators' own time, priced from the replay's counts / measured "
            "(median of the rounds, by slope):",
            operators.to_string(index=False),
        ]
    for w in summary["workloads"]:
        pairs = _pair_counts(w, runs)
        lines.append(
            f"{_workload_label(w)}: records per subtask predicted "
            f"{w['records_per_subtask_predicted']}"
            f", measured {w['records_per_subtask_measured']}; hit ratio predicted "
            f"{w['hit_ratio_predicted']:.3f}, measured {w['hit_ratio_measured']:.3f}; flushed "
            f"keys predicted {w['flushed_keys_predicted']:,}, measured "
            f"{w['flushed_keys_measured']:,}; ranking predicted "
            f"{' > '.join(w['ranking_predicted'])}, measured medians "
            f"{' > '.join(w['ranking_measured'])}; of its pairs the runs order "
            f"{pairs['as predicted']} as predicted, {pairs['against']} against, and cannot "
            f"order {pairs['untold']} (their intervals overlap)"
        )
    intervals = summary.get("intervals") or {}
    if summary.get("unmeasured"):
        lines.append(
            f"not measured: {', '.join(summary['unmeasured'])} (no round's job took longer over "
            "all the views than over a quarter of them): no verdict over every remedy"
        )
    if "predictions_within_tolerance" in intervals:
        lines.append(
            "predictions within the tolerance: "
            + estimate_text(intervals["predictions_within_tolerance"], ".0f", "")
            + f" of {summary['predictions']}; pairs measured against the ranking: "
            + estimate_text(intervals["ranking_disagreements"], ".0f", "")
            + f" of {summary['ranking_pairs']} (from surely to possibly)"
        )
    if "held_out_within_tolerance" in intervals:
        lines.append(
            f"held out ({', '.join(summary['held_out_workloads'])}: records the model was not "
            "tuned on): predictions within the tolerance "
            + estimate_text(intervals["held_out_within_tolerance"], ".0f", "")
            + f" of {summary['held_out_predictions']}; pairs measured against the ranking: "
            + estimate_text(intervals["held_out_ranking_disagreements"], ".0f", "")
            + f" of {summary['held_out_ranking_pairs']}"
        )
    lines += stored_profile_lines(summary)
    lines.append(f"every digest equal: {summary['all_digests_match']}")
    return "\n".join(lines)


def profile_source(summary: dict[str, Any]) -> str:
    """Which cost profile a check's predictions were priced with, as a phrase: the profile
    measured in the check's own rounds, or the stored profile's source.

    Example::

        >>> from skewlab.doctor.remedy_check import SESSION_SOURCE
        >>> profile_source({"cost_profile": {"source": SESSION_SOURCE}})
        "the cost profile measured in the check's own rounds (skewlab bench remedy_costs' view sets beside the workloads)"
        >>> profile_source({"cost_profile": {"source": "reference: r.json"}})
        'reference: r.json'
    """  # noqa: E501
    source = summary["cost_profile"]["source"]
    return source.removeprefix("this session: ") if source == SESSION_SOURCE else source


def stored_profile_lines(summary: dict[str, Any]) -> list[str]:
    """What a check priced in its own session (``remedy_check``'s default) says beside its
    verdict: why it fell back to the stored profile, if it did, and how the same runs judge the
    predictions priced with the stored profile -- what a profile from another session, or
    another machine, adds; nothing for a check priced with a stored profile alone.

    Example::

        >>> print(stored_profile_lines({"stored_profile": {
        ...     "source": "reference: r.json", "machine": {"cpu": "AMD EPYC", "cores": 2},
        ...     "predictions": 24, "predictions_within_tolerance": {"value": 20.0, "low": 12.0,
        ...     "high": 24.0, "runs": 5, "method": "bootstrap"}, "held_out_within_tolerance": None,
        ...     "predicted_over_measured": {"w": {"naive_heap": 1.3, "sorted": 0.9}}}})[0])
        priced with the stored profile instead (reference: r.json, measured on AMD EPYC, 2 cores): 20 [12..24] of 24 predictions within the tolerance, predicted / measured from 0.90 to 1.30
    """  # noqa: E501
    lines = []
    if summary.get("unpriced"):
        lines.append(
            f"the cost profile measured in this session gave none ({summary['unpriced']}): "
            "priced with the stored profile instead"
        )
    stored = summary.get("stored_profile")
    if not stored or summary.get("unpriced"):
        return lines
    machine = stored.get("machine") or {}
    where = (
        f", measured on {machine['cpu']}, {machine['cores']} cores"
        if machine.get("cpu") and machine.get("cores")
        else ""
    )
    ratios = [
        r for by_remedy in stored["predicted_over_measured"].values() for r in by_remedy.values()
        if r is not None
    ]  # fmt: skip
    within = stored.get("predictions_within_tolerance")
    lines.append(
        f"priced with the stored profile instead ({stored['source']}{where}): "
        + (
            f"{estimate_text(within, '.0f', '')} of {stored['predictions']} predictions within "
            "the tolerance"
            if within
            else "no verdict (a remedy went unmeasured)"
        )
        + (f", predicted / measured from {min(ratios):.2f} to {max(ratios):.2f}" if ratios else "")
    )
    return lines


def remedy_check_shown(result) -> dict[str, Any] | None:
    """The doctor's check to show: this run's (``result``, a
    :class:`~skewlab.experiments.results.BenchResult` or its JSON) or, where a size leaves the
    run out (``result`` is ``None``: tiny and quick reports), the shipped reference's; with
    ``shown`` saying which (``None`` when neither exists).

    Example::

        >>> remedy_check_shown({"summary": {"workloads": []}})
        this run's check of the doctor against real runs:
        {'workloads': [], 'shown': 'this run'}
    """
    return summary_shown(
        result,
        REMEDY_CHECK,
        what="check of the doctor against real runs",
        why="every remedy on four workloads: minutes, not seconds",
    )


def remedy_check_figure(summary: dict[str, Any] | None) -> go.Figure:
    """Predicted against measured job throughput, one point per remedy and workload (the
    measured median with its interval as an error bar across, the prediction with the spread of
    the profile's runs up and down), with the line where they are equal and the band of the
    tolerance; the title says whose runs.

    Example::

        >>> remedy_check_figure({"workloads": [], "shown": "this run"}).layout.xaxis.type
        'log'
    """
    fig = go.Figure()
    if summary is None:
        fig.update_layout(template=TEMPLATE, title="No check of the doctor to show")
        return fig
    runs = summary.get("runs") or 1
    points = [
        r
        for w in summary["workloads"]
        for r in w["remedies"]
        if r["measured_records_per_second"] is not None
    ]
    if points:
        low = (
            min(
                min(r["measured_records_per_second"], r["predicted_records_per_second"])
                for r in points
            )
            / 1.5
        )
        high = max(max(r["measured_records_per_second"], r["predicted_records_per_second"])
                   for r in points) * 1.5  # fmt: skip
        for factor, dash in ((1 - TOLERANCE, "dot"), (1.0, "solid"), (1 + TOLERANCE, "dot")):
            fig.add_trace(go.Scatter(
                x=[low, high], y=[low * factor, high * factor], mode="lines",
                line={"color": "grey", "dash": dash, "width": 1}, showlegend=False,
                hoverinfo="skip",
            ))  # fmt: skip
    for w in summary["workloads"]:
        shown = [r for r in w["remedies"] if r["measured_records_per_second"] is not None]
        measured = [_measured(r, runs) for r in shown]
        predicted = [_predicted(r) for r in shown]
        fig.add_trace(go.Scatter(
            x=[m.value for m in measured],
            y=[r["predicted_records_per_second"] for r in shown],
            error_x={
                "type": "data", "symmetric": False,
                "array": [m.high - m.value if m.has_interval else 0 for m in measured],
                "arrayminus": [m.value - m.low if m.has_interval else 0 for m in measured],
            },
            error_y={
                "type": "data", "symmetric": False,
                "array": [p.high - p.value if p.has_interval else 0 for p in predicted],
                "arrayminus": [p.value - p.low if p.has_interval else 0 for p in predicted],
            },
            text=[r["remedy"] for r in shown],
            mode="markers+text", textposition="top center", name=_workload_label(w),
            hovertemplate="%{text}: measured %{x:,.0f}, predicted %{y:,.0f} records/s"
                          "<extra></extra>",
        ))  # fmt: skip
    fig.update_layout(
        template=TEMPLATE,
        title=f"The doctor's predicted job throughput against real runs ({summary['shown']}); "
        f"dotted: within {TOLERANCE:.0%}",
        xaxis={"title": "measured job records/s (by slope: median, its interval)", "type": "log"},
        yaxis={"title": "predicted job records/s (the profile's spread)", "type": "log"},
    )
    return fig


def describe_remedy_check(summary: dict[str, Any] | None) -> str:
    """Sentences computed from the check, naming whose it is: the predictions within the
    tolerance (surely, at the medians, possibly), and per workload the doctor's ranking with
    what the runs say of it -- a pair of remedies whose measured intervals overlap is one the
    runs cannot order, so a ranking over it is neither confirmed nor contradicted.

    Example::

        >>> print(describe_remedy_check({"workloads": [], "shown": "this run", "tolerance": 0.25,
        ...     "cost_profile": {"source": "x"}}))
        In this run, no workload was checked.
    """
    if summary is None:
        return "No check of the doctor to show: run skewlab bench remedy_check."
    workloads, whose = summary["workloads"], summary["shown"]
    if not workloads:
        return f"In {whose}, no workload was checked."
    runs = summary.get("runs") or 1
    n = sum(len(w["remedies"]) for w in workloads)
    ratios = [
        r["predicted_over_measured"]
        for w in workloads
        for r in w["remedies"]
        if r["predicted_over_measured"] is not None
    ]
    if summary.get("unmeasured"):
        return (
            f"In {whose}, {', '.join(summary['unmeasured'])} went unmeasured (no round's job "
            "took longer over all the views than over a quarter of them), so no verdict over "
            "every remedy is given."
        )
    within = within_tolerance(workloads, runs)
    lines = [
        f"In {whose}, priced with {profile_source(summary)}: "
        + (
            f"{within.value:.0f} of {n} predictions of job throughput are within "
            f"{summary['tolerance']:.0%} of the measured median; counting the measured "
            f"intervals, {within.low:.0f} surely and {within.high:.0f} possibly"
            if within.has_interval
            else f"{within.value:.0f} of {n} predictions of job throughput are within "
            f"{summary['tolerance']:.0%} of the measured (no interval: one round, or a summary "
            "that kept none)"
        )
        + f" (predicted / measured from {min(ratios):.2f} to {max(ratios):.2f})."
    ]
    held = [w for w in workloads if w.get("held_out")]
    if held:
        held_within = within_tolerance(held, runs)
        held_ratios = [r["predicted_over_measured"] for w in held for r in w["remedies"]]
        lines.append(
            f"On records the model was not tuned on ({', '.join(w['workload'] for w in held)}; "
            f"{held[0]['data_set']}): {held_within.value:.0f} of "
            f"{sum(len(w['remedies']) for w in held)} within {summary['tolerance']:.0%}"
            + (
                f" ({held_within.low:.0f} surely, {held_within.high:.0f} possibly)"
                if held_within.has_interval
                else ""
            )
            + f", predicted / measured from {min(held_ratios):.2f} to {max(held_ratios):.2f}."
        )
    # what a profile from another session or machine would have predicted, as sentences
    lines += [line[0].upper() + line[1:] + "." for line in stored_profile_lines(summary)]
    for w in workloads:
        pairs = _pair_counts(w, runs)
        total = sum(pairs.values())
        lines.append(
            f"{_workload_label(w)}: the doctor recommends {w['recommended']} and ranks "
            f"{' > '.join(w['ranking_predicted'])}; the measured medians rank "
            f"{' > '.join(w['ranking_measured'])}; of its {total} pairs of remedies the runs "
            f"order {pairs['as predicted']} as predicted and {pairs['against']} against it, "
            f"and cannot order {pairs['untold']} (their intervals overlap)."
        )
    return "\n".join(lines)
