"""How the doctor's per-record cost by density should be read (docs/doctor.md, "What changed: a
key priced as the slope prices it"): four rules, each solving the profile's knots from its view
sets and pricing the check's workloads, against the operator times real runs measure.

Two steps, the first on a quiet machine (nothing else running), from the checkout::

    python docs/probes/pricing_rules.py measure OUT.json     # ~5 min
    python docs/probes/pricing_rules.py compare OUT.json

``measure``: the heap naive, naive RocksDB and sorted input in 3 interleaved rounds
(:func:`~skewlab.experiments.matched_rounds.measure_interleaved`) over the cost profile's four
view sets (100,000 views over 20 .. 20,000 tweets, seed 7) and the check's four workloads
(:func:`~skewlab.doctor.remedy_check.workloads`), each at the slope's two sizes; per run, each
subtask's operator time; per input and size, the replay's density histograms
(:func:`~skewlab.doctor.subtask_replay.replay_subtasks`). ``compare``: per rule, the knots
solved so that each view set's busiest subtask is priced at its measured operator time by slope
(medians of the rounds), then each workload's operator time by slope priced / measured, subtask
by subtask. The rules: the large run's keys with the price held below the sparsest density (the
doctor's before), both sizes' keys (:func:`~skewlab.doctor.subtask_replay.replay_by_slope`) held
below (:func:`~skewlab.doctor.catalog.knot_weights`), both sizes' keys with a key's own part
spread below (:func:`~skewlab.doctor.catalog.cost_weights`), both sizes' keys linear in
1 / density throughout, and both sizes' keys by each remedy's own rule
(:func:`~skewlab.doctor.catalog.sparse_rule`, the doctor's now: held for the naive reduce,
spread for sorted input).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from skewlab.doctor.catalog import cost_weights, density_weights, knot_weights, sparse_rule
from skewlab.doctor.subtask_replay import bucket_records_per_key, replay_by_slope

REMEDIES = ("naive_heap", "naive_rocksdb", "sorted")
#: How a figure at a density is made of the knots' (records per key at the knots, density).
Weights = Callable[[list[float], float], np.ndarray]
#: The profile's cardinalities, densest first (their densities ascend).
PROFILE = (20_000, 2_000, 200, 20)
N_VIEWS = 100_000


def measure(out: Path) -> None:
    """Run the rounds and write their operator times and the inputs' histograms to ``out``."""
    from contextlib import ExitStack

    from skewlab.doctor.catalog import strategies
    from skewlab.doctor.remedy_check import workloads
    from skewlab.doctor.subtask_replay import DEFAULT_CACHE_ENTRIES, replay_subtasks
    from skewlab.engine.config import JobConfig
    from skewlab.engine.session import get_spark
    from skewlab.experiments.matched_rounds import measure_interleaved
    from skewlab.experiments.rounds import SlopeInput
    from skewlab.inputs.views import ViewSpec

    spark, p = get_spark(), 2
    compared = {k: v for k, v in strategies(p, DEFAULT_CACHE_ENTRIES).items() if k in REMEDIES}
    data: dict = {"inputs": {}, "runs": []}
    with ExitStack() as stack:
        inputs = {
            f"profile {k}": stack.enter_context(
                SlopeInput(spark, ViewSpec(N_VIEWS, 25_000, k, seed=7))
            )
            for k in PROFILE
        }
        for name, workload in workloads(N_VIEWS, 25_000, 20_000).items():
            inputs[name] = stack.enter_context(workload.slope_input(spark))
        for name, views in inputs.items():
            data["inputs"][name] = {
                w: replay_subtasks(views.views[w], "tweet_id", parallelism=p)
                for w in ("small", "large")
            }
            data["inputs"][name]["n"] = [views.n_small, views.n_large]
        for name, run in measure_interleaved(spark, compared, JobConfig(parallelism=p), inputs, 3):
            data["runs"].append({
                "input": name, "remedy": run.side,
                "ops": [[(s["stage"], s["subtask"], s["operator_seconds"]) for s in r.subtasks]
                        for r in (run.small, run.large)],
            })  # fmt: skip
    out.write_text(json.dumps(data))


def _inverse_weights(densities: list[float], n: float) -> np.ndarray:
    """Linear in 1 / density between the knots and below them, held above the densest."""
    x = 1 / np.asarray(densities)
    weights = np.zeros(len(densities))
    if n >= densities[-1]:
        weights[-1] = 1.0
        return weights
    i = max(1, int(np.searchsorted(-x, -1 / n)))  # x[i - 1] > 1 / n >= x[i], or below the first
    t = (x[i - 1] - 1 / n) / (x[i - 1] - x[i])
    weights[i - 1], weights[i] = 1 - t, t
    return weights


def compare(data: dict) -> dict[str, dict[str, list[float]]]:
    """Per rule and remedy, each workload's subtasks' operator time by slope priced / measured
    (in the order of ``data``'s workloads, subtask by subtask)."""
    inputs, runs = data["inputs"], data["runs"]
    profile = [f"profile {k}" for k in PROFILE]
    checks = [name for name in inputs if name not in profile]
    densities = [N_VIEWS / k for k in PROFILE]

    def measured(name: str, remedy: str, subtask: int) -> float:
        n_small, n_large = inputs[name]["n"]

        def seconds(run: dict, size: int) -> float:
            last = max(s[0] for s in run["ops"][size])
            return sum(s[2] for s in run["ops"][size] if s[0] == last and s[1] == subtask)

        return statistics.median(
            (seconds(r, 1) - seconds(r, 0)) * n_large / (n_large - n_small)
            for r in runs
            if r["input"] == name and r["remedy"] == remedy
        )

    def histogram(name: str, subtask: int, by_slope: bool) -> dict:
        replay = inputs[name]["large"]
        if by_slope:
            replay = replay_by_slope(inputs[name]["small"], replay, *inputs[name]["n"])
        return replay["subtasks"][subtask]["density"]

    def weighed(hist: dict, weights: Weights) -> np.ndarray:
        return sum(d["records"] * weights(densities, bucket_records_per_key(int(b)))
                   for b, d in hist.items())  # fmt: skip

    def every(weights: Weights) -> Callable[[str], Weights]:
        return lambda remedy: weights

    rules: dict[str, tuple[bool, Callable[[str], Weights]]] = {
        "large run's keys, held below": (False, every(knot_weights)),
        "both sizes' keys, held below": (True, every(knot_weights)),
        "both sizes' keys, a key's part spread below": (True, every(cost_weights)),
        "both sizes' keys, linear in 1 / density": (True, every(_inverse_weights)),
        "both sizes' keys, each remedy's rule": (True, lambda r: density_weights(sparse_rule(r))),
    }
    out: dict[str, dict[str, list[float]]] = {}
    for rule, (by_slope, weights_of) in rules.items():
        out[rule] = {}
        for remedy in REMEDIES:
            weights = weights_of(remedy)
            busiest = [max((0, 1), key=lambda s: inputs[n]["large"]["subtasks"][s]["records"])
                       for n in profile]  # fmt: skip
            design = [
                weighed(histogram(n, s, by_slope), weights)
                for n, s in zip(profile, busiest, strict=True)
            ]
            knots = np.linalg.solve(
                np.array(design),
                [measured(n, remedy, s) for n, s in zip(profile, busiest, strict=True)],
            )
            out[rule][remedy] = [
                float(weighed(histogram(n, s, by_slope), weights) @ knots / measured(n, remedy, s))
                for n in checks
                for s in (0, 1)
            ]
    return out


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[1] not in ("measure", "compare"):
        sys.exit(__doc__)
    if argv[1] == "measure":
        measure(Path(argv[2]))
        return
    data = json.loads(Path(argv[2]).read_text())
    checks = [n for n in data["inputs"] if not n.startswith("profile")]
    print("priced / measured operator time by slope, subtask 0 / subtask 1:", ", ".join(checks))
    for rule, by_remedy in compare(data).items():
        for remedy, ratios in by_remedy.items():
            pairs = [f"{a:.2f} / {b:.2f}" for a, b in zip(ratios[::2], ratios[1::2], strict=True)]
            print(f"{rule:45s} {remedy:14s} " + " | ".join(pairs))


if __name__ == "__main__":
    main(sys.argv)
