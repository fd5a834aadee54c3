"""The remedies the skew doctor weighs, one :class:`Remedy` record each: the strategy that is
measured, how a subtask's operator time is priced from the cost profile, the state accesses
that reach the disk, the memory it holds, what it costs the user, why it is fast, and when it
applies.

A subtask's operator time is the sum, over what it does, of the count replayed on the records
(:mod:`skewlab.doctor.subtask_replay`) times the operator's cost measured for it (its own
timer, per subtask: :mod:`skewlab.doctor.remedy_costs`):

==============  ====================================================================  ==========
remedy          a subtask's operator time                                             disk
==============  ====================================================================  ==========
naive_heap      its records, each at the heap's per-record cost for its key's         --
                density
naive_rocksdb   the same at RocksDB's                                                 R + W
buffered        its records, each at the buffer's per-record cost for as many partials    per
                per record as its flushes send out (simulated; linear in them         flushed key
                between the profile's: a record's fold, a partial's state update)
cached          naive_heap's time + its LRU misses (simulated) x the cost of a miss   per miss
salted          stage two, naive_rocksdb's (the final reduce), after stage one: its   R + W,
                share of the salted keys' records (each key split evenly over the     both
                salts, routed by Flink's key groups) at salting's first-stage cost    stages
sorted          its records, each at sorted input's per-record cost for its density   W per key
==============  ====================================================================  ==========

The job's time is then :func:`job_seconds`: the longer of the busiest subtask's chain (its
operator and Spark's side of its records) and all the work over the cores, plus each key's
result outside the operator -- Spark's side measured per remedy in the same runs.

A key's *density* is how many records it has in the input: skewlab's state (an HLL pair) costs
more per record when dense, and the profile holds each cost at 5 .. 5,000 records per key
(interpolated in log density, held above the densest). Below the sparsest, each remedy's record
says (``sparse_keys``, measured per remedy): sorted input's key's own cost -- its state made, its
result written -- is spread over fewer records, a per-record and a per-key part through the two
sparsest (:func:`cost_weights`); the naive reduce's is held at the sparsest density's
(:func:`knot_weights`).

A new remedy is one record in :data:`CATALOG`: its strategy is measured by ``skewlab bench
remedy_costs`` (priced by density, as the naive reduce is, unless its record says otherwise),
predicted by the doctor and checked by ``skewlab bench remedy_check`` with no other edit.

Example::

    >>> [r.name for r in CATALOG]
    ['naive_heap', 'naive_rocksdb', 'buffered', 'cached', 'salted', 'sorted']
    >>> by_name("salted").strategy(4, 1000).parameters()
    {'backend': 'rocksdb', 'salt_buckets': 4}
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from skewlab.aggregates.hll import DEFAULT_PRECISION
from skewlab.doctor.subtask_replay import DEFAULT_BUFFER_MAX_COUNT, bucket_records_per_key
from skewlab.errors import SkewlabInputError
from skewlab.iomodel.model import (
    AccessPattern,
    buffered_pattern,
    cached_pattern,
    naive_pattern,
    sorted_pattern,
)
from skewlab.strategies import Buffered, Cached, Naive, Salted, Sorted, StrategyParameters

__all__ = [
    "CATALOG",
    "DENSITY_PRICED",
    "HELD_BELOW",
    "REMEDIES",
    "SPARK_SIDE",
    "SPREAD_BELOW",
    "STATE_BYTES",
    "TRIGGER_INTERVAL_MS",
    "Pricing",
    "Remedy",
    "by_name",
    "cost_weights",
    "density_weights",
    "job_seconds",
    "knot_weights",
    "sparse_rule",
    "strategies",
]

#: One key's state in skewlab's aggregate: two HLL register arrays (precision 10).
STATE_BYTES = 2 * (1 << DEFAULT_PRECISION)
#: The buffer's trigger interval in the profile's runs: the ``buffered`` strategy's own default.
TRIGGER_INTERVAL_MS = Buffered().trigger_interval_ms

Subtask = dict[str, Any]
Replay = dict[str, Any]
Costs = dict[str, Any]


def knot_weights(records_per_key: list[float], n: float) -> np.ndarray:
    """How a figure at ``n`` records per key is made of the profile's figures at its densities
    (``records_per_key``): linear in log density between two of them, held at the ends (as
    ``np.interp``).

    Example::

        >>> knot_weights([5.0, 50.0, 500.0], 50.0).tolist()
        [0.0, 1.0, 0.0]
        >>> knot_weights([5.0, 50.0, 500.0], 5_000.0).tolist()
        [0.0, 0.0, 1.0]
    """
    x = np.log(np.asarray(records_per_key, dtype=float))
    return np.array([np.interp(math.log(n), x, unit) for unit in np.eye(len(x))])


def cost_weights(records_per_key: list[float], n: float) -> np.ndarray:
    """How a cost per record at ``n`` records per key is made of the profile's costs at its
    densities (``records_per_key``, ascending): as :func:`knot_weights` from the sparsest up;
    below it, a per-record part and a per-key part (``r + K / n``) through the two sparsest --
    the profile's keys have no fewer records, and a key's own cost weighs more on each record
    the fewer it has.

    Example::

        >>> cost = lambda n: 3.0 + 40.0 / n     # 3 us a record, 40 us a key
        >>> weights = cost_weights([5.0, 50.0, 500.0], 2.0)
        >>> round(float(weights @ [cost(5.0), cost(50.0), cost(500.0)]), 6) == cost(2.0)
        True
        >>> cost_weights([5.0, 50.0, 500.0], 50.0).tolist()
        [0.0, 1.0, 0.0]
    """
    low = records_per_key[0]
    if len(records_per_key) < 2 or n >= low:
        return knot_weights(records_per_key, n)
    t = (1 / n - 1 / low) / (1 / low - 1 / records_per_key[1])
    weights = np.zeros(len(records_per_key))
    weights[:2] = 1 + t, -t
    return weights


#: A key sparser than the profile's sparsest density: its own cost spread over its fewer records
#: (:func:`cost_weights`), or the sparsest density's cost per record held (:func:`knot_weights`).
SPREAD_BELOW, HELD_BELOW = "spread", "held"


def density_weights(rule: str) -> Callable[[list[float], float], np.ndarray]:
    """The weights that price a record at a density for a rule below the sparsest
    (:data:`SPREAD_BELOW` or :data:`HELD_BELOW`).

    Example::

        >>> density_weights(HELD_BELOW)([5.0, 50.0], 1.0).tolist()
        [1.0, 0.0]
        >>> # spread: 1 + t and -t, t = (1/1 - 1/5) / (1/5 - 1/50)
        >>> density_weights(SPREAD_BELOW)([5.0, 50.0], 1.0).tolist()
        [5.444444444444444, -4.444444444444444]
    """
    if rule not in (SPREAD_BELOW, HELD_BELOW):
        raise ValueError(
            f"a rule below the sparsest density is {SPREAD_BELOW!r} or {HELD_BELOW!r}: {rule!r}"
        )
    return cost_weights if rule == SPREAD_BELOW else knot_weights


#: Spark's side of a remedy's job, in us: per record of the job, per record of the busiest
#: subtask, per key's result collected (:func:`job_seconds`).
SPARK_SIDE = ("job_record_us", "busiest_record_us", "key_us")


def job_seconds(
    operators: list[float],
    records: list[int],
    new_keys: float,
    side: dict[str, float],
    slots: int,
) -> float:
    """A one-stage job's time from its subtasks' operator times (``operators``, seconds, the
    disk's included) and records: the longer of the busiest chain -- a subtask's operator and
    Spark's side of its records (``busiest_record_us`` each) -- and all the work over the
    ``slots`` cores (every operator and Spark's side of every record, ``job_record_us`` each),
    then each key's result (``key_us`` for each of ``new_keys``: its state, the sink's last
    value, pickled, sent to the JVM and collected to the driver outside the operator; a
    buffer's partials are merged into the state inside its operator and priced there).

    Example::

        >>> side = {"job_record_us": 3.0, "busiest_record_us": 2.0, "key_us": 10.0}
        >>> round(job_seconds([0.5, 0.1], [100_000, 20_000], 1_000, side, 2), 3)
        0.71
        >>> round(job_seconds([0.2, 0.2], [50_000, 50_000], 0, side, 2), 3)
        0.35
    """
    if not operators:
        return 0.0
    chain = max(op + side["busiest_record_us"] * n / 1e6
                for op, n in zip(operators, records, strict=True))  # fmt: skip
    spread = (sum(operators) + side["job_record_us"] * sum(records) / 1e6) / slots
    return max(chain, spread) + side["key_us"] * new_keys / 1e6


@dataclass(frozen=True)
class Pricing:
    """What a subtask's time is priced with: the cost profile (``costs``, per-record costs in
    us by records per key) and the replay of the user's records (``replay``).

    Example::

        >>> pricing = Pricing(load_cost_profile(), replay)                       # doctest: +SKIP
        >>> pricing.by_density(replay["subtasks"][0], "naive_rocksdb")           # doctest: +SKIP
        0.41
    """

    costs: Costs
    replay: Replay

    def cost_at(self, table: list[float], rule: str = SPREAD_BELOW) -> Callable[[float], float]:
        """Per-record cost (us) at ``n`` records per key from one of the profile's tables
        (:func:`density_weights` of ``rule``; below the sparsest density a spread per-key part
        that comes out negative is held at 0, as :func:`~skewlab.doctor.remedy_costs.cost_profile`
        solves it)."""
        densities = [float(d) for d in self.costs["records_per_key"]]
        y = np.asarray(table, dtype=float)
        weights = density_weights(rule)

        def cost(n: float) -> float:
            value = float(weights(densities, n) @ y)
            return max(value, float(y[0])) if n < densities[0] else value

        return cost

    def by_density(self, subtask: Subtask, remedy: str) -> float:
        """A subtask's operator time (seconds): its records priced by density bucket at
        ``remedy``'s measured operator cost per record, by its rule below the sparsest."""
        return self.records_by_density(
            subtask, self.costs["operator_us"][remedy], sparse_rule(remedy)
        )

    def records_by_density(
        self, subtask: Subtask, table: list[float], rule: str = SPREAD_BELOW
    ) -> float:
        """A subtask's records priced by density bucket at ``table``'s per-record costs."""
        cost = self.cost_at(table, rule)
        return (
            sum(
                d["records"] * cost(bucket_records_per_key(int(b)))
                for b, d in subtask["density"].items()
            )
            / 1e6
        )

    def folded(self, subtask: Subtask) -> float:
        """The buffer's operator time (seconds) on a subtask whose flushes send out
        ``flush_keys`` partials for its ``records``: its operator cost per record linear in
        the partials per record between the profile's, held at its ends -- a record costs its
        fold, and each partial its state's read, merge and write, so between two of the
        profile's view sets the time is linear in the records and the partials (a mix of hot
        keys folding hundreds of records a flush and sparse keys folding one is priced by
        its partials, not by the mean records a partial folds).

        Example::

            >>> costs = {"buffer": {"records_per_flushed_key": [1.0, 10.0],
            ...                     "operator_per_record_us": [21.0, 3.0]}}
            >>> # 1 us a record and 20 us a partial: 200 records in 40 partials, 1,000 us
            >>> round(Pricing(costs, {}).folded({"records": 200, "flush_keys": 40}) * 1e6, 3)
            1000.0
        """
        if not subtask["flush_keys"]:
            return 0.0
        buffer = self.costs["buffer"]
        partials = 1 / np.asarray(buffer["records_per_flushed_key"], dtype=float)
        table = np.asarray(buffer["operator_per_record_us"], dtype=float)
        order = np.argsort(partials)
        share = subtask["flush_keys"] / subtask["records"]
        return subtask["records"] * float(np.interp(share, partials[order], table[order])) / 1e6

    def missed(self, subtask: Subtask) -> float:
        """The cache's misses on a subtask (seconds) at the operator's measured cost of a miss
        over the heap."""
        return subtask["misses"] * (self.costs["operator_miss_us"] or 0.0) / 1e6


@dataclass(frozen=True)
class Remedy:
    """One remedy as the doctor weighs it.

    ``strategy(parallelism, cache_entries)``: the strategy the cost profile measures;
    ``subtask_seconds(pricing, subtask)``: a subtask's time on the measured costs;
    ``state_accesses(subtask)``: its (reads, writes) that reach the state backend (priced by a
    disk profile); ``disk_pattern(replay)``: the access pattern whose modelled p99 adds to the
    latency (None: no state access leaves memory); ``memory_bytes(replay, costs)``: the state
    held in memory on the busiest subtask; ``price(replay, costs, salts)``: what it costs the
    user; ``reason(replay)``: why it is fast on these keys; ``bounded_only``: it needs a
    bounded input; ``density_priced``: the profile fits its per-record cost by density
    (``per_record_us[name]``); ``latency_as``: the remedy whose measured latency stands for
    this one's, and over how many keyed stages; ``first_stage``: a salted first stage runs
    before this one's (its records per subtask are the salted stage-one loads);
    ``spark_side_as``: the remedy whose measured Spark side (:func:`job_seconds`) this one's
    keyed stage has (default: its own); ``sparse_keys``: how a record of a key sparser than the
    profile's sparsest view set is priced from its table (:data:`SPREAD_BELOW` or
    :data:`HELD_BELOW`, chosen per remedy by measurement: docs/doctor.md).

    Example::

        >>> remedy = by_name("naive_rocksdb")
        >>> remedy.state_accesses({"records": 10, "keys": 2})
        (10, 10)
    """

    name: str
    summary: str
    strategy: Callable[[int, int], StrategyParameters]
    subtask_seconds: Callable[[Pricing, Subtask], float]
    state_accesses: Callable[[Subtask], tuple[int, int]]
    disk_pattern: Callable[[Replay], AccessPattern] | None
    memory_bytes: Callable[[Replay, Costs], int]
    price: Callable[[Replay, Costs, int], str]
    reason: Callable[[Replay], str]
    bounded_only: bool = False
    density_priced: bool = True
    latency_as: tuple[str, int] | None = None
    first_stage: bool = False
    spark_side_as: str | None = None
    sparse_keys: str = SPREAD_BELOW

    def latency_of(self) -> tuple[str, int]:
        """The remedy whose measured latency p99 is this one's, and how many stages of it."""
        return self.latency_as or (self.name, 1)

    @property
    def spark_side_of(self) -> str:
        """The remedy whose Spark side (per job record, per busiest record, per key) is this
        one's."""
        return self.spark_side_as or self.name


def _busiest_keys(replay: Replay) -> int:
    return max(s["keys"] for s in replay["subtasks"])


def _hit_ratio(replay: Replay) -> float:
    return min(max(replay["cache"]["hit_ratio"] or 0.0, 0.0), 1.0)


CATALOG: tuple[Remedy, ...] = (
    Remedy(
        name="naive_heap",
        summary="the keyed reduce with every key's state on the heap",
        strategy=lambda p, entries: Naive(backend="heap"),
        subtask_seconds=lambda pricing, s: pricing.by_density(s, "naive_heap"),
        state_accesses=lambda s: (0, 0),
        disk_pattern=None,
        memory_bytes=lambda replay, costs: _busiest_keys(replay) * STATE_BYTES,
        price=lambda replay, costs, salts: (
            "every key's state in memory; a lost task restores it all from a checkpoint"
        ),
        reason=lambda replay: "no state access leaves memory",
        sparse_keys=HELD_BELOW,
    ),
    Remedy(
        name="naive_rocksdb",
        summary="the keyed reduce on RocksDB, one state read and write per record",
        strategy=lambda p, entries: Naive(backend="rocksdb"),
        subtask_seconds=lambda pricing, s: pricing.by_density(s, "naive_rocksdb"),
        state_accesses=lambda s: (s["records"], s["records"]),
        disk_pattern=lambda replay: naive_pattern(),
        memory_bytes=lambda replay, costs: 0,
        price=lambda replay, costs, salts: "the baseline: one state read and write per record",
        reason=lambda replay: "no remedy beats the baseline on these keys",
        sparse_keys=HELD_BELOW,
    ),
    Remedy(
        name="buffered",
        summary="records buffered and folded per key, one state access per flushed key",
        strategy=lambda p, entries: Buffered(
            trigger_interval_ms=TRIGGER_INTERVAL_MS, max_count=DEFAULT_BUFFER_MAX_COUNT
        ),
        subtask_seconds=lambda pricing, s: pricing.folded(s),
        state_accesses=lambda s: (s["flush_keys"], s["flush_keys"]),
        disk_pattern=lambda replay: buffered_pattern(
            max(1, round(replay["buffer"]["records_per_flushed_key"]))
        ),
        memory_bytes=lambda replay, costs: (
            min(_busiest_keys(replay), costs["buffer"]["max_count"]) * STATE_BYTES
        ),
        price=lambda replay, costs, salts: (
            f"a record waits up to {costs['buffer']['trigger_interval_ms']:g} ms or "
            f"{costs['buffer']['max_count']:,} records; partials are emitted per flush, "
            "not per record"
        ),
        reason=lambda replay: (
            f"a flush folds {replay['buffer']['records_per_flushed_key']:.1f} records per key "
            f"on average, so {replay['buffer']['flush_keys']:,} state accesses replace "
            f"{replay['records']:,}"
        ),
        density_priced=False,
    ),
    Remedy(
        name="cached",
        summary="an LRU cache of states in front of RocksDB",
        strategy=lambda p, entries: Cached(cache_entries=entries),
        subtask_seconds=lambda pricing, s: pricing.by_density(s, "naive_heap") + pricing.missed(s),
        state_accesses=lambda s: (s["misses"], s["misses"]),
        disk_pattern=lambda replay: cached_pattern(_hit_ratio(replay)),
        memory_bytes=lambda replay, costs: (
            min(_busiest_keys(replay), replay["cache"]["cache_entries"]) * STATE_BYTES
        ),
        price=lambda replay, costs, salts: (
            f"{replay['cache']['cache_entries']:,} states per subtask in memory; a miss reads "
            "RocksDB and an eviction writes one back"
        ),
        reason=lambda replay: (
            f"the LRU ({replay['cache']['cache_entries']:,} entries) hits "
            f"{(replay['cache']['hit_ratio'] or 0):.0%} of accesses on these keys (simulated)"
        ),
    ),
    Remedy(
        name="salted",
        summary="each key split over salts, partials reduced in a second keyed stage",
        strategy=lambda p, entries: Salted(salt_buckets=p),
        # stage two, the final reduce, is naive RocksDB's; stage one is priced by the model
        subtask_seconds=lambda pricing, s: pricing.by_density(s, "naive_rocksdb"),
        spark_side_as="naive_rocksdb",
        state_accesses=lambda s: (s["records"], s["records"]),
        disk_pattern=lambda replay: naive_pattern(),
        memory_bytes=lambda replay, costs: 0,
        price=lambda replay, costs, salts: (
            f"{salts} state replicas per key, a second keyed stage, and per-key order is lost"
        ),
        reason=lambda replay: "salting spreads the first stage over every subtask",
        # its measured latency is a batch artefact (Spark runs its two stages one after the
        # other): in a stream it is two keyed stages, each as naive RocksDB's
        latency_as=("naive_rocksdb", 2),
        first_stage=True,
    ),
    Remedy(
        name="sorted",
        summary="input sorted by key, one key's state at a time",
        strategy=lambda p, entries: Sorted(),
        subtask_seconds=lambda pricing, s: pricing.by_density(s, "sorted"),
        state_accesses=lambda s: (0, s["keys"]),
        disk_pattern=lambda replay: sorted_pattern(
            max(1, round(replay["records"] / max(replay["keys"], 1)))
        ),
        memory_bytes=lambda replay, costs: STATE_BYTES,
        price=lambda replay, costs, salts: (
            "bounded input only: one emission per key, after the input is sorted"
        ),
        reason=lambda replay: "sorted input keeps one key's state at a time",
        bounded_only=True,
    ),
)

#: The remedies' names, in display order.
REMEDIES: tuple[str, ...] = tuple(r.name for r in CATALOG)
#: The remedies whose cost per record the profile fits by the density of the record's key (the
#: buffer's is by how many records a flush folds per key).
DENSITY_PRICED: tuple[str, ...] = tuple(r.name for r in CATALOG if r.density_priced)


def sparse_rule(name: str) -> str:
    """The rule below the sparsest density of the table ``name`` (a remedy's, or salting's first
    stage: :data:`SPREAD_BELOW`).

    Example::

        >>> sparse_rule("naive_heap"), sparse_rule("sorted")
        ('held', 'spread')
    """
    return next((r.sparse_keys for r in CATALOG if r.name == name), SPREAD_BELOW)


def by_name(name: str, catalog: tuple[Remedy, ...] = CATALOG) -> Remedy:
    """The remedy called ``name``.

    Example::

        >>> by_name("sorted").bounded_only
        True
    """
    for remedy in catalog:
        if remedy.name == name:
            return remedy
    raise SkewlabInputError(
        f"no remedy called {name!r}; the doctor knows {', '.join(r.name for r in catalog)}"
    )


def strategies(
    parallelism: int, cache_entries: int, catalog: tuple[Remedy, ...] = CATALOG
) -> dict[str, StrategyParameters]:
    """The strategies the cost profile measures, by remedy name.

    Example::

        >>> strategies(2, 1000)["cached"].parameters()["cache_entries"]
        1000
    """
    return {r.name: r.strategy(parallelism, cache_entries) for r in catalog}
