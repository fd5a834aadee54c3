"""A user's records replayed subtask by subtask, the way skewlab's keyed operators would see them:
what a remedy's cost depends on, counted on the records themselves rather than assumed.

Each subtask's records (Flink's key groups at a parallelism) are replayed in order -- by a time
column where given, then in the input's own order -- once, in Spark's Python workers; only a few
numbers per subtask reach the driver. Per subtask:

- ``records`` and ``keys`` (distinct);
- the **LRU cache**'s hits and misses with ``cache_entries`` entries (FLIP-325's write-back LRU,
  the ``cached`` backend's own :class:`~skewlab.state.value_state.WriteBackLru`: one ``get`` and
  one ``put`` per record, as a keyed reduce does);
- the **buffer**'s flushes and flushed keys with ``buffer_max_count``: the buffer flushes when it
  holds that many records (over all keys of the subtask) and once at the end of the input; each
  flush reads and writes each distinct key it holds once and emits one partial per key. The
  trigger interval's timer is left out: it fires first only when a subtask takes in fewer than
  ``max_count`` records per interval (under 10,000 records/s at skewlab's defaults);
- a **density histogram**: the subtask's records and keys by how many records their key has in
  the whole input (quarter-octave buckets: bucket ``b`` holds keys with ``2**(b/4) <= n <
  2**((b+1)/4)``). A keyed state's cost per record grows with its size (skewlab's HLL state is
  sparse for a key with a few records, dense for one with thousands), so a remedy's cost is priced
  per bucket (:mod:`skewlab.doctor.remedies`).

Records with a null key are left out (Flink refuses them). A subtask's Python worker holds one
count per key it owns (and the cache's entries, the buffer's keys): memory grows with the
distinct keys, not with the records.

Example::

    >>> replay = replay_subtasks(views, "tweet_id", parallelism=2, cache_entries=500)  # doctest: +SKIP
    >>> replay["subtasks"][0]["records"] + replay["subtasks"][1]["records"]  # doctest: +SKIP
    100000
"""  # noqa: E501

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from skewlab.errors import SkewlabInputError
from skewlab.state.key_groups import (
    UPPER_BOUND_MAX_PARALLELISM,
    check_parallelism,
    compute_default_max_parallelism,
)
from skewlab.strategies import Buffered
from skewlab.validation import check_whole

__all__ = [
    "BUCKETS_PER_OCTAVE",
    "DEFAULT_BUFFER_MAX_COUNT",
    "DEFAULT_CACHE_ENTRIES",
    "bucket_of",
    "bucket_records_per_key",
    "replay_by_slope",
    "replay_subtasks",
    "salted_stage_one_loads",
]

#: Density buckets per doubling of a key's record count.
BUCKETS_PER_OCTAVE = 4
#: The buffer's ``max_count``: the ``buffered`` strategy's own default (the seed's ``maxCount``).
DEFAULT_BUFFER_MAX_COUNT = Buffered().max_count
#: LRU entries per subtask when none are asked (FLIP-325's middle case).
DEFAULT_CACHE_ENTRIES = 500
#: The column that keeps the records' own order (the file's) through the shuffle.
_ARRIVAL = "_arrival"
_SCHEMA = (
    "subtask int, bucket int, records long, keys long, hits long, misses long, "
    "flush_keys long, flushes long"
)


def bucket_of(records_per_key: np.ndarray | int) -> np.ndarray:
    """The density bucket of keys with these record counts (``>= 1``).

    Example::

        >>> bucket_of(np.array([1, 2, 5, 5000])).tolist()
        [0, 4, 9, 49]
    """
    n = np.asarray(records_per_key, dtype=np.float64)
    return np.floor(np.log2(n) * BUCKETS_PER_OCTAVE + 1e-9).astype(np.int64)


def bucket_records_per_key(bucket: int) -> float:
    """A bucket's representative records per key: the geometric middle of its bounds.

    Example::

        >>> round(bucket_records_per_key(0), 3), round(bucket_records_per_key(49), 1)
        (1.091, 5311.9)
    """
    return 2.0 ** ((bucket + 0.5) / BUCKETS_PER_OCTAVE)


def replay_subtasks(
    df,
    key: str,
    *,
    parallelism: int,
    max_parallelism: int | None = None,
    time: str | None = None,
    cache_entries: int = DEFAULT_CACHE_ENTRIES,
    buffer_max_count: int = DEFAULT_BUFFER_MAX_COUNT,
) -> dict[str, Any]:
    """Replay ``df``'s records subtask by subtask (see the module doc); a JSON-ready dict with
    ``subtasks`` (one entry per subtask, in order) and the totals.

    Example::

        >>> r = replay_subtasks(views, "tweet_id", parallelism=2)           # doctest: +SKIP
        >>> r["cache"]["hit_ratio"], r["buffer"]["flush_keys"]              # doctest: +SKIP
        (0.05, 95187)
    """
    from pyspark.sql import functions as F

    from skewlab.engine.routing import KEY_GROUP, identity_partition, with_key_groups
    from skewlab.state.value_state import WriteBackLru

    columns = dict(df.dtypes)
    if key not in columns:
        raise SkewlabInputError(
            f"no key column {key!r}: the input's columns are {', '.join(columns) or 'none'}"
        )
    if time is not None and time not in columns:
        raise SkewlabInputError(
            f"no time column {time!r}: the input's columns are {', '.join(columns)}"
        )
    parallelism = check_whole("parallelism", parallelism, 1)
    max_p = (
        compute_default_max_parallelism(parallelism) if max_parallelism is None else max_parallelism
    )
    check_whole("max parallelism", max_p, 1, UPPER_BOUND_MAX_PARALLELISM)
    check_parallelism(parallelism, max_p)
    entries = check_whole("cache entries", cache_entries, 1)
    max_count = check_whole("buffer max count", buffer_max_count, 1)

    ordered = df.where(F.col(key).isNotNull()).withColumn(_ARRIVAL, F.monotonically_increasing_id())
    routed = with_key_groups(ordered, key, max_p, parallelism)
    parted = identity_partition(routed, df.sparkSession, parallelism)
    order = ([F.col(time).cast("timestamp")] if time else []) + [F.col(_ARRIVAL)]
    parted = parted.sortWithinPartitions(*order).select(KEY_GROUP, key)
    # a key's records all land on one subtask, so its count there is its count in the input

    def replay(batches):
        from pyspark import TaskContext

        lru = WriteBackLru(entries, lambda group, k: None, lambda group, k, v: None)
        counts: dict = {}
        window: set = set()
        held = flush_keys = flushes = 0
        for batch in batches:
            for group, k in zip(batch[KEY_GROUP].tolist(), batch[key].tolist(), strict=True):
                lru.put(group, k, (lru.get(group, k) or 0) + 1)
                counts[k] = counts.get(k, 0) + 1
                window.add(k)
                held += 1
                if held == max_count:
                    flush_keys, flushes = flush_keys + len(window), flushes + 1
                    window.clear()
                    held = 0
        if held:
            flush_keys, flushes = flush_keys + len(window), flushes + 1
        subtask = TaskContext.get().partitionId()
        n = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        buckets = bucket_of(n) if len(n) else np.zeros(0, dtype=np.int64)
        hist = pd.DataFrame({"bucket": buckets, "records": n, "keys": 1}).groupby("bucket").sum()
        rows = [(subtask, -1, int(n.sum()), len(n), lru.hits, lru.misses, flush_keys, flushes)]
        rows += [
            (subtask, int(b), int(r), int(k), 0, 0, 0, 0)
            for b, r, k in zip(hist.index, hist["records"], hist["keys"], strict=True)
        ]
        yield pd.DataFrame(
            rows, columns=["subtask", "bucket", "records", "keys", "hits", "misses",
                           "flush_keys", "flushes"]
        )  # fmt: skip

    rows = parted.mapInPandas(replay, _SCHEMA).collect()
    subtasks = [
        {"subtask": i, "records": 0, "keys": 0, "hits": 0, "misses": 0, "flush_keys": 0,
         "flushes": 0, "density": {}}
        for i in range(parallelism)
    ]  # fmt: skip
    for r in rows:
        entry = subtasks[r["subtask"]]
        if r["bucket"] < 0:
            entry.update(
                records=r["records"], keys=r["keys"], hits=r["hits"], misses=r["misses"],
                flush_keys=r["flush_keys"], flushes=r["flushes"],
            )  # fmt: skip
        else:
            entry["density"][int(r["bucket"])] = {"records": r["records"], "keys": r["keys"]}
    for entry in subtasks:
        entry["density"] = dict(sorted(entry["density"].items()))
    hits = sum(s["hits"] for s in subtasks)
    misses = sum(s["misses"] for s in subtasks)
    records = sum(s["records"] for s in subtasks)
    return {
        "parallelism": parallelism,
        "max_parallelism": max_p,
        "order": f"{time} order, then the input's own" if time else "the input's own order",
        "records": records,
        "keys": sum(s["keys"] for s in subtasks),
        "cache": {
            "cache_entries": entries,
            "hits": hits,
            "misses": misses,
            "hit_ratio": hits / (hits + misses) if hits + misses else None,
        },
        "buffer": {
            "max_count": max_count,
            "flushes": sum(s["flushes"] for s in subtasks),
            "flush_keys": sum(s["flush_keys"] for s in subtasks),
            "records_per_flushed_key": (
                records / sum(s["flush_keys"] for s in subtasks) if records else math.nan
            ),
        },
        "subtasks": subtasks,
    }


def replay_by_slope(
    small: dict[str, Any], large: dict[str, Any], n_small: int, n_large: int
) -> dict[str, Any]:
    """What a job time by slope prices: ``large``'s replay with each subtask's density histogram
    replaced by the larger input's records and keys per bucket less the smaller's (``small``,
    the same subtask), scaled as the slope is (``n_large / (n_large - n_small)``, the inputs'
    records). A key present at both sizes then costs the slope only the growth of its density;
    a key the larger input adds costs it whole -- as the measured slope, whose fixed part (a
    shared key's own cost included) cancels. Counts other than the histogram stay the larger
    run's, the one the slope is scaled to. A bucket the smaller run fills more holds negative
    records.

    Example::

        >>> def replay(hist):
        ...     return {"subtasks": [{"records": sum(r for r, _ in hist.values()),
        ...                           "density": {b: {"records": r, "keys": k}
        ...                                       for b, (r, k) in hist.items()}}]}
        >>> small = replay({4: (20, 10)})                 # 10 keys, 2 records each
        >>> large = replay({4: (20, 10), 8: (40, 10)})   # 10 more keys, 4 records each
        >>> replay_by_slope(small, large, 20, 60)["subtasks"][0]["density"]
        {4: {'records': 0.0, 'keys': 0.0}, 8: {'records': 60.0, 'keys': 15.0}}
    """
    if n_large <= n_small:
        raise SkewlabInputError(
            f"a slope needs more records in the larger input ({n_large:,}) than in the smaller "
            f"({n_small:,})"
        )
    scale = n_large / (n_large - n_small)
    subtasks = []
    for less, more in zip(small["subtasks"], large["subtasks"], strict=True):
        empty = {"records": 0, "keys": 0}
        density = {
            b: {
                field: scale * (more["density"].get(b, empty)[field]
                                - less["density"].get(b, empty)[field])
                for field in ("records", "keys")
            }
            for b in sorted(set(less["density"]) | set(more["density"]))
        }  # fmt: skip
        subtasks.append({**more, "density": density})
    return {**large, "subtasks": subtasks}


def salted_stage_one_loads(
    df, key: str, *, salt_buckets: int, parallelism: int, max_parallelism: int | None = None
) -> list[float]:
    """Records per subtask in salting's first stage: each key's records split evenly over its
    ``salt_buckets`` salted keys (``key-0`` .. ``key-{N-1}``, as
    :func:`skewlab.strategies.salted.with_salt` names them), each routed by Flink's key groups at
    ``parallelism``. Expected values: the real salt is a hash of each record's id, which these
    records may not have.

    Example::

        >>> salted_stage_one_loads(views, "tweet_id", salt_buckets=2, parallelism=2)  # doctest: +SKIP
        [50049.5, 49950.5]
    """  # noqa: E501
    from pyspark.sql import functions as F

    from skewlab.engine.routing import OPERATOR, with_key_groups

    n = check_whole("salt buckets", salt_buckets, 1)
    parallelism = check_whole("parallelism", parallelism, 1)
    max_p = (
        compute_default_max_parallelism(parallelism) if max_parallelism is None else max_parallelism
    )
    check_parallelism(parallelism, max_p)
    per_key = df.where(F.col(key).isNotNull()).groupBy(key).count()
    salts = df.sparkSession.range(n).withColumnRenamed("id", "_salt")
    salted = per_key.crossJoin(salts).select(
        F.concat_ws("-", F.col(key).cast("string"), F.col("_salt").cast("string")).alias("_k"),
        (F.col("count") / n).alias("_n"),
    )

    routed = with_key_groups(salted, "_k", max_p, parallelism)  # Flink's key groups, as a job
    loads = [0.0] * parallelism
    for row in routed.groupBy(OPERATOR).agg(F.sum("_n").alias("n")).collect():
        loads[row[OPERATOR]] += row["n"]
    return loads
