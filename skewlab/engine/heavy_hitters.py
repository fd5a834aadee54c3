"""Heavy hitters found at the source: one frequent-items sketch per source subtask, merged.

Each source subtask (a Spark partition of the input, as a Flink source subtask reads its split)
feeds its records' keys into an Apache DataSketches ``frequent_strings_sketch`` (the
Misra-Gries family: a map of at most ``0.75 * 2**lg_max_map_size`` counters); the sketches are
serialized, sent to the driver and merged. The merged sketch answers, for any key, an estimate
with a lower and an upper bound that hold for the true count; its error is at most
``epsilon * N`` for ``N`` records (``epsilon = 3.5 / 2**lg_max_map_size``, DataSketches' a
priori bound), whatever the order and however the records were split over the sources.

A key is **hot** when its share of the records may reach ``threshold``: every key whose upper
bound exceeds ``threshold * N`` is returned (DataSketches' ``NO_FALSE_NEGATIVES``), so no hot
key is missed, and a key returned may be a false positive by at most the error bound. That
holds only for a sketch whose error bound is below the threshold (DataSketches raises a
threshold under its error to the error): a smaller sketch is refused, naming the smallest size
that will do (:func:`smallest_sketch_size`). Keys are
sketched as strings (an int key as its decimal digits). Records with a null key are counted, not
sketched.

This is the detector issue 27's key splitting and hot-key buffer are to be fed by (a sketch
per sender, merged); the skew doctor's exact counts check it in the tests.

Example::

    >>> hh = source_heavy_hitters(views, "tweet_id", threshold=0.01)       # doctest: +SKIP
    >>> hh.items[0].key, hh.error_bound                                   # doctest: +SKIP
    ('tweet-0', 341.8)
"""

from __future__ import annotations

from dataclasses import dataclass

from skewlab.errors import SkewlabInputError
from skewlab.validation import check_number, check_whole

__all__ = [
    "DEFAULT_LG_MAX_MAP_SIZE",
    "HeavyHitter",
    "HeavyHitters",
    "check_sketch_size",
    "smallest_sketch_size",
    "source_heavy_hitters",
]

#: Default sketch size: a map of up to 2**10 entries (epsilon 0.0034: 0.34 % of the records).
DEFAULT_LG_MAX_MAP_SIZE = 10
#: DataSketches' smallest map (2**3 = 8 entries).
MIN_LG_MAX_MAP_SIZE = 3


@dataclass(frozen=True)
class HeavyHitter:
    """One hot key: the merged sketch's ``estimate`` and the ``lower`` and ``upper`` bounds
    that hold for its true count."""

    key: str
    estimate: int
    lower: int
    upper: int


@dataclass(frozen=True)
class HeavyHitters:
    """The hot keys of a stream (hottest first), the sketch's settings and its error bound.

    Example::

        >>> HeavyHitters([], records=0, null_keys=0, sources=1, threshold=0.1,
        ...              lg_max_map_size=10).error_bound
        0.0
    """

    items: list[HeavyHitter]
    records: int
    null_keys: int
    sources: int
    threshold: float
    lg_max_map_size: int
    method: str = "Apache DataSketches frequent_strings_sketch per source subtask, merged"

    @property
    def epsilon(self) -> float:
        """The sketch's error as a share of the records (``3.5 / 2**lg_max_map_size``)."""
        from datasketches import frequent_strings_sketch

        return frequent_strings_sketch.get_epsilon_for_lg_size(self.lg_max_map_size)

    @property
    def error_bound(self) -> float:
        """At most this many records between any key's estimate and its true count."""
        return self.epsilon * (self.records - self.null_keys)

    def hot_keys(self) -> list[str]:
        """The hot keys' names, hottest first."""
        return [h.key for h in self.items]


def check_sketch_size(lg_max_map_size: int) -> int:
    """``lg_max_map_size`` checked: a sketch of at least 8 entries (``>= 3``), at most 2**26.

    Example::

        >>> check_sketch_size(2)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: sketch size (log2 of its map's entries) must be a whole number from 3 to 26, got 2
    """  # noqa: E501
    return check_whole("sketch size (log2 of its map's entries)", lg_max_map_size, 3, 26)


def smallest_sketch_size(threshold: float) -> int:
    """The smallest ``lg_max_map_size`` whose error bound (``3.5 / 2**lg`` of the records) is
    below ``threshold``: below it a key above the threshold could go unreported.

    Example::

        >>> smallest_sketch_size(0.01), smallest_sketch_size(0.05)
        (9, 7)
    """
    from datasketches import frequent_strings_sketch

    lg = MIN_LG_MAX_MAP_SIZE
    while frequent_strings_sketch.get_epsilon_for_lg_size(lg) >= threshold:
        lg += 1
    return lg


def source_heavy_hitters(
    df,
    key: str,
    *,
    threshold: float = 0.01,
    lg_max_map_size: int = DEFAULT_LG_MAX_MAP_SIZE,
) -> HeavyHitters:
    """The keys of ``df`` whose share of the records may reach ``threshold`` (in (0, 1)), from
    one sketch per partition of ``df`` merged on the driver; see the module doc.

    Example::

        >>> source_heavy_hitters(views, "tweet_id", threshold=0.05).hot_keys()  # doctest: +SKIP
        ['tweet-0', 'tweet-1']
    """
    import pandas as pd
    from datasketches import frequent_items_error_type, frequent_strings_sketch
    from pyspark.sql import functions as F

    if key not in df.columns:
        raise SkewlabInputError(
            f"no key column {key!r}: the input's columns are {', '.join(df.columns) or 'none'}"
        )
    check_number("hot threshold (a share of the records)", threshold, above=0)
    if not threshold < 1:
        raise SkewlabInputError(
            f"hot threshold (a share of the records) must be below 1, got {threshold!r}"
        )
    lg = check_sketch_size(lg_max_map_size)
    smallest = smallest_sketch_size(threshold)
    if lg < smallest:
        raise SkewlabInputError(
            f"a sketch of 2**{lg} entries errs by up to "
            f"{frequent_strings_sketch.get_epsilon_for_lg_size(lg):.2%} of the records, not "
            f"below the hot threshold {threshold:.2%}: it could miss a hot key; use a sketch "
            f"size of at least {smallest}"
        )

    def sketch(batches):
        one = frequent_strings_sketch(lg)
        nulls = 0
        for batch in batches:
            keys = batch[key]
            nulls += int(keys.isna().sum())
            for value in keys.dropna().astype(str).tolist():
                one.update(value, 1)
        yield pd.DataFrame({"sketch": [one.serialize()], "nulls": [nulls]})

    keyed = df.select(F.col(key).cast("string").alias(key))
    rows = keyed.mapInPandas(sketch, "sketch binary, nulls long").collect()
    merged = frequent_strings_sketch(lg)
    for row in rows:
        merged.merge(frequent_strings_sketch.deserialize(bytes(row["sketch"])))
    nulls = sum(int(row["nulls"]) for row in rows)
    total = int(merged.total_weight)
    items = [
        HeavyHitter(k, int(estimate), int(lower), int(upper))
        for k, estimate, lower, upper in merged.get_frequent_items(
            frequent_items_error_type.NO_FALSE_NEGATIVES, int(threshold * total)
        )
    ]
    return HeavyHitters(
        items=sorted(items, key=lambda h: (-h.estimate, h.key)),
        records=total + nulls,
        null_keys=nulls,
        sources=len(rows),
        threshold=threshold,
        lg_max_map_size=lg,
    )
