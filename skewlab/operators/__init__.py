"""The operators strategies chain inside a subtask: the per-record state work of the seeds.

==================  ===============================================================
``stateful``        one keyed state backend per subtask, its counters reported on close
``reduce``          keyed reduces of ``StatsState`` (naive, salting, sorted input)
``buffers``         seed 000's in-memory buffers (list, pre-aggregating, vectorized)
``buffer_state``    a buffer's in-flight records in a savepoint (flushed, list or keyed state)
``count``           FLIP-325 / FLIP-140 count operators (keyed, sort-group, sorted)
``count_loops``     their compiled per-record loops
``running_count``   the seed's salted word count (running partials summed downstream)
``lifecycle``       account events through salting or the buffer (the order lesson)
==================  ===============================================================

Example::

    >>> from skewlab.operators import BUFFERS
    >>> sorted(BUFFERS)
    ['hotkey', 'list', 'preaggregate', 'vectorized']
"""

from __future__ import annotations

from skewlab.operators.buffers import BUFFER_KINDS, BUFFERS
from skewlab.operators.count import KeyedCount, SortedCount, SortGroupCount
from skewlab.operators.reduce import KeyedReduce, PartialsReduce, SortedReduce
from skewlab.operators.stateful import StatefulOperator

__all__ = [
    "BUFFERS",
    "BUFFER_KINDS",
    "KeyedCount",
    "KeyedReduce",
    "PartialsReduce",
    "SortGroupCount",
    "SortedCount",
    "SortedReduce",
    "StatefulOperator",
]
