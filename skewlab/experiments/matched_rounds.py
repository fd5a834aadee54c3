"""Rounds over several inputs, interleaved and matched in time: every input's rounds spread over
the whole measurement, and a side whose job is short runs more of them.

Two noises move a Spark job's time on a shared machine. One is per run (the scheduler, the
Python worker, the garbage collector) and does not shrink with the job: a side whose job lasts a
fraction of a second spreads over its rounds by a quarter of its time or more, where a side
whose job lasts seconds spreads by a few per cent. The other is the machine's own speed, which
drifts over minutes (a neighbour on the host): once, every remedy measured on one workload in
the same three minutes came out 1.3 to 1.4 times slower than on the same views an hour before,
all alike. Rounds run workload after workload put a whole workload inside such a window; here
each round runs every input in turn (:func:`measure_interleaved`), so that a slow window
touches a few rounds of every input and the median over the rounds passes it by.

Every side first runs ``rounds`` rounds on every input, after one unmeasured warm-up round on
each (:data:`~skewlab.experiments.rounds.WARM_ROUNDS`); then, per input, each side whose median
round (both sizes) took less than the slowest side's runs further rounds, up to

    min(max_rounds, ceil(rounds * slowest / its own))

rounds in all (:func:`rounds_matched`). The plan is fixed by the first rounds' times alone,
before any figure is compared with anything: a side is never run until it agrees. Each round
runs a side over the input's two sizes, the smaller first in even rounds and the larger first
in odd ones, as :func:`~skewlab.experiments.rounds.measure_rounds` does.

Example::

    >>> inputs = {"20 keys": SlopeInput(spark, ViewSpec(100_000, 25_000, 20, seed=1))}  # doctest: +SKIP
    >>> runs = list(measure_interleaved(spark, compared, job, inputs, 5, max_rounds=20))  # doctest: +SKIP
    >>> max(run.round for name, run in runs if run.side == "sorted") + 1          # doctest: +SKIP
    20
"""  # noqa: E501

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator, Mapping
from typing import Any

from skewlab.engine.config import JobConfig
from skewlab.experiments.rounds import WARM_ROUNDS, SlopeInput, SlopeRun, measure_rounds
from skewlab.strategies import run_strategy

__all__ = ["measure_interleaved", "rounds_matched"]


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


def _slope_run(
    spark, side: str, strategy, job: JobConfig, views: SlopeInput, number: int, bar, label: str
):
    """One side's round ``number`` over both sizes (the smaller first in even rounds)."""
    sizes = ("small", "large") if number % 2 == 0 else ("large", "small")
    results = {}
    for which in sizes:
        if bar is not None:
            bar.set_postfix_str(f"{label}, {side}, round {number + 1}, {which}")
        results[which], _ = run_strategy(views.views[which], strategy, job, spark)
        if bar is not None:
            bar.update()
    small, large = results["small"], results["large"]
    matches = (
        small.result_digest == views.references["small"]
        and large.result_digest == views.references["large"]
    )
    return SlopeRun(side, number, small, large, matches)


def measure_interleaved(
    spark,
    compared: Mapping[str, Any],
    job: JobConfig,
    inputs: Mapping[str, SlopeInput],
    rounds: int,
    *,
    max_rounds: int | None = None,
    bar=None,
    warm_rounds: int = WARM_ROUNDS,
) -> Iterator[tuple[str, SlopeRun]]:
    """Every side (``name -> strategy``) over every input (``name -> SlopeInput``) in
    interleaved rounds, ``rounds`` each and then each input's further rounds by
    :func:`rounds_matched` (``max_rounds`` ``None``: none); ``(input name, SlopeRun)`` per side,
    input and round as they finish. ``bar`` (a tqdm bar) advances twice a side and round (and
    once a side and warm-up round) and grows by the further rounds when they are planned."""
    for name, views in inputs.items():  # each new view set's unmeasured rounds
        if bar is not None:
            bar.set_postfix_str(f"{name}, warm-up round")
        for _ in measure_rounds(spark, compared, job, views, 0, warm_rounds=warm_rounds):
            pass
        if bar is not None:
            bar.update(len(compared) * warm_rounds)
    seconds: dict[str, dict[str, list[float]]] = {name: {} for name in inputs}
    for number in range(rounds):
        for name, views in inputs.items():
            for side, strategy in compared.items():
                run = _slope_run(spark, side, strategy, job, views, number, bar, name)
                seconds[name].setdefault(side, []).append(
                    run.small.wall_seconds + run.large.wall_seconds
                )
                yield name, run
    if max_rounds is None or max_rounds <= rounds:
        return
    plans = {
        name: rounds_matched(
            {side: statistics.median(t) for side, t in by_side.items()}, rounds, max_rounds
        )
        for name, by_side in seconds.items()
    }
    if bar is not None:
        bar.total += 2 * sum(n - rounds for plan in plans.values() for n in plan.values())
        bar.refresh()
    for number in range(rounds, max_rounds):
        for name, views in inputs.items():
            for side, strategy in compared.items():
                if number < plans[name][side]:
                    yield name, _slope_run(spark, side, strategy, job, views, number, bar, name)
