"""Seed 001's ValueState micro-benchmark: ``valueAdd`` / ``valueGet`` / ``valueUpdate`` in ops/ms.

As flink-benchmarks' ``ValueStateBenchmark`` (keys not shuffled, as the seed ran it): the
backend is first filled with ``setup_keys`` keys; ``valueGet`` reads and ``valueUpdate``
overwrites those keys, ``valueAdd`` writes as many new keys. Each operation addresses the next
key (Flink's ``setCurrentKey`` + ``value()`` / ``update()``; here one ``get`` / ``put`` by
``(key_group, key)``), keys in sorted (key group, key) order -- the order sorted input has.

JMH calls each operation millions of times per iteration and the key index only wraps around
its 500,000 keys, so in flink-benchmarks every series runs over its keys again and again, and
``valueAdd`` inserts its new keys only on the first pass, inside JMH's warm-up: what the seed's
``valueAdd`` measured is the overwrite of keys added a pass earlier, in a backend holding
1,000,000 keys. Here too each operation series runs one untimed warm-up pass over its keys and
then the timed pass; the warm-up pass's rate is reported beside it (``warmup_ops_per_wall_ms``: for
``valueAdd``, inserting fresh keys). The single-key backend keeps only the current key and keys
only go forward, so each of its passes starts on a fresh, empty backend (filling it first would
leave just the last key). Every pass is checked: a ``valueGet`` that does not find every key,
or a ``valueAdd`` that did not store its keys, is an error, not a figure.

No Spark: this measures the backends alone, each pass in a compiled loop
(:mod:`skewlab.operators.count_loops`) -- as JMH's loop is compiled -- calling the backend's
compiled value-state core (heap, single_key) or, for rocksdb, its Python ``get`` / ``put``
(rocksdict plus serialisation).

Like for like -- what each backend does per operation, and what its timer covers:

==========  =======================================  ======================================
backend     the same for every backend               the mechanism compared
==========  =======================================  ======================================
heap        the same keys (Java longs), in (key      one dict lookup (and store) per key
rocksdb     group, key) order, their key groups      key and value serialised, one
            precomputed; one compiled loop calling   rocksdict get / put per key
single_key  the backend's get or put once per key    a key comparison and a field read /
            (timer: that loop, one pass over the     write per key
            keys, the cyclic GC off)
==========  =======================================  ======================================

The headline is the seed's own measure, JMH's throughput mode: **operations per wall-clock
millisecond** (``ops_per_wall_ms``), median of the runs with min and max. Beside it, operations per
millisecond of the process's CPU time (``ops_per_cpu_ms``: RocksDB's threads included; what
other processes on a shared machine do not inflate). A run measures the three backends back to
back, so each ratio (``heap_over_rocksdb_<op>``, ``single_key_over_heap_<op>`` and their
``_cpu`` and ``_first_pass`` beside) is the **median of the runs' own ratios**, with its bootstrap
interval (:func:`~skewlab.experiments.intervals.median_estimate`) in ``summary["intervals"]``,
as chapter 05's job-time ratios are.

Seed (ops/ms): valueAdd HEAP 9,206 / ROCKSDB 653 / SINGLE_KEY 18,282; valueGet 12,719 / 1,621 /
30,861; valueUpdate 12,916 / 942 / 32,883.

Example::

    >>> result = run_experiment("quick", runs=1)          # doctest: +SKIP
    >>> result.summary["headline_measure"]                # doctest: +SKIP
    'ops_per_wall_ms'
"""

from __future__ import annotations

import gc
import time
from functools import partial

import numpy as np

from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import median_estimate
from skewlab.experiments.results import BenchResult, spread
from skewlab.operators.count_loops import get_each, put_each
from skewlab.state import create_backend
from skewlab.state.java_hash import java_long_hash_array
from skewlab.state.key_groups import assign_to_key_group_array
from skewlab.validation import check_whole

EXPERIMENT = "value_state"
BACKENDS = ("heap", "rocksdb", "single_key")
OPERATIONS = ("valueAdd", "valueGet", "valueUpdate")
SEED_OPS_PER_MS = {
    "valueAdd": {"heap": 9206.249, "rocksdb": 652.726, "single_key": 18282.074},
    "valueGet": {"heap": 12718.518, "rocksdb": 1621.098, "single_key": 30861.293},
    "valueUpdate": {"heap": 12916.056, "rocksdb": 941.824, "single_key": 32883.440},
}
#: What the headline figures and ratios are computed from (JMH's throughput mode).
HEADLINE_MEASURE = "ops_per_wall_ms"
MAX_PARALLELISM = 128
VALUE = 1_234_567_890_123  # a Java long, as the benchmark's random values


def sorted_keys(first: int, count: int, max_parallelism: int = MAX_PARALLELISM):
    """Long keys ``first .. first+count-1`` with their key groups, sorted by (key group, key).

    Example::

        >>> groups, keys = sorted_keys(0, 4)
        >>> sorted(keys), all(a <= b for a, b in zip(groups, groups[1:]))
        ([0, 1, 2, 3], True)
    """
    keys = np.arange(first, first + count, dtype=np.int64)
    groups = assign_to_key_group_array(java_long_hash_array(keys), max_parallelism)
    order = np.lexsort((keys, groups))
    return groups[order].tolist(), keys[order].tolist()


def _timed(fn) -> tuple[float, float]:
    """``(CPU ms, wall ms)`` of ``fn()``, the cyclic garbage collector off meanwhile."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        cpu, wall = time.process_time_ns(), time.perf_counter_ns()
        fn()
        return (time.process_time_ns() - cpu) / 1e6, (time.perf_counter_ns() - wall) / 1e6
    finally:
        if gc_was_enabled:
            gc.enable()


def measure_backend(backend_name: str, n_keys: int) -> dict[str, dict[str, float]]:
    """Per operation, the rates of its timed pass (``ops_per_wall_ms``, ``ops_per_cpu_ms``)
    and of its warm-up pass (``warmup_ops_per_wall_ms``) over ``n_keys`` keys, each operation
    on a fresh backend."""
    setup_groups, setup_keys = sorted_keys(0, n_keys)
    new_groups, new_keys = sorted_keys(n_keys, n_keys)
    value = VALUE
    fills = backend_name != "single_key"  # the single-key backend keeps only the current key

    def add(core):
        put_each(core, new_groups, new_keys, value)

    def get(core):
        found = get_each(core, setup_groups, setup_keys)
        if found != (n_keys if fills else 0):
            raise RuntimeError(f"valueGet on {backend_name} found {found} of {n_keys} keys")

    def update(core):
        put_each(core, setup_groups, setup_keys, value)

    def filled_backend():
        backend = create_backend(backend_name)
        if fills:
            put_each(backend.value_state(), setup_groups, setup_keys, value - 1)
        return backend

    after = {  # (key group, key, value) that a filled backend holds after each operation
        "valueAdd": [
            (new_groups[-1], new_keys[-1], value),
            (setup_groups[0], setup_keys[0], value - 1),
        ],
        "valueGet": [(setup_groups[-1], setup_keys[-1], value - 1)],
        "valueUpdate": [
            (setup_groups[0], setup_keys[0], value),
            (setup_groups[-1], setup_keys[-1], value),
        ],
    }
    results: dict[str, dict[str, float]] = {}
    for operation, body in (("valueAdd", add), ("valueGet", get), ("valueUpdate", update)):
        backend = filled_backend()
        try:
            _, warmup_wall_ms = _timed(partial(body, backend.value_state()))
            if not fills:  # keys only go forward: the timed pass starts afresh
                backend.close()
                backend = filled_backend()
            cpu_ms, wall_ms = _timed(partial(body, backend.value_state()))
            for group, key, expected in after[operation] if fills else ():
                if backend.get(group, key) != expected:
                    raise RuntimeError(f"{operation} on {backend_name} left key {key} wrong")
        finally:
            backend.close()
        results[operation] = {
            "ops_per_wall_ms": _per_ms(n_keys, wall_ms),
            "ops_per_cpu_ms": _per_ms(n_keys, cpu_ms),
            "warmup_ops_per_wall_ms": _per_ms(n_keys, warmup_wall_ms),
        }
    return results


def _per_ms(ops: int, ms: float) -> float:
    return ops / ms if ms else float("inf")


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    keys: int | None = None,
    parallelism: int | None = None,  # accepted for the CLI; the micro-benchmark is sequential
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the ValueState micro-benchmark; see the module doc. Writes nothing."""
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    keys = check_whole("keys", settings["keys"] if keys is None else keys, 1)
    rows = []
    bar = tqdm(total=runs * len(BACKENDS), desc=EXPERIMENT, disable=not progress)
    for run in range(runs):
        for backend in BACKENDS:
            bar.set_postfix_str(backend)
            for operation, rates in measure_backend(backend, keys).items():
                rows.append(
                    {
                        "experiment": EXPERIMENT,
                        "run": run,
                        "backend": backend,
                        "operation": operation,
                        "keys": keys,
                        **rates,
                        "seed_ops_per_ms": SEED_OPS_PER_MS[operation][backend],
                    }
                )
            bar.update()
    bar.close()
    return BenchResult(EXPERIMENT, size, rows, summarize(rows))


#: The ratios reported per operation: ``name: (faster backend, slower backend)``.
RATIOS = {"heap_over_rocksdb": ("heap", "rocksdb"), "single_key_over_heap": ("single_key", "heap")}
#: the short name of each operation in the summary's ratio keys (``heap_over_rocksdb_add``)
SHORT_NAMES = {"valueAdd": "add", "valueGet": "get", "valueUpdate": "update"}


def seed_ratios() -> dict[str, float]:
    """The seed's ratios, e.g. ``heap_over_rocksdb_add``, from its published ops/ms.

    Example::

        >>> round(seed_ratios()["heap_over_rocksdb_add"], 1)
        14.1
    """
    return {
        f"{name}_{SHORT_NAMES[op]}": SEED_OPS_PER_MS[op][a] / SEED_OPS_PER_MS[op][b]
        for name, (a, b) in RATIOS.items()
        for op in OPERATIONS
    }


#: The headline ratios (summary keys) and the seed's figure for each.
HEADLINES: dict[str, float | None] = seed_ratios()


def ratio_estimate(rows, operation: str, a: str, b: str, field: str = HEADLINE_MEASURE):
    """The median over runs of ``field(a) / field(b)`` for ``operation``, each run's pair
    measured back to back, with its bootstrap interval (``None`` where no run measured both).

    Example::

        >>> rows = [{"run": r, "operation": "valueGet", "backend": b, "ops_per_wall_ms": v}
        ...         for r, (h, k) in enumerate([(10.0, 1.0), (12.0, 1.0), (9.0, 1.5)])
        ...         for b, v in (("heap", h), ("rocksdb", k))]
        >>> ratio_estimate(rows, "valueGet", "heap", "rocksdb").text(".1f", "x")
        '10.0x [6.0..12.0], 3 runs'
    """

    def by_run(backend: str) -> dict[int, float]:
        return {
            r["run"]: r[field]
            for r in rows
            if r["operation"] == operation and r["backend"] == backend and r[field]
        }

    top, bottom = by_run(a), by_run(b)
    return median_estimate([top[run] / bottom[run] for run in sorted(top) if run in bottom])


def summarize(rows) -> dict:
    """Per (operation, backend): min / median / max of ops per wall-clock ms (the headline),
    the median per CPU ms and of the warm-up pass; the ratios (the median of the runs' own,
    each with its interval in ``summary["intervals"]``), and the seed's."""

    def cells(field: str, stat: str = "median") -> dict[str, dict[str, float]]:
        return {
            op: {
                b: spread(r[field] for r in rows if r["operation"] == op and r["backend"] == b)[
                    stat
                ]
                for b in BACKENDS
                if any(r["operation"] == op and r["backend"] == b for r in rows)
            }
            for op in OPERATIONS
        }

    table = cells(HEADLINE_MEASURE)
    summary = {
        "headline_measure": HEADLINE_MEASURE,
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        "keys": rows[0]["keys"] if rows else None,
        "ops_per_wall_ms": table,
        "ops_per_wall_ms_min": cells(HEADLINE_MEASURE, "min"),
        "ops_per_wall_ms_max": cells(HEADLINE_MEASURE, "max"),
        "ops_per_cpu_ms": cells("ops_per_cpu_ms"),
        "warmup_ops_per_wall_ms": cells("warmup_ops_per_wall_ms"),
        "seed_ops_per_ms": SEED_OPS_PER_MS,
        "seed_ratios": seed_ratios(),
    }
    intervals: dict = {}
    for name, (a, b) in RATIOS.items():
        for op in OPERATIONS:
            for suffix, field in (
                ("", HEADLINE_MEASURE),
                ("_cpu", "ops_per_cpu_ms"),
                ("_first_pass", "warmup_ops_per_wall_ms"),
            ):
                key = f"{name}_{SHORT_NAMES[op]}{suffix}"
                est = ratio_estimate(rows, op, a, b, field)
                summary[key] = None if est is None else est.value
                if est is not None:
                    intervals[key] = est.to_json()
    summary["intervals"] = intervals
    return summary
