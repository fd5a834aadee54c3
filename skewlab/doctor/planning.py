"""Planning parallelism as an operator does: Flink spreads its max parallelism ``M`` key groups
over ``P`` subtasks in contiguous ranges (``KeyGroupRangeAssignment``), so a ``P`` that divides
``M`` gives every subtask the same number of key groups, and any other ``P`` gives ``M mod P``
subtasks one key group more than the rest (FLINK-21695: Flink's default ``M = 128`` at
``P = 6`` gives two subtasks 22 key groups and four 21). ``M`` is fixed once state exists (a
savepoint's key groups are ``M``), so it is chosen for the range of ``P`` a job may ever run
at; Flink's autoscaler likewise aligns ``P`` to the divisors of ``M``.

Example::

    >>> key_groups_per_subtask(6, 128)
    {'most': 22, 'fewest': 21, 'subtasks_with_most': 2}
    >>> even_parallelisms(128, up_to=20)
    [1, 2, 4, 8, 16]
    >>> [c["max_parallelism"] for c in max_parallelism_choices((2, 12))][:3]
    [720, 840, 1260]
"""

from __future__ import annotations

from typing import Any

from skewlab.state.key_groups import UPPER_BOUND_MAX_PARALLELISM, compute_default_max_parallelism
from skewlab.validation import check_whole

__all__ = [
    "HIGHLY_COMPOSITE",
    "even_parallelisms",
    "key_groups_per_subtask",
    "max_parallelism_choices",
]

#: Max parallelisms with many divisors (highly composite numbers, from 720 up to Flink's bound):
#: the values an operator picks when the range of P is not known in advance.
HIGHLY_COMPOSITE = (720, 840, 1260, 1680, 2520, 5040, 7560, 10080, 15120, 20160, 25200, 27720)


def key_groups_per_subtask(parallelism: int, max_parallelism: int) -> dict[str, int]:
    """How Flink's contiguous key-group ranges fall at ``parallelism``: the most and fewest key
    groups a subtask gets, and how many subtasks get the most (``M mod P``; all when even)."""
    p = check_whole("parallelism", parallelism, 1)
    m = check_whole("max parallelism", max_parallelism, p, UPPER_BOUND_MAX_PARALLELISM)
    fewest, extra = divmod(m, p)
    return {
        "most": fewest + (1 if extra else 0),
        "fewest": fewest,
        "subtasks_with_most": extra or p,
    }


def even_parallelisms(max_parallelism: int, *, up_to: int | None = None) -> list[int]:
    """The parallelisms (up to ``up_to``, default ``M``) at which every subtask gets the same
    number of key groups: the divisors of ``M``."""
    m = check_whole("max parallelism", max_parallelism, 1, UPPER_BOUND_MAX_PARALLELISM)
    top = m if up_to is None else min(m, check_whole("up to", up_to, 1))
    return [p for p in range(1, top + 1) if m % p == 0]


def max_parallelism_choices(planned: tuple[int, int]) -> list[dict[str, Any]]:
    """For a planned range of P (``low``, ``high``, inclusive): Flink's default max parallelism
    for ``high`` and the :data:`HIGHLY_COMPOSITE` values not below it (up to the three smallest),
    each with the P of the range it divides evenly and those it does not; the best first (most
    P even, then the smallest M -- fewer key groups to keep).

    Example::

        >>> best = max_parallelism_choices((2, 16))[0]
        >>> best["max_parallelism"], best["uneven"]
        (720, [7, 11, 13, 14])
    """
    low, high = planned
    low = check_whole("planned parallelism (low)", low, 1)
    high = check_whole("planned parallelism (high)", high, low, UPPER_BOUND_MAX_PARALLELISM)
    default = compute_default_max_parallelism(high)
    candidates = [default] + [m for m in HIGHLY_COMPOSITE if m >= high][:3]
    choices = []
    for m in dict.fromkeys(candidates):
        ps = range(low, high + 1)
        choices.append({
            "max_parallelism": m,
            "flink_default": m == default,
            "even": [p for p in ps if m % p == 0],
            "uneven": [p for p in ps if m % p],
        })  # fmt: skip
    return sorted(choices, key=lambda c: (len(c["uneven"]), c["max_parallelism"]))
