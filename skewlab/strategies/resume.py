"""Exactly-once across a stop, a rescale and a failure: a strategy stopped with a savepoint and
resumed at another parallelism, or failed on purpose and recovered from its checkpoints.

* :func:`stop_with_savepoint` -- run until source record ``N`` (``seq < N``), then every
  stateful operator's subtasks snapshot their state; the savepoint is published atomically
  (:mod:`skewlab.engine.savepoint`);
* :func:`resume_from_savepoint` -- a second job restores the savepoint at a new parallelism
  ``p'`` (each subtask reads the key groups it owns) and processes the rest (``seq >= N``);
* :func:`run_with_savepoint` -- both, and the sink after both jobs: each key's latest result,
  the second job's where it emitted one, else the first's. Its digest equals the uninterrupted
  run's (the reference) for naive (heap, rocksdb, cached), cached, buffered, salted and sorted;
* :func:`run_with_failure` -- periodic checkpoints and one subtask failing at a chosen source
  record on its first attempt; Spark retries the task, which restores its latest checkpoint and
  replays from its position: the same digest, every record counted once.

Bad input is refused before any Spark work: a new parallelism above the max parallelism, a
savepoint taken with another max parallelism, by another strategy or with other parameters (see
:data:`RESTORE_MAY_CHANGE`), a damaged savepoint (read whole: every file, every entry, every
checksum), in-flight buffer records kept as list state that a rescale would send to the wrong
subtask, a failure under a master that does not retry tasks. Last, with one small Spark job, a
savepoint is refused for other input: it records the identity of the records before its source
position (:func:`input_fingerprint`), and the resumed views must have the same.

Example::

    >>> run = run_with_savepoint(views, Naive(backend="rocksdb"), JobConfig(parallelism=3),
    ...                          savepoint_at=5_000, resume_parallelism=4)   # doctest: +SKIP
    >>> run.result_digest == result_digest(spark_reference_aggregate(views))  # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.config import JobConfig
from skewlab.engine.metrics import RunResult
from skewlab.engine.recovery import Recovery
from skewlab.engine.savepoint import (
    Savepoint,
    begin_savepoint,
    discard_savepoint,
    publish_savepoint,
)
from skewlab.errors import SkewlabInputError, SkewlabRunError, failure_cause
from skewlab.inputs.views import check_views_schema
from skewlab.operators.buffer_state import (
    IN_FLIGHT_STATE,
    InFlight,
    InFlightSerializer,
    misrouted,
)
from skewlab.state.key_groups import compute_key_group_range_for_operator_index
from skewlab.state.restore import check_new_parallelism
from skewlab.strategies.parameters import StrategyParameters
from skewlab.validation import check_whole

__all__ = [
    "RESTORE_MAY_CHANGE",
    "RESUMABLE",
    "SAVEPOINT_SERIALIZERS",
    "RescaledRun",
    "check_resumable",
    "input_fingerprint",
    "misrouted_in_flight",
    "resume_from_savepoint",
    "run_with_failure",
    "run_with_savepoint",
    "stop_with_savepoint",
    "task_retries",
    "verify_savepoint",
]


def _resumable() -> tuple[str, ...]:
    from skewlab.strategies import STRATEGIES

    return tuple(name for name, cls in STRATEGIES.items() if cls.resumable)


#: Strategies that can stop with a savepoint and resume from one (their classes' ``resumable``).
RESUMABLE = _resumable()


@dataclass
class RescaledRun:
    """Two jobs around a savepoint, and what the sink holds after both."""

    before: RunResult
    after: RunResult
    savepoint: dict[str, Any]
    results: dict[str, Any] = field(repr=False)
    result_digest: str = ""

    @property
    def records_in(self) -> int:
        """Records read by both jobs (each source record once)."""
        return self.before.records_in + self.after.records_in

    def summary(self) -> dict[str, Any]:
        """One flat dict of the two jobs (for a table or ``--json``)."""
        return {
            "strategy": self.before.strategy,
            "parallelism_before": self.before.parameters.get("parallelism"),
            "parallelism_after": self.after.parameters.get("parallelism"),
            "source_position": self.savepoint["source_position"],
            "records_before": self.before.records_in,
            "records_after": self.after.records_in,
            "records_processed": self.before.records_processed + self.after.records_processed,
            "records_rejected": self.before.records_rejected + self.after.records_rejected,
            "keys": len(self.results),
            "savepoint_entries": sum(
                sum(o["keyed_states"].values()) for o in self.savepoint["operators"].values()
            ),
            "restore_bytes": self.after.extra.get("recovery", {}).get("restore_bytes"),
            "restore_requests": self.after.extra.get("recovery", {}).get("restore_requests"),
            "wall_seconds": self.before.wall_seconds + self.after.wall_seconds,
            "result_digest": self.result_digest,
        }


def _resolved(job: JobConfig | None, spark) -> JobConfig:
    job = JobConfig() if job is None else job
    return job.resolved(spark.sparkContext.defaultParallelism)


def check_resumable(strategy: StrategyParameters | type[StrategyParameters]) -> None:
    """Refuse, in one line, a strategy (its parameters or its class) that cannot take savepoints.

    Example::

        >>> from skewlab.strategies import Naive, SparkSql
        >>> check_resumable(Naive())
        >>> check_resumable(SparkSql)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: strategy 'spark_sql' cannot take savepoints here; these can: naive, salted, buffered, cached, sorted
    """  # noqa: E501
    if not strategy.resumable:
        raise SkewlabInputError(
            f"strategy {strategy.name!r} cannot take savepoints here; these can: "
            f"{', '.join(RESUMABLE)}"
        )


#: Strategy parameters a resume may change: the state they leave is the same (the snapshot
#: format is every backend's, a cache's size and a buffer's flush policy change no result).
#: Any other difference (salt buckets, the HLL precision, the buffer's kind) is refused.
RESTORE_MAY_CHANGE = frozenset({"backend", "cache_entries", "trigger_interval_ms", "max_count"})


def input_fingerprint(views, position: int) -> dict[str, Any]:
    """The identity of the input a savepoint at source ``position`` was built from: how many
    records come before it, and two order-free hashes of their ``seq``, ``view_id``,
    ``user_id`` and ``tweet_id`` (one Spark aggregation).

    Example::

        >>> input_fingerprint(views, 1_000)  # doctest: +SKIP
        {'records_before': 1000, 'hash': 'xxh64:5e1f...:1f3a...'}
    """
    from pyspark.sql import functions as F

    hashed = F.xxhash64("seq", "view_id", "user_id", "tweet_id")
    row = (
        views.filter(F.col("seq") < F.lit(position))
        .agg(
            F.count(F.lit(1)).alias("records"),
            F.bit_xor(hashed).alias("xor"),
            F.sum(hashed.bitwiseAND(F.lit(0xFFFFFFFF))).alias("low_sum"),
        )
        .first()
    )
    xor, low_sum = (row["xor"] or 0) & 0xFFFFFFFFFFFFFFFF, row["low_sum"] or 0
    return {"records_before": int(row["records"]), "hash": f"xxh64:{xor:016x}:{low_sum:x}"}


def _check_parameters(path: Path, recorded: Any, strategy: StrategyParameters) -> None:
    now = json.loads(json.dumps(strategy.parameters()))
    if not isinstance(recorded, dict):
        raise SkewlabInputError(f"savepoint {path} records no strategy parameters")
    differ = [
        f"{name} {recorded.get(name)!r} (savepoint) vs {now.get(name)!r} (this job)"
        for name in sorted(set(recorded) | set(now))
        if name not in RESTORE_MAY_CHANGE and recorded.get(name) != now.get(name)
    ]
    if differ:
        raise SkewlabInputError(
            f"savepoint {path} was taken with other {strategy.name} parameters: "
            f"{'; '.join(differ)} (only {', '.join(sorted(RESTORE_MAY_CHANGE))} may change)"
        )


def _check_input(path: Path, loaded: Savepoint, views) -> None:
    recorded = loaded.job.get("input")
    if not isinstance(recorded, dict):
        raise SkewlabInputError(f"savepoint {path} records no identity of its input")
    now = input_fingerprint(views, loaded.source_position)
    if now != recorded:
        raise SkewlabInputError(
            f"savepoint {path} was taken on other input: {recorded.get('records_before')} "
            f"records before source position {loaded.source_position} hashing to "
            f"{recorded.get('hash')}; these views have {now['records_before']} hashing to "
            f"{now['hash']} (resume it over the views it was taken on)"
        )


def _check_views(views) -> None:
    check_views_schema(views)
    if "seq" not in views.columns:
        raise SkewlabInputError("savepoints need views with a 'seq' column (the source position)")


#: The value serializers the strategies' savepoints name beside pickle (the views' statistics,
#: the buffer's in-flight records): what verification decodes every value with.
SAVEPOINT_SERIALIZERS = (StatsSerializer, InFlightSerializer)


def verify_savepoint(path: str | Path, **kwargs: Any) -> Savepoint:
    """:meth:`Savepoint.load` with ``verify=True``: every file read, every checksum compared,
    every key re-hashed and every value decoded (with :data:`SAVEPOINT_SERIALIZERS`).

    Example::

        >>> verify_savepoint("/tmp/sp").entries  # doctest: +SKIP
        1234
    """
    return Savepoint.load(path, verify=True, serializers=SAVEPOINT_SERIALIZERS, **kwargs)


def stop_with_savepoint(
    views,
    strategy: StrategyParameters,
    job: JobConfig,
    *,
    savepoint_at: int,
    path: str | Path,
    in_flight: str = "flush",
    spark=None,
) -> tuple[RunResult, dict[str, Any], Savepoint]:
    """Run ``strategy`` over ``views`` until source record ``savepoint_at`` and publish its
    savepoint at ``path``; returns ``(RunResult, results, Savepoint)``."""
    check_resumable(strategy)
    _check_views(views)
    check_whole("savepoint_at (--savepoint-at)", savepoint_at, 1)
    spark = spark or views.sparkSession
    job = _resolved(job, spark)
    work = begin_savepoint(path)
    recovery = Recovery(stop_at=savepoint_at, savepoint_dir=str(work), in_flight=in_flight)
    try:
        taken_on = input_fingerprint(views, savepoint_at)
        result, results = strategy.run(spark, views, replace(job, recovery=recovery))
        savepoint = publish_savepoint(
            work,
            path,
            max_parallelism=job.max_parallelism,
            parallelism=job.parallelism,
            source_position=savepoint_at,
            job={
                "strategy": strategy.name,
                "parameters": strategy.parameters(),
                "input": taken_on,
            },
        )
    except SkewlabInputError:
        discard_savepoint(work)
        raise
    except Exception as exc:  # the job or the write failed: say what failed and what was kept
        discard_savepoint(work)
        raise SkewlabRunError(
            f"the savepoint to {str(path)!r} was not taken: {failure_cause(str(exc))}; nothing "
            "was published and its partial files were removed"
        ) from exc
    except BaseException:
        discard_savepoint(work)
        raise
    return result, results, savepoint


def misrouted_in_flight(savepoint: Savepoint, new_parallelism: int) -> list[int]:
    """Per new subtask, the in-flight buffer elements kept as list state that split-distribute
    would hand it for keys it does not own (all zeros without such state).

    Example::

        >>> misrouted_in_flight(Savepoint.load("data/savepoints/buffered-list"), 3)  # doctest: +SKIP
        [0, 41, 12]
    """  # noqa: E501
    counts = [0] * new_parallelism
    for operator in savepoint.operators.values():
        state = operator.operator_state
        if state is None or IN_FLIGHT_STATE not in state.modes:
            continue
        for subtask in range(new_parallelism):
            owned = compute_key_group_range_for_operator_index(
                savepoint.max_parallelism, new_parallelism, subtask
            )
            elements = state.restore(new_parallelism, subtask)[IN_FLIGHT_STATE]
            counts[subtask] += misrouted([InFlight.from_bytes(e) for e in elements], owned)
    return counts


def resume_from_savepoint(
    views,
    strategy: StrategyParameters,
    job: JobConfig,
    savepoint: str | Path | Savepoint,
    *,
    parallelism: int,
    in_flight: str = "flush",
    spark=None,
) -> tuple[RunResult, dict[str, Any]]:
    """Restore ``savepoint`` at ``parallelism`` and process the views from its source position
    on. Checked whole before any work (every file read, every entry checked)."""
    check_resumable(strategy)
    _check_views(views)
    spark = spark or views.sparkSession
    job = _resolved(job, spark)
    path = savepoint.path if isinstance(savepoint, Savepoint) else Path(savepoint)
    check_whole("resume parallelism (--resume-parallelism)", parallelism, 1)
    loaded = verify_savepoint(path)
    check_new_parallelism(parallelism, loaded.max_parallelism)
    Savepoint.load(path, max_parallelism=job.max_parallelism)
    taken_by = loaded.job.get("strategy")
    if taken_by != strategy.name:
        raise SkewlabInputError(
            f"savepoint {path} was taken by strategy {taken_by!r}; this job runs "
            f"{strategy.name!r} (its operators would not find their state)"
        )
    _check_parameters(path, loaded.job.get("parameters"), strategy)
    wrong = sum(misrouted_in_flight(loaded, parallelism))
    if wrong:
        raise SkewlabInputError(
            f"savepoint {path} keeps a buffer's in-flight records as list state: at parallelism "
            f"{parallelism} split-distribute would send {wrong} of them to subtasks that do not "
            "own their keys (seed 000, note 2: it cannot be rescaled); take it with in_flight="
            "'flush' or 'keyed_state'"
        )
    _check_input(path, loaded, views)  # last: the one check that runs a (small) Spark job
    recovery = Recovery(restore_from=str(path), in_flight=in_flight)
    resumed = replace(job, parallelism=parallelism, recovery=recovery)
    return strategy.run(spark, views, resumed)


def run_with_savepoint(
    views,
    strategy: StrategyParameters,
    job: JobConfig | None = None,
    *,
    savepoint_at: int,
    resume_parallelism: int,
    path: str | Path | None = None,
    in_flight: str = "flush",
    spark=None,
) -> RescaledRun:
    """Stop after source record ``savepoint_at`` with a savepoint, resume it at
    ``resume_parallelism``; the sink after both jobs and its digest. ``path``: where the
    savepoint goes (default: a temporary directory, removed afterwards)."""
    check_resumable(strategy)
    spark = spark or views.sparkSession
    job = _resolved(job, spark)
    check_whole("resume parallelism (--resume-parallelism)", resume_parallelism, 1)
    check_new_parallelism(resume_parallelism, job.max_parallelism)
    scratch = None
    if path is None:
        scratch = tempfile.mkdtemp(prefix="skewlab-savepoints-")
        path = Path(scratch) / "savepoint"
    try:
        before, first, savepoint = stop_with_savepoint(
            views, strategy, job, savepoint_at=savepoint_at, path=path,
            in_flight=in_flight, spark=spark,
        )  # fmt: skip
        after, second = resume_from_savepoint(
            views, strategy, job, savepoint, parallelism=resume_parallelism,
            in_flight=in_flight, spark=spark,
        )  # fmt: skip
        summary = savepoint.summary()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    results = {**first, **second}
    return RescaledRun(before, after, summary, results, result_digest(results))


_LOCAL_RETRIES = re.compile(r"^local\[(?:\d+|\*),\s*(\d+)\]$")


def task_retries(spark) -> int:
    """How many times Spark runs a failing task before failing the job (``local[*]``: once).

    Example::

        >>> task_retries(spark)  # doctest: +SKIP
        1
    """
    master = spark.sparkContext.master
    match = _LOCAL_RETRIES.match(master)
    if match:
        return int(match.group(1))
    if master.startswith("local") and not master.startswith("local-cluster"):
        return 1
    return int(spark.sparkContext.getConf().get("spark.task.maxFailures", "4"))


def run_with_failure(
    views,
    strategy: StrategyParameters,
    job: JobConfig | None = None,
    *,
    fail_at: int,
    checkpoint_interval: int | None,
    spark=None,
) -> RunResult:
    """Run ``strategy`` with a checkpoint every ``checkpoint_interval`` records per source
    subtask (``None``: none -- a retried task then starts over) while the subtask reading
    source record ``fail_at`` fails once; needs a master that retries tasks (e.g.
    ``local[2,4]``, or ``local-cluster``)."""
    check_resumable(strategy)
    if not strategy.periodic_checkpoints and checkpoint_interval is not None:
        raise SkewlabInputError(
            f"strategy {strategy.name!r} runs as a batch job and takes no periodic checkpoints: "
            "a failed task reruns its partition (leave the checkpoint interval out)"
        )
    _check_views(views)
    spark = spark or views.sparkSession
    if task_retries(spark) < 2:
        raise SkewlabInputError(
            f"Spark master {spark.sparkContext.master} runs a failed task only once, so an "
            "injected failure would end the job: use a master that retries, e.g. local[2,4] "
            "(local[N,maxFailures]) or local-cluster[2,1,1024]"
        )
    records = views.count()
    if fail_at >= records:  # no subtask would ever read it: the run would pass untested
        raise SkewlabInputError(
            f"fail_at (--fail-at) {fail_at:,} is past the input: its source records are "
            f"0 to {records - 1:,}, so no failure would be injected"
        )
    job = _resolved(job, spark)
    scratch = tempfile.mkdtemp(prefix="skewlab-checkpoints-")
    try:
        recovery = Recovery(
            checkpoint_interval=checkpoint_interval,
            checkpoint_dir=scratch if checkpoint_interval is not None else None,
            fail_at=fail_at,
        )
        result, _ = strategy.run(spark, views, replace(job, recovery=recovery))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result
