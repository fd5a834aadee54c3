"""Benchmarks that reproduce the seeds' experiments: they print figures and write result files.

Each experiment module exposes ``run_experiment(profile, runs, ...) -> BenchResult``; the
``skewlab bench`` command runs one and writes ``data/results/<experiment>-<UTC time>.{csv,json}``.
Speed targets are checked here, never in unit tests.

Example::

    >>> from skewlab.benchmarks.buffering import run_experiment
    >>> result = run_experiment("quick", runs=1)          # doctest: +SKIP
    >>> result.summary["speedup_at_20_keys"]              # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skewlab import paths
from skewlab.errors import SkewlabInputError

PROFILES = ("quick", "full")


@dataclass
class BenchResult:
    """Rows (one per measured run) and a summary of one experiment."""

    experiment: str
    profile: str
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    files: list[Path] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def to_json_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "rows": self.rows, "summary": self.summary}

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


def resolve_profile(
    table: dict[str, dict[str, Any]], profile: str, runs: int | None
) -> tuple[dict[str, Any], int]:
    """A profile's settings and the run count (``runs`` or the profile's), both validated.

    Example::

        >>> resolve_profile({"quick": {"runs": 1}}, "quick", None)
        ({'runs': 1}, 1)
    """
    if profile not in table:
        raise SkewlabInputError(f"unknown profile {profile!r}: use {' or '.join(table)}")
    settings = table[profile]
    runs = settings["runs"] if runs is None else runs
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise SkewlabInputError(f"--runs must be at least 1, got {runs!r}")
    return settings, runs


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def latest_result(experiment: str, directory: Path | None = None) -> dict[str, Any] | None:
    """The newest result file of ``experiment`` (any profile), as a dict, or None."""
    directory = Path(directory) if directory else paths.results_dir()
    files = sorted(directory.glob(f"{experiment}-*.json"), key=lambda p: p.stat().st_mtime)
    return json.loads(files[-1].read_text()) if files else None
