"""The seeds' experiments, one module per chapter, and the one chapter registry: measurement
only -- what runs, and the figures and summaries it returns.

==================  ===============================================================
``chapters``        the registry: every chapter's id, seed, sizes, benchmarks, headlines
``results``         ``BenchResult``: rows and summary, written as CSV and JSON; read back
``headlines``       a quick run's headline ratios held against a full run's
``machine``         the machine a result was measured on
``salting``         chapter 02 (seed 000): salting's double count and the per-key order lost
``buffering``       chapter 03 (seed 000): naive (RocksDB) vs buffered over tweet cardinality
``latency_sweep``   chapter 03 (seed 000): the buffer's latency over the trigger interval
``state_cache``     chapter 04 (seed 003, FLIP-325): an LRU cache of objects before RocksDB,
                    the 0%-hit record taken apart
``floor``           chapter 04: the engine's floor per record, part by part (``bench floor``)
``sorted_input``    chapter 05 (seed 001, FLIP-140): WordCount, keyed state vs sorted input
``value_state``     chapter 05 (seed 001, FLIP-140): the ValueState micro-benchmark
``memory_cap``      chapter 05 (seed 001, FLIP-140): heap vs sorted input under a memory cap
                    on each Python worker
``rescaling``       chapter 06 (seed 002): where keys go, restore at a new parallelism three
                    ways, a buffer's in-flight records
``backlog``         chapter 07 (seed 002): the outage backlog, measured rates, simulated P
``streaming``       chapter 08 (seed 000 on Spark Structured Streaming): throughput, the
                    micro-batch latency sweep, the hot partition, rescaling a checkpoint
``hot_partition``   chapter 08: the hot partition's run and Spark's default provider refusing
                    ``transformWithState`` (``bench hot_partition``)
``splitting``       chapter 10: key splitting (PKG, D-Choices, W-Choices) beside naive and
                    salting, measured at p = 2 and 4, the routing simulated to p = 128
``cache_admission`` chapter 10: LRU, W-TinyLFU and OPT hit ratios, simulated over key traces
``exercises``       the tasks at the end of a chapter, each checked with skewlab's own parts;
                    the solutions page
``predictions``     the question each chapter puts before its main measurement, answered by a
                    claim's figure (this run, the reference, the seed)
``step_through``    small real runs traced record by record (key groups, the buffer, the
                    LRU cache), for the chapters to play back step by step
``references``      the full-size results shipped with skewlab, their provenance
``claims``          each chapter's claims, checked over a result
==================  ===============================================================

Measurement lives here; tables, sentences, charts and the text ``skewlab bench`` prints about it
live in the chapter's :mod:`skewlab.viz` module (``skewlab.viz.<chapter id>``).

Example::

    >>> from skewlab.experiments import size_settings
    >>> size_settings("buffering", "full")["runs"]
    5
"""

from __future__ import annotations

from skewlab.experiments import (
    backlog,
    buffering,
    cache_admission,
    exercises,
    floor,
    hot_partition,
    latency_sweep,
    memory_cap,
    predictions,
    rescaling,
    salting,
    sorted_input,
    splitting,
    state_cache,
    step_through,
    streaming,
    value_state,
)
from skewlab.experiments.chapters import (
    BENCHMARKS,
    CHAPTERS,
    SIZES,
    benchmark,
    chapter,
    size_settings,
)
from skewlab.experiments.results import BenchResult, latest_result

__all__ = [
    "BENCHMARKS",
    "CHAPTERS",
    "SIZES",
    "BenchResult",
    "backlog",
    "benchmark",
    "buffering",
    "cache_admission",
    "exercises",
    "floor",
    "hot_partition",
    "chapter",
    "latency_sweep",
    "latest_result",
    "memory_cap",
    "predictions",
    "rescaling",
    "salting",
    "size_settings",
    "sorted_input",
    "splitting",
    "state_cache",
    "step_through",
    "streaming",
    "value_state",
]
