"""Seed 002's outage backlog (MediaMath's S3 outage): scale out from a savepoint, drain the
backlog while new records keep arriving, scale back in -- how long does it take, per parallelism?

An outage of ``H`` hours at input rate ``r`` leaves a backlog ``B = r * H * 3600`` records. The
job (normally at ``p0`` subtasks) restarts from its savepoint at ``P`` subtasks, drains the
backlog at ``C(P) - r`` (its capacity minus the records still arriving), then restarts at
``p0``; what arrived during that second restart drains at ``C(p0) - r``::

    T(P) = restart(p0 -> P) + (B + r * restart_in) / (C(P) - r) + restart(P -> p0) + r * restart_out / (C(p0) - r)

and ``T(p0) = B / (C(p0) - r)`` without a restart (infinite when a capacity is not above ``r``).

**Measured here, on real runs** (:func:`measure`), per strategy and key distribution, in R
rounds (every curve once a round), after a warm-up:

* the per-subtask rate ``R``: records per second of operator time of one subtask, from a run at
  parallelism 1 (the first job of a stop-with-savepoint run), its savepoint's time left out (the
  savepoint is taken inside the operator's last call, and the restart cost below counts it);
* the capacity at parallelism 2: records over the busiest subtask's operator time (the second job,
  restored from that savepoint);
* the savepoint's and the restore's time per byte of state (the subtasks' snapshot and restore
  times over the savepoint's bytes), and the state's bytes per key;
* Spark's cost per extra task on this machine (empty jobs of 1 and ``startup_tasks`` tasks).

Operator time is wall-clock time inside the operator's calls, so what a subtask pays once also
lands in it: a Python worker's first operator call imports the sketch library (``datasketch``,
which pulls in scipy, about half a second) to emit ``toStats``. A worker that ran no operator
yet pays that inside a measured run, and at the quick size a subtask's whole work is of that
order; so before the rounds every strategy runs once over a few views at parallelism 2
(:func:`warm_workers`: two jobs, two tasks each), so that the Python workers a measured job gets
have run an operator before. A wall-clock time also holds the time a subtask waits for a core:
at parallelism 2 on two cores both subtasks share them with Spark's JVM (and with whatever else
the machine runs), which the simulation does not model.

Each figure is the median of its rounds; the simulation is run once per round too, on that
round's measured rates, and the spread of those runs is the interval of every simulated figure
(``summary["intervals"]``, :mod:`skewlab.experiments.intervals`): the simulation inherits the
spread of the rates it starts from. The check of the simulation is the ratio of the simulated to
the measured capacity at parallelism 2, round by round (both from the same round's runs).

Why not the slope over two input sizes (:mod:`skewlab.experiments.rounds`): the figures here are
operator times of one subtask, in which the job's fixed costs (scheduling, the collect) do not
appear; the two fixed parts that do (the savepoint in the last call, the first call's import)
are taken out by name above, and a second input size would double the chapter's jobs.

**Simulated from those** for every parallelism ``P`` (:func:`catch_up_curve`): the capacity
``C(P) = R / (largest share of the records one subtask gets at P)`` -- the shares computed from the
real per-key load and Flink's key-group routing at ``P`` (a hot key stays on one subtask, so
``C(P)`` flattens at ``R / hot key's share``) -- and the restart cost ``restart(a -> b)``: the
savepoint of ``1/a`` of the state per subtask, the restore of ``1/b`` of it plus its read requests
on a storage (an object store by default, as MediaMath's checkpoints were on S3), and ``b`` tasks
started. The task start-up grows with ``P``: scaling out too far loses.

Example::

    >>> curve = catch_up_curve(EXAMPLE_INPUTS, outage_hours=4, rate=700,
    ...                        normal_parallelism=2, parallelisms=(2, 8, 64))
    >>> curve[["parallelism", "capacity", "catch_up_hours"]].round(2).values.tolist()
    [[2.0, 992.06, 9.59], [8.0, 3906.25, 0.87], [64.0, 27397.26, 0.11]]
"""  # noqa: E501

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import Estimate, median_estimate
from skewlab.experiments.results import BenchResult
from skewlab.experiments.rounds import warm_up
from skewlab.inputs.views import ViewSpec, generate_views, key_load, zipf_cdf
from skewlab.iomodel.restore_time import StorageReadModel, object_store_model
from skewlab.state.java_hash import java_hash_array
from skewlab.state.key_groups import (
    assign_to_key_group_array,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
)
from skewlab.strategies import Buffered, Naive, StrategyParameters
from skewlab.strategies.resume import run_with_savepoint
from skewlab.validation import check_number, check_whole

__all__ = [
    "HEADLINES",
    "CURVES",
    "EXAMPLE_INPUTS",
    "EXPERIMENT",
    "MeasuredInputs",
    "catch_up_curve",
    "catch_up_seconds",
    "combine_rounds",
    "curve_key",
    "max_subtask_share",
    "measure",
    "measured_inputs",
    "round_inputs",
    "run_experiment",
    "summarize",
    "warm_workers",
    "with_inputs",
    "zipf_shares",
]

EXPERIMENT = "backlog"
#: The headline ratios: none yet -- its figures are hours against parallelism, not ratios.
HEADLINES: dict[str, float | None] = {}

#: The curves of the lesson: (label, strategy, distribution).
CURVES = (
    ("uniform, naive", "naive", "uniform"),
    ("Zipf, naive", "naive", "zipf"),
    ("Zipf, buffered", "buffered", "zipf"),
)


def curve_key(label: str) -> str:
    """A curve's label as the prefix of its summary keys (``<key>_best_hours`` ...).

    Example::

        >>> curve_key("Zipf, buffered")
        'zipf_buffered'
    """
    return label.lower().replace(", ", "_").replace(" ", "_")


#: The parallelisms a curve is drawn at (and the measured ones added).
DEFAULT_PARALLELISMS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)


@dataclass(frozen=True)
class MeasuredInputs:
    """What the simulation is built on, for one strategy over one key distribution.

    ``key_shares``: each key's share of the records (key -> share); ``measured_capacity``:
    parallelism -> records/s measured on real runs (the median of the rounds);
    ``measured_rounds``: parallelism -> each round's figure, in order (parallelism 1: the
    per-subtask rate), empty where nothing was measured in rounds.
    """

    label: str
    strategy: str
    distribution: str
    per_subtask_rate: float
    measured_capacity: dict[int, float]
    key_shares: dict[str, float] = field(repr=False)
    state_bytes_per_key: float = 2_100.0
    snapshot_seconds_per_byte: float = 1e-8
    restore_seconds_per_byte: float = 2e-8
    task_startup_seconds: float = 0.05
    max_parallelism: int = 128
    measured_rounds: dict[int, tuple[float, ...]] = field(default_factory=dict)

    @property
    def state_bytes(self) -> float:
        """The job's state: every key's."""
        return self.state_bytes_per_key * len(self.key_shares)

    def to_row(self) -> dict[str, Any]:
        """The measured figures as one flat row (the shares summarised)."""
        row = asdict(self)
        shares = row.pop("key_shares")
        row["keys"] = len(shares)
        row["hottest_key_share"] = max(shares.values(), default=0.0)
        row["measured_capacity"] = {str(k): v for k, v in self.measured_capacity.items()}
        row["measured_rounds"] = {str(k): list(v) for k, v in self.measured_rounds.items()}
        return row


#: A small worked example (uniform shares over many keys; round figures, not measured).
EXAMPLE_INPUTS = MeasuredInputs(
    "example", "naive", "uniform", 500.0, {}, {f"tweet-{i}": 1 / 20_000 for i in range(20_000)},
    task_startup_seconds=0.0, snapshot_seconds_per_byte=0.0, restore_seconds_per_byte=0.0,
)  # fmt: skip


def zipf_shares(n_keys: int, skew: float) -> dict[str, float]:
    """Each key's share of the records under the views generator's Zipf law (``tweet-<rank>``).

    Example::

        >>> shares = zipf_shares(3, 1.0)
        >>> [round(v, 3) for v in shares.values()]
        [0.545, 0.273, 0.182]
    """
    check_whole("keys", n_keys, 1)
    cdf = zipf_cdf(n_keys, skew)
    probabilities = np.diff(np.concatenate([[0.0], cdf]))
    return {f"tweet-{i}": float(p) for i, p in enumerate(probabilities)}


def _subtask_loads(groups: np.ndarray, weights: np.ndarray, parallelism: int, max_parallelism: int):
    subtasks = compute_operator_index_for_key_group(
        max_parallelism, parallelism, groups.astype(np.int64)
    )
    return np.bincount(subtasks, weights=weights, minlength=parallelism)


def _key_groups(keys: Sequence[str], max_parallelism: int) -> np.ndarray:
    return assign_to_key_group_array(java_hash_array(list(keys), "String"), max_parallelism)


def max_subtask_share(
    key_shares: dict[str, float], parallelism: int, max_parallelism: int
) -> float:  # noqa: E501
    """The largest share of the records one of ``parallelism`` subtasks gets, keys routed as
    Flink routes them (key group, then operator index).

    Example::

        >>> round(max_subtask_share({"a": 0.5, "b": 0.25, "c": 0.25}, 1, 128), 2)
        1.0
    """
    groups = _key_groups(list(key_shares), max_parallelism)
    weights = np.fromiter(key_shares.values(), float, count=len(key_shares))
    return float(_subtask_loads(groups, weights, parallelism, max_parallelism).max())


def catch_up_seconds(
    backlog: float, rate: float, capacity: float, restart_in: float, restart_out: float,
    normal_capacity: float,
) -> float:  # fmt: skip
    """Seconds from the restart to caught up and scaled back in (see the module doc);
    ``math.inf`` when a capacity is not above the input rate.

    Example::

        >>> catch_up_seconds(3600, 1, 3, 0, 0, 3)      # 3600 records drained at 2 records/s
        1800.0
    """
    if capacity <= rate:
        return math.inf
    drain = (backlog + rate * restart_in) / (capacity - rate)
    after = 0.0
    if restart_out:
        if normal_capacity <= rate:
            return math.inf
        after = rate * restart_out / (normal_capacity - rate)
    return restart_in + drain + restart_out + after


def _ranges_read(old_p: int, new_p: int, max_parallelism: int) -> int:
    """The most old subtasks' files one new subtask reads a key-group range from."""
    most = 0
    for i in range(new_p):
        new = compute_key_group_range_for_operator_index(max_parallelism, new_p, i)
        old_first = new.start_key_group * old_p // max_parallelism
        old_last = new.end_key_group * old_p // max_parallelism
        most = max(most, old_last - old_first + 1)
    return most


def _restart_seconds(
    inputs: MeasuredInputs, old_p: int, new_p: int, storage: StorageReadModel
) -> float:
    """Savepoint at ``old_p``, restore at ``new_p`` (its key-group ranges read from the storage,
    then restored at the measured rate), and ``new_p`` tasks started."""
    state = inputs.state_bytes
    savepoint = inputs.snapshot_seconds_per_byte * state / old_p
    per_subtask = state / new_p
    ranges = _ranges_read(old_p, new_p, inputs.max_parallelism)
    reads = storage.seconds([per_subtask / ranges] * ranges)
    restore = inputs.restore_seconds_per_byte * per_subtask + reads
    return savepoint + restore + inputs.task_startup_seconds * new_p


def catch_up_curve(
    inputs: MeasuredInputs,
    *,
    outage_hours: float,
    rate: float,
    normal_parallelism: int,
    parallelisms: Sequence[int] = DEFAULT_PARALLELISMS,
    storage: StorageReadModel | None = None,
    key_shares: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Catch-up time against parallelism for one strategy and distribution: one row per ``P``
    (``source``: ``measured`` where the capacity was measured on a real run, else
    ``simulated``). ``key_shares`` overrides the measured shares (another skew).

    A measured row also carries the capacity measured there (``measured_capacity``, with the
    interval of its rounds' median, ``measured_capacity_low`` .. ``_high``, where it was
    measured in rounds) and the catch-up time computed from it (``measured_catch_up_hours``,
    infinite where that capacity is not above the input rate: no such catch-up)."""
    check_number("outage_hours", outage_hours, minimum=0)
    check_number("rate (records/s)", rate, above=0)
    check_whole("normal_parallelism", normal_parallelism, 1, inputs.max_parallelism)
    storage = storage or object_store_model()
    shares = inputs.key_shares if key_shares is None else key_shares
    backlog = rate * outage_hours * 3600

    groups = _key_groups(list(shares), inputs.max_parallelism)
    weights = np.fromiter(shares.values(), float, count=len(shares))

    def capacity(p: int) -> float:
        busiest = _subtask_loads(groups, weights, p, inputs.max_parallelism).max()
        return inputs.per_subtask_rate / busiest

    normal = capacity(normal_parallelism)
    rows = []
    for p in sorted({*parallelisms, normal_parallelism}):
        check_whole("parallelism", p, 1, inputs.max_parallelism)
        c = capacity(p)
        if p == normal_parallelism:
            t_in = t_out = 0.0
        else:
            t_in = _restart_seconds(inputs, normal_parallelism, p, storage)
            t_out = _restart_seconds(inputs, p, normal_parallelism, storage)
        seconds = catch_up_seconds(backlog, rate, c, t_in, t_out, normal)
        measured = key_shares is None and p in inputs.measured_capacity
        # where the capacity was measured, the catch-up time from the measured capacity too
        measured_c = inputs.measured_capacity.get(p) if measured else None
        measured_seconds = (
            catch_up_seconds(backlog, rate, measured_c, t_in, t_out, normal) if measured_c else None
        )
        spread = median_estimate(inputs.measured_rounds.get(p, ())) if measured else None
        low = high = None
        if spread is not None and spread.has_interval:
            low, high = spread.low, spread.high
        rows.append(
            {
                "curve": inputs.label,
                "strategy": inputs.strategy,
                "distribution": inputs.distribution,
                "parallelism": p,
                "capacity": c,
                "measured_capacity": measured_c,
                "source": "measured" if measured else "simulated",
                "restart_seconds": t_in + t_out,
                "catch_up_hours": seconds / 3600,
                "measured_catch_up_hours": None
                if measured_seconds is None
                else measured_seconds / 3600,
                "measured_capacity_low": low,
                "measured_capacity_high": high,
                # the lower capacity gives the longer catch-up
                "measured_catch_up_hours_low": None
                if high is None
                else catch_up_seconds(backlog, rate, high, t_in, t_out, normal) / 3600,
                "measured_catch_up_hours_high": None
                if low is None
                else catch_up_seconds(backlog, rate, low, t_in, t_out, normal) / 3600,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# measuring on real runs


def measure_task_startup(spark, tasks: int, repeats: int = 3) -> float:
    """Spark's cost per extra task on this machine: the median wall time of an empty job of
    ``tasks`` tasks minus one of 1 task, over ``tasks - 1`` (never below 0)."""
    import pyarrow as pa

    def noop(batches):
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"n": [0]})

    def wall(n: int) -> float:
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            spark.range(0, n, numPartitions=n).mapInArrow(noop, "n long").collect()
            times.append(time.perf_counter() - began)
        return statistics.median(times)

    wall(1)  # warm the Python workers
    return max(0.0, (wall(tasks) - wall(1)) / (tasks - 1))


def measure(
    views,
    label: str,
    strategy: StrategyParameters,
    distribution: str,
    *,
    max_parallelism: int = 128,
    task_startup_seconds: float = 0.0,
    n_views: int | None = None,
    key_shares: dict[str, float] | None = None,
    spark=None,
) -> MeasuredInputs:
    """The measured figures of one curve, one round: a real stop-with-savepoint run at
    parallelism 1 after half the views, resumed at parallelism 2 (see the module doc). The
    per-subtask rate leaves the savepoint's time out of the first job's operator time.
    ``n_views`` and ``key_shares`` (each key's share of the views), when given, spare a
    Spark job each."""
    spark = spark or views.sparkSession
    n = views.count() if n_views is None else n_views
    job = JobConfig(parallelism=1, max_parallelism=max_parallelism, disk_profile=None)
    run = run_with_savepoint(
        views, strategy, job, savepoint_at=max(1, n // 2), resume_parallelism=2, spark=spark
    )
    before, after = run.before, run.after
    busiest = max(row["operator_seconds"] for row in after.subtasks) or math.inf
    state_bytes = sum(o["state_bytes"] for o in run.savepoint["operators"].values())
    entries = max(
        1, sum(sum(o["keyed_states"].values()) for o in run.savepoint["operators"].values())
    )  # noqa: E501
    snap = before.extra["recovery"]["snapshot_seconds_max"]
    restore = after.extra["recovery"]["restore_seconds_max"]
    if key_shares is None:
        load = key_load(views)
        key_shares = dict(zip(load["tweet_id"], load["share"], strict=True))
    # the savepoint is taken inside the first job's last operator call: not a record's cost
    processing = before.operator_seconds - snap
    if processing <= 0:
        processing = before.operator_seconds
    rate = before.records_processed / processing if processing else 0.0
    capacity = after.records_processed / busiest
    return MeasuredInputs(
        label,
        strategy.name,
        distribution,
        per_subtask_rate=rate,
        measured_capacity={1: rate, 2: capacity},
        key_shares=key_shares,
        state_bytes_per_key=state_bytes / entries,
        snapshot_seconds_per_byte=snap / max(1, state_bytes),
        restore_seconds_per_byte=restore / max(1, state_bytes / 2),
        task_startup_seconds=task_startup_seconds,
        max_parallelism=max_parallelism,
        measured_rounds={1: (rate,), 2: (capacity,)},
    )


def combine_rounds(rounds: Sequence[MeasuredInputs]) -> MeasuredInputs:
    """One curve's rounds (:func:`measure`, the same curve each) as one: every measured figure
    the median of the rounds, and each round's capacities kept in ``measured_rounds``.

    Example::

        >>> a = with_inputs(EXAMPLE_INPUTS, per_subtask_rate=400.0,
        ...                 measured_capacity={1: 400.0, 2: 700.0},
        ...                 measured_rounds={1: (400.0,), 2: (700.0,)})
        >>> b = with_inputs(a, per_subtask_rate=500.0, measured_capacity={1: 500.0, 2: 900.0},
        ...                 measured_rounds={1: (500.0,), 2: (900.0,)})
        >>> both = combine_rounds([a, b])
        >>> both.per_subtask_rate, both.measured_capacity, both.measured_rounds
        (450.0, {1: 450.0, 2: 800.0}, {1: (400.0, 500.0), 2: (700.0, 900.0)})
    """
    if not rounds:
        raise SkewlabInputError("combine_rounds needs at least one round")
    first = rounds[0]
    figures = {p: tuple(v for r in rounds for v in r.measured_rounds.get(p, ()))
               for p in first.measured_rounds}  # fmt: skip

    def median(name: str) -> float:
        return float(statistics.median(getattr(r, name) for r in rounds))

    return replace(
        first,
        per_subtask_rate=median("per_subtask_rate"),
        measured_capacity={p: float(statistics.median(v)) for p, v in figures.items() if v},
        state_bytes_per_key=median("state_bytes_per_key"),
        snapshot_seconds_per_byte=median("snapshot_seconds_per_byte"),
        restore_seconds_per_byte=median("restore_seconds_per_byte"),
        measured_rounds=figures,
    )


def round_inputs(inputs: MeasuredInputs) -> list[MeasuredInputs]:
    """The inputs of each round a curve was measured in: its rates and capacities that round,
    its other figures the medians (empty where it was not measured in rounds).

    Example::

        >>> two = with_inputs(EXAMPLE_INPUTS, measured_rounds={1: (400.0, 500.0),
        ...                                                    2: (700.0, 900.0)})
        >>> [(i.per_subtask_rate, i.measured_capacity) for i in round_inputs(two)]
        [(400.0, {1: 400.0, 2: 700.0}), (500.0, {1: 500.0, 2: 900.0})]
    """
    rates = inputs.measured_rounds.get(1, ())
    out = []
    for i, rate in enumerate(rates):
        capacities = {p: v[i] for p, v in inputs.measured_rounds.items() if i < len(v)}
        out.append(replace(inputs, per_subtask_rate=rate, measured_capacity=capacities,
                           measured_rounds={}))  # fmt: skip
    return out


def warm_workers(spark, strategies, *, n_users: int, passes: int = 1, bar=None) -> None:
    """Every strategy run ``passes`` times over a few views at parallelism 2, unmeasured: the
    Python workers a measured job gets have then run an operator (its first call imports the
    sketch library inside the operator's timed region; see the module doc)."""
    job = JobConfig(parallelism=2, max_parallelism=128, disk_profile=None)
    views = generate_views(spark, ViewSpec(WARM_UP_VIEWS, n_users, 20, seed=3))
    for _ in range(passes):
        warm_up(spark, strategies, job, n_users=n_users, views=views, bar=bar)


#: Views of each warm-up run.
WARM_UP_VIEWS = 1_000


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    parallelism: int | None = None,
    outage_hours: float | None = None,
    utilization: float | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Measure the three curves' inputs on real runs, in ``runs`` rounds (default: the
    size's), and simulate their catch-up curves.

    The input rate, the same for every curve, is ``utilization`` times the smallest of the
    curves' capacities at the normal parallelism (``parallelism``, default the size's), from
    the rounds' median rates: every configuration keeps up with the normal load.
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    rounds = resolve_runs(settings, runs)
    hours = check_number(
        "outage_hours",
        settings["outage_hours"] if outage_hours is None else outage_hours,
        minimum=0,
    )  # noqa: E501
    util = check_number(
        "utilization",
        settings["utilization"] if utilization is None else utilization,
        above=0,
        maximum=1,
    )  # noqa: E501
    normal_p = check_whole(
        "parallelism (--parallelism)",
        settings["normal_parallelism"] if parallelism is None else parallelism,
        1,
        128,
    )  # noqa: E501
    spark = spark or get_spark()
    strategies = {"naive": Naive(backend="rocksdb"), "buffered": Buffered()}
    bar = tqdm(total=1 + len(strategies) + rounds * len(CURVES), desc=EXPERIMENT,
               disable=not progress)  # fmt: skip
    startup = measure_task_startup(spark, settings["startup_tasks"], settings["startup_repeats"])
    bar.update()
    warm_workers(spark, strategies, n_users=settings["n_users"], bar=bar)
    specs = {
        "uniform": ViewSpec(settings["n_views"], settings["n_users"], settings["n_tweets"], seed=3),
        "zipf": ViewSpec(
            settings["n_views"], settings["n_users"], settings["n_tweets"], "zipf",
            settings["skew"], seed=3,
        ),
    }  # fmt: skip
    views = {d: generate_views(spark, s).cache() for d, s in specs.items()}
    counts = {d: frame.count() for d, frame in views.items()}
    shares = {}
    for d, frame in views.items():
        load = key_load(frame)
        shares[d] = dict(zip(load["tweet_id"], load["share"], strict=True))
    measured: dict[str, list[MeasuredInputs]] = {label: [] for label, _, _ in CURVES}
    for number in range(rounds):
        for label, strategy, distribution in CURVES:
            bar.set_postfix_str(f"{label}, round {number + 1}")
            measured[label].append(
                measure(
                    views[distribution],
                    label,
                    strategies[strategy],
                    distribution,
                    task_startup_seconds=startup,
                    n_views=counts[distribution],
                    key_shares=shares[distribution],
                    spark=spark,
                )  # fmt: skip
            )
            bar.update()
    bar.close()
    for frame in views.values():
        frame.unpersist()
    inputs = [combine_rounds(measured[label]) for label, _, _ in CURVES]
    # the same traffic for every curve, which each keeps up with at its normal parallelism
    rate = util * min(
        i.per_subtask_rate / max_subtask_share(i.key_shares, normal_p, i.max_parallelism)
        for i in inputs
    )
    curves = simulate(inputs, hours=hours, rate=rate, normal_parallelism=normal_p)
    rows = curves.to_dict("records")
    summary = summarize(rows, inputs, hours=hours, rate=rate, normal_parallelism=normal_p)
    summary["runs"] = rounds
    return BenchResult(EXPERIMENT, size, rows, summary)


def simulate(inputs: Sequence[MeasuredInputs], *, hours, rate, normal_parallelism) -> pd.DataFrame:
    """Every curve's catch-up curve (:func:`catch_up_curve`), one after the other."""
    return pd.concat(
        [catch_up_curve(i, outage_hours=hours, rate=rate, normal_parallelism=normal_parallelism)
         for i in inputs]
    )  # fmt: skip


def _curve_figures(group: pd.DataFrame) -> dict[str, float | int | None]:
    """A curve's best parallelism and its catch-up hours (``None``: it never catches up), and
    its highest capacity."""
    finite = group[np.isfinite(group["catch_up_hours"])]
    figures: dict[str, float | int | None] = {"best_parallelism": None, "best_hours": None}
    if not finite.empty:
        best = finite.loc[finite["catch_up_hours"].idxmin()]
        figures = {"best_parallelism": int(best["parallelism"]),
                   "best_hours": float(best["catch_up_hours"])}  # fmt: skip
    figures["capacity_ceiling"] = float(group["capacity"].max())
    return figures


def _around(value: float | None, samples: Sequence[float | None]) -> Estimate | None:
    """``value`` with the interval of the median of ``samples`` (widened to hold it);
    ``None`` without a value or a sample."""
    present = [v for v in samples if v is not None]
    if value is None or not present:
        return None
    spread = median_estimate(present)
    if not spread.has_interval:
        return Estimate(float(value), runs=spread.runs)
    return Estimate(float(value), min(spread.low, value), max(spread.high, value), spread.runs,
                    spread.method)  # fmt: skip


def summarize(rows, inputs: Sequence[MeasuredInputs], *, hours, rate, normal_parallelism) -> dict:
    """Per curve: the best parallelism and its catch-up time, the hot-key ceiling, and the
    simulated over the measured capacity at parallelism 2; each with the interval of its
    rounds (``summary["intervals"]``) where the inputs were measured in rounds: the simulation
    run once per round (:func:`round_inputs`) at the same input rate.

    Example::

        >>> two = with_inputs(EXAMPLE_INPUTS, measured_capacity={1: 450.0, 2: 800.0},
        ...                   measured_rounds={1: (400.0, 500.0), 2: (700.0, 900.0)})
        >>> rows = simulate([two], hours=1, rate=300, normal_parallelism=2).to_dict("records")
        >>> s = summarize(rows, [two], hours=1, rate=300, normal_parallelism=2)
        >>> round(s["example_simulated_over_measured_at_2"], 3)
        1.118
        >>> s["intervals"]["example_capacity_ceiling"]["runs"]
        2
    """
    frame = pd.DataFrame(rows)
    summary: dict[str, Any] = {
        "outage_hours": hours,
        "rate_records_per_second": rate,
        "normal_parallelism": normal_parallelism,
        "measured": [i.to_row() for i in inputs],
        "measured_figures": "per-subtask rate and capacity at parallelism 1 and 2, savepoint "
        "and restore time per byte, state bytes per key, Spark's per-task start-up",
        "simulated_figures": "capacity and restart cost at every other parallelism, the "
        "catch-up times",
        "runs": max((len(i.measured_rounds.get(1, ())) for i in inputs), default=1) or 1,
    }
    intervals: dict[str, Any] = {}
    by_label = {i.label: i for i in inputs}
    for label, group in frame.groupby("curve", sort=False):
        key = curve_key(label)
        figures = _curve_figures(group)
        for name, value in figures.items():
            summary[f"{key}_{name}"] = value
        mine = by_label.get(label)
        if mine is None:
            continue
        per_round = [
            _curve_figures(catch_up_curve(r, outage_hours=hours, rate=rate,
                                          normal_parallelism=normal_parallelism))
            for r in round_inputs(mine)
        ]  # fmt: skip
        for name, value in figures.items():
            est = _around(value, [f[name] for f in per_round])
            if est is not None:
                intervals[f"{key}_{name}"] = est.to_json()
        # the simulation's check, round by round: simulated over measured capacity at P=2
        share = max_subtask_share(mine.key_shares, 2, mine.max_parallelism)
        ratios = [
            (r / share) / c
            for r, c in zip(mine.measured_rounds.get(1, ()), mine.measured_rounds.get(2, ()),
                            strict=False)
            if c
        ]  # fmt: skip
        if not ratios and mine.measured_capacity.get(2):
            ratios = [(mine.per_subtask_rate / share) / mine.measured_capacity[2]]
        check = median_estimate(ratios)
        summary[f"{key}_simulated_over_measured_at_2"] = None if check is None else check.value
        if check is not None:
            intervals[f"{key}_simulated_over_measured_at_2"] = check.to_json()
        for name, p in (("per_subtask_rate", 1), ("capacity_at_2", 2)):
            est = median_estimate(mine.measured_rounds.get(p, ()))
            if est is not None:
                summary[f"{key}_{name}"] = est.value
                intervals[f"{key}_{name}"] = est.to_json()
    summary["intervals"] = intervals
    return summary


def with_inputs(inputs: MeasuredInputs, **changes: Any) -> MeasuredInputs:
    """``inputs`` with some figures replaced (e.g. a start-up cost per task for a cluster)."""
    if "key_shares" in changes and not changes["key_shares"]:
        raise SkewlabInputError("key_shares must name at least one key")
    return replace(inputs, **changes)


def measured_inputs(result: BenchResult) -> list[MeasuredInputs]:
    """The measured inputs of a result, with synthetic key shares of the same number of keys
    (uniform, or Zipf at the size's skew) -- what the explorer's sliders start from."""
    skew = size_settings(EXPERIMENT, result.size)["skew"]
    out = []
    for m in result.summary["measured"]:
        n = m["keys"]
        shares = (
            zipf_shares(n, skew)
            if m["distribution"] == "zipf"
            else {f"tweet-{i}": 1 / n for i in range(n)}
        )
        out.append(
            MeasuredInputs(
                m["label"],
                m["strategy"],
                m["distribution"],
                m["per_subtask_rate"],
                {int(k): v for k, v in m["measured_capacity"].items()},
                shares,
                m["state_bytes_per_key"],
                m["snapshot_seconds_per_byte"],
                m["restore_seconds_per_byte"],
                m["task_startup_seconds"],
                m["max_parallelism"],
                {int(k): tuple(v) for k, v in (m.get("measured_rounds") or {}).items()},
            )
        )
    return out
