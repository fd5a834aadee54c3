"""``salted``: key salting, as seed 000 describes it.

``keyBy (tweet, salt) -> reduce`` (a running partial per record, Flink-style) ``-> unsalt ->
keyBy tweet -> reduce``. The salt of a view is ``pmod(xxhash64(view_id), salt_buckets)``. The
HLL union survives the running partials (idempotent); a counter would not -- see
:mod:`skewlab.experiments.salting`. Salting spreads a hot key over ``salt_buckets`` subtasks
but gives up per-key order: the final reduce sees a key's records in whatever order the
exchange delivers.

Spark runs the two stages one after the other (a shuffle is a stage barrier), so a record's
latency from the first operator to the final emission includes the rest of stage one: salted
latency here is a batch artefact, far above what a streaming exchange would add.

Example::

    >>> Salted(salt_buckets=4).parameters()
    {'backend': 'rocksdb', 'salt_buckets': 4}
    >>> run_strategy(views, Salted(salt_buckets=4))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.job import collect_stage, run_stage
from skewlab.operators.running_count import SALT, SALTED_KEY
from skewlab.strategies.keyed import fold, split_key_stages, upstream
from skewlab.strategies.parameters import KeyedStateParameters, parameter
from skewlab.validation import check_whole

__all__ = ["Salted", "with_salt"]


def with_salt(df, key_col: str, id_col: str, salt_buckets: int):
    """``df`` with ``_salt = pmod(xxhash64(id_col), salt_buckets)`` and
    ``_salted_key = key || '-' || salt`` (null when the key is null, so it is rejected).

    The salt is a function of the record's id (a rerun salts every record the same way).
    """
    from pyspark.sql import functions as F

    salt = F.expr(f"pmod(xxhash64({id_col}), {int(salt_buckets)})").cast("long")
    salted = F.when(F.col(key_col).isNull(), F.lit(None).cast("string")).otherwise(
        F.concat_ws("-", F.col(key_col), salt.cast("string"))
    )
    return df.withColumn(SALT, salt).withColumn(SALTED_KEY, salted)


@dataclass(frozen=True, kw_only=True)
class Salted(KeyedStateParameters):
    """Two keyed stages: running partials per (tweet, salt), then their union per tweet; both
    reduces on ``backend``."""

    name: ClassVar[str] = "salted"
    resumable: ClassVar[bool] = True
    periodic_checkpoints: ClassVar[bool] = True
    modelled_as: ClassVar[str | None] = None

    salt_buckets: int = parameter(4, "sub-keys per key")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole("salt_buckets (--salt-buckets)", self.salt_buckets, 1)

    def run(self, spark, views, job):
        views = with_salt(upstream(views, self), "tweet_id", "view_id", self.salt_buckets)
        partials, final = split_key_stages(
            self.name, SALTED_KEY, self.state_backend(), self.precision
        )
        stage1 = run_stage(views, spark, partials, job)
        out = collect_stage(run_stage(stage1, spark, final, job), StatsSerializer)
        return fold(self, job, out), out.results
