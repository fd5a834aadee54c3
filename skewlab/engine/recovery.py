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
                           into ``checkpoint_dir/run-<run_id>``; a retried attempt restores the
                           latest one of its own run and replays from its position
``run_id``                 set by the engine when a job starts (:meth:`Recovery.for_run`), one per
                           run: a run reads only its own checkpoints, so a reused
                           ``checkpoint_dir`` never restores another run's (they are left there,
                           never read, never deleted)
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

import uuid
from dataclasses import dataclass, replace

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
    run_id: str | None = None

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

    def for_run(self) -> Recovery:
        """These settings for one new run: a fresh :attr:`run_id` (the engine calls it when a
        job starts; every attempt of the job's tasks then shares it).

        Example::

            >>> r = Recovery(checkpoint_interval=100, checkpoint_dir="/tmp/chk")
            >>> a, b = r.for_run(), r.for_run()
            >>> a.run_id != b.run_id and a.checkpoint_dir == b.checkpoint_dir
            True
        """
        return replace(self, run_id=uuid.uuid4().hex[:12])

    def run_checkpoint_dir(self) -> str:
        """Where this run's checkpoints go: ``checkpoint_dir/run-<run_id>``."""
        if self.checkpoint_dir is None or self.run_id is None:
            raise RuntimeError("checkpoints need a checkpoint_dir and a run id (Recovery.for_run)")
        return f"{self.checkpoint_dir.rstrip('/')}/run-{self.run_id}"

    @property
    def stops(self) -> bool:
        """Whether the job stops with a savepoint."""
        return self.stop_at is not None

    @property
    def checkpoints(self) -> bool:
        """Whether the source stage takes periodic checkpoints."""
        return self.checkpoint_interval is not None
