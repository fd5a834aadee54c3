"""skewlab: a laboratory for hot keys (data skew) in stateful stream aggregation, on Spark.

The public API, in the words of the field::

    >>> import skewlab
    >>> spark = skewlab.get_spark()                                   # doctest: +SKIP
    >>> spec = skewlab.ViewSpec(n_views=100_000, n_users=25_000, n_tweets=20, seed=1)
    >>> views = skewlab.generate_views(spark, spec)                   # doctest: +SKIP
    >>> oracle = skewlab.spark_reference_aggregate(views)             # doctest: +SKIP
    >>> skewlab.result_digest(oracle)                                 # doctest: +SKIP

Importing skewlab does not start Spark; :func:`get_spark` does.
"""

from skewlab.errors import SkewlabError, SkewlabInputError
from skewlab.spark import get_spark
from skewlab.stats import (
    StatsState,
    TweetStats,
    plus,
    reference_aggregate,
    result_digest,
    spark_reference_aggregate,
    to_stats,
)
from skewlab.views import ViewSpec, generate_views, key_load, load_views, save_views

__version__ = "0.1.0"

__all__ = [
    "SkewlabError",
    "SkewlabInputError",
    "StatsState",
    "TweetStats",
    "ViewSpec",
    "generate_views",
    "get_spark",
    "key_load",
    "load_views",
    "plus",
    "reference_aggregate",
    "result_digest",
    "save_views",
    "spark_reference_aggregate",
    "to_stats",
]
