"""Notebook 06, rescaling through key groups (seed 002): where keys go with and without key
groups (the seed's Figure 3), which old files a new subtask must read, the three restore ways
measured, and operator state's three redistribution modes.

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
from skewlab.state.operator_state import DISTRIBUTION_MODES, repartition_list_state
from skewlab.viz.explorer import Explorer
from skewlab.viz.palette import COLORS, SUBTASK_COLORS, TEMPLATE

__all__ = [
    "assignment_figure",
    "files_read_comparison",
    "files_read_table",
    "operator_state_figure",
    "rescale_explorer",
    "restore_ways_figure",
    "restore_ways_table",
]

_STYLE = {"description_width": "initial"}
_WAY_LABELS = {
    "read_all": "read all, filter",
    "per_key_index": "per-key index",
    "key_groups": "key groups",
}


def _colorscale(parallelism: int) -> list[list]:
    """A discrete colour scale of ``parallelism`` subtask colours for a heatmap."""
    colors = [SUBTASK_COLORS[i % len(SUBTASK_COLORS)] for i in range(parallelism)]
    if parallelism == 1:
        return [[0.0, colors[0]], [1.0, colors[0]]]
    scale = []
    for i, color in enumerate(colors):
        scale += [[i / parallelism, color], [(i + 1) / parallelism, color]]
    return scale


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
            go.Heatmap(
                z=z,
                x=keys,
                y=[f"new (p'={new_p})", f"old (p={old_p})"],
                text=text,
                texttemplate="%{text}",
                colorscale=_colorscale(p),
                zmin=-0.5,
                zmax=p - 0.5,
                showscale=False,
                xgap=2,
                ygap=2,
                hovertemplate="key %{x}: subtask %{z}<extra></extra>",
            ),
            row=row,
            col=1,
        )
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
    columns = ["bytes_read", "requests", "files_opened", "keys_read", "keys_kept", "seconds"]
    totals = frame.groupby("way", sort=False)[columns].sum()
    for column in [c for c in frame.columns if c.startswith("modelled_seconds_")]:
        totals[column.replace("modelled_seconds_", "job_seconds_")] = frame.groupby(
            "way", sort=False
        )[column].max()
    return totals.rename(index=_WAY_LABELS)


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
            go.Heatmap(
                z=z,
                x=everything,
                y=[f"new {i}" for i in range(new_parallelism)],
                colorscale=_colorscale(p),
                zmin=-0.5,
                zmax=p - 0.5,
                showscale=False,
                xgap=2,
                ygap=2,
                hovertemplate="%{x} from old subtask %{z}<extra></extra>",
            ),
            row=1,
            col=col,
        )
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
            continuous_update=False, style=_STYLE,
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
