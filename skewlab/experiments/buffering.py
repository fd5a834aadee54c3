"""Seed 000's experiment: naive (RocksDB) vs buffered view counting over key cardinality.

100,000 views from 25,000 users; tweet cardinality 20,000 down to 1; parallelism 1 by default
(one buffer sees every key: a flush of 1,000 records at 20 keys emits 20 partials, the harshest
case for the buffer); R runs each after a warm-up. Four sides, each checked against the Spark
SQL reference digest: the naive ``keyBy -> reduce`` on RocksDB; the buffer as the seed wrote it
(``list``: a ``Vector`` of single-view states per key, reduced at flush); the vectorized
buffer (numpy folds a slice's registers at once); and the vectorized buffer for hot keys only
(``hotkey``: a key is buffered once a frequent-items sketch over a sample of one record in 8
says it may reach ``1 / max_count`` of the subtask's records, every other record reduced at
once, as naive: the seed's future work)
-- every buffer with ``trigger_interval_ms=100``, ``max_count=1000``, its partials reduced on
RocksDB. ``min_speedup_over_cardinalities_hotkey`` is the hot-key buffer's worst speedup over
naive across the cardinalities (issue 27's goal: at least 1).

Like for like -- what each side does per record, and what its timer covers:

==============  =====================================  =====================================
side            the same for every side                the mechanism compared
==============  =====================================  =====================================
naive           Spark: key group, the upstream map     per record: RocksDB get, merge, put;
                (each view's single-view registers),   emit; ``toStats``
                shuffle, Arrow to Python; the job's
buffered        collect of the results                 per record: into the buffer (numpy,
(vectorized)                                           a slice at a time); per flush and key:
                                                       get, merge, put, emit, ``toStats``
buffered        (timer: the job, start to collect;     per record: its single-view state into
(list)          operator time: every operator call)    its key's ``Vector``; per flush and
                                                       key: reduce, get, merge, put, emit,
                                                       ``toStats``
buffered                                               per slice and key: a sketch update;
(hot keys)                                             a hot key's record as vectorized, a
                                                       cold one as naive
==============  =====================================  =====================================

The headline is the seed's own measure, **job throughput**: records over the Spark job's wall
time. At 100,000 records a job's fixed start-up (scheduling, routing set-up, the Python worker,
the collect) weighs seconds, so the job time is taken **net of an empty run's start-up** -- the
same strategy over no views, one such run right before each measured run, the median of them
(:mod:`skewlab.experiments.startup`) -- as one would for Flink. Beside it:
operator throughput (records over the time inside the operators) and the raw job throughput.
Every figure is the median of R runs, with min and max. The seed reports ~45x at 20 keys.

Example::

    >>> result = run_experiment("tiny", progress=False)                      # doctest: +SKIP
    >>> result.summary["headline_measure"], result.summary["all_digests_match"]  # doctest: +SKIP
    ('job_records_per_second_net_of_startup', True)
"""

from __future__ import annotations

from collections.abc import Sequence

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.experiments.chapters import SEED_KEYS, resolve_runs, size_settings
from skewlab.experiments.results import BenchResult, median_of, spread
from skewlab.experiments.startup import StartUp, net_rate
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Naive, run_strategy

EXPERIMENT = "buffering"
#: The article's headline: buffered over naive throughput at 20 keys.
SEED_SPEEDUP_AT_20_KEYS = 45.0
#: The headline ratios (summary keys) and the seed's figure for each: the article's list buffer
#: is the one it measured, so both buffers stand beside its ~45x.
HEADLINES = {
    "speedup_at_20_keys": SEED_SPEEDUP_AT_20_KEYS,
    "speedup_at_20_keys_list": SEED_SPEEDUP_AT_20_KEYS,
}
#: What the headline ratios are computed from.
HEADLINE_MEASURE = "job_records_per_second_net_of_startup"
#: The sides, in display order: the naive reduce, the vectorized buffer, the seed's list buffer,
#: the vectorized buffer for hot keys only (issue 27: seed 000's future work).
SIDES = ("naive", "buffered", "buffered_list", "buffered_hotkey")
#: Each buffer side and the suffix of its speedups in the summary.
BUFFER_SIDES = {"buffered": "", "buffered_list": "_list", "buffered_hotkey": "_hotkey"}


def sides(trigger_interval_ms: float = 100.0, max_count: int = 1000) -> dict:
    """The strategies compared, by side name (validated).

    Example::

        >>> {name: p.parameters() for name, p in sides().items()}["buffered_list"]["buffer"]
        'list'
    """
    buffer = {"trigger_interval_ms": trigger_interval_ms, "max_count": max_count}
    return {
        "naive": Naive(backend="rocksdb"),
        "buffered": Buffered(buffer="vectorized", **buffer),
        "buffered_list": Buffered(buffer="list", **buffer),
        "buffered_hotkey": Buffered(buffer="hotkey", **buffer),
    }


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    cardinalities: Sequence[int] | None = None,
    n_views: int | None = None,
    n_users: int | None = None,
    parallelism: int | None = 1,
    trigger_interval_ms: float = 100.0,
    max_count: int = 1000,
    seed: int = 1,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the buffering experiment; see the module doc. Writes nothing (the CLI does).

    Sizes come from the chapter registry (:mod:`skewlab.experiments.chapters`) unless given.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    cards = tuple(cardinalities or settings["cardinalities"])
    n_views = settings["n_views"] if n_views is None else n_views
    n_users = settings["n_users"] if n_users is None else n_users
    job = JobConfig(parallelism=1 if parallelism is None else parallelism)
    compared = sides(trigger_interval_ms, max_count)
    specs = [ViewSpec(n_views, n_users, k, seed=seed) for k in cards]  # validates sizes

    spark = spark or get_spark()
    total = len(compared) * (1 + 2 * len(cards) * runs)
    bar = tqdm(total=total, desc=EXPERIMENT, disable=not progress)
    startup = StartUp(spark, compared, job, n_users, seed)
    startup.warm_up(bar)
    measured = []
    for spec in specs:
        views = generate_views(spark, spec).cache()
        views.count()
        reference = result_digest(spark_reference_aggregate(views))
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
    summary = summarize(rows)
    summary["startup_seconds"] = seconds
    summary["startup_samples"] = startup.samples()
    return BenchResult(EXPERIMENT, size, rows, summary)


def _row(name: str, spec: ViewSpec, run: int, result, startup: float, reference: str) -> dict:
    net = result.wall_seconds - startup
    return {
        "experiment": EXPERIMENT,
        "cardinality": spec.n_tweets,
        "strategy": name,
        "run": run,
        "parallelism": result.parameters["parallelism"],
        "records_in": result.records_in,
        "records_out": result.records_out,
        "job_seconds": result.wall_seconds,
        "startup_seconds": startup,
        "net_job_seconds": net,
        HEADLINE_MEASURE: net_rate(result.records_processed, result.wall_seconds, startup),
        "operator_records_per_second": result.operator_records_per_second,
        "e2e_records_per_second": result.e2e_records_per_second,
        "state_reads": result.state_reads,
        "state_writes": result.state_writes,
        "buffer_flushes": result.buffer_flushes,
        "latency_p50_ms": result.latency_p50_ms,
        "latency_p99_ms": result.latency_p99_ms,
        "operator_inputs": result.extra["operator_inputs"],
        "digest_matches_reference": result.result_digest == reference,
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _least(values) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def summarize(rows) -> dict:
    """Per cardinality and side: min / median / max of the headline (job throughput net of
    start-up) and of operator throughput; the buffers' speedups over naive of the medians."""
    cards = sorted({r["cardinality"] for r in rows}, reverse=True)
    table = []
    for k in cards:
        entry: dict = {"cardinality": k}
        for side in SIDES:
            mine = [r for r in rows if r["cardinality"] == k and r["strategy"] == side]
            entry[side] = spread(r[HEADLINE_MEASURE] for r in mine)
            entry[f"{side}_operator"] = spread(r["operator_records_per_second"] for r in mine)
        for side, suffix in BUFFER_SIDES.items():
            entry[f"speedup{suffix}"] = _ratio(entry[side]["median"], entry["naive"]["median"])
            entry[f"operator_speedup{suffix}"] = _ratio(
                entry[f"{side}_operator"]["median"], entry["naive_operator"]["median"]
            )
        table.append(entry)
    by_k = {t["cardinality"]: t for t in table}

    def at(k: int, field: str) -> float | None:
        return by_k.get(k, {}).get(field)

    return {
        "headline_measure": HEADLINE_MEASURE,
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        "speedup_at_20_keys": at(SEED_KEYS, "speedup"),
        "speedup_at_20_keys_list": at(SEED_KEYS, "speedup_list"),
        "speedup_at_20000_keys": at(20_000, "speedup"),
        "speedup_at_20_keys_hotkey": at(SEED_KEYS, "speedup_hotkey"),
        "speedup_at_20000_keys_hotkey": at(20_000, "speedup_hotkey"),
        "max_speedup": max((t["speedup"] for t in table if t["speedup"]), default=None),
        "min_speedup_over_cardinalities": _least(t["speedup"] for t in table),
        "min_speedup_over_cardinalities_hotkey": _least(t["speedup_hotkey"] for t in table),
        "operator_speedup_at_20_keys": at(SEED_KEYS, "operator_speedup"),
        "operator_speedup_at_20_keys_list": at(SEED_KEYS, "operator_speedup_list"),
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "seed_speedup_at_20_keys": SEED_SPEEDUP_AT_20_KEYS,
        "naive_latency_p50_ms_at_20_keys": median_of(
            rows, "latency_p50_ms", cardinality=SEED_KEYS, strategy="naive"
        ),
        "buffered_latency_p50_ms_at_20_keys": median_of(
            rows, "latency_p50_ms", cardinality=SEED_KEYS, strategy="buffered"
        ),
        "by_cardinality": table,
    }
