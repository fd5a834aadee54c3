"""What a job does about its state's survival: savepoints, periodic checkpoints, an injected
failure -- Flink's ``execution.savepoint.path``, stop-with-savepoint and
``execution.checkpointing.interval``, as one frozen setting of the job (:class:`Recovery`, the
``recovery`` field of :class:`~skewlab.engine.config.JobConfig`).

=========================  ======================================================================
``restore_from``           a published savepoint: every stateful operator restores the key groups
                           its subtask owns, operator state is redistributed, the source resumes
                           at the savepoint's position (the next ``seq``)
``stop_at``                stop-with-savepoint after source record ``stop_at - 1``: the source
                           stage reads ``seq < stop_at`` and every subtask then snapshots its
                           state into ``savepoint_dir`` (an in-progress savepoint the driver
                           publishes once all of them have written, :mod:`~skewlab.engine.savepoint`)
``checkpoint_interval``    a subtask of the source stage checkpoints its state, its sink's
                           pending output and its split's position every that many records,
                           into ``checkpoint_dir``; a retried attempt restores the latest one and
                           replays from its position
``fail_at``                the subtask processing source record ``fail_at`` raises
                           :class:`InjectedFailure` on its first attempt (Spark retries it only
                           under a master that allows retries, e.g. ``local[2,4]``)
``in_flight``              how an operator holding records in flight (a buffer) snapshots them:
                           ``flush`` them into keyed state first; keep them as ``operator_state``
                           (a list, redistributed by position: it cannot be rescaled); or as
                           ``keyed_state`` (redistributed by key group)
=========================  ======================================================================

Example::

    >>> Recovery(stop_at=500, savepoint_dir="/tmp/sp.inprogress").stops
    True
    >>> Recovery(checkpoint_interval=0)
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: checkpoint_interval (--checkpoint-interval) must be a whole number >= 1, got 0
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass

from skewlab.errors import SkewlabInputError
from skewlab.validation import check_choice, check_whole

__all__ = ["IN_FLIGHT_POLICIES", "InjectedFailure", "Recovery"]

#: How in-flight records are snapshotted (see the module doc).
IN_FLIGHT_POLICIES = ("flush", "operator_state", "keyed_state")


class InjectedFailure(RuntimeError):
    """The failure a job was told to inject (``Recovery.fail_at``)."""


@dataclass(frozen=True, kw_only=True)
class Recovery:
    """Savepoint, checkpoint and failure settings of one job run (see the module doc)."""

    restore_from: str | None = None
    stop_at: int | None = None
    savepoint_dir: str | None = None
    checkpoint_interval: int | None = None
    checkpoint_dir: str | None = None
    fail_at: int | None = None
    in_flight: str = "flush"

    def __post_init__(self) -> None:
        if self.stop_at is not None:
            check_whole("stop_at (--savepoint-at)", self.stop_at, 1)
            if self.savepoint_dir is None:
                raise SkewlabInputError("stop-with-savepoint needs a savepoint_dir to write into")
        if self.checkpoint_interval is not None:
            check_whole("checkpoint_interval (--checkpoint-interval)", self.checkpoint_interval, 1)
            if self.checkpoint_dir is None:
                raise SkewlabInputError("periodic checkpoints need a checkpoint_dir")
        if self.fail_at is not None:
            check_whole("fail_at (--fail-at)", self.fail_at, 0)
        check_choice("in_flight (--in-flight)", self.in_flight, IN_FLIGHT_POLICIES)

    @property
    def stops(self) -> bool:
        """Whether the job stops with a savepoint."""
        return self.stop_at is not None

    @property
    def checkpoints(self) -> bool:
        """Whether the source stage takes periodic checkpoints."""
        return self.checkpoint_interval is not None
