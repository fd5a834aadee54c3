"""Which entries the cache keeps, on real runs: seed 003's count job over RocksDB alone, over
FLIP-325's LRU and over W-TinyLFU's admission, with Belady's OPT over the run's own access
trace as the ceiling. ``skewlab bench cache --cache-policy tinylfu`` runs it after the seed's
part (:mod:`skewlab.experiments.state_cache`).

Traces: FLIP-325's key sequence (its exact 0 % / 50 % / 100 % LRU hit ratios at 250 / 500 /
1,000 entries) and Zipf 0.8 / 1.0 / 1.2 draws over ``policy_keys`` keys (seed 000's views'
law), ``policy_n`` records each, at FLIP-325's three cache sizes. The job is the seed's
(:mod:`skewlab.experiments.state_cache`: a count per key, every count emitted, a checkpoint
every second), at parallelism 1 unless told.

Like for like -- what each side does per record, and what its timer covers:

=============  =========================================  ===================================
side           the same for every side                    the mechanism compared
=============  =========================================  ===================================
rocksdb        the seed's count job on the same input     RocksDB get and put of the key
lru            (Spark, the compiled count loop, the       FLIP-325's LRU: every missed key
               emission, a checkpoint each second);       enters, the least recent leaves
tinylfu        timer: the Spark job, submitted to         W-TinyLFU: a missed key enters a
               collected; both caches compiled, both      window, then the main cache only if
               write an evicted dirty entry back alone    a count-min sketch finds it more
                                                          frequent than the victim (compiled)
=============  =========================================  ===================================

**The access trace.** A subtask reads its records in arrival order (``seq``) and makes one
cache lookup per record, so its trace is its input's keys in ``seq`` order: taken from the
input, and checked against every run -- LRU and W-TinyLFU replayed over it by
:mod:`skewlab.state.cache_admission` (pure Python: a second implementation) must give the run's
own hit count exactly, or the bench stops. OPT is replayed over the same trace.

Summary: ``hit_ratio_<policy>_<entries>_<trace>`` (``lru`` and ``tinylfu`` measured, ``opt``
replayed; ``trace``: ``flip325``, ``zipf08``, ``zipf1``, ``zipf12``), ``speedup_<entries>_
<policy>_<trace>`` (job throughput over the same round's RocksDB run, median over rounds, with
``_spread``), ``tinylfu_over_lru_<entries>_<trace>`` (the policies' job throughput, round by
round), and the issue's ``speedup_<entries>_tinylfu`` (FLIP-325's keys). Each timed ratio is the
median of the rounds' ratios (the two sides of a round run back to back over the same input), and
``intervals`` holds its bootstrap interval (:func:`~skewlab.experiments.intervals.median_estimate`)
under the same key, as chapter 04's speedups; a hit ratio is a count every run of the trace
measures alike and needs none.

Example::

    >>> from skewlab.experiments.state_cache import run_experiment
    >>> s = run_experiment("tiny", cache_policy="tinylfu", progress=False).summary  # doctest: +SKIP
    >>> s["hit_ratio_tinylfu_500_zipf1"] <= s["hit_ratio_opt_500_zipf1"]           # doctest: +SKIP
    True
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from skewlab.aggregates.count import count_digest
from skewlab.engine.config import JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.experiments.cache_admission import flip325_trace, trace_name, zipf_trace
from skewlab.experiments.intervals import median_estimate
from skewlab.experiments.results import spread
from skewlab.inputs.wordcount import SEQ, WORD, flip325_input
from skewlab.state.cache_admission import hits
from skewlab.state.key_groups import assign_key_to_parallel_operator
from skewlab.state.lru_cache import CACHE_POLICIES
from skewlab.strategies.count import run_count

__all__ = ["POLICY_SIDES", "TRACES", "run_policies", "summarize_policies"]

#: The sides of each trace and size, in display order: no cache, then each cache policy.
POLICY_SIDES = ("rocksdb", *CACHE_POLICIES)
#: The traces' skews: ``None`` is FLIP-325's key sequence.
TRACES: tuple[float | None, ...] = (None, 0.8, 1.0, 1.2)
MEASURE = "job_records_per_second"


def _trace(skew: float | None, n: int, n_keys: int) -> np.ndarray:
    if skew is None:
        return np.asarray(flip325_trace(n), dtype=np.int64)
    return np.asarray(zipf_trace(n, n_keys, skew), dtype=np.int64)


def _input(spark, skew: float | None, keys: np.ndarray, directory: str):
    """The trace as the count job's input: ``word`` the key, ``seq`` its position."""
    if skew is None:
        return flip325_input(spark, len(keys))  # the seed part's own input
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = f"{directory}/{trace_name(skew)}.parquet"
    table = pa.table({WORD: keys, SEQ: np.arange(len(keys), dtype=np.int64)})
    pq.write_table(table, path)
    return spark.read.parquet(path)


def subtask_traces(keys: np.ndarray, parallelism: int, max_parallelism: int) -> list[list[int]]:
    """Each subtask's access trace: the keys Flink's key groups route to it, in input order.

    Example::

        >>> [len(t) for t in subtask_traces(np.arange(100), 1, 128)]
        [100]
    """
    listed = keys.tolist()
    if parallelism == 1:
        return [listed]
    owner = {
        k: assign_key_to_parallel_operator(k, max_parallelism, parallelism) for k in set(listed)
    }
    traces: list[list[int]] = [[] for _ in range(parallelism)]
    for k in listed:
        traces[owner[k]].append(k)
    return traces


def run_policies(
    spark,
    *,
    n: int,
    n_keys: int,
    sizes: Sequence[int],
    runs: int,
    parallelism: int,
    checkpoint_interval_ms: float,
    skews: Sequence[float | None] = TRACES,
    bar=None,
) -> list[dict[str, Any]]:
    """Every trace through every side at every size, ``runs`` rounds (see the module doc).

    Each round runs RocksDB alone, then each size's LRU and W-TinyLFU, back to back.
    """
    if n < 1 or n_keys < 1:
        raise SkewlabInputError(f"the policy part needs records and keys >= 1, got {n}, {n_keys}")
    job = JobConfig(parallelism=parallelism).resolved(spark.sparkContext.defaultParallelism)
    rows: list[dict[str, Any]] = []
    directory = tempfile.mkdtemp(prefix="skewlab-cache-policy-")
    try:
        for skew in skews:
            name = trace_name(skew)
            keys = _trace(skew, n, n_keys)
            df = _input(spark, skew, keys, directory)
            distinct, counts = np.unique(keys, return_counts=True)
            expected = count_digest(dict(zip(distinct.tolist(), counts.tolist(), strict=True)))
            traces = subtask_traces(keys, job.parallelism, job.max_parallelism)
            replayed = {
                (policy, size): sum(hits(t, size, policy) for t in traces if t)
                for size in sizes
                for policy in ("opt", *CACHE_POLICIES)
            }
            plan = [("rocksdb", None)] + [(p, s) for s in sizes for p in CACHE_POLICIES]
            for run in range(runs):
                for side, size in plan:
                    if bar is not None:
                        bar.set_postfix_str(f"policy {name} {side} {size or ''}")
                    result = run_count(
                        df,
                        "rocksdb" if side == "rocksdb" else "cached",
                        spark=spark,
                        parallelism=job.parallelism,
                        max_parallelism=job.max_parallelism,
                        cache_entries=size or 1,
                        cache_policy=side if side != "rocksdb" else "lru",
                        emit="record",
                        checkpoint_interval_ms=checkpoint_interval_ms,
                        sink="digest",
                    )
                    row = _row(result, name, side, size, run, expected)
                    if size is not None:
                        row["replayed_hits"] = replayed[(side, size)]
                        row["opt_hits"] = replayed[("opt", size)]
                        row["hits_match_replay"] = result.cache_hits == row["replayed_hits"]
                        if not row["hits_match_replay"]:
                            raise RuntimeError(
                                f"{name}, {side} at {size} entries: the run hit "
                                f"{result.cache_hits:,} times, its trace replayed "
                                f"{row['replayed_hits']:,}: the trace is not the run's"
                            )
                    rows.append(row)
                    if bar is not None:
                        bar.update()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return rows


def _row(result, trace: str, side: str, size: int | None, run: int, expected) -> dict:
    row = result.row()
    row.update(
        {
            "part": "policy",
            "trace": trace,
            "side": side,
            "cache_size": size,
            "run": run,
            "job_seconds": result.wall_seconds,
            MEASURE: result.e2e_records_per_second,
            "digest_matches_oracle": result.digest == expected,
            "hits": result.cache_hits,
        }
    )
    return row


def _interval(intervals: dict[str, Any], key: str, ratios: Sequence[float]) -> None:
    """The median of the rounds' ``ratios`` with its bootstrap interval, under ``key``."""
    est = median_estimate(ratios)
    if est is not None:
        intervals[key] = est.to_json()


def summarize_policies(rows: Sequence[dict]) -> dict[str, Any]:
    """The policy part's summary keys (see the module doc) and its table, ``policy_table``.

    Example::

        >>> rows = [{"part": "policy", "trace": "zipf1", "run": 0, "side": s, "cache_size": c,
        ...          "hit_ratio": h, "opt_hits": 8, "records": 10, MEASURE: v,
        ...          "digest_matches_oracle": True, "hits_match_replay": True}
        ...         for s, c, h, v in (("rocksdb", None, None, 1.0), ("lru", 500, 0.5, 2.0),
        ...                            ("tinylfu", 500, 0.6, 3.0))]
        >>> s = summarize_policies(rows)
        >>> s["hit_ratio_opt_500_zipf1"], s["speedup_500_tinylfu_zipf1"], s["tinylfu_over_lru_500_zipf1"]
        (0.8, 3.0, 1.5)
        >>> s["intervals"]["tinylfu_over_lru_500_zipf1"]["value"]
        1.5
    """  # noqa: E501
    rows = [r for r in rows if r["part"] == "policy"]
    summary: dict[str, Any] = {}
    intervals: dict[str, Any] = {}
    table = []
    for trace in dict.fromkeys(r["trace"] for r in rows):
        mine = [r for r in rows if r["trace"] == trace]
        base = {r["run"]: r[MEASURE] for r in mine if r["side"] == "rocksdb"}
        sizes = sorted({r["cache_size"] for r in mine if r["cache_size"]})
        for size in sizes:
            at = {
                side: {r["run"]: r for r in mine if r["side"] == side and r["cache_size"] == size}
                for side in CACHE_POLICIES
            }
            lru, tinylfu = at["lru"], at["tinylfu"]
            any_row = next(iter(lru.values()))
            opt = any_row["opt_hits"] / any_row["records"]
            summary[f"hit_ratio_opt_{size}_{trace}"] = opt
            entry: dict[str, Any] = {"trace": trace, "cache_size": size, "hit_ratio_opt": opt}
            for side, by_run in at.items():
                hit = spread(r["hit_ratio"] for r in by_run.values())["median"]
                ratios = [by_run[k][MEASURE] / base[k] for k in sorted(by_run) if base.get(k)]
                ratio = spread(ratios)
                summary[f"hit_ratio_{side}_{size}_{trace}"] = hit
                summary[f"speedup_{size}_{side}_{trace}"] = ratio["median"]
                summary[f"speedup_{size}_{side}_{trace}_spread"] = ratio
                _interval(intervals, f"speedup_{size}_{side}_{trace}", ratios)
                entry[f"hit_ratio_{side}"] = hit
                entry[f"speedup_{side}"] = ratio
            ratios = [tinylfu[k][MEASURE] / lru[k][MEASURE] for k in sorted(tinylfu) if k in lru]
            over = spread(ratios)
            summary[f"tinylfu_over_lru_{size}_{trace}"] = over["median"]
            _interval(intervals, f"tinylfu_over_lru_{size}_{trace}", ratios)
            entry["tinylfu_over_lru"] = over
            table.append(entry)
    for key in [k for k in summary if k.startswith("speedup_") and k.endswith("_tinylfu_flip325")]:
        summary[key.removesuffix("_flip325")] = summary[key]  # the name
        if key in intervals:
            intervals[key.removesuffix("_flip325")] = intervals[key]
    summary["intervals"] = intervals
    summary["policy_table"] = table
    summary["policy_traces_match_runs"] = all(
        r["hits_match_replay"] for r in rows if r["cache_size"]
    )
    summary["policy_digests_match"] = all(r["digest_matches_oracle"] for r in rows)
    return summary
