"""A job's start-up: the time a run over no views takes, sampled beside the measured runs.

The view benchmarks' headline is job throughput **net of start-up**: records over the job's
wall time less the job's fixed cost (scheduling, the Python worker, routing set-up, the
collect), taken as the job time of the same strategy over no views. The JVM warms through a
benchmark -- its first jobs are slower -- so a start-up taken once at the beginning is a colder
job's. On the two-core machine (2026-11-26) the buffering benchmark's empty naive runs took a
median 0.17 s at its start and 0.10 s when the same benchmark ran again in the same process,
while its buffer's whole run at 20 keys takes about 0.2 s; subtracted from every run, the cold
start-up left the buffer a net time shorter than its own operator time.

So one empty run of a side is taken **right before each measured run of that side**, and the
side's start-up is the median of all of them: sampled at the same warmth as the runs it is
subtracted from, and as often. A run shorter than the start-up has no net throughput
(:func:`net_rate` gives ``None``; the benchmarks say so rather than guess).

Example::

    >>> startup = StartUp(spark, {"naive": Naive()}, JobConfig(parallelism=1), n_users=1_000)
    ...                                                                   # doctest: +SKIP
    >>> startup.warm_up()                                                 # doctest: +SKIP
    >>> for run in range(3):                                              # doctest: +SKIP
    ...     startup.sample("naive")
    ...     result, _ = run_strategy(views, Naive(), job, spark)
    >>> startup.seconds()                                                 # doctest: +SKIP
    {'naive': 0.1}
"""

from __future__ import annotations

from typing import Any

from skewlab.engine.config import JobConfig
from skewlab.experiments.results import spread
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import run_strategy

__all__ = ["StartUp", "net_rate"]

#: Views of the warm-up run before a side's first empty run (workers started, code loaded).
WARM_UP_VIEWS = 2_000


class StartUp:
    """Empty runs of each compared side (``name -> strategy``), taken when :meth:`sample` is
    called; :meth:`seconds` is each side's median."""

    def __init__(
        self, spark, compared: dict[str, Any], job: JobConfig, n_users: int, seed: int = 1
    ) -> None:
        self._spark, self._compared, self._job = spark, compared, job
        self._n_users, self._seed = n_users, seed
        # cached like the measured views, so the empty run reads the same kind of plan
        self._empty = generate_views(spark, ViewSpec(0, n_users, 20, seed=seed)).cache()
        self._empty.count()
        self._seconds: dict[str, list[float]] = {name: [] for name in compared}

    def warm_up(self, bar=None) -> None:
        """One unmeasured run of every side over a few views (``bar``: a tqdm bar, advanced
        once per side)."""
        spec = ViewSpec(WARM_UP_VIEWS, self._n_users, 20, seed=self._seed)
        warm = generate_views(self._spark, spec)
        for name, strategy in self._compared.items():
            if bar is not None:
                bar.set_postfix_str(f"warm-up, {name}")
            run_strategy(warm, strategy, self._job, self._spark)
            if bar is not None:
                bar.update()

    def sample(self, name: str) -> float:
        """One empty run of side ``name``; its job time (also kept for :meth:`seconds`)."""
        if name not in self._seconds:
            raise KeyError(f"no side {name!r} to start; sides: {', '.join(self._seconds)}")
        result, _ = run_strategy(self._empty, self._compared[name], self._job, self._spark)
        if result.records_in:  # the start-up is the fixed cost only of a run over nothing
            raise RuntimeError(f"an empty run of {name} read {result.records_in} records")
        self._seconds[name].append(result.wall_seconds)
        return result.wall_seconds

    def seconds(self) -> dict[str, float]:
        """Each side's start-up: the median of its empty runs so far."""
        missing = [name for name, taken in self._seconds.items() if not taken]
        if missing:
            raise RuntimeError(f"no empty run of {', '.join(missing)} yet: sample() first")
        return {name: spread(taken)["median"] for name, taken in self._seconds.items()}

    def samples(self) -> dict[str, list[float]]:
        """Each side's empty runs' job times, in the order taken."""
        return {name: list(taken) for name, taken in self._seconds.items()}

    def close(self) -> None:
        """Drop the cached empty view set."""
        self._empty.unpersist()


def net_rate(records: int, job_seconds: float, startup_seconds: float) -> float | None:
    """Records per second of the job's time net of start-up; ``None`` when the job was not
    longer than its start-up (too short to measure this way).

    Example::

        >>> net_rate(1_000, 0.6, 0.1)
        2000.0
        >>> net_rate(1_000, 0.1, 0.1) is None
        True
    """
    net = job_seconds - startup_seconds
    return records / net if net > 0 else None
