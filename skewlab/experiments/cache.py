"""Seed 003 (FLIP-325): an LRU cache of objects in front of RocksDB, over the seed's own job.

Input: longs ``0..N-1`` (``N = 2e7`` in ``full``), key ``(x % 500) + 500 * ((x / 1000) % 2)``,
a count per key with one state read and one write per record and every updated count handed to
a (discarding) collector, parallelism 1, a checkpoint every second (dirty cache entries written
to RocksDB, then RocksDB's own checkpoint, which flushes its memtable). Measured: RocksDB
without a cache, and with caches of 250, 500 and 1,000 entries -- the seed's 0%, 50% and 100%
hit ratios. A sweep over cache sizes draws the hit-ratio and throughput curves. Speedups are
ratios of median *operator* throughput: records per CPU second of the operator (the worker
process's CPU time inside the operator calls, RocksDB's own threads included -- the measure
that other processes on a shared machine do not inflate); beside them the same ratio on the
wall clock (as the runtime times operator calls) and of end-to-end throughput (Spark job wall
time).

Seed figures: throughput with the cache is 0.956x / 1.87x / 21.6x of RocksDB alone.

Example::

    >>> result = run_experiment("quick", runs=1)          # doctest: +SKIP
    >>> result.summary["hit_ratio_500"]                   # doctest: +SKIP
    0.5
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from skewlab.aggregates.count import count_digest
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.profiles import profile_settings, resolve_runs
from skewlab.experiments.results import BenchResult
from skewlab.inputs.wordcount import flip325_input, flip325_key
from skewlab.strategies.count import run_count
from skewlab.validation import check_whole

EXPERIMENT = "cache"
SEED_SIZES = (250, 500, 1000)
SEED_HIT_RATIOS = {250: 0.0, 500: 0.5, 1000: 1.0}
SEED_SPEEDUPS = {250: 0.956, 500: 1.87, 1000: 21.6}
CHECKPOINT_INTERVAL_MS = 1000.0


def _check_sizes(sizes: Sequence[int], what: str) -> tuple[int, ...]:
    for size in sizes:
        check_whole("cache size", size, 0)
    if not sizes:
        raise SkewlabInputError(f"{what}: give at least one cache size")
    return tuple(sizes)


def run_experiment(
    profile: str = "quick",
    runs: int | None = None,
    *,
    n: int | None = None,
    sizes: Sequence[int] = SEED_SIZES,
    sweep_sizes: Sequence[int] | None = None,
    sweep_n: int | None = None,
    costs_n: int | None = None,
    parallelism: int | None = None,
    checkpoint_interval_ms: float = CHECKPOINT_INTERVAL_MS,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the FLIP-325 experiment; see the module doc. Writes nothing (the CLI does).

    Sizes come from the profiles table (:mod:`skewlab.experiments.profiles`) unless given;
    ``sweep_sizes=()`` skips the sweep.
    """
    from tqdm.auto import tqdm

    settings = profile_settings(EXPERIMENT, profile)
    runs = resolve_runs(settings, runs)
    n = check_whole("N (records)", settings["n"] if n is None else n, 1)
    sweep_n = check_whole(
        "sweep N (records)", settings["sweep_n"] if sweep_n is None else sweep_n, 1
    )
    costs_n = check_whole(
        "costs N (records; 0 skips the 0%-hit breakdown)",
        settings["costs_n"] if costs_n is None else costs_n,
        0,
    )
    sizes = _check_sizes(sizes, "sizes")
    sweep_sizes = settings["sweep_sizes"] if sweep_sizes is None else sweep_sizes
    sweep = _check_sizes(sweep_sizes, "sweep sizes") if sweep_sizes else ()
    parallelism = 1 if parallelism is None else parallelism  # the seed's job: parallelism 1

    spark = spark or get_spark()
    expected = {
        m: count_digest(_flip325_counts(m, flip325_key)) for m in {n, sweep_n} if m
    }  # the oracle: the key selector applied in plain Python
    rows: list[dict] = []
    total = runs * (1 + len(sizes)) + (len(sweep) + 1 if sweep else 0)
    bar = tqdm(total=total, desc=EXPERIMENT, disable=not progress)

    def measure(records: int, cache: int | None, run: int, part: str) -> None:
        df = flip325_input(spark, records)
        bar.set_postfix_str(f"{part} {'no cache' if cache is None else cache}")
        result = run_count(
            df,
            "rocksdb" if cache is None else "cached",
            spark=spark,
            parallelism=parallelism,
            cache_entries=cache or 0,
            emit="record",
            checkpoint_interval_ms=checkpoint_interval_ms,
            sink="collect",
        )
        row = result.row()
        row.update(
            {
                "experiment": EXPERIMENT,
                "part": part,
                "run": run,
                "cache_size": cache,
                "digest_matches_oracle": result.digest == expected[records],
            }
        )
        rows.append(row)
        bar.update()

    # warm-up (not recorded): Python workers started, code paths loaded, for both backends
    for warm in ("rocksdb", "cached"):
        run_count(flip325_input(spark, 2_000), warm, spark=spark, parallelism=parallelism)
    for run in range(runs):
        for cache in (None, *sizes):
            measure(n, cache, run, "seed")
    if sweep:
        for cache in (None, *sweep):
            measure(sweep_n, cache, 0, "sweep")
    bar.close()
    summary = summarize(rows)
    if costs_n:
        bar.set_postfix_str("0% hits, taken apart")
        summary["zero_hit_costs"] = zero_hit_costs(costs_n, max_entries=min(sizes), runs=runs)
    return BenchResult(EXPERIMENT, profile, rows, summary)


def zero_hit_costs(n: int, *, max_entries: int = 250, runs: int = 3) -> dict:
    """What a record costs at 0% hits, taken apart: the cache's own bookkeeping, and what
    RocksDB pays for writing the evicted key rather than the key it has just read.

    No Spark: the seed's key sequence over ``n`` records, driven straight at the backends
    (median CPU nanoseconds per record of ``runs`` runs each; RocksDB checkpointed every
    second, as in the job):

    * ``bookkeeping_ns`` -- the compiled count loop over an LRU of ``max_entries`` (0% hits)
      minus the same loop without a cache, both with the storage calls doing nothing: what the
      cache itself adds to every record;
    * ``rocksdb_same_key_ns`` / ``rocksdb_evicted_key_ns`` -- RocksDB ``get(k)`` then ``put``
      of the same key ``k`` (what a record does without a cache) against ``put`` of the key
      read ``max_entries`` records earlier (what a 0%-hit cache writes back);
    * ``bookkeeping_share`` -- ``bookkeeping_ns`` over the per-record cost without a cache
      (the seed's whole loss at 0% hits was 4.4%); ``write_locality_share`` -- the extra cost
      of writing the evicted key, over the same.

    Example::

        >>> costs = zero_hit_costs(20_000, runs=1)
        >>> costs["records"], costs["max_entries"], f"{costs['seed_loss_share']:.1%}"
        (20000, 250, '4.4%')
    """
    import gc
    import time

    from skewlab.operators.count_loops import keyed_count
    from skewlab.state import create_backend
    from skewlab.state.key_groups import assign_to_key_group
    from skewlab.state.value_state import CallbackValueState, WriteBackLru

    group_of = {k: assign_to_key_group(k, 128) for k in range(1000)}
    keys = [flip325_key(x) for x in range(n)]
    groups = [group_of[k] for k in keys]

    def nothing_get(key_group, key):
        return None

    def nothing_put(key_group, key, value):
        return None

    def loop_ns(make_state) -> float:
        state = make_state()
        began = time.process_time_ns()
        keyed_count(keys, groups, state)
        return (time.process_time_ns() - began) / n

    def rocksdb_ns(lag: int) -> float:
        written_keys = keys[-lag:] + keys[:-lag] if lag else keys
        written_groups = groups[-lag:] + groups[:-lag] if lag else groups
        accesses = list(zip(keys, groups, written_keys, written_groups, strict=True))
        interval_s = CHECKPOINT_INTERVAL_MS / 1e3
        with create_backend("rocksdb") as backend:
            state = backend.value_state()
            get, put = state.get, state.put
            began = time.process_time_ns()
            last_checkpoint = time.perf_counter()
            for lo in range(0, n, 10_000):
                for key, group, w_key, w_group in accesses[lo : lo + 10_000]:
                    get(group, key)
                    put(w_group, w_key, 1)
                if time.perf_counter() - last_checkpoint >= interval_s:  # as the job does
                    backend.checkpoint()
                    last_checkpoint = time.perf_counter()
            return (time.process_time_ns() - began) / n

    measured: dict[str, list[float]] = {k: [] for k in ("plain", "lru", "same", "evicted")}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            measured["plain"].append(loop_ns(lambda: CallbackValueState(nothing_get, nothing_put)))
            measured["lru"].append(
                loop_ns(lambda: WriteBackLru(max_entries, nothing_get, nothing_put))
            )
            measured["same"].append(rocksdb_ns(0))
            measured["evicted"].append(rocksdb_ns(max_entries))
    finally:
        if gc_was_enabled:
            gc.enable()
    m = {k: statistics.median(v) for k, v in measured.items()}
    bookkeeping = m["lru"] - m["plain"]
    per_record = m["same"]
    return {
        "records": n,
        "max_entries": max_entries,
        "runs": runs,
        "bookkeeping_ns": bookkeeping,
        "rocksdb_same_key_ns": m["same"],
        "rocksdb_evicted_key_ns": m["evicted"],
        "bookkeeping_share": bookkeeping / per_record,
        "write_locality_share": (m["evicted"] - m["same"]) / per_record,
        "seed_loss_share": 1 - SEED_SPEEDUPS[250],
    }


def _flip325_counts(n: int, key) -> dict[int, int]:
    # closed form of the counts over 0..n-1 would do; a loop over 2e7 longs takes seconds,
    # so count whole 1,000-record blocks at once and only the tail record by record
    blocks, tail = divmod(n, 1000)
    counts: dict[int, int] = {}
    even, odd = (blocks + 1) // 2, blocks // 2
    for k in range(500):
        if even:
            counts[k] = 2 * even
        if odd:
            counts[500 + k] = 2 * odd
    for x in range(blocks * 1000, blocks * 1000 + tail):
        counts[key(x)] = counts.get(key(x), 0) + 1
    return counts


def _median(rows, part: str, cache: int | None, field: str) -> float | None:
    values = [
        r[field]
        for r in rows
        if r["part"] == part and r["cache_size"] == cache and r[field] is not None
    ]
    return statistics.median(values) if values else None


def summarize(rows) -> dict:
    """Hit ratios and speedups at the seed's sizes, plus the sweep's curve.

    ``speedup`` is of operator CPU throughput (records / CPU seconds of the operator);
    ``speedup_wall`` of operator wall-clock throughput; ``speedup_e2e`` of Spark job throughput.
    """
    sizes = sorted({r["cache_size"] for r in rows if r["part"] == "seed" and r["cache_size"]})
    measures = {
        "speedup": "operator_cpu_records_per_second",
        "speedup_wall": "operator_records_per_second",
        "speedup_e2e": "e2e_records_per_second",
    }
    bases = {name: _median(rows, "seed", None, field) for name, field in measures.items()}
    table = []
    for size in [None, *sizes]:
        entry = {
            "cache_size": size,
            "hit_ratio": _median(rows, "seed", size, "hit_ratio"),
            "state_cache_hit_ratio": _median(rows, "seed", size, "state_cache_hit_ratio"),
            "seed_hit_ratio": SEED_HIT_RATIOS.get(size) if size else None,
            "seed_speedup": SEED_SPEEDUPS.get(size) if size else 1.0,
        }
        for name, field in measures.items():
            value = _median(rows, "seed", size, field)
            entry[field] = value
            entry[name] = value / bases[name] if value and bases[name] else None
        table.append(entry)
    by_size = {t["cache_size"]: t for t in table}
    summary: dict = {
        "runs": max((r["run"] for r in rows if r["part"] == "seed"), default=-1) + 1,
        "records": max((r["records"] for r in rows if r["part"] == "seed"), default=0),
    }
    for size in SEED_SIZES:
        summary[f"hit_ratio_{size}"] = by_size.get(size, {}).get("hit_ratio")
    for name in measures:
        for size in SEED_SIZES:
            key = f"speedup_{size}" if name == "speedup" else f"{name}_{size}"
            summary[key] = by_size.get(size, {}).get(name)
    summary["all_digests_match"] = all(r["digest_matches_oracle"] for r in rows)
    summary["seed_speedups"] = {str(k): v for k, v in SEED_SPEEDUPS.items()}
    summary["by_cache_size"] = table
    sweep_base = _median(rows, "sweep", None, "operator_cpu_records_per_second")
    summary["sweep"] = [
        {
            "cache_size": r["cache_size"],
            "hit_ratio": r["hit_ratio"],
            "operator_cpu_records_per_second": r["operator_cpu_records_per_second"],
            "operator_records_per_second": r["operator_records_per_second"],
            "speedup": r["operator_cpu_records_per_second"] / sweep_base
            if sweep_base and r["operator_cpu_records_per_second"]
            else None,
        }
        for r in rows
        if r["part"] == "sweep"
    ]
    return summary


def _fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def format_summary(result: BenchResult) -> str:
    """The measured table beside the seed's figures."""
    s = result.summary
    lines = [
        f"FLIP-325 count job, {s['records']:,} records, parallelism 1, checkpoint every 1 s, "
        f"median of {s['runs']} run(s)",
        f"{'cache':>8}  {'hit ratio':>9}  {'seed':>5}  {'CPU rec/s':>10}  {'speedup':>8}  "
        f"{'seed':>6}  {'wall-clock op':>13}  {'end-to-end':>10}",
    ]
    for t in s["by_cache_size"]:
        size = "none" if t["cache_size"] is None else f"{t['cache_size']:,}"
        lines.append(
            f"{size:>8}  {_fmt(t['hit_ratio'], '9.1%')}  {_fmt(t['seed_hit_ratio'], '5.0%'):>5}  "
            f"{_fmt(t['operator_cpu_records_per_second'], '10,.0f')}  "
            f"{_fmt(t['speedup'], '7.2f')}x  {_fmt(t['seed_speedup'], '5.3g')}x  "
            f"{_fmt(t['speedup_wall'], '12.2f')}x  {_fmt(t['speedup_e2e'], '9.2f')}x"
        )
    if s["sweep"]:
        points = ", ".join(
            f"{p['cache_size'] if p['cache_size'] is not None else 'none'}: "
            f"{_fmt(p['hit_ratio'], '.0%', 'n/a')}"
            for p in s["sweep"]
        )
        lines.append(f"sweep (cache size: hit ratio): {points}")
    lines.append(
        "speedup: operator CPU throughput over RocksDB alone (the headline); wall-clock op: "
        "the same on the wall clock; end-to-end: Spark job throughput"
    )
    costs = s.get("zero_hit_costs")
    if costs:
        lines.append(
            f"0% hits taken apart ({costs['records']:,} records, no Spark): the cache's "
            f"bookkeeping {costs['bookkeeping_ns']:.0f} ns/record = "
            f"{costs['bookkeeping_share']:.1%} of RocksDB alone "
            f"({costs['rocksdb_same_key_ns']:,.0f} ns; the seed's whole loss: "
            f"{costs['seed_loss_share']:.1%}); RocksDB writing the evicted key instead of the "
            f"key just read: {costs['rocksdb_evicted_key_ns'] - costs['rocksdb_same_key_ns']:+.0f}"
            f" ns/record ({costs['write_locality_share']:+.1%})"
        )
    lines.append(f"all counts match the oracle: {s['all_digests_match']}")
    return "\n".join(lines)
