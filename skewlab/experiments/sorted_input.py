"""Seed 001 (FLIP-140): WordCount in a global window, keyed state vs sorted input.

``N`` records over ``K`` distinct words (``full``: 40,000,000 / 4,000,000, as the seed), counted
once at the end of input by:

* ``rocksdb`` / ``heap`` -- keyBy -> count over keyed state, records in the order Spark's
  exchange delivers them (no sort, as a Flink keyed stream);
* ``sort_group`` -- Spark sorts each partition by (key group, word), the operator counts runs
  in a local variable, no state backend (the seed's "DataSet, no combiner");
* ``sorted`` -- the same sorted input through a single-key state backend (FLIP-140);
* ``spark_sql`` -- Spark's own ``groupBy().count()`` (JVM), the ceiling.

Every run's counts are checked against Spark's ``groupBy().count()`` through an exact digest
(see :class:`skewlab.aggregates.count.CountDigest`); the sink keeps nothing per key, so the memory a
run needs is its operator's. Ratios are time ratios ``X_over_Y = seconds(X) / seconds(Y)`` as in
the seed's table: of the operators' CPU seconds (the state work: the worker processes' CPU time
inside the operator calls, RocksDB's threads included -- the measure other processes on a shared
machine do not inflate); as ``*_wall`` of the same calls on the wall clock (as the runtime times
them) and, as ``*_e2e``, of Spark job wall seconds (routing, shuffle, sort, Python transfer
included).
``spark_sql`` has no Python operator: its ratio is of wall seconds. For the memory comparison the
sorted and the heap strategy run at ``K / 100`` and then at ``K``, back to back: peak memory is
a subtask worker's growth over its own starting point.

Seed (integer keys, ms): RocksDB 114,884; Heap 30,126; DataSet 13,810; sorted input 15,410.

Example::

    >>> result = run_experiment("quick", runs=1, key_type="int")      # doctest: +SKIP
    >>> result.summary["rocksdb_over_sorted"] > 1                     # doctest: +SKIP
    True
"""

from __future__ import annotations

import statistics

from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.profiles import profile_settings, resolve_runs
from skewlab.experiments.results import BenchResult
from skewlab.inputs.wordcount import validate_wordcount
from skewlab.inputs.wordcount import wordcount_input as make_input
from skewlab.strategies.count import COUNT_STRATEGIES, run_count, spark_count

EXPERIMENT = "sorted"
STRATEGY_ORDER = ("rocksdb", "heap", "sort_group", "sorted", "spark_sql")
SEED_MS = {
    "int": {"rocksdb": 114_884, "heap": 30_126, "sort_group": 13_810, "sorted": 15_410},
    "string": {"rocksdb": 116_894, "heap": 37_356, "sort_group": 23_032, "sorted": 25_007},
}
#: the second K of the memory comparison is K divided by this
MEMORY_K_DIVISOR = 100


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


def run_experiment(
    profile: str = "quick",
    runs: int | None = None,
    *,
    key_type: str = "int",
    n: int | None = None,
    k: int | None = None,
    memory_k: int | None = None,
    parallelism: int | None = None,
    strategies: tuple[str, ...] = STRATEGY_ORDER,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the FLIP-140 WordCount experiment; see the module doc. Writes nothing.

    Sizes come from the profiles table (:mod:`skewlab.experiments.profiles`) unless given.
    """
    from tqdm.auto import tqdm

    settings = profile_settings(EXPERIMENT, profile)
    runs = resolve_runs(settings, runs)
    n = settings["n"] if n is None else n
    k = settings["k"] if k is None else k
    validate_wordcount(n, k, key_type)
    memory_k = max(1, k // MEMORY_K_DIVISOR) if memory_k is None else memory_k
    validate_wordcount(n, memory_k, key_type)
    unknown = [s for s in strategies if s not in COUNT_STRATEGIES or s == "cached"]
    if unknown:
        raise SkewlabInputError(f"unknown strategies {unknown}: use {', '.join(STRATEGY_ORDER)}")

    spark = spark or get_spark()
    rows: list[dict] = []
    memory_strategies = [s for s in ("sorted", "heap") if s in strategies]
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
        bar.set_postfix_str(f"{strategy} K={keys:,}")
        result = run_count(
            words,
            strategy,
            spark=spark,
            parallelism=parallelism,
            sink="digest",
            input_order="key" if strategy in ("sort_group", "sorted") else "exchange",
        )
        row = result.row()
        row.update(
            {
                "experiment": EXPERIMENT,
                "part": part,
                "run": run,
                "k": keys,
                "n": n,
                # the headline measure: operator CPU seconds (Spark's own: its job's wall time)
                "seconds": result.operator_cpu_seconds
                if result.operator_cpu_seconds is not None
                else result.wall_seconds,
                "records_per_second": result.operator_cpu_records_per_second
                or result.e2e_records_per_second,
                "digest_matches_oracle": result.digest == oracles[keys],
            }
        )
        rows.append(row)
        bar.update()

    # warm-up (not recorded): Python workers started, every strategy's code path loaded
    warm_input = make_input(spark, 2_000, 200, key_type)
    for strategy in strategies:
        run_count(warm_input, strategy, spark=spark, parallelism=parallelism, sink="digest")
    for run in range(runs):
        for strategy in strategies:
            measure(strategy, k, run, "main")
    # the memory comparison: each strategy at the small K, then at K, back to back (a Python
    # worker is reused across jobs and peak memory is its growth over where it started)
    for strategy in memory_strategies:
        for keys in (memory_k, k):
            measure(strategy, keys, 0, "memory")
    bar.close()
    return BenchResult(EXPERIMENT, profile, rows, summarize(rows, key_type))


def _median(rows, strategy: str, field: str, part: str = "main") -> float | None:
    values = [
        r[field]
        for r in rows
        if r["part"] == part and r["strategy"] == strategy and r[field] is not None
    ]
    return statistics.median(values) if values else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def summarize(rows, key_type: str = "int") -> dict:
    """Median seconds per strategy, the seed's ratios (operator and end-to-end), peak memory."""
    ops = {s: _median(rows, s, "operator_seconds") for s in STRATEGY_ORDER}
    wall = {s: _median(rows, s, "wall_seconds") for s in STRATEGY_ORDER}
    cpu = {s: _median(rows, s, "operator_cpu_seconds") for s in STRATEGY_ORDER}
    table = []
    for s in STRATEGY_ORDER:
        if wall[s] is None:
            continue
        records = next(r["records"] for r in rows if r["strategy"] == s)
        table.append(
            {
                "strategy": s,
                "key_type": key_type,
                "operator_seconds": ops[s],
                "operator_cpu_seconds": cpu[s],
                "wall_seconds": wall[s],
                "operator_records_per_second": _ratio(records, ops[s]),
                "operator_cpu_records_per_second": _ratio(records, cpu[s]),
                "e2e_records_per_second": _ratio(records, wall[s]),
                "peak_memory_bytes": _median(rows, s, "peak_memory_bytes"),
                "seed_ms": SEED_MS[key_type].get(s),
            }
        )
    memory = {}
    for r in rows:
        if r["part"] == "memory" and r["peak_memory_bytes"] is not None:
            memory.setdefault(r["strategy"], {})[str(r["k"])] = r["peak_memory_bytes"]
    main = [r for r in rows if r["part"] == "main"]
    return {
        "key_type": key_type,
        "runs": max((r["run"] for r in main), default=-1) + 1,
        "n": main[0]["n"] if main else None,
        "k": main[0]["k"] if main else None,
        "rocksdb_over_sorted": _ratio(cpu["rocksdb"], cpu["sorted"]),
        "heap_over_sorted": _ratio(cpu["heap"], cpu["sorted"]),
        "sorted_over_sort_group": _ratio(cpu["sorted"], cpu["sort_group"]),
        "spark_sql_over_sorted": _ratio(wall["spark_sql"], wall["sorted"]),
        "rocksdb_over_sorted_wall": _ratio(ops["rocksdb"], ops["sorted"]),
        "heap_over_sorted_wall": _ratio(ops["heap"], ops["sorted"]),
        "sorted_over_sort_group_wall": _ratio(ops["sorted"], ops["sort_group"]),
        "rocksdb_over_sorted_e2e": _ratio(wall["rocksdb"], wall["sorted"]),
        "heap_over_sorted_e2e": _ratio(wall["heap"], wall["sorted"]),
        "sorted_over_sort_group_e2e": _ratio(wall["sorted"], wall["sort_group"]),
        "seed_ratios": seed_ratios(key_type),
        "peak_memory_bytes_by_k": memory,
        "all_digests_match": all(r["digest_matches_oracle"] for r in rows),
        "by_strategy": table,
    }


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_summary(result: BenchResult) -> str:
    """The measured table beside the seed's."""
    s = result.summary
    lines = [
        f"WordCount, {s['n']:,} records, {s['k']:,} {s['key_type']} keys, "
        f"median of {s['runs']} run(s)",
        f"{'strategy':>10}  {'op CPU s':>8}  {'op wall s':>9}  {'job s':>6}  "
        f"{'op CPU rec/s':>12}  {'peak MiB':>8}  {'seed ms':>8}",
    ]
    for t in s["by_strategy"]:
        mem = t["peak_memory_bytes"]
        lines.append(
            f"{t['strategy']:>10}  {_fmt(t['operator_cpu_seconds'], '8.2f')}  "
            f"{_fmt(t['operator_seconds'], '9.2f')}  {t['wall_seconds']:>6.2f}  "
            f"{_fmt(t['operator_cpu_records_per_second'], '12,.0f')}  "
            f"{_fmt(None if mem is None else mem / 2**20, '8.1f')}  "
            f"{_fmt(t['seed_ms'], '8,')}"
        )
    seed = s["seed_ratios"]
    for name in ("rocksdb_over_sorted", "heap_over_sorted", "sorted_over_sort_group"):
        lines.append(
            f"{name}: {_fmt(s[name], '.2f')} (operator CPU; wall-clock operator "
            f"{_fmt(s[name + '_wall'], '.2f')}, job {_fmt(s[name + '_e2e'], '.2f')}; "
            f"seed {seed[name]:.2f})"
        )
    lines.append(f"spark_sql_over_sorted (wall): {_fmt(s['spark_sql_over_sorted'], '.2f')}")
    for strategy, by_k in s["peak_memory_bytes_by_k"].items():
        lines.append(
            f"peak memory of {strategy}: "
            + ", ".join(f"K={int(k):,}: {v / 2**20:.1f} MiB" for k, v in by_k.items())
        )
    lines.append(f"all counts match Spark's groupBy().count(): {s['all_digests_match']}")
    return "\n".join(lines)
