"""Key splitting measured: naive, salting (N = p), PKG, D-Choices and W-Choices on Zipf views.

For every workload (seed 000's views over ``tweets`` tweets, Zipf exponent ``s``) and
parallelism ``p``, each strategy runs on the keyed runtime in ``runs`` rounds, after one
unmeasured run of every side (:mod:`skewlab.experiments.rounds`), over the views at two sizes (a
quarter of them, then all), and both runs are checked against the Spark SQL reference digest.
Per round (the loads and counts from the larger run):

* **load** of the keyed stage the routing decides (naive: its only stage; the others: the
  partial stage): records in, state reads and busy time (operator seconds) per subtask; the
  imbalance ``max / mean`` of records in (the papers' balance, as a ratio) and Flink's skew
  score (FLIP-418);
* **job throughput**, the seeds' measure: one over the job's cost per record, the slope of its
  time between the two sizes (the job's fixed costs cancel); min / median / max over rounds;
  the speedup over naive is the ratio of the medians with its bootstrap interval
  (:mod:`skewlab.experiments.intervals`);
* **order**: records that reach the final reduce after a later record of their key
  (``check_order``, as :mod:`skewlab.experiments.salting` counts salting's), every side;
* **state**: sub-keys per hot key -- the ten hottest by exact count -- (its state replicas:
  naive 1, salting N), and the partial stage's state entries over keys; a replica's bytes are
  one key's serialised state.

Like for like: every side reads the same cached views, runs the same upstream map and ends with
the same collect; what differs is the mechanism compared -- the senders' routing (salting: a
hash of the view id; the schemes: :class:`~skewlab.strategies.key_splitting.Sender`), the
partial stage and the merge. Two cores run ``p = 4``'s subtasks two at a time: the job time
there is bounded by the two cores, and the load columns show the balance itself.

Beyond the machine, **simulated** (and named so): the same senders' routing of the same keys
(the views' partitions, in their order) at ``p`` up to 128 -- no job runs -- giving each side's
imbalance and, from the per-record costs this run measured at its smallest ``p``, its job
throughput and speedup over naive (the model and its check against the runs:
:mod:`skewlab.experiments.splitting_at_scale`; ``summary["model"]``). The costs' spread over the
rounds is carried through: the simulation is repeated over bootstrap resamples of each side's
rounds, and the headline's simulated speedups carry the interval that gives.

No physical bound is declared between the job's ratio and the operators': the sides do not
share a pipeline (the split sides add a stage and a shuffle), and balance shortens the job
without shortening the operators' total time.

The papers' figures (their abstracts) stand beside: PKG "reduces the load imbalance by up to
several orders of magnitude" against hashing and gains "up to 60 %" throughput on Storm;
D-/W-Choices "150 %" throughput over PKG on Storm.

Example::

    >>> result = run_experiment("tiny", progress=False)                      # doctest: +SKIP
    >>> result.summary["imbalance_max_over_mean_naive"] > 1                  # doctest: +SKIP
    True
    >>> result.summary["headline_measure"]                                   # doctest: +SKIP
    'job_records_per_second'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.engine.skew import skew_score
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import ratio_of_medians
from skewlab.experiments.results import BenchResult, spread
from skewlab.experiments.rounds import SlopeInput, measure_rounds, slope_fields, warm_up
from skewlab.experiments.splitting_at_scale import (
    calibration,
    check_against_runs,
    resampled_calibrations,
    simulated_with_intervals,
)
from skewlab.inputs.views import ViewSpec, generate_views, zipf_cdf
from skewlab.state.java_hash import java_string_hash_array
from skewlab.state.key_groups import assign_to_key_group_array, compute_default_max_parallelism
from skewlab.strategies import Naive, Salted
from skewlab.strategies.key_splitting import (
    SPLIT_KEY,
    DChoices,
    Pkg,
    WChoices,
    with_split_keys,
)
from skewlab.strategies.salted import with_salt

__all__ = [
    "EXPERIMENT",
    "HEADLINES",
    "PAPERS",
    "SIDES",
    "routed_loads",
    "run_experiment",
    "sides",
    "simulated_imbalance",
    "zipf_senders",
]

EXPERIMENT = "splitting"
#: The sides, in display order.
SIDES = ("naive", "salted", "pkg", "dchoices", "wchoices")
#: The keys whose state replicas the summary counts: this many hottest, by exact count.
HOT_KEYS = 10
#: The headline point: Zipf 1.0 at p = 4 over the most tweets measured.
HEADLINE_SKEW, HEADLINE_P = 1.0, 4
#: The headline ratios; no seed published these (the papers' claims are in :data:`PAPERS`).
HEADLINES: dict[str, float | None] = {
    f"{what}_{side}": None
    for what in (
        "imbalance_max_over_mean",
        "speedup_over_naive",
        "state_replicas_per_hot_key",
        "simulated_speedup_over_naive",
    )
    for side in SIDES
}
#: The papers' own words (their abstracts), shown beside the measurement.
PAPERS = {
    "pkg": "PKG (arXiv 1504.00788): imbalance down 'by up to several orders of magnitude' "
    "against hashing; 'up to 60 %' throughput on a Storm cluster",
    "dchoices": "D-Choices (arXiv 1510.05714): '150 %' throughput and '60 %' latency over "
    "PKG on Storm",
    "wchoices": "W-Choices (arXiv 1510.05714): as D-Choices, hot keys on all W workers",
}
#: The headline measure: one over the job's per-record cost by slope (fixed costs cancelled).
HEADLINE_MEASURE = "job_records_per_second"


def sides(parallelism: int) -> dict[str, Any]:
    """The compared strategies at ``parallelism``, all on RocksDB (salting with ``N = p``).

    Example::

        >>> list(sides(4)), sides(4)["salted"].salt_buckets
        (['naive', 'salted', 'pkg', 'dchoices', 'wchoices'], 4)
    """
    return {
        "naive": Naive(),
        "salted": Salted(salt_buckets=parallelism),
        "pkg": Pkg(),
        "dchoices": DChoices(),
        "wchoices": WChoices(),
    }


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    parallelism: int | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run every side on every workload and parallelism of ``size``; see the module doc.

    ``parallelism``: measure only this ``p`` (default: the size's list).
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    parallelisms = (parallelism,) if parallelism else tuple(settings["parallelisms"])
    specs = [
        ViewSpec(settings["n_views"], settings["n_users"], tweets, "zipf", skew, seed=1)
        for tweets in settings["tweets"]
        for skew in settings["skews"]
    ]
    spark = spark or get_spark()
    per_p = len(SIDES) * (1 + len(specs) * 2 * runs)
    bar = tqdm(total=len(parallelisms) * per_p, desc=EXPERIMENT, disable=not progress)
    rows, state, simulated = [], [], []
    for p in parallelisms:
        job = JobConfig(parallelism=p, check_order=True)  # order lost, counted for every side
        compared = sides(p)
        warm_up(spark, compared, job, n_users=settings["n_users"], bar=bar)
        for spec in specs:
            name = _workload(spec)
            with SlopeInput(spark, spec) as views:
                for run in measure_rounds(
                    spark, compared, job, views, runs, bar=bar, label=f"{name}, p={p}, ",
                    keep_states=True,
                ):  # fmt: skip
                    rows.append(_row(name, spec, run))
                    if run.round == 0:
                        state.append(
                            _state(name, spec, run.side, compared[run.side], views.large, job,
                                   run.states)
                        )  # fmt: skip
    bar.set_postfix_str("simulated routing")
    calibrated_at, checks = min(parallelisms), []
    for spec in specs:
        views = generate_views(spark, spec)
        calibrated = calibration(rows, _workload(spec), calibrated_at)
        if calibrated is not None:
            checks += check_against_runs(rows, calibrated)
        simulated += simulated_imbalance(
            views, settings["simulated_parallelisms"], _workload(spec), calibrated,
            resampled_calibrations(rows, _workload(spec), calibrated_at),
        )  # fmt: skip
    bar.close()
    summary = summarize(rows, state, simulated)
    summary["spark_master"] = spark.sparkContext.master
    summary["model"] = {
        "calibrated_at_parallelism": calibrated_at,
        "task_slots": spark.sparkContext.defaultParallelism,
        "check_at_calibration": checks,
    }
    return BenchResult(EXPERIMENT, size, rows, summary)


def _workload(spec: ViewSpec) -> str:
    return f"zipf {spec.skew:g} over {spec.n_tweets} tweets"


def _stages(result) -> list[list[dict]]:
    """The run's keyed stages in order (the routed one first), each its subtasks in order."""
    names = sorted({s["stage"] for s in result.subtasks})
    return [
        sorted((s for s in result.subtasks if s["stage"] == name), key=lambda s: s["subtask"])
        for name in names
    ]


def _row(name, spec, run) -> dict:
    """One side's round: the slope's fields, and the larger run's loads per stage (each stage's
    operator cost per record by the same slope)."""
    result = run.large
    stages, small = _stages(result), _stages(run.small)
    first = stages[0]
    records = [s["records"] for s in first]
    return {
        "experiment": EXPERIMENT,
        "workload": name,
        "skew": spec.skew,
        "tweets": spec.n_tweets,
        "parallelism": result.parameters["parallelism"],
        "strategy": run.side,
        **slope_fields(run),
        "records_in": result.records_in,
        "records_processed": result.records_processed,
        "records_rejected": result.records_rejected,
        "subtask_records": records,
        "subtask_state_reads": [s["state_reads"] for s in first],
        "subtask_busy_seconds": [s["operator_seconds"] for s in first],
        "stages": [
            {
                "stage": stage[0]["stage"],
                "subtask_records": [s["records"] for s in stage],
                "subtask_operator_seconds": [s["operator_seconds"] for s in stage],
                "operator_seconds_per_record": _stage_slope(stage, other),
            }
            for stage, other in zip(stages, small, strict=True)
        ],
        "imbalance_max_over_mean": max(records) / (sum(records) / len(records)),
        "skew_score": skew_score(records),
        "order_violations": result.order_violations,
    }


def _stage_slope(large: list[dict], small: list[dict]) -> float | None:
    """A stage's operator seconds per record between the two sizes (its set-up cancelled)."""
    records = sum(s["records"] for s in large) - sum(s["records"] for s in small)
    if records <= 0:
        return None
    spent = sum(s["operator_seconds"] for s in large) - sum(s["operator_seconds"] for s in small)
    return spent / records


def _state(name, spec, side, strategy, views, job, states) -> dict:
    """Sub-keys (state replicas) per key of one side, from its routing; the hot keys are the
    :data:`HOT_KEYS` hottest by exact count (a share threshold would find none at Zipf 1.0
    over 20,000 tweets, whose hottest key has 9.5 % of the records)."""
    from pyspark.sql import functions as F

    p = job.parallelism
    if side == "naive":
        sub = views.select("tweet_id", F.col("tweet_id").alias(SPLIT_KEY))
    elif side == "salted":
        sub = with_salt(views, "tweet_id", "view_id", p).select(
            "tweet_id", F.col("_salted_key").alias(SPLIT_KEY)
        )
    else:
        sub = with_split_keys(
            views.select("tweet_id"), "tweet_id", strategy.sender_factory(p, job.max_parallelism)
        )
    per_key = (
        sub.where(F.col("tweet_id").isNotNull())
        .groupBy("tweet_id")
        .agg(F.countDistinct(SPLIT_KEY).alias("replicas"), F.count(F.lit(1)).alias("records"))
        .toPandas()
    )
    hot = per_key.sort_values(["records", "tweet_id"], ascending=[False, True]).head(HOT_KEYS)
    one = next(iter(states.values()), None)
    state_bytes = len(StatsSerializer.dumps(one)) if one is not None else 0
    return {
        "workload": name,
        "skew": spec.skew,
        "tweets": spec.n_tweets,
        "parallelism": p,
        "strategy": side,
        "keys": len(per_key),
        "state_entries": int(per_key["replicas"].sum()),
        "state_entries_over_keys": float(per_key["replicas"].sum() / len(per_key)),
        "hot_keys": len(hot),
        "state_replicas_per_hot_key": float(hot["replicas"].mean()) if len(hot) else None,
        "max_replicas": int(per_key["replicas"].max()),
        "bytes_per_replica": state_bytes,
        "extra_state_bytes": int((per_key["replicas"].sum() - len(per_key)) * state_bytes),
    }


def simulated_imbalance(
    views,
    parallelisms,
    workload: str = "",
    calibrated: dict | None = None,
    resampled: list[dict] | None = None,
) -> list[dict]:
    """Simulated, not run: the imbalance (``max / mean`` records per subtask) each side's
    routing gives the views' keys at each ``p`` -- the senders are the views' partitions, in
    their order, routing with the very :class:`Sender` the runs use (:func:`routed_loads`).
    With ``calibrated`` per-record costs
    (:func:`~skewlab.experiments.splitting_at_scale.calibration`), each row also carries the
    simulated job throughput and speedup over naive, stages in turn and pipelined
    (:mod:`skewlab.experiments.splitting_at_scale`); with ``resampled`` calibrations (over
    resamples of the rounds), the speedups' intervals (``<figure>_interval``).

    Example::

        >>> rows = simulated_imbalance(views, [8, 128])                     # doctest: +SKIP
        >>> {r["strategy"] for r in rows} == set(SIDES)                     # doctest: +SKIP
        True
    """
    from pyspark.sql import functions as F

    frame = (
        views.where(F.col("tweet_id").isNotNull())
        .select(
            F.spark_partition_id().alias("sender"), "tweet_id", F.xxhash64("view_id").alias("h")
        )
        .toPandas()
    )
    senders = [frame[frame["sender"] == s] for s in sorted(frame["sender"].unique())]
    keys = [part["tweet_id"].tolist() for part in senders]
    salts = [part["h"].tolist() for part in senders]
    rows = []
    for p in parallelisms:
        routed = {side: routed_loads(keys, p, side, salt_hashes=salts) for side in SIDES}
        # the merge gets one partial per record, keyed by the tweet: naive's routing
        stages = {
            s: [loads] if s == "naive" else [loads, routed["naive"]] for s, loads in routed.items()
        }
        modelled = (
            simulated_with_intervals(stages, calibrated, resampled or [],
                                     int(routed["naive"].sum()))
            if calibrated is not None
            else {}
        )  # fmt: skip
        for side, loads in routed.items():
            rows.append({
                "workload": workload, "parallelism": p, "strategy": side, "simulated": True,
                "imbalance_max_over_mean": float(loads.max() / loads.mean()),
                "skew_score": skew_score(loads.tolist()),
                **modelled.get(side, {}),
            })  # fmt: skip
    return rows


def routed_loads(
    senders: list[list[str]],
    parallelism: int,
    side: str,
    *,
    salt_hashes: list[list[int]] | None = None,
    choices: int = 0,
    hot_threshold: float = 0.0,
) -> np.ndarray:
    """Records per subtask when ``side`` routes these keys at ``parallelism`` (no job runs):
    naive by Flink's key groups; salted by the key group of ``key-(hash % p)`` (``salt_hashes``:
    the views' ``xxhash64(view_id)``, one per key); the schemes by one :class:`Sender` per
    sender, each over its own keys in order.

    Example::

        >>> routed_loads([["a"] * 6, ["a"] * 2], 4, "pkg").tolist()
        [4, 0, 4, 0]
        >>> routed_loads([["a"] * 8], 4, "naive").tolist()
        [0, 0, 8, 0]
    """
    max_p = compute_default_max_parallelism(parallelism)
    every = [k for keys in senders for k in keys]
    if side == "naive":
        return _hashed_loads(every, parallelism, max_p)
    if side == "salted":
        if salt_hashes is None:
            raise ValueError("salted routing needs the views' salt hashes")
        hashes = [h for part in salt_hashes for h in part]
        salted = [f"{k}-{h % parallelism}" for k, h in zip(every, hashes, strict=True)]
        return _hashed_loads(salted, parallelism, max_p)
    options = {"pkg": {}, "dchoices": {"choices": choices, "hot_threshold": hot_threshold}}
    strategy = sides(parallelism)[side]
    if side != "pkg":
        strategy = type(strategy)(**options.get(side, {"hot_threshold": hot_threshold}))
    make_sender = strategy.sender_factory(parallelism, max_p)
    total = np.zeros(parallelism, dtype=np.int64)
    for keys in senders:
        sender = make_sender()
        sender.route(keys)
        total += sender.loads
    return total


def zipf_senders(
    n_records: int, tweets: int, skew: float, senders: int = 2, seed: int = 1
) -> tuple[list[list[str]], list[list[int]]]:
    """Keys drawn from seed 000's Zipf law over ``tweets`` (``tweet-0`` the hottest), split
    into ``senders`` equal runs, each record with a random salt hash: the input of
    :func:`routed_loads` without Spark (what the chapter's explorer routes).

    Example::

        >>> keys, salts = zipf_senders(1_000, 20, 1.5, senders=2)
        >>> len(keys), len(keys[0]), keys[0][:2] == keys[0][:2]
        (2, 500, True)
    """
    rng = np.random.default_rng(seed)
    cdf = zipf_cdf(tweets, skew)
    ranks = np.minimum(np.searchsorted(cdf, rng.random(n_records), side="right"), tweets - 1)
    keys = [f"tweet-{r}" for r in ranks.tolist()]
    hashes = rng.integers(0, 2**62, n_records).tolist()
    cut = np.linspace(0, n_records, senders + 1).astype(int)
    return (
        [keys[a:b] for a, b in zip(cut[:-1], cut[1:], strict=True)],
        [hashes[a:b] for a, b in zip(cut[:-1], cut[1:], strict=True)],
    )


def _hashed_loads(keys: list[str], p: int, max_p: int) -> np.ndarray:
    groups = assign_to_key_group_array(java_string_hash_array(keys), max_p)
    subtasks = (groups.astype(np.int64) * p) // max_p
    return np.bincount(subtasks, minlength=p)


def summarize(rows: list[dict], state: list[dict], simulated: list[dict]) -> dict:
    """Per workload, ``p`` and side: min / median / max of job throughput (by slope), the
    imbalance and skew score of the routed stage, its state; speedups over naive (ratios of the
    medians, ``speedup_over_naive_interval``: the bootstrap interval); the headline point's
    figures, each timed one with its interval in ``summary["intervals"]``, and the simulated
    speedups at the largest ``p`` with the interval the costs' resamples give them."""
    table = []
    for key in dict.fromkeys((r["workload"], r["parallelism"]) for r in rows):
        entry: dict[str, Any] = {"workload": key[0], "parallelism": key[1]}
        mine = [r for r in rows if (r["workload"], r["parallelism"]) == key]
        entry["skew"], entry["tweets"] = mine[0]["skew"], mine[0]["tweets"]
        for side in SIDES:
            runs = [r for r in mine if r["strategy"] == side]
            facts = next(
                s for s in state if (s["workload"], s["parallelism"], s["strategy"]) == (*key, side)
            )
            entry[side] = {
                "throughput": spread(r[HEADLINE_MEASURE] for r in runs),
                "operator_throughput": spread(r["operator_records_per_second"] for r in runs),
                "imbalance_max_over_mean": spread(r["imbalance_max_over_mean"] for r in runs),
                "skew_score": spread(r["skew_score"] for r in runs),
                "busiest_busy_seconds": spread(max(r["subtask_busy_seconds"]) for r in runs),
                "order_violations": runs[0]["order_violations"],
                **{k: facts[k] for k in ("state_replicas_per_hot_key", "state_entries_over_keys",
                                          "hot_keys", "extra_state_bytes")},
            }  # fmt: skip
        naive = [r[HEADLINE_MEASURE] for r in mine if r["strategy"] == "naive"]
        for side in SIDES:
            est = ratio_of_medians(
                [r[HEADLINE_MEASURE] for r in mine if r["strategy"] == side], naive
            )
            entry[side]["speedup_over_naive"] = None if est is None else est.value
            entry[side]["speedup_over_naive_interval"] = None if est is None else est.to_json()
        table.append(entry)
    summary: dict[str, Any] = {
        "headline_measure": HEADLINE_MEASURE,
        "runs": max((r["run"] for r in rows), default=-1) + 1,
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "records_accounted": all(
            r["records_processed"] + r["records_rejected"] == r["records_in"] for r in rows
        ),
        "papers": PAPERS,
        "by_workload": table,
        "simulated": simulated,
    }
    intervals: dict[str, Any] = {}
    point = _headline_point(table)
    if point is not None:
        summary["headline_point"] = {k: point[k] for k in ("workload", "parallelism")}
        for side in SIDES:
            summary[f"imbalance_max_over_mean_{side}"] = point[side]["imbalance_max_over_mean"][
                "median"
            ]
            summary[f"speedup_over_naive_{side}"] = point[side]["speedup_over_naive"]
            if point[side]["speedup_over_naive_interval"] is not None:
                intervals[f"speedup_over_naive_{side}"] = point[side]["speedup_over_naive_interval"]
            summary[f"state_replicas_per_hot_key_{side}"] = point[side][
                "state_replicas_per_hot_key"
            ]
        at_scale = [r for r in simulated if r["workload"] == point["workload"]]
        if at_scale and "speedup_over_naive_in_turn" in at_scale[0]:
            p = max(r["parallelism"] for r in at_scale)
            summary["simulated_at_parallelism"] = p
            named = {
                "simulated_speedup_over_naive": "speedup_over_naive_in_turn",
                "simulated_partial_stage_only_over_naive": "speedup_over_naive_partial_stage_only",
                "simulated_over_pkg": "over_pkg_in_turn",
            }
            for r in at_scale:
                if r["parallelism"] != p:
                    continue
                for key, field in named.items():
                    summary[f"{key}_{r['strategy']}"] = r.get(field)
                    if r.get(f"{field}_interval") is not None:
                        intervals[f"{key}_{r['strategy']}"] = r[f"{field}_interval"]
    summary["intervals"] = intervals
    return summary


def _headline_point(table: list[dict]) -> dict | None:
    """Zipf 1.0 at p = 4 over the most tweets measured, else the nearest measured point."""
    if not table:
        return None
    return min(
        table,
        key=lambda t: (
            abs(t["skew"] - HEADLINE_SKEW),
            abs(t["parallelism"] - HEADLINE_P),
            -t["tweets"],
        ),
    )
