"""Seed 000's experiment on Spark's own streaming engine: per-record vs per-micro-batch state,
Spark's built-in aggregation, the hot partition, the trigger interval's latency, and rescaling a
streaming checkpoint.

**Throughput.** For each key cardinality (20,000 .. 1, seed 000's sweep) and distribution
(uniform, as the seed; Zipf), the same views run through the three variants of the
``streaming`` strategy (:mod:`skewlab.strategies.streaming`) from a backlog, at most
``max_rows_per_trigger`` rows per micro-batch, on ``parallelism`` state partitions; R runs each
after one untimed warm-up query per variant (one micro-batch). The headline is Spark's own
measure: rows over the summed micro-batch durations. What each side does per micro-batch, and
what the figure covers:

==============  ===================================  ==============================
variant         per micro-batch and key              the figure covers
==============  ===================================  ==============================
per-record      n state reads, merges, writes,       every micro-batch, end to end:
                n running TweetStats emitted         source read, upstream map,
per-batch       1 state read, n merges, 1 write,     shuffle, the stateful operator,
                1 TweetStats emitted                 state commit, sink write
builtin         Spark's partial aggregate per
                register, 1 state row per register
==============  ===================================  ==============================

All three read the same source log, run the same upstream map (register entries by
``xxhash64``) and write every emission to the same idempotent sink; every run's registers are
checked against the Spark SQL reference, from the sink and from the state store.

**Verdicts.** Each ratio is a ratio of the runs' medians with its bootstrap interval
(:func:`~skewlab.experiments.intervals.ratio_of_medians`, ``summary["intervals"]`` for the
headlines, ``<ratio>_interval`` beside every ratio of ``summary["ratios"]``); one run gives a
ratio without an interval. No physical bound is declared between the job's ratio and the
processors' (the time inside ``transformWithStateInPandas``): the per-record variant also
writes a row per input row to the sink, work outside its processor that the per-batch one
does not share, so its job's ratio may exceed the processors'.

**Latency.** A paced source (``source_rate`` rows/s) and the per-batch variant at several
trigger intervals: a row's latency is the delivery of its micro-batch minus its arrival. The
rows of one micro-batch are delivered together, so they are not independent samples of the
latency: the unit is the micro-batch. Each micro-batch's median row latency is kept
(``batch_latency_ms``), and each interval's median over its micro-batches comes with its
order-statistics interval (``latency_p50_over_batches``,
:func:`~skewlab.experiments.intervals.quantile_interval`): a median of fewer than 6
micro-batches has no 95 % interval, and a claim over it is inconclusive.

**Rescaling.** A query stopped mid-stream on 4 state partitions; restarted with another
``spark.sql.shuffle.partitions`` it keeps 4 (Spark says so in its log and its offset log); the
stopped checkpoint is then repartitioned 4 -> 8 -> 2 with pyspark's experimental, private
``spark._streamingCheckpointManager.repartition``, the state read back per key after each step
and compared, and the query resumed to the end of the source (reference digest). If the private
call is missing or fails, the section says why and stops there.

Example::

    >>> summarize([])["per_batch_over_per_record_at_20_keys"] is None
    True
    >>> result = run_experiment("tiny", progress=False)                 # doctest: +SKIP
    >>> result.summary["all_digests_match"]                            # doctest: +SKIP
    True
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.engine.streaming.checkpoint import (
    QueryDirectory,
    committed_batches,
    recorded_conf,
    repartition_checkpoint,
)
from skewlab.engine.streaming.failure import StreamingQueryFailed
from skewlab.engine.streaming.provider import HDFS_PROVIDER, PROVIDER_KEY
from skewlab.engine.streaming.query import run_query
from skewlab.engine.streaming.sink import BatchSink
from skewlab.engine.streaming.spark_log import OFFSET_METADATA_LOGGER, spark_warnings
from skewlab.engine.streaming.state_store import read_state, state_metadata
from skewlab.experiments.buffering import SEED_SPEEDUP_AT_20_KEYS
from skewlab.experiments.chapters import SEED_KEYS, resolve_runs, size_settings
from skewlab.experiments.intervals import quantile_interval, ratio_of_medians
from skewlab.experiments.results import BenchResult
from skewlab.inputs.stream_source import (
    arrival_ns,
    offset_clock,
    read_views_stream,
    write_source_log,
)
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import Streaming, run_strategy
from skewlab.strategies.streaming import VARIANTS, hot_partitions

__all__ = [
    "HEADLINES",
    "EXPERIMENT",
    "RATIOS",
    "SEED_SPEEDUP_AT_20_KEYS",
    "batch_latencies",
    "default_provider_error",
    "hot_partition_run",
    "micro_batch_latency_sweep",
    "ratios_by_cardinality",
    "rescale_checkpoint",
    "run_experiment",
    "summarize",
]

EXPERIMENT = "streaming"
#: What the headline ratios are computed from: rows over the summed micro-batch durations.
HEADLINE_MEASURE = "records_per_second"
#: The headline ratios (summary keys) and the seed's figure for each: per-batch over
#: per-record is the article's buffered over naive (~45x at 20 keys, Flink, its own machine);
#: Spark's own aggregation has no counterpart in the seed.
HEADLINES = {
    "per_batch_over_per_record_at_20_keys": SEED_SPEEDUP_AT_20_KEYS,
    "builtin_over_per_batch_at_20_keys": None,
}


def _job(parallelism: int | None, source_rate: float | None = None) -> JobConfig:
    return JobConfig(parallelism=parallelism, source_rate=source_rate, disk_profile=None)


def _row(result, reference: str, **labels) -> dict[str, Any]:
    hot = hot_partitions(result)
    return {
        "experiment": EXPERIMENT,
        **labels,
        "records_in": result.records_in,
        "records_out": result.records_out,
        "batches": len(result.extra["batches"]),
        "records_per_second": result.extra["records_per_second"],
        "operator_records_per_second": result.operator_records_per_second,
        "e2e_records_per_second": result.e2e_records_per_second,
        "state_reads": result.state_reads,
        "state_writes": result.state_writes,
        "state_rows_updated": result.extra["state_rows_updated"],
        "state_commit_ms": result.extra["state_commit_ms"],
        "latency_p50_ms": result.latency_p50_ms,
        "latency_p99_ms": result.latency_p99_ms,
        "hot_partition_time_share": statistics.median([h["time_share"] for h in hot])
        if hot
        else None,
        "hot_partition_row_share": statistics.median([h["row_share"] for h in hot])
        if hot
        else None,
        "digest_matches_reference": result.result_digest == reference,
        "state_matches_reference": result.extra["state_digest"] == reference,
    }


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    cardinalities: Sequence[int] | None = None,
    distributions: Sequence[str] | None = None,
    n_views: int | None = None,
    n_users: int | None = None,
    parallelism: int | None = None,
    max_rows_per_trigger: int | None = None,
    trigger_interval_ms: float = 100.0,
    skew: float = 1.2,
    seed: int = 1,
    rescale: bool = True,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Throughput of the three variants over key cardinality, latency over the trigger
    interval, and the rescale section (see the module doc). Writes nothing (the CLI does)."""
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    cards = tuple(cardinalities or settings["cardinalities"])
    dists = tuple(distributions or settings["distributions"])
    n_views = settings["n_views"] if n_views is None else n_views
    n_users = settings["n_users"] if n_users is None else n_users
    limit = (
        settings["max_rows_per_trigger"] if max_rows_per_trigger is None else max_rows_per_trigger
    )
    parallelism = settings["parallelism"] if parallelism is None else parallelism
    specs = [ViewSpec(n_views, n_users, k, d, skew, seed) for d in dists for k in cards]
    variants = {v: Streaming(variant=v, trigger_interval_ms=trigger_interval_ms,
                             max_rows_per_trigger=limit) for v in VARIANTS}  # fmt: skip
    job = _job(parallelism)
    spark = spark or get_spark()
    if settings["warmup"]:
        # one micro-batch per variant: the Python workers and the state store started once
        warm = generate_views(spark, ViewSpec(min(n_views, limit), n_users, 20, seed=seed))
        for strategy in variants.values():
            run_strategy(warm, strategy, job, spark)
    rows = []
    bar = tqdm(total=len(specs) * runs * len(variants), desc=EXPERIMENT, disable=not progress)
    for spec in specs:
        views = generate_views(spark, spec).cache()
        reference = result_digest(spark_reference_aggregate(views))
        for run in range(runs):
            for name, strategy in variants.items():
                bar.set_postfix_str(f"{spec.distribution} {spec.n_tweets} keys, {name}")
                result, _ = run_strategy(views, strategy, job, spark)
                rows.append(_row(result, reference, distribution=spec.distribution,
                                 cardinality=spec.n_tweets, variant=name, run=run,
                                 parallelism=result.parameters["parallelism"]))  # fmt: skip
                bar.update()
        views.unpersist()
    bar.close()
    paced = generate_views(spark, ViewSpec(settings["latency_views"], n_users, 20, seed=seed))
    latency = micro_batch_latency_sweep(
        spark, paced, trigger_intervals=settings["trigger_intervals"],
        source_rate=settings["source_rate"], parallelism=parallelism,
    )  # fmt: skip
    summary = summarize(rows)
    summary["latency"] = latency
    summary["all_digests_match"] = summary["all_digests_match"] and all(
        r["digest_matches_reference"] for r in latency
    )
    if rescale:
        small = generate_views(spark, ViewSpec(settings["rescale_views"], n_users, 50, seed=seed))
        summary["rescale"] = rescale_checkpoint(spark, small)
        summary["all_digests_match"] = summary["all_digests_match"] and summary["rescale"]["ok"]
    summary["size"] = size
    return BenchResult(EXPERIMENT, size, rows, summary)


def micro_batch_latency_sweep(
    spark,
    views,
    *,
    trigger_intervals: Sequence[float],
    source_rate: float,
    variant: str = "per-batch",
    parallelism: int | None = None,
) -> list[dict[str, Any]]:
    """Latency p50/p99 (arrival at the source to the delivery of the micro-batch) of one
    Structured Streaming variant over a paced source at ``source_rate`` rows/s, one query per
    processing-time trigger interval (the buffer's own sweep, on skewlab's engine, is
    :func:`skewlab.experiments.latency_sweep.latency_sweep`).

    Example::

        >>> micro_batch_latency_sweep(spark, views, trigger_intervals=(100, 500),
        ...                           source_rate=1_000)  # doctest: +SKIP
    """
    reference = result_digest(spark_reference_aggregate(views))
    out = []
    for interval in trigger_intervals:
        # the query's directory kept until its sink's delivery times are read
        root = Path(tempfile.mkdtemp(prefix="skewlab-latency-"))
        try:
            strategy = Streaming(variant=variant, trigger_interval_ms=interval,
                                 max_rows_per_trigger=None,
                                 checkpoint_dir=str(root / "query"))  # fmt: skip
            result, _ = run_strategy(views, strategy, _job(parallelism, source_rate), spark)
            deliveries = BatchSink(QueryDirectory(root / "query").sink).deliveries()
        finally:
            shutil.rmtree(root, ignore_errors=True)
        batches = result.extra["batches"]
        per_batch = batch_latencies(batches, deliveries, source_rate)
        p50 = quantile_interval(per_batch, 0.5)
        out.append(
            {
                "variant": variant,
                "trigger_interval_ms": float(interval),
                "source_rate": float(source_rate),
                "batches": len(batches),
                "rows_per_batch": result.records_in / len(batches) if batches else None,
                "mean_batch_ms": statistics.fmean(b["duration_ms"] for b in batches)
                if batches
                else None,
                "latency_p50_ms": result.latency_p50_ms,
                "latency_p99_ms": result.latency_p99_ms,
                "batch_latency_ms": per_batch,
                "latency_p50_over_batches": None if p50 is None else p50.to_json(),
                "digest_matches_reference": result.result_digest == reference,
            }
        )
    return out


def batch_latencies(batches, deliveries: dict[int, int], rate: float | None) -> list[float]:
    """Each micro-batch's median row latency in ms (delivery of the micro-batch minus each
    row's arrival at the source, by the clock the source's offsets carry), in batch order;
    ``batches``: a run's ``extra["batches"]``, ``deliveries``: the sink's ``{batch id: ns}``.
    A micro-batch without rows, a delivery or a clock is left out.

    Example::

        >>> batches = [{"batch_id": 0, "start_offset": 0, "end_offset": 3,
        ...             "source_end": {"offset": 3, "start_ns": 0, "first": 0}}]
        >>> batch_latencies(batches, {0: 5_000_000_000}, rate=1.0)  # rows at 0, 1 and 2 s
        [4000.0]
    """
    out = []
    for b in batches:
        delivered = deliveries.get(b["batch_id"])
        clock = offset_clock(b.get("source_end"))
        if delivered is None or clock is None or b["end_offset"] <= b["start_offset"]:
            continue
        offsets = np.arange(b["start_offset"], b["end_offset"], dtype=np.int64)
        arrived = arrival_ns(offsets, clock[0], clock[1], rate)
        out.append(float(np.median(np.maximum(delivered - arrived, 0))) / 1e6)
    return out


def _state_by_key(spark, checkpoint) -> dict[str, tuple[bytes, bytes, int]]:
    rows = (
        read_state(spark, checkpoint, state_var="stats")
        .selectExpr("key.tweet_id AS t", "value.views AS v", "value.viewers AS u", "partition_id")
        .collect()
    )
    return {r.t: (bytes(r.v), bytes(r.u), int(r.partition_id)) for r in rows}


def rescale_checkpoint(
    spark,
    views,
    *,
    partitions: Sequence[int] = (4, 8, 2),
    restart_partitions: int = 3,
    directory: str | Path | None = None,
) -> dict[str, Any]:
    """The rescale section (see the module doc): returns its steps and findings.

    ``partitions``: the state partitions the query starts on, then the repartition targets;
    ``restart_partitions``: the ``spark.sql.shuffle.partitions`` a restart asks for in vain.
    The views are read in six micro-batches: two before the stop, one by the restart, three
    after the repartitions.

    Example::

        >>> rescale_checkpoint(spark, views)["ok"]                  # doctest: +SKIP
        True
    """
    first, *targets = partitions
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="skewlab-rescale-"))
    query_dir = root / "query"
    ck = query_dir / "checkpoint"
    reference = result_digest(spark_reference_aggregate(views))
    rows = views.count()
    max_rows_per_trigger = max(1, -(-rows // 6))

    def run(parallelism: int, stop: int | None):
        params = Streaming(variant="per-batch", max_rows_per_trigger=max_rows_per_trigger,
                           checkpoint_dir=str(query_dir), stop_after_batches=stop)  # fmt: skip
        return run_strategy(views, params, _job(parallelism), spark)[0]

    steps: list[dict[str, Any]] = []
    try:
        started = run(first, 2)
        steps.append({"step": f"start on {first} partitions, stop mid-stream",
                      "state_partitions": started.extra["state_partitions"],
                      "rows_read": started.records_in})  # fmt: skip
        with spark_warnings(spark, OFFSET_METADATA_LOGGER) as said:
            restarted = run(restart_partitions, 1)
        kept = restarted.extra["state_partitions"]
        spark_said = [line for line in said() if "partitions" in line]
        steps.append({"step": f"restart asking for {restart_partitions} shuffle partitions",
                      "state_partitions": kept, "rows_read": restarted.records_in})  # fmt: skip
        recorded = recorded_conf(ck)
        findings: dict[str, Any] = {
            "restart_asked": restart_partitions,
            "restart_kept": kept,
            "spark_said": spark_said,
            "offset_log_conf": {k: v for k, v in recorded.items() if "partitions" in k},
            "repartition": [],
        }
        before = _state_by_key(spark, ck)
        current = first
        for target in targets:
            commits = len(committed_batches(ck))
            outcome = repartition_checkpoint(spark, ck, target)
            entry: dict[str, Any] = {"from": current, "to": target, "done": outcome.done,
                                     "reason": outcome.reason}  # fmt: skip
            if outcome.done:
                after = _state_by_key(spark, ck)
                metadata = state_metadata(spark, ck)
                entry |= {
                    "metadata_partitions": int(metadata["numPartitions"].iloc[0]),
                    "partitions_holding_keys": len({p for *_, p in after.values()}),
                    "keys": len(after),
                    "state_unchanged_per_key": {k: v[:2] for k, v in after.items()}
                    == {k: v[:2] for k, v in before.items()},
                    "keys_that_moved": sum(1 for k in after if after[k][2] != before[k][2]),
                    "new_batches": len(committed_batches(ck)) - commits,
                }
                before, current = after, target
                steps.append({"step": f"repartition {entry['from']} -> {target}",
                              "state_partitions": entry["metadata_partitions"],
                              "rows_read": 0})  # fmt: skip
            findings["repartition"].append(entry)
            if not outcome.done:
                break
        repartitioned = all(e["done"] for e in findings["repartition"])
        if repartitioned:
            final = run(current, None)
            steps.append({"step": f"resume on {current} partitions to the end",
                          "state_partitions": final.extra["state_partitions"],
                          "rows_read": final.records_in})  # fmt: skip
            findings |= {
                "resumed_partitions": final.extra["state_partitions"],
                "resumed_digest_matches_reference": final.result_digest == reference,
                "resumed_state_matches_reference": final.extra["state_digest"] == reference,
                "records_in": final.records_in,
                "records_processed": final.records_processed,
            }
        findings["repartition_available"] = repartitioned
        findings["ok"] = kept == first and (
            not repartitioned
            or (
                findings["resumed_digest_matches_reference"]
                and findings["resumed_state_matches_reference"]
                and all(e["state_unchanged_per_key"] for e in findings["repartition"])
                and findings["resumed_partitions"] == current
            )
        )
        findings["steps"] = steps
        findings["rows"] = rows
        return findings
    finally:
        if directory is None:
            shutil.rmtree(root, ignore_errors=True)


def hot_partition_run(
    spark,
    *,
    n_views: int,
    n_users: int,
    n_tweets: int = 20,
    skew: float = 1.2,
    parallelism: int = 4,
    max_rows_per_trigger: int = 1000,
    trigger_interval_ms: float = 100.0,
    seed: int = 1,
):
    """One per-record run over Zipf(``skew``) views, its checkpoint kept long enough to ask the
    state store which partition holds the hottest tweet: ``(RunResult, that partition)``.

    Example::

        >>> result, hot = hot_partition_run(spark, n_views=3_000, n_users=500)  # doctest: +SKIP
        >>> {b["partition"] for b in hot_partitions(result)} == {hot}           # doctest: +SKIP
        True
    """
    views = generate_views(spark, ViewSpec(n_views, n_users, n_tweets, "zipf", skew, seed))
    root = Path(tempfile.mkdtemp(prefix="skewlab-hot-"))
    try:
        params = Streaming(
            variant="per-record",
            trigger_interval_ms=trigger_interval_ms,
            max_rows_per_trigger=max_rows_per_trigger,
            checkpoint_dir=str(root),
        )
        result, _ = run_strategy(views, params, _job(parallelism), spark)
        state = read_state(spark, root / "checkpoint", state_var="stats")
        row = state.where("key.tweet_id = 'tweet-0'").select("partition_id").first()
        return result, (int(row.partition_id) if row is not None else None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def default_provider_error(spark, views=None) -> str:
    """What Spark says when a ``transformWithStateInPandas`` query starts on its default state
    store provider (the HDFS-backed one): the failing line, as raised.

    Example::

        >>> default_provider_error(spark)                        # doctest: +SKIP
        '... STORE_BACKEND_NOT_SUPPORTED_FOR_TWS ...'
    """
    root = Path(tempfile.mkdtemp(prefix="skewlab-provider-"))
    try:
        views = views if views is not None else generate_views(spark, ViewSpec(10, 5, 2, seed=1))
        log = write_source_log(views, root / "source")
        stream = read_views_stream(spark, log)
        out, _ = Streaming(variant="per-record").pipeline(stream)
        try:
            run_query(out, sink=BatchSink(root / "sink"), checkpoint=root / "checkpoint",
                      trigger_interval_ms=100, target_offset=log.rows,
                      settings={PROVIDER_KEY: HDFS_PROVIDER}, timeout_seconds=300)  # fmt: skip
        except StreamingQueryFailed as failed:
            return failed.cause
        return "no error: the query ran on the HDFS-backed provider"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _runs(rows, distribution: str, cardinality: int, variant: str) -> list[float]:
    return [
        r["records_per_second"]
        for r in rows
        if r["distribution"] == distribution
        and r["cardinality"] == cardinality
        and r["variant"] == variant
        and r["records_per_second"]
    ]


#: The ratios of the chapter: name -> (numerator variant, denominator variant).
RATIOS = {
    "per_batch_over_per_record": ("per-batch", "per-record"),
    "builtin_over_per_batch": ("builtin", "per-batch"),
}


def ratios_by_cardinality(rows) -> dict[str, dict[int, dict[str, Any]]]:
    """Per distribution (uniform first) and key cardinality: per-batch over per-record and
    builtin over per-batch, each the ratio of the runs' medians of rows per second, and beside
    each its estimate with the bootstrap interval over the runs (``<ratio>_interval``, an
    :meth:`~skewlab.experiments.intervals.Estimate.to_json`; no interval from one run).

    Example::

        >>> rows = [{"distribution": "zipf", "cardinality": 5, "variant": v,
        ...          "records_per_second": x}
        ...         for v, x in (("per-record", 100.0), ("per-batch", 300.0), ("builtin", 600.0))]
        >>> by_k = ratios_by_cardinality(rows)["zipf"][5]
        >>> by_k["per_batch_over_per_record"], by_k["builtin_over_per_batch"]
        (3.0, 2.0)
        >>> by_k["per_batch_over_per_record_interval"]
        {'value': 3.0, 'runs': 1, 'method': 'no interval'}
    """
    ratios: dict[str, dict[int, dict[str, Any]]] = {}
    for dist in sorted({r["distribution"] for r in rows}, key=("uniform", "zipf").index):
        for k in sorted(
            {r["cardinality"] for r in rows if r["distribution"] == dist}, reverse=True
        ):
            entry: dict[str, Any] = {}
            for name, (top, bottom) in RATIOS.items():
                est = ratio_of_medians(_runs(rows, dist, k, top), _runs(rows, dist, k, bottom))
                entry[name] = None if est is None else est.value
                entry[f"{name}_interval"] = None if est is None else est.to_json()
            ratios.setdefault(dist, {})[k] = entry
    return ratios


def summarize(rows) -> dict[str, Any]:
    """Min / median / max throughput per distribution, cardinality and variant, and the ratios
    (uniform views first, as in the seed; Zipf beside them), the headline ratios' intervals in
    ``summary["intervals"]``.

    Example::

        >>> rows = [{"distribution": "uniform", "cardinality": 20, "variant": v, "run": 0,
        ...          "records_per_second": x, "digest_matches_reference": True,
        ...          "state_matches_reference": True}
        ...         for v, x in (("per-record", 100.0), ("per-batch", 400.0), ("builtin", 800.0))]
        >>> s = summarize(rows)
        >>> s["per_batch_over_per_record_at_20_keys"], s["builtin_over_per_batch_at_20_keys"]
        (4.0, 2.0)
    """
    table = []
    for dist in sorted({r["distribution"] for r in rows}, key=("uniform", "zipf").index):
        for k in sorted(
            {r["cardinality"] for r in rows if r["distribution"] == dist}, reverse=True
        ):
            for variant in VARIANTS:
                values = [
                    r["records_per_second"] for r in rows
                    if (r["distribution"], r["cardinality"], r["variant"]) == (dist, k, variant)
                    and r["records_per_second"]
                ]  # fmt: skip
                if values:
                    table.append({"distribution": dist, "cardinality": k, "variant": variant,
                                  "min": min(values), "median": statistics.median(values),
                                  "max": max(values), "runs": len(values)})  # fmt: skip
    ratios = ratios_by_cardinality(rows)
    # the seed's point: uniform views (Zipf when only Zipf was measured), and Zipf beside it
    points = {
        "": (ratios.get("uniform") or ratios.get("zipf") or {}).get(SEED_KEYS, {}),
        "_zipf": ratios.get("zipf", {}).get(SEED_KEYS, {}),
    }
    headlines: dict[str, Any] = {}
    intervals: dict[str, Any] = {}
    for suffix, entry in points.items():
        for name in RATIOS:
            key = f"{name}_at_{SEED_KEYS}_keys{suffix}"
            headlines[key] = entry.get(name)
            if entry.get(f"{name}_interval") is not None:
                intervals[key] = entry[f"{name}_interval"]
    return {
        "headline_measure": HEADLINE_MEASURE,
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        **headlines,
        "intervals": intervals,
        "ratios": {d: {str(k): v for k, v in by_k.items()} for d, by_k in ratios.items()},
        "seed_speedup_at_20_keys": SEED_SPEEDUP_AT_20_KEYS,
        "all_digests_match": all(
            r["digest_matches_reference"] and r["state_matches_reference"] for r in rows
        ),
        "by_cardinality": table,
    }
