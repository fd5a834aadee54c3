"""``spark_sql``: Spark's own aggregation of the same HLL registers (partial + final, JVM).

No Python operator touches a record: ``xxhash64``, bit arithmetic and ``max`` per (tweet,
sketch, register) run as Spark's hash aggregation with code generation. It is the ceiling a
Python operator is measured against; it has no per-record state access, latency or emissions.

Example::

    >>> run_strategy(views, RunConfig("spark_sql"))  # doctest: +SKIP
"""

from __future__ import annotations

import time

from skewlab.runtime import RunResult
from skewlab.stats import result_digest, spark_reference_aggregate


def run(spark, views, config):
    from pyspark.sql import functions as F

    counts = views.agg(F.count(F.lit(1)).alias("n"), F.count("tweet_id").alias("keyed")).first()
    started = time.perf_counter()
    results = spark_reference_aggregate(views, config.precision)
    wall = time.perf_counter() - started
    processed = int(counts.keyed)
    result = RunResult(
        strategy="spark_sql",
        parameters=config.parameters(),
        records_in=int(counts.n),
        records_processed=processed,
        records_rejected=int(counts.n) - processed,
        records_out=len(results),
        keys=len(results),
        wall_seconds=wall,
        operator_seconds=wall,
        operator_records_per_second=processed / wall if wall else None,
        e2e_records_per_second=processed / wall if wall else None,
        state_reads=None,
        state_writes=None,
        bytes_serialized=None,
        cache_hits=None,
        cache_misses=None,
        cache_hit_ratio=None,
        buffer_flushes=None,
        latency_p50_ms=None,
        latency_p99_ms=None,
        peak_memory_bytes=None,
        order_violations=None,
        result_digest=result_digest(results),
    )
    return result, results
