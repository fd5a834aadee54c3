"""Which remedy pays on a user's keys: every remedy's job throughput and latency, priced from the
cost profile measured on this machine (:mod:`skewlab.doctor.remedy_costs`) and the counts
replayed on the user's own records (:mod:`skewlab.doctor.subtask_replay`).

A remedy's job time is its busiest subtask's time (subtasks run side by side; with more subtasks
than the profile ran side by side, no less than their total over that many). A subtask's time is
the sum, over what it does, of the count replayed on the records times the cost measured for it:

==============  ====================================================================  ==========
remedy          a subtask's time                                                      disk
==============  ====================================================================  ==========
naive_heap      its records, each at the heap's per-record cost for its key's         --
                density
naive_rocksdb   the same at RocksDB's                                                 R + W
cached          naive_heap's time + its LRU misses (simulated) x the cost of a miss   per miss
buffered        its records, each at the buffer's per-record cost for as many records     per
                per flushed key as its flushes fold (simulated)                       flushed key
salted          stage one: its share of the salted keys' records (each key split      R + W,
                evenly over the salts, routed by Flink's key groups) at salting's     both
                first-stage cost; then stage two, naive_rocksdb (the final reduce)    stages
sorted          its records, each at sorted input's per-record cost for its density   W per key
==============  ====================================================================  ==========

A key's *density* is how many records it has in the input: skewlab's state (an HLL pair) costs
more per record when dense, and the profile holds each cost at 5 .. 5,000 records per key
(interpolated in log density, held at the ends). With a **disk profile** (seed 000's EBS, this
machine's probe, any fio result) the state accesses that reach the disk add their modelled time
(:mod:`skewlab.iomodel.model`): measured CPU, modelled disk, each said where it is shown.
Latency: the profile's measured per-record p99 from a record's arrival at the operator to its
emission (a buffered record's wait for its flush included, at the profile's full speed; with a
slow source it waits up to the trigger interval, as its costs say; salting's is two naive
RocksDB stages, since its measured one is a batch artefact) plus the disk's modelled p99 per
record (:func:`~skewlab.iomodel.model.state_time_distribution`).

Example::

    >>> costs = load_cost_profile()                                           # doctest: +SKIP
    >>> rows = predict_remedies(replay, stage_one, costs)["remedies"]         # doctest: +SKIP
    >>> [r["remedy"] for r in rows][:2]                                       # doctest: +SKIP
    ['naive_heap', 'naive_rocksdb']
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.doctor.remedy_costs import REMEDIES
from skewlab.doctor.subtask_replay import bucket_records_per_key
from skewlab.errors import SkewlabInputError
from skewlab.iomodel.model import (
    buffered_pattern,
    cached_pattern,
    naive_pattern,
    sorted_pattern,
    state_time_distribution,
)
from skewlab.iomodel.profiles import DiskProfile

__all__ = [
    "BASELINE",
    "STATE_BYTES",
    "naive_subtask_rate",
    "predict_remedies",
    "recommend",
]

#: What each remedy is compared with: the naive reduce on RocksDB, the usual production setting.
BASELINE = "naive_rocksdb"
#: One key's state in skewlab's aggregate: two HLL register arrays (precision 10).
STATE_BYTES = 2 * (1 << DEFAULT_PRECISION)
MEASURED = "measured here"
MODELLED = "modelled"


def _cost_at(costs: dict[str, Any], table: list[float]):
    """Per-record cost (us) at ``n`` records per key: linear in log density between the
    profile's densities, held at its ends."""
    x = np.log(np.asarray(costs["records_per_key"], dtype=float))
    y = np.asarray(table, dtype=float)

    def at(n: float) -> float:
        return float(np.interp(math.log(n), x, y))

    return at


def _density_seconds(subtask: dict[str, Any], cost) -> float:
    """A subtask's records priced by density bucket (seconds)."""
    return (
        sum(
            d["records"] * cost(bucket_records_per_key(int(b)))
            for b, d in subtask["density"].items()
        )
        / 1e6
    )


def _folded_cost(buffer: dict[str, Any], subtask: dict[str, Any]) -> float:
    """The buffer's job time per record (us) on a subtask whose flushes fold ``records /
    flushed keys`` records per key: linear in log between the profile's, held at its ends."""
    if not subtask["flush_keys"]:
        return 0.0
    x = np.log(np.asarray(buffer["records_per_flushed_key"], dtype=float))
    folded = subtask["records"] / subtask["flush_keys"]
    return float(np.interp(math.log(folded), x, np.asarray(buffer["per_record_us"], dtype=float)))


def _job_seconds(per_subtask: list[float], slots: int) -> float:
    """Busiest subtask, or the total over the slots the profile ran side by side if larger."""
    if not per_subtask:
        return 0.0
    return max(max(per_subtask), sum(per_subtask) / slots)


def _mean_density(replay: dict[str, Any]) -> float:
    """Records-weighted geometric mean of the keys' densities (for the latency look-up)."""
    total = logs = 0.0
    for s in replay["subtasks"]:
        for b, d in s["density"].items():
            total += d["records"]
            logs += d["records"] * math.log(bucket_records_per_key(int(b)))
    return math.exp(logs / total) if total else 1.0


def naive_subtask_rate(replay: dict[str, Any], costs: dict[str, Any]) -> float:
    """Records per second one naive RocksDB subtask handles on these keys: the cost profile's
    per-record cost at the records' density (their records-weighted mean, in log).

    Example::

        >>> round(naive_subtask_rate(replay, load_cost_profile()))          # doctest: +SKIP
        41000
    """
    cost = _cost_at(costs, costs["per_record_us"][BASELINE])
    return 1e6 / cost(_mean_density(replay))


def predict_remedies(
    replay: dict[str, Any],
    stage_one_loads: list[float],
    costs: dict[str, Any],
    *,
    disk: DiskProfile | None = None,
    bounded: bool = False,
    salt_buckets: int | None = None,
    samples: int = 20_000,
) -> dict[str, Any]:
    """Every remedy's predicted job throughput, latency and costs at the replay's parallelism
    (see the module doc); ``stage_one_loads`` are salting's first-stage records per subtask
    with ``salt_buckets`` salts per key (default: the parallelism).

    Example::

        >>> predict_remedies(replay, loads, load_cost_profile())["best"]  # doctest: +SKIP
        'buffered'
    """
    subtasks = replay["subtasks"]
    salts = replay["parallelism"] if salt_buckets is None else salt_buckets
    if replay["records"] == 0:
        raise SkewlabInputError("no records with a key to price the remedies on")
    per_record = costs["per_record_us"]
    slots = int(costs["parallelism"])
    density = _mean_density(replay)
    heap = [_density_seconds(s, _cost_at(costs, per_record["naive_heap"])) for s in subtasks]
    rocks = [_density_seconds(s, _cost_at(costs, per_record["naive_rocksdb"])) for s in subtasks]
    stage_one_us = _cost_at(costs, costs["salted_stage_one_us"])
    stage_one_cost = (
        sum(
            d["records"] * stage_one_us(bucket_records_per_key(int(b)))
            for s in subtasks
            for b, d in s["density"].items()
        )
        / replay["records"]
    )
    buffer = costs["buffer"]
    cpu = {
        "naive_heap": heap,
        "naive_rocksdb": rocks,
        "cached": [h + s["misses"] * (costs["miss_us"] or 0.0) / 1e6
                   for h, s in zip(heap, subtasks, strict=True)],
        "buffered": [s["records"] * _folded_cost(buffer, s) / 1e6 for s in subtasks],
        "sorted": [_density_seconds(s, _cost_at(costs, per_record["sorted"])) for s in subtasks],
    }  # fmt: skip
    stage_one = [n * stage_one_cost / 1e6 for n in stage_one_loads]
    accesses = {
        "naive_heap": ([0] * len(subtasks), [0] * len(subtasks)),
        "naive_rocksdb": ([s["records"] for s in subtasks],) * 2,
        "cached": ([s["misses"] for s in subtasks],) * 2,
        "buffered": ([s["flush_keys"] for s in subtasks],) * 2,
        "sorted": ([0] * len(subtasks), [s["keys"] for s in subtasks]),
        "salted": ([s["records"] for s in subtasks],) * 2,
    }
    read_us, write_us = (disk.read.mean_us, disk.write.mean_us) if disk else (0.0, 0.0)

    def io(reads, writes) -> list[float]:
        return [(r * read_us + w * write_us) / 1e6 for r, w in zip(reads, writes, strict=True)]

    records = replay["records"]
    hit_ratio = replay["cache"]["hit_ratio"] or 0.0
    per_flushed_key = replay["buffer"]["records_per_flushed_key"]
    run_length = records / max(replay["keys"], 1)
    patterns = {
        "naive_rocksdb": naive_pattern(),
        "cached": cached_pattern(min(max(hit_ratio, 0.0), 1.0)),
        "buffered": buffered_pattern(max(1, round(per_flushed_key))),
        "sorted": sorted_pattern(max(1, round(run_length))),
        "salted": naive_pattern(),
    }
    rows = []
    for name in REMEDIES:
        if name == "salted":
            one = [c + i for c, i in zip(stage_one, io(*_salted_io(stage_one_loads)), strict=True)]
            two = [c + i for c, i in zip(rocks, io(*accesses["salted"]), strict=True)]
            seconds = _job_seconds(one, slots) + _job_seconds(two, slots)
            busy = [a + b for a, b in zip(one, two, strict=False)]
        else:
            busy = [c + i for c, i in zip(cpu[name], io(*accesses[name]), strict=True)]
            seconds = _job_seconds(busy, slots)
        # salting's measured latency is a batch artefact (Spark runs its two stages one after
        # the other): in a stream it is two keyed stages, each as naive RocksDB's
        latency_name, stages = ("naive_rocksdb", 2) if name == "salted" else (name, 1)
        latency = stages * np.interp(
            math.log(density),
            np.log(np.asarray(costs["records_per_key"], dtype=float)),
            np.asarray(costs["latency_p99_ms"][latency_name], dtype=float),
        )
        disk_p99_ms = 0.0
        if disk is not None and name in patterns:
            dist = state_time_distribution(disk, patterns[name], samples=samples)
            disk_p99_ms = (dist.p99_us if dist.p99_us is not None else dist.mean_us) / 1e3
        rows.append({
            "remedy": name,
            "eligible": bounded or name != "sorted",
            "job_seconds": seconds,
            "records_per_second": records / seconds if seconds > 0 else math.inf,
            "busiest_subtask_seconds": max(busy),
            "cpu_source": f"{MEASURED} ({costs['source']})",
            "disk_seconds": (sum(io(*_salted_io(stage_one_loads))) if name == "salted" else 0.0)
            + sum(io(*accesses[name])),
            "disk_source": f"{MODELLED} ({disk.name})" if disk else "none: state on this machine",
            "latency_p99_ms": float(latency) + disk_p99_ms,
            "latency_parts": {
                "operator_p99_ms": float(latency),
                "operator_source": f"{MODELLED}: two stages of naive_rocksdb's, {MEASURED}"
                if name == "salted" else MEASURED,
                "disk_p99_ms": disk_p99_ms, "disk_source": MODELLED if disk else "none",
            },
            "memory_bytes": _memory(name, replay, costs),
            "costs": _costs_text(name, replay, costs, salts),
        })  # fmt: skip
    base = next(r for r in rows if r["remedy"] == BASELINE)
    for r in rows:
        r["speedup_over_baseline"] = (
            base["job_seconds"] / r["job_seconds"] if r["job_seconds"] else math.inf
        )
    eligible = [r for r in rows if r["eligible"]]
    best = max(eligible, key=lambda r: r["records_per_second"])
    return {
        "parallelism": replay["parallelism"],
        "records": records,
        "cost_profile": {
            k: costs.get(k) for k in ("source", "machine", "parallelism", "aggregate")
        },
        "disk_profile": disk.name if disk else None,
        "bounded": bounded,
        "salt_buckets": salts,
        "hit_ratio": replay["cache"]["hit_ratio"],
        "cache_entries": replay["cache"]["cache_entries"],
        "records_per_flushed_key": per_flushed_key,
        "remedies": rows,
        "ranking": [r["remedy"] for r in sorted(eligible, key=lambda r: -r["records_per_second"])],
        "best": best["remedy"],
        "recommendation": recommend(rows, replay),
    }


def _salted_io(stage_one_loads: list[float]) -> tuple[list[float], list[float]]:
    return list(stage_one_loads), list(stage_one_loads)


def _memory(name: str, replay: dict[str, Any], costs: dict[str, Any]) -> int:
    """State bytes held in memory on the busiest subtask (skewlab's aggregate)."""
    keys = max(s["keys"] for s in replay["subtasks"])
    if name == "naive_heap":
        return keys * STATE_BYTES
    if name == "cached":
        return min(keys, replay["cache"]["cache_entries"]) * STATE_BYTES
    if name == "buffered":
        return min(keys, costs["buffer"]["max_count"]) * STATE_BYTES
    if name == "sorted":
        return STATE_BYTES
    return 0


def _costs_text(name: str, replay: dict[str, Any], costs: dict[str, Any], salts: int) -> str:
    buffer = costs["buffer"]
    return {
        "naive_heap": "every key's state in memory; a lost task restores it all from a checkpoint",
        "naive_rocksdb": "the baseline: one state read and write per record",
        "buffered": f"a record waits up to {buffer['trigger_interval_ms']:g} ms or "
        f"{buffer['max_count']:,} records; partials are emitted per flush, not per record",
        "cached": f"{replay['cache']['cache_entries']:,} states per subtask in memory; a miss "
        "reads RocksDB and an eviction writes one back",
        "salted": f"{salts} state replicas per key, a second keyed stage, and "
        "per-key order is lost",
        "sorted": "bounded input only: one emission per key, after the input is sorted",
    }[name]


def recommend(rows: list[dict[str, Any]], replay: dict[str, Any]) -> dict[str, Any]:
    """The remedy to take and why: the fastest eligible one, with its speed over the baseline,
    the count that makes it fast, and what it costs.

    Example::

        >>> recommend(rows, replay)["remedy"]                                # doctest: +SKIP
        'buffered'
    """
    eligible = sorted((r for r in rows if r["eligible"]), key=lambda r: -r["records_per_second"])
    best, base = eligible[0], next(r for r in rows if r["remedy"] == BASELINE)
    ratio = best["speedup_over_baseline"]
    busiest = max(replay["subtasks"], key=lambda s: s["records"])
    why = {
        "naive_heap": "no state access leaves memory",
        "naive_rocksdb": "no remedy beats the baseline on these keys",
        "buffered": f"a flush folds {replay['buffer']['records_per_flushed_key']:.1f} records per "
        f"key on average, so {replay['buffer']['flush_keys']:,} state accesses replace "
        f"{replay['records']:,}",
        "cached": f"the LRU ({replay['cache']['cache_entries']:,} entries) hits "
        f"{(replay['cache']['hit_ratio'] or 0):.0%} of accesses on these keys (simulated)",
        "salted": "salting spreads the first stage over every subtask",
        "sorted": "sorted input keeps one key's state at a time",
    }[best["remedy"]]
    excluded = [r["remedy"] for r in rows if not r["eligible"]]
    return {
        "remedy": best["remedy"],
        "speedup_over_baseline": ratio,
        "reasons": [
            f"{best['remedy']}: {best['records_per_second']:,.0f} records/s predicted against "
            f"{base['records_per_second']:,.0f} for {BASELINE} ({ratio:.2f}x)",
            why,
            f"the busiest subtask takes {busiest['records'] / max(replay['records'], 1):.0%} of "
            f"the records at parallelism {replay['parallelism']}",
        ],
        "costs": best["costs"],
        "latency_p99_ms": best["latency_p99_ms"],
        "excluded": {name: "needs bounded input (--bounded)" for name in excluded},
    }
