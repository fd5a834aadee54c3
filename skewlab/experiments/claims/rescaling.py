"""Chapter 06's claims: restoring keyed state at a new parallelism (seed 002, Figure 3).

Three ways to restore measured on real savepoints: read every old file and filter, a per-key
index, and Flink's key groups (read only the key-group ranges a new subtask owns). Bytes and
requests are counts: every run of the same savepoint reads the same, so the claims are exact.
"""

from __future__ import annotations

from skewlab.experiments.claims import Claim, summary_value

__all__ = ["CLAIMS"]


def _index_bytes(result):
    return {
        "index": summary_value(result, "cases_per_key_index_bytes_read"),
        "key_groups": summary_value(result, "cases_key_groups_bytes_read"),
        "seed_index": summary_value(result, "seed_per_key_index_bytes_read"),
        "seed_key_groups": summary_value(result, "seed_key_groups_bytes_read"),
    }


CLAIMS = (
    Claim(
        id="key_groups_read_less",
        source="rescaling",
        statement="Restoring through key groups reads fewer bytes than reading every old file.",
        measured="bytes read: read-all / key groups = {ratio:.1f}x (realistic cases)",
        figures=lambda r: {"ratio": summary_value(r, "bytes_read_ratio_naive_over_keygroups")},
        check=lambda f: f["ratio"] > 1,
        seed="Figure 3: a new subtask reads only the key-group ranges it owns (seed 002)",
        why="Read-all reads every old subtask's file and drops the keys it does not own.",
        exact=True,
    ),
    Claim(
        id="key_groups_read_only_owned",
        source="rescaling",
        statement="Every key-group restore read exactly the bytes of the entries it kept.",
        measured="bytes read equal the bytes owned in every key-group restore: {owned}",
        figures=lambda r: {"owned": summary_value(r, "keygroups_read_only_owned_bytes")},
        check=lambda f: f["owned"] is True,
        seed="Figure 3 (seed 002)",
        why="Entries are written grouped by key group with per-group offsets, so a range is "
        "one contiguous read.",
        exact=True,
    ),
    Claim(
        id="index_makes_more_requests",
        source="rescaling",
        statement="A per-key index makes more read requests than key groups: one per key.",
        measured="read requests: per-key index / key groups = {ratio:,.0f}x",
        figures=lambda r: {"ratio": summary_value(r, "requests_ratio_index_over_keygroups")},
        check=lambda f: f["ratio"] > 1,
        seed="seed 002: key groups avoid random reads of single keys",
        why="Key groups read each owned range with one request per old file.",
        exact=True,
    ),
    Claim(
        id="index_reads_more_bytes_than_key_groups",
        source="rescaling",
        statement=(
            "A per-key index reads more bytes than key groups: its index on top of the entries "
            "a new subtask keeps."
        ),
        measured=(
            "bytes read: per-key index {index:,}, key groups {key_groups:,} (realistic cases); "
            "the seed's example: {seed_index:,} and {seed_key_groups:,}"
        ),
        figures=_index_bytes,
        check=lambda f: f["index"] > f["key_groups"] and f["seed_index"] > f["seed_key_groups"],
        seed="seed 002: key groups read contiguous ranges, no per-key lookups",
        why="Both read the entries a subtask keeps; the index also reads each old file's index.",
        exact=True,
    ),
)
