"""What runs over Spark Connect: the skew doctor only. Everything else in the lab -- its
commands and its notebooks -- needs Spark's classic API and refuses a Connect URL in one line,
before any work (:data:`CONNECT_SCOPE`).

Example::

    >>> connect_url("sc://spark.example.com:15002")  # --master first, then the two variables
    'sc://spark.example.com:15002'
"""

from __future__ import annotations

import os

from skewlab.errors import SkewlabInputError

__all__ = ["CONNECT_SCOPE", "REMOTE_ENV", "connect_url", "refuse_connect"]

#: Spark Connect's own variable for a server's URL, as pyspark reads it.
REMOTE_ENV = "SPARK_REMOTE"
#: What runs over Spark Connect: the rest of the lab needs Spark's classic API (the
#: SparkContext for parallelism and retries, the JVM's log settings, its state stores).
CONNECT_SCOPE = (
    "only the skew doctor runs over Spark Connect (records, --follow, --state); the lab's "
    "experiments, benchmarks and notebooks need Spark's classic API (the SparkContext): run "
    f"them on an embedded or cluster master, with {REMOTE_ENV} unset"
)


def connect_url(master: str | None = None) -> str | None:
    """The Spark Connect URL a run is asked to use, if any: ``master``, ``$SPARK_REMOTE`` or
    ``$SKEWLAB_SPARK_MASTER``, the first that is an ``sc://`` URL.

    Example::

        >>> connect_url(" sc://spark.example.com:15002 ")     # as given, stripped
        'sc://spark.example.com:15002'
    """
    from skewlab.engine.session import MASTER_ENV

    for url in (master, os.environ.get(REMOTE_ENV), os.environ.get(MASTER_ENV)):
        if url and url.strip().startswith("sc://"):
            return url.strip()
    return None


def refuse_connect(command: str, master: str | None = None) -> None:
    """A one-line refusal (:data:`CONNECT_SCOPE`) for a command outside the doctor asked to
    run over Spark Connect: ``master`` (its ``--master``), ``$SPARK_REMOTE`` or
    ``$SKEWLAB_SPARK_MASTER`` an ``sc://`` URL.

    Example::

        >>> refuse_connect("run", "sc://spark.example.com:15002")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: skewlab run cannot run over Spark Connect (sc://...): only the skew doctor ...
    """  # noqa: E501
    url = connect_url(master)
    if url is not None:
        raise SkewlabInputError(f"skewlab {command} cannot run over Spark Connect ({url}): "
                                f"{CONNECT_SCOPE}")  # fmt: skip
