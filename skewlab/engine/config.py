"""The job's configuration: what every stage of a run shares, and nothing strategy-specific.

A strategy's own settings (a buffer's ``max_count``, a cache's size, the salt buckets) live in
its parameters (:mod:`skewlab.strategies`) and reach its operators as constructor arguments;
:class:`JobConfig` is what the engine itself needs -- how many subtasks and key groups, how fast
the source replays, whether to check per-key order, and which disk profile prices the run's
disk accesses.

Example::

    >>> from skewlab.engine.config import JobConfig
    >>> JobConfig(parallelism=4).resolved(default_parallelism=2).max_parallelism
    128
    >>> JobConfig(source_rate=0)
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: source_rate (--source-rate) must be a number > 0 records/s, got 0
    >>> JobConfig(disk_profile=None).disk_profile is None
    True

``latency_profile=`` (the keyword before ``disk_profile=``) still works for one release, with a
``DeprecationWarning``; ``JobConfig.latency_profile`` still reads ``disk_profile``.
"""  # noqa: E501

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, replace
from typing import Any

from skewlab.engine.recovery import Recovery
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.state.key_groups import (
    UPPER_BOUND_MAX_PARALLELISM,
    KeyGroupRange,
    check_parallelism,
    compute_default_max_parallelism,
    compute_key_group_range_for_operator_index,
)
from skewlab.validation import check_number, check_whole

__all__ = ["DEFAULT_DISK_PROFILE", "DEFAULT_LATENCY_PROFILE", "JobConfig"]

#: The disk profile a run's disk accesses are priced under unless told otherwise: seed 000's EBS.
DEFAULT_DISK_PROFILE = "ebs-article"
#: Deprecated alias of :data:`DEFAULT_DISK_PROFILE` (kept for one release).
DEFAULT_LATENCY_PROFILE = DEFAULT_DISK_PROFILE


@dataclass(frozen=True, kw_only=True)
class JobConfig:
    """What a job's stages share (validated on construction, before Spark does any work).

    Attributes:
        parallelism: operator subtasks (default: Spark's default parallelism).
        max_parallelism: number of key groups (default: Flink's rule for ``parallelism``).
        source_rate: replay the source at this many records/s (default: as fast as possible).
        check_order: count per-key order violations at the final operator.
        track_keys: count state accesses per key (implied by ``disk_profile`` for state on
            disk, which is what the latency model prices).
        disk_profile: the disk profile (:mod:`skewlab.iomodel.profiles`) under which the run's
            disk accesses become a modelled I/O time; ``None`` for none.
        trace_memory: trace each subtask's Python allocations for their peak
            (:mod:`skewlab.engine.memory`); slows allocation-heavy work, so only for runs that
            measure memory.
        recovery: savepoints, checkpoints and an injected failure
            (:class:`~skewlab.engine.recovery.Recovery`); ``None`` for none.
    """

    parallelism: int | None = None
    max_parallelism: int | None = None
    source_rate: float | None = None
    check_order: bool = False
    track_keys: bool = False
    disk_profile: str | None = DEFAULT_DISK_PROFILE
    trace_memory: bool = False
    recovery: Recovery | None = None

    def __post_init__(self) -> None:
        p, max_p = self.parallelism, self.max_parallelism
        if p is not None:
            check_whole("parallelism (--parallelism)", p, 1)
        if max_p is not None:
            check_whole(
                "max_parallelism (--max-parallelism)", max_p, 1, UPPER_BOUND_MAX_PARALLELISM
            )
        if p is not None and max_p is not None:
            check_parallelism(p, max_p)
        if self.source_rate is not None:
            check_number(
                "source_rate (--source-rate)", self.source_rate, above=0, unit=" records/s"
            )
        if self.disk_profile is not None:
            load_disk_profile(self.disk_profile)  # unknown names fail here, listing the known ones

    @property
    def latency_profile(self) -> str | None:
        """Deprecated name of :attr:`disk_profile` (read-only, kept for one release)."""
        return self.disk_profile

    def resolved(self, default_parallelism: int) -> JobConfig:
        """This config with parallelism and max parallelism filled in.

        Example::

            >>> JobConfig().resolved(3).parallelism
            3
        """
        p = self.parallelism if self.parallelism is not None else max(1, default_parallelism)
        max_p = self.max_parallelism
        if max_p is None:
            max_p = compute_default_max_parallelism(p)
        return replace(self, parallelism=p, max_parallelism=max_p)

    def key_group_range(self, subtask: int) -> KeyGroupRange:
        """The key groups subtask ``subtask`` owns (of a resolved config).

        Example::

            >>> JobConfig(parallelism=4, max_parallelism=128).key_group_range(1)
            KeyGroupRange(start_key_group=32, end_key_group=63)
        """
        if self.parallelism is None or self.max_parallelism is None:
            raise ValueError("key_group_range needs a resolved JobConfig")
        return compute_key_group_range_for_operator_index(
            self.max_parallelism, self.parallelism, subtask
        )

    def parameters(self) -> dict[str, Any]:
        """What a result row records of the job (the source rate only when paced).

        Example::

            >>> JobConfig(parallelism=2, source_rate=1_000).parameters()
            {'parallelism': 2, 'max_parallelism': None, 'source_rate': 1000}
        """
        common: dict[str, Any] = {
            "parallelism": self.parallelism,
            "max_parallelism": self.max_parallelism,
        }
        return common | ({"source_rate": self.source_rate} if self.source_rate else {})


def _accept_latency_profile(init):
    """``JobConfig(latency_profile=...)``: the keyword before ``disk_profile``, still accepted
    for one release with a ``DeprecationWarning``."""

    @functools.wraps(init)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "latency_profile" in kwargs:
            if "disk_profile" in kwargs:
                raise TypeError("give disk_profile only (latency_profile is its old name)")
            warnings.warn(
                "JobConfig(latency_profile=...) is deprecated, use disk_profile= "
                "(it will be removed in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs["disk_profile"] = kwargs.pop("latency_profile")
        init(self, *args, **kwargs)

    return __init__


JobConfig.__init__ = _accept_latency_profile(JobConfig.__init__)  # type: ignore[method-assign]
