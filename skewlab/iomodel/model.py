"""The storage latency model: how many records one key can absorb per second, and how long a
run's state accesses take on a given disk.

Seed 000's arithmetic, generalised. Records of one key are processed one after the other (Flink
never processes two records of a key in parallel), so if each record costs the key ``t`` seconds
of disk time, the key cannot go faster than ``1 / t`` records per second, however many machines
the job has. Every strategy is an :class:`AccessPattern`: a *unit* of ``records_per_unit``
records of one key that, with probability ``disk_probability``, causes ``reads_per_unit`` state
reads and ``writes_per_unit`` state writes on disk.

========  ======================================================================  ===========
strategy  access pattern                                                          per record
========  ======================================================================  ===========
naive     every record reads the key's state and writes it back                   R + W
buffered  a flush of B buffered records of the key: one read + one write          (R + W) / B
cached    write-back LRU, hit ratio h: a hit touches no disk; a miss reads the    (1-h)(R + W)
          state and evicts an entry, which is dirty (every access updates the
          state, so every cached entry has changed since it was loaded) and is
          written back: one read + one write per miss; checkpoint flushes are
          ignored
sorted    sorted input, single-key backend: the state lives in memory for the     W / L
          key's run of L records and is written once when the run ends
========  ======================================================================  ===========

R and W are the profile's mean read and write latency (fio's ``lat`` mean, see
:mod:`skewlab.iomodel.profiles`); the per-key ceiling is ``1e6 / per-record us``. Processing
time and the engine's overhead are left out, as in the seed, so these are upper bounds.

Defaults, each taken from a seed: ``B = 100`` (the seed's buffer flushes at ``maxCount = 1000``
records over all keys of a subtask; with ten keys sharing it a key gets about 100 per flush),
``h = 0.5`` (FLIP-325's middle case: a 500-entry cache over 1000 hot keys), ``L = 10`` (FLIP-140's
WordCount: 40,000,000 records over 4,000,000 keys).

The distribution of per-record state time (its p50 and p99) is estimated by **Monte Carlo**:
``samples`` units are drawn with a fixed numpy seed, each read and write latency drawn from
fio's percentile table where the profile has one (imported fio results, the local probe), else
from its buckets (uniform inside a bucket; the seed's profile has only buckets); a unit's disk
time is spread evenly over its records. Percentiles of the samples use numpy's
``inverted_cdf`` method (each is an actual sampled value). An exact convolution of the bucket
distributions would do for naive, but the cached mixture and the amortised units make sampling
simpler to get right and to check.

Example::

    >>> from skewlab.iomodel.profiles import load_disk_profile
    >>> round(per_key_ceiling(load_disk_profile("ebs-article"), naive_pattern()), 1)
    72.1
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.profiles import MEAN_KIND, DiskProfile
from skewlab.validation import check_number, check_whole

__all__ = [
    "DEFAULT_BUFFER_SIZE",
    "DEFAULT_HIT_RATIO",
    "DEFAULT_RUN_LENGTH",
    "DEFAULT_SAMPLES",
    "DEFAULT_SEED",
    "MODELLED_STRATEGIES",
    "AccessPattern",
    "ModelledIO",
    "StateTimeDistribution",
    "StrategyCeiling",
    "buffered_pattern",
    "cached_pattern",
    "ceiling_summary",
    "modelled_io_seconds",
    "modelled_records_per_second",
    "naive_pattern",
    "per_key_ceiling",
    "per_key_ceiling_from_means",
    "sorted_pattern",
    "state_time_distribution",
    "state_time_us",
    "strategy_ceilings",
    "strategy_patterns",
]

#: Records of one key per buffer flush (see the module docstring for where it comes from).
DEFAULT_BUFFER_SIZE = 100
#: Cache hit ratio of the write-back LRU.
DEFAULT_HIT_RATIO = 0.5
#: Records per key run in sorted input.
DEFAULT_RUN_LENGTH = 10
#: Monte Carlo samples (units) per strategy.
DEFAULT_SAMPLES = 200_000
#: numpy seed of the Monte Carlo sampling.
DEFAULT_SEED = 20_000_000


@dataclass(frozen=True)
class AccessPattern:
    """A strategy's disk accesses for one key: per unit of ``records_per_unit`` records,
    ``reads_per_unit`` reads and ``writes_per_unit`` writes, on disk with ``disk_probability``.

    Example::

        >>> p = AccessPattern("buffered", records_per_unit=100)
        >>> p.reads_per_record, p.writes_per_record
        (0.01, 0.01)
    """

    strategy: str
    records_per_unit: int = 1
    reads_per_unit: int = 1
    writes_per_unit: int = 1
    disk_probability: float = 1.0
    label: str = ""

    def __post_init__(self) -> None:
        if self.records_per_unit < 1:
            raise SkewlabInputError(f"records_per_unit must be >= 1, got {self.records_per_unit}")
        if self.reads_per_unit < 0 or self.writes_per_unit < 0:
            raise SkewlabInputError("reads_per_unit and writes_per_unit must be >= 0")
        if not 0.0 <= self.disk_probability <= 1.0:
            raise SkewlabInputError(
                f"disk_probability must be in [0, 1], got {self.disk_probability}"
            )
        if not self.label:
            object.__setattr__(self, "label", self.strategy)

    @property
    def reads_per_record(self) -> float:
        """Expected disk reads per record."""
        return self.disk_probability * self.reads_per_unit / self.records_per_unit

    @property
    def writes_per_record(self) -> float:
        """Expected disk writes per record."""
        return self.disk_probability * self.writes_per_unit / self.records_per_unit


def naive_pattern() -> AccessPattern:
    """Naive keyed reduce: one read and one write per record.

    Example::

        >>> naive_pattern().reads_per_record, naive_pattern().writes_per_record
        (1.0, 1.0)
    """
    return AccessPattern("naive", label="naive (1 read + 1 write per record)")


def buffered_pattern(buffer_size: int = DEFAULT_BUFFER_SIZE) -> AccessPattern:
    """In-memory buffer: one read and one write per flush of ``buffer_size`` records of the key.

    Example::

        >>> buffered_pattern(50).writes_per_record
        0.02
    """
    size = check_whole("buffer size", buffer_size, 1)
    return AccessPattern("buffered", records_per_unit=size, label=f"buffered (B={size})")


def cached_pattern(hit_ratio: float = DEFAULT_HIT_RATIO) -> AccessPattern:
    """Write-back LRU cache: a miss costs a read plus the write-back of the evicted dirty entry.

    Example::

        >>> cached_pattern(0.75).reads_per_record
        0.25
    """
    check_number("hit ratio", hit_ratio, minimum=0, maximum=1)
    return AccessPattern(
        "cached", disk_probability=1.0 - float(hit_ratio), label=f"cached (h={hit_ratio:g})"
    )


def sorted_pattern(run_length: int = DEFAULT_RUN_LENGTH) -> AccessPattern:
    """Sorted input, single-key backend: one write per run of ``run_length`` records of a key.

    Example::

        >>> sorted_pattern(10).reads_per_record, sorted_pattern(10).writes_per_record
        (0.0, 0.1)
    """
    length = check_whole("run length", run_length, 1)
    return AccessPattern(
        "sorted", records_per_unit=length, reads_per_unit=0, label=f"sorted (L={length})"
    )


def strategy_patterns(
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
) -> dict[str, AccessPattern]:
    """The model's access patterns, keyed by name, in display order (:data:`MODELLED_STRATEGIES`).

    A strategy names the pattern that models it (``modelled_as``, :mod:`skewlab.strategies`).

    Example::

        >>> list(strategy_patterns())
        ['naive', 'buffered', 'cached', 'sorted']
    """
    patterns = (
        naive_pattern(),
        buffered_pattern(buffer_size),
        cached_pattern(hit_ratio),
        sorted_pattern(run_length),
    )
    return {pattern.strategy: pattern for pattern in patterns}


#: The access patterns the model knows (the strategies modelled as one), in display order.
MODELLED_STRATEGIES = tuple(strategy_patterns())


def state_time_us(read_us: float, write_us: float, pattern: AccessPattern) -> float:
    """Expected disk time (us) per record for mean latencies ``read_us`` and ``write_us``.

    Example::

        >>> state_time_us(1000.0, 3000.0, buffered_pattern(4))
        1000.0
    """
    read_us = check_number("read latency", read_us, above=0, unit=" us")
    write_us = check_number("write latency", write_us, above=0, unit=" us")
    return pattern.reads_per_record * read_us + pattern.writes_per_record * write_us


def per_key_ceiling_from_means(read_us: float, write_us: float, pattern: AccessPattern) -> float:
    """Records per key per second one key can absorb: ``1e6 / state_time_us`` (``inf`` if 0).

    Example::

        >>> per_key_ceiling_from_means(1000.0, 3000.0, naive_pattern())
        250.0
    """
    per_record = state_time_us(read_us, write_us, pattern)
    return math.inf if per_record == 0 else 1e6 / per_record


def per_key_ceiling(profile: DiskProfile, pattern: AccessPattern) -> float:
    """:func:`per_key_ceiling_from_means` with the profile's mean latencies.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> round(per_key_ceiling(load_disk_profile("ebs-article"), buffered_pattern(100)))
        7210
    """
    return per_key_ceiling_from_means(profile.read.mean_us, profile.write.mean_us, pattern)


@dataclass(frozen=True)
class StateTimeDistribution:
    """Per-record disk time (us) of one strategy: the mean from the profile's means, and the
    mean, p50 and p99 of Monte Carlo samples (``None`` when the profile has only means).

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> d = state_time_distribution(load_disk_profile("ebs-article"), naive_pattern())
        >>> round(d.mean_us), d.source
        (13869, 'buckets')
    """

    strategy: str
    mean_us: float
    sampled_mean_us: float | None
    p50_us: float | None
    p99_us: float | None
    samples: int
    seed: int
    source: str


def state_time_distribution(
    profile: DiskProfile,
    pattern: AccessPattern,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> StateTimeDistribution:
    """Monte Carlo distribution of per-record state time (see the module docstring).

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> d = state_time_distribution(load_disk_profile("ebs-article"), buffered_pattern(100))
        >>> d.p50_us < d.mean_us < d.p99_us
        True
    """
    samples = check_whole("samples", samples, 1)
    mean = state_time_us(profile.read.mean_us, profile.write.mean_us, pattern)
    sources = {profile.read.distribution_source, profile.write.distribution_source}
    if "mean only" in sources:
        return StateTimeDistribution(pattern.strategy, mean, None, None, None, 0, seed, "mean only")
    rng = np.random.default_rng(seed)
    unit = np.zeros(samples)
    for _ in range(pattern.reads_per_unit):
        unit += profile.read.sample(rng, samples)
    for _ in range(pattern.writes_per_unit):
        unit += profile.write.sample(rng, samples)
    if pattern.disk_probability < 1.0:
        unit *= rng.random(samples) < pattern.disk_probability
    per_record = unit / pattern.records_per_unit
    p50, p99 = np.percentile(per_record, [50, 99], method="inverted_cdf")
    return StateTimeDistribution(
        strategy=pattern.strategy,
        mean_us=mean,
        sampled_mean_us=float(per_record.mean()),
        p50_us=float(p50),
        p99_us=float(p99),
        samples=samples,
        seed=seed,
        source=" + ".join(sorted(sources)),
    )


@dataclass(frozen=True)
class StrategyCeiling:
    """One strategy's per-key ceiling and per-record state time under a profile.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> rows = strategy_ceilings(load_disk_profile("ebs-article"), samples=1000)
        >>> [r.strategy for r in rows]
        ['naive', 'buffered', 'cached', 'sorted']
    """

    strategy: str
    label: str
    reads_per_record: float
    writes_per_record: float
    records_per_key_per_second: float
    state_time: StateTimeDistribution


def strategy_ceilings(
    profile: DiskProfile,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[StrategyCeiling]:
    """Per-key ceiling and state-time distribution of every strategy (:data:`MODELLED_STRATEGIES`).

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> rows = strategy_ceilings(load_disk_profile("ebs-article"), hit_ratio=0.5, samples=1000)
        >>> round(rows[2].records_per_key_per_second / rows[0].records_per_key_per_second, 6)
        2.0
    """
    rows = []
    for pattern in strategy_patterns(buffer_size, hit_ratio, run_length).values():
        rows.append(
            StrategyCeiling(
                strategy=pattern.strategy,
                label=pattern.label,
                reads_per_record=pattern.reads_per_record,
                writes_per_record=pattern.writes_per_record,
                records_per_key_per_second=per_key_ceiling(profile, pattern),
                state_time=state_time_distribution(profile, pattern, samples, seed),
            )
        )
    return rows


def _finite(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded ceiling is written as ``null``."""
    return None if value is None or math.isinf(value) else value


def ceiling_summary(
    profile: DiskProfile,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    hit_ratio: float = DEFAULT_HIT_RATIO,
    run_length: int = DEFAULT_RUN_LENGTH,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """One JSON-ready object: the profile, the parameters, and for each strategy
    ``<strategy>_records_per_key_per_second`` (``null`` when unbounded, i.e. no disk access) and
    ``<strategy>_state_time_{mean,p50,p99}_us``, plus a ``strategies`` list with the details.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> s = ceiling_summary(load_disk_profile("ebs-article"), samples=1000)
        >>> round(s["naive_records_per_key_per_second"], 1)
        72.1
    """
    rows = strategy_ceilings(profile, buffer_size, hit_ratio, run_length, samples, seed)
    out: dict[str, Any] = {
        "profile": profile.name,
        "block_size": profile.block_size,
        "mean": MEAN_KIND,
        "read_mean_us": profile.read.mean_us,
        "write_mean_us": profile.write.mean_us,
        "buffer_size": buffer_size,
        "hit_ratio": hit_ratio,
        "run_length": run_length,
        "samples": samples,
        "seed": seed,
    }
    for row in rows:
        out[f"{row.strategy}_records_per_key_per_second"] = _finite(row.records_per_key_per_second)
    for row in rows:
        out[f"{row.strategy}_state_time_mean_us"] = row.state_time.mean_us
        out[f"{row.strategy}_state_time_p50_us"] = row.state_time.p50_us
        out[f"{row.strategy}_state_time_p99_us"] = row.state_time.p99_us
    out["strategies"] = [
        {
            "strategy": row.strategy,
            "label": row.label,
            "reads_per_record": row.reads_per_record,
            "writes_per_record": row.writes_per_record,
            "records_per_key_per_second": _finite(row.records_per_key_per_second),
            "state_time_us": asdict(row.state_time),
        }
        for row in rows
    ]
    return out


# --------------------------------------------------------------------------- real runs


@dataclass(frozen=True)
class ModelledIO:
    """Modelled state I/O time of a run under a profile.

    One key's accesses are sequential, so the job takes at least ``busiest_key_seconds``; a
    subtask processes its records one after the other, so (when the key -> subtask map is known)
    at least ``busiest_subtask_seconds``. ``seconds`` is the larger of the two, ``bound`` says
    which one it is (``"key"`` or ``"subtask"``). ``io_seconds`` is all accesses back to back
    (one disk, one request at a time), for reference.

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> m = modelled_io_seconds(load_disk_profile("ebs-article"), {"a": 10}, {"a": 10})
        >>> round(m.seconds, 4), m.bound
        (0.1387, 'key')
    """

    profile: str
    read_us: float
    write_us: float
    keys: int
    total_reads: int
    total_writes: int
    io_seconds: float
    busiest_key: Hashable | None
    busiest_key_seconds: float
    busiest_subtask: int | None
    busiest_subtask_seconds: float | None
    seconds: float
    bound: str
    subtask_seconds: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the busiest key as a string)."""
        out = asdict(self)
        out["busiest_key"] = None if self.busiest_key is None else str(self.busiest_key)
        out["subtask_seconds"] = {str(k): v for k, v in self.subtask_seconds.items()}
        return out


def _counts(name: str, counts: Mapping[Hashable, int]) -> Mapping[Hashable, int]:
    if not isinstance(counts, Mapping):
        raise SkewlabInputError(f"{name} must be a mapping key -> count")
    for key, count in counts.items():
        check_whole(f"{name}[{key!r}]", count, 0)
    return counts


def modelled_io_seconds(
    profile: DiskProfile,
    reads_per_key: Mapping[Hashable, int],
    writes_per_key: Mapping[Hashable, int],
    key_to_subtask: Mapping[Hashable, int] | None = None,
) -> ModelledIO:
    """Modelled I/O time of a run from its counted state reads and writes per key.

    A key's time is ``reads * R + writes * W`` (the profile's mean latencies). Keys run in
    parallel with each other but a key's own accesses never overlap, so the job needs at least
    the busiest key's time. With ``key_to_subtask`` (every key's subtask index), a subtask's time
    is the sum over its keys, and the job needs at least the busiest subtask's time. The modelled
    job time is the larger of these (without the map: the busiest key, i.e. as if every key had
    a subtask of its own).

    Example::

        >>> from skewlab.iomodel.profiles import DiskProfile, LatencyDistribution
        >>> toy = DiskProfile("toy", 8192, LatencyDistribution(1000.0),
        ...                      LatencyDistribution(3000.0))
        >>> m = modelled_io_seconds(toy, {"a": 2, "b": 1}, {"a": 2, "b": 1}, {"a": 0, "b": 0})
        >>> m.busiest_key, m.busiest_key_seconds, m.busiest_subtask_seconds, m.seconds
        ('a', 0.008, 0.012, 0.012)
    """
    reads = _counts("reads_per_key", reads_per_key)
    writes = _counts("writes_per_key", writes_per_key)
    r_us, w_us = profile.read.mean_us, profile.write.mean_us
    keys = list(dict.fromkeys([*reads, *writes]))
    per_key = {k: (reads.get(k, 0) * r_us + writes.get(k, 0) * w_us) / 1e6 for k in keys}
    busiest_key = max(per_key, key=per_key.__getitem__) if per_key else None
    busiest_key_seconds = per_key[busiest_key] if per_key else 0.0

    subtask_seconds: dict[int, float] = {}
    busiest_subtask = busiest_subtask_seconds = None
    if key_to_subtask is not None:
        for key, seconds in per_key.items():
            if key not in key_to_subtask:
                raise SkewlabInputError(f"key_to_subtask has no subtask for key {key!r}")
            subtask = int(key_to_subtask[key])
            subtask_seconds[subtask] = subtask_seconds.get(subtask, 0.0) + seconds
        if subtask_seconds:
            busiest_subtask = max(subtask_seconds, key=subtask_seconds.__getitem__)
            busiest_subtask_seconds = subtask_seconds[busiest_subtask]
        else:
            busiest_subtask_seconds = 0.0
    subtask_bound = busiest_subtask_seconds or 0.0
    seconds = max(busiest_key_seconds, subtask_bound)
    return ModelledIO(
        profile=profile.name,
        read_us=r_us,
        write_us=w_us,
        keys=len(keys),
        total_reads=int(sum(reads.values())),
        total_writes=int(sum(writes.values())),
        io_seconds=sum(per_key.values()),
        busiest_key=busiest_key,
        busiest_key_seconds=busiest_key_seconds,
        busiest_subtask=busiest_subtask,
        busiest_subtask_seconds=busiest_subtask_seconds,
        seconds=seconds,
        bound="subtask" if subtask_bound > busiest_key_seconds else "key",
        subtask_seconds=dict(sorted(subtask_seconds.items())),
    )


def modelled_records_per_second(records: int, modelled: ModelledIO) -> float:
    """Throughput the run would have if state I/O were all it did: ``records / seconds``
    (``inf`` when the run made no disk access).

    Example::

        >>> from skewlab.iomodel.profiles import load_disk_profile
        >>> m = modelled_io_seconds(load_disk_profile("ebs-article"), {"a": 100}, {"a": 100})
        >>> round(modelled_records_per_second(100, m), 1)
        72.1
    """
    check_whole("records", records, 0)
    if modelled.seconds == 0:
        return math.inf
    return records / modelled.seconds
