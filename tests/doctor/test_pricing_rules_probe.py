"""The probe behind docs/doctor.md's table of pricing rules (docs/probes/pricing_rules.py)
computes what it says: on runs whose operator times are made from known costs by one rule, that
rule prices every workload at exactly its measured time and another rule does not."""

from __future__ import annotations

import importlib.util
import random

import numpy as np
import pytest

from skewlab import paths
from skewlab.doctor.catalog import cost_weights
from skewlab.doctor.subtask_replay import bucket_records_per_key

#: a record's operator cost at 5 / 50 / 500 / 5,000 records a key (us): a per-key part that
#: weighs more on sparse keys, as sorted input's
KNOTS_US = [6.0, 3.3, 2.7, 2.5]
SPREAD = "both sizes' keys, a key's part spread below"
HELD = "both sizes' keys, held below"


@pytest.fixture(scope="module")
def probe():
    path = paths.project_root() / "docs" / "probes" / "pricing_rules.py"
    spec = importlib.util.spec_from_file_location("pricing_rules", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runs(probe) -> dict:
    """Every input at two sizes, each subtask's keys spread over density buckets (the workloads
    with sparse keys below 5 a key), its operator seconds priced by ``cost_weights``."""
    rng = random.Random(3)
    densities = [probe.N_VIEWS / k for k in probe.PROFILE]

    def subtask(low: int, high: int) -> dict:
        hist = {b: {"records": rng.randint(1_000, 9_000), "keys": 10}
                for b in rng.sample(range(low, high), 3)}  # fmt: skip
        return {"records": sum(d["records"] for d in hist.values()), "density": hist}

    def cost_us(bucket: int) -> float:
        return float(cost_weights(densities, bucket_records_per_key(bucket)) @ KNOTS_US)

    def seconds(s: dict) -> float:
        return sum(d["records"] * cost_us(b) for b, d in s["density"].items()) / 1e6

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
             "ops": [[(0, i, seconds(s)) for i, s in enumerate(sizes[w]["subtasks"])]
                     for w in ("small", "large")]}
            for remedy in probe.REMEDIES
        ]  # fmt: skip
    return data


def test_the_rule_the_runs_were_made_by_prices_them_exactly(probe):
    ratios = probe.compare(_runs(probe))
    for remedy in probe.REMEDIES:
        assert ratios[SPREAD][remedy] == pytest.approx([1.0] * 4, rel=1e-9)
        # held flat below 5 a key, the sparse workload's subtasks are priced otherwise
        assert max(abs(r - 1) for r in ratios[HELD][remedy]) > 0.01
