"""Seed 001 (FLIP-140): WordCount in a global window, keyed state vs sorted input.

``N`` records over ``K`` distinct words (``full``: 40,000,000 / 4,000,000, as the seed), counted
once at the end of input by:

* ``rocksdb`` / ``heap`` -- keyBy -> count over keyed state, records in the order Spark's
  exchange delivers them (no sort, as a Flink keyed stream);
* ``sort_group`` -- Spark sorts each partition by (key group, word), the operator counts runs
  in a local variable, no state backend (the seed's "DataSet, no combiner");
* ``sorted`` -- the same sorted input through a single-key state backend (FLIP-140);
* ``spark_sql`` -- Spark's own ``groupBy().count()`` (JVM), the ceiling.

Like for like -- what each side does per record, and what its timer covers:

============  ==================================  ===========================================
side          the same for every Python side      the mechanism compared
============  ==================================  ===========================================
rocksdb       Spark: the input, the key group,    keyed state on RocksDB: get, +1, put
heap          the exchange, Arrow to Python;      keyed state in Python dicts: get, +1, put
sort_group    at the end, one digest per key;     **Spark sorts the partition** by (key
              the collect                         group, word); a run count in a local
sorted                                            **the same sort**; a single-key state
              (timer: the Spark job, submitted    backend: get, +1, put; emit at a run's end
spark_sql     to collected -- the seed's job      (no Python: JVM hash aggregation and a JVM
              time)                               digest; the ceiling, not like for like)
============  ==================================  ===========================================

The headline is the seed's own measure, **job time**, sort included: the seed's 15,410 ms for
sorted input includes its sort, and so does ours. Ratios are time ratios as in the seed's table,
``X_over_Y = job seconds(X) / job seconds(Y)``, taken per round (a round runs every side back to
back over the same input, so a round's ratio cancels what the machine did meanwhile). Each ratio
is the **median of the rounds' ratios** with its bootstrap interval
(:func:`~skewlab.experiments.intervals.median_estimate`; with three rounds it spans their least
and greatest ratio), in ``summary["intervals"]``, beside the rounds' min / median / max. Beside
them, as a breakdown: the operators' CPU seconds (``*_operator_cpu``: the state work, RocksDB's
threads included, without the sort) and their wall seconds (``*_operator_wall``).

A job's time includes its fixed start-up (scheduling, the Python worker, the digest's collect)
on both sides, not subtracted: a cost both sides pay alike pulls a ratio toward 1 and never
amplifies it, the more so the shorter the jobs. Sort-then-group and sorted input share every
step but their operator (the same sort, the same exchange), so their job's ratio lies between 1
and their operators' wall-clock ratio: the chapter's record declares that bound, and a result
that breaks it is a measurement error. RocksDB's and the heap's jobs have no sort, so no such
bound holds between them and sorted input's. Every run's counts are checked against Spark's
``groupBy().count()`` through an exact digest (:class:`skewlab.aggregates.count.CountDigest`);
the sink keeps nothing per key.

Memory: the sorted and the heap strategy run once more at ``K / 100`` and at ``K`` with their
subtasks' Python allocations traced (:mod:`skewlab.engine.memory`), untimed; a subtask's peak
is its own, whatever ran before it in the reused worker. Memory outside Python's allocator
(RocksDB's) is not in it, so rocksdb is not in this comparison.

Seed (integer keys, ms): RocksDB 114,884; Heap 30,126; DataSet 13,810; sorted input 15,410.

Example::

    >>> result = run_experiment("quick", runs=1, key_type="int")      # doctest: +SKIP
    >>> result.summary["headline_measure"], result.summary["rocksdb_over_sorted"] > 1  # doctest: +SKIP
    ('job_seconds', True)
"""  # noqa: E501

from __future__ import annotations

from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import median_estimate
from skewlab.experiments.results import BenchResult, median_of, spread
from skewlab.inputs.wordcount import validate_wordcount
from skewlab.inputs.wordcount import wordcount_input as make_input
from skewlab.strategies.count import COUNT_STRATEGIES, run_count, spark_count

EXPERIMENT = "sorted_input"
STRATEGY_ORDER = ("rocksdb", "heap", "sort_group", "sorted", "spark_sql")
SEED_MS = {
    "int": {"rocksdb": 114_884, "heap": 30_126, "sort_group": 13_810, "sorted": 15_410},
    "string": {"rocksdb": 116_894, "heap": 37_356, "sort_group": 23_032, "sorted": 25_007},
}
#: the second K of the memory comparison is K divided by this
MEMORY_K_DIVISOR = 100
#: the strategies whose traced peak memory is compared at two K
MEMORY_STRATEGIES = ("sorted", "heap")
#: What the headline ratios are computed from: the Spark job's wall seconds.
HEADLINE_MEASURE = "job_seconds"
#: The order each strategy's records reach its operator in (see ``run_count``): the sorted
#: strategies' sort is part of their job.
INPUT_ORDER = {
    "rocksdb": "exchange",
    "heap": "exchange",
    "sort_group": "key",
    "sorted": "key",
    "spark_sql": "exchange",
}
#: The ratios reported, ``name: (numerator strategy, denominator strategy)``.
RATIOS = {
    "rocksdb_over_sorted": ("rocksdb", "sorted"),
    "heap_over_sorted": ("heap", "sorted"),
    "sorted_over_sort_group": ("sorted", "sort_group"),
    "spark_sql_over_sorted": ("spark_sql", "sorted"),
}


def seed_ratios(key_type: str) -> dict[str, float]:
    """The seed's time ratios for ``key_type``.

    Example::

        >>> round(seed_ratios("int")["rocksdb_over_sorted"], 2)
        7.46
    """
    ms = SEED_MS[key_type]
    return {
        "rocksdb_over_sorted": ms["rocksdb"] / ms["sorted"],
        "heap_over_sorted": ms["heap"] / ms["sorted"],
        "sorted_over_sort_group": ms["sorted"] / ms["sort_group"],
    }


#: The headline ratios (summary keys) and the seed's figure for each (integer keys).
HEADLINES: dict[str, float | None] = seed_ratios("int")


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    key_type: str = "int",
    n: int | None = None,
    k: int | None = None,
    memory_k: int | None = None,
    parallelism: int | None = None,
    strategies: tuple[str, ...] | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the FLIP-140 WordCount experiment; see the module doc. Writes nothing.

    Sizes and the strategies timed come from the chapter registry
    (:mod:`skewlab.experiments.chapters`) unless given; the memory comparison traces sorted
    input and the heap whichever strategies are timed.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    n = settings["n"] if n is None else n
    k = settings["k"] if k is None else k
    validate_wordcount(n, k, key_type)
    memory_k = max(1, k // MEMORY_K_DIVISOR) if memory_k is None else memory_k
    validate_wordcount(n, memory_k, key_type)
    strategies = tuple(settings["strategies"] if strategies is None else strategies)
    unknown = [s for s in strategies if s not in COUNT_STRATEGIES or s == "cached"]
    if unknown:
        raise SkewlabInputError(f"unknown strategies {unknown}: use {', '.join(STRATEGY_ORDER)}")

    spark = spark or get_spark()
    rows: list[dict] = []
    memory_strategies = MEMORY_STRATEGIES  # traced whichever sides are timed
    bar = tqdm(
        total=runs * len(strategies) + 2 * len(memory_strategies),
        desc=EXPERIMENT,
        disable=not progress,
    )
    oracles = {}

    def measure(strategy: str, keys: int, run: int, part: str) -> None:
        words = make_input(spark, n, keys, key_type)
        if keys not in oracles:  # the oracle: Spark's own groupBy().count(), as a digest
            oracles[keys] = spark_count(words)[0]
        bar.set_postfix_str(f"{strategy} K={keys:,} ({part})")
        result = run_count(
            words,
            strategy,
            spark=spark,
            parallelism=parallelism,
            sink="digest",
            input_order=INPUT_ORDER[strategy],
            trace_memory=part == "memory",
        )
        row = result.row()
        row.update(
            {
                "experiment": EXPERIMENT,
                "part": part,
                "run": run,
                "k": keys,
                "n": n,
                "input_order": INPUT_ORDER[strategy],
                HEADLINE_MEASURE: result.wall_seconds,
                "digest_matches_oracle": result.digest == oracles[keys],
            }
        )
        rows.append(row)
        bar.update()

    # warm-up (not recorded): Python workers started, every strategy's code path loaded
    warm_input = make_input(spark, 2_000, 200, key_type)
    for strategy in strategies:
        run_count(
            warm_input,
            strategy,
            spark=spark,
            parallelism=parallelism,
            sink="digest",
            input_order=INPUT_ORDER[strategy],
        )
    for run in range(runs):
        for strategy in strategies:
            measure(strategy, k, run, "main")
    for strategy in memory_strategies:
        for keys in (memory_k, k):
            measure(strategy, keys, 0, "memory")
    bar.close()
    return BenchResult(EXPERIMENT, size, rows, summarize(rows, key_type))


def _values(rows, strategy: str, field: str, part: str = "main") -> dict[int, float]:
    """``{run: value}`` of ``strategy``'s rows in ``part``."""
    return {
        r["run"]: r[field]
        for r in rows
        if r["part"] == part and r["strategy"] == strategy and r[field] is not None
    }


def ratio_spread(rows, over: str, under: str, field: str = HEADLINE_MEASURE) -> dict:
    """min / median / max over runs of ``field(over) / field(under)``, each run's pair taken
    from the same round.

    Example::

        >>> rows = [{"part": "main", "run": r, "strategy": s, "job_seconds": v}
        ...         for r, (a, b) in enumerate([(8.0, 2.0), (9.0, 2.0), (6.0, 2.0)])
        ...         for s, v in (("heap", a), ("sorted", b))]
        >>> ratio_spread(rows, "heap", "sorted")
        {'min': 3.0, 'median': 4.0, 'max': 4.5}
    """
    a, b = _values(rows, over, field), _values(rows, under, field)
    return spread(a[run] / b[run] for run in sorted(a) if b.get(run))


def ratio_estimate(rows, over: str, under: str, field: str = HEADLINE_MEASURE):
    """The median of the rounds' ``field(over) / field(under)`` with its bootstrap interval
    (an :class:`~skewlab.experiments.intervals.Estimate`; ``None`` where no round measured
    both).

    Example::

        >>> rows = [{"part": "main", "run": r, "strategy": s, "job_seconds": v}
        ...         for r, (a, b) in enumerate([(8.0, 2.0), (9.0, 2.0), (6.0, 2.0)])
        ...         for s, v in (("heap", a), ("sorted", b))]
        >>> ratio_estimate(rows, "heap", "sorted").text(".1f", "x")
        '4.0x [3.0..4.5], 3 runs'
    """
    a, b = _values(rows, over, field), _values(rows, under, field)
    return median_estimate([a[run] / b[run] for run in sorted(a) if b.get(run)])


def summarize(rows, key_type: str = "int") -> dict:
    """Per strategy: min / median / max of job seconds, operator CPU and wall seconds; the
    seed's ratios of job seconds (the headline) with the operator ratios beside, each the
    median of the rounds' with its interval (``summary["intervals"]``); peak memory."""
    table = []
    for s in STRATEGY_ORDER:
        job = spread(_values(rows, s, HEADLINE_MEASURE).values())
        if job["median"] is None:
            continue
        records = next(r["records"] for r in rows if r["strategy"] == s)
        cpu = spread(_values(rows, s, "operator_cpu_seconds").values())
        wall = spread(_values(rows, s, "operator_seconds").values())
        table.append(
            {
                "strategy": s,
                "key_type": key_type,
                "input_order": INPUT_ORDER[s],
                "job_seconds": job,
                "operator_cpu_seconds": cpu,
                "operator_seconds": wall,
                "job_records_per_second": records / job["median"],
                "peak_memory_bytes": median_of(
                    rows, "peak_memory_bytes", part="memory", strategy=s, k=_main_k(rows)
                ),
                "seed_ms": SEED_MS[key_type].get(s),
            }
        )
    memory: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["part"] == "memory" and r["peak_memory_bytes"] is not None:
            memory.setdefault(r["strategy"], {})[str(r["k"])] = r["peak_memory_bytes"]
    main = [r for r in rows if r["part"] == "main"]
    summary = {
        "headline_measure": HEADLINE_MEASURE,
        "key_type": key_type,
        "runs": max((r["run"] for r in main), default=-1) + 1,
        "n": main[0]["n"] if main else None,
        "k": main[0]["k"] if main else None,
        "seed_ratios": seed_ratios(key_type),
        "peak_memory_bytes_by_k": memory,
        "all_digests_match": all(r["digest_matches_oracle"] for r in rows),
        "by_strategy": table,
    }
    intervals: dict = {}
    for name, (over, under) in RATIOS.items():
        for suffix, field in (
            ("", HEADLINE_MEASURE),
            ("_operator_cpu", "operator_cpu_seconds"),
            ("_operator_wall", "operator_seconds"),
        ):
            if over == "spark_sql" and suffix:
                continue  # no Python operator to time
            ratio = ratio_spread(rows, over, under, field)
            summary[name + suffix] = ratio["median"]
            summary[name + suffix + "_spread"] = ratio
            est = ratio_estimate(rows, over, under, field)
            if est is not None:
                intervals[name + suffix] = est.to_json()
    summary["intervals"] = intervals
    return summary


def _main_k(rows) -> int | None:
    return next((r["k"] for r in rows if r["part"] == "main"), None)
