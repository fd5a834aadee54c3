"""The probe behind docs/doctor.md's "taken apart" tables (docs/probes/keys_outside_the_operator.py)
computes what it says: on runs and an event log made from known costs, its fits give those costs
back and its form prices every input at exactly its measured time."""

from __future__ import annotations

import json

import pytest

K_US, PER_RECORD_US, G_US = 20.0, 0.5, 4.0  # a key in its task, a record there, a key at the driver
J_US, S_US = 2.5, 1.5  # Spark's side a job record, and a busiest subtask's record


@pytest.fixture(scope="module")
def probe(load_probe):
    return load_probe("keys_outside_the_operator")


#: per input: each subtask's (records, keys) at the small and the large size, and the operators'
#: seconds at the large (the small's are 0: the slope's operator is the large's)
INPUTS = {
    "u200": ([(9_000, 100), (9_500, 100)], [(37_000, 100), (38_000, 100)], [0.10, 0.10]),
    "u200 sub0": ([(9_000, 100), (0, 0)], [(37_000, 100), (0, 0)], [0.10, 0.0]),
    "u10000": ([(9_000, 4_600), (9_200, 4_600)], [(38_000, 5_000), (37_000, 5_000)], [0.13, 0.13]),
    "u20000": ([(9_000, 7_000), (9_200, 7_100)], [(38_000, 9_900), (37_000, 9_900)], [0.18, 0.17]),
    "u50000": (
        [(9_000, 9_800), (9_200, 9_900)],
        [(38_000, 21_600), (37_000, 21_500)],
        [0.36, 0.36],
    ),
    "z20000": ([(6_000, 1_400), (12_000, 1_500)], [(26_000, 4_200), (49_000, 4_400)], [0.14, 0.23]),
}


def _job(records, new_keys, operators, k_us=K_US, g_us=G_US):
    """The form with known costs (the probe's module doc)."""
    b = max((0, 1), key=lambda i: records[i])
    chain = operators[b] + S_US * 1e-6 * records[b] + k_us * 1e-6 * new_keys[b]
    total = (sum(operators) + J_US * 1e-6 * sum(records) + k_us * 1e-6 * sum(new_keys)) / 2
    return max(chain, total) + g_us * 1e-6 * sum(new_keys)


def _write_session(out, rounds=3):
    """runs.jsonl, shape.json and an event log: each run's two final tasks (run time = operator
    + K a key + PER_RECORD a record), its driver fetch G a key, its wall by the form."""
    (out / "events").mkdir(parents=True)
    runs, events, clock = [], [], 1_000.0
    shape = {}
    for name, (small, large, operators) in INPUTS.items():
        shape[f"{name}|small"], shape[f"{name}|large"] = small, large
        records = [large[i][0] - small[i][0] for i in (0, 1)]
        new_keys = [large[i][1] - small[i][1] for i in (0, 1)]
        slope = _job(records, new_keys, operators)
        for side in ("sorted", "naive_heap"):
            for number in range(rounds):
                for which, subtasks, ops, wall in (
                    ("small", small, [0.0, 0.0], 0.5),
                    ("large", large, operators, 0.5 + slope),
                ):
                    t0, keys = clock, sum(k for _, k in subtasks)
                    for i, (n, k) in enumerate(subtasks):
                        if not n:
                            continue
                        run = ops[i] + (K_US * k + PER_RECORD_US * n) * 1e-6
                        finish = t0 + 0.1 + run + G_US * 1e-6 * keys
                        events.append({
                            "Event": "SparkListenerTaskEnd",
                            "Task Info": {"Launch Time": (t0 + 0.1) * 1e3,
                                          "Finish Time": finish * 1e3,
                                          "Getting Result Time": (finish - G_US * 1e-6 * k) * 1e3},
                            "Task Metrics": {"Executor Run Time": run * 1e3, "Result Size": 1,
                                             "Shuffle Read Metrics": {"Total Records Read": n}},
                        })  # fmt: skip
                    clock += 10
                    timed = [(i, n, ops[i]) for i, (n, _) in enumerate(subtasks)]
                    runs.append(dict(input=name, side=side, round=number, which=which, t0=t0,
                                     t1=clock - 1, wall=wall, keys=keys, ops=timed))  # fmt: skip
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (out / "shape.json").write_text(json.dumps(shape))
    (out / "events" / "events_1_local").write_text("".join(json.dumps(e) + "\n" for e in events))


def test_the_fits_give_back_the_costs_the_runs_were_made_with(probe, tmp_path):
    _write_session(tmp_path)
    k_g = probe.fit_k_g(tmp_path)
    for side in ("sorted", "naive_heap"):
        assert k_g[side] == pytest.approx((K_US, G_US), rel=1e-6)


def test_the_form_with_the_keys_prices_every_input_at_its_time_and_alone_falls_short(
    probe, tmp_path, capsys
):
    _write_session(tmp_path)
    probe.price_form(tmp_path, {"sorted": (K_US, G_US), "naive_heap": (K_US, G_US)},
                     resamples=50)  # fmt: skip
    printed = capsys.readouterr().out
    assert f"J {J_US:.2f} us, s {S_US:.2f} us" in printed
    lines = [line for line in printed.splitlines() if "new keys" in line]
    assert len(lines) == 2 * 4
    for line in lines:
        assert "with the keys 1.00 [1.00..1.00]" in line, line
    many = [line for line in lines if line.lstrip().startswith("u50000")]
    assert all("form alone 0." in line for line in many)  # the keys' term is what it lacks
