"""Estimates and their intervals: the bootstrap over runs, order statistics for a percentile,
one run's documented spread, and the physical bound a job ratio must keep."""

from __future__ import annotations

import numpy as np
import pytest

from skewlab.experiments.intervals import (
    Estimate,
    bound_violation,
    lowest,
    median_estimate,
    one_run,
    quantile_interval,
    ratio_of_medians,
    summary_estimate,
)


def test_runs_that_overlap_give_a_ratio_interval_that_holds_one():
    # the reference at 20,000 keys: naive 22.7k-28.9k records/s, buffered 25.4k-30.1k
    naive = [22_700.0, 25_100.0, 26_300.0, 27_000.0, 28_900.0]
    buffered = [25_400.0, 26_000.0, 27_100.0, 28_800.0, 30_100.0]
    est = ratio_of_medians(buffered, naive)
    assert est.value == pytest.approx(27_100 / 26_300)
    assert est.low < 1 < est.high


def test_runs_far_apart_give_an_interval_clear_of_one():
    est = ratio_of_medians([800_000.0, 790_000.0, 812_000.0], [24_100.0, 23_900.0, 24_500.0])
    assert 1 < est.low <= est.value <= est.high
    assert est.high / est.low < 1.1  # tight runs, tight interval


def test_the_bootstrap_is_reproducible_and_covers_the_true_ratio_as_often_as_it_says():
    rng = np.random.default_rng(3)
    a = list(rng.normal(2.0, 0.2, 7))
    b = list(rng.normal(1.0, 0.1, 7))
    assert ratio_of_medians(a, b) == ratio_of_medians(a, b)
    covered = 0
    for trial in range(200):
        draw = np.random.default_rng(trial)
        est = ratio_of_medians(list(draw.normal(2.0, 0.2, 9)), list(draw.normal(1.0, 0.1, 9)))
        covered += est.low <= 2.0 <= est.high
    assert covered >= 170  # about 95 %; a percentile bootstrap of medians runs a little under


def test_one_run_has_no_interval_of_its_own_and_takes_its_benchmarks_spread():
    est = ratio_of_medians([4.0], [2.0])
    assert est.value == 2.0 and not est.has_interval
    widened = one_run(2.0, 0.5)
    assert (widened.low, widened.high, widened.method) == (2.0 / 1.5, 3.0, "run-to-run spread")
    assert not one_run(2.0, None).has_interval


def test_a_median_of_too_few_micro_batches_has_no_interval():
    # the 08: two micro-batches per point cannot bound their median
    assert not quantile_interval([2_661.0, 2_818.0], 0.5).has_interval
    est = quantile_interval(list(range(1, 21)), 0.5)
    assert est.low <= 10.5 <= est.high and est.low > 1 and est.high < 20
    assert median_estimate([3.0, 1.0, 2.0]).value == 2.0


def test_the_least_of_several_figures_keeps_the_least_bounds():
    worst = lowest([Estimate(2.0, 1.5, 2.5, 3), Estimate(1.2, 0.9, 1.6, 3)])
    assert (worst.value, worst.low, worst.high) == (1.2, 0.9, 1.6)
    assert lowest([]) is None


@pytest.mark.parametrize(
    ("job", "operator", "broken"),
    [
        (Estimate(47.5, 40.0, 55.0), Estimate(25.0, 22.0, 28.0), True),  # above the operators'
        (Estimate(16.0, 14.0, 18.0), Estimate(25.0, 22.0, 28.0), False),  # diluted: fine
        (Estimate(26.0, 24.0, 30.0), Estimate(25.0, 22.0, 28.0), False),  # overlaps: no proof
        (Estimate(0.8, 0.7, 0.9), Estimate(3.0, 2.5, 3.5), True),  # below 1 while the ops gain
        (Estimate(0.95, 0.9, 0.99), Estimate(0.87, 0.85, 0.9), False),  # a loss, diluted
        (Estimate(0.6, 0.5, 0.7), Estimate(0.87, 0.85, 0.9), True),  # a loss, amplified
    ],
)
def test_a_job_ratio_lies_between_one_and_its_operators_ratio(job, operator, broken):
    assert (bound_violation(job, operator) is not None) == broken


def test_a_summarys_figure_carries_its_interval_and_its_bound():
    summary = {
        "runs": 3,
        "speedup": 47.5,
        "operator_speedup": 25.0,
        "intervals": {
            "speedup": Estimate(47.5, 40.0, 55.0, 3, "bootstrap").to_json(),
            "operator_speedup": Estimate(25.0, 22.0, 28.0, 3, "bootstrap").to_json(),
        },
    }
    est = summary_estimate({"summary": summary}, "speedup", bounds={"speedup": "operator_speedup"})
    assert est.has_interval and "measurement error" in est.error
    assert summary_estimate({"summary": summary}, "speedup").error is None  # no bound declared
    assert summary_estimate({"summary": summary}, "missing") is None
    # an old summary (several runs, no stored interval): a value without an interval
    old = summary_estimate({"summary": {"runs": 5, "x": 1.03}}, "x", spread=0.3)
    assert old.value == 1.03 and not old.has_interval
