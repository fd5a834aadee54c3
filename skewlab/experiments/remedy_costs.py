"""What each remedy costs per record on this machine: the cost profile the skew doctor prices a
user's keys with.

Every remedy the doctor weighs -- the naive keyed reduce on the heap and on RocksDB, the buffer,
the LRU cache over RocksDB, salting, sorted input -- runs as skewlab runs it (seed 000's view
count: per tweet, two HLL sketches) over uniform view sets whose cardinality sets how many records
each key has (100,000 views over 20,000 tweets: 5 per key; over 20 tweets: 5,000), at the
doctor's parallelism, ``runs`` times each after one unmeasured run of every remedy over the
same views; each run's digest is checked against
Spark SQL's. The measure is the seed's own: **job time net of start-up** (the same strategy over
no views, sampled before each run as :mod:`skewlab.experiments.startup` takes it). The profile
derived from the runs (``summary["cost_profile"]``):

==============  ============================================================================
``per_record_us``  per remedy and density (records per key): net job time over the busiest
                subtask's records, in us -- everything a record costs the job (Spark's source,
                key group, shuffle, Arrow, the operator, the emission, the collect) on the
                subtask that decides the job's time
``miss_us``     the cache's extra job time per miss over the heap (a RocksDB read, an
                eviction's write-back), fitted through the origin over the cardinalities
``buffer``      the buffer's job time per record taken in and per flushed key (one state read
                and write, one partial emitted), fitted by least squares
``salted_stage_one_us``  per density: salting's first stage per record on its busiest subtask
                (salted job time minus naive RocksDB's, whose reduce is salting's final stage)
``latency_p99_ms``  per remedy and density: the runs' per-record operator latency p99
==============  ============================================================================

These are the costs of *skewlab's* aggregate (an HLL pair per key, precision 10): a user's own
aggregate costs what it costs; the doctor says so beside every figure it prices with them.

Example::

    >>> result = run_experiment("tiny", progress=False)                       # doctest: +SKIP
    >>> sorted(result.summary["cost_profile"]["per_record_us"])               # doctest: +SKIP
    ['buffered', 'cached', 'naive_heap', 'naive_rocksdb', 'salted', 'sorted']
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.results import BenchResult, latest_result
from skewlab.experiments.startup import StartUp
from skewlab.experiments.subtask_replay import (
    DEFAULT_BUFFER_MAX_COUNT,
    DEFAULT_CACHE_ENTRIES,
    bucket_records_per_key,
    replay_subtasks,
)
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Cached, Naive, Salted, Sorted, run_strategy
from skewlab.validation import check_whole

__all__ = [
    "EXPERIMENT",
    "HEADLINES",
    "REMEDIES",
    "cost_profile",
    "load_cost_profile",
    "remedies",
    "run_experiment",
]

EXPERIMENT = "remedy_costs"
#: The remedies priced, in display order.
REMEDIES = ("naive_heap", "naive_rocksdb", "buffered", "cached", "salted", "sorted")
#: The remedies whose cost per record is priced by the density of the record's key (the
#: buffer's by how many records a flush folds per key; the cache's as the heap's plus misses).
DENSITY_PRICED = ("naive_heap", "naive_rocksdb", "cached", "salted", "sorted")
#: A cost profile has no headline ratio (it is what the doctor's predictions are made of).
HEADLINES: dict[str, float | None] = {}
#: The sizes of a profile measured here, in the order the doctor prefers them.
SIZES_PREFERRED = ("full", "quick", "tiny")
#: The buffer's trigger interval in the profile's runs (skewlab's ``buffered`` default).
TRIGGER_INTERVAL_MS = 100.0


def remedies(parallelism: int, cache_entries: int = DEFAULT_CACHE_ENTRIES) -> dict[str, Any]:
    """The strategies the profile measures, by remedy name: salting with one salt per subtask.

    Example::

        >>> remedies(2)["salted"].parameters()
        {'backend': 'rocksdb', 'salt_buckets': 2}
    """
    return {
        "naive_heap": Naive(backend="heap"),
        "naive_rocksdb": Naive(backend="rocksdb"),
        "buffered": Buffered(
            trigger_interval_ms=TRIGGER_INTERVAL_MS, max_count=DEFAULT_BUFFER_MAX_COUNT
        ),
        "cached": Cached(cache_entries=cache_entries),
        "salted": Salted(salt_buckets=parallelism),
        "sorted": Sorted(),
    }


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
) -> BenchResult:
    """Measure every remedy's costs; see the module doc. Writes nothing (the CLI does).

    ``seed`` 7: the doctor's validation (:mod:`skewlab.experiments.remedy_check`) uses other
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
    compared = remedies(p)
    specs = [ViewSpec(n_views, n_users, k, seed=seed) for k in cards]

    spark = spark or get_spark()
    bar = tqdm(
        total=len(compared) * (1 + 2 * len(cards) * runs),  # warm-ups not counted
        desc=EXPERIMENT,
        disable=not progress,
    )
    startup = StartUp(spark, compared, job, n_users, seed)
    startup.warm_up(bar)
    measured: list[tuple] = []
    densities: dict[str, dict] = {}
    for spec in specs:
        views = generate_views(spark, spec).cache()
        views.count()
        reference = result_digest(spark_reference_aggregate(views))
        replay = replay_subtasks(views, "tweet_id", parallelism=p)
        densities[str(spec.n_tweets)] = max(replay["subtasks"], key=lambda s: s["records"])[
            "density"
        ]
        warm_up(views, compared, job, spark)
        for run in range(runs):
            for name, strategy in compared.items():
                bar.set_postfix_str(f"{spec.n_tweets} keys, {name}")
                startup.sample(name)
                bar.update()
                result, _ = run_strategy(views, strategy, job, spark)
                measured.append((name, spec, run, result, reference))
                bar.update()
        views.unpersist()
    bar.close()
    startup.close()
    seconds = startup.seconds()
    rows = [_row(name, spec, run, result, seconds[name], ref)
            for name, spec, run, result, ref in measured]  # fmt: skip
    summary = summarize(rows, densities)
    summary.update(
        startup_seconds=seconds, startup_samples=startup.samples(), parallelism=p,
        n_views=n_views, seed=seed,
    )  # fmt: skip
    return BenchResult(EXPERIMENT, size, rows, summary)


def warm_up(views, compared: dict[str, Any], job: JobConfig, spark) -> None:
    """One unmeasured run of every remedy over these views: the first runs over a new view set
    are slower (its cached blocks, the workers' code paths), and whichever view set came first
    would otherwise pay it alone."""
    for strategy in compared.values():
        run_strategy(views, strategy, job, spark)


def _busiest(subtasks: list[dict], stage: str | None = None) -> dict[str, int]:
    """The subtask with the most records (of ``stage``, if given): its records and counts."""
    mine = [s for s in subtasks if stage is None or s["stage"] == stage]
    top = max(mine, key=lambda s: s["records"])
    return {"records": top["records"], "state_reads": top["state_reads"]}


def _row(name: str, spec: ViewSpec, run: int, result, startup: float, reference: str) -> dict:
    stages = sorted({s["stage"] for s in result.subtasks})
    busiest = _busiest(result.subtasks, stages[-1])
    first = _busiest(result.subtasks, stages[0])
    return {
        "experiment": EXPERIMENT,
        "remedy": name,
        "cardinality": spec.n_tweets,
        "records_per_key": spec.n_views / spec.n_tweets,
        "run": run,
        "parallelism": result.parameters["parallelism"],
        "records_in": result.records_in,
        "records_out": result.records_out,
        "job_seconds": result.wall_seconds,
        "startup_seconds": startup,
        "net_job_seconds": result.wall_seconds - startup,
        "busiest_records": busiest["records"],
        # the cache's misses and the buffer's flushed keys are the state reads they make
        "busiest_state_reads": busiest["state_reads"],
        "stage_one_busiest_records": first["records"],
        "cache_misses": result.cache_misses,
        "buffer_flushes": result.buffer_flushes,
        "latency_p99_ms": result.latency_p99_ms,
        "digest_matches_reference": result.result_digest == reference,
    }


def _median(rows, remedy: str, card: int, field: str) -> float:
    return statistics.median(
        r[field] for r in rows if r["remedy"] == remedy and r["cardinality"] == card
    )


def summarize(rows, densities: dict[str, dict] | None = None) -> dict[str, Any]:
    """The cost profile (see the module doc) and, per remedy and cardinality, the median net
    job time; ``all_digests_match``."""
    return {
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "cost_profile": cost_profile(rows, densities),
        "densities": densities,
        "net_job_seconds": {
            name: {
                str(k): _median(rows, name, k, "net_job_seconds")
                for k in sorted({r["cardinality"] for r in rows})
            }
            for name in REMEDIES
            if any(r["remedy"] == name for r in rows)
        },
    }


def _knot_weights(records_per_key: list[float], n: float) -> np.ndarray:
    """How a cost at ``n`` records per key is made of the costs at the profile's densities:
    linear in log density between two of them, held at the ends (as ``np.interp``)."""
    x = np.log(np.asarray(records_per_key, dtype=float))
    return np.array([np.interp(math.log(n), x, unit) for unit in np.eye(len(x))])


def _solve_per_record(records_per_key, seconds, histograms) -> list[float] | None:
    """Per-record costs (us) at the profile's densities such that, priced over each view set's
    own busiest subtask (its records by density bucket), they give back its measured time; None
    when that has no non-negative answer."""
    design = np.array([
        sum(d["records"] * _knot_weights(records_per_key, bucket_records_per_key(int(b)))
            for b, d in hist.items())
        for hist in histograms
    ])  # fmt: skip
    try:
        costs = np.linalg.solve(design, np.asarray(seconds) * 1e6)
    except np.linalg.LinAlgError:
        return None
    return costs.tolist() if (costs > 0).all() else None


def cost_profile(rows, densities: dict[str, dict] | None = None) -> dict[str, Any]:
    """Per-record costs from the runs (see the module doc), medians over runs. ``densities``:
    per cardinality, the busiest subtask's records by density bucket (from
    :func:`~skewlab.experiments.subtask_replay.replay_subtasks`); with them the per-record costs
    are solved so that pricing each view set's own records gives back its measured time
    (a uniform view set's keys are spread around their mean density); without them they are
    each view set's time over its records.

    Example::

        >>> rows = [dict(remedy=r, cardinality=2, records_per_key=50.0, net_job_seconds=1.0,
        ...              busiest_records=60, busiest_state_reads=30, stage_one_busiest_records=50,
        ...              latency_p99_ms=0.01, parallelism=2) for r in REMEDIES]
        >>> cost_profile(rows)["per_record_us"]["naive_heap"]
        [16666.666666666668]
    """
    cards = sorted({r["cardinality"] for r in rows}, reverse=True)  # densities ascending
    density = [_median(rows, REMEDIES[0], k, "records_per_key") for k in cards]

    def med(remedy: str, k: int, field: str) -> float:
        return _median(rows, remedy, k, field)

    def per_record(remedy: str) -> list[float]:
        seconds = [med(remedy, k, "net_job_seconds") for k in cards]
        if densities is not None:
            solved = _solve_per_record(density, seconds, [densities[str(k)] for k in cards])
            if solved is not None:
                return solved
        return [
            t / med(remedy, k, "busiest_records") * 1e6 for t, k in zip(seconds, cards, strict=True)
        ]

    per_record_us = {name: per_record(name) for name in DENSITY_PRICED}
    # the cache's misses over the heap: extra time per miss, through the origin
    extra = np.array([med("cached", k, "net_job_seconds") - med("naive_heap", k, "net_job_seconds")
                      for k in cards])  # fmt: skip
    misses = np.array([med("cached", k, "busiest_state_reads") for k in cards], dtype=float)
    miss_us = float(extra @ misses / (misses @ misses) * 1e6) if misses.any() else None
    # the buffer: time per record by how many records a flush folds per key (records over
    # flushed keys on the busiest subtask)
    folded = [med("buffered", k, "busiest_records") / med("buffered", k, "busiest_state_reads")
              for k in cards]  # fmt: skip
    buffered_us = [
        med("buffered", k, "net_job_seconds") / med("buffered", k, "busiest_records") * 1e6
        for k in cards
    ]
    order = np.argsort(folded)
    stage_one = [
        (med("salted", k, "net_job_seconds") - med("naive_rocksdb", k, "net_job_seconds"))
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
            name: [med(name, k, "latency_p99_ms") for k in cards] for name in REMEDIES
        },
        "aggregate": "seed 000's view count (an HLL pair per tweet, precision 10)",
    }


def load_cost_profile(path: str | Path | None = None) -> dict[str, Any]:
    """A cost profile: from a ``skewlab bench remedy_costs`` result file at ``path``; else the
    newest one written on this machine (``data/results``) of the largest size there (full,
    then quick, then tiny); else the shipped reference (measured on the machine its provenance
    names). Its ``source`` says which.

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
            filter(None, (latest_result(EXPERIMENT, size=s) for s in SIZES_PREFERRED)), None
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
    if "cost_profile" not in summary:
        raise SkewlabInputError(
            "no cost profile" + (f" in {path}" if path else "")
            + ": measure one with 'skewlab bench remedy_costs' (about 3 minutes)"
        )  # fmt: skip
    return {**summary["cost_profile"], "source": where, "machine": summary.get("machine")}
