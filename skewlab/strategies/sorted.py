"""``sorted``: FLIP-140's sort-based execution for bounded input.

Spark sorts each partition by (key group, tweet) -- its external sort, spilling to disk when
needed -- and a single-key state backend holds only the current key: one emission per key, at
the end of its run. Input that is not sorted fails with the backend's error, never a wrong count.

Example::

    >>> run_strategy(views, RunConfig("sorted"))  # doctest: +SKIP
"""

from __future__ import annotations

from skewlab.operators import SortedReduce
from skewlab.runtime import KEY_GROUP
from skewlab.strategies._keyed import run_single_stage


def run(spark, views, config):
    return run_single_stage(spark, views, config, SortedReduce, order_by=(KEY_GROUP, "tweet_id"))
