"""The probe behind docs/doctor.md's table of pricing rules (docs/probes/pricing_rules.py)
computes what it says: on runs whose operator times are made from known costs by one rule, that
rule prices every workload at exactly its measured time and another rule does not."""

from __future__ import annotations

import random

import numpy as np
import pytest

from skewlab.doctor.catalog import HELD_BELOW, cost_weights, density_weights, sparse_rule
from skewlab.doctor.subtask_replay import bucket_records_per_key

#: a record's operator cost at 5 / 50 / 500 / 5,000 records a key (us): a per-key part that
#: weighs more on sparse keys, as sorted input's
KNOTS_US = [6.0, 3.3, 2.7, 2.5]
SPREAD = "both sizes' keys, a key's part spread below"
HELD = "both sizes' keys, held below"
PER_REMEDY = "both sizes' keys, each remedy's rule"


@pytest.fixture(scope="module")
def probe(load_probe):
    return load_probe("pricing_rules")


def _runs(probe, weights_of) -> dict:
    """Every input at two sizes, each subtask's keys spread over density buckets (the workloads
    with sparse keys below 5 a key), its operator seconds priced by ``weights_of(remedy)``."""
    rng = random.Random(3)
    densities = [probe.N_VIEWS / k for k in probe.PROFILE]

    def subtask(low: int, high: int) -> dict:
        hist = {b: {"records": rng.randint(1_000, 9_000), "keys": 10}
                for b in rng.sample(range(low, high), 3)}  # fmt: skip
        return {"records": sum(d["records"] for d in hist.values()), "density": hist}

    def cost_us(bucket: int, remedy: str) -> float:
        return float(weights_of(remedy)(densities, bucket_records_per_key(bucket)) @ KNOTS_US)

    def seconds(s: dict, remedy: str) -> float:
        return sum(d["records"] * cost_us(b, remedy) for b, d in s["density"].items()) / 1e6

    data: dict = {"inputs": {}, "runs": []}
    # each profile set's buckets from just below its own density, the workloads' reaching down
    # to 1 record a key (bucket 0)
    lowest = {f"profile {k}": round(4 * np.log2(probe.N_VIEWS / k)) - 2 for k in probe.PROFILE}
    lowest |= {"sparse": 0, "mixed": 4}
    for name, low in lowest.items():
        sizes = {w: {"subtasks": [subtask(low, low + 12) for _ in (0, 1)]}
                 for w in ("small", "large")}  # fmt: skip
        data["inputs"][name] = {**sizes, "n": [25_000, 100_000]}
        data["runs"] += [
            {"input": name, "remedy": remedy,
             "ops": [[(0, i, seconds(s, remedy)) for i, s in enumerate(sizes[w]["subtasks"])]
                     for w in ("small", "large")]}
            for remedy in probe.REMEDIES
        ]  # fmt: skip
    return data


def test_the_rule_the_runs_were_made_by_prices_them_exactly(probe):
    ratios = probe.compare(_runs(probe, lambda remedy: cost_weights))
    for remedy in probe.REMEDIES:
        assert ratios[SPREAD][remedy] == pytest.approx([1.0] * 4, rel=1e-9)
        # held flat below 5 a key, the sparse workload's subtasks are priced otherwise
        assert max(abs(r - 1) for r in ratios[HELD][remedy]) > 0.01


def test_each_remedys_own_rule_prices_runs_made_by_it_exactly(probe):
    ratios = probe.compare(_runs(probe, lambda remedy: density_weights(sparse_rule(remedy))))
    held = [r for r in probe.REMEDIES if sparse_rule(r) == HELD_BELOW]
    assert held and len(held) < len(probe.REMEDIES)  # the probe compares both rules
    for remedy in probe.REMEDIES:
        assert ratios[PER_REMEDY][remedy] == pytest.approx([1.0] * 4, rel=1e-9)
    for remedy in held:  # its runs held below 5 a key: the spread rule prices them otherwise
        assert max(abs(r - 1) for r in ratios[SPREAD][remedy]) > 0.01
