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

The headline is the seed's own measure, **job throughput**: records over the job's time. A
job's fixed start-up (scheduling, the Python worker, the collect) is cancelled, not estimated:
every side runs over the views at two sizes in each round and its per-record job cost is the
slope between them (:mod:`skewlab.experiments.rounds`); the throughput is one over that cost.
Beside it: operator throughput (records over the time inside the operators, by the same slope)
and the large run's raw job throughput. Every figure is the median of R rounds, with min and
max; each speedup is the ratio of the medians with its bootstrap interval
(:mod:`skewlab.experiments.intervals`), and its job-level ratio is held to its physical bound:
between 1 and the operators' ratio (the chapter record's ``bounds``). The seed reports ~45x at
20 keys.

Example::

    >>> result = run_experiment("tiny", progress=False)                      # doctest: +SKIP
    >>> result.summary["headline_measure"], result.summary["all_digests_match"]  # doctest: +SKIP
    ('job_records_per_second', True)
"""

from __future__ import annotations

from collections.abc import Sequence

from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import SEED_KEYS, resolve_runs, size_settings
from skewlab.experiments.intervals import lowest, ratio_of_medians
from skewlab.experiments.results import BenchResult, median_of, spread
from skewlab.experiments.rounds import SlopeInput, measure_rounds, slope_fields, warm_up
from skewlab.inputs.views import ViewSpec
from skewlab.strategies import Buffered, Naive

EXPERIMENT = "buffering"
#: The article's headline: buffered over naive throughput at 20 keys.
SEED_SPEEDUP_AT_20_KEYS = 45.0
#: The headline ratios (summary keys) and the seed's figure for each: the article's list buffer
#: is the one it measured, so both buffers stand beside its ~45x.
HEADLINES = {
    "speedup_at_20_keys": SEED_SPEEDUP_AT_20_KEYS,
    "speedup_at_20_keys_list": SEED_SPEEDUP_AT_20_KEYS,
}
#: What the headline ratios are computed from: one over the per-record job cost by slope.
HEADLINE_MEASURE = "job_records_per_second"
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
    sides_run: Sequence[str] | None = None,
    seed: int = 1,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the buffering experiment; see the module doc. Writes nothing (the CLI does).

    Sizes come from the chapter registry (:mod:`skewlab.experiments.chapters`) unless given;
    ``sides_run`` (default: the size's ``sides``, else all of :data:`SIDES`) picks the sides,
    naive always among them.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    cards = tuple(cardinalities or settings["cardinalities"])
    n_views = settings["n_views"] if n_views is None else n_views
    n_users = settings["n_users"] if n_users is None else n_users
    job = JobConfig(parallelism=1 if parallelism is None else parallelism)
    chosen = tuple(sides_run or settings.get("sides") or SIDES)
    unknown = [s for s in chosen if s not in SIDES]
    if unknown or "naive" not in chosen:
        raise SkewlabInputError(
            f"sides {', '.join(chosen)}: choose among {', '.join(SIDES)}, naive included"
        )
    compared = {name: p for name, p in sides(trigger_interval_ms, max_count).items()
                if name in chosen}  # fmt: skip
    specs = [ViewSpec(n_views, n_users, k, seed=seed) for k in cards]  # validates sizes

    spark = spark or get_spark()
    bar = tqdm(
        total=len(compared) * (1 + 2 * len(cards) * runs), desc=EXPERIMENT, disable=not progress
    )
    warm_up(spark, compared, job, n_users=n_users, seed=seed, bar=bar)
    rows = []
    for spec in specs:
        with SlopeInput(spark, spec) as views:
            for run in measure_rounds(
                spark, compared, job, views, runs, bar=bar, label=f"{spec.n_tweets} keys, "
            ):
                rows.append(_row(run, spec))
    bar.close()
    return BenchResult(EXPERIMENT, size, rows, summarize(rows))


def _row(run, spec: ViewSpec) -> dict:
    result = run.large
    return {
        "experiment": EXPERIMENT,
        "cardinality": spec.n_tweets,
        "strategy": run.side,
        **slope_fields(run),
        "parallelism": result.parameters["parallelism"],
        "records_in": result.records_in,
        "records_out": result.records_out,
        "state_reads": result.state_reads,
        "state_writes": result.state_writes,
        "buffer_flushes": result.buffer_flushes,
        "latency_p50_ms": result.latency_p50_ms,
        "latency_p99_ms": result.latency_p99_ms,
        "operator_inputs": result.extra["operator_inputs"],
    }


def summarize(rows) -> dict:
    """Per cardinality and side: min / median / max of the headline (job throughput by slope)
    and of operator throughput; each buffer's speedups over naive (ratios of the medians) with
    their bootstrap intervals (``summary["intervals"]``)."""
    cards = sorted({r["cardinality"] for r in rows}, reverse=True)
    present = [s for s in SIDES if any(r["strategy"] == s for r in rows)]
    table = []
    intervals: dict = {}
    for k in cards:
        entry: dict = {"cardinality": k}
        mine = {s: [r for r in rows if r["cardinality"] == k and r["strategy"] == s]
                for s in present}  # fmt: skip
        for side in present:
            entry[side] = spread(r[HEADLINE_MEASURE] for r in mine[side])
            entry[f"{side}_operator"] = spread(r["operator_records_per_second"] for r in mine[side])
        for side, suffix in BUFFER_SIDES.items():
            if side not in present:
                continue
            for prefix, field in (("speedup", HEADLINE_MEASURE),
                                  ("operator_speedup", "operator_records_per_second")):  # fmt: skip
                est = ratio_of_medians(
                    [r[field] for r in mine[side]], [r[field] for r in mine["naive"]]
                )
                entry[f"{prefix}{suffix}"] = None if est is None else est.value
                entry[f"{prefix}{suffix}_interval"] = None if est is None else est.to_json()
        table.append(entry)
    by_k = {t["cardinality"]: t for t in table}

    def at(k: int, field: str) -> float | None:
        return by_k.get(k, {}).get(field)

    summary = {
        "headline_measure": HEADLINE_MEASURE,
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        "sides": present,
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
    named = {
        "speedup_at_20_keys": (SEED_KEYS, "speedup"),
        "speedup_at_20_keys_list": (SEED_KEYS, "speedup_list"),
        "speedup_at_20000_keys": (20_000, "speedup"),
        "speedup_at_20_keys_hotkey": (SEED_KEYS, "speedup_hotkey"),
        "speedup_at_20000_keys_hotkey": (20_000, "speedup_hotkey"),
        "operator_speedup_at_20_keys": (SEED_KEYS, "operator_speedup"),
        "operator_speedup_at_20_keys_list": (SEED_KEYS, "operator_speedup_list"),
        "operator_speedup_at_20000_keys": (20_000, "operator_speedup"),
    }
    for key, (k, field) in named.items():
        summary[key] = at(k, field)
        if at(k, f"{field}_interval") is not None:
            intervals[key] = at(k, f"{field}_interval")
    for suffix in ("", "_hotkey"):
        worst = lowest(
            [t[f"speedup{suffix}_interval"] for t in table if t.get(f"speedup{suffix}_interval")]
        )
        summary[f"min_speedup_over_cardinalities{suffix}"] = worst and worst.value
        if worst is not None:
            intervals[f"min_speedup_over_cardinalities{suffix}"] = worst.to_json()
    summary["max_speedup"] = max((t["speedup"] for t in table if t.get("speedup")), default=None)
    summary["intervals"] = intervals
    return summary
