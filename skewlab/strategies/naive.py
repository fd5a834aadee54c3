"""``naive``: keyBy tweet -> reduce. Per record: read state, merge, write state, emit (seed 000).

Example::

    >>> Naive(backend="heap").parameters()
    {'backend': 'heap'}
    >>> run_strategy(views, Naive(backend="rocksdb"))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from skewlab.operators.reduce import KeyedReduce
from skewlab.strategies.keyed import run_single_stage
from skewlab.strategies.parameters import KeyedStateParameters

__all__ = ["Naive"]


@dataclass(frozen=True, kw_only=True)
class Naive(KeyedStateParameters):
    """The naive keyed reduce, on ``backend`` (heap, rocksdb, or cached with
    ``cache_entries``)."""

    name: ClassVar[str] = "naive"
    resumable: ClassVar[bool] = True
    periodic_checkpoints: ClassVar[bool] = True
    modelled_as: ClassVar[str | None] = "naive"

    def run(self, spark, views, job):
        operator = partial(
            KeyedReduce, state_backend=self.state_backend(), precision=self.precision
        )
        return run_single_stage(spark, views, self, job, operator)
