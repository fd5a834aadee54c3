"""Seed 002's outage backlog (MediaMath's S3 outage): scale out from a savepoint, drain the
backlog while new records keep arriving, scale back in -- how long does it take, per parallelism?

An outage of ``H`` hours at input rate ``r`` leaves a backlog ``B = r * H * 3600`` records. The
job (normally at ``p0`` subtasks) restarts from its savepoint at ``P`` subtasks, drains the
backlog at ``C(P) - r`` (its capacity minus the records still arriving), then restarts at
``p0``; what arrived during that second restart drains at ``C(p0) - r``::

    T(P) = restart(p0 -> P) + (B + r * restart_in) / (C(P) - r) + restart(P -> p0) + r * restart_out / (C(p0) - r)

and ``T(p0) = B / (C(p0) - r)`` without a restart (infinite when a capacity is not above ``r``).

**Measured here, on real runs** (:func:`measure`), per strategy and key distribution:

* the per-subtask rate ``R``: records per second of operator time of one subtask, from a run at
  parallelism 1 (the first job of a stop-with-savepoint run);
* the capacity at parallelism 2: records over the busiest subtask's operator time (the second job,
  restored from that savepoint);
* the savepoint's and the restore's time per byte of state (the subtasks' snapshot and restore
  times over the savepoint's bytes), and the state's bytes per key;
* Spark's cost per extra task on this machine (empty jobs of 1 and ``startup_tasks`` tasks).

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
from skewlab.experiments.chapters import size_settings
from skewlab.experiments.results import BenchResult
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
    "curve_key",
    "max_subtask_share",
    "measure",
    "measured_inputs",
    "run_experiment",
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
    parallelism -> records/s measured on a real run.
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
    ``simulated``). ``key_shares`` overrides the measured shares (another skew)."""
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
    spark=None,
) -> MeasuredInputs:
    """The measured figures of one curve: a real stop-with-savepoint run at parallelism 1 after
    half the views, resumed at parallelism 2 (see the module doc)."""
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
    load = key_load(views)
    return MeasuredInputs(
        label,
        strategy.name,
        distribution,
        per_subtask_rate=before.operator_records_per_second or 0.0,
        measured_capacity={
            1: before.operator_records_per_second or 0.0,
            2: after.records_processed / busiest,
        },
        key_shares=dict(zip(load["tweet_id"], load["share"], strict=True)),
        state_bytes_per_key=state_bytes / entries,
        snapshot_seconds_per_byte=snap / max(1, state_bytes),
        restore_seconds_per_byte=restore / max(1, state_bytes / 2),
        task_startup_seconds=task_startup_seconds,
        max_parallelism=max_parallelism,
    )


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
    """Measure the three curves' inputs on real runs and simulate their catch-up curves.

    The input rate, the same for every curve, is ``utilization`` times the smallest of the
    curves' capacities at the normal parallelism (``parallelism``, default the size's): every
    configuration keeps up with the normal load.
    ``runs`` is not used (each measurement is one run).
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
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
    bar = tqdm(total=len(CURVES) + 1, desc=EXPERIMENT, disable=not progress)
    startup = measure_task_startup(spark, settings["startup_tasks"], settings["startup_repeats"])
    bar.update()
    strategies = {"naive": Naive(backend="rocksdb"), "buffered": Buffered()}
    specs = {
        "uniform": ViewSpec(settings["n_views"], settings["n_users"], settings["n_tweets"], seed=3),
        "zipf": ViewSpec(
            settings["n_views"], settings["n_users"], settings["n_tweets"], "zipf",
            settings["skew"], seed=3,
        ),
    }  # fmt: skip
    views = {d: generate_views(spark, s).cache() for d, s in specs.items()}
    inputs = []
    for label, strategy, distribution in CURVES:
        bar.set_postfix_str(label)
        inputs.append(
            measure(
                views[distribution],
                label,
                strategies[strategy],
                distribution,
                task_startup_seconds=startup,
                spark=spark,
            )  # fmt: skip
        )
        bar.update()
    bar.close()
    for frame in views.values():
        frame.unpersist()
    # the same traffic for every curve, which each keeps up with at its normal parallelism
    rate = util * min(
        i.per_subtask_rate / max_subtask_share(i.key_shares, normal_p, i.max_parallelism)
        for i in inputs
    )
    curves = pd.concat(
        [
            catch_up_curve(i, outage_hours=hours, rate=rate, normal_parallelism=normal_p)
            for i in inputs
        ]  # noqa: E501
    )
    rows = curves.to_dict("records")
    summary = summarize(rows, inputs, hours=hours, rate=rate, normal_parallelism=normal_p)
    return BenchResult(EXPERIMENT, size, rows, summary)


def summarize(rows, inputs: Sequence[MeasuredInputs], *, hours, rate, normal_parallelism) -> dict:
    """Per curve: the best parallelism and its catch-up time, and the hot-key ceiling."""
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
    }
    for label, group in frame.groupby("curve", sort=False):
        finite = group[np.isfinite(group["catch_up_hours"])]
        key = curve_key(label)
        if finite.empty:
            summary[f"{key}_best_parallelism"] = None
            summary[f"{key}_best_hours"] = None
        else:
            best = finite.loc[finite["catch_up_hours"].idxmin()]
            summary[f"{key}_best_parallelism"] = int(best["parallelism"])
            summary[f"{key}_best_hours"] = float(best["catch_up_hours"])
        summary[f"{key}_capacity_ceiling"] = float(group["capacity"].max())
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
            )
        )
    return out
