"""Where skewlab reads and writes files.

The project root holds ``notebooks/``, ``data/`` (generated views, results, shipped latency
profiles) and ``reports/``. It is the checkout the package was installed from (an editable
install, as the README does), or ``SKEWLAB_HOME`` when that is set.

Example::

    >>> from skewlab import paths
    >>> paths.data_dir().name
    'data'
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The skewlab checkout (or ``$SKEWLAB_HOME``)."""
    env = os.environ.get("SKEWLAB_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """``<root>/data``: generated views and results (git-ignored), shipped profiles."""
    return project_root() / "data"


def views_dir() -> Path:
    """``<root>/data/views``: default home of generated view sets."""
    return data_dir() / "views"


def results_dir() -> Path:
    """``<root>/data/results``: benchmark result files."""
    return data_dir() / "results"


def notebooks_dir() -> Path:
    """``<root>/notebooks``: the lab's parameterised notebooks."""
    return project_root() / "notebooks"


def reports_dir() -> Path:
    """``<root>/reports``: rendered HTML reports (git-ignored)."""
    return project_root() / "reports"
