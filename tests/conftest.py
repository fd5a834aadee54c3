"""Shared fixtures: one real local SparkSession for every Spark test (never mocked), one tiny
report for the tests that read it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """The session skewlab itself makes (``local[*]`` unless SKEWLAB_SPARK_MASTER says else)."""
    from skewlab.engine.session import get_spark

    session = get_spark(app_name="skewlab-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def tiny_report(tmp_path_factory):
    """Every notebook rendered once at the tiny profile (``skewlab report``), shared by the
    report's tests and the browser's."""
    from skewlab.report import render_report

    return render_report("tiny", out=tmp_path_factory.mktemp("report"), progress=False)
