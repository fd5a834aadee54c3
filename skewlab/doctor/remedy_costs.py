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
larger run, the job's time without its fixed part. The profile derived from the runs
(``summary["cost_profile"]``):

==============  ============================================================================
``per_record_us``  per remedy and density (records per key): job time by slope over the
                busiest subtask's records, in us -- everything a record costs the job (Spark's
                source, key group, shuffle, Arrow, the operator, the emission, the collect) on
                the subtask that decides the job's time
``miss_us``     the cache's extra job time per miss over the heap (a RocksDB read, an
                eviction's write-back), fitted through the origin over the cardinalities
``buffer``      the buffer's job time per record taken in and per flushed key (one state read
                and write, one partial emitted), fitted by least squares
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

import statistics
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from skewlab.doctor.catalog import (
    CATALOG,
    TRIGGER_INTERVAL_MS,
    Remedy,
    knot_weights,
    strategies,
)
from skewlab.doctor.subtask_replay import (
    DEFAULT_BUFFER_MAX_COUNT,
    DEFAULT_CACHE_ENTRIES,
    bucket_records_per_key,
    replay_subtasks,
)
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import median_estimate
from skewlab.experiments.matched_rounds import measure_interleaved
from skewlab.experiments.results import BenchResult, latest_result
from skewlab.experiments.rounds import WARM_ROUNDS, SlopeInput, slope_fields, warm_up
from skewlab.inputs.views import ViewSpec
from skewlab.validation import check_whole

__all__ = [
    "EXPERIMENT",
    "HEADLINES",
    "MEASURE",
    "NoCostPerRecord",
    "cost_profile",
    "load_cost_profile",
    "run_experiment",
]

EXPERIMENT = "remedy_costs"
#: What the profile's job times are: the per-record cost by slope times the larger run's records.
MEASURE = "job_seconds_by_slope"
#: A cost profile has no headline ratio (it is what the doctor's predictions are made of).
HEADLINES: dict[str, float | None] = {}
#: The sizes of a profile measured here, in the order the doctor prefers them.
SIZES_PREFERRED = ("full", "quick", "tiny")


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

    spark = spark or get_spark()
    bar = tqdm(
        total=len(compared) * (1 + len(cards) * (WARM_ROUNDS + 2 * runs)),
        desc=EXPERIMENT,
        disable=not progress,
    )
    warm_up(spark, compared, job, n_users=n_users, seed=seed, bar=bar)
    rows: list[dict] = []
    densities: dict[str, dict] = {}
    with ExitStack() as stack:
        inputs = {f"{spec.n_tweets} keys": stack.enter_context(SlopeInput(spark, spec))
                  for spec in specs}  # fmt: skip
        for spec, views in zip(specs, inputs.values(), strict=True):
            # the busiest subtask's keys by density, in the larger run's views (the one priced)
            replay = replay_subtasks(views.large, "tweet_id", parallelism=p)
            busiest = max(replay["subtasks"], key=lambda s: s["records"])
            densities[str(spec.n_tweets)] = busiest["density"]
        by_name = dict(zip(inputs, specs, strict=True))
        for name, run in measure_interleaved(
            spark, compared, job, inputs, runs, max_rounds=settings.get("max_rounds"), bar=bar
        ):
            rows.append(_row(run, by_name[name]))
    bar.close()
    summary = summarize(rows, densities, catalog)
    summary.update(parallelism=p, n_views=n_views, seed=seed)
    return BenchResult(EXPERIMENT, size, rows, summary)


def _busiest(subtasks: list[dict], stage: str | None = None) -> dict[str, int]:
    """The subtask with the most records (of ``stage``, if given): its records and counts."""
    mine = [s for s in subtasks if stage is None or s["stage"] == stage]
    top = max(mine, key=lambda s: s["records"])
    return {"records": top["records"], "state_reads": top["state_reads"]}


def _row(run, spec: ViewSpec) -> dict:
    """One remedy's round at one cardinality: the slope's fields (both sizes' job times, the
    per-record cost, both digests checked) and the larger run's counts on its busiest
    subtask."""
    result = run.large
    stages = sorted({s["stage"] for s in result.subtasks})
    busiest = _busiest(result.subtasks, stages[-1])
    first = _busiest(result.subtasks, stages[0])
    return {
        "experiment": EXPERIMENT,
        "remedy": run.side,
        "cardinality": spec.n_tweets,
        "records_per_key": spec.n_views / spec.n_tweets,
        **slope_fields(run),
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


def _median(rows, remedy: str, card: int, field: str) -> float:
    present = [
        r[field]
        for r in rows
        if r["remedy"] == remedy and r["cardinality"] == card and r[field] is not None
    ]
    value = statistics.median(present) if present else None
    if field == MEASURE and (value is None or value <= 0):
        raise NoCostPerRecord(
            f"{remedy} at {card:,} keys: the job took no longer over all the views than over a "
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
    ``all_digests_match``."""
    cards = sorted({r["cardinality"] for r in rows})
    present = [r.name for r in catalog if any(row["remedy"] == r.name for row in rows)]
    intervals: dict[str, Any] = {}
    by_slope: dict[str, dict[str, float | None]] = {}
    rounds: dict[str, dict[str, int]] = {}
    for name in present:
        by_slope[name] = {}
        rounds[name] = {
            str(k): sum(r["remedy"] == name and r["cardinality"] == k for r in rows) for k in cards
        }
        for k in cards:
            est = median_estimate(
                [r[MEASURE] for r in rows if r["remedy"] == name and r["cardinality"] == k]
            )
            by_slope[name][str(k)] = None if est is None else est.value
            if est is not None:
                intervals[f"{MEASURE}_{name}_{k}"] = est.to_json()
    try:
        profile, error = cost_profile(rows, densities, catalog), None
    except NoCostPerRecord as failed:
        profile, error = None, str(failed)
    return {
        "headline_measure": MEASURE,
        "runs": min((n for by_card in rounds.values() for n in by_card.values()), default=0),
        "rounds": rounds,
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "cost_profile": profile,
        "cost_profile_error": error,
        "densities": densities,
        MEASURE: by_slope,
        "intervals": intervals,
    }


def _solve_per_record(records_per_key, seconds, histograms) -> list[float] | None:
    """Per-record costs (us) at the profile's densities such that, priced over each view set's
    own busiest subtask (its records by density bucket), they give back its measured time; None
    when that has no non-negative answer."""
    design = np.array([
        sum(d["records"] * knot_weights(records_per_key, bucket_records_per_key(int(b)))
            for b, d in hist.items())
        for hist in histograms
    ])  # fmt: skip
    try:
        costs = np.linalg.solve(design, np.asarray(seconds) * 1e6)
    except np.linalg.LinAlgError:
        return None
    return costs.tolist() if (costs > 0).all() else None


def cost_profile(
    rows, densities: dict[str, dict] | None = None, catalog: tuple[Remedy, ...] = CATALOG
) -> dict[str, Any]:
    """Per-record costs from the runs (see the module doc), medians over the rounds of each
    run's ``job_seconds_by_slope`` (the job's time without its fixed part). ``densities``:
    per cardinality, the busiest subtask's records by density bucket (from
    :func:`~skewlab.doctor.subtask_replay.replay_subtasks`); with them the per-record costs
    are solved so that pricing each view set's own records gives back its measured time
    (a uniform view set's keys are spread around their mean density); without them they are
    each view set's time over its records.

    Example::

        >>> from skewlab.doctor.catalog import REMEDIES
        >>> rows = [dict(remedy=r, cardinality=2, records_per_key=50.0, job_seconds_by_slope=1.0,
        ...              busiest_records=60, busiest_state_reads=30, stage_one_busiest_records=50,
        ...              latency_p99_ms=0.01, parallelism=2) for r in REMEDIES]
        >>> cost_profile(rows)["per_record_us"]["naive_heap"]
        [16666.666666666668]
    """
    cards = sorted({r["cardinality"] for r in rows}, reverse=True)  # densities ascending
    density = [_median(rows, catalog[0].name, k, "records_per_key") for k in cards]

    def med(remedy: str, k: int, field: str) -> float:
        return _median(rows, remedy, k, field)

    def per_record(remedy: str) -> list[float]:
        seconds = [med(remedy, k, MEASURE) for k in cards]
        if densities is not None:
            solved = _solve_per_record(density, seconds, [densities[str(k)] for k in cards])
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
    # the cache's misses over the heap: extra time per miss, through the origin
    extra = np.array([med("cached", k, MEASURE) - med("naive_heap", k, MEASURE) for k in cards])
    misses = np.array([med("cached", k, "busiest_state_reads") for k in cards], dtype=float)
    miss_us = float(extra @ misses / (misses @ misses) * 1e6) if misses.any() else None
    # the buffer: time per record by how many records a flush folds per key (records over
    # flushed keys on the busiest subtask)
    folded = [med("buffered", k, "busiest_records") / med("buffered", k, "busiest_state_reads")
              for k in cards]  # fmt: skip
    buffered_us = [
        med("buffered", k, MEASURE) / med("buffered", k, "busiest_records") * 1e6 for k in cards
    ]
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
        "miss_us": miss_us,
        "buffer": {
            "max_count": DEFAULT_BUFFER_MAX_COUNT,
            "trigger_interval_ms": TRIGGER_INTERVAL_MS,
            "records_per_flushed_key": [folded[i] for i in order],
            "per_record_us": [buffered_us[i] for i in order],
        },
        "cache_entries": DEFAULT_CACHE_ENTRIES,
        "salted_stage_one_us": stage_one,
        "latency_p99_ms": {
            r.name: [med(r.name, k, "latency_p99_ms") for k in cards] for r in catalog
        },
        "job_rounds": {r.name: relative_rounds(r.name) for r in catalog},
        "aggregate": "seed 000's view count (an HLL pair per tweet, precision 10)",
    }


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
                lambda d: d and (d.get("summary") or {}).get("cost_profile"),
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
    return {**summary["cost_profile"], "source": where, "machine": summary.get("machine")}
