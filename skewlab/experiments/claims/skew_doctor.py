"""Chapter 09's claims: is the skew doctor right? Its predictions held against real runs of
every remedy on three workloads (:mod:`skewlab.experiments.remedy_check`): the counts it replays
on the records, its predicted job throughput, and its ranking of the remedies.

No seed published a prediction of this kind; the issue that asked for the doctor set the
thresholds (counts exact, the hit ratio within 1 point, throughput within 25 %, the ranking of
remedies equal to the measured one).
"""

from __future__ import annotations

from skewlab.experiments.claims import Claim, summary_value

__all__ = ["CLAIMS"]


def _counts(result):
    workloads = summary_value(result, "workloads")
    if not workloads:  # not measured
        return None
    return {
        "n": len(workloads),
        "exact": sum(
            w["records_per_subtask_equal"]
            and w["flushed_keys_predicted"] == w["flushed_keys_measured"]
            and w["hit_ratio_within_1_point"]
            for w in workloads
        ),
    }


def _throughput(result):
    workloads = summary_value(result, "workloads")
    if not workloads:  # not measured
        return None
    ratios = [r["predicted_over_measured"] for w in workloads for r in w["remedies"]]
    return {
        "n": len(ratios),
        "within": sum(abs(x - 1) <= summary_value(result, "tolerance") for x in ratios),
        "low": min(ratios),
        "high": max(ratios),
        "tolerance": summary_value(result, "tolerance") * 100,
    }


def _ranking(result):
    workloads = summary_value(result, "workloads")
    if not workloads:  # not measured
        return None
    return {
        "n": len(workloads),
        "equal": sum(w["ranking_equal"] for w in workloads),
        "consistent": sum(w["ranking_consistent"] for w in workloads),
    }


CLAIMS = (
    Claim(
        id="doctor_counts_what_runs_count",
        source="remedy_check",
        statement=(
            "What the doctor replays on the records is what real runs count: records per "
            "subtask and the buffer's flushed keys equal, the cache's hit ratio within 1 point."
        ),
        measured="{exact} of {n} workloads with every count equal (hit ratio within 1 point)",
        figures=_counts,
        check=lambda f: f["exact"] == f["n"],
        why=(
            "The replay routes each key with Flink's key groups and replays each subtask's "
            "records in the order the operators see them, through the cache's own LRU and the "
            "buffer's count trigger; a run whose buffer flushed on its timer would differ."
        ),
    ),
    Claim(
        id="doctor_throughput_within_tolerance",
        source="remedy_check",
        statement=(
            "The doctor's predicted job throughput is within 25 % of the measured, for every "
            "remedy on every workload."
        ),
        measured=(
            "{within} of {n} predictions within {tolerance:.0f} %; predicted / measured from "
            "{low:.2f} to {high:.2f}"
        ),
        figures=_throughput,
        check=lambda f: f["within"] == f["n"],
        why=(
            "The prediction prices this input's counts with costs measured on other views "
            "(another seed); a remedy whose job lasts a few tenths of a second (the buffer and "
            "sorted input at 20 keys) varies from run to run by about as much as the tolerance."
        ),
    ),
    Claim(
        id="doctor_ranks_remedies_as_measured",
        source="remedy_check",
        statement=("The doctor ranks the remedies as the measurement does, on every workload."),
        measured=(
            "{equal} of {n} workloads ranked exactly as measured; {consistent} of {n} in the "
            "measured order on every pair of remedies whose runs do not overlap"
        ),
        figures=_ranking,
        check=lambda f: f["equal"] == f["n"],
        why=(
            "Two remedies whose predicted throughputs are within a few per cent are ordered by "
            "the runs' noise as much as by their costs: where the measured min..max ranges of "
            "two remedies overlap, the measurement cannot order them either, and the second "
            "figure counts only the pairs it can."
        ),
    ),
)
