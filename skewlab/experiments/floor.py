"""The engine's floor: what every record pays outside the operators, taken apart part by part.

Seed 003's count job shape -- FLIP-325's input (longs, its key selector), one Python operator
per subtask -- run with an operator that does nothing but pass its records on under the count
job's emission contract (:class:`~skewlab.operators.passthrough.PassThrough`), at each
parallelism. The job is built up part by part, each step a whole Spark job over the same input
that ends in Spark's ``noop`` sink (every row computed, nothing kept), so a part's cost is the
difference between two consecutive steps' job times:

==================  =========================================================================
``source``          the input generated (``spark.range`` and the key selector)
``key_group``       + Flink's key group and operator index of each record
                    (:func:`skewlab.engine.routing.with_key_groups`)
``shuffle``         + the exchange that puts operator *i*'s key groups on partition *i* (at
                    p = 1 none: the records stay in place, Flink's forward partitioning)
``arrow_to_python`` + the records handed to a Python worker as Arrow batches, and dropped
``loop``            + each batch's keys turned into Python objects and looped over
``emission``        + per record ``(key, 1)`` appended and each batch's emissions written to
                    the count job's emission sink as one Arrow batch
``engine``          the real job: skewlab's runtime (:func:`~skewlab.engine.job.run_stage`)
                    with the pass-through operator, its metrics and results collected to the
                    driver (the sink and the collect)
==================  =========================================================================

Beside it, ``spark_sql``: Spark's own JVM aggregation of the same job (``groupBy().count()``),
what Spark costs without Python. Every figure is a job time (wall, from the action to its
end), min / median / max over ``runs`` after a warm-up; a part's per-record cost is the
difference of medians over the records. The floor is the ``engine`` step's job time per record.

Example::

    >>> result = run_experiment("tiny", progress=False)                        # doctest: +SKIP
    >>> result.summary["floor_us_per_record"]["1"] > 0                          # doctest: +SKIP
    True
"""

from __future__ import annotations

import time
from typing import Any

from skewlab.engine.config import JobConfig
from skewlab.engine.job import collect_stage, run_stage
from skewlab.engine.routing import KEY_GROUP, identity_partition, with_key_groups
from skewlab.engine.session import get_spark
from skewlab.engine.stage import StageSpec, spark_schema
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.results import BenchResult, spread
from skewlab.inputs.wordcount import SEQ, WORD, flip325_input
from skewlab.operators.passthrough import PassThrough
from skewlab.state.api import PickleSerializer
from skewlab.strategies.count import spark_count
from skewlab.validation import check_whole

__all__ = ["EXPERIMENT", "HEADLINES", "PARTS", "pass_through_stage", "run_experiment"]

EXPERIMENT = "floor"
#: The steps the job is built up in (see the module doc), in order.
PARTS = ("source", "key_group", "shuffle", "arrow_to_python", "loop", "emission", "engine")
#: The floor has no seed figure (issue 28's goal, 0.2 us per record, is checked in its note).
HEADLINES: dict[str, float | None] = {}


def _noop(df) -> float:
    """Run ``df`` to Spark's ``noop`` sink (every row computed, nothing kept); its seconds."""
    started = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def _drop(batches):
    for _ in batches:
        pass
    return iter(())


def _loop(batches):
    for batch in batches:
        for _key in batch.column(WORD).to_pylist():
            pass
    return iter(())


def _emit(batches):
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
        input_columns=(SEQ,),
    )


def _steps(df, spark, job: JobConfig) -> dict[str, Any]:
    """Each step's job (a function returning its seconds), cumulative, in :data:`PARTS` order."""
    routed = with_key_groups(df, WORD, job.max_parallelism, job.parallelism)
    shuffled = identity_partition(routed, spark, job.parallelism).select(WORD, KEY_GROUP, SEQ)
    schema = spark_schema("bigint")
    stage = pass_through_stage()

    def engine() -> tuple[float, int]:
        out = collect_stage(run_stage(df, spark, stage, job), stage.serializer)
        return out.wall_seconds, sum(records for records, _ in out.results.values())

    return {
        "source": lambda: _noop(df),
        "key_group": lambda: _noop(routed),
        "shuffle": lambda: _noop(shuffled),
        "arrow_to_python": lambda: _noop(shuffled.mapInArrow(_drop, schema)),
        "loop": lambda: _noop(shuffled.mapInArrow(_loop, schema)),
        "emission": lambda: _noop(shuffled.mapInArrow(_emit, schema)),
        "engine": engine,
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
    """Build the pass-through job up part by part and time each step; see the module doc.
    ``parallelism`` runs one parallelism instead of the size's (1 and 2). Writes nothing.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    n = check_whole("records", settings["n"] if n is None else n, 1)
    ps = (
        (check_whole("parallelism", parallelism, 1),)
        if parallelism is not None
        else tuple(settings["parallelism"])
    )
    spark = spark or get_spark()
    df = flip325_input(spark, n).cache()
    df.count()
    bar = tqdm(total=len(ps) * (runs + 1) * (len(PARTS) + 1), desc=EXPERIMENT, disable=not progress)
    rows: list[dict] = []
    for p in ps:
        job = JobConfig(parallelism=p).resolved(spark.sparkContext.defaultParallelism)
        steps = _steps(df, spark, job)
        for run in range(-1, runs):  # run -1: the warm-up, not kept
            for part, step in steps.items():
                bar.set_postfix_str(f"p={p}, {part}")
                got = step()
                seconds, emitted = got if isinstance(got, tuple) else (got, None)
                if run >= 0:
                    rows.append({"experiment": EXPERIMENT, "parallelism": p, "run": run,
                                 "part": part, "seconds": seconds, "records": n,
                                 "records_emitted": emitted})  # fmt: skip
                bar.update()
            bar.set_postfix_str(f"p={p}, spark_sql")
            seconds = spark_count(df)[2]
            if run >= 0:
                rows.append({"experiment": EXPERIMENT, "parallelism": p, "run": run,
                             "part": "spark_sql", "seconds": seconds, "records": n,
                             "records_emitted": None})  # fmt: skip
            bar.update()
    bar.close()
    df.unpersist()
    return BenchResult(EXPERIMENT, size, rows, summarize(rows))


def summarize(rows) -> dict[str, Any]:
    """Per parallelism: each step's job seconds (min / median / max), each part's cost per
    record (the difference of consecutive steps' medians), the floor (the engine step per
    record) and Spark's own aggregation per record; every record emitted once.

    Example::

        >>> rows = [{"parallelism": 1, "part": p, "seconds": float(i + 1), "records": 1_000_000,
        ...          "records_emitted": 1_000_000 if p == "engine" else None}
        ...         for i, p in enumerate((*PARTS, "spark_sql"))]
        >>> s = summarize(rows)
        >>> s["part_us_per_record"]["1"]["shuffle"], s["floor_us_per_record"]["1"]
        (1.0, 7.0)
    """
    out: dict[str, Any] = {"steps": {}, "part_us_per_record": {}, "floor_us_per_record": {},
                           "spark_sql_us_per_record": {}, "every_record_emitted": True}  # fmt: skip
    for p in sorted({r["parallelism"] for r in rows}):
        mine = [r for r in rows if r["parallelism"] == p]
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
        out["steps"][key] = steps
        out["part_us_per_record"][key] = parts
        out["floor_us_per_record"][key] = steps["engine"]["median"] / n * 1e6
        out["spark_sql_us_per_record"][key] = steps["spark_sql"]["median"] / n * 1e6
        out["every_record_emitted"] &= all(
            r["records_emitted"] == n for r in mine if r["part"] == "engine"
        )
    return out
