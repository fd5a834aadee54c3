"""Which machine a benchmark ran on: recorded in every result file, so that two results are
held against each other only when one machine measured both.

A quick run's ratio against a full run's (``skewlab bench compare``) says something about the
profiles only if the same machine, in the same boot, measured both: two 2-core machines of the
same kind differ by 10 % or more in what a Spark job costs. :func:`this_machine` records the
processor, its logical cores, the memory, the host name and the kernel's boot id (new at every
boot: machines of one kind share the rest, host name included, so a reboot counts as another
machine, which errs on the side of caution); :func:`same_machine` compares two records.

Example::

    >>> m = this_machine()
    >>> sorted(m) == ["boot_id", "cores", "cpu", "host", "memory_gib"] and m["cores"] >= 1
    True
    >>> same_machine(m, dict(m)), same_machine(m, {**m, "boot_id": "another"}), same_machine(m, None)
    (True, False, None)
"""  # noqa: E501

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

__all__ = ["describe_machine", "same_machine", "this_machine"]

_CPUINFO = Path("/proc/cpuinfo")
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _cpu_model() -> str:
    for line in (_read(_CPUINFO) or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def _memory_gib() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def this_machine() -> dict[str, Any]:
    """The machine this process runs on: ``cpu``, ``cores``, ``memory_gib``, ``host`` and
    ``boot_id`` (``None`` where the system does not say)."""
    boot = _read(_BOOT_ID)
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "host": platform.node() or None,
        "boot_id": boot.strip() if boot else None,
    }


def same_machine(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool | None:
    """Whether two records name the same machine in the same boot; ``None`` when either is
    missing (a result file written before results recorded their machine) or has no boot id."""
    if not a or not b:
        return None
    if any(a.get(k) != b.get(k) for k in ("cpu", "cores", "memory_gib")):
        return False
    if not a.get("boot_id") or not b.get("boot_id"):
        return None
    return a["boot_id"] == b["boot_id"] and a.get("host") == b.get("host")


def describe_machine(machine: dict[str, Any] | None) -> str:
    """One line for a table's foot.

    Example::

        >>> describe_machine({"cpu": "AMD EPYC", "cores": 2, "memory_gib": 23.5, "host": "vm",
        ...                   "boot_id": "7f6dab2a-86bd-481e-ade4-49fd57575eff"})
        'AMD EPYC, 2 cores, 23.5 GiB, host vm, boot 7f6dab2a'
        >>> describe_machine(None)
        'not recorded (the file predates machine records)'
    """
    if not machine:
        return "not recorded (the file predates machine records)"
    boot = (machine.get("boot_id") or "unknown")[:8]
    return (
        f"{machine.get('cpu')}, {machine.get('cores')} cores, {machine.get('memory_gib')} GiB, "
        f"host {machine.get('host')}, boot {boot}"
    )
