"""The doctor's Spark: the embedded one, or a remote Spark reached through Spark Connect.

Users of a managed Spark reach their data through a Spark Connect server (``sc://HOST:PORT``).
The doctor runs there as on the embedded session (records, ``--follow``, ``--state``); the
rest of the lab needs Spark's classic API and refuses a Connect URL in one line
(:data:`CONNECT_SCOPE`). The URL is ``--remote`` (``remote=``), then Spark Connect's own
variable ``$SPARK_REMOTE``, then skewlab's master (``$SKEWLAB_SPARK_MASTER``, an ``sc://`` URL
too), else the embedded ``local[*]``; a server is checked to answer before any work. The session
itself is made where every skewlab session is (:func:`skewlab.engine.session.get_spark`).

Example::

    >>> spark = doctor_spark("sc://spark.example.com:15002")              # doctest: +SKIP
    >>> is_connect(spark)                                                 # doctest: +SKIP
    True
"""

from __future__ import annotations

import os

from skewlab.engine.connect_scope import CONNECT_SCOPE, REMOTE_ENV, refuse_connect
from skewlab.errors import SkewlabInputError

__all__ = [
    "CONNECT_SCOPE",
    "REMOTE_ENV",
    "check_connect_server",
    "doctor_master",
    "doctor_spark",
    "is_connect",
    "refuse_connect",
]

#: The port a Spark Connect server listens on unless told otherwise.
DEFAULT_PORT = 15002


def doctor_master(remote: str | None = None) -> str:
    """The master the doctor runs on: ``remote``, else ``$SPARK_REMOTE``, else skewlab's own
    (:func:`~skewlab.engine.session.resolve_master`); ``remote`` must be an ``sc://`` URL.

    Example::

        >>> doctor_master("sc://spark.example.com:15002")
        'sc://spark.example.com:15002'
        >>> doctor_master("local[2]")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: --remote 'local[2]' is not a Spark Connect URL: use sc://HOST:PORT
    """  # noqa: E501
    from skewlab.engine.session import resolve_master

    if remote is not None and not remote.strip().startswith("sc://"):
        raise SkewlabInputError(
            f"--remote {remote!r} is not a Spark Connect URL: use sc://HOST:PORT"
        )
    return resolve_master(remote or os.environ.get(REMOTE_ENV) or None)


def check_connect_server(url: str, timeout: float = 5.0) -> None:
    """That a Spark Connect server answers at ``url`` (``sc://HOST:PORT/;params``): a TCP
    connection within ``timeout`` seconds, or a one-line error -- pyspark's client would
    otherwise retry for minutes before saying so.

    Example::

        >>> check_connect_server("sc://localhost:1")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: no Spark Connect server answers at sc://localhost:1 (...
    """
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.split(";", 1)[0])
        host, port = parts.hostname, parts.port or DEFAULT_PORT
    except ValueError as bad:
        raise SkewlabInputError(
            f"{url!r} is not a Spark Connect URL ({bad}): use sc://HOST:PORT"
        ) from None
    if not host:
        raise SkewlabInputError(f"{url!r} names no host: use sc://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as failed:
        raise SkewlabInputError(
            f"no Spark Connect server answers at sc://{host}:{port} ({failed.strerror or failed}):"
            " start one (pyspark's sbin/start-connect-server.sh) or check the URL"
        ) from None


def doctor_spark(remote: str | None = None, *, driver_config: dict[str, str] | None = None):
    """The doctor's session: through the Spark Connect server :func:`doctor_master` names
    (checked to answer first), else skewlab's embedded or cluster session. ``driver_config``:
    settings a driver reads once, at its start (``spark.ui.*``), for a session this call
    starts (pyspark's ``PYSPARK_SUBMIT_ARGS``); a running driver or a server keeps its own.

    Example::

        >>> doctor_spark().range(3).count()                                  # doctest: +SKIP
        3
    """
    from pyspark import SparkContext

    from skewlab.engine.session import get_spark

    url = doctor_master(remote)
    if url.startswith("sc://"):
        check_connect_server(url)
        return get_spark(url)
    if driver_config and SparkContext._active_spark_context is None:  # noqa: SLF001
        given = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
        confs = " ".join(f"--conf {key}={value}" for key, value in driver_config.items())
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"{confs} {given}"
    return get_spark(url)


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (a client of a server elsewhere).

    Example::

        >>> is_connect(doctor_spark())                                       # doctest: +SKIP
        False
    """
    return type(spark).__module__.startswith("pyspark.sql.connect")
