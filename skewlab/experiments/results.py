"""What a benchmark run leaves: its rows and summary, written as CSV and JSON.

Each benchmark's module exposes ``run_experiment(size, runs, ...) -> BenchResult``; the
``skewlab bench`` command runs one and writes
``data/results/<experiment>-<size>-<UTC time>.{csv,json}``. Speed targets are checked by
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
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skewlab import paths
from skewlab.engine.session import java_options_in_use
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import benchmark
from skewlab.experiments.machine import this_machine
from skewlab.operators.count_loops import IMPLEMENTATION as CORES

__all__ = [
    "BenchResult",
    "bench_rows",
    "bench_summary",
    "json_default",
    "latest_result",
    "median_of",
    "spread",
]


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
    size: str
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    files: list[Path] = field(default_factory=list)
    #: when, where and by which code a shipped reference was measured (``None``: this run)
    provenance: dict[str, Any] | None = None

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> BenchResult:
        """A result back from its JSON dict (:meth:`to_json_dict`, a saved result or a shipped
        reference, whose ``provenance`` it keeps).

        Example::

            >>> saved = {"experiment": "backlog", "size": "full", "rows": [], "summary": {},
            ...          "provenance": {"measured_at": "2026-11-27T18:00:00Z"}}
            >>> result = BenchResult.from_json_dict(saved)
            >>> result.size, result.provenance["measured_at"]
            ('full', '2026-11-27T18:00:00Z')
        """
        return cls(
            data["experiment"],
            data["size"],
            list(data.get("rows", [])),
            dict(data["summary"]),
            provenance=data.get("provenance"),
        )

    def __post_init__(self) -> None:
        self.summary.setdefault("cores", CORES)
        self.summary.setdefault("java_options", java_options_in_use())
        self.summary.setdefault("machine", this_machine())

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def to_json_dict(self) -> dict[str, Any]:
        data = {
            "experiment": self.experiment,
            "size": self.size,
            "rows": self.rows,
            "summary": self.summary,
        }
        if self.provenance is not None:
            data["provenance"] = self.provenance
        return data

    def write(self, directory: Path | None = None) -> list[Path]:
        """Write ``<experiment>-<size>-<UTC time>.csv`` and ``.json`` under ``data/results/``."""
        directory = Path(directory) if directory else paths.results_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        base = directory / f"{self.experiment}-{self.size}-{stamp}"
        csv, js = base.with_suffix(".csv"), base.with_suffix(".json")
        self.frame().to_csv(csv, index=False)
        js.write_text(json.dumps(self.to_json_dict(), indent=2, default=json_default) + "\n")
        self.files = [csv, js]
        return self.files


def bench_rows(result: BenchResult | Mapping[str, Any] | pd.DataFrame) -> pd.DataFrame:
    """The rows of a benchmark result: a :class:`BenchResult`, its JSON dict (what
    :func:`latest_result` returns), or a DataFrame of them already.

    Example::

        >>> bench_rows({"rows": [{"cardinality": 1, "strategy": "naive"}]}).shape
        (1, 2)
    """
    if isinstance(result, pd.DataFrame):
        return result
    if hasattr(result, "frame"):
        return result.frame()
    return pd.DataFrame(result["rows"])


def bench_summary(result: BenchResult | Mapping[str, Any]) -> dict[str, Any]:
    """The summary of a benchmark result: a :class:`BenchResult` or its JSON dict.

    Example::

        >>> saved = {"summary": {"runs": 3}}
        >>> bench_summary(saved), bench_summary(BenchResult("d", "tiny", [], {"runs": 1}))["runs"]
        ({'runs': 3}, 1)
    """
    return result["summary"] if isinstance(result, Mapping) else result.summary


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


def json_default(value: Any) -> Any:
    """``json.dumps``'s ``default`` for result files: a numpy scalar as its Python value.

    Example::

        >>> import numpy as np
        >>> json.dumps({"x": np.float64(1.5)}, default=json_default)
        '{"x": 1.5}'
    """
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def latest_result(
    experiment: str,
    directory: Path | None = None,
    size: str | None = None,
    *,
    profile: str | None = None,
) -> dict[str, Any] | None:
    """The newest result file of benchmark ``experiment`` (of ``size``, or any), as a dict with
    its ``size``, or None. A file written under the benchmark's former name (``cache``,
    ``sorted``, ...) or with a ``profile`` field (before sizes had their own word) still counts.

    Newest by the UTC time in the file's name (what :meth:`BenchResult.write` stamps), not by
    the file's modification time, which a copy between machines resets. ``profile=`` is the
    former spelling of ``size=``.

    Example::

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = BenchResult("state_cache", "tiny", [], {"runs": 1}).write(Path(d))
        ...     latest_result("cache", Path(d), size="tiny")["size"]
        'tiny'
    """
    if profile is not None:
        warnings.warn(
            "latest_result(profile=...) is deprecated, use size=", DeprecationWarning, stacklevel=2
        )
        size = size or profile
    directory = Path(directory) if directory else paths.results_dir()
    try:
        bench = benchmark(experiment)
        names = (bench.id, *bench.aliases)
    except SkewlabInputError:
        names = (experiment,)
    files = [
        (p, name)
        for name in names
        for p in directory.glob(f"{name}-{size}-*.json" if size else f"{name}-*.json")
    ]
    if not files:
        return None
    newest, name = max(files, key=lambda f: (f[0].stem.rsplit("-", 1)[-1], f[0].name))
    saved = json.loads(newest.read_text())
    saved.setdefault(
        "size", saved.pop("profile", None) or newest.name.removeprefix(f"{name}-").split("-")[0]
    )
    return saved
