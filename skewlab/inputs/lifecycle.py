"""Account lifecycle events, the salting lesson's order example: per user ``created``, then
``deleted``.

Example::

    >>> apply_event(apply_event(None, CREATED), DELETED)
    'deleted'
"""

from __future__ import annotations

from skewlab.validation import check_whole

__all__ = ["ACTIVE", "CREATED", "DELETED", "apply_event", "lifecycle_events"]

CREATED, DELETED = "created", "deleted"
#: The status of an account whose latest applied event is ``created``.
ACTIVE = "active"


def lifecycle_events(spark, n_users: int, *, seed: int = 0):
    """Per user a ``created`` event then a ``deleted`` event, generated in Spark.

    Columns: ``seq`` (arrival order), ``event_id`` (``event-<seed>-<seq>``), ``user_id``
    (``user-<n>``) and ``event``. User ``n``'s events are ``seq`` ``2n`` and ``2n + 1``: the
    account is created and deleted right after (the seed's example). ``seed`` only changes the
    event ids, so a different seed gives a different salting of the same story.

    Example::

        >>> lifecycle_events(get_spark(), 2).orderBy("seq").toPandas()   # doctest: +SKIP
           seq   event_id user_id    event
        0    0  event-0-0  user-0  created
        1    1  event-0-1  user-0  deleted
        2    2  event-0-2  user-1  created
        3    3  event-0-3  user-1  deleted
    """
    from pyspark.sql import functions as F

    check_whole("n_users", n_users, 1)
    seq = F.col("id")
    return spark.range(0, 2 * n_users).select(
        seq.alias("seq"),
        F.concat(F.lit(f"event-{int(seed)}-"), seq.cast("string")).alias("event_id"),
        F.concat(F.lit("user-"), F.floor(seq / 2).cast("string")).alias("user_id"),
        F.when(seq % 2 == 0, F.lit(CREATED)).otherwise(F.lit(DELETED)).alias("event"),
    )


def apply_event(status: str | None, event: str) -> str:
    """An account's status after ``event``, applied as it arrives (last writer wins).

    Example::

        >>> apply_event(apply_event(None, "created"), "deleted")
        'deleted'
        >>> apply_event(apply_event(None, "deleted"), "created")   # out of order: resurrected
        'active'
    """
    return ACTIVE if event == CREATED else DELETED
