"""Seed 001 (FLIP-140) where memory decides: WordCount under a memory cap on the Python workers.

On this runtime the keyed heap finishes FLIP-140's WordCount *before* sorted input (chapter 05:
a Python dict has no key-count penalty like the JVM heap's garbage collector), so what sorted
input buys here is not time but memory: the heap keeps every key's count, the single-key
backend one key's. This benchmark shows that where it decides the outcome. The same job (``N``
records over ``K`` words; ``full``: the seed's 40,000,000 over 4,000,000) runs with ``heap``
(keyed state in Python dicts, records in the exchange's order) and ``sorted`` (Spark sorts each
partition by key group and word; a single-key state backend) with each Python worker's address
space capped at each of ``caps_mb`` MiB (:func:`skewlab.engine.worker_memory
.python_worker_memory_cap`, Spark's ``spark.executor.pyspark.memory`` applied per job), and
once without a cap. Each run ends one of three ways: it finishes (its counts checked against
Spark's ``groupBy().count()`` through an exact digest, its records accounted for), it runs
**out of memory** (an allocation beyond the cap raised ``MemoryError`` in a worker and failed
the job), or the **worker could not start** (the cap is below what a Python worker needs to
import its own libraries, a floor shared by both sides). Any other failure is an error.

Like for like: both sides run the same input, parallelism, exchange, Arrow transfer and digest
sink under the same cap; they differ in the state they keep and in the sort. Job seconds are
recorded for the runs that finish (a breakdown, not the measure here: the measure is which
finish).

Example::

    >>> result = run_experiment("tiny", progress=False)                # doctest: +SKIP
    >>> result.summary["sorted_only_caps_mb"]                           # doctest: +SKIP
    [400]
"""

from __future__ import annotations

from skewlab.engine.session import get_spark
from skewlab.engine.worker_memory import (
    MIN_CAP_MB,
    OUT_OF_MEMORY,
    memory_failure,
    python_worker_memory_cap,
)
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.results import BenchResult, median_of
from skewlab.experiments.sorted_input import INPUT_ORDER
from skewlab.inputs.wordcount import validate_wordcount
from skewlab.inputs.wordcount import wordcount_input as make_input
from skewlab.strategies.count import run_count, spark_count
from skewlab.validation import check_whole

EXPERIMENT = "memory_cap"
#: The two sides: every key's state (heap) against one key's (sorted input).
STRATEGIES = ("heap", "sorted")
#: How a run that finished ended (the failures are :mod:`skewlab.engine.worker_memory`'s).
FINISHED = "finished"
#: The smallest cap heap finished under, over sorted input's (``None``: heap never finished
#: under a cap). The seed published no such figure.
HEADLINES: dict[str, float | None] = {"heap_cap_over_sorted_cap": None}


def _caps(caps_mb) -> tuple[int | None, ...]:
    """The caps to run, smallest first, then ``None`` (no cap), checked."""
    caps = sorted({check_whole("memory cap (MiB)", c, MIN_CAP_MB) for c in caps_mb})
    if not caps:
        raise SkewlabInputError("memory caps: give at least one cap in MiB (e.g. 400,700)")
    return (*caps, None)


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    key_type: str = "int",
    n: int | None = None,
    k: int | None = None,
    caps_mb: tuple[int, ...] | None = None,
    parallelism: int | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run FLIP-140's WordCount with heap and sorted input under each memory cap; see the
    module doc. Writes nothing. Sizes come from the chapter registry unless given.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    n = settings["n"] if n is None else n
    k = settings["k"] if k is None else k
    validate_wordcount(n, k, key_type)
    caps = _caps(settings["caps_mb"] if caps_mb is None else caps_mb)

    spark = spark or get_spark()
    words = make_input(spark, n, k, key_type)
    oracle = spark_count(words)[0]  # Spark's own groupBy().count(), as a digest
    rows: list[dict] = []
    bar = tqdm(total=runs * len(caps) * len(STRATEGIES), desc=EXPERIMENT, disable=not progress)
    for run in range(runs):
        for cap in caps:
            for strategy in STRATEGIES:
                bar.set_postfix_str(f"{strategy}, " + (f"cap {cap} MiB" if cap else "no cap"))
                row = {
                    "experiment": EXPERIMENT,
                    "run": run,
                    "strategy": strategy,
                    "cap_mb": cap,
                    "n": n,
                    "k": k,
                    "key_type": key_type,
                    "input_order": INPUT_ORDER[strategy],
                }
                try:
                    with python_worker_memory_cap(spark, cap):
                        result = run_count(
                            words,
                            strategy,
                            spark=spark,
                            parallelism=parallelism,
                            sink="digest",
                            input_order=INPUT_ORDER[strategy],
                        )
                except Exception as error:  # noqa: BLE001 -- classified, else re-raised
                    outcome = memory_failure(error)
                    if outcome is None or cap is None:
                        raise
                    row.update(outcome=outcome, job_seconds=None, records=None, rejected=None)
                    row.update(parallelism=None, digest_matches_oracle=None)
                else:
                    row.update(
                        outcome=FINISHED,
                        job_seconds=result.wall_seconds,
                        records=result.records,
                        rejected=result.rejected,
                        parallelism=result.parallelism,
                        digest_matches_oracle=result.digest == oracle,
                    )
                rows.append(row)
                bar.update()
    bar.close()
    return BenchResult(EXPERIMENT, size, rows, summarize(rows))


def _outcome(rows, strategy: str, cap: int | None) -> str | None:
    """The outcome of ``strategy`` under ``cap``: the runs' one outcome, or ``mixed``."""
    seen = {r["outcome"] for r in rows if r["strategy"] == strategy and r["cap_mb"] == cap}
    if not seen:
        return None
    return seen.pop() if len(seen) == 1 else "mixed"


def summarize(rows) -> dict:
    """Per cap, each side's outcome and median job seconds; the smallest cap each finished
    under; the caps where sorted input finished and the heap ran out of memory.

    Example::

        >>> rows = [{"strategy": s, "cap_mb": c, "outcome": o, "job_seconds": t, "run": 0,
        ...          "n": 10, "k": 10, "records": 10 if t else None, "rejected": 0,
        ...          "digest_matches_oracle": True if t else None}
        ...         for s, c, o, t in [("heap", 400, "out of memory", None),
        ...                            ("sorted", 400, "finished", 2.0),
        ...                            ("heap", None, "finished", 1.0),
        ...                            ("sorted", None, "finished", 2.0)]]
        >>> s = summarize(rows)
        >>> s["sorted_only_caps_mb"], s["smallest_cap_finished_mb"]
        ([400], {'heap': None, 'sorted': 400})
    """
    caps = sorted({r["cap_mb"] for r in rows if r["cap_mb"] is not None})
    by_cap = []
    for cap in [*caps, None]:
        entry: dict = {"cap_mb": cap}
        for strategy in STRATEGIES:
            entry[strategy] = _outcome(rows, strategy, cap)
            entry[f"{strategy}_job_seconds"] = median_of(
                rows, "job_seconds", strategy=strategy, cap_mb=cap
            )
        by_cap.append(entry)
    smallest = {
        s: next((e["cap_mb"] for e in by_cap if e["cap_mb"] and e[s] == FINISHED), None)
        for s in STRATEGIES
    }
    finished = [r for r in rows if r["outcome"] == FINISHED]
    first = rows[0] if rows else {}
    return {
        "n": first.get("n"),
        "k": first.get("k"),
        "key_type": first.get("key_type"),
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        "caps_mb": caps,
        "by_cap": by_cap,
        "smallest_cap_finished_mb": smallest,
        "sorted_only_caps_mb": [
            e["cap_mb"]
            for e in by_cap
            if e["cap_mb"] and e["sorted"] == FINISHED and e["heap"] == OUT_OF_MEMORY
        ],
        "heap_cap_over_sorted_cap": (
            smallest["heap"] / smallest["sorted"]
            if smallest["heap"] and smallest["sorted"]
            else None
        ),
        "all_digests_match": all(r["digest_matches_oracle"] for r in finished),
        # records in = records processed + records rejected, for every run that finished
        "records_accounted": all(r["records"] + r["rejected"] == r["n"] for r in finished),
    }


#: The registry's part that says at which sizes notebook 05 runs this benchmark itself.
SECTION = "memory_cap_section"


def run_section(size: str, *, spark=None, progress: bool = False) -> BenchResult | None:
    """Notebook 05's memory-cap run at ``size``: this size's run where the registry's
    ``memory_cap_section`` says so (full), else ``None`` (tiny and quick: millions of keys take
    minutes, so those reports show the shipped reference instead).

    Example::

        >>> run_section("quick") is None
        True
    """
    if not size_settings(SECTION, size)["run"]:
        return None
    return run_experiment(size, progress=progress, spark=spark)
