"""Heavy hitters at the source, checked against exact counts on a real local Spark: no hot key
missed, every returned key's true count inside its bounds, the error bound as DataSketches
states it, null keys counted and not sketched."""

from __future__ import annotations

import pytest

from skewlab.engine.heavy_hitters import source_heavy_hitters
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec, generate_views


@pytest.fixture(scope="module")
def keyed(spark):
    from pyspark.sql import functions as F

    views = generate_views(spark, ViewSpec(20_000, 2_000, 3_000, distribution="zipf", skew=1.1,
                                           seed=4))  # fmt: skip
    # every 50th record without a key; four source partitions
    return views.select(
        F.when(F.col("seq") % 50 == 0, F.lit(None)).otherwise(F.col("tweet_id")).alias("key")
    ).repartition(4)


@pytest.fixture(scope="module")
def exact(keyed):
    rows = keyed.where("key IS NOT NULL").groupBy("key").count().collect()
    return {r["key"]: r["count"] for r in rows}


@pytest.mark.parametrize(("threshold", "lg"), [(0.01, 10), (0.05, 7), (0.002, 11)])
def test_no_hot_key_is_missed_and_every_count_is_inside_its_bounds(keyed, exact, threshold, lg):
    hh = source_heavy_hitters(keyed, "key", threshold=threshold, lg_max_map_size=lg)
    total = sum(exact.values())
    assert hh.records == 20_000 and hh.null_keys == 20_000 - total and hh.sources == 4
    hot = {k for k, n in exact.items() if n > threshold * total}
    assert hot and hot <= set(hh.hot_keys())
    for item in hh.items:
        assert item.lower <= exact[item.key] <= item.upper
        assert item.upper - item.lower <= hh.error_bound + 1
    # a returned key is at worst a false positive by the error bound
    assert all(exact[k] > threshold * total - hh.error_bound - 1 for k in hh.hot_keys())
    assert hh.hot_keys()[0] == max(exact, key=exact.get)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"threshold": 0}, "hot threshold (a share of the records) must be"),
        ({"threshold": 1.0}, "must be below 1"),
        ({"lg_max_map_size": 2}, "sketch size (log2 of its map's entries) must be"),
        ({"threshold": 0.02, "lg_max_map_size": 6}, "use a sketch size of at least 8"),
        ({"key": "nope"}, "no key column 'nope'"),
    ],
)
def test_bad_settings_are_refused_before_any_work(keyed, options, says):
    kwargs = {"key": "key", **options}
    with pytest.raises(SkewlabInputError, match=says.replace("(", r"\(").replace(")", r"\)")):
        source_heavy_hitters(keyed, **kwargs)
