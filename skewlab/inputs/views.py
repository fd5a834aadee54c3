"""Synthetic views: seed 000's data model ``View(view_id, user_id, tweet_id)`` plus an event time.

Views are generated *in Spark* from ``spark.range``: every column is a pure function of the
row's sequence number and the seed (via Spark's ``xxhash64``), so a view set is identical for a
given seed whatever the partitioning, and scales to tens of millions of rows on a cluster.

Columns (the *views schema*):

=============  ===========  ================================================================
``seq``        long         arrival order (a source offset): 0, 1, 2, ...
``view_id``    string       ``view-<seq>``
``user_id``    string       ``user-<n>``, uniform over ``n_users``
``tweet_id``   string       ``tweet-<n>``, uniform over ``n_tweets`` or Zipf(``skew``) with
                            ``tweet-0`` the hottest
``event_time`` timestamp    ``2026-01-01T00:00:00Z + seq / events_per_second``
=============  ===========  ================================================================

Example::

    >>> from skewlab.engine.session import get_spark
    >>> from skewlab.inputs.views import ViewSpec, generate_views
    >>> spec = ViewSpec(n_views=1000, n_users=100, n_tweets=20, distribution="zipf", skew=1.2)
    >>> df = generate_views(get_spark(), spec)
    >>> df.select("tweet_id").distinct().count() <= 20
    True
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from skewlab import paths
from skewlab.errors import SkewlabInputError
from skewlab.validation import check_choice, check_number, check_whole, check_writable_dir

DISTRIBUTIONS = ("uniform", "zipf")
PARAMS_FILE = "_skewlab_views.json"
EPOCH = "2026-01-01 00:00:00"

#: name -> Spark SQL type name, as ``DataFrame.dtypes`` reports it
VIEWS_SCHEMA: dict[str, str] = {
    "seq": "bigint",
    "view_id": "string",
    "user_id": "string",
    "tweet_id": "string",
    "event_time": "timestamp",
}
#: columns every strategy needs (``seq`` and ``event_time`` are optional on loaded data)
REQUIRED_COLUMNS: dict[str, str] = {k: VIEWS_SCHEMA[k] for k in ("view_id", "user_id", "tweet_id")}

_UNIT = 1 << 53  # uniform doubles in [0, 1) from 53 hash bits


@dataclass(frozen=True)
class ViewSpec:
    """Parameters of a synthetic view set (validated on construction).

    Example::

        >>> ViewSpec(n_views=100_000, n_users=25_000, n_tweets=20).name
        'v100000-u25000-t20-uniform-seed0'
    """

    n_views: int
    n_users: int
    n_tweets: int
    distribution: str = "uniform"
    skew: float = 1.0
    seed: int = 0
    events_per_second: float = 1000.0

    def __post_init__(self) -> None:
        check_whole("n_views (--views)", self.n_views, 0)
        check_whole("n_users (--users)", self.n_users, 1)
        check_whole("n_tweets (--tweets)", self.n_tweets, 1)
        check_choice("distribution (--distribution)", self.distribution, DISTRIBUTIONS)
        if self.distribution == "zipf":
            check_number("Zipf skew (--skew)", self.skew, above=0)
        check_number("events_per_second", self.events_per_second, above=0)

    @property
    def name(self) -> str:
        """A directory name that identifies the view set."""
        dist = self.distribution if self.distribution == "uniform" else f"zipf{self.skew:g}"
        return f"v{self.n_views}-u{self.n_users}-t{self.n_tweets}-{dist}-seed{self.seed}"


def zipf_cdf(n_tweets: int, skew: float) -> np.ndarray:
    """Cumulative probabilities of Zipf(``skew``) over ranks ``1..n_tweets`` (last entry 1.0).

    Example::

        >>> zipf_cdf(3, 1.0).round(3).tolist()
        [0.545, 0.818, 1.0]
    """
    weights = np.arange(1, n_tweets + 1, dtype=np.float64) ** -float(skew)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return cdf


def _unit_uniform(seed_col, salt: str):
    """A column of uniform doubles in [0, 1): 53 bits of xxhash64(seed, salt, seq)."""
    from pyspark.sql import functions as F

    bits = F.xxhash64(seed_col, F.lit(salt), F.col("seq")).bitwiseAND(F.lit(_UNIT - 1))
    return bits.cast("double") / F.lit(float(_UNIT))


def generate_views(spark, spec: ViewSpec, num_partitions: int | None = None):
    """A Spark DataFrame of ``spec.n_views`` views (see the module doc for the schema).

    Deterministic in ``spec``: the same seed gives the same rows for any ``num_partitions``.

    Example::

        >>> spec = ViewSpec(n_views=10, n_users=5, n_tweets=2, seed=7)
        >>> df = generate_views(get_spark(), spec)  # doctest: +SKIP
        >>> df.count()  # doctest: +SKIP
        10
    """
    from pyspark.sql import functions as F

    seed = F.lit(int(spec.seed)).cast("long")
    base = spark.range(0, spec.n_views, numPartitions=num_partitions).withColumnRenamed("id", "seq")
    user_n = F.floor(_unit_uniform(seed, "user") * spec.n_users).cast("long")
    u_tweet = _unit_uniform(seed, "tweet")
    if spec.distribution == "uniform":
        tweet_n = F.floor(u_tweet * spec.n_tweets).cast("long")
    else:
        tweet_n = _zipf_rank(u_tweet, zipf_cdf(spec.n_tweets, spec.skew))
    micros = F.round(F.col("seq") * F.lit(1_000_000.0 / spec.events_per_second)).cast("long")
    return base.select(
        F.col("seq"),
        F.concat(F.lit("view-"), F.col("seq").cast("string")).alias("view_id"),
        F.concat(F.lit("user-"), user_n.cast("string")).alias("user_id"),
        F.concat(F.lit("tweet-"), tweet_n.cast("string")).alias("tweet_id"),
        (F.timestamp_micros(micros + F.unix_micros(F.lit(EPOCH).cast("timestamp")))).alias(
            "event_time"
        ),
    )


def _zipf_rank(u_col, cdf: np.ndarray):
    """The Zipf rank (0-based) of a uniform column: a vectorised inverse-CDF search."""
    from pyspark.sql import functions as F

    table = cdf

    @F.pandas_udf("long")
    def inverse_cdf(u: pd.Series) -> pd.Series:
        ranks = np.searchsorted(table, u.to_numpy(), side="right")
        return pd.Series(np.minimum(ranks, len(table) - 1), dtype="int64")

    return inverse_cdf(u_col)


def save_views(df, spec: ViewSpec | None, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write views as Parquet to directory ``out``, parameters beside them (``PARAMS_FILE``).

    ``out`` must be new or empty, or, with ``overwrite=True``, a view set skewlab wrote (see
    :func:`check_output_dir`); anything else raises :class:`SkewlabInputError` before Spark
    writes, so no file skewlab did not write is ever deleted.

    Example::

        >>> save_views(df, spec, "data/views/demo")  # doctest: +SKIP
        >>> save_views(df, spec, "data/views/demo", overwrite=True)  # doctest: +SKIP
    """
    out = check_output_dir(out, overwrite=overwrite)
    # an existing directory is empty or, past the check, a view set that may be replaced
    df.write.mode("overwrite" if out.exists() else "errorifexists").parquet(str(out))
    if spec is not None:
        (out / PARAMS_FILE).write_text(json.dumps(asdict(spec), indent=2) + "\n")
    return out


def _written_by_skewlab(name: str) -> bool:
    """Whether a file name is one a saved view set holds (Spark's Parquet parts, its markers)."""
    return name == PARAMS_FILE or name.startswith(("part-", ".part-", "_SUCCESS", "._SUCCESS"))


def check_output_dir(out: str | Path, *, overwrite: bool = False) -> Path:
    """Refuse an output directory that holds anything skewlab may not replace (before any work).

    Allowed: a path that does not exist, an empty directory, or -- only with ``overwrite`` -- a
    view set skewlab wrote (its ``_skewlab_views.json`` beside Spark's Parquet parts and nothing
    else). Each refusal is one :class:`SkewlabInputError` line.

    Example::

        >>> check_output_dir("/tmp/skewlab-new-views")  # doctest: +SKIP
        PosixPath('/tmp/skewlab-new-views')
        >>> check_output_dir(Path.home())  # doctest: +SKIP
        SkewlabInputError: output directory '/root' is not empty and is not a view set ...
    """
    out = check_writable_dir("output path", out)  # not a file, nor under one
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if not names:
        return out
    if PARAMS_FILE not in names:
        raise SkewlabInputError(
            f"output directory {str(out)!r} is not empty and is not a view set skewlab wrote "
            f"(no {PARAMS_FILE}); choose a new or empty directory"
        )
    if not overwrite:
        raise SkewlabInputError(
            f"output directory {str(out)!r} already holds a view set; "
            "pass --overwrite to replace it"
        )
    foreign = [n for n in names if not _written_by_skewlab(n) or (out / n).is_dir()]
    if foreign:
        raise SkewlabInputError(
            f"output directory {str(out)!r} holds a view set and also {foreign[0]!r}, which "
            "skewlab did not write; move it away first"
        )
    return out


def default_views_path(spec: ViewSpec) -> Path:
    """``data/views/<spec.name>``."""
    return paths.views_dir() / spec.name


def read_spec(path: str | Path) -> ViewSpec | None:
    """The :class:`ViewSpec` recorded beside a saved view set, if any."""
    params = Path(path) / PARAMS_FILE
    if not params.exists():
        return None
    return ViewSpec(**json.loads(params.read_text()))


def check_views_schema(df, required: dict[str, str] = REQUIRED_COLUMNS) -> None:
    """Raise :class:`SkewlabInputError` naming every missing or mistyped column.

    Example::

        >>> check_views_schema(spark.createDataFrame([("a",)], "view_id string"))  # doctest: +SKIP
        SkewlabInputError: views are missing column(s) user_id (string), tweet_id (string)
    """
    types = dict(df.dtypes)
    missing = [f"{c} ({t})" for c, t in required.items() if c not in types]
    mistyped = [
        f"{c} is {types[c]}, expected {t}"
        for c, t in required.items()
        if c in types and types[c] != t
    ]
    optional = {k: v for k, v in VIEWS_SCHEMA.items() if k not in required}
    mistyped += [
        f"{c} is {types[c]}, expected {t}"
        for c, t in optional.items()
        if c in types and types[c] != t
    ]
    problems = []
    if missing:
        problems.append("missing column(s) " + ", ".join(missing))
    if mistyped:
        problems.append("mistyped column(s) " + "; ".join(mistyped))
    if problems:
        raise SkewlabInputError("views are " + " and ".join(problems))


def load_views(spark, path: str | Path):
    """Read a saved view set (Parquet) and check its schema.

    Example::

        >>> df = load_views(get_spark(), "data/views/v100-u10-t5-uniform-seed1")  # doctest: +SKIP
    """
    path = Path(path)
    if not path.exists():
        raise SkewlabInputError(
            f"no views at {str(path)!r} (generate them with 'skewlab generate')"
        )
    check_parquet_files(path)
    try:
        df = spark.read.parquet(str(path))
    except Exception as exc:  # Spark's AnalysisException: schema or footer not readable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SkewlabInputError(
            f"views at {str(path)!r} are not readable Parquet: {first}"
        ) from exc
    check_views_schema(df)
    check_view_keys(df)
    return df


#: the longest key state can hold: a key's bytes are stored after a 2-byte length
MAX_KEY_BYTES = 65_535


def check_view_keys(df, key: str = "tweet_id") -> None:
    """Raise :class:`SkewlabInputError` if any ``key`` is longer than :data:`MAX_KEY_BYTES`
    bytes in UTF-8 or is not valid UTF-8 (a lone surrogate, a stray byte): such a key would
    fail inside a Spark task after the work is done. One Spark job over the column; views
    from :func:`generate_views` need no check, :func:`load_views` runs it on the files it reads.

    Example::

        >>> check_view_keys(spark.createDataFrame([("x" * 70_000,)], "tweet_id string"))  # doctest: +SKIP
        SkewlabInputError: views: 1 tweet_id longer than 65,535 bytes (the longest 70,000) ...
    """  # noqa: E501
    from pyspark.sql import functions as F

    length = F.octet_length(F.col(key))
    valid = F.expr(f"is_valid_utf8(`{key}`)")
    row = df.agg(
        F.sum(F.when(length > MAX_KEY_BYTES, 1).otherwise(0)).alias("too_long"),
        F.max(length).alias("longest"),
        F.sum(F.when(~valid, 1).otherwise(0)).alias("invalid"),
        F.first(F.when(~valid, F.hex(F.col(key))), ignorenulls=True).alias("example"),
    ).first()
    problems = []
    if row["too_long"]:
        problems.append(
            f"{row['too_long']:,} {key} longer than {MAX_KEY_BYTES:,} bytes (the longest "
            f"{row['longest']:,}): state stores a key's bytes after a 2-byte length"
        )
    if row["invalid"]:
        problems.append(
            f"{row['invalid']:,} {key} not valid UTF-8 (e.g. bytes {row['example'][:32]}): "
            "keys must be text"
        )
    if problems:
        raise SkewlabInputError("views: " + "; ".join(problems))


def _data_files(path: Path) -> list[Path]:
    """The files Spark reads at ``path``: the file itself, or every file below the folder
    except those under a name starting with ``_`` or ``.`` (Spark's hidden files)."""
    if path.is_file():
        return [path]
    return sorted(
        f
        for f in path.rglob("*")
        if f.is_file()
        and not any(part.startswith(("_", ".")) for part in f.relative_to(path).parts)
    )


def check_parquet_files(path: str | Path) -> list[Path]:
    """Raise :class:`SkewlabInputError` unless ``path`` holds Parquet data Spark can read: at
    least one data file, and each begins and ends with Parquet's magic bytes ``PAR1``. Reads
    eight bytes per file; no Spark work. Returns the data files.

    Example::

        >>> check_parquet_files("/tmp")  # doctest: +SKIP
        SkewlabInputError: no Parquet files in '/tmp': a view set is a folder of Parquet files ...
    """
    path = Path(path)
    if (path / "_temporary").is_dir():  # Spark's committer moves parts out of it at job end
        raise SkewlabInputError(
            f"{str(path)!r} holds an unfinished write (its _temporary folder): the job that "
            "wrote it was stopped before it committed; write the view set again"
        )
    files = _data_files(path)
    if not files:
        raise SkewlabInputError(
            f"no Parquet files in {str(path)!r}: a view set is a folder of Parquet files "
            "(write one with 'skewlab generate')"
        )
    for f in files:
        with f.open("rb") as data:
            head = data.read(4)
            size = data.seek(0, 2)
            data.seek(max(size - 4, 0))
            tail = data.read(4)
        if size < 12 or head != b"PAR1" or tail != b"PAR1":
            raise SkewlabInputError(
                f"{str(f)!r} is not a Parquet file (it does not begin and end with PAR1): a "
                "view set is a folder of Parquet files only (files named _* or .* are ignored)"
            )
    return files


def key_load(df, key: str = "tweet_id"):
    """Records per key, hottest first, as pandas: ``key, records, rank, share``.

    Example::

        >>> key_load(generate_views(spark, ViewSpec(100, 10, 5))).columns.tolist()  # doctest: +SKIP
        ['tweet_id', 'records', 'rank', 'share']
    """
    from pyspark.sql import functions as F

    load = (
        df.groupBy(key)
        .agg(F.count(F.lit(1)).alias("records"))
        .orderBy(F.col("records").desc(), F.col(key))
        .toPandas()
    )
    load["rank"] = np.arange(1, len(load) + 1)
    total = load["records"].sum()
    load["share"] = load["records"] / total if total else 0.0
    return load


def load_summary(loads: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """How concentrated each per-key load is: one row per label.

    Columns: ``keys`` (distinct keys seen), ``hottest_share`` (share of records on the hottest
    key), ``top_1pct_share`` (share on the hottest 1% of keys), ``hottest_over_mean`` (how many
    times the mean key's load the hottest key carries).

    Example::

        >>> load = pd.DataFrame({"records": [90, 10], "share": [0.9, 0.1]})
        >>> float(load_summary({"x": load}).loc["x", "hottest_over_mean"])
        1.8
    """
    rows = {}
    for label, load in loads.items():
        n = len(load)
        top = max(1, int(np.ceil(n * 0.01)))
        rows[label] = {
            "keys": n,
            "hottest_share": float(load["share"].iloc[0]) if n else 0.0,
            "top_1pct_share": float(load["share"].iloc[:top].sum()) if n else 0.0,
            "hottest_over_mean": float(load["records"].iloc[0] / load["records"].mean())
            if n
            else 0.0,
        }
    return pd.DataFrame.from_dict(rows, orient="index")
