"""Peak memory of a subtask: the growth of its Python worker's resident set.

Example::

    >>> peak = PeakMemory(); buffer = b"x" * (64 << 20); peak.sample()
    >>> peak.peak >= 32 << 20
    True
"""

from __future__ import annotations

import os


def rss_bytes() -> int:
    """Resident set size of this process (the Python worker running a subtask)."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux
        import psutil

        return int(psutil.Process().memory_info().rss)


class PeakMemory:
    """Peak growth of the worker's RSS over a baseline, sampled when asked (e.g. per batch)."""

    __slots__ = ("baseline", "peak")

    def __init__(self) -> None:
        self.baseline = rss_bytes()
        self.peak = 0

    def sample(self) -> None:
        grown = rss_bytes() - self.baseline
        if grown > self.peak:
            self.peak = grown
