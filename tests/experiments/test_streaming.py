"""bench streaming at a tiny size: every variant checked against the reference, the summary's
keys and ratios and the rescale section (what Spark says without RocksDB is
test_hot_partition.py's); the verdicts on constructed results: ratios over runs (one run,
overlapping runs, a clear effect) and latency medians over micro-batches (too few
micro-batches, overlapping, apart)."""

from __future__ import annotations

import json

import pytest

from skewlab.experiments import streaming
from skewlab.experiments.chapters import BENCHMARKS
from skewlab.experiments.claims import HELD, INCONCLUSIVE, NOT_HELD, chapter_claims, claim
from skewlab.experiments.intervals import quantile_interval
from skewlab.experiments.results import BenchResult
from skewlab.viz.streaming import format_summary


@pytest.fixture(scope="module")
def tiny(spark):
    # two state partitions, fewer than the tiny size's four: every micro-batch commits once a
    # partition, and nothing asserted here depends on how many
    return streaming.run_experiment("tiny", parallelism=2, progress=False, spark=spark)


@pytest.mark.long
def test_every_run_matches_the_reference_and_the_summary_has_its_keys(tiny):
    assert isinstance(tiny, BenchResult) and len(tiny.rows) == 3
    assert {r["variant"] for r in tiny.rows} == {"per-record", "per-batch", "builtin"}
    assert all(r["digest_matches_reference"] and r["state_matches_reference"] for r in tiny.rows)
    s = tiny.summary
    assert s["all_digests_match"]
    medians = {row["variant"]: row["median"] for row in s["by_cardinality"]}
    assert s["per_batch_over_per_record_at_20_keys"] == pytest.approx(
        medians["per-batch"] / medians["per-record"]
    )
    assert s["builtin_over_per_batch_at_20_keys"] == pytest.approx(
        medians["builtin"] / medians["per-batch"]
    )
    assert all(row["min"] <= row["median"] <= row["max"] for row in s["by_cardinality"])
    per_record = next(r for r in tiny.rows if r["variant"] == "per-record")
    assert per_record["state_writes"] == per_record["records_in"] == 1_200
    assert [r["trigger_interval_ms"] for r in s["latency"]] == [100.0, 400.0]
    assert all(r["latency_p99_ms"] >= r["latency_p50_ms"] > 0 for r in s["latency"])
    # one latency per micro-batch (its rows' median), the unit the p50's interval is over
    for r in s["latency"]:
        assert 1 <= len(r["batch_latency_ms"]) <= r["batches"]
        assert all(ms > 0 for ms in r["batch_latency_ms"])
        assert r["latency_p50_over_batches"]["runs"] == len(r["batch_latency_ms"])
    text = format_summary(tiny)
    assert "~45x" in text and "per-batch / per-record" in text
    json.dumps(tiny.to_json_dict(), default=float)


@pytest.mark.long
def test_the_rescale_section_keeps_partitions_on_restart_and_repartitions_exactly(tiny):
    rescale = tiny.summary["rescale"]
    assert (rescale["restart_asked"], rescale["restart_kept"]) == (3, 4)
    assert any("from '3' to '4'" in line for line in rescale["spark_said"]), rescale
    assert "4" in rescale["offset_log_conf"].values()
    if not rescale["repartition_available"]:  # the private call is gone or failed: said why
        assert rescale["repartition"][-1]["reason"]
        pytest.skip(f"offline repartition unavailable: {rescale['repartition'][-1]['reason']}")
    assert [(e["from"], e["to"]) for e in rescale["repartition"]] == [(4, 8), (8, 2)]
    for step in rescale["repartition"]:
        assert step["done"] and step["state_unchanged_per_key"]
        assert step["metadata_partitions"] == step["to"] and step["new_batches"] == 1
        assert step["partitions_holding_keys"] <= step["to"]
    assert rescale["resumed_partitions"] == 2
    assert (
        rescale["resumed_digest_matches_reference"] and rescale["resumed_state_matches_reference"]
    )
    assert rescale["records_in"] == rescale["records_processed"] == rescale["rows"]
    assert rescale["ok"]


@pytest.mark.long
def test_the_summary_carries_every_headline_ratio_bench_compare_reads(tiny):
    from skewlab.experiments.chapters import headline_ratios

    assert all(tiny.summary[key] is not None for key in headline_ratios("streaming"))


@pytest.mark.long
def test_the_chapters_claims_read_this_tiny_run(tiny):
    outcomes = {c.id: c.evaluate(tiny) for c in chapter_claims("streaming")}
    ratio = tiny.summary["per_batch_over_per_record_at_20_keys"]
    assert outcomes["per_batch_beats_per_record"].figures["ratio"].value == ratio
    if BENCHMARKS["streaming"].run_to_run_spread is None:  # one run and no documented spread
        assert outcomes["per_batch_beats_per_record"].status == INCONCLUSIVE
    # one key cardinality at tiny: no shape to read, and the claim says so
    assert outcomes["per_batch_gain_grows_as_keys_shrink"].status == "not measured"
    latency = outcomes["latency_grows_with_trigger"]
    assert (latency.figures["short"], latency.figures["long"]) == (100.0, 400.0)
    counts = [r["batches"] for r in tiny.summary["latency"]]
    assert (latency.figures["n_short"], latency.figures["n_long"]) == tuple(counts)
    if min(counts) < 6:  # a median of fewer than 6 micro-batches has no 95 % interval
        assert latency.status == INCONCLUSIVE


def _runs(per_record, per_batch, builtin):
    """Constructed rows at 20 keys: one per run and variant."""
    return [
        {"distribution": "uniform", "cardinality": 20, "variant": v, "run": i,
         "records_per_second": x, "digest_matches_reference": True,
         "state_matches_reference": True}
        for v, xs in (("per-record", per_record), ("per-batch", per_batch), ("builtin", builtin))
        for i, x in enumerate(xs)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("per_record", "per_batch", "status"),
    [
        ((1_000.0,), (3_000.0,), INCONCLUSIVE),  # one run, no documented spread
        ((1_000.0, 1_400.0, 1_800.0), (1_100.0, 1_500.0, 1_900.0), INCONCLUSIVE),  # overlap
        ((1_000.0, 1_050.0, 1_100.0), (2_900.0, 3_000.0, 3_200.0), HELD),  # a clear effect
        ((2_900.0, 3_000.0, 3_200.0), (1_000.0, 1_050.0, 1_100.0), NOT_HELD),
    ],
)
def test_the_per_batch_claim_is_judged_over_the_runs(per_record, per_batch, status):
    if len(per_record) == 1 and BENCHMARKS["streaming"].run_to_run_spread is not None:
        pytest.skip("one run is judged by the benchmark's documented run-to-run spread")
    summary = streaming.summarize(_runs(per_record, per_batch, (9_000.0,) * len(per_record)))
    result = {"experiment": "streaming", "summary": summary}
    outcome = claim("streaming", "per_batch_beats_per_record").evaluate(result)
    assert outcome.status == status, outcome.interval_text


def _latency_row(interval: float, per_batch: list[float]) -> dict:
    """A latency row as the sweep writes it, from each micro-batch's median latency."""
    return {"variant": "per-batch", "trigger_interval_ms": interval, "source_rate": 1_000.0,
            "batches": len(per_batch), "latency_p50_ms": sorted(per_batch)[len(per_batch) // 2],
            "latency_p99_ms": max(per_batch), "batch_latency_ms": per_batch,
            "latency_p50_over_batches": quantile_interval(per_batch, 0.5).to_json()}  # fmt: skip


@pytest.mark.parametrize(
    ("short", "long", "status"),
    [
        ([2_661.0, 2_818.0], [2_700.0, 2_750.0], INCONCLUSIVE),  # 2 micro-batches: no interval
        ([900.0 + 40 * i for i in range(10)], [1_000.0 + 40 * i for i in range(10)], INCONCLUSIVE),
        ([900.0 + 20 * i for i in range(10)], [1_900.0 + 20 * i for i in range(10)], HELD),
    ],
)
def test_the_latency_claim_rests_on_enough_micro_batches(short, long, status):
    summary = {"latency": [_latency_row(100.0, short), _latency_row(3_000.0, long)]}
    outcome = claim("streaming", "latency_grows_with_trigger").evaluate({"summary": summary})
    assert outcome.status == status, (outcome.interval_text or outcome.text, outcome.note)
    assert f"over {len(short)} micro-batches" in outcome.text


@pytest.mark.long
def test_notebook_08s_sections_draw_this_run_as_this_runs(tiny):
    """Notebook 08 runs its throughput, latency and rescale sections live at the full size only
    (a tiny or quick report shows the shipped reference's runs): the calls its cells make on a
    live run, made here on this module's tiny run, draw every variant and name this run."""
    from skewlab.experiments.results import bench_summary
    from skewlab.viz import claims as claims_view
    from skewlab.viz import streaming as charts
    from skewlab.viz.titles import whose_figures

    whose = whose_figures(tiny)
    assert whose == "this run (tiny, this machine)"
    lead = whose[0].upper() + whose[1:]
    throughput = charts.throughput_figure(tiny)
    names = {t.name for t in throughput.data if t.name}
    assert names == {f"{v} (uniform)" for v in ("per-record", "per-batch", "builtin")}
    assert throughput.layout.title.text.startswith(lead)
    assert len(charts.throughput_table(tiny)) == 3
    ratios = {t.name for t in charts.ratio_figure(tiny).data}
    assert {"per-batch / per-record (uniform)", "builtin / per-batch (uniform)"} <= ratios
    assert charts.describe_shape(tiny, "uniform").startswith(lead)
    latency = charts.latency_figure(bench_summary(tiny)["latency"], whose=whose)
    assert latency.layout.title.text.startswith(lead) and latency.data
    intervals = BENCHMARKS["streaming"].sizes["tiny"]["trigger_intervals"]
    assert len(charts.latency_table(tiny)) == len(intervals)
    rescale = charts.rescale_shown(tiny)
    assert rescale is tiny.summary["rescale"]
    assert "restart asked for 3 partitions" in charts.describe_rescale(rescale)
    assert len(charts.rescale_table(rescale)) > 0 and charts.rescale_whose(tiny) == whose
    table = claims_view.claims_table("streaming", size="tiny", streaming=tiny)
    assert len(table.rows) == len(chapter_claims("streaming"))
