"""Spark's hot partition: one per-record ``transformWithState`` run over Zipf views, the time
its processor spent per state partition and micro-batch, and the partition Spark's state store
says holds ``tweet-0`` (the hottest tweet); beside it, what Spark says when the same query starts
on its default (HDFS-backed) state store provider.

Both are demonstrations of notebook 08, not measurements a claim reads: a quick report shows the
shipped reference's (``skewlab bench hot_partition --size full --save-reference`` made it), and
this benchmark measures them here. The run itself is
:func:`skewlab.experiments.streaming.hot_partition_run`; its digest is checked against the Spark
SQL reference like every streaming run.

What the summary says: ``hot_partition`` (the state partition of ``tweet-0``), its share of the
processor's time and of the rows (``hot_partition_time_share``, ``hot_partition_row_share``),
``run`` (the whole run, as :meth:`~skewlab.engine.metrics.RunResult.to_dict`: per micro-batch
Spark's progress, per partition and micro-batch the processor's time) and
``default_provider_error`` (Spark's line, as raised).

Example::

    >>> result = run_experiment("tiny", progress=False)                  # doctest: +SKIP
    >>> result.summary["hot_partition"] in range(result.summary["parallelism"])  # doctest: +SKIP
    True
"""

from __future__ import annotations

from typing import Any

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.results import BenchResult
from skewlab.experiments.streaming import default_provider_error, hot_partition_run
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.validation import check_number, check_whole

__all__ = ["EXPERIMENT", "HEADLINES", "run_experiment"]

EXPERIMENT = "hot_partition"
#: No ratio: the run shows where a hot key's work lands, the seed published no figure of it.
HEADLINES: dict[str, float | None] = {}


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    parallelism: int | None = None,
    skew: float = 1.2,
    seed: int = 1,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """The default provider's refusal, then one per-record run over Zipf(``skew``) views at
    ``size`` (the chapter registry's ``hot_partition`` settings; ``parallelism`` state
    partitions, default the size's); see the module doc. Writes nothing (the CLI does).
    ``progress`` is accepted for the bench's signature: two steps need no bar.
    """
    from skewlab.engine.session import get_spark

    settings = size_settings(EXPERIMENT, size)
    resolve_runs(settings, runs)  # a demonstration: one run
    check_number("skew (Zipf exponent)", skew, above=0)
    parallelism = check_whole(
        "parallelism (state partitions)",
        settings["parallelism"] if parallelism is None else parallelism,
        1,
    )
    spark = spark or get_spark()
    said = default_provider_error(spark)
    spec = ViewSpec(
        settings["n_views"], settings["n_users"], settings["n_tweets"], "zipf", skew, seed
    )
    run, hot = hot_partition_run(
        spark,
        n_views=spec.n_views,
        n_users=spec.n_users,
        n_tweets=spec.n_tweets,
        skew=skew,
        parallelism=parallelism,
        max_rows_per_trigger=settings["rows_per_trigger"],
        seed=seed,
    )
    rows = [{"experiment": EXPERIMENT, **sub} for sub in run.subtasks]
    summary: dict[str, Any] = {
        "runs": 1,
        "parallelism": parallelism,
        "skew": skew,
        "n_views": settings["n_views"],
        "hot_partition": hot,
        **_shares(run.subtasks, hot),
        "records_in": run.records_in,
        "records_processed": run.records_processed,
        # the same views again (a seed makes them), aggregated by Spark SQL: the oracle
        "digest_matches_reference": run.result_digest
        == result_digest(spark_reference_aggregate(generate_views(spark, spec))),
        "default_provider_error": said,
        "run": run.to_dict(),
    }
    return BenchResult(EXPERIMENT, size, rows, summary)


def _shares(subtasks: list[dict[str, Any]], hot: int | None) -> dict[str, float | None]:
    """The hot partition's share of the processor's time and of the rows over the run.

    Example::

        >>> _shares([{"partition": 0, "operator_seconds": 3.0, "records": 30},
        ...          {"partition": 1, "operator_seconds": 1.0, "records": 10}], 0)
        {'hot_partition_time_share': 0.75, 'hot_partition_row_share': 0.75}
    """
    shares: dict[str, float | None] = {}
    for name, field in (("time", "operator_seconds"), ("row", "records")):
        total = sum(s[field] for s in subtasks)
        mine = sum(s[field] for s in subtasks if s["partition"] == hot)
        shares[f"hot_partition_{name}_share"] = mine / total if hot is not None and total else None
    return shares
