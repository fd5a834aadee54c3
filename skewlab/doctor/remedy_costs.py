"""What each remedy costs per record on this machine: the cost profile the skew doctor prices a
user's keys with.

Every remedy the doctor weighs -- the naive keyed reduce on the heap and on RocksDB, the buffer,
the LRU cache over RocksDB, salting, sorted input -- runs as skewlab runs it (seed 000's view
count: per tweet, two HLL sketches) over uniform view sets whose cardinality sets how many records
each key has (100,000 views over 20,000 tweets: 5 per key; over 20 tweets: 5,000), at the
doctor's parallelism, in ``runs`` rounds after one unmeasured run of every remedy
(:mod:`skewlab.experiments.rounds`), each round over every view set in turn and, at the full
size, more rounds for a remedy whose job is short (:mod:`skewlab.experiments.matched_rounds`:
a slow minute of the machine touches every density alike, and every remedy's median rests on
about as many seconds of runs); each run's digest is checked against Spark SQL's. The
measure is the seed's own, **job time**, with its fixed part (Spark's job start, the Python
worker, the collect) cancelled rather than estimated: every round runs each remedy over the same
views at two sizes (a quarter of the views, then all of them) and the job's cost per record is
the slope between the two; ``job_seconds_by_slope`` is that cost times the records of the
larger run, the job's time without its fixed part. One view set more runs with only the keys
Flink's key groups route to subtask 0 (:data:`ALONE`: the other core idle), where the job is the
busiest subtask's chain alone. Every run's operator time is read per subtask (the operators' own
timers) and taken by the same slope. The profile derived from the runs
(``summary["cost_profile"]``):

==============  ============================================================================
``per_record_us``  per remedy and density (records per key): job time by slope over the
                busiest subtask's records, in us -- everything a record costs the job (Spark's
                source, key group, shuffle, Arrow, the operator, the emission, the collect) on
                the subtask that decides the job's time
``operator_us``  per remedy and density: the operator's own time per record of the busiest
                subtask, in us -- what the doctor prices each subtask's records with: a
                record's cost at that density, its key's own share included (solved from
                both sizes' keys, as the slope prices them: :func:`busiest_density_by_slope`)
``spark_side``  per remedy (salting's keyed stage has naive RocksDB's): Spark's side of the
                job apart from the operators, in us -- per record of the job, per record of
                the busiest subtask running alone, per key's result collected (its state;
                a buffer's partials are merged into it inside the operator)
                (:func:`spark_side`, the form of :func:`~skewlab.doctor.catalog.job_seconds`)
``miss_us``     the cache's extra job time per miss over the heap (a RocksDB read, an
                eviction's write-back), fitted through the origin over the cardinalities;
                ``operator_miss_us`` the same of the operators' time
``buffer``      the buffer's job time per record (``per_record_us``) and its operator's
                (``operator_per_record_us``) by records folded per flushed key
``salted_stage_one_us``  per density: salting's first stage per record on its busiest subtask
                (salted job time minus naive RocksDB's, whose reduce is salting's final stage)
``latency_p99_ms``  per remedy and density: the runs' per-record operator latency p99
``job_rounds``  per remedy and density: each round's job time by slope over the rounds'
                median -- how far the profile's own rounds leave its figure, whose bootstrap
                every prediction made from it carries
==============  ============================================================================

These are the costs of *skewlab's* aggregate (an HLL pair per key, precision 10): a user's own
aggregate costs what it costs; the doctor says so beside every figure it prices with them.

Example::

    >>> result = run_experiment("tiny", progress=False)                       # doctest: +SKIP
    >>> sorted(result.summary["cost_profile"]["per_record_us"])               # doctest: +SKIP
    ['buffered', 'cached', 'naive_heap', 'naive_rocksdb', 'salted', 'sorted']
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Collection, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from skewlab.doctor.catalog import (
    CATALOG,
    HELD_BELOW,
    SPREAD_BELOW,
    TRIGGER_INTERVAL_MS,
    Remedy,
    by_name,
    density_weights,
    job_seconds,
    strategies,
)
from skewlab.doctor.subtask_replay import (
    DEFAULT_BUFFER_MAX_COUNT,
    DEFAULT_CACHE_ENTRIES,
    bucket_records_per_key,
    replay_by_slope,
    replay_subtasks,
)
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import median_estimate
from skewlab.experiments.matched_rounds import measure_interleaved
from skewlab.experiments.results import BenchResult, latest_result
from skewlab.experiments.rounds import (
    SLOPE_FRACTION,
    WARM_ROUNDS,
    SlopeInput,
    slope_fields,
    warm_up,
)
from skewlab.inputs.views import ViewSpec
from skewlab.validation import check_whole

__all__ = [
    "ALONE",
    "BALANCED",
    "EXPERIMENT",
    "HEADLINES",
    "MEASURE",
    "NoCostPerRecord",
    "SIZES",
    "SubtaskSlopeInput",
    "alone_spec",
    "busiest_density_by_slope",
    "cost_profile",
    "form_on_view_sets",
    "hold",
    "load_cost_profile",
    "new_keys_by_slope",
    "replays_by_slope",
    "run_experiment",
    "spark_side",
    "view_sets",
]

EXPERIMENT = "remedy_costs"
#: The rows' operator times by slope: the busiest subtask's, and all the last stage's.
OPERATOR = "busiest_operator_seconds"
OPERATOR_ALL = "operator_seconds_by_slope"
#: What the profile's job times are: the per-record cost by slope times the larger run's records.
MEASURE = "job_seconds_by_slope"
#: A cost profile has no headline ratio (it is what the doctor's predictions are made of).
HEADLINES: dict[str, float | None] = {}
#: The sizes of a profile measured here, in the order the doctor prefers them.
SIZES_PREFERRED = ("full", "quick", "tiny")


#: The view sets a profile runs: each cardinality's views as generated (every subtask busy)...
BALANCED = "balanced"
#: ... and one cardinality's views with only the keys subtask 0 holds (the others idle), where
#: the job is the busiest subtask's chain alone: what Spark's side costs a record there.
ALONE = "subtask 0 alone"
#: The cardinality whose views run alone: few keys, none new between the two sizes.
ALONE_CARDINALITY = 200
#: A slope input's two sizes, smaller first.
SIZES = ("small", "large")


def hold(views: SlopeInput, which: str, records) -> int:
    """Cache ``records`` in ``views`` as size ``which`` (one of :data:`SIZES`) with their Spark
    SQL reference digest, as :class:`~skewlab.experiments.rounds.SlopeInput` holds its own;
    their count."""
    from skewlab.aggregates.digest import result_digest
    from skewlab.aggregates.reference import spark_reference_aggregate

    records = records.cache()
    count = records.count()
    views.views[which] = records
    views.references[which] = result_digest(spark_reference_aggregate(records))
    return count


class SubtaskSlopeInput(SlopeInput):
    """``spec``'s views at the slope's two sizes with only the records whose keys Flink's key
    groups route to ``subtask`` of ``parallelism`` (:func:`~skewlab.engine.routing.
    with_key_groups`), cached with their Spark SQL reference digests, as
    :class:`~skewlab.experiments.rounds.SlopeInput` holds the whole views.

    Example::

        >>> with SubtaskSlopeInput(spark, ViewSpec(20_000, 5_000, 200), 2) as views:
        ...     views.n_large < 20_000                                      # doctest: +SKIP
        True
    """

    def __init__(self, spark, spec: ViewSpec, parallelism: int, subtask: int = 0) -> None:
        from pyspark.sql import functions as F

        from skewlab.engine.routing import KEY_GROUP, OPERATOR, with_key_groups
        from skewlab.inputs.views import generate_views

        max_p = JobConfig(parallelism=parallelism).resolved(parallelism).max_parallelism
        self.spec = spec
        self.views, self.references, counts = {}, {}, {}
        small = dataclasses.replace(spec, n_views=spec.n_views // SLOPE_FRACTION)
        for which, s in zip(SIZES, (small, spec), strict=True):
            routed = with_key_groups(generate_views(spark, s), "tweet_id", max_p, parallelism)
            views = routed.where(F.col(OPERATOR) == subtask).drop(OPERATOR, KEY_GROUP)
            counts[which] = hold(self, which, views)
        self.n_small, self.n_large = counts["small"], counts["large"]


class NoCostPerRecord(RuntimeError):
    """A remedy's job took no longer over all the views than over a quarter of them: the two
    sizes' times within their noise, so the runs give it no cost per record to price with."""


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    cardinalities: Sequence[int] | None = None,
    n_views: int | None = None,
    parallelism: int | None = None,
    seed: int = 7,
    progress: bool = True,
    spark=None,
    catalog: tuple[Remedy, ...] = CATALOG,
) -> BenchResult:
    """Measure every remedy's costs (each of ``catalog``'s); see the module doc. Writes nothing
    (the CLI does).

    ``seed`` 7: the doctor's validation (:mod:`skewlab.doctor.remedy_check`) uses other
    views (seed 1), so no prediction is checked against the runs it was priced from.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    cards = tuple(
        check_whole("cardinality", k, 1) for k in (cardinalities or settings["cardinalities"])
    )
    n_views = check_whole("views", settings["n_views"] if n_views is None else n_views, 1)
    n_users = settings["n_users"]
    p = check_whole(
        "parallelism", settings["parallelism"] if parallelism is None else parallelism, 1
    )
    job = JobConfig(parallelism=p)
    compared = strategies(p, DEFAULT_CACHE_ENTRIES, catalog)
    specs = [ViewSpec(n_views, n_users, k, seed=seed) for k in cards]
    alone = alone_spec(n_views, n_users, cards, seed)

    spark = spark or get_spark()
    bar = tqdm(
        total=len(compared) * (1 + n_view_sets(specs) * (WARM_ROUNDS + 2 * runs)),
        desc=EXPERIMENT,
        disable=not progress,
    )
    warm_up(spark, compared, job, n_users=n_users, seed=seed, bar=bar)
    rows: list[dict] = []
    densities: dict[str, dict] = {}
    with ExitStack() as stack:
        inputs, sets = view_sets(spark, stack, specs, alone, p)
        new_keys = {name: new_keys_by_slope(views) for name, views in inputs.items()}
        for name, views in inputs.items():
            if sets[name][1] == BALANCED:
                densities[str(sets[name][0].n_tweets)] = busiest_density_by_slope(views, p)
        for name, run in measure_interleaved(
            spark, compared, job, inputs, runs, max_rounds=settings.get("max_rounds"), bar=bar
        ):
            rows.append(_row(run, sets[name][0], new_keys[name], sets[name][1]))
    bar.close()
    summary = summarize(rows, densities, catalog)
    summary.update(parallelism=p, n_views=n_views, seed=seed)
    return BenchResult(EXPERIMENT, size, rows, summary)


def replays_by_slope(views: SlopeInput, parallelism: int, **options) -> tuple[dict, dict]:
    """Both sizes' replays (:func:`~skewlab.doctor.subtask_replay.replay_subtasks` with
    ``options``): the larger run's, and the slope's -- the larger's less the smaller's, scaled
    as the slope (:func:`~skewlab.doctor.subtask_replay.replay_by_slope`).

    Example::

        >>> with SlopeInput(spark, ViewSpec(20_000, 5_000, 200)) as views:     # doctest: +SKIP
        ...     large, slope = replays_by_slope(views, 2)
        >>> slope["records"] == large["records"]                                # doctest: +SKIP
        True
    """
    small, large = (
        replay_subtasks(views.views[w], "tweet_id", parallelism=parallelism, **options)
        for w in SIZES
    )
    return large, replay_by_slope(small, large, views.n_small, views.n_large)


def busiest_density_by_slope(views: SlopeInput, parallelism: int) -> dict[int, dict]:
    """The busiest subtask's keys by density as a job time by slope prices them
    (:func:`replays_by_slope`); the busiest subtask is the larger run's, the one whose operator
    time the rows take.

    Example::

        >>> with SlopeInput(spark, ViewSpec(20_000, 5_000, 200)) as views:     # doctest: +SKIP
        ...     density = busiest_density_by_slope(views, 2)
        >>> sum(d["records"] for d in density.values()) < views.n_large         # doctest: +SKIP
        True
    """
    _, replay = replays_by_slope(views, parallelism)
    return max(replay["subtasks"], key=lambda s: s["records"])["density"]


def alone_spec(n_views: int, n_users: int, cardinalities: Sequence[int], seed: int) -> ViewSpec:
    """The view set a profile runs with subtask 0's keys alone: :data:`ALONE_CARDINALITY` keys
    (no more than the profile's largest cardinality), as many views as the others.

    Example::

        >>> alone_spec(100_000, 25_000, (20, 200, 2_000, 20_000), 7).n_tweets
        200
    """
    return ViewSpec(n_views, n_users, min(ALONE_CARDINALITY, max(cardinalities)), seed=seed)


def n_view_sets(specs: Collection[ViewSpec]) -> int:
    """How many inputs :func:`view_sets` makes of ``specs``: each, and the one alone."""
    return len(specs) + 1


def view_sets(
    spark,
    stack: ExitStack,
    specs: Sequence[ViewSpec],
    alone: ViewSpec,
    parallelism: int,
    prefix: str = "",
) -> tuple[dict[str, SlopeInput], dict[str, tuple[ViewSpec, str]]]:
    """The profile's inputs, entered on ``stack``: each of ``specs`` as generated, and
    ``alone`` with subtask 0's keys only (:data:`ALONE`); by input name (``prefix`` before
    each), with each one's spec and view set."""
    inputs: dict[str, SlopeInput] = {}
    sets: dict[str, tuple[ViewSpec, str]] = {}
    for spec in specs:
        name = f"{prefix}{spec.n_tweets} keys"
        inputs[name] = stack.enter_context(SlopeInput(spark, spec))
        sets[name] = (spec, BALANCED)
    name = f"{prefix}{alone.n_tweets} keys, {ALONE}"
    inputs[name] = stack.enter_context(SubtaskSlopeInput(spark, alone, parallelism))
    sets[name] = (alone, ALONE)
    return inputs, sets


def _busiest(subtasks: list[dict], stage: str | None = None) -> dict[str, int]:
    """The subtask with the most records (of ``stage``, if given): its records and counts."""
    mine = [s for s in subtasks if stage is None or s["stage"] == stage]
    top = max(mine, key=lambda s: s["records"])
    return {"records": top["records"], "state_reads": top["state_reads"],
            "subtask": top["subtask"]}  # fmt: skip


def by_slope(run) -> float:
    """What scales a difference between the two sizes to the measure's units (as
    ``job_seconds_by_slope`` is the job's slope times the larger run's records): the larger
    run's records over the records between the sizes."""
    return run.large.records_processed / max(run.records, 1)


def operator_by_slope(run, stage: str, subtask: int | None = None) -> float:
    """The operators' time by slope on ``stage``: one subtask's (``subtask``) or all of them,
    large run less small, scaled as :func:`by_slope` (their set-up cancelled as the job's)."""

    def seconds(result) -> float:
        return sum(s["operator_seconds"] for s in result.subtasks
                   if s["stage"] == stage and subtask in (None, s["subtask"]))  # fmt: skip

    return (seconds(run.large) - seconds(run.small)) * by_slope(run)


def new_keys_by_slope(views: SlopeInput) -> float:
    """The keys the larger view set has beyond the smaller one's, scaled as :func:`by_slope`:
    what a result per key adds to a job time by slope (the keys both sizes share cancel)."""
    small, large = (views.views[w].select("tweet_id").distinct().count() for w in SIZES)
    return (large - small) * views.n_large / (views.n_large - views.n_small)


def _row(run, spec: ViewSpec, new_keys: float = 0.0, view_set: str = BALANCED) -> dict:
    """One remedy's round at one cardinality: the slope's fields (both sizes' job times, the
    per-record cost, both digests checked), the larger run's counts on its busiest subtask,
    the operators' time by slope (the busiest subtask's and all of them, of the last keyed
    stage), the keys new between the sizes (``new_keys``, by slope) and which of the view
    sets (``view_set``) it ran on."""
    result = run.large
    stages = sorted({s["stage"] for s in result.subtasks})
    busiest = _busiest(result.subtasks, stages[-1])
    first = _busiest(result.subtasks, stages[0])
    return {
        "experiment": EXPERIMENT,
        "remedy": run.side,
        "cardinality": spec.n_tweets,
        "records_per_key": spec.n_views / spec.n_tweets,
        "view_set": view_set,
        **slope_fields(run),
        OPERATOR: operator_by_slope(run, stages[-1], busiest["subtask"]),
        OPERATOR_ALL: operator_by_slope(run, stages[-1]),
        "new_keys": new_keys,
        "parallelism": result.parameters["parallelism"],
        "records_in": result.records_in,
        "records_out": result.records_out,
        "busiest_records": busiest["records"],
        # the cache's misses and the buffer's flushed keys are the state reads they make
        "busiest_state_reads": busiest["state_reads"],
        "stage_one_busiest_records": first["records"],
        "cache_misses": result.cache_misses,
        "buffer_flushes": result.buffer_flushes,
        "latency_p99_ms": result.latency_p99_ms,
    }


def _median(rows, remedy: str, card: int | None, field: str) -> float:
    """The median of ``field`` over ``remedy``'s rounds at ``card`` keys (None: every row)."""
    present = [
        r[field]
        for r in rows
        if r["remedy"] == remedy and card in (None, r["cardinality"]) and r[field] is not None
    ]
    value = statistics.median(present) if present else None
    if field == MEASURE and (value is None or value <= 0):
        where = f"{card:,} keys" if card is not None else "its view set"
        raise NoCostPerRecord(
            f"{remedy} at {where}: the job took no longer over all the views than over a "
            "quarter of them (the two sizes' times within their noise), so it has no cost per "
            "record; use more views (a larger --size)"
        )
    return value


def summarize(
    rows, densities: dict[str, dict] | None = None, catalog: tuple[Remedy, ...] = CATALOG
) -> dict[str, Any]:
    """The cost profile (see the module doc; ``None``, with ``cost_profile_error`` saying why,
    where a remedy's runs gave no cost per record: :class:`NoCostPerRecord`); per remedy and
    cardinality the median ``job_seconds_by_slope``
    (``summary["intervals"]["job_seconds_by_slope_<remedy>_<keys>"]``: its bootstrap interval
    over the rounds); ``rounds``: per remedy and cardinality, how many (a fast remedy runs
    more: :mod:`skewlab.experiments.matched_rounds`); ``runs``: the fewest of those;
    ``all_digests_match``; ``alone_set``: the same for the view set run with subtask 0's
    keys alone (:data:`ALONE`); ``form_on_view_sets``: how far the job-time form explains
    each view set (:func:`form_on_view_sets`)."""
    alone = [r for r in rows if r.get("view_set", BALANCED) == ALONE]
    balanced = [r for r in rows if r.get("view_set", BALANCED) == BALANCED]
    cards = sorted({r["cardinality"] for r in balanced})
    present = [r.name for r in catalog if any(row["remedy"] == r.name for row in rows)]
    intervals: dict[str, Any] = {}
    by_slope: dict[str, dict[str, float | None]] = {}
    rounds: dict[str, dict[str, int]] = {}
    for name in present:
        by_slope[name] = {}
        rounds[name] = {
            str(k): sum(r["remedy"] == name and r["cardinality"] == k for r in balanced)
            for k in cards
        }
        for k in cards:
            est = median_estimate(
                [r[MEASURE] for r in balanced if r["remedy"] == name and r["cardinality"] == k]
            )
            by_slope[name][str(k)] = None if est is None else est.value
            if est is not None:
                intervals[f"{MEASURE}_{name}_{k}"] = est.to_json()
        est = median_estimate([r[MEASURE] for r in alone if r["remedy"] == name])
        if est is not None:
            intervals[f"{MEASURE}_{name}_alone"] = est.to_json()
    try:
        profile, error = cost_profile(rows, densities, catalog), None
    except NoCostPerRecord as failed:
        profile, error = None, str(failed)
    checked = form_on_view_sets(rows, profile) if profile is not None else []
    return {
        "headline_measure": MEASURE,
        "runs": min((n for by_card in rounds.values() for n in by_card.values()), default=0),
        "rounds": rounds,
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "cost_profile": profile,
        "cost_profile_error": error,
        "densities": densities,
        MEASURE: by_slope,
        "alone_set": {
            "view_set": ALONE,
            "cardinality": alone[0]["cardinality"] if alone else None,
            MEASURE: {
                name: (intervals.get(f"{MEASURE}_{name}_alone") or {}).get("value")
                for name in present
            },
        },
        "intervals": intervals,
        "form_on_view_sets": checked,
    }


def _solve_per_record(
    records_per_key, seconds, histograms, rule: str = SPREAD_BELOW
) -> list[float] | None:
    """Per-record costs (us) at the profile's densities such that, priced over each view set's
    own busiest subtask (its records by density bucket, as the slope prices them:
    :func:`busiest_density_by_slope`) by the remedy's rule below the sparsest density
    (:func:`~skewlab.doctor.catalog.density_weights`), they give back its measured time; None
    when that has no non-negative answer. A spread per-key part that comes out negative (the
    sparsest density cheaper per record than the next) is solved again held, as
    :meth:`~skewlab.doctor.catalog.Pricing.cost_at` prices it."""
    weights = density_weights(rule)
    design = np.array([
        sum(d["records"] * weights(records_per_key, bucket_records_per_key(int(b)))
            for b, d in hist.items())
        for hist in histograms
    ])  # fmt: skip
    try:
        costs = np.linalg.solve(design, np.asarray(seconds) * 1e6)
    except np.linalg.LinAlgError:
        return None
    if rule == SPREAD_BELOW and len(costs) > 1 and costs[0] < costs[1]:
        return _solve_per_record(records_per_key, seconds, histograms, HELD_BELOW)
    return costs.tolist() if (costs > 0).all() else None


def cost_profile(
    rows, densities: dict[str, dict] | None = None, catalog: tuple[Remedy, ...] = CATALOG
) -> dict[str, Any]:
    """Per-record costs from the runs (see the module doc), medians over the rounds of each
    run's ``job_seconds_by_slope`` (the job's time without its fixed part). ``densities``:
    per cardinality, the busiest subtask's records by density bucket as the slope prices them
    (:func:`busiest_density_by_slope`: the larger run's less the smaller's); with them the
    per-record costs are solved so that pricing each view set's own records gives back its
    measured time (a uniform view set's keys are spread around their mean density, and a key
    both sizes hold costs the slope only its density's growth), so that each is a record's
    cost at that density, its key's own share included; without them they are each view
    set's time over its records.

    Example::

        >>> from skewlab.doctor.catalog import REMEDIES
        >>> rows = [dict(remedy=r, cardinality=2, records_per_key=50.0, job_seconds_by_slope=1.0,
        ...              busiest_records=60, busiest_state_reads=30, stage_one_busiest_records=50,
        ...              busiest_operator_seconds=0.3, operator_seconds_by_slope=0.5,
        ...              records_large=100, new_keys=0.0,
        ...              latency_p99_ms=0.01, parallelism=2)
        ...         for r in REMEDIES]
        >>> profile = cost_profile(rows)
        >>> profile["per_record_us"]["naive_heap"], profile["operator_us"]["naive_heap"]
        ([16666.666666666668], [5000.0])
        >>> profile["spark_side"]["naive_heap"]["job_record_us"]  # (2 x 1.0 - 0.5) / 100
        15000.0
    """
    alone = [r for r in rows if r.get("view_set", BALANCED) == ALONE]
    rows = [r for r in rows if r.get("view_set", BALANCED) == BALANCED]
    cards = sorted({r["cardinality"] for r in rows}, reverse=True)  # densities ascending
    density = [_median(rows, catalog[0].name, k, "records_per_key") for k in cards]

    def med(remedy: str, k: int, field: str) -> float:
        return _median(rows, remedy, k, field)

    def per_record(remedy: str, field: str = MEASURE) -> list[float]:
        seconds = [med(remedy, k, field) for k in cards]
        if densities is not None:
            solved = _solve_per_record(
                density, seconds, [densities[str(k)] for k in cards],
                by_name(remedy, catalog).sparse_keys,
            )  # fmt: skip
            if solved is not None:
                return solved
        return [
            t / med(remedy, k, "busiest_records") * 1e6 for t, k in zip(seconds, cards, strict=True)
        ]

    def relative_rounds(remedy: str) -> list[list[float]]:
        """Each round's job time over the rounds' median, per density."""
        out = []
        for k in cards:
            times = [r[MEASURE] for r in rows if r["remedy"] == remedy and r["cardinality"] == k]
            middle = med(remedy, k, MEASURE)
            out.append([t / middle for t in times if t is not None])
        return out

    per_record_us = {r.name: per_record(r.name) for r in catalog if r.density_priced}
    operator_us = {r.name: per_record(r.name, OPERATOR) for r in catalog if r.density_priced}
    misses = np.array([med("cached", k, "busiest_state_reads") for k in cards], dtype=float)

    def per_miss(field: str) -> float | None:
        """The cache's extra ``field`` over the heap's per miss, through the origin."""
        extra = np.array([med("cached", k, field) - med("naive_heap", k, field) for k in cards])
        return float(extra @ misses / (misses @ misses) * 1e6) if misses.any() else None

    # the buffer: time per record by how many records a flush folds per key (records over
    # flushed keys on the busiest subtask)
    folded = [med("buffered", k, "busiest_records") / med("buffered", k, "busiest_state_reads")
              for k in cards]  # fmt: skip

    def buffered_us(field: str) -> list[float]:
        return [med("buffered", k, field) / med("buffered", k, "busiest_records") * 1e6
                for k in cards]  # fmt: skip

    order = np.argsort(folded)
    stage_one = [
        (med("salted", k, MEASURE) - med("naive_rocksdb", k, MEASURE))
        / med("salted", k, "stage_one_busiest_records")
        * 1e6
        for k in cards
    ]
    return {
        "parallelism": rows[0]["parallelism"],
        "records_per_key": density,
        "per_record_us": per_record_us,
        "operator_us": operator_us,
        "miss_us": per_miss(MEASURE),
        "operator_miss_us": per_miss(OPERATOR),
        "buffer": {
            "max_count": DEFAULT_BUFFER_MAX_COUNT,
            "trigger_interval_ms": TRIGGER_INTERVAL_MS,
            "records_per_flushed_key": [folded[i] for i in order],
            "per_record_us": [buffered_us(MEASURE)[i] for i in order],
            "operator_per_record_us": [buffered_us(OPERATOR)[i] for i in order],
        },
        "spark_side": {
            r.name: spark_side(rows, alone, r.name, int(rows[0]["parallelism"]))
            for r in catalog
            if r.spark_side_as is None
        },
        "cache_entries": DEFAULT_CACHE_ENTRIES,
        "salted_stage_one_us": stage_one,
        "latency_p99_ms": {
            r.name: [med(r.name, k, "latency_p99_ms") for k in cards] for r in catalog
        },
        "job_rounds": {r.name: relative_rounds(r.name) for r in catalog},
        "aggregate": "seed 000's view count (an HLL pair per tweet, precision 10)",
    }


def spark_side(
    rows: Sequence[dict], alone: Sequence[dict], remedy: str, slots: int
) -> dict[str, Any]:
    """``remedy``'s Spark side, in us, from its medians by slope (the form of
    :func:`~skewlab.doctor.catalog.job_seconds`): per record of the job (``job_record_us``)
    and per new key (``key_us``: its state collected; a buffer's partials are merged into it
    inside the operator), fitted together by least squares over the view sets whose subtasks
    hold even shares of the records, where the job is all the work over the cores (a key term
    that comes out negative is held at 0 and J fitted alone; ``key_us_measured`` keeps the
    figure); per record of the busiest subtask (``busiest_record_us``) from the view set whose
    subtask 0 runs alone, less its new keys' term.
    Without an alone view set whose job took longer over all its views than over a quarter (a
    tiny profile's may not) the busiest chain is priced at the job's rate, and
    ``busiest_record_from`` says so.

    Example::

        >>> def row(k, t, op, n_b, n, new, view_set=BALANCED):
        ...     return dict(remedy="sorted", cardinality=k, view_set=view_set,
        ...                 job_seconds_by_slope=t, busiest_operator_seconds=op / 2,
        ...                 operator_seconds_by_slope=op, busiest_records=n_b,
        ...                 records_large=n, new_keys=new)
        >>> balanced = [row(200, 0.25, 0.2, 50_000, 100_000, 0),
        ...             row(20_000, 0.37, 0.2, 50_000, 100_000, 4_000)]
        >>> alone = [row(200, 0.2, 0.2, 50_000, 50_000, 0, ALONE)]
        >>> side = spark_side(balanced, alone, "sorted", 2)
        >>> [round(side[k], 2) for k in ("job_record_us", "busiest_record_us", "key_us")]
        [3.0, 2.0, 30.0]
        >>> side["busiest_record_from"]
        'subtask 0 alone'
        >>> round(spark_side(balanced, [], "sorted", 2)["busiest_record_us"], 2)  # job's rate
        3.0
    """

    def med(set_rows: Sequence[dict], k: int | None, field: str) -> float:
        return _median(set_rows, remedy, k, field)

    cards = sorted({r["cardinality"] for r in rows if r["remedy"] == remedy})
    # where every subtask holds its share of the records the job is all the work over the
    # cores: slots x T - every operator = J x the job's records + slots x c x its new keys
    even = [
        k
        for k in cards
        if med(rows, k, "busiest_records") * slots <= 1.1 * med(rows, k, "records_large")
    ]
    even = even or cards
    design = np.array(
        [[med(rows, k, "records_large"), slots * med(rows, k, "new_keys")] for k in even]
    )
    left = np.array([slots * med(rows, k, MEASURE) - med(rows, k, OPERATOR_ALL) for k in even])
    # without a key term to fit (or with a negative one): J alone, through the origin
    job_record, key_measured = float(np.median(left / design[:, 0])), 0.0
    if len(even) >= 2 and np.linalg.matrix_rank(design) == 2:
        (fitted, measured), *_ = np.linalg.lstsq(design, left, rcond=None)
        key_measured = float(measured)
        if key_measured > 0:
            job_record = float(fitted)
    key = max(key_measured, 0.0)
    mine = [r[MEASURE] for r in alone if r["remedy"] == remedy and r[MEASURE] is not None]
    if mine and statistics.median(mine) > 0:
        chain = med(alone, None, MEASURE) - med(alone, None, OPERATOR)
        chain -= key * med(alone, None, "new_keys")  # its own new keys, if any
        busiest_record = chain / med(alone, None, "busiest_records")
        source = ALONE
    else:  # no alone view set, or its job no longer over all its views than over a quarter
        busiest_record, source = job_record, "the job's rate (no alone view set measured)"
    return {"job_record_us": job_record * 1e6, "busiest_record_us": busiest_record * 1e6,
            "key_us": key * 1e6, "key_us_measured": key_measured * 1e6,
            "busiest_record_from": source}  # fmt: skip


def form_on_view_sets(rows: Sequence[dict], profile: dict[str, Any]) -> list[dict[str, Any]]:
    """How far the job-time form (:func:`~skewlab.doctor.catalog.job_seconds`) explains the
    profile's own view sets: per remedy with a Spark side and per view set (the balanced sets
    by cardinality, then the alone set), the job time the form gives from that set's own
    medians over the rounds (its busiest subtask's operator and records, every operator, the
    records -- the others' shared evenly -- and its new keys) at ``profile``'s Spark side,
    beside the job time measured by slope; ``predicted_over_measured``: predicted / measured
    job throughput (the measured time over the form's) with the bootstrap interval of the
    rounds' median. The even sets' Spark side is fitted to them, so they sit near 1.00 by
    construction unless the form cannot follow them; the uneven 20-key set and the alone set
    show what the fit leaves out.

    Example::

        >>> result = run_experiment("tiny", progress=False)                     # doctest: +SKIP
        >>> form_on_view_sets(result.rows, result.summary["cost_profile"])[0]  # doctest: +SKIP
        {'remedy': 'naive_heap', 'view_set': 'balanced', 'cardinality': 20, ...}
    """
    slots = int(profile["parallelism"])
    fields = (OPERATOR, OPERATOR_ALL, "busiest_records", "records_large", "new_keys",
              "parallelism")  # fmt: skip
    checked = []
    for name, side in profile["spark_side"].items():
        by_set: dict[tuple[str, int], list[dict]] = {}
        for r in rows:
            if r["remedy"] == name:
                by_set.setdefault((r.get("view_set", BALANCED), r["cardinality"]), []).append(r)
        for (view_set, card), rounds in sorted(
            by_set.items(), key=lambda s: (s[0][0] != BALANCED, s[0][1])
        ):
            estimate = median_estimate([r[MEASURE] for r in rounds])
            busiest_op, all_ops, busiest, records, new_keys, p = (
                _median(rounds, name, None, field) for field in fields
            )
            missing = None in (busiest_op, all_ops, busiest, records)
            if estimate is None or estimate.value <= 0 or missing:
                continue
            others = max(int(p or slots) - 1, 1)
            operators = [busiest_op] + [(all_ops - busiest_op) / others] * others
            records_by_subtask = [busiest] + [(records - busiest) / others] * others
            form = job_seconds(operators, records_by_subtask, new_keys or 0.0, side, slots)
            if form <= 0:
                continue
            checked.append({
                "remedy": name, "view_set": view_set, "cardinality": card,
                "busiest_share": busiest / records, "measured_seconds": estimate.value,
                "form_seconds": form,
                "predicted_over_measured": estimate.scaled(1 / form).to_json(),
            })  # fmt: skip
    return checked


def load_cost_profile(path: str | Path | None = None) -> dict[str, Any]:
    """A cost profile: from a ``skewlab bench remedy_costs`` result file at ``path``; else the
    newest one written on this machine (``data/results``) of the largest size there (full,
    then quick, then tiny) that holds a profile; else the shipped reference (measured on the
    machine its provenance names). Its ``source`` says which.

    Example::

        >>> load_cost_profile()["source"].split(":")[0] in {"this machine", "reference"}
        True
    """
    from skewlab.experiments.references import load_reference, reference_status
    from skewlab.iomodel.profiles import read_json

    if path is not None:
        data = read_json(Path(path), "cost profile")
        where = f"file: {path}"
    else:
        # the largest size measured here: a tiny run's jobs are too short to price with
        data = next(
            filter(
                lambda d: d and _priceable((d.get("summary") or {}).get("cost_profile")),
                (latest_result(EXPERIMENT, size=s) for s in SIZES_PREFERRED),
            ),
            None,
        )
        where = (
            f"this machine: the newest skewlab bench remedy_costs --size {data['size']} result"
            if data
            else ""
        )
        if data is None:
            data = load_reference(EXPERIMENT)
            status = reference_status(data)
            where = "reference: skewlab/references/remedy_costs.json" + (
                "" if status in ("current", "missing") else f" ({status})"
            )
    summary = (data or {}).get("summary", {})
    if not summary.get("cost_profile"):
        why = f" ({summary['cost_profile_error']})" if summary.get("cost_profile_error") else ""
        raise SkewlabInputError(
            "no cost profile" + (f" in {path}" if path else "") + why
            + ": measure one with 'skewlab bench remedy_costs' (about 3 minutes)"
        )  # fmt: skip
    if not _priceable(summary["cost_profile"]):
        raise SkewlabInputError(
            f"the cost profile in {path or where} has no Spark side apart from the operators "
            "(measured by an older skewlab): measure it again with 'skewlab bench remedy_costs'"
        )
    return {**summary["cost_profile"], "source": where, "machine": summary.get("machine")}


def _priceable(profile: dict[str, Any] | None) -> bool:
    """Whether ``profile`` holds what the doctor prices with: the operators' costs and Spark's
    side apart (older result files hold only the job's cost per record)."""
    return bool(profile) and "spark_side" in profile and "operator_us" in profile
