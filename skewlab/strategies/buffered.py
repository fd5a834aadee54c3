"""``buffered``: seed 000's in-memory buffer, then keyBy -> reduce of the partials.

The buffer is operator-level (one per subtask, for all its keys), flushed when it holds
``max_count`` records or every ``trigger_interval_ms``; per-key order is kept because a key's
records never leave their subtask. Four buffers (:mod:`skewlab.operators.buffers`): ``list``
(the seed's ``Vector`` per key, reduced at flush), ``preaggregate`` (one running state per key),
``vectorized`` (Arrow slices of the single-view registers folded with numpy -- identical
registers) and ``hotkey`` (the vectorized buffer for the keys a frequent-items sketch finds hot,
every other record reduced at once). Like every keyed strategy, all four start from the same
upstream map.

Example::

    >>> Buffered(trigger_interval_ms=100, max_count=1000).parameters()
    {'backend': 'rocksdb', 'trigger_interval_ms': 100, 'max_count': 1000, 'buffer': 'vectorized'}
    >>> run_strategy(views, Buffered(buffer="list"))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from skewlab.operators.buffers import BUFFER_KINDS, BUFFERS
from skewlab.strategies.keyed import run_single_stage
from skewlab.strategies.parameters import KeyedStateParameters, parameter
from skewlab.validation import check_choice, check_number, check_whole

__all__ = ["Buffered"]


@dataclass(frozen=True, kw_only=True)
class Buffered(KeyedStateParameters):
    """The buffer, flushed every ``trigger_interval_ms`` (ms, >= 0; 0: no timer, count-triggered
    only) or at ``max_count`` records, then the keyed reduce of the partials on ``backend``."""

    name: ClassVar[str] = "buffered"
    resumable: ClassVar[bool] = True
    periodic_checkpoints: ClassVar[bool] = True
    modelled_as: ClassVar[str | None] = "buffered"

    trigger_interval_ms: float = parameter(
        100.0, "flush at least this often, in ms (0: count-triggered only)"
    )
    max_count: int = parameter(1000, "flush when the buffer holds this many records")
    buffer: str = parameter("vectorized", "which buffer", choices=BUFFER_KINDS)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_number(
            "trigger_interval_ms (--trigger-interval-ms)", self.trigger_interval_ms, minimum=0
        )
        check_whole("max_count (--max-count)", self.max_count, 1)
        check_choice("buffer (--buffer)", self.buffer, BUFFER_KINDS)

    def run(self, spark, views, job):
        operator = partial(
            BUFFERS[self.buffer],
            state_backend=self.state_backend(),
            max_count=self.max_count,
            trigger_interval_ms=self.trigger_interval_ms,
            precision=self.precision,
        )
        return run_single_stage(spark, views, self, job, operator, buffers=True)
