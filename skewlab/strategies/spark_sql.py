"""``spark_sql``: Spark's own aggregation of the same HLL registers (partial + final, JVM).

No Python operator touches a record: ``xxhash64``, bit arithmetic and ``max`` per (tweet,
sketch, register) run as Spark's hash aggregation with code generation. It is the ceiling a
Python operator is measured against; it has no per-record state access, latency or emissions.

Example::

    >>> SparkSql().parameters()
    {}
    >>> run_strategy(views, SparkSql())  # doctest: +SKIP
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.metrics import RunResult
from skewlab.strategies.parameters import StrategyParameters

__all__ = ["SparkSql"]


@dataclass(frozen=True, kw_only=True)
class SparkSql(StrategyParameters):
    """Spark SQL's hash aggregation of the registers; its operator time is its job time."""

    name: ClassVar[str] = "spark_sql"
    resumable: ClassVar[bool] = False
    periodic_checkpoints: ClassVar[bool] = False
    modelled_as: ClassVar[str | None] = None

    def run(self, spark, views, job):
        from pyspark.sql import functions as F

        counts = views.agg(F.count(F.lit(1)).alias("n"), F.count("tweet_id").alias("keyed")).first()
        started = time.perf_counter()
        results = spark_reference_aggregate(views, self.precision)
        wall = time.perf_counter() - started
        processed = int(counts.keyed)
        rate = processed / wall if wall else None
        result = RunResult(
            strategy=self.name,
            parameters=job.parameters() | self.parameters(),
            records_in=int(counts.n),
            records_processed=processed,
            records_rejected=int(counts.n) - processed,
            records_out=len(results),
            keys=len(results),
            wall_seconds=wall,
            operator_seconds=wall,
            result_digest=result_digest(results),
            operator_records_per_second=rate,
            e2e_records_per_second=rate,
        )
        return result, results
