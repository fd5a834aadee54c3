"""One palette, one set of labels, one control style: every chart's colours and every side's
label come from :mod:`skewlab.viz.palette`, every control's style from the explorer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import skewlab.viz
from skewlab.experiments import buffering, sorted_input, state_cache
from skewlab.state.restore import RESTORE_WAYS
from skewlab.viz.palette import COLORS, LABELS

VIZ = Path(skewlab.viz.__file__).parent
COLOUR_LITERAL = re.compile(r"""["']#[0-9a-fA-F]{3,8}["']""")


@pytest.mark.parametrize(
    ("table", "ids"),
    [
        ("count", sorted_input.STRATEGY_ORDER),
        ("buffering", buffering.SIDES),
        ("state_cache", state_cache.SIDES),
        ("restore", RESTORE_WAYS),
    ],
)
def test_every_side_an_experiment_compares_has_one_label(table, ids):
    assert set(LABELS[table]) == set(ids)


def test_no_label_stands_in_two_tables():
    texts = [text for table in LABELS.values() for text in table.values()]
    assert len(texts) == len(set(texts))


def test_no_viz_module_hard_codes_a_colour_or_a_control_style():
    for module in sorted(VIZ.glob("*.py")):
        source = module.read_text()
        # code, not a doctest's printed value (a line that is only a string)
        code = [ln for ln in source.splitlines() if not ln.strip().startswith(("'", '"'))]
        if module.name != "palette.py":
            colours = COLOUR_LITERAL.findall("\n".join(code))
            assert not colours, f"{module.name}: {colours}, not in COLORS"
        if module.name != "explorer.py":
            assert '"description_width": "initial"' not in source, f"{module.name}: WIDGET_STYLE"


def test_every_colour_is_a_colour():
    assert all(re.fullmatch(r"#[0-9a-f]{3}|#[0-9a-f]{6}", c) for c in COLORS.values())
