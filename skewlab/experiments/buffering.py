"""Seed 000's experiment: naive (RocksDB) vs buffered view counting over key cardinality.

100,000 views from 25,000 users; tweet cardinality 20,000 down to 1; naive ``keyBy -> reduce``
on RocksDB against the buffer (``trigger_interval_ms=100``, ``max_count=1000``, the vectorized
buffer); R runs each, at parallelism 1 by default (one buffer sees every key: a flush of 1,000
records at 20 keys emits 20 partials, the harshest case for the buffer). Both pipelines end with
the seed's ``.map(_.toStats)``. Every run's result
digest is checked against the Spark SQL reference. The summary's ``speedup_at_20_keys`` is the
ratio of the median operator throughputs at 20 keys (the seed reports ~45x).

Example::

    >>> result = run_experiment("quick", runs=1)          # doctest: +SKIP
    >>> result.summary["speedup_at_20_keys"] > 1          # doctest: +SKIP
    True
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.experiments.profiles import profile_settings, resolve_runs
from skewlab.experiments.results import BenchResult
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Buffered, Naive, run_strategy

EXPERIMENT = "buffering"
#: The article's headline: buffered over naive throughput at 20 keys.
SEED_SPEEDUP_AT_20_KEYS = 45.0


def run_experiment(
    profile: str = "quick",
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

    Sizes come from the profiles table (:mod:`skewlab.experiments.profiles`) unless given.
    """
    from tqdm.auto import tqdm

    settings = profile_settings(EXPERIMENT, profile)
    runs = resolve_runs(settings, runs)
    cards = tuple(cardinalities or settings["cardinalities"])
    n_views = settings["n_views"] if n_views is None else n_views
    n_users = settings["n_users"] if n_users is None else n_users
    job = JobConfig(parallelism=1 if parallelism is None else parallelism)
    strategies = {
        "naive": Naive(backend="rocksdb"),
        "buffered": Buffered(trigger_interval_ms=trigger_interval_ms, max_count=max_count),
    }
    specs = [ViewSpec(n_views, n_users, k, seed=seed) for k in cards]  # validates sizes

    spark = spark or get_spark()
    rows = []
    bar = tqdm(total=len(cards) * len(strategies) * runs, desc=EXPERIMENT, disable=not progress)
    for spec in specs:
        views = generate_views(spark, spec).cache()
        views.count()
        reference = result_digest(spark_reference_aggregate(views))
        for run in range(runs):
            for name, strategy in strategies.items():
                bar.set_postfix_str(f"{spec.n_tweets} keys, {name}")
                result, _ = run_strategy(views, strategy, job, spark)
                rows.append(
                    {
                        "experiment": EXPERIMENT,
                        "cardinality": spec.n_tweets,
                        "strategy": name,
                        "run": run,
                        "parallelism": result.parameters["parallelism"],
                        "records_in": result.records_in,
                        "records_out": result.records_out,
                        "operator_records_per_second": result.operator_records_per_second,
                        "e2e_records_per_second": result.e2e_records_per_second,
                        "state_reads": result.state_reads,
                        "state_writes": result.state_writes,
                        "buffer_flushes": result.buffer_flushes,
                        "latency_p50_ms": result.latency_p50_ms,
                        "latency_p99_ms": result.latency_p99_ms,
                        "digest_matches_reference": result.result_digest == reference,
                    }
                )
                bar.update()
        views.unpersist()
    bar.close()
    return BenchResult(EXPERIMENT, profile, rows, summarize(rows))


def median_throughput(rows, cardinality: int, strategy: str) -> float | None:
    values = [
        r["operator_records_per_second"]
        for r in rows
        if r["cardinality"] == cardinality and r["strategy"] == strategy
    ]
    return statistics.median(values) if values else None


def summarize(rows) -> dict:
    """Median operator throughput per cardinality and strategy, and the speedups."""
    cards = sorted({r["cardinality"] for r in rows}, reverse=True)
    table = []
    for k in cards:
        naive, buffered = (
            median_throughput(rows, k, "naive"),
            median_throughput(rows, k, "buffered"),
        )
        table.append(
            {
                "cardinality": k,
                "naive_records_per_second": naive,
                "buffered_records_per_second": buffered,
                "speedup": buffered / naive if naive and buffered else None,
            }
        )
    by_k = {t["cardinality"]: t["speedup"] for t in table}
    return {
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        "speedup_at_20_keys": by_k.get(20),
        "speedup_at_20000_keys": by_k.get(20_000),
        "max_speedup": max((s for s in by_k.values() if s), default=None),
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "seed_speedup_at_20_keys": SEED_SPEEDUP_AT_20_KEYS,
        "by_cardinality": table,
    }


def format_summary(result: BenchResult) -> str:
    """The measured table beside the seed's headline figure."""
    lines = [
        f"{'keys':>7}  {'naive rec/s':>12}  {'buffered rec/s':>14}  {'speedup':>8}",
    ]
    for row in result.summary["by_cardinality"]:
        lines.append(
            f"{row['cardinality']:>7,}  {row['naive_records_per_second']:>12,.0f}  "
            f"{row['buffered_records_per_second']:>14,.0f}  {row['speedup']:>7.1f}x"
        )
    s = result.summary
    lines.append(
        f"speedup at 20 keys: {s['speedup_at_20_keys'] or float('nan'):.1f}x "
        f"(seed: ~{s['seed_speedup_at_20_keys']:.0f}x), median of {s['runs']} run(s); "
        f"all digests match the reference: {s['all_digests_match']}"
    )
    return "\n".join(lines)
