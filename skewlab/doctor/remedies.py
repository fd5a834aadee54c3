"""Which remedy pays on a user's keys: every remedy's job throughput and latency, priced from the
cost profile measured on this machine (:mod:`skewlab.doctor.remedy_costs`) and the counts
replayed on the user's own records (:mod:`skewlab.doctor.subtask_replay`), for each remedy of
the catalog (:mod:`skewlab.doctor.catalog`, which says how each subtask's time is priced).

A remedy's job time is :func:`~skewlab.doctor.catalog.job_seconds` of its subtasks' operator
times: the longer of the busiest subtask's chain (its operator and Spark's side of its records)
and all the work over the cores the profile ran side by side (every operator and Spark's side of
every record), plus each key's result collected outside the operator (its state; a buffer's
partials are merged into it inside the operator) -- Spark's side measured per remedy in the
profile's own runs; a remedy with a salted first stage adds that stage's job time. With a
**disk profile** (seed 000's EBS, this machine's probe, any fio result) the state accesses that
reach the disk add their modelled time (:mod:`skewlab.iomodel.model`): measured CPU, modelled
disk, each said where it is shown.
Latency: the profile's measured per-record p99 from a record's arrival at the operator to its
emission (a buffered record's wait for its flush included, at the profile's full speed; with a
slow source it waits up to the trigger interval, as its costs say; salting's is two naive
RocksDB stages, since its measured one is a batch artefact) plus the disk's modelled p99 per
record (:func:`~skewlab.iomodel.model.state_time_distribution`).

Each prediction carries the spread of the runs it was priced from
(``records_per_second_interval``): the profile keeps each round's job time over the rounds'
median (``job_rounds``); their bootstrap (:func:`scale_draws`: resampled medians per density, at
the records' density) scales the measured part, the modelled disk unchanged, and the interval
is the prediction priced at the central 95 % of those draws -- so a check against real runs
holds the runs' noise on both sides.

Example::

    >>> costs = load_cost_profile()                                           # doctest: +SKIP
    >>> rows = predict_remedies(replay, stage_one, costs)["remedies"]         # doctest: +SKIP
    >>> [r["remedy"] for r in rows][:2]                                       # doctest: +SKIP
    ['naive_heap', 'naive_rocksdb']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from skewlab.doctor.catalog import (
    CATALOG,
    SPARK_SIDE,
    Pricing,
    Remedy,
    by_name,
    job_seconds,
    knot_weights,
    sparse_rule,
)
from skewlab.doctor.subtask_replay import bucket_records_per_key
from skewlab.errors import SkewlabInputError
from skewlab.experiments.intervals import CONFIDENCE, RESAMPLES, median_draws
from skewlab.iomodel.model import state_time_distribution
from skewlab.iomodel.profiles import DiskProfile

__all__ = [
    "BASELINE",
    "mean_density",
    "naive_subtask_rate",
    "predict_remedies",
    "recommend",
    "scale_draws",
]

#: What each remedy is compared with: the naive reduce on RocksDB, the usual production setting.
BASELINE = "naive_rocksdb"
MEASURED = "measured here"
MODELLED = "modelled"


#: A stage priced whole by its measure, with no Spark side apart.
NO_SPARK_SIDE = dict.fromkeys(SPARK_SIDE, 0.0)


def mean_density(replay: dict[str, Any]) -> float:
    """Records-weighted geometric mean of the keys' densities (where the latency and the
    profile's spread are looked up); a slope's buckets with fewer records at the larger size
    (:func:`~skewlab.doctor.subtask_replay.replay_by_slope`) are left out.

    Example::

        >>> round(mean_density({"subtasks": [{"density": {"49": {"records": 5}}}]}), 1)
        5311.9
    """
    total = logs = 0.0
    for s in replay["subtasks"]:
        for b, d in s["density"].items():
            if d["records"] <= 0:
                continue
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
    table = costs["per_record_us"][BASELINE]
    cost = Pricing(costs, replay).cost_at(table, sparse_rule(BASELINE))
    return 1e6 / cost(mean_density(replay))


@dataclass(frozen=True)
class _Priced:
    """A remedy's priced parts on the user's records: per subtask its operator time (``cpu``,
    measured), its modelled disk time (``io``) and its records; the keys whose results the job
    collects (``new_keys``); its Spark side (``side``, us); a salted first stage's times
    (``first``: measured, modelled)."""

    cpu: list[float]
    io: list[float]
    records: list[int]
    new_keys: float
    side: dict[str, float]
    first: tuple[list[float], list[float]] | None

    def job_at(self, scale: float, slots: int) -> tuple[float, list[float]]:
        """The job time and the subtasks' busy times, the measured part (the operators, Spark's
        side, a first stage) scaled by ``scale``, the modelled disk not."""
        side = {k: self.side[k] * scale for k in SPARK_SIDE}
        operators = [c * scale + i for c, i in zip(self.cpu, self.io, strict=True)]
        seconds = job_seconds(operators, self.records, self.new_keys, side, slots)
        busy = [op + side["busiest_record_us"] * n / 1e6
                for op, n in zip(operators, self.records, strict=True)]  # fmt: skip
        if self.first is None:
            return seconds, busy
        return _with_first_stage(seconds, busy, scale, self.first, slots)


def _with_first_stage(
    seconds: float,
    busy: list[float],
    scale: float,
    first: tuple[list[float], list[float]],
    slots: int,
) -> tuple[float, list[float]]:
    """A salted job: its first stage's job time (measured, scaled, and the modelled disk)
    before the keyed stage's -- the form with no Spark side of its own (its measure, salting's
    job time less naive RocksDB's, is already the whole stage's per record)."""
    stage = [c * scale + i for c, i in zip(*first, strict=True)]
    busy = [a + b for a, b in zip(stage, busy, strict=False)]
    first_stage = job_seconds(stage, [0] * len(stage), 0.0, NO_SPARK_SIDE, slots)
    return seconds + first_stage, busy


def scale_draws(
    costs: dict[str, Any], remedy: str, density: float, *, resamples: int = RESAMPLES
) -> np.ndarray | None:
    """The bootstrap distribution of ``remedy``'s job time in the profile over its median, at
    ``density`` records per key: at each of the profile's densities the median of a resample
    of its rounds (``job_rounds``, each over the rounds' median), linear in log density between
    them, held at the ends; one draw per resample. ``None`` for a profile without its rounds
    (an older result file) or with fewer than two at a density.

    Example::

        >>> costs = {"records_per_key": [5.0, 50.0],
        ...          "job_rounds": {"naive_heap": [[0.9, 1.0, 1.2], [0.8, 1.0, 1.1]]}}
        >>> draws = scale_draws(costs, "naive_heap", 5.0, resamples=1_000)
        >>> float(draws.min()), float(draws.max())
        (0.9, 1.2)
    """
    rounds = (costs.get("job_rounds") or {}).get(remedy)
    if rounds is None or any(len(r) < 2 for r in rounds):
        return None
    # each density's rounds resampled on their own (they ran at other times)
    draws = np.array([
        median_draws(r, resamples=resamples, seed=i) for i, r in enumerate(rounds)
    ])  # fmt: skip
    return knot_weights(costs["records_per_key"], density) @ draws


def _first_stage_seconds(
    replay: dict[str, Any], pricing: Pricing, stage_one_loads: list[float]
) -> list[float]:
    """Salting's first stage per subtask: its records (the salted loads) at the first stage's
    per-record cost, weighted by the densities of the records' keys."""
    table = pricing.costs["salted_stage_one_us"]
    seconds = sum(pricing.records_by_density(s, table) for s in replay["subtasks"])
    return [n * seconds / replay["records"] for n in stage_one_loads]


def predict_remedies(
    replay: dict[str, Any],
    stage_one_loads: list[float],
    costs: dict[str, Any],
    *,
    disk: DiskProfile | None = None,
    bounded: bool = False,
    salt_buckets: int | None = None,
    samples: int = 20_000,
    catalog: tuple[Remedy, ...] = CATALOG,
    new_keys: float | None = None,
) -> dict[str, Any]:
    """Every remedy's predicted job throughput, latency and costs at the replay's parallelism
    (see the module doc); ``stage_one_loads`` are salting's first-stage records per subtask
    with ``salt_buckets`` salts per key (default: the parallelism); ``catalog``: the remedies
    weighed (:data:`~skewlab.doctor.catalog.CATALOG`); ``new_keys``: the keys whose results the
    job collects (default: every key of the replay; a job time by slope collects only the keys
    the larger input adds, :func:`~skewlab.doctor.remedy_costs.new_keys_by_slope`).

    Example::

        >>> predict_remedies(replay, loads, load_cost_profile())["best"]  # doctest: +SKIP
        'buffered'
    """
    subtasks = replay["subtasks"]
    salts = replay["parallelism"] if salt_buckets is None else salt_buckets
    if replay["records"] == 0:
        raise SkewlabInputError("no records with a key to price the remedies on")
    pricing = Pricing(costs, replay)
    slots = int(costs["parallelism"])
    density = mean_density(replay)
    read_us, write_us = (disk.read.mean_us, disk.write.mean_us) if disk else (0.0, 0.0)

    def io(accesses: list[tuple[float, float]]) -> list[float]:
        return [(r * read_us + w * write_us) / 1e6 for r, w in accesses]

    first_cpu = _first_stage_seconds(replay, pricing, stage_one_loads)
    # a salted key's first stage reads and writes its state once per record
    first_io = io([(n, n) for n in stage_one_loads])
    keys = replay["keys"] if new_keys is None else new_keys
    rows = []
    for remedy in catalog:
        own_io = io([remedy.state_accesses(s) for s in subtasks])
        priced = _Priced(
            cpu=[remedy.subtask_seconds(pricing, s) for s in subtasks],
            io=own_io,
            records=[s["records"] for s in subtasks],
            new_keys=keys,
            side=costs["spark_side"][remedy.spark_side_of],
            first=(first_cpu, first_io) if remedy.first_stage else None,
        )
        seconds, busy = priced.job_at(1.0, slots)
        disk_seconds = sum(own_io) + (sum(first_io) if remedy.first_stage else 0.0)
        draws = scale_draws(costs, remedy.name, density)
        interval = None
        if draws is not None:
            tail = (1 - CONFIDENCE) / 2 * 100
            ends = np.percentile(draws, [tail, 100 - tail])
            fastest = priced.job_at(float(ends[0]), slots)[0]
            slowest = priced.job_at(float(ends[1]), slots)[0]
            if fastest > 0:
                interval = [replay["records"] / slowest, replay["records"] / fastest]
        latency_name, stages = remedy.latency_of()
        latency = stages * np.interp(
            math.log(density),
            np.log(np.asarray(costs["records_per_key"], dtype=float)),
            np.asarray(costs["latency_p99_ms"][latency_name], dtype=float),
        )
        disk_p99_ms = 0.0
        if disk is not None and remedy.disk_pattern is not None:
            dist = state_time_distribution(disk, remedy.disk_pattern(replay), samples=samples)
            disk_p99_ms = (dist.p99_us if dist.p99_us is not None else dist.mean_us) / 1e3
        rows.append({
            "remedy": remedy.name,
            "eligible": bounded or not remedy.bounded_only,
            "job_seconds": seconds,
            "records_per_second": replay["records"] / seconds if seconds > 0 else math.inf,
            "records_per_second_interval": interval,
            "busiest_subtask_seconds": max(busy),
            # the operators' own time over every subtask (a salted first stage's included)
            "operator_seconds": sum(priced.cpu) + (sum(first_cpu) if remedy.first_stage else 0.0),
            "cpu_source": f"{MEASURED} ({costs['source']})",
            "disk_seconds": disk_seconds,
            "disk_source": f"{MODELLED} ({disk.name})" if disk else "none: state on this machine",
            "latency_p99_ms": float(latency) + disk_p99_ms,
            "latency_parts": {
                "operator_p99_ms": float(latency),
                "operator_source": MEASURED if remedy.latency_as is None
                else f"{MODELLED}: {stages} stages of {latency_name}'s, {MEASURED}",
                "disk_p99_ms": disk_p99_ms, "disk_source": MODELLED if disk else "none",
            },
            "memory_bytes": remedy.memory_bytes(replay, costs),
            "costs": remedy.price(replay, costs, salts),
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
        "records": replay["records"],
        "cost_profile": {
            k: costs.get(k) for k in ("source", "machine", "parallelism", "aggregate")
        },
        "disk_profile": disk.name if disk else None,
        "bounded": bounded,
        "salt_buckets": salts,
        "hit_ratio": replay["cache"]["hit_ratio"],
        "cache_entries": replay["cache"]["cache_entries"],
        "records_per_flushed_key": replay["buffer"]["records_per_flushed_key"],
        "remedies": rows,
        "ranking": [r["remedy"] for r in sorted(eligible, key=lambda r: -r["records_per_second"])],
        "best": best["remedy"],
        "recommendation": recommend(rows, replay, catalog),
    }


def recommend(
    rows: list[dict[str, Any]], replay: dict[str, Any], catalog: tuple[Remedy, ...] = CATALOG
) -> dict[str, Any]:
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
    excluded = [r["remedy"] for r in rows if not r["eligible"]]
    return {
        "remedy": best["remedy"],
        "speedup_over_baseline": ratio,
        "reasons": [
            f"{best['remedy']}: {best['records_per_second']:,.0f} records/s predicted against "
            f"{base['records_per_second']:,.0f} for {BASELINE} ({ratio:.2f}x)",
            by_name(best["remedy"], catalog).reason(replay),
            f"the busiest subtask takes {busiest['records'] / max(replay['records'], 1):.0%} of "
            f"the records at parallelism {replay['parallelism']}",
        ],
        "costs": best["costs"],
        "latency_p99_ms": best["latency_p99_ms"],
        "excluded": {name: "needs bounded input (--bounded)" for name in excluded},
    }
