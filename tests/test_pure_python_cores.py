"""Without a C compiler skewlab runs on its pure-Python cores: the same tests must pass on them.

The state backends' model tests, the value-state cores' model tests and the count loops' tests
run again in a fresh interpreter with ``SKEWLAB_PURE_PYTHON=1`` (what an install without a
compiler gets), so the fallback is held to the same oracles as the compiled path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import skewlab.operators.count_loops as count_loops
import skewlab.state.value_state as value_state

TESTS = Path(__file__).parent
SAME_TESTS = [
    TESTS / "state" / "test_backends.py",
    TESTS / "operators" / "test_count_loops.py",
    TESTS / "operators" / "test_count.py",
]


def test_the_compiled_cores_are_the_ones_in_use_here():
    assert (value_state.IMPLEMENTATION, count_loops.IMPLEMENTATION) == ("compiled", "compiled")


@pytest.mark.long
def test_the_pure_python_cores_pass_the_same_tests():
    # a fresh run, not this test process's worker (pytest-xdist's variables left out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["SKEWLAB_PURE_PYTHON"] = "1"
    check = "import skewlab.operators.count_loops as c; print(c.IMPLEMENTATION)"
    which = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env)
    assert which.stdout.strip() == "python"
    # in one process: this run's two test processes already use the cores
    command = ["-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *map(str, SAME_TESTS)]
    proc = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout
