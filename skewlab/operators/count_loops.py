"""The count operators' per-record loops in use: compiled with the compiled value-state cores,
plain Python with the Python ones (:data:`skewlab.state.value_state.IMPLEMENTATION`).

On the JVM an operator's per-record code is compiled, so what the FLIP-325 and FLIP-140
benchmarks compare is the cost of the *state access* itself. An interpreted Python loop adds
~0.2 us per record to every strategy alike and hides that difference; the compiled loops
(:mod:`skewlab.operators.count_loops_compiled`) do not. :data:`IMPLEMENTATION` says which
loops run; benchmark results record it.

Example::

    >>> from skewlab.state.value_state import HeapValueState
    >>> heap = HeapValueState()
    >>> keyed_count(["a", "b", None, "a"], [0, 1, 0, 0], heap)     # returns the rejected count
    1
"""

from __future__ import annotations

import importlib

import skewlab.state.value_state as value_state

__all__ = [
    "IMPLEMENTATION",
    "get_each",
    "keyed_count",
    "put_each",
    "sort_group_count",
    "sorted_count",
]


def _load():
    if value_state.IMPLEMENTATION == "compiled":
        try:  # an extension module that may not exist: loaded by name
            compiled = importlib.import_module("skewlab.operators.count_loops_compiled")
            return compiled, "compiled"
        except ImportError:  # the cores were built, the loops were not: Python loops over them
            pass
    import skewlab.operators.count_loops_python as count_loops_python

    return count_loops_python, "python"


_loops, IMPLEMENTATION = _load()
keyed_count = _loops.keyed_count
sorted_count = _loops.sorted_count
sort_group_count = _loops.sort_group_count
put_each = _loops.put_each
get_each = _loops.get_each
