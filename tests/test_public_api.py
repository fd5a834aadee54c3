"""The public API: every name in ``skewlab.__all__`` loads, the ``TYPE_CHECKING`` mirror that
IDEs and type checkers read lists the same names from the same modules, and the former names
still load with a DeprecationWarning."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

import skewlab


@pytest.mark.parametrize("name", skewlab.__all__)
def test_every_public_name_loads(name):
    assert getattr(skewlab, name) is not None


def test_the_type_checking_mirror_names_every_lazy_name_from_its_module():
    tree = ast.parse(inspect.getsource(skewlab))
    guarded = next(
        node for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )  # fmt: skip
    mirrored = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert mirrored == skewlab._API  # noqa: SLF001 - the lazy map itself
    for name, module in mirrored.items():
        assert getattr(importlib.import_module(module), name) is getattr(skewlab, name)


@pytest.mark.parametrize(
    ("old", "new"), [("PROFILES", "SIZES"), ("profile_settings", "size_settings")]
)
def test_former_names_load_with_a_deprecation_warning(old, new):
    with pytest.warns(DeprecationWarning, match=f"skewlab.{old} is deprecated, use skewlab.{new}"):
        value = getattr(skewlab, old)
    assert value is getattr(skewlab, new)


def test_importing_skewlab_starts_nothing_and_unknown_names_fail():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        skewlab.nope  # noqa: B018
