"""``naive``: keyBy tweet -> reduce. Per record: read state, merge, write state, emit (seed 000).

Example::

    >>> run_strategy(views, RunConfig("naive", backend="rocksdb"))  # doctest: +SKIP
"""

from __future__ import annotations

from skewlab.operators import KeyedReduce
from skewlab.strategies._keyed import run_single_stage


def run(spark, views, config):
    return run_single_stage(spark, views, config, KeyedReduce)
