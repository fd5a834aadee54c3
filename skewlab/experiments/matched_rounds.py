"""Rounds matched in time: a side whose job is short runs more rounds, so that every side's
median rests on about as many seconds of runs as the slowest side's.

A Spark job's time varies from run to run by a part that does not shrink with the job (the
scheduler, the Python worker, the garbage collector): a side whose job lasts a fraction of a
second spreads over its rounds by as much as a quarter of its time or more, where a side whose
job lasts seconds spreads by a few per cent. With the same number of rounds each, the fast
sides' intervals are several times wider than the slow sides', and a check that needs every
side's interval narrow concludes nothing on them. Here every side first runs ``rounds`` rounds
(:func:`~skewlab.experiments.rounds.measure_rounds`, warm-up included); then each side whose
median round (both sizes) took less than the slowest side's runs further rounds, up to

    min(max_rounds, ceil(rounds * slowest / its own))

rounds in all. The plan is fixed by the first rounds' times alone, before any figure is compared
with anything: a side is never run until it agrees.

Example::

    >>> with SlopeInput(spark, ViewSpec(100_000, 25_000, 20, seed=1)) as views:  # doctest: +SKIP
    ...     runs = list(measure_matched_rounds(spark, compared, job, views, 5, max_rounds=20))
    >>> max(r.round for r in runs if r.side == "sorted") + 1                    # doctest: +SKIP
    20
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterator, Mapping
from typing import Any

from skewlab.engine.config import JobConfig
from skewlab.experiments.rounds import SlopeInput, SlopeRun, measure_rounds

__all__ = ["measure_matched_rounds", "rounds_matched"]


def rounds_matched(seconds: Mapping[str, float], rounds: int, max_rounds: int) -> dict[str, int]:
    """Each side's rounds in all, given its median round's time (``seconds``): ``rounds`` for
    the slowest side, more for a faster one in proportion, at most ``max_rounds``.

    Example::

        >>> rounds_matched({"salted": 6.0, "naive": 3.0, "sorted": 0.5}, 5, 20)
        {'salted': 5, 'naive': 10, 'sorted': 20}
    """
    if max_rounds < rounds:
        raise ValueError(f"max_rounds ({max_rounds}) is fewer than rounds ({rounds})")
    slowest = max(seconds.values(), default=0.0)
    return {
        side: rounds if t <= 0 else min(max_rounds, max(rounds, math.ceil(rounds * slowest / t)))
        for side, t in seconds.items()
    }


def measure_matched_rounds(
    spark,
    compared: Mapping[str, Any],
    job: JobConfig,
    views: SlopeInput,
    rounds: int,
    *,
    max_rounds: int | None = None,
    bar=None,
    label: str = "",
) -> Iterator[SlopeRun]:
    """``rounds`` rounds of every side, then each side's further rounds by
    :func:`rounds_matched` (``max_rounds`` ``None``: none), numbered on from ``rounds``; one
    :class:`~skewlab.experiments.rounds.SlopeRun` per side and round as they finish. ``bar``
    (a tqdm bar) grows by the further rounds' runs when they are planned."""
    seconds: dict[str, list[float]] = {side: [] for side in compared}
    for run in measure_rounds(spark, compared, job, views, rounds, bar=bar, label=label):
        seconds[run.side].append(run.small.wall_seconds + run.large.wall_seconds)
        yield run
    if max_rounds is None or max_rounds <= rounds:
        return
    plan = rounds_matched(
        {side: statistics.median(t) for side, t in seconds.items()}, rounds, max_rounds
    )
    further = {side: n - rounds for side, n in plan.items() if n > rounds}
    if bar is not None:
        bar.total += 2 * sum(further.values())
        bar.refresh()
    # the sides with further rounds run them side by side, each dropping out when done
    done = 0
    for extra in sorted(set(further.values())):
        sides = {side: compared[side] for side, n in further.items() if n >= extra}
        for run in measure_rounds(
            spark, sides, job, views, extra - done, bar=bar, label=label, warm_rounds=0
        ):
            yield dataclasses.replace(run, round=rounds + done + run.round)
        done = extra
