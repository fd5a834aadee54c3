"""Chapter 01's claims: how many records per second one key can absorb when every record reads
and writes its state on disk (seed 000's EBS arithmetic).

They read the notebook's ``article``: the article's EBS volume as a
:class:`~skewlab.iomodel.profiles.DiskProfile` (its ``fio`` figures, as published), priced by
the model (:mod:`skewlab.iomodel.model`). The figures are arithmetic over published means, the
same every time: the claim is exact.
"""

from __future__ import annotations

from skewlab.experiments.claims import Claim
from skewlab.experiments.headlines import TOLERANCE  # the project's one tolerance
from skewlab.iomodel.model import naive_pattern, per_key_ceiling

__all__ = ["CLAIMS", "SEED_RECORDS_PER_KEY"]

#: The seed's figure: "~70 records per key per second" on its EBS volume.
SEED_RECORDS_PER_KEY = 70


def _ceiling(profile):
    return {
        "naive": per_key_ceiling(profile, naive_pattern()),
        "read_ms": profile.read.mean_us / 1_000,
        "write_ms": profile.write.mean_us / 1_000,
    }


CLAIMS = (
    Claim(
        id="ebs_caps_a_key_near_70",
        source="article",
        statement=(
            f"On the article's EBS volume one key absorbs about {SEED_RECORDS_PER_KEY} records "
            f"per second (within {TOLERANCE:.0%}) when each of its records reads and writes its "
            "state: one key's accesses never overlap."
        ),
        measured=(
            "one key, 1 read + 1 write per record: {naive:,.0f} records/s (mean read "
            "{read_ms:.2f} ms + mean write {write_ms:.2f} ms)"
        ),
        figures=_ceiling,
        check=lambda f: abs(f["naive"] / SEED_RECORDS_PER_KEY - 1) <= TOLERANCE,
        seed=f"~{SEED_RECORDS_PER_KEY} records per key per second (seed 000, its fio figures)",
        why=(
            "The article adds its rounded means (6.1 + 7.7 ms) and rounds the result down; the "
            "model divides a second by the unrounded means of the same fio runs. A key's "
            "records are processed one after the other, so its state accesses wait in turn."
        ),
        exact=True,
    ),
)
