"""The seeds' experiments, one module each, and the one table of their sizes.

==================  ===============================================================
``profiles``        tiny / quick / full sizes of every experiment and lesson
``results``         ``BenchResult``: rows and summary, written as CSV and JSON
``buffering``       seed 000: naive (RocksDB) vs buffered over tweet cardinality
``latency_sweep``   seed 000: the buffer's latency over the trigger interval (paced)
``salting``         seed 000: salting's double count and the per-key order it loses
``cache``           seed 003, FLIP-325: an LRU cache of objects in front of RocksDB
``sorted_input``    seed 001, FLIP-140: WordCount, keyed state vs sorted input
``value_state``     seed 001, FLIP-140: the ValueState micro-benchmark
``rescale``         seed 002: restore at a new parallelism three ways, RocksDB's native restore
``catch_up``        seed 002: the outage backlog, measured rates and simulated parallelisms
``streaming``       seed 000 on Spark Structured Streaming: per-record / per-batch / builtin
==================  ===============================================================

Example::

    >>> from skewlab.experiments import profile_settings
    >>> profile_settings("buffering", "full")["runs"]
    5
"""

from __future__ import annotations

from skewlab.experiments import (
    buffering,
    cache,
    catch_up,
    latency_sweep,
    rescale,
    salting,
    sorted_input,
    streaming,
    value_state,
)
from skewlab.experiments.profiles import PROFILES, SETTINGS, profile_settings
from skewlab.experiments.results import BenchResult, latest_result

__all__ = [
    "PROFILES",
    "SETTINGS",
    "BenchResult",
    "buffering",
    "cache",
    "catch_up",
    "latency_sweep",
    "latest_result",
    "profile_settings",
    "rescale",
    "salting",
    "sorted_input",
    "streaming",
    "value_state",
]
