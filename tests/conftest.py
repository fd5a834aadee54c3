"""Shared fixtures: one real local SparkSession for every Spark test (never mocked)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """The session skewlab itself makes (``local[*]`` unless SKEWLAB_SPARK_MASTER says else)."""
    from skewlab.engine.session import get_spark

    session = get_spark(app_name="skewlab-tests")
    yield session
    session.stop()
