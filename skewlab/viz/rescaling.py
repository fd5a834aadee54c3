"""Notebook 06, rescaling through key groups (seed 002): where keys go with and without key
groups (the seed's Figure 3), which old files a new subtask must read, the three restore ways
measured (their tables, sentences and what ``skewlab bench rescaling`` prints), and operator
state's three redistribution modes.

Example::

    >>> from skewlab.experiments.rescaling import key_assignment_table
    >>> table = key_assignment_table(range(21), max_parallelism=10, old_parallelism=3,
    ...                              new_parallelism=4)
    >>> fig = assignment_figure(table)
    >>> [a.text.split(":")[0] for a in fig.layout.annotations][:2]
    ['A', 'B']
"""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from skewlab.experiments.rescaling import key_assignment_table
from skewlab.experiments.results import BenchResult
from skewlab.state.operator_state import DISTRIBUTION_MODES, repartition_list_state
from skewlab.state.restore import RESTORE_WAYS
from skewlab.viz.explorer import WIDGET_STYLE, Explorer
from skewlab.viz.palette import COLORS, LABELS, SUBTASK_COLORS, TEMPLATE

__all__ = [
    "assignment_figure",
    "case_rows",
    "cases_table",
    "describe",
    "files_read_comparison",
    "files_read_table",
    "format_summary",
    "native_table",
    "operator_state_figure",
    "rescale_explorer",
    "restore_ways_figure",
    "restore_ways_table",
    "seed_rows",
]

_WAY_LABELS = LABELS["restore"]
#: What a restore way's totals add up (over the new subtasks).
_TOTALS = ["bytes_read", "requests", "files_opened", "keys_read", "keys_kept", "seconds"]


def _colorscale(parallelism: int) -> list[list]:
    """A discrete colour scale of ``parallelism`` subtask colours for a heatmap."""
    colors = [SUBTASK_COLORS[i % len(SUBTASK_COLORS)] for i in range(parallelism)]
    if parallelism == 1:
        return [[0.0, colors[0]], [1.0, colors[0]]]
    scale = []
    for i, color in enumerate(colors):
        scale += [[i / parallelism, color], [(i + 1) / parallelism, color]]
    return scale


def _subtask_heatmap(z, x, y, parallelism: int, **more) -> go.Heatmap:
    """Cells coloured by subtask (``z``: a subtask index, ``None`` for no cell), one colour per
    subtask of ``parallelism``, no colour bar, a gap between cells."""
    return go.Heatmap(
        z=z, x=x, y=y, colorscale=_colorscale(parallelism), zmin=-0.5, zmax=parallelism - 0.5,
        showscale=False, xgap=2, ygap=2, **more,
    )  # fmt: skip


def files_read_table(table: pd.DataFrame, *, key_groups: bool) -> pd.DataFrame:
    """Per new subtask: its keys and how many old subtasks' files hold them (with key groups
    the ranges make these contiguous; without, a new subtask's keys are everywhere)."""
    old, new = ("old_subtask", "new_subtask") if key_groups else ("old_modulo", "new_modulo")
    return (
        table.groupby(new)
        .agg(keys=("key", "count"), old_files=(old, "nunique"))
        .rename_axis("new subtask")
        .reset_index()
    )


def files_read_comparison(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`files_read_table` without and with key groups, side by side."""
    return files_read_table(table, key_groups=False).merge(
        files_read_table(table, key_groups=True),
        on="new subtask",
        how="outer",
        suffixes=(" (hash % p)", " (key groups)"),
    )


def assignment_figure(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """The seed's Figure 3 from :func:`~skewlab.experiments.rescaling.key_assignment_table`: each
    key's old and new subtask, (A) without key groups (``key % p``) and (B) with them (key
    groups in ranges). The subplot titles count the keys that move and the old files each new
    subtask reads at most."""
    old_p = int(table["old_subtask"].max()) + 1 if len(table) else 1
    new_p = int(table["new_subtask"].max()) + 1 if len(table) else 1
    p = max(old_p, new_p, int(table["old_modulo"].max()) + 1, int(table["new_modulo"].max()) + 1)
    titles = []
    for label, old, new, groups in (
        ("A: without key groups (hash % parallelism)", "old_modulo", "new_modulo", False),
        ("B: with key groups (ranges)", "old_subtask", "new_subtask", True),
    ):
        moved = int((table[old] != table[new]).sum())
        most = int(files_read_table(table, key_groups=groups)["old_files"].max())
        titles.append(
            f"{label}: {moved} of {len(table)} keys move; a new subtask reads "
            f"up to {most} old files"
        )
    fig = make_subplots(rows=2, cols=1, subplot_titles=titles, vertical_spacing=0.22)
    keys = [str(k) for k in table["key"]]
    for row, (old, new) in enumerate(
        (("old_modulo", "new_modulo"), ("old_subtask", "new_subtask")), 1
    ):  # noqa: E501
        z = [table[new].tolist(), table[old].tolist()]
        text = [[f"{s}" for s in table[new]], [f"{s}" for s in table[old]]]
        if row == 2:
            text = [
                [f"{s}<br>kg {g}" for s, g in zip(table[c], table["key_group"], strict=True)]
                for c in (new, old)
            ]
        fig.add_trace(
            _subtask_heatmap(
                z, keys, [f"new (p'={new_p})", f"old (p={old_p})"], p,
                hovertemplate="key %{x}: subtask %{z}<extra></extra>",
                text=text, texttemplate="%{text}",
            ),
            row=row,
            col=1,
        )  # fmt: skip
    fig.update_xaxes(title_text="key", type="category")
    fig.update_layout(
        title=title or f"Rescaling {old_p} -> {new_p} subtasks (cell: subtask; kg: key group)",
        template=TEMPLATE,
        height=520,
    )
    return fig


def restore_ways_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per restore way (rows of :func:`~skewlab.experiments.rescaling.restore_table`): totals over
    the new subtasks, and the job's modelled time (its slowest subtask's)."""
    return _restore_totals(frame, "way").rename(index=_WAY_LABELS)


def _restore_totals(frame: pd.DataFrame, by) -> pd.DataFrame:
    """Restore rows grouped ``by``: :data:`_TOTALS` summed, and each storage's modelled time of
    the job (``job_seconds_<storage>``: the slowest new subtask's, as they restore in
    parallel)."""
    groups = frame.groupby(by, sort=False)
    totals = groups[_TOTALS].sum()
    for column in [c for c in frame.columns if c.startswith("modelled_seconds_")]:
        totals[column.replace("modelled_seconds_", "job_seconds_")] = groups[column].max()
    return totals


def restore_ways_figure(
    frame: pd.DataFrame, *, title: str = "Restoring at the new parallelism"
) -> go.Figure:
    """Bytes read, read requests and the modelled restore time (EBS, object store) per way.
    ``title`` is followed by the result: how many times fewer bytes key groups read than
    reading everything, and fewer requests than a per-key index."""
    totals = restore_ways_table(frame)
    groups = _WAY_LABELS["key_groups"]
    found = []
    for way, column, what in (("read_all", "bytes_read", "bytes"),
                              ("per_key_index", "requests", "requests")):  # fmt: skip
        label = _WAY_LABELS[way]
        if {label, groups} <= set(totals.index) and totals.loc[groups, column]:
            ratio = totals.loc[label, column] / totals.loc[groups, column]
            found.append(f"{ratio:,.1f}x fewer {what} than {label}")
    if found:
        title = f"{title}: key groups read " + ", ".join(found)
    metrics = [("bytes_read", "bytes read"), ("requests", "read requests")]
    metrics += [
        (c, c.replace("job_seconds_", "modelled s, ").replace("_", " "))
        for c in totals.columns
        if c.startswith("job_seconds_")
    ]
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=[m[1] for m in metrics])
    way_colors = [COLORS["naive"], COLORS["cached"], COLORS["sorted"]]
    for col, (column, _) in enumerate(metrics, 1):
        fig.add_trace(
            go.Bar(
                x=list(totals.index),
                y=totals[column],
                marker_color=way_colors[: len(totals)],
                text=[f"{v:,.3g}" for v in totals[column]],
                textposition="outside",
                showlegend=False,
            ),
            row=1,
            col=col,
        )
    fig.update_yaxes(type="log")
    fig.update_layout(title=title, template=TEMPLATE, height=420)
    return fig


def seed_rows(result: BenchResult) -> pd.DataFrame:
    """The seed example's restore rows of a ``skewlab bench rescaling`` result.

    Example::

        >>> result = BenchResult("rescaling", "tiny", [
        ...     {"case": "seed 3->4", "way": "key_groups"}, {"case": "3->4", "way": "key_groups"},
        ...     {"case": "3->4", "way": "rocksdb_clip"}], {})
        >>> seed_rows(result)["case"].tolist(), case_rows(result)["case"].tolist()
        (['seed 3->4'], ['3->4'])
    """
    frame = result.frame()
    return frame[frame["case"].str.startswith("seed")]


def case_rows(result: BenchResult) -> pd.DataFrame:
    """The realistic cases' restore rows (the three ways; RocksDB's native rows left out); see
    :func:`seed_rows` for an example."""
    frame = result.frame()
    return frame[~frame["case"].str.startswith("seed") & frame["way"].isin(RESTORE_WAYS)]


def cases_table(result: BenchResult) -> pd.DataFrame:
    """Per realistic case and restore way: totals over the new subtasks, and the job's modelled
    restore time on each storage (its slowest new subtask's).

    Example::

        >>> from skewlab.experiments.rescaling import run_experiment
        >>> cases_table(run_experiment("tiny", progress=False)).index.names  # doctest: +SKIP
        FrozenList(['case', 'distribution', 'way'])
    """
    return _restore_totals(case_rows(result), ["case", "distribution", "way"])


def native_table(result: BenchResult) -> pd.DataFrame:
    """RocksDB's native restore per method: totals over the new subtasks (bytes read counts the
    checkpoint files a clip copies, and the keys and values copied or ingested).

    Example::

        >>> from skewlab.experiments.rescaling import run_experiment
        >>> native_table(run_experiment("tiny", progress=False)).index.get_level_values("way")  # doctest: +SKIP
        Index(['rocksdb_clip', 'rocksdb_copy', 'rocksdb_ingest', ...], dtype='object', name='way')
    """  # noqa: E501
    frame = result.frame()
    frame = frame[frame["way"].str.startswith("rocksdb_")]
    return frame.groupby(["case", "distribution", "way"], sort=False)[
        ["bytes_read", "files_opened", "keys_read", "keys_kept", "seconds"]
    ].sum()


def describe(result: BenchResult) -> str:
    """The run's own figures, in sentences (what the notebook states).

    Example::

        >>> from skewlab.experiments.rescaling import run_experiment
        >>> print(describe(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        In the seed's example the four new subtasks read 3,318 bytes in 12 requests reading ...
    """
    s = result.summary
    seed = {w: s[f"seed_{w}_bytes_read"] for w in RESTORE_WAYS}
    requests = {w: s[f"seed_{w}_requests"] for w in RESTORE_WAYS}
    return (
        f"In the seed's example the four new subtasks read {seed['read_all']:,} bytes in "
        f"{requests['read_all']} requests reading everything, {seed['per_key_index']:,} bytes in "
        f"{requests['per_key_index']} requests through a per-key index, and "
        f"{seed['key_groups']:,} bytes in {requests['key_groups']} requests by key-group ranges. "
        f"Over the realistic cases, reading everything read "
        f"{s['bytes_read_ratio_naive_over_keygroups']:.2f}x the bytes of the key-group way, and "
        f"the per-key index issued {s['requests_ratio_index_over_keygroups']:.1f}x its requests; "
        f"every key-group restore read exactly the bytes of the entries it kept: "
        f"{s['keygroups_read_only_owned_bytes']}; every resumed run ended with the reference "
        f"digest: {s['digest_equal_after_rescale']}."
    )


def format_summary(result: BenchResult) -> str:
    """What ``skewlab bench rescaling`` prints: the seed's 3 -> 4 table and the realistic
    cases' totals.

    Example::

        >>> from skewlab.experiments.rescaling import run_experiment
        >>> print(format_summary(run_experiment("tiny", progress=False)))  # doctest: +SKIP
        seed 002, Figure 3: keys 0..20, identity hash, 10 key groups, 3 -> 4 subtasks
        ...
    """
    lines = ["seed 002, Figure 3: keys 0..20, identity hash, 10 key groups, 3 -> 4 subtasks"]
    columns = [*_TOTALS, "modelled_seconds_ebs", "modelled_seconds_object_store"]
    table = seed_rows(result).groupby("way", sort=False)[columns].sum()
    lines.append(table.to_string(float_format=lambda v: f"{v:.4g}"))
    s = result.summary
    lines += [
        "",
        "realistic cases (max parallelism 128): totals over every new subtask",
        f"  bytes read, read-all / key groups:       {s['bytes_read_ratio_naive_over_keygroups']:.3g}x",  # noqa: E501
        f"  requests, per-key index / key groups:    {s['requests_ratio_index_over_keygroups']:.3g}x",  # noqa: E501
        f"  key groups read only the owned bytes:    {s['keygroups_read_only_owned_bytes']}",
        f"  digest equal after every rescale:        {s['digest_equal_after_rescale']}",
    ]
    return "\n".join(lines)


def operator_state_figure(
    old: list[list[str]], new_parallelism: int, *, title: str | None = None
) -> go.Figure:
    """Operator list state (e.g. a source's ``partition:offset`` pairs) redistributed to
    ``new_parallelism`` subtasks in each of Flink's three modes: one panel per mode, one cell
    per (new subtask, element)."""
    fig = make_subplots(rows=1, cols=len(DISTRIBUTION_MODES), subplot_titles=DISTRIBUTION_MODES)
    origin = {e: i for i, elements in enumerate(old) for e in elements}
    p = max(len(old), 1)
    everything = [e for elements in old for e in elements]
    for col, mode in enumerate(DISTRIBUTION_MODES, 1):
        new = repartition_list_state(old, new_parallelism, mode)
        z = [[origin[e] if e in chunk else None for e in everything] for chunk in new]
        fig.add_trace(
            _subtask_heatmap(
                z, everything, [f"new {i}" for i in range(new_parallelism)], p,
                hovertemplate="%{x} from old subtask %{z}<extra></extra>",
            ),
            row=1,
            col=col,
        )  # fmt: skip
    fig.update_layout(
        title=title
        or f"Operator state, {len(old)} -> {new_parallelism} subtasks "
        "(colour: the old subtask an element came from)",
        template=TEMPLATE,
        height=300 + 20 * new_parallelism,
    )
    return fig


def rescale_explorer(
    *, keys: int = 21, max_parallelism: int = 10, old_parallelism: int = 3, new_parallelism: int = 4
) -> Explorer:
    """Sliders for p, p' and the max parallelism (key groups): each change redraws Figure 3 for
    keys ``0..keys-1`` with an identity hash (no Spark: the assignment is pure arithmetic).

    Example::

        >>> explorer = rescale_explorer()
        >>> explorer.update(new_parallelism=5).figures[0].layout.title.text[:22]
        'Rescaling 3 -> 5 subta'
    """

    def slider(value: int, top: int, description: str) -> widgets.IntSlider:
        return widgets.IntSlider(
            value=value, min=1, max=top, description=description,
            continuous_update=False, style=WIDGET_STYLE,
        )  # fmt: skip

    controls = {
        "old_parallelism": slider(old_parallelism, max_parallelism, "p (before)"),
        "new_parallelism": slider(new_parallelism, max_parallelism, "p' (after)"),
        "max_parallelism": slider(max_parallelism, 64, "max parallelism"),
    }

    def draw(old_parallelism: int, new_parallelism: int, max_parallelism: int) -> list:
        # p and p' never exceed the key groups
        controls["old_parallelism"].max = controls["new_parallelism"].max = max_parallelism
        table = key_assignment_table(
            range(keys),
            max_parallelism=max_parallelism,
            old_parallelism=min(old_parallelism, max_parallelism),
            new_parallelism=min(new_parallelism, max_parallelism),
        )
        return [assignment_figure(table)]

    return Explorer(controls, draw).start()
