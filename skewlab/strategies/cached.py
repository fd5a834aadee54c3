"""``cached``: the naive reduce over FLIP-325's cached backend (write-back LRU over RocksDB).

Example::

    >>> run_strategy(views, RunConfig("cached", cache_entries=500))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import replace

from skewlab.operators import KeyedReduce
from skewlab.strategies._keyed import run_single_stage


def run(spark, views, config):
    return run_single_stage(spark, views, replace(config, backend="cached"), KeyedReduce)
