"""Chapter 07's claims: the outage backlog (seed 002's S3 outage), catch-up against parallelism.

Rates and capacities at parallelism 1 and 2 are measured on real runs, in rounds; every other
parallelism is simulated from them by routing the real keys through Flink's key groups, once
per round on that round's rates, so that every simulated figure carries the spread of the rates
it starts from (:mod:`skewlab.experiments.backlog`). The claims read those figures with their
intervals: a claim is held only where every round's simulation agrees.
"""

from __future__ import annotations

from skewlab.experiments.backlog import CURVES, curve_key
from skewlab.experiments.claims import Claim, estimate, summary_value
from skewlab.experiments.headlines import TOLERANCE  # the project's one tolerance

__all__ = ["CLAIMS"]

#: The curves the simulation's check covers, by their summary keys (its figures' names).
_CHECKED = tuple(curve_key(label) for label, _, _ in CURVES)


def _simulated_over_measured(result, key: str):
    """A curve's simulated over measured capacity at P=2, with its rounds' interval."""
    return estimate(result, f"{key}_simulated_over_measured_at_2")


def _simulation_check(result):
    return {key: _simulated_over_measured(result, key) for key in _CHECKED}


CLAIMS = (
    Claim(
        id="uniform_scales_out",
        source="backlog",
        statement=(
            "With uniform keys, scaling out clears the backlog faster: the quickest catch-up "
            "is at more subtasks than the job's normal parallelism."
        ),
        measured=(
            "uniform, naive, simulated from the measured rates: quickest catch-up {hours:.2f} h "
            "at P={best:.0f}, normal P={normal}"
        ),
        figures=lambda r: {
            "hours": estimate(r, "uniform_naive_best_hours"),
            "best": estimate(r, "uniform_naive_best_parallelism"),
            "normal": summary_value(r, "normal_parallelism"),
        },
        check=lambda f: f["best"] > f["normal"],
        seed="MediaMath scaled out from a savepoint to clear the backlog (seed 002)",
        why="Each added subtask takes its share of the keys until the restart costs dominate.",
    ),
    Claim(
        id="hot_key_caps_capacity",
        source="backlog",
        statement=(
            "With Zipf keys the hot key caps the capacity: no parallelism lifts it to what "
            "uniform keys reach."
        ),
        measured=(
            "highest simulated capacity: Zipf {zipf:,.0f} records/s against uniform "
            "{uniform:,.0f} records/s (naive)"
        ),
        figures=lambda r: {
            "zipf": estimate(r, "zipf_naive_capacity_ceiling"),
            "uniform": estimate(r, "uniform_naive_capacity_ceiling"),
        },
        check=lambda f: f["zipf"] < f["uniform"],
        seed="",
        why="One key always goes to one subtask: capacity stops at the per-subtask rate over "
        "the hot key's share.",
    ),
    Claim(
        id="hot_key_slows_the_catch_up",
        source="backlog",
        statement=(
            "With Zipf keys the quickest catch-up takes longer than with uniform keys: scaling "
            "out cannot spread the hot key."
        ),
        measured=(
            "quickest catch-up, naive, simulated from the measured rates: Zipf {zipf:.2f} h, "
            "uniform {uniform:.2f} h, after a {outage:g} h outage"
        ),
        figures=lambda r: {
            "zipf": estimate(r, "zipf_naive_best_hours"),
            "uniform": estimate(r, "uniform_naive_best_hours"),
            "outage": summary_value(r, "outage_hours"),
        },
        check=lambda f: f["zipf"] > f["uniform"],
        seed="MediaMath's backlog took hours to clear, scaled out from a savepoint (seed 002)",
        why="The hot key's records all drain through one subtask, at that subtask's rate.",
    ),
    Claim(
        id="buffering_lifts_ceiling",
        source="backlog",
        statement="Buffering lifts the hot key's ceiling: each of its records costs less.",
        measured=(
            "highest simulated capacity with Zipf keys: buffered {buffered:,.0f}, naive "
            "{naive:,.0f} records/s"
        ),
        figures=lambda r: {
            "buffered": estimate(r, "zipf_buffered_capacity_ceiling"),
            "naive": estimate(r, "zipf_naive_capacity_ceiling"),
        },
        check=lambda f: f["buffered"] > f["naive"],
        seed="",
        why="The buffer does not move the hot key, it makes its records cheaper.",
    ),
    Claim(
        id="simulation_matches_measurement",
        source="backlog",
        statement=(
            f"The simulated capacity agrees with the capacity measured at P=2 within "
            f"{TOLERANCE:.0%}, for every curve."
        ),
        measured=(
            "simulated / measured capacity at P=2: uniform, naive {uniform_naive:.2f}x; Zipf, "
            "naive {zipf_naive:.2f}x; Zipf, buffered {zipf_buffered:.2f}x"
        ),
        figures=_simulation_check,
        check=lambda f: all(abs(f[key] - 1) <= TOLERANCE for key in _CHECKED),
        seed="",
        why=(
            "The simulation divides the rate one subtask measured at P=1 (its savepoint's time "
            "left out) by the busiest subtask's share of the records at P=2; the measured "
            "capacity is the records over the busiest subtask's time inside its operator, a "
            "wall-clock time. What the simulation leaves out can move the two apart: at P=2 "
            "two Python workers and Spark's JVM share the machine's cores, and a subtask's "
            "wall-clock time includes waiting for one; a subtask at P=2 holds the state of "
            "fewer keys, which can make its state reads cheaper; a buffered subtask sees fewer "
            "records of each key between two flushes; and a Python worker's first operator "
            "call imports the sketch library inside the timed region, which the warm-up runs "
            "are there to pay before the rounds -- at a small size that one cost is a large "
            "share of a subtask's time."
        ),
    ),
)
