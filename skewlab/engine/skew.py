"""How uneven a load is over subtasks or partitions, and what parallelism can do about it.

* :func:`skew_score` -- Flink's data-skew score (FLIP-418, web UI since 1.20; Flink's
  ``DoubleAccumulator.DoubleDataSkew``): ``min(average absolute deviation / mean * 100, 100)``,
  0 for an idle operator.
* :func:`subtask_loads` -- the records each of ``P`` subtasks receives given the records per key
  group, Flink's way (subtask *i* owns key groups ``ceil(i M / P) .. floor(((i+1) M - 1) / P)``).
* :func:`parallelism_sweep` -- for each ``P``: the busiest subtask over the mean, split into what
  the key groups' uneven *ranges* alone would give (``P`` not dividing ``M``: some subtasks own
  one group more -- at ``P`` just over ``M / 2`` half own two and half one, a built-in 2x,
  FLINK-21695) and what the keys add; and the floor no ``P`` beats: the hottest key's records.

Example::

    >>> round(skew_score([4, 5, 5, 5, 5]))      # FLIP-418's worked example: 7 %
    7
    >>> subtask_loads(np.array([5, 1, 1, 1]), 2).tolist()
    [6, 2]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from skewlab.state.key_groups import check_parallelism

__all__ = [
    "load_summary",
    "parallelism_sweep",
    "range_unevenness",
    "skew_score",
    "smallest_parallelism",
    "subtask_loads",
]


def skew_score(loads: Iterable[float]) -> float:
    """Flink's data-skew score of per-subtask loads, in percent (FLIP-418).

    Computed as Flink's ``DoubleDataSkew`` computes it; its own tests: ``[23, 3, 10]`` -> 61 %,
    ``[300, 0, 0]`` -> 100 %. (The FLIP's page rounds two of its worked examples differently
    from this formula: ``[1, 1, 1, 5, 10]`` gives 86.7 %, not 88 %; ``[1, 1, 5, 5, 5]`` 56.5 %,
    not 54 %.)

    Example::

        >>> round(skew_score([23, 3, 10])), skew_score([300, 0, 0]), skew_score([0, 0])
        (61, 100.0, 0.0)
    """
    values = np.asarray(list(loads), dtype=float)
    if values.size == 0:
        return 0.0
    mean = values.mean()
    if mean == 0:
        return 0.0
    return float(min(np.abs(mean - values).mean() / mean * 100.0, 100.0))


def load_summary(loads: Sequence[float]) -> dict[str, float]:
    """The busiest over the mean, the busiest's share of all records and the skew score.

    Example::

        >>> load_summary([6, 2])
        {'max_over_mean': 1.5, 'busiest_share': 0.75, 'skew_score': 50.0}
    """
    values = np.asarray(loads, dtype=float)
    total = values.sum()
    mean = total / values.size if values.size else 0.0
    return {
        "max_over_mean": float(values.max() / mean) if mean else 0.0,
        "busiest_share": float(values.max() / total) if total else 0.0,
        "skew_score": skew_score(values),
    }


def _range_starts(max_parallelism: int, parallelism: int) -> np.ndarray:
    """The first key group of each subtask (Flink's ``computeKeyGroupRangeForOperatorIndex``),
    with ``max_parallelism`` appended as the end."""
    i = np.arange(parallelism + 1, dtype=np.int64)
    starts = (i * max_parallelism + parallelism - 1) // parallelism
    starts[-1] = max_parallelism
    return starts


def subtask_loads(key_group_loads: np.ndarray, parallelism: int) -> np.ndarray:
    """Records per subtask at ``parallelism`` from records per key group (``M`` entries).

    Example::

        >>> subtask_loads(np.arange(128), 4).tolist()
        [496, 1520, 2544, 3568]
    """
    loads = np.asarray(key_group_loads, dtype=np.int64)
    check_parallelism(parallelism, loads.size)
    cumulative = np.concatenate([[0], np.cumsum(loads)])
    starts = _range_starts(loads.size, parallelism)
    return cumulative[starts[1:]] - cumulative[starts[:-1]]


def range_unevenness(max_parallelism: int, parallelism: int) -> float:
    """The busiest subtask over the mean if every key group carried the same load: the most key
    groups a subtask owns over ``M / P``. 1.0 when ``P`` divides ``M``.

    Example::

        >>> range_unevenness(128, 4), range_unevenness(128, 65)
        (1.0, 1.015625)
        >>> round(range_unevenness(128, 96), 3)      # half the subtasks own two groups
        1.5
    """
    check_parallelism(parallelism, max_parallelism)
    most = -(-max_parallelism // parallelism)
    return most * parallelism / max_parallelism


def parallelism_sweep(
    key_group_loads: np.ndarray, parallelisms: Iterable[int], hottest_key_records: int
) -> list[dict[str, float]]:
    """For each parallelism: the busiest subtask over the mean, its share of the records, the
    skew score, the key-group ranges' own unevenness, the floor the hottest key sets on the
    busiest subtask over the mean (``P x`` its share), and the speedup over one subtask that
    the busiest subtask allows (``total / busiest``; never above ``1 / share`` of the hottest).

    Example::

        >>> rows = parallelism_sweep(np.array([5, 1, 1, 1]), [1, 2, 4], hottest_key_records=5)
        >>> [(r["parallelism"], r["max_over_mean"], r["speedup"]) for r in rows]
        [(1, 1.0, 1.0), (2, 1.5, 1.3333333333333333), (4, 2.5, 1.6)]
    """
    loads = np.asarray(key_group_loads, dtype=np.int64)
    total = int(loads.sum())
    share = hottest_key_records / total if total else 0.0
    rows = []
    for p in sorted(set(parallelisms)):
        per_subtask = subtask_loads(loads, p)
        summary = load_summary(per_subtask)
        busiest = int(per_subtask.max())
        rows.append(
            {
                "parallelism": p,
                **summary,
                "busiest_records": busiest,
                "range_unevenness": range_unevenness(loads.size, p),
                "hot_key_floor": share * p,
                "speedup": total / busiest if busiest else 0.0,
            }
        )
    return rows


def smallest_parallelism(
    sweep: list[dict[str, float]],
    hottest_share: float,
    target_rate: float,
    subtask_rate: float,
) -> dict[str, float | int | None]:
    """The smallest swept parallelism whose busiest subtask keeps up with ``target_rate``
    records/s into the job, when one subtask handles ``subtask_rate`` records/s: the busiest
    subtask receives ``target_rate x`` its share. ``parallelism`` is ``None`` when none does;
    ``hottest_key_rate`` (the hottest key alone, on one subtask whatever P) says whether any
    parallelism could.

    Example::

        >>> rows = parallelism_sweep(np.array([5, 1, 1, 1]), [1, 2, 4], hottest_key_records=5)
        >>> smallest_parallelism(rows, 5 / 8, target_rate=800, subtask_rate=600)["parallelism"]
        2
        >>> smallest_parallelism(rows, 5 / 8, target_rate=1_000, subtask_rate=600)
        {'parallelism': None, 'busiest_rate': 625.0, 'hottest_key_rate': 625.0}
    """
    met = next(
        (r for r in sweep if target_rate * r["busiest_share"] <= subtask_rate),
        None,
    )
    best = min(sweep, key=lambda r: r["busiest_share"])
    chosen = met or best
    return {
        "parallelism": met["parallelism"] if met else None,
        "busiest_rate": target_rate * chosen["busiest_share"],
        "hottest_key_rate": target_rate * hottest_share,
    }
