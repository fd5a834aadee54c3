"""What the strategies aggregate, and the oracles they are checked against.

================  ===============================================================
``hll``           HyperLogLog registers (datasketch), Spark's hash as register columns
``stats_state``   seed 000's ``StatsState`` (views and viewers HLL per tweet), ``plus``
``reference``     the oracle: the same registers in plain Python and in Spark SQL
``digest``        ``result_digest``: one string per result set, equal iff every register is
``count``         the count state of FLIP-325 / FLIP-140 and its ``CountDigest``
================  ===============================================================

Example::

    >>> from skewlab.aggregates import StatsState, plus
    >>> a = StatsState.from_view("view-1", "user-1", "tweet-1")
    >>> plus(a, a) == a      # idempotent: a running partial summed twice changes nothing
    True
"""

from __future__ import annotations

from skewlab.aggregates.count import CountDigest, DigestSink, count_digest
from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.aggregates.reference import reference_aggregate, spark_reference_aggregate
from skewlab.aggregates.stats_state import StatsSerializer, StatsState, TweetStats, plus, to_stats

__all__ = [
    "DEFAULT_PRECISION",
    "CountDigest",
    "DigestSink",
    "StatsSerializer",
    "StatsState",
    "TweetStats",
    "count_digest",
    "plus",
    "reference_aggregate",
    "result_digest",
    "spark_reference_aggregate",
    "to_stats",
]
