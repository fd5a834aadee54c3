"""What a benchmark run leaves: its rows and summary, written as CSV and JSON.

Each experiment module exposes ``run_experiment(profile, runs, ...) -> BenchResult``; the
``skewlab bench`` command runs one and writes
``data/results/<experiment>-<profile>-<UTC time>.{csv,json}``. Speed targets are checked by
benchmarks, never by unit tests.

Example::

    >>> result = BenchResult("demo", "tiny", [{"run": 0, "x": 1.5}], {"runs": 1})
    >>> result.frame().shape, result.summary["cores"] in ("compiled", "python")
    ((1, 2), True)
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skewlab import paths
from skewlab.engine.session import java_options_in_use
from skewlab.experiments.machine import this_machine
from skewlab.operators.count_loops import IMPLEMENTATION as CORES

__all__ = ["BenchResult", "latest_result", "median_of", "spread"]


@dataclass
class BenchResult:
    """Rows (one per measured run) and a summary of one experiment.

    The summary records which value-state cores and count loops ran (``cores``: ``compiled``
    or ``python``, see :mod:`skewlab.state.value_state`) and the extra options Spark's JVMs ran
    with (``java_options``: ``$SKEWLAB_JAVA_OPTIONS``, ``[]`` for none, ``None`` without a
    Spark driver) and the machine that measured it (``machine``, see
    :mod:`skewlab.experiments.machine`): figures from different cores, JVM options or machines
    are not comparable.
    """

    experiment: str
    profile: str
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    files: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.summary.setdefault("cores", CORES)
        self.summary.setdefault("java_options", java_options_in_use())
        self.summary.setdefault("machine", this_machine())

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "profile": self.profile,
            "rows": self.rows,
            "summary": self.summary,
        }

    def write(self, directory: Path | None = None) -> list[Path]:
        """Write ``<experiment>-<UTC time>.csv`` and ``.json`` under ``data/results/``."""
        directory = Path(directory) if directory else paths.results_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        base = directory / f"{self.experiment}-{self.profile}-{stamp}"
        csv, js = base.with_suffix(".csv"), base.with_suffix(".json")
        self.frame().to_csv(csv, index=False)
        js.write_text(json.dumps(self.to_json_dict(), indent=2, default=_plain) + "\n")
        self.files = [csv, js]
        return self.files


def spread(values) -> dict[str, float | None]:
    """``{"min", "median", "max"}`` of the values that are not ``None`` (all ``None`` if none).

    Example::

        >>> spread([3.0, None, 1.0, 2.0])
        {'min': 1.0, 'median': 2.0, 'max': 3.0}
    """
    present = [v for v in values if v is not None]
    if not present:
        return {"min": None, "median": None, "max": None}
    return {"min": min(present), "median": statistics.median(present), "max": max(present)}


def median_of(rows, field: str, **where: Any) -> float | None:
    """The median of ``field`` over the rows matching every ``where`` item (``None`` if none).

    Example::

        >>> median_of([{"s": "a", "x": 1}, {"s": "a", "x": 3}, {"s": "b", "x": 9}], "x", s="a")
        2.0
    """
    return spread(r[field] for r in rows if all(r.get(k) == v for k, v in where.items()))["median"]


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def latest_result(
    experiment: str, directory: Path | None = None, profile: str | None = None
) -> dict[str, Any] | None:
    """The newest result file of ``experiment`` (of ``profile``, or any), as a dict with its
    ``profile`` (from the file's name when the file predates the field), or None.

    Newest by the UTC time in the file's name (what :meth:`BenchResult.write` stamps), not by
    the file's modification time, which a copy between machines resets."""
    directory = Path(directory) if directory else paths.results_dir()
    pattern = f"{experiment}-{profile}-*.json" if profile else f"{experiment}-*.json"
    files = sorted(directory.glob(pattern), key=lambda p: (p.stem.rsplit("-", 1)[-1], p.name))
    if not files:
        return None
    saved = json.loads(files[-1].read_text())
    saved.setdefault("profile", files[-1].name.removeprefix(f"{experiment}-").split("-")[0])
    return saved
