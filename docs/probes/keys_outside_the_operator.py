"""What a key's result costs a job outside its operator (docs/doctor.md, "What sorted input's
price under skew is made of"): Spark's event log beside skewlab's own operator timers.

Three steps, each on a quiet machine (nothing else running), from the checkout::

    python docs/probes/keys_outside_the_operator.py keys OUT_DIR        # ~3 min
    python docs/probes/keys_outside_the_operator.py form OUT_DIR 8      # ~6 min: k and g
    python docs/probes/keys_outside_the_operator.py form OUT_DIR2 16    # ~11 min: the check
    python docs/probes/keys_outside_the_operator.py fit OUT_DIR OUT_DIR2

``keys``: sorted input over the whole of 100,000 uniform views of 4,000 to 60,000 tweets (4
rounds), its final tasks' run time less their operators' against the keys. ``form``: sorted
input and the heap naive over six inputs at the slope's two sizes (a quarter and all of
100,000 views) in interleaved rounds: two 200-key sets (split over both subtasks, and subtask
0's keys only: J and s), uniform views over 10,000, 20,000 and 50,000 tweets and Zipf 1.1 views
over 20,000. ``fit``: k (a key in its task, outside the operator) and g (a key at the driver)
from the first ``form`` directory, then the form with and without them priced on the second,
predicted / measured at the medians with a bootstrap of the rounds.
"""

from __future__ import annotations

import collections
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from skewlab.experiments.intervals import CONFIDENCE

FORM_INPUTS = ("u200", "u200 sub0", "u10000", "u20000", "u50000", "z20000")
SIDES = ("sorted", "naive_heap")


def _spark(out: Path):
    """A session writing an uncompressed event log into ``out`` (the driver's settings through
    :func:`~skewlab.doctor.spark_connect.doctor_spark`, as the doctor's own)."""
    from skewlab.doctor.spark_connect import doctor_spark

    (out / "events").mkdir(parents=True, exist_ok=True)
    return doctor_spark(driver_config={
        "spark.eventLog.enabled": "true", "spark.eventLog.compress": "false",
        "spark.eventLog.dir": f"file://{(out / 'events').resolve()}",
    })  # fmt: skip


def _run(log, spark, views, strategy, job, **fields) -> None:
    from skewlab.strategies import run_strategy

    t0 = time.time()
    result, _ = run_strategy(views, strategy, job, spark)
    ops = [(s["subtask"], s["records"], s["operator_seconds"]) for s in result.subtasks]
    log.write(json.dumps(dict(fields, t0=t0, t1=time.time(), wall=result.wall_seconds, ops=ops,
                              keys=result.keys, digest=result.result_digest)) + "\n")  # fmt: skip
    log.flush()


def measure_keys(out: Path, rounds: int = 4) -> None:
    """Sorted input over the whole of uniform view sets of ever more tweets."""
    from skewlab.aggregates import result_digest, spark_reference_aggregate
    from skewlab.doctor.catalog import strategies
    from skewlab.engine.config import JobConfig
    from skewlab.inputs.views import ViewSpec, generate_views
    from skewlab.strategies import run_strategy

    spark, job = _spark(out), JobConfig(parallelism=2)
    sorted_input = strategies(2, 500)["sorted"]
    views, digests = {}, {}
    for tweets in (4000, 8000, 12000, 14000, 16000, 18000, 20000, 25000, 30000, 40000, 60000):
        views[tweets] = generate_views(spark, ViewSpec(100_000, 25_000, tweets, seed=1)).cache()
        digests[f"u{tweets}", "large"] = result_digest(spark_reference_aggregate(views[tweets]))
        run_strategy(views[tweets], sorted_input, job, spark)  # unmeasured
    with open(out / "runs.jsonl", "w") as log:
        for number in range(rounds):
            for tweets, v in views.items():
                _run(log, spark, v, sorted_input, job, input=f"u{tweets}", side="sorted",
                     round=number, which="large")  # fmt: skip
    _check_digests(out, digests)


def measure_form(out: Path, rounds: int) -> None:
    """Both remedies over the six inputs at both sizes, interleaved rounds."""
    from pyspark.sql import functions as F

    from skewlab.aggregates import result_digest, spark_reference_aggregate
    from skewlab.doctor.catalog import strategies
    from skewlab.doctor.subtask_replay import replay_subtasks
    from skewlab.engine.config import JobConfig
    from skewlab.engine.routing import KEY_GROUP, OPERATOR, with_key_groups
    from skewlab.inputs.views import ViewSpec, generate_views
    from skewlab.strategies import run_strategy

    spark, job = _spark(out), JobConfig(parallelism=2)
    max_p = job.resolved(2).max_parallelism
    compared = {k: v for k, v in strategies(2, 500).items() if k in SIDES}

    def subtask_0(df):
        keyed = with_key_groups(df, "tweet_id", max_p, 2)
        return keyed.where(F.col(OPERATOR) == 0).drop(OPERATOR, KEY_GROUP)

    def spec(tweets, n, **kw):
        return ViewSpec(n, 25_000, tweets, seed=1, **kw)

    zipf = dict(distribution="zipf", skew=1.1)
    made = {
        "u200": (200, {}, None), "u200 sub0": (200, {}, subtask_0), "u10000": (10_000, {}, None),
        "u20000": (20_000, {}, None), "u50000": (50_000, {}, None), "z20000": (20_000, zipf, None),
    }  # fmt: skip
    views, digests, shape = {}, {}, {}
    for name, (tweets, kw, only) in made.items():
        for which, n in (("small", 25_000), ("large", 100_000)):
            v = generate_views(spark, spec(tweets, n, **kw))
            v = (only(v) if only else v).cache()
            v.count()
            views[name, which] = v
            digests[name, which] = result_digest(spark_reference_aggregate(v))
            replay = replay_subtasks(v, "tweet_id", parallelism=2)
            shape[f"{name}|{which}"] = [(s["records"], s["keys"]) for s in replay["subtasks"]]
    (out / "shape.json").write_text(json.dumps(shape))
    for key, strategy in ((k, s) for k in views for s in compared.values()):
        run_strategy(views[key], strategy, job, spark)  # unmeasured
    with open(out / "runs.jsonl", "w") as log:
        for number in range(rounds):
            sizes = ("small", "large") if number % 2 == 0 else ("large", "small")
            for name in made:
                for side, strategy in compared.items():
                    for which in sizes:
                        _run(log, spark, views[name, which], strategy, job, input=name,
                             side=side, round=number, which=which)  # fmt: skip
    _check_digests(out, digests)


def _check_digests(out: Path, digests: dict[tuple[str, str], str]) -> None:
    """Every run's result equals Spark SQL's over the same views."""
    wrong = [r for r in _runs(out) if r["digest"] != digests[r["input"], r["which"]]]
    if wrong:
        raise SystemExit(f"{len(wrong)} runs' digests differ from Spark SQL's")


def _runs(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def _tasks(out: Path) -> list[dict]:
    """Every task's times, result size and shuffle records read, from the event log."""
    tasks = []
    logs = [p for p in (out / "events").rglob("*")
            if p.is_file() and not p.name.startswith((".", "appstatus"))]  # fmt: skip
    lines = [line for path in sorted(logs) for line in path.read_text().splitlines()]
    for line in lines:
        if '"SparkListenerTaskEnd"' not in line[:60]:
            continue
        e = json.loads(line)
        info, metrics = e["Task Info"], e.get("Task Metrics") or {}
        getting = info.get("Getting Result Time") or 0
        tasks.append(dict(
            launch=info["Launch Time"] / 1e3, finish=info["Finish Time"] / 1e3,
            run=metrics.get("Executor Run Time", 0) / 1e3, size=metrics.get("Result Size", 0),
            records=(metrics.get("Shuffle Read Metrics") or {}).get("Total Records Read", 0),
            fetch=(info["Finish Time"] - getting) / 1e3 if getting else 0.0,
        ))  # fmt: skip
    return tasks


def _in_run(tasks, run) -> list[dict]:
    return [t for t in tasks if run["t0"] <= t["launch"] and t["finish"] <= run["t1"]]


def fit_keys_line(out: Path) -> None:
    """``keys``: the final tasks' run time less their operators' against the keys."""
    tasks, points = _tasks(out), collections.defaultdict(list)
    for run in _runs(out):
        final = [t for t in _in_run(tasks, run) if t["records"] > 0]
        points[run["keys"]].append(sum(t["run"] for t in final) - sum(o[2] for o in run["ops"]))
    keys = sorted(points)
    med = [statistics.median(points[k]) for k in keys]
    a, b = np.polyfit(keys, med, 1)[::-1]
    print(f"tasks less operators = {a:.3f} s + {b * 1e6:.1f} us a key")
    for k, m in zip(keys, med, strict=True):
        print(f"  {k:6d} keys: {m:.3f} s, off the line {m - a - b * k:+.3f}")


def fit_k_g(out: Path) -> dict[str, tuple[float, float]]:
    """Per remedy: us a key in its task outside the operator (k) and at the driver (g)."""
    tasks, shape = _tasks(out), _shape(out)
    per_task, fetch = collections.defaultdict(list), collections.defaultdict(list)
    for run in _runs(out):
        in_run = _in_run(tasks, run)
        for subtask, records, operator in run["ops"]:
            match = [t for t in in_run if t["records"] == records]
            if records and len(match) == 1:
                keys = shape[run["input"], run["which"]][subtask][1]
                per_task[run["side"]].append((keys, records, match[0]["run"] - operator))
        fetch[run["side"]].append((run["keys"], sum(t["fetch"] for t in in_run)))
    out_kg = {}
    for side, rows in per_task.items():
        x = np.array([[1, k, n] for k, n, _ in rows])
        c = np.linalg.lstsq(x, np.array([v for *_, v in rows]), rcond=None)[0]
        g = np.polyfit([k for k, _ in fetch[side]], [v for _, v in fetch[side]], 1)[0]
        out_kg[side] = (c[1] * 1e6, g * 1e6)
        print(f"{side}: k {c[1] * 1e6:.1f} us a key, {c[2] * 1e6:.2f} us a record; "
              f"g {g * 1e6:.2f} us a key ({len(rows)} tasks)")  # fmt: skip
    return out_kg


def _shape(out: Path) -> dict[tuple[str, str], list]:
    return {tuple(k.split("|")): v for k, v in json.loads((out / "shape.json").read_text()).items()}


def price_form(out: Path, k_g: dict[str, tuple[float, float]], resamples: int = 2000) -> None:
    """The form with and without the keys' term on ``out``'s rounds (see the module doc)."""
    shape, by = _shape(out), collections.defaultdict(dict)
    for run in _runs(out):
        by[run["input"], run["side"], run["round"]][run["which"]] = run
    rounds = sorted({n for *_, n in by})

    def slope(name, side, picks):
        times, ops = [], []
        for n in picks:
            large, small = by[name, side, n]["large"], by[name, side, n]["small"]
            times.append(large["wall"] - small["wall"])
            op_l, op_s = ({o[0]: o[2] for o in r["ops"]} for r in (large, small))
            ops.append([op_l.get(j, 0) - op_s.get(j, 0) for j in (0, 1)])
        big, small = shape[name, "large"], shape[name, "small"]
        records = [big[j][0] - small[j][0] for j in (0, 1)]
        new_keys = [big[j][1] - small[j][1] for j in (0, 1)]
        operators = [statistics.median(o[j] for o in ops) for j in (0, 1)]
        return statistics.median(times), operators, records, new_keys, times

    def ratios(side, picks, k_us, g_us):
        t_a, op_a, n_a, _, _ = slope("u200", side, picks)
        t_b, op_b, n_b, _, _ = slope("u200 sub0", side, picks)
        s, j = (t_b - op_b[0]) / n_b[0], (2 * t_a - sum(op_a)) / sum(n_a)
        out = {"s": s, "J": j}
        for name in FORM_INPUTS[2:]:
            t, op, n, new, _ = slope(name, side, picks)
            b = max((0, 1), key=lambda i: n[i])
            chain = op[b] + s * n[b] + k_us * 1e-6 * new[b]
            total = (sum(op) + j * sum(n) + k_us * 1e-6 * sum(new)) / 2
            out[name] = (max(chain, total) + g_us * 1e-6 * sum(new)) / t
        return out

    rng = random.Random(1)
    draws_of = [rng.choices(rounds, k=len(rounds)) for _ in range(resamples)]
    tail = (1 - CONFIDENCE) / 2 * 100
    for side in SIDES:
        k_us, g_us = k_g[side]
        terms = {"form alone": (0, 0), "with the keys": (k_us, g_us)}
        point = {label: ratios(side, rounds, *kg) for label, kg in terms.items()}
        draws = {label: [ratios(side, d, *kg) for d in draws_of] for label, kg in terms.items()}
        fitted = point["with the keys"]
        print(f"{side}: J {fitted['J'] * 1e6:.2f} us, s {fitted['s'] * 1e6:.2f} us, "
              f"k {k_us:.1f} us, g {g_us:.2f} us; {len(rounds)} rounds")  # fmt: skip
        for name in FORM_INPUTS[2:]:
            t, _, n, new, times = slope(name, side, rounds)
            cells = []
            for label in terms:
                low, high = np.percentile([d[name] for d in draws[label]], [tail, 100 - tail])
                cells.append(f"{label} {point[label][name]:.2f} [{low:.2f}..{high:.2f}]")
            print(f"  {name:7s} new keys {new}, records {n}: job {t:.3f} "
                  f"[{min(times):.3f}..{max(times):.3f}] s; " + "; ".join(cells))  # fmt: skip


def main(argv: list[str]) -> None:
    step, *rest = argv
    if step == "keys":
        out = Path(rest[0])
        measure_keys(out)
        fit_keys_line(out)
    elif step == "form":
        measure_form(Path(rest[0]), int(rest[1]))
    elif step == "fit":
        first, second = map(Path, rest)
        price_form(second, fit_k_g(first))
        print("the second session's own k and g:")
        fit_k_g(second)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
