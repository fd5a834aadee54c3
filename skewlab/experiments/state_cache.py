"""Seed 003 (FLIP-325): an LRU cache of objects in front of RocksDB, over the seed's own job.

Input: longs ``0..N-1`` (``N = 2e7`` in ``full``), key ``(x % 500) + 500 * ((x / 1000) % 2)``,
a count per key with one state read and one write per record, every updated count emitted
(``output.collect((key, count))``), parallelism 1, a checkpoint every second (dirty cache
entries written to RocksDB, then RocksDB's own checkpoint, which flushes its memtable).
Measured, back to back in every round: RocksDB without a cache; FLIP-325's LRU of 250, 500 and
1,000 entries (the seed's 0%, 50% and 100% hit ratios), which writes each evicted dirty entry
back on its own; and skewlab's **batched write-back** at the same sizes, which writes evicted
dirty entries back ``write_batch`` at a time, in key order, in one RocksDB write batch (at most
``write_batch`` entries wait; a lookup of a waiting key takes it back). A sweep over cache sizes
draws the hit-ratio and throughput curves.

Like for like -- what each side does per record, and what its timer covers:

=============  ========================================  ====================================
side           the same for every side                   the mechanism compared
=============  ========================================  ====================================
rocksdb        Spark: the input, the key selector, the   RocksDB get and put of the key
               key group, Arrow to Python; per record:
lru            the compiled count loop, +1, the          LRU lookup; a miss reads RocksDB;
               emission of (key, count) into the         an evicted dirty entry is one
               collector, an Arrow batch to the sink;    RocksDB put
lru_batched    a checkpoint each second; the final       the same LRU; evicted dirty entries
               counts to the sink (timer: the Spark      are written N at a time, one write
               job, submitted to collected)              batch, in key order
=============  ========================================  ====================================

The headline is the seed's own measure, **job throughput**: records over the Spark job's wall
time. A round runs every side back to back over the same input, so a round's ratio of a side to
that round's RocksDB run cancels what the machine did meanwhile (another process's load drifts
between rounds, not within a pair of runs seconds apart). Each speedup is the **median of the
rounds' ratios** with its bootstrap interval
(:func:`~skewlab.experiments.intervals.median_estimate`; with three rounds it spans their least
and greatest ratio), stored in ``summary["intervals"]``; the min / median / max of the rounds
stand beside it. Every ratio of
this chapter is taken that way, the operators' ones and the batched write-back's over FLIP-325's
LRU (``batched_over_lru_<entries>``) included.

The job's time includes its fixed start-up (scheduling the job, the Python worker, the collect)
on both sides; it is not subtracted. A cost both sides pay alike dilutes a ratio toward 1 and
never amplifies it, and the shorter the jobs (a quick run's), the nearer 1 it pulls the job's
ratio. Beside the headline: the same ratio of operator throughput per CPU second
(``operator_speedup_*``: the state work, RocksDB's threads included, without Spark's share) and
per wall-clock second (``operator_wall_speedup_*``). The job's time holds the operators' wall
time and work both sides share, so the job's ratio lies between 1 and the operators' wall-clock
ratio: the chapter's record declares that bound (``bounds``) and a result that breaks it is a
measurement error. Every run's counts are checked against the key selector applied in plain
Python, and every run's emissions against its final counts (their sum is ``sum(n (n + 1) / 2)``).

The batched write-back holds up to ``max_entries + write_batch`` values. With the default
``write_batch`` of 128 that stays below the 500 distinct keys between two accesses of a key at
250 entries, so it buys no hits there: its hit ratios are the seed's (the summary shows them).

Seed figures: throughput with the cache is 0.956x / 1.87x / 21.6x of RocksDB alone.

Example::

    >>> result = run_experiment("quick", runs=1)          # doctest: +SKIP
    >>> result.summary["hit_ratio_500"], result.summary["headline_measure"]  # doctest: +SKIP
    (0.5, 'job_records_per_second')
"""

from __future__ import annotations

from collections.abc import Sequence

from skewlab.aggregates.count import count_digest
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.cache_policy import TRACES, run_policies, summarize_policies
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import median_estimate
from skewlab.experiments.results import BenchResult, spread
from skewlab.inputs.wordcount import flip325_input, flip325_key
from skewlab.state.lru_cache import CACHE_POLICIES
from skewlab.strategies.count import run_count
from skewlab.validation import check_choice, check_number, check_whole

EXPERIMENT = "state_cache"
SEED_SIZES = (250, 500, 1000)
SEED_HIT_RATIOS = {250: 0.0, 500: 0.5, 1000: 1.0}
SEED_SPEEDUPS = {250: 0.956, 500: 1.87, 1000: 21.6}
#: The headline ratios (summary keys) and the seed's figure for each: FLIP-325's LRU writes back
#: one entry at a time, so the batched write-back has no published figure.
HEADLINES = {
    **{f"speedup_{size}": SEED_SPEEDUPS[size] for size in SEED_SIZES},
    **{f"speedup_{size}_batched": None for size in SEED_SIZES},
}
CHECKPOINT_INTERVAL_MS = 1000.0
#: Evicted dirty entries per write batch of the batched write-back (see the module doc).
DEFAULT_WRITE_BATCH = 128
#: What the headline speedups are computed from: records over the Spark job's wall time.
HEADLINE_MEASURE = "job_records_per_second"
#: The sides, in display order: no cache, FLIP-325's LRU, the batched write-back.
SIDES = ("rocksdb", "lru", "lru_batched")
#: Beside the headline: (summary key prefix, row field).
BREAKDOWN = {
    "operator_speedup": "operator_cpu_records_per_second",
    "operator_wall_speedup": "operator_records_per_second",
}
#: The batched write-back over FLIP-325's LRU of the same size, round by round: (summary key
#: prefix, row field) -- the job's ratio and the operators' beside it.
BATCHED_OVER_LRU = {
    "batched_over_lru": HEADLINE_MEASURE,
    "operator_batched_over_lru": "operator_cpu_records_per_second",
    "operator_wall_batched_over_lru": "operator_records_per_second",
}
#: The 0%-hit breakdown's predictions lifted into the summary (summary key -> its
#: ``zero_hit_costs`` field), each with its interval over the breakdown's runs.
PREDICTED = {
    "zero_hit_predicted_loss": "predicted_loss_share",
    "zero_hit_predicted_batched_change": "predicted_batched_change_share",
}


def _check_sizes(sizes: Sequence[int], what: str) -> tuple[int, ...]:
    for size in sizes:
        check_whole("cache size", size, 1)
    if not sizes:
        raise SkewlabInputError(f"{what}: give at least one cache size")
    return tuple(sizes)


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    n: int | None = None,
    sizes: Sequence[int] = SEED_SIZES,
    batched_sizes: Sequence[int] | None = None,
    sweep_sizes: Sequence[int] | None = None,
    sweep_n: int | None = None,
    costs_n: int | None = None,
    parallelism: int | None = None,
    checkpoint_interval_ms: float = CHECKPOINT_INTERVAL_MS,
    write_batch: int = DEFAULT_WRITE_BATCH,
    cache_policy: str = "lru",
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the FLIP-325 experiment; see the module doc. Writes nothing (the CLI does).

    Sizes come from the chapter registry (:mod:`skewlab.experiments.chapters`) unless given;
    ``batched_sizes``: the cache sizes the batched write-back runs at (of ``sizes``; ``()``: it
    does not run), ``sweep_sizes=()`` skips the sweep, ``costs_n=0`` the 0%-hit breakdown.
    ``cache_policy="tinylfu"`` adds the policy part (:mod:`skewlab.experiments.cache_policy`):
    LRU against W-TinyLFU on FLIP-325's keys and on Zipf streams, OPT beside.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
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
    batched = settings["batched_sizes"] if batched_sizes is None else batched_sizes
    batched = _check_sizes(batched, "batched sizes") if batched else ()
    sweep_sizes = settings["sweep_sizes"] if sweep_sizes is None else sweep_sizes
    sweep = _check_sizes(sweep_sizes, "sweep sizes") if sweep_sizes else ()
    write_batch = check_whole("write batch (evictions per write-back)", write_batch, 2)
    check_choice("cache policy (--cache-policy)", cache_policy, CACHE_POLICIES)
    policy_n = check_whole("policy N (records per trace)", settings["policy_n"], 1)
    check_number("checkpoint interval (ms)", checkpoint_interval_ms, above=0)
    parallelism = 1 if parallelism is None else parallelism  # the seed's job: parallelism 1

    spark = spark or get_spark()
    expected = {
        m: count_digest(_flip325_counts(m, flip325_key)) for m in {n, sweep_n} if m
    }  # the oracle: the key selector applied in plain Python
    rows: list[dict] = []
    plan = [("rocksdb", None)] + [
        (side, s) for s in sizes for side in ("lru", "lru_batched") if side == "lru" or s in batched
    ]
    warm = list(dict.fromkeys(side for side, _ in plan))
    total = len(warm) + runs * len(plan) + (len(sweep) + 1 if sweep else 0)
    if cache_policy != "lru":
        total += runs * len(TRACES) * (1 + len(CACHE_POLICIES) * len(sizes))
    bar = tqdm(total=total, desc=EXPERIMENT, disable=not progress)

    def count(records: int, side: str, cache: int | None):
        return run_count(
            flip325_input(spark, records),
            "rocksdb" if side == "rocksdb" else "cached",
            spark=spark,
            parallelism=parallelism,
            cache_entries=cache or 1,
            write_batch=write_batch if side == "lru_batched" else 1,
            emit="record",
            checkpoint_interval_ms=checkpoint_interval_ms,
            sink="collect",
        )

    def measure(records: int, side: str, cache: int | None, run: int, part: str) -> None:
        bar.set_postfix_str(f"{part} {side} {cache or ''}")
        result = count(records, side, cache)
        rows.append(_row(result, side, cache, run, part, write_batch, expected[records]))
        bar.update()

    # warm-up (not recorded): Python workers started, code paths loaded, for every side
    for side in warm:
        count(2_000, side, min(sizes))
        bar.update()
    for run in range(runs):
        for side, cache in plan:
            measure(n, side, cache, run, "seed")
    if sweep:
        for side, cache in [("rocksdb", None)] + [("lru", s) for s in sweep]:
            measure(sweep_n, side, cache, 0, "sweep")
    if cache_policy != "lru":
        rows += run_policies(
            spark,
            n=policy_n,
            n_keys=settings["policy_keys"],
            sizes=sizes,
            runs=runs,
            parallelism=parallelism,
            checkpoint_interval_ms=checkpoint_interval_ms,
            bar=bar,
        )
    bar.close()
    summary = summarize(rows)
    summary["cache_policy"] = cache_policy
    if cache_policy != "lru":
        policies = summarize_policies(rows)
        summary["intervals"].update(policies.pop("intervals"))
        summary.update(policies)
        summary.update(policy_n=policy_n, policy_keys=settings["policy_keys"])
    summary["write_batch"] = write_batch
    if costs_n:
        costs = zero_hit_costs(costs_n, max_entries=min(sizes), write_batch=write_batch, runs=runs)
        summary["zero_hit_costs"] = costs
        for key, name in PREDICTED.items():
            summary[key] = costs[name]
            summary["intervals"][key] = costs["intervals"][name]
    return BenchResult(EXPERIMENT, size, rows, summary)


def _row(result, side, cache, run, part, write_batch, expected) -> dict:
    row = result.row()
    row.update(
        {
            "experiment": EXPERIMENT,
            "part": part,
            "run": run,
            "side": side,
            "cache_size": cache,
            "write_batch": write_batch if side == "lru_batched" else (1 if cache else None),
            "job_seconds": result.wall_seconds,
            HEADLINE_MEASURE: result.e2e_records_per_second,
            "digest_matches_oracle": result.digest == expected,
        }
    )
    return row


def zero_hit_costs(
    n: int, *, max_entries: int = 250, write_batch: int = DEFAULT_WRITE_BATCH, runs: int = 3
) -> dict:
    """What a record costs at 0% hits, taken apart: the cache's own bookkeeping, and what
    RocksDB pays for writing the evicted key rather than the key it has just read -- one at a
    time (FLIP-325) and ``write_batch`` at a time (the batched write-back).

    No Spark: the seed's key sequence over ``n`` records, driven straight at the backends
    (median CPU nanoseconds per record of ``runs`` runs each; RocksDB checkpointed every
    second, as in the job):

    * ``bookkeeping_ns`` / ``bookkeeping_batched_ns`` -- the compiled count loop over an LRU of
      ``max_entries`` (0% hits; one-at-a-time or batched) minus the same loop without a
      cache, the storage calls doing nothing: what the cache itself adds to every record;
    * ``rocksdb_same_key_ns`` / ``rocksdb_evicted_key_ns`` / ``rocksdb_evicted_batched_ns``
      -- RocksDB ``get(k)`` then ``put`` of the same key ``k`` (a record without a cache)
      against ``put`` of the key read ``max_entries`` records earlier (a 0%-hit cache's
      write-back), and against those keys written ``write_batch`` at a time in one batch;
    * ``*_share`` -- each, over the per-record cost without a cache (the seed's whole loss at
      0% hits was 4.4%);
    * the predictions: ``predicted_loss_share`` -- bookkeeping plus the write-back's locality,
      what the parts add to a record at 0% hits with FLIP-325's LRU; ``predicted_batched_loss_
      share`` the same with the batched write-back; ``predicted_batched_change_share`` the
      second minus the first (below 0: the parts predict the batched write-back cheaper). Each
      is the median of the runs' own sums (a run measures every part back to back), with its
      bootstrap interval over the runs in ``intervals``.

    Example::

        >>> costs = zero_hit_costs(20_000, runs=1)
        >>> costs["records"], costs["max_entries"], f"{costs['seed_loss_share']:.1%}"
        (20000, 250, '4.4%')
        >>> sorted(costs["intervals"])
        ['predicted_batched_change_share', 'predicted_batched_loss_share', 'predicted_loss_share']
    """
    import gc
    import statistics
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

    def nothing_put_all(entries):
        return None

    def loop_ns(make_state) -> float:
        state = make_state()
        began = time.process_time_ns()
        keyed_count(keys, groups, state)
        return (time.process_time_ns() - began) / n

    def rocksdb_ns(lag: int, batch: int = 1) -> float:
        written_keys = keys[-lag:] + keys[:-lag] if lag else keys
        written_groups = groups[-lag:] + groups[:-lag] if lag else groups
        interval_s = CHECKPOINT_INTERVAL_MS / 1e3
        with create_backend("rocksdb") as backend:
            state = backend.value_state()
            get, put, put_all = state.get, state.put, backend.put_all
            began = time.process_time_ns()
            last_checkpoint = time.perf_counter()
            for lo in range(0, n, batch if batch > 1 else 10_000):
                hi = min(n, lo + (batch if batch > 1 else 10_000))
                if batch > 1:
                    for i in range(lo, hi):
                        get(groups[i], keys[i])
                    put_all((written_groups[i], written_keys[i], 1) for i in range(lo, hi))
                else:
                    for i in range(lo, hi):
                        get(groups[i], keys[i])
                        put(written_groups[i], written_keys[i], 1)
                if time.perf_counter() - last_checkpoint >= interval_s:  # as the job does
                    backend.checkpoint()
                    last_checkpoint = time.perf_counter()
            return (time.process_time_ns() - began) / n

    measured: dict[str, list[float]] = {
        k: [] for k in ("plain", "lru", "lru_batched", "same", "evicted", "evicted_batched")
    }
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            measured["plain"].append(loop_ns(lambda: CallbackValueState(nothing_get, nothing_put)))
            measured["lru"].append(
                loop_ns(lambda: WriteBackLru(max_entries, nothing_get, nothing_put))
            )
            measured["lru_batched"].append(
                loop_ns(
                    lambda: WriteBackLru(
                        max_entries, nothing_get, nothing_put, nothing_put_all, write_batch
                    )
                )
            )
            measured["same"].append(rocksdb_ns(0))
            measured["evicted"].append(rocksdb_ns(max_entries))
            measured["evicted_batched"].append(rocksdb_ns(max_entries, write_batch))
    finally:
        if gc_was_enabled:
            gc.enable()
    m = {k: statistics.median(v) for k, v in measured.items()}
    per_record = m["same"]
    costs = {
        "records": n,
        "max_entries": max_entries,
        "write_batch": write_batch,
        "runs": runs,
        "bookkeeping_ns": m["lru"] - m["plain"],
        "bookkeeping_batched_ns": m["lru_batched"] - m["plain"],
        "rocksdb_same_key_ns": m["same"],
        "rocksdb_evicted_key_ns": m["evicted"],
        "rocksdb_evicted_batched_ns": m["evicted_batched"],
        "seed_loss_share": 1 - SEED_SPEEDUPS[250],
    }
    costs["bookkeeping_share"] = costs["bookkeeping_ns"] / per_record
    costs["bookkeeping_batched_share"] = costs["bookkeeping_batched_ns"] / per_record
    costs["write_locality_share"] = (m["evicted"] - m["same"]) / per_record
    costs["write_locality_batched_share"] = (m["evicted_batched"] - m["same"]) / per_record
    loss, batched = [], []
    for i in range(runs):  # each run's parts, measured back to back, summed
        same = measured["same"][i]
        loss.append((measured["lru"][i] - measured["plain"][i] + measured["evicted"][i] - same)
                    / same)  # fmt: skip
        batched.append((measured["lru_batched"][i] - measured["plain"][i]
                        + measured["evicted_batched"][i] - same) / same)  # fmt: skip
    predictions = {
        "predicted_loss_share": median_estimate(loss),
        "predicted_batched_loss_share": median_estimate(batched),
        "predicted_batched_change_share": median_estimate(
            [b - a for a, b in zip(loss, batched, strict=True)]
        ),
    }
    costs.update({name: est.value for name, est in predictions.items()})
    costs["intervals"] = {name: est.to_json() for name, est in predictions.items()}
    return costs


def _json(estimate) -> dict | None:
    return None if estimate is None else estimate.to_json()


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


def _runs(rows, part: str, side: str, cache: int | None, field: str) -> dict[int, float]:
    """``{run: value}`` of one side's rows."""
    return {
        r["run"]: r[field]
        for r in rows
        if r["part"] == part
        and r["side"] == side
        and r["cache_size"] == cache
        and r[field] is not None
    }


def round_ratios(
    rows,
    side: str,
    cache: int,
    field: str = HEADLINE_MEASURE,
    part: str = "seed",
    over: tuple[str, int | None] = ("rocksdb", None),
) -> list[float]:
    """Each round's ``field(side at cache) / field(over)``, the pair run back to back in the
    round (``over``: RocksDB alone unless told, e.g. ``("lru", 250)``).

    Example::

        >>> rows = [{"part": "seed", "run": r, "side": s, "cache_size": c, "x": v}
        ...         for r, (a, b) in enumerate([(1.0, 2.0), (1.0, 3.0), (2.0, 4.0)])
        ...         for s, c, v in (("rocksdb", None, a), ("lru", 500, b))]
        >>> round_ratios(rows, "lru", 500, "x")
        [2.0, 3.0, 2.0]
    """
    base = _runs(rows, part, *over, field)
    mine = _runs(rows, part, side, cache, field)
    return [mine[run] / base[run] for run in sorted(mine) if base.get(run)]


def speedup_spread(rows, side: str, cache: int, field: str = HEADLINE_MEASURE, part="seed"):
    """min / median / max over rounds of ``field(side at cache) / field(rocksdb)``
    (:func:`round_ratios`).

    Example::

        >>> rows = [{"part": "seed", "run": r, "side": s, "cache_size": c, "x": v}
        ...         for r, (a, b) in enumerate([(1.0, 2.0), (1.0, 3.0), (2.0, 4.0)])
        ...         for s, c, v in (("rocksdb", None, a), ("lru", 500, b))]
        >>> speedup_spread(rows, "lru", 500, "x")
        {'min': 2.0, 'median': 2.0, 'max': 3.0}
    """
    return spread(round_ratios(rows, side, cache, field, part))


def speedup_estimate(rows, side: str, cache: int, field: str = HEADLINE_MEASURE, **where):
    """The median of the rounds' ratios (:func:`round_ratios`, same keywords) with its
    bootstrap interval, as an :class:`~skewlab.experiments.intervals.Estimate`; ``None``
    where no round measured both sides.

    Example::

        >>> rows = [{"part": "seed", "run": r, "side": s, "cache_size": c, "x": v}
        ...         for r, (a, b) in enumerate([(1.0, 2.0), (1.0, 3.0), (2.0, 4.0)])
        ...         for s, c, v in (("rocksdb", None, a), ("lru", 500, b))]
        >>> speedup_estimate(rows, "lru", 500, "x").text(".1f", "x")
        '2.0x [2.0..3.0], 3 runs'
    """
    return median_estimate(round_ratios(rows, side, cache, field, **where))


def summarize(rows) -> dict:
    """Per side and cache size: hit ratios, the headline (job throughput) and its speedups over
    RocksDB alone with their spread, the operator breakdown beside; the batched write-back over
    FLIP-325's LRU of the same size; every ratio the median of the rounds' with its interval
    (``summary["intervals"]``, :func:`speedup_estimate`); the sweep's curve."""
    seed_rows = [r for r in rows if r["part"] == "seed"]
    sizes = sorted({r["cache_size"] for r in seed_rows if r["cache_size"]})
    table = []
    for side, size in [("rocksdb", None)] + [(s, c) for c in sizes for s in ("lru", "lru_batched")]:
        mine = [r for r in seed_rows if r["side"] == side and r["cache_size"] == size]
        if not mine:
            continue
        entry = {
            "side": side,
            "cache_size": size,
            "hit_ratio": spread(r["hit_ratio"] for r in mine)["median"],
            "state_cache_hit_ratio": spread(r["state_cache_hit_ratio"] for r in mine)["median"],
            "seed_hit_ratio": SEED_HIT_RATIOS.get(size) if size else None,
            "seed_speedup": SEED_SPEEDUPS.get(size) if size else 1.0,
            HEADLINE_MEASURE: spread(r[HEADLINE_MEASURE] for r in mine),
            "operator_cpu_records_per_second": spread(
                r["operator_cpu_records_per_second"] for r in mine
            )["median"],
            "operator_records_per_second": spread(r["operator_records_per_second"] for r in mine)[
                "median"
            ],
            "state_reads": spread(r["state_reads"] for r in mine)["median"],
            "state_writes": spread(r["state_writes"] for r in mine)["median"],
        }
        if size is not None:
            entry["speedup"] = speedup_spread(rows, side, size)
            entry["speedup_interval"] = _json(speedup_estimate(rows, side, size))
            for name, field in BREAKDOWN.items():
                est = speedup_estimate(rows, side, size, field)
                entry[name] = None if est is None else est.value
                entry[f"{name}_interval"] = _json(est)
        table.append(entry)
    summary: dict = {
        "headline_measure": HEADLINE_MEASURE,
        "runs": max((r["run"] for r in seed_rows), default=-1) + 1,
        "records": max((r["records"] for r in seed_rows), default=0),
    }
    intervals: dict = {}
    for t in table:
        if t["cache_size"] not in SEED_SIZES:
            continue
        suffix = "_batched" if t["side"] == "lru_batched" else ""
        size = t["cache_size"]
        summary[f"hit_ratio_{size}{suffix}"] = t["hit_ratio"]
        summary[f"speedup_{size}{suffix}"] = t["speedup"]["median"]
        summary[f"speedup_{size}{suffix}_spread"] = t["speedup"]
        intervals[f"speedup_{size}{suffix}"] = t["speedup_interval"]
        for name in BREAKDOWN:
            summary[f"{name}_{size}{suffix}"] = t[name]
            intervals[f"{name}_{size}{suffix}"] = t[f"{name}_interval"]
    for size in [c for c in sizes if c in SEED_SIZES]:
        # the batched write-back over FLIP-325's LRU of the same size, round by round
        for name, field in BATCHED_OVER_LRU.items():
            est = speedup_estimate(rows, "lru_batched", size, field, over=("lru", size))
            if est is not None:
                summary[f"{name}_{size}"] = est.value
                intervals[f"{name}_{size}"] = est.to_json()
    summary["intervals"] = {k: v for k, v in intervals.items() if v is not None}
    summary["all_digests_match"] = all(r["digest_matches_oracle"] for r in rows)
    summary["all_emissions_match"] = all(r["emissions_match"] for r in rows)
    summary["seed_speedups"] = {str(k): v for k, v in SEED_SPEEDUPS.items()}
    summary["by_cache_size"] = table
    sweep_rows = [r for r in rows if r["part"] == "sweep"]
    sweep_base = next((r for r in sweep_rows if r["side"] == "rocksdb"), None)
    summary["sweep"] = [
        {
            "cache_size": r["cache_size"],
            "hit_ratio": r["hit_ratio"],
            HEADLINE_MEASURE: r[HEADLINE_MEASURE],
            "operator_cpu_records_per_second": r["operator_cpu_records_per_second"],
            "speedup": r[HEADLINE_MEASURE] / sweep_base[HEADLINE_MEASURE]
            if sweep_base and sweep_base[HEADLINE_MEASURE]
            else None,
        }
        for r in sweep_rows
    ]
    return summary
