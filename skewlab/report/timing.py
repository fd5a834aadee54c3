"""Where a report's time goes, per notebook: measured, not guessed.

A notebook's wall time in a report is split into

* ``kernel`` -- starting the Jupyter kernel it ran in (the first notebook pays it; the others
  share that kernel, unless one killed it);
* ``spark`` -- starting Spark inside the kernel (:func:`skewlab.engine.session.spark_start_seconds`:
  the driver JVM is started by the first notebook that asks for a session);
* ``cells`` -- the notebook's own code cells (papermill's per-cell durations), less ``spark``:
  the experiments and their charts;
* ``render`` -- nbconvert writing the HTML page;
* ``other`` -- the rest (papermill reading and writing the notebook, the kernel client).

Example::

    >>> t = NotebookTiming(total=10.0, kernel=2.0, spark=3.0, code=7.5, render=0.4)
    >>> round(t.cells, 2), round(t.other, 2)
    (4.5, 0.1)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NotebookTiming", "cell_durations", "format_timings"]


@dataclass
class NotebookTiming:
    """One notebook's seconds (see the module docstring); ``code`` is every code cell together,
    Spark's start included; ``slowest`` is the slowest code cell as ``(cell index, seconds)``."""

    total: float
    kernel: float = 0.0
    spark: float = 0.0
    code: float = 0.0
    render: float = 0.0
    slowest: tuple[int, float] | None = None

    @property
    def cells(self) -> float:
        """The code cells less Spark's start: the experiments and their charts."""
        return max(0.0, self.code - self.spark)

    @property
    def other(self) -> float:
        return max(0.0, self.total - self.kernel - self.code - self.render)

    def as_dict(self) -> dict[str, float]:
        return {
            "total": self.total,
            "kernel": self.kernel,
            "spark": self.spark,
            "cells": self.cells,
            "render": self.render,
            "other": self.other,
        }


def cell_durations(notebook) -> list[tuple[int, float]]:
    """``(cell index, seconds)`` of each executed code cell, from papermill's cell metadata."""
    out = []
    for index, cell in enumerate(notebook.cells):
        if cell.get("cell_type") != "code":
            continue
        duration = cell.get("metadata", {}).get("papermill", {}).get("duration")
        if duration is not None:
            out.append((index, float(duration)))
    return out


def format_timings(rows: list[tuple[str, NotebookTiming]]) -> str:
    """A fixed-width table of per-notebook timings, with a total row.

    Example::

        >>> print(format_timings([("00_hot_keys", NotebookTiming(10.0, 2.0, 3.0, 7.5, 0.4))]))
        notebook                  total  kernel  spark  cells  render  other  slowest cell
        00_hot_keys                10.0     2.0    3.0    4.5     0.4    0.1
        all                        10.0     2.0    3.0    4.5     0.4    0.1
    """
    head = (
        f"{'notebook':24s} {'total':>6s} {'kernel':>7s} {'spark':>6s} {'cells':>6s} "
        f"{'render':>7s} {'other':>6s}  slowest cell"
    )
    lines = [head]
    sums = dict.fromkeys(("total", "kernel", "spark", "cells", "render", "other"), 0.0)
    for name, t in rows:
        d = t.as_dict()
        for key in sums:
            sums[key] += d[key]
        slowest = f"  [{t.slowest[0]}] {t.slowest[1]:.1f} s" if t.slowest else ""
        lines.append(_row(name, d) + slowest)
    lines.append(_row("all", sums))
    return "\n".join(line.rstrip() for line in lines)


def _row(name: str, d: dict[str, float]) -> str:
    return (
        f"{name[:24]:24s} {d['total']:6.1f} {d['kernel']:7.1f} {d['spark']:6.1f} "
        f"{d['cells']:6.1f} {d['render']:7.1f} {d['other']:6.1f}"
    )
