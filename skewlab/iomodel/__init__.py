"""The storage latency model of seed 000: what a state access costs on a disk, and what a run's
accesses would cost there.

================  ===============================================================
``profiles``      disk profiles (read and write latency distributions at one block size)
``fio``           import of any ``fio --output-format=json`` result as a profile
``disk_probe``    this machine's disk, measured the way the seed measured EBS
``model``         per-key ceilings of each strategy, and the modelled I/O time of a run
``restore_time``  a restore's read requests priced on a disk profile or an object store
================  ===============================================================

Example::

    >>> from skewlab.iomodel import load_disk_profile, naive_pattern, per_key_ceiling
    >>> round(per_key_ceiling(load_disk_profile("ebs-article"), naive_pattern()), 1)
    72.1
"""

from __future__ import annotations

from skewlab.iomodel.model import (
    modelled_io_seconds,
    naive_pattern,
    per_key_ceiling,
    strategy_ceilings,
)
from skewlab.iomodel.profiles import (
    DiskProfile,
    LatencyProfile,
    list_disk_profiles,
    list_profiles,
    load_disk_profile,
    load_profile,
)

__all__ = [
    "DiskProfile",
    "LatencyProfile",
    "list_disk_profiles",
    "list_profiles",
    "load_disk_profile",
    "load_profile",
    "modelled_io_seconds",
    "naive_pattern",
    "per_key_ceiling",
    "strategy_ceilings",
]
