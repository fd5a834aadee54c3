"""Every example in skewlab's docstrings runs and prints what it says (those that need a Spark
session or a long run are marked ``+SKIP``; Spark is exercised by the other tests)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import skewlab

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(skewlab.__path__, "skewlab.")
    if m.name != "skewlab.__main__"
)


def test_the_compiled_modules_are_among_them():
    compiled = {"skewlab.operators.count_loops_compiled", "skewlab.state.value_state_compiled"}
    assert compiled <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
