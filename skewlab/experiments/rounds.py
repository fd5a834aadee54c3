"""Every side of a comparison run in rounds on the same input, warm-up first; a record's job
cost measured by the slope over two input sizes, so that fixed costs cancel.

A Spark job's time is a fixed part (scheduling, the Python worker, routing set-up, the collect)
plus a part per record. Throughput over the whole job mixes the two, and subtracting an estimate
of the fixed part (the same job over no views) does not cancel it: that estimate varies from
job to job by as much as a short job's whole time, and a job shorter than it gets an inflated
rate or none. Here each side runs over the **same view set at two sizes** in every round --
``N / 4`` and ``N`` views, :data:`SLOPE_FRACTION` -- and its per-record job cost is the slope

    (t(N) - t(N / 4)) / (N - N / 4)

in which the fixed part appears on both sides and cancels exactly (and the operators' time,
taken the same way, cancels any per-subtask set-up the operators pay). Throughput is one over
that cost; the seed's measure (job throughput, job time) is read from it. Rounds alternate the
order of the two sizes, so that a machine slowly warming or cooling does not favour one.

Before the rounds every side runs once over a few views (:func:`warm_up`: workers started, code
paths loaded) and, over each new view set, one unmeasured round at both sizes
(:data:`WARM_ROUNDS`); each round then runs every side, one after the other, over both sizes.

Example::

    >>> compared = {"naive": Naive(), "buffered": Buffered()}                  # doctest: +SKIP
    >>> with SlopeInput(spark, ViewSpec(100_000, 25_000, 20, seed=1)) as views:  # doctest: +SKIP
    ...     warm_up(spark, compared, job, n_users=25_000)
    ...     runs = measure_rounds(spark, compared, job, views, rounds=3)
    >>> [round(r.job_records_per_second) for r in runs]                        # doctest: +SKIP
    [24100, 812000, 23900, 790000, 24500, 805000]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import RunResult
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import run_strategy

__all__ = [
    "SLOPE_FRACTION",
    "WARM_ROUNDS",
    "WARM_UP_VIEWS",
    "SlopeInput",
    "SlopeRun",
    "measure_rounds",
    "slope_fields",
    "warm_up",
]

#: The smaller input of a slope is this fraction of the larger (the measured size).
SLOPE_FRACTION = 4
#: Views of the warm-up run of every side before the first round.
WARM_UP_VIEWS = 2_000
#: Unmeasured rounds over a new view set before the measured ones: a side's first runs over
#: new views were seen 0.68 s where the next took 0.45, 0.38, 0.36 s (naive, N / 4 views).
WARM_ROUNDS = 1


class SlopeInput:
    """A view set at two sizes, cached: ``small`` (``n_views // SLOPE_FRACTION`` views) and
    ``large`` (``spec``'s own), each with its Spark SQL reference digest. A context manager
    (the cached views are dropped on exit).

    Example::

        >>> with SlopeInput(spark, ViewSpec(20_000, 5_000, 20, seed=1)) as views:  # doctest: +SKIP
        ...     views.n_small, views.n_large
        (5000, 20000)
    """

    def __init__(self, spark, spec: ViewSpec, fraction: int = SLOPE_FRACTION) -> None:
        small_spec = ViewSpec(
            spec.n_views // fraction, spec.n_users, spec.n_tweets, spec.distribution,
            spec.skew, spec.seed, spec.events_per_second,
        )  # fmt: skip
        self.spec = spec
        self.views: dict[str, Any] = {}
        self.references: dict[str, str] = {}
        for which, s in (("small", small_spec), ("large", spec)):
            views = generate_views(spark, s).cache()
            views.count()
            self.views[which] = views
            self.references[which] = result_digest(spark_reference_aggregate(views))
        self.n_small, self.n_large = small_spec.n_views, spec.n_views

    @property
    def large(self):
        return self.views["large"]

    def close(self) -> None:
        for views in self.views.values():
            views.unpersist()

    def __enter__(self) -> SlopeInput:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class SlopeRun:
    """One side's round: its runs over the small and the large input, and what they give."""

    side: str
    round: int
    small: RunResult
    large: RunResult
    digests_match: bool
    #: the large run's results per key (kept only when asked: ``keep_states=True``)
    states: dict[str, Any] | None = None

    @property
    def records(self) -> int:
        """The records the slope is taken over: large less small."""
        return self.large.records_processed - self.small.records_processed

    @property
    def job_seconds_per_record(self) -> float | None:
        """The job's cost per record, fixed costs cancelled (``None``: no records between the
        two sizes)."""
        if self.records <= 0:
            return None
        return (self.large.wall_seconds - self.small.wall_seconds) / self.records

    @property
    def job_records_per_second(self) -> float | None:
        """Job throughput, one over the per-record cost (``None`` where the slope is not
        positive: the two sizes' times within their noise)."""
        cost = self.job_seconds_per_record
        return 1.0 / cost if cost and cost > 0 else None

    @property
    def operator_seconds_per_record(self) -> float | None:
        """The operators' time per record, taken the same way (their set-up cancelled)."""
        if self.records <= 0:
            return None
        return (self.large.operator_seconds - self.small.operator_seconds) / self.records

    @property
    def operator_records_per_second(self) -> float | None:
        cost = self.operator_seconds_per_record
        return 1.0 / cost if cost and cost > 0 else None

    @property
    def job_seconds_by_slope(self) -> float | None:
        """The large run's job time without its fixed part: per-record cost times records."""
        cost = self.job_seconds_per_record
        return None if cost is None else cost * self.large.records_processed


def slope_fields(run: SlopeRun) -> dict[str, Any]:
    """The row fields every slope-measured benchmark writes for one side's round: both runs'
    sizes and times, the per-record costs and throughputs (job and operators), the large run's
    throughput over its whole job time (``e2e_records_per_second``, fixed costs included) and
    whether both runs' digests equal Spark SQL's.

    Example::

        >>> sorted(slope_fields(run))[:3]                                     # doctest: +SKIP
        ['digest_matches_reference', 'e2e_records_per_second', 'job_records_per_second']
    """
    return {
        "run": run.round,
        "records_small": run.small.records_processed,
        "records_large": run.large.records_processed,
        "job_seconds_small": run.small.wall_seconds,
        "job_seconds_large": run.large.wall_seconds,
        "job_seconds_per_record": run.job_seconds_per_record,
        "job_records_per_second": run.job_records_per_second,
        "job_seconds_by_slope": run.job_seconds_by_slope,
        "operator_seconds_per_record": run.operator_seconds_per_record,
        "operator_records_per_second": run.operator_records_per_second,
        "e2e_records_per_second": run.large.e2e_records_per_second,
        "digest_matches_reference": run.digests_match,
    }


def warm_up(
    spark,
    compared: Mapping[str, Any],
    job: JobConfig,
    *,
    n_users: int,
    seed: int = 1,
    views=None,
    bar=None,
) -> None:
    """One unmeasured run of every side (``name -> strategy``) over ``views``, default
    :data:`WARM_UP_VIEWS` views over 20 tweets (``bar``: a tqdm bar, advanced once a side)."""
    if views is None:
        views = generate_views(spark, ViewSpec(WARM_UP_VIEWS, n_users, 20, seed=seed))
    for name, strategy in compared.items():
        if bar is not None:
            bar.set_postfix_str(f"warm-up, {name}")
        run_strategy(views, strategy, job, spark)
        if bar is not None:
            bar.update()


def measure_rounds(
    spark,
    compared: Mapping[str, Any],
    job: JobConfig,
    views: SlopeInput,
    rounds: int,
    *,
    bar=None,
    label: str = "",
    keep_states: bool = False,
    warm_rounds: int = WARM_ROUNDS,
) -> Iterator[SlopeRun]:
    """``rounds`` rounds of every side (``name -> strategy``) over ``views`` at both sizes, one
    :class:`SlopeRun` per side and round, as they finish (``bar`` advances twice a side and
    round; ``label`` prefixes its postfix), after ``warm_rounds`` unmeasured ones (the first
    runs over a new view set are slower, and a slope whose small run pays that alone comes out
    low). Even rounds run the small input first, odd rounds the large."""
    for _ in range(warm_rounds):
        for name, strategy in compared.items():
            if bar is not None:
                bar.set_postfix_str(f"{label}{name}, warm-up round")
            for which in ("small", "large"):
                run_strategy(views.views[which], strategy, job, spark)
    order = ("small", "large")
    for number in range(rounds):
        sizes = order if number % 2 == 0 else order[::-1]
        for name, strategy in compared.items():
            results: dict[str, tuple[RunResult, Any]] = {}
            for which in sizes:
                if bar is not None:
                    bar.set_postfix_str(f"{label}{name}, round {number + 1}, {which}")
                results[which] = run_strategy(views.views[which], strategy, job, spark)
                if bar is not None:
                    bar.update()
            small, large = results["small"][0], results["large"][0]
            yield SlopeRun(
                name,
                number,
                small,
                large,
                small.result_digest == views.references["small"]
                and large.result_digest == views.references["large"],
                results["large"][1] if keep_states else None,
            )
