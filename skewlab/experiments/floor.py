"""The engine's floor: what every record pays outside the operators, taken apart part by part.

Two job shapes, each run with an operator that does nothing but pass its records on under its
job's emission contract (:mod:`skewlab.operators.passthrough`), one Python operator per subtask,
at each parallelism:

* ``count`` -- seed 003's count job: FLIP-325's input (longs, its key selector), cached; per
  record ``(key, 1)`` into the count job's emission sink (:class:`PassThrough`);
* ``view`` -- seed 000's view job: generated views written to Parquet and read back, the
  upstream map (each view's single-view state, by Spark), ``keyBy(tweet_id)`` (string keys);
  per record one emission into the final stage's sink with its latency
  (:class:`ViewPassThrough`), the columns the naive reduce reads handed over as Python objects.

The job is built up part by part, each step a whole Spark job over the same input that ends in
Spark's ``noop`` sink (every row computed, nothing kept), so a part's cost is the difference
between two consecutive steps' job times:

==================  =========================================================================
``source``          the input read (the count job: ``spark.range`` and the key selector,
                    cached; the view job: the Parquet files and the upstream map)
``key_group``       + Flink's key group and operator index of each record
                    (:func:`skewlab.engine.routing.with_key_groups`); at p = 1 none in
                    Spark: the subtask computes the key groups from the keys, a cost that
                    falls in the ``engine`` step
``shuffle``         + the exchange that puts operator *i*'s key groups on partition *i* (at
                    p = 1 none: the records stay in place, Flink's forward partitioning)
``arrow_to_python`` + the records handed to a Python worker as Arrow batches, and dropped
``loop``            + each batch's columns the operator reads turned into Python objects and
                    looped over
``emission``        + per record the job's emission (see above)
``engine``          the real job: skewlab's runtime (:func:`~skewlab.engine.job.run_stage`)
                    with the pass-through operator, its metrics and results collected to the
                    driver (the sink and the collect)
==================  =========================================================================

Beside it, ``spark_sql``: Spark's own JVM aggregation of the same job, what Spark costs without
Python (the count job: ``groupBy(word).count()``; the view job: ``groupBy(tweet_id)`` with
``count`` and Spark's HyperLogLog++ ``approx_count_distinct`` of views and of viewers). Every
figure is a job time (wall, from the action to its end), min / median / max over ``runs`` after
a warm-up; a part's per-record cost is the difference of medians over the records. The floor is
the ``engine`` step's job time per record.

Example::

    >>> result = run_experiment("tiny", progress=False)                        # doctest: +SKIP
    >>> result.summary["jobs"]["count"]["floor_us_per_record"]["1"] > 0         # doctest: +SKIP
    True
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skewlab.aggregates.stats_state import with_single_view_states
from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, python_columns, run_stage
from skewlab.engine.metrics import SubtaskMetrics
from skewlab.engine.output import Output
from skewlab.engine.routing import (
    KEY_GROUP,
    identity_partition,
    key_groups_in_jvm,
    with_key_groups,
)
from skewlab.engine.session import get_spark
from skewlab.engine.stage import StageSpec, spark_schema
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.results import BenchResult, spread
from skewlab.inputs.views import ViewSpec, generate_views, load_views, save_views
from skewlab.inputs.wordcount import WORD, flip325_input
from skewlab.operators.passthrough import PassThrough, ViewPassThrough
from skewlab.state.api import PickleSerializer
from skewlab.strategies.count import spark_count
from skewlab.strategies.keyed import VIEW_INPUT
from skewlab.validation import check_whole

__all__ = [
    "EXPERIMENT",
    "HEADLINES",
    "JOBS",
    "PARTS",
    "pass_through_stage",
    "run_experiment",
    "view_pass_through_stage",
]

EXPERIMENT = "floor"
#: The job shapes measured (see the module doc).
JOBS = ("count", "view")
#: The steps the job is built up in (see the module doc), in order.
PARTS = ("source", "key_group", "shuffle", "arrow_to_python", "loop", "emission", "engine")
#: The floor has no seed figure.
HEADLINES: dict[str, float | None] = {}
_VIEW_KEY = "tweet_id"


def _noop(df) -> float:
    """Run ``df`` to Spark's ``noop`` sink (every row computed, nothing kept); its seconds."""
    started = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def _drop(batches):
    for _ in batches:
        pass
    return iter(())


def _loop(columns: tuple[str, ...]):
    """A ``mapInArrow`` body that turns ``columns`` of each batch into Python objects."""

    def loop(batches):
        for batch in batches:
            for _row in zip(*(batch.column(c).to_pylist() for c in columns), strict=True):
                pass
        return iter(())

    return loop


def _emit_count(batches):
    from skewlab.aggregates.count import EmissionSink

    sink = EmissionSink()
    for batch in batches:
        keys: list = []
        values: list = []
        for key in batch.column(WORD).to_pylist():
            keys.append(key)
            values.append(1)
        sink.write_lists(keys, values)
    return iter(())


def _emit_view(batches):
    output = Output(final=True, serializer=None, metrics=SubtaskMetrics("1:emission", 0))
    clock = time.time_ns
    for batch in batches:
        names = (_VIEW_KEY, *VIEW_INPUT, KEY_GROUP)
        cols = [batch.column(c).to_pylist() for c in names if c in batch.schema.names]
        for key, seq, *_ in zip(*cols, strict=True):
            output.emit(key, seq, clock(), seq)
    output.flush_latencies()
    return iter(())


def pass_through_stage() -> StageSpec:
    """The count job's one keyed stage with the pass-through operator (long keys).

    Example::

        >>> pass_through_stage().name
        '1:pass-through'
    """
    return StageSpec(
        name="1:pass-through",
        key_col=WORD,
        operator=PassThrough,
        final=True,
        serializer=PickleSerializer(),
        key_type="bigint",
    )


def view_pass_through_stage() -> StageSpec:
    """The view job's one keyed stage (``keyBy(tweet_id)``) with the pass-through operator.

    Example::

        >>> view_pass_through_stage().input_columns
        ('seq', '_view_register', '_view_rank', '_user_register', '_user_rank')
    """
    return StageSpec(
        name="1:pass-through-views",
        key_col=_VIEW_KEY,
        operator=ViewPassThrough,
        final=True,
        serializer=PickleSerializer(),
        input_columns=VIEW_INPUT,
    )


def _spark_views(df) -> float:
    """Spark's own aggregation of the view job: per tweet its views and its distinct views and
    viewers by Spark's HyperLogLog++; seconds to the ``noop`` sink."""
    from pyspark.sql import functions as F

    return _noop(
        df.where(F.col(_VIEW_KEY).isNotNull())
        .groupBy(_VIEW_KEY)
        .agg(
            F.count(F.lit(1)).alias("views"),
            F.approx_count_distinct("view_id").alias("distinct_views"),
            F.approx_count_distinct("user_id").alias("viewers"),
        )
    )


def _steps(job_name: str, df, spark, job: JobConfig) -> dict[str, Callable[[], Any]]:
    """Each step's job (a function returning its seconds, the engine's also the records it
    emitted), cumulative, in :data:`PARTS` order, then ``spark_sql``."""
    if job_name == "count":
        key, columns, stage, emit = WORD, (WORD,), pass_through_stage(), _emit_count
        sql = lambda: spark_count(df)[2]  # noqa: E731
        source = df
    else:
        key, stage, emit = _VIEW_KEY, view_pass_through_stage(), _emit_view
        columns = (_VIEW_KEY, *VIEW_INPUT, KEY_GROUP)
        sql = lambda: _spark_views(df)  # noqa: E731
        source = with_single_view_states(df)
    routed = source  # at p = 1 the subtask computes the key groups itself, as the engine does
    if key_groups_in_jvm(stage, job):
        routed = with_key_groups(source, key, job.max_parallelism, job.parallelism)
    handed = python_columns(stage, job, routed.columns)
    columns = tuple(c for c in columns if c in handed)
    shuffled = identity_partition(routed, spark, job.parallelism).select(*handed)
    schema = spark_schema(stage.key_type)

    def engine() -> tuple[float, int]:
        out = collect_stage(run_stage(source, spark, stage, job), stage.serializer)
        if job_name == "count":  # each subtask's one result: (records emitted, their sum)
            return out.wall_seconds, sum(records for records, _ in out.results.values())
        return out.wall_seconds, sum(m.records_out for m in out.metrics)

    return {
        "source": lambda: _noop(source),
        "key_group": lambda: _noop(routed),
        "shuffle": lambda: _noop(shuffled),
        "arrow_to_python": lambda: _noop(shuffled.mapInArrow(_drop, schema)),
        "loop": lambda: _noop(shuffled.mapInArrow(_loop(columns), schema)),
        "emission": lambda: _noop(shuffled.mapInArrow(emit, schema)),
        "engine": engine,
        "spark_sql": sql,
    }


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    n: int | None = None,
    parallelism: int | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Build each job's pass-through shape up part by part and time each step; see the module
    doc. ``n`` overrides both jobs' record counts, ``parallelism`` runs one parallelism instead
    of the size's (1 and 2). Writes nothing outside a temporary directory (the view job's
    Parquet files).
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    sizes = {
        "count": check_whole("records", settings["n"] if n is None else n, 1),
        "view": check_whole("views", settings["view_n"] if n is None else n, 1),
    }
    ps = (
        (check_whole("parallelism", parallelism, 1),)
        if parallelism is not None
        else tuple(settings["parallelism"])
    )
    spark = spark or get_spark()
    steps_per_run = len(PARTS) + 1
    bar = tqdm(total=len(JOBS) * len(ps) * (runs + 1) * steps_per_run, desc=EXPERIMENT,
               disable=not progress)  # fmt: skip
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="skewlab-floor-") as tmp:
        for job_name in JOBS:
            n_job = sizes[job_name]
            df = _input(job_name, spark, n_job, settings, Path(tmp))
            for p in ps:
                job = JobConfig(parallelism=p).resolved(spark.sparkContext.defaultParallelism)
                steps = _steps(job_name, df, spark, job)
                for run in range(-1, runs):  # run -1: the warm-up, not kept
                    for part, step in steps.items():
                        bar.set_postfix_str(f"{job_name}, p={p}, {part}")
                        got = step()
                        seconds, emitted = got if isinstance(got, tuple) else (got, None)
                        if run >= 0:
                            rows.append({"experiment": EXPERIMENT, "job": job_name,
                                         "parallelism": p, "run": run, "part": part,
                                         "seconds": seconds, "records": n_job,
                                         "records_emitted": emitted})  # fmt: skip
                        bar.update()
            df.unpersist()  # the count job's cache; the view job's Parquet is not cached
    bar.close()
    return BenchResult(EXPERIMENT, size, rows, summarize(rows))


def _input(job_name: str, spark, n: int, settings: dict, tmp: Path):
    """The job's input: the count job's cached longs, or the view job's Parquet views."""
    if job_name == "count":
        df = flip325_input(spark, n).cache()
        df.count()
        return df
    spec = ViewSpec(n, settings["view_users"], settings["view_tweets"])
    path = save_views(generate_views(spark, spec), spec, tmp / spec.name)
    return load_views(spark, path)


def summarize(rows) -> dict[str, Any]:
    """Per job and parallelism: each step's job seconds (min / median / max), each part's cost
    per record (the difference of consecutive steps' medians), the floor (the engine step per
    record) and Spark's own aggregation per record; whether every record was emitted once.

    Example::

        >>> rows = [{"job": "count", "parallelism": 1, "part": p, "seconds": float(i + 1),
        ...          "records": 1_000_000,
        ...          "records_emitted": 1_000_000 if p == "engine" else None}
        ...         for i, p in enumerate((*PARTS, "spark_sql"))]
        >>> s = summarize(rows)
        >>> count = s["jobs"]["count"]
        >>> count["part_us_per_record"]["1"]["shuffle"], count["floor_us_per_record"]["1"]
        (1.0, 7.0)
    """
    out: dict[str, Any] = {"jobs": {}, "every_record_emitted": True}
    for job_name in [j for j in JOBS if any(r["job"] == j for r in rows)]:
        summary: dict[str, Any] = {"steps": {}, "part_us_per_record": {},
                                   "floor_us_per_record": {},
                                   "spark_sql_us_per_record": {}}  # fmt: skip
        of_job = [r for r in rows if r["job"] == job_name]
        for p in sorted({r["parallelism"] for r in of_job}):
            mine = [r for r in of_job if r["parallelism"] == p]
            n = mine[0]["records"]
            steps = {
                part: spread(r["seconds"] for r in mine if r["part"] == part)
                for part in (*PARTS, "spark_sql")
            }
            medians = [steps[part]["median"] for part in PARTS]
            parts = {PARTS[0]: medians[0] / n * 1e6}
            for i in range(1, len(PARTS)):
                parts[PARTS[i]] = (medians[i] - medians[i - 1]) / n * 1e6
            key = str(p)
            summary["steps"][key] = steps
            summary["part_us_per_record"][key] = parts
            summary["floor_us_per_record"][key] = steps["engine"]["median"] / n * 1e6
            summary["spark_sql_us_per_record"][key] = steps["spark_sql"]["median"] / n * 1e6
            out["every_record_emitted"] &= all(
                r["records_emitted"] == n for r in mine if r["part"] == "engine"
            )
        out["jobs"][job_name] = summary
    return out
