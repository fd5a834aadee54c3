"""``sorted``: FLIP-140's sort-based execution for bounded input.

Spark sorts each partition by (key group, tweet) -- its external sort, spilling to disk when
needed -- and a single-key state backend holds only the current key: one emission per key, at
the end of its run. Input that is not sorted fails with the backend's error, never a wrong count.

Example::

    >>> Sorted().parameters()
    {}
    >>> run_strategy(views, Sorted())  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from skewlab.engine.routing import KEY_GROUP
from skewlab.operators.reduce import SortedReduce
from skewlab.strategies.keyed import run_single_stage
from skewlab.strategies.parameters import StrategyParameters

__all__ = ["Sorted"]


@dataclass(frozen=True, kw_only=True)
class Sorted(StrategyParameters):
    """Sorted input per partition, single-key state, one emission per key."""

    name: ClassVar[str] = "sorted"
    resumable: ClassVar[bool] = True
    periodic_checkpoints: ClassVar[bool] = False
    modelled_as: ClassVar[str | None] = "sorted"

    def run(self, spark, views, job):
        operator = partial(SortedReduce, precision=self.precision)
        return run_single_stage(spark, views, self, job, operator, order_by=(KEY_GROUP, "tweet_id"))
