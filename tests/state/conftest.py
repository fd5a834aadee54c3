"""Fixtures shared by the state tests."""

from __future__ import annotations

import pytest

from skewlab.state import value_state_python

try:
    from skewlab.state import value_state_compiled
except ImportError:  # built without a C compiler: only the Python cores exist
    value_state_compiled = None


@pytest.fixture(
    scope="module",  # a module, not per test: hypothesis's @given tests take it too
    params=[
        pytest.param(
            value_state_compiled,
            marks=pytest.mark.skipif(value_state_compiled is None, reason="not compiled"),
        ),
        value_state_python,
    ],
    ids=["compiled", "python"],
)
def cores(request):
    """Both implementations of the value-state cores (compiled and pure Python): a test that
    takes ``cores`` runs once with each."""
    return request.param
