"""Is the skew doctor right? Its predictions on skewlab's own views, where the truth can be
measured, beside the measurement.

Three workloads (the issue's): 100,000 views over 20,000 tweets uniform, over 20,000 tweets Zipf
1.1, and over 20 tweets -- seed 1, while the cost profile is priced on seed 7's views
(:mod:`skewlab.experiments.remedy_costs`), so no prediction is checked against the runs it was
priced from. For each workload the doctor replays the views
(:func:`~skewlab.experiments.subtask_replay.replay_subtasks`) and prices every remedy
(:func:`~skewlab.experiments.remedies.predict_remedies`, bounded input: sorted input is
eligible); then each remedy runs for real ``runs`` times at the same parallelism, after one
unmeasured run of each (as the profile's runs), and its job throughput net of start-up (the
seed's measure, as the profile's) is its median.

Checked, per workload: records per subtask predicted == the naive run's records in, exactly;
the cache's hit ratio predicted within 1 point of the measured; the buffer's flushed keys
predicted == the measured state reads; per remedy, predicted throughput within 25 % of the
measured; the ranking of remedies predicted == measured (``ranking_equal``), and, where two
remedies' measured min..max ranges overlap (the measurement cannot order them), in the same
order on every pair it can (``ranking_consistent``).

Example::

    >>> result = run_experiment("tiny", progress=False)                       # doctest: +SKIP
    >>> result.summary["workloads"][0]["records_per_subtask_equal"]           # doctest: +SKIP
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.remedies import predict_remedies
from skewlab.experiments.remedy_costs import load_cost_profile, remedies, warm_up
from skewlab.experiments.results import BenchResult, spread
from skewlab.experiments.startup import StartUp, net_rate
from skewlab.experiments.subtask_replay import replay_subtasks, salted_stage_one_loads
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.strategies import run_strategy
from skewlab.validation import check_whole

__all__ = [
    "EXPERIMENT",
    "HEADLINES",
    "SECTION",
    "TOLERANCE",
    "run_experiment",
    "run_section",
    "workloads",
]

EXPERIMENT = "remedy_check"
#: No seed published these; the check's own thresholds are in the summary.
HEADLINES: dict[str, float | None] = {}
#: Predicted throughput within this fraction of the measured.
TOLERANCE = 0.25
#: The hit ratio predicted within this many points of the measured.
HIT_RATIO_POINTS = 1.0


def workloads(n_views: int, n_users: int, tweets: int, seed: int = 1) -> dict[str, ViewSpec]:
    """The three workloads, by name.

    Example::

        >>> list(workloads(100_000, 25_000, 20_000))
        ['uniform 20000 tweets', 'zipf 1.1 over 20000 tweets', '20 tweets']
    """
    return {
        f"uniform {tweets} tweets": ViewSpec(n_views, n_users, tweets, seed=seed),
        f"zipf 1.1 over {tweets} tweets": ViewSpec(
            n_views, n_users, tweets, distribution="zipf", skew=1.1, seed=seed
        ),
        "20 tweets": ViewSpec(n_views, n_users, 20, seed=seed),
    }


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    costs: str | Path | None = None,
    parallelism: int | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Predict, then measure, every remedy on the three workloads; see the module doc.

    ``costs``: a ``skewlab bench remedy_costs`` result file (default: the newest on this
    machine, else the shipped reference).
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    profile = load_cost_profile(costs)
    p = check_whole("parallelism", parallelism or profile["parallelism"], 1)
    job = JobConfig(parallelism=p)
    compared = remedies(p, profile["cache_entries"])
    specs = workloads(settings["n_views"], settings["n_users"], settings["n_tweets"])

    spark = spark or get_spark()
    bar = tqdm(
        total=len(compared) * (1 + 2 * len(specs) * runs),
        desc=EXPERIMENT,
        disable=not progress,
    )
    startup = StartUp(spark, compared, job, settings["n_users"], 1)
    startup.warm_up(bar)
    workloads_run = []
    for name, spec in specs.items():
        views = generate_views(spark, spec).cache()
        views.count()
        reference = result_digest(spark_reference_aggregate(views))
        bar.set_postfix_str(f"{name}: the doctor's prediction")
        replay = replay_subtasks(
            views, "tweet_id", parallelism=p, cache_entries=profile["cache_entries"],
            buffer_max_count=profile["buffer"]["max_count"],
        )  # fmt: skip
        loads = salted_stage_one_loads(views, "tweet_id", salt_buckets=p, parallelism=p)
        predicted = predict_remedies(replay, loads, profile, bounded=True, salt_buckets=p)
        warm_up(views, compared, job, spark)
        runs_here = []
        for run in range(runs):
            for remedy, strategy in compared.items():
                bar.set_postfix_str(f"{name}, {remedy}")
                startup.sample(remedy)
                bar.update()
                result, _ = run_strategy(views, strategy, job, spark)
                runs_here.append((remedy, run, result, result.result_digest == reference))
                bar.update()
        views.unpersist()
        workloads_run.append((name, replay, predicted, runs_here))
    bar.close()
    startup.close()
    seconds = startup.seconds()
    rows, checks = [], []
    for name, replay, predicted, runs_here in workloads_run:
        measured: dict[str, list] = {}
        for remedy, run, result, matches in runs_here:
            rows.append({
                "experiment": EXPERIMENT, "workload": name, "remedy": remedy, "run": run,
                "parallelism": p, "records_in": result.records_in,
                "job_seconds": result.wall_seconds, "startup_seconds": seconds[remedy],
                "net_job_seconds": result.wall_seconds - seconds[remedy],
                "job_records_per_second_net_of_startup": net_rate(
                    result.records_processed, result.wall_seconds, seconds[remedy]),
                "subtask_records": [s["records"] for s in sorted(
                    result.subtasks, key=lambda s: s["subtask"])],
                "state_reads": result.state_reads, "cache_hit_ratio": result.cache_hit_ratio,
                "digest_matches_reference": matches,
            })  # fmt: skip
            measured.setdefault(remedy, []).append(rows[-1])
        checks.append(_check(name, replay, predicted, measured))
    summary = {
        "cost_profile": {k: profile[k] for k in ("source", "machine", "parallelism")},
        "tolerance": TOLERANCE,
        "workloads": checks,
        "all_within_tolerance": all(c["all_within_tolerance"] for c in checks),
        "all_rankings_equal": all(c["ranking_equal"] for c in checks),
        "all_rankings_consistent": all(c["ranking_consistent"] for c in checks),
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
        "startup_seconds": seconds,
        "startup_samples": startup.samples(),
        "parallelism": p,
    }
    return BenchResult(EXPERIMENT, size, rows, summary)


def _check(name: str, replay, predicted, measured) -> dict[str, Any]:
    """One workload's predictions beside its measurements."""
    rates = {
        remedy: spread(r["job_records_per_second_net_of_startup"] for r in rows)
        for remedy, rows in measured.items()
    }
    throughput = {remedy: s["median"] for remedy, s in rates.items()}
    unmeasured = [remedy for remedy, rate in throughput.items() if rate is None]
    if unmeasured:
        raise RuntimeError(
            f"{name}: every run of {', '.join(unmeasured)} was shorter than its start-up; "
            "use more views (a larger --size)"
        )
    remedies_out = []
    for row in predicted["remedies"]:
        got = throughput[row["remedy"]]
        remedies_out.append({
            "remedy": row["remedy"],
            "predicted_records_per_second": row["records_per_second"],
            "measured_records_per_second": got,
            "measured_spread": [rates[row["remedy"]]["min"], rates[row["remedy"]]["max"]],
            "predicted_over_measured": row["records_per_second"] / got,
            "within_tolerance": abs(row["records_per_second"] / got - 1) <= TOLERANCE,
        })  # fmt: skip
    measured_ranking = sorted(throughput, key=lambda r: -throughput[r])
    spreads = {r["remedy"]: r["measured_spread"] for r in remedies_out}
    position = {name: i for i, name in enumerate(predicted["ranking"])}
    # every pair the measurement tells apart (min..max ranges apart) in the predicted order
    disagreements = [
        (a, b)
        for a in throughput
        for b in throughput
        if spreads[a][0] > spreads[b][1] and position[a] > position[b]
    ]
    naive = measured["naive_rocksdb"][0]["subtask_records"]
    cached_ratio = measured["cached"][0]["cache_hit_ratio"] or 0.0
    predicted_ratio = replay["cache"]["hit_ratio"] or 0.0
    return {
        "workload": name,
        "records_per_subtask_predicted": [s["records"] for s in replay["subtasks"]],
        "records_per_subtask_measured": naive,
        "records_per_subtask_equal": [s["records"] for s in replay["subtasks"]] == naive,
        "hit_ratio_predicted": predicted_ratio,
        "hit_ratio_measured": cached_ratio,
        "hit_ratio_within_1_point": abs(predicted_ratio - cached_ratio) * 100 <= HIT_RATIO_POINTS,
        "flushed_keys_predicted": replay["buffer"]["flush_keys"],
        "flushed_keys_measured": measured["buffered"][0]["state_reads"],
        "remedies": remedies_out,
        "all_within_tolerance": all(r["within_tolerance"] for r in remedies_out),
        "ranking_predicted": predicted["ranking"],
        "ranking_measured": measured_ranking,
        "ranking_equal": predicted["ranking"] == measured_ranking,
        "ranking_consistent": not disagreements,
        "ranking_disagreements": disagreements,
        "recommended": predicted["best"],
    }


#: The registry's part that says at which sizes notebook 09 runs this check itself.
SECTION = "remedy_check_section"


def run_section(size: str, *, spark=None, progress: bool = False) -> BenchResult | None:
    """Notebook 09's check at ``size``: this size's run where the registry's
    ``remedy_check_section`` says so (full), else ``None`` (tiny and quick: every remedy on
    three workloads takes minutes, so those reports show the shipped reference instead).

    Example::

        >>> run_section("quick") is None
        True
    """
    if not size_settings(SECTION, size)["run"]:
        return None
    return run_experiment(size, progress=progress, spark=spark)
