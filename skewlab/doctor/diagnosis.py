"""The skew doctor: a user's own records -- which keys are hot, where their load lands in Flink,
Spark and Kafka, and what parallelism can and cannot do about it.

Everything is computed by Spark from the records, and only small results reach the driver: the
top keys, one count per key group (at most 32,768), one per partition, and the counts of the
:data:`ZIPF_FIT_RANKS` hottest keys for the Zipf fit. So the driver's memory is bounded whatever
the input's size; Spark's aggregation spills to disk where the keys do not fit in memory.

1. **Hot keys**: the top keys by share, **exact** (Spark's ``groupBy(key).count()``: every
   key's count is computed, so no sketch error applies), the exact number of distinct keys, the
   null keys counted and shown as a share (never dropped), a Zipf exponent fitted by least
   squares on log(count) over log(rank) of the hottest keys with its R^2, and with a time column
   the hottest key's peak records per window.
2. **Where the load lands**: records per key group and per subtask under Flink's
   ``KeyGroupRangeAssignment``, per partition under Spark's ``repartition(n, key)`` (computed by
   Spark's own hash expression) and under Kafka's default partitioner
   (:mod:`skewlab.engine.partitioners`); for each, the busiest over the mean and FLIP-418's skew
   score (:mod:`skewlab.engine.skew`). Null keys: Flink refuses them (a ``NullPointerException``
   in ``keyBy``), Kafka sends a record without a key to its sticky partition, Spark hashes null
   to ``pmod(42, n)``: they are in Spark's loads and outside Flink's and Kafka's.
3. **What parallelism can and cannot do**: for each ``P`` up to the max parallelism ``M``, the
   busiest subtask over the mean, beside the part the key-group ranges alone give and the floor
   the hottest key sets (no ``P`` speeds the job up beyond ``1 / share`` of the hottest key).

Example::

    >>> report = diagnose(views, key="tweet_id", parallelism=(4,))      # doctest: +SKIP
    >>> report.hot_keys.top[0].share                                   # doctest: +SKIP
    0.18
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skewlab.doctor.options import DEFAULT_PARALLELISM, ZIPF_FIT_RANKS, DoctorOptions
from skewlab.doctor.remedies import BASELINE, naive_subtask_rate, predict_remedies
from skewlab.doctor.remedy_costs import load_cost_profile
from skewlab.doctor.schema import Diagnosis
from skewlab.doctor.subtask_replay import (
    DEFAULT_BUFFER_MAX_COUNT,
    replay_subtasks,
    salted_stage_one_loads,
)
from skewlab.engine import skew
from skewlab.engine.heavy_hitters import (
    DEFAULT_LG_MAX_MAP_SIZE,
    smallest_sketch_size,
    source_heavy_hitters,
)
from skewlab.engine.partitioners import (
    check_key_type,
    kafka_partitions,
    spark_partition_expression,
)
from skewlab.engine.routing import KEY_GROUP, with_key_groups
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import size_settings
from skewlab.inputs.views import (
    PARAMS_FILE,
    ViewSpec,
    default_views_path,
    generate_views,
    save_views,
)
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.state.key_groups import check_parallelism, compute_default_max_parallelism

__all__ = [
    "CHAPTER",
    "DEFAULT_PARALLELISM",
    "FORMATS",
    "DoctorOptions",
    "ZIPF_FIT_RANKS",
    "diagnose",
    "fit_zipf",
    "read_records",
    "sample_records",
    "simulate_cache",
    "sweep_parallelisms",
]

#: This chapter's id in the registry (its sample records' sizes).
CHAPTER = "skew_doctor"
#: The input formats the doctor reads, and the file endings that name them.
FORMATS = {"parquet": (".parquet",), "csv": (".csv",), "jsonl": (".jsonl", ".json", ".ndjson")}
#: Every P is swept up to this max parallelism; above it, powers of two and the user's P.
FULL_SWEEP_UP_TO = 512
_TIME_TYPES = ("timestamp", "timestamp_ntz", "date", "int", "bigint", "double", "float")


def _format_of(path: str, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise SkewlabInputError(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
        return fmt
    local = Path(path)
    names = [local.name]
    if local.is_dir():
        names = [p.name for p in local.iterdir() if not p.name.startswith(("_", "."))]
    for name, endings in FORMATS.items():
        if names and all(n.lower().endswith(endings) for n in names):
            return name
    raise SkewlabInputError(
        f"cannot tell the format of {path!r} from its name: give --format ({', '.join(FORMATS)})"
    )


def read_records(spark, path: str, fmt: str | None = None, null_value: str | None = None):
    """The records at ``path`` as a Spark DataFrame: ``fmt`` (``parquet``, ``csv`` with a header
    row, ``jsonl``: one JSON object per line), or the format its file endings name.
    ``null_value`` is the text a CSV file writes for a missing value (e.g. ``NA``): such keys
    are then null keys, counted apart, not one hot key.

    Example::

        >>> read_records(spark, "data/views.parquet").columns          # doctest: +SKIP
        ['user_id', 'tweet_id', 'seq']
    """
    is_uri = "://" in path
    if not is_uri and not Path(path).exists():
        raise SkewlabInputError(f"no such file or folder: {path!r}")
    fmt = _format_of(path, fmt)
    if null_value is not None and fmt != "csv":
        raise SkewlabInputError(
            f"a null value marker ({null_value!r}) applies to CSV only; {fmt} has its own nulls"
        )
    try:
        if fmt == "parquet":
            return spark.read.parquet(path)
        if fmt == "csv":
            reader = spark.read.option("header", True).option("inferSchema", True)
            if null_value is not None:
                reader = reader.option("nullValue", null_value)
            return reader.csv(path)
        return spark.read.json(path)
    except Exception as error:  # noqa: BLE001 -- Spark's reader errors, said in one line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SkewlabInputError(f"cannot read {path!r} as {fmt}: {first}") from None


def sweep_parallelisms(max_parallelism: int, asked: tuple[int, ...] = ()) -> list[int]:
    """The parallelisms swept: every one up to ``max_parallelism`` when that is at most
    :data:`FULL_SWEEP_UP_TO`, else the powers of two, their 1.5x and the ones asked for.

    Example::

        >>> sweep_parallelisms(4)
        [1, 2, 3, 4]
        >>> sweep_parallelisms(4096, (100,))[:8]
        [1, 2, 3, 4, 6, 8, 12, 16]
    """
    if max_parallelism <= FULL_SWEEP_UP_TO:
        return list(range(1, max_parallelism + 1))
    chosen = set(asked)
    p = 1
    while p <= max_parallelism:
        chosen.update({p, min(max_parallelism, p + p // 2)})
        p *= 2
    return sorted(c for c in chosen if 1 <= c <= max_parallelism)


def fit_zipf(counts: np.ndarray) -> dict[str, float] | None:
    """The Zipf exponent ``s`` of counts sorted hottest first (``count ~ rank^-s``), fitted by
    least squares on log(count) over log(rank), with the fit's R^2; ``None`` for fewer than three
    keys.

    Example::

        >>> fit = fit_zipf(np.array([1000 / r**1.1 for r in range(1, 101)]))
        >>> round(fit["exponent"], 3), round(fit["r_squared"], 3)
        (1.1, 1.0)
    """
    counts = np.asarray(counts, dtype=float)
    counts = counts[counts > 0]
    if counts.size < 3:
        return None
    x = np.log(np.arange(1, counts.size + 1))
    y = np.log(counts)
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    spread = ((y - y.mean()) ** 2).sum()
    r_squared = 1.0 - (residual**2).sum() / spread if spread else 1.0
    return {"exponent": float(-slope), "r_squared": float(r_squared), "ranks": int(counts.size)}


def _check(df, key: str, options: DoctorOptions) -> dict:
    """What depends on the input's schema, checked before any Spark job (the options were
    checked when made): the key and time columns, the key's type for each engine, and Flink's
    max parallelism (its default from the largest P)."""
    columns = dict(df.dtypes)
    if key not in columns:
        raise SkewlabInputError(
            f"no key column {key!r}: the input's columns are {', '.join(columns) or 'none'}"
        )
    check_key_type(columns[key], options.engines)
    time = options.time
    if time is not None:
        if time not in columns:
            raise SkewlabInputError(
                f"no time column {time!r}: the input's columns are {', '.join(columns)}"
            )
        if columns[time] not in _TIME_TYPES:
            raise SkewlabInputError(
                f"time column {time!r} is {columns[time]}: use a timestamp, a date, or a number "
                "of seconds since the epoch"
            )
    max_parallelism = options.max_parallelism
    if max_parallelism is None:
        max_parallelism = compute_default_max_parallelism(options.largest_parallelism)
    for p in options.parallelism:
        check_parallelism(p, max_parallelism)
    partitions = options.partitions or options.largest_parallelism
    return {"key_type": columns[key], "max_parallelism": max_parallelism, "partitions": partitions}


def _loads(per_key, column_expr, size: int) -> np.ndarray:
    """Records per bucket (``column_expr`` gives each key's bucket, ``0 .. size - 1``)."""
    from pyspark.sql import functions as F

    rows = per_key.groupBy(column_expr.alias("bucket")).agg(F.sum("count").alias("n")).collect()
    loads = np.zeros(size, dtype=np.int64)
    for row in rows:
        loads[row["bucket"]] = row["n"]
    return loads


def _engine(loads: np.ndarray, unit: str, **extra) -> dict[str, Any]:
    return {"unit": unit, **extra, "loads": loads.tolist(), **skew.load_summary(loads)}


def diagnose(
    df,
    key: str,
    options: DoctorOptions | None = None,
    *,
    progress: bool = False,
    **option_values: Any,
) -> Diagnosis:
    """Diagnose the keys of ``df`` (a Spark DataFrame): see the module doc. ``options`` is a
    :class:`~skewlab.doctor.options.DoctorOptions` (its defaults where not given), or give its
    fields as keyword arguments (``parallelism=(4,)``). Returns a
    :class:`~skewlab.doctor.schema.Diagnosis` (``input``, ``hot_keys``, ``zipf``, ``peak``
    with ``time``, ``engines``, ``parallelism``, ``cache``, ``remedies``; ``to_json()`` for a
    file). Bad parameters raise :class:`~skewlab.errors.SkewlabInputError` before any
    Spark job; an input without records raises it after the first.

    ``parallelism`` are the Flink parallelisms to show subtask by subtask; ``max_parallelism``
    defaults to Flink's default for the largest of them; ``partitions`` (Spark's and Kafka's)
    defaults to the largest parallelism. ``cache_entries`` adds, for each size, the hit ratio an
    LRU cache of that many entries per subtask reaches on these records at the largest
    parallelism (:func:`simulate_cache`). ``target_rate`` (records per second into the job)
    adds the smallest Flink parallelism whose busiest subtask keeps up, if any does, given
    ``subtask_rate`` (what one subtask of your job handles) or else what one naive RocksDB
    subtask handles on these keys by the cost profile.

    ``remedies`` (on by default) prices every remedy at the largest parallelism from the cost
    profile ``costs`` (a ``skewlab bench remedy_costs`` result file, or the dict
    :func:`~skewlab.doctor.remedy_costs.load_cost_profile` returns; default: the newest
    measured on this machine, else the shipped reference) under ``disk_profile`` (a disk
    profile's name or file, e.g. ``ebs-article``; default none: state on this machine), with
    ``salt_buckets`` salts (default: the parallelism) and sorted input eligible only when the
    input is ``bounded`` (:mod:`skewlab.doctor.remedies`).

    ``sketch_threshold`` (a share of the records, in (0, 1)) also finds the hot keys the way a
    source would, with a frequent-items sketch per partition, merged
    (:func:`~skewlab.engine.heavy_hitters.source_heavy_hitters`), and sets its answer and error
    bound beside the exact counts, with whether it found every key the exact counts put above
    the threshold.

    Example::

        >>> import skewlab
        >>> report = skewlab.diagnose(views, key="tweet_id", parallelism=(4,))  # doctest: +SKIP
        >>> report.engines["flink"].subtasks[0].skew_score               # doctest: +SKIP
        41.3
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from tqdm.auto import tqdm

    if options is None:
        options = DoctorOptions(**option_values)
    elif option_values:
        options = dataclasses.replace(options, **option_values)
    checked = _check(df, key, options)
    time, engines, entries = options.time, options.engines, options.cache_entries
    costs, disk_profile = options.costs, options.disk_profile
    target_rate, subtask_rate = options.target_rate, options.subtask_rate
    sketch_threshold, window_seconds = options.sketch_threshold, options.window_seconds
    largest, remedies = options.largest_parallelism, options.remedies
    profile, disk, salts, unpriced = None, None, None, None
    if remedies and "flink" not in engines:
        remedies = False
        unpriced = "remedies are priced on Flink's routing: include the flink engine"
    if remedies:
        try:
            profile = costs if isinstance(costs, dict) else load_cost_profile(costs)
        except SkewlabInputError as error:
            if costs is not None:
                raise  # a profile asked for by name must be there
            unpriced = str(error)  # none measured here and none shipped: say so, go on
        disk = load_disk_profile(disk_profile) if disk_profile is not None else None
        salts = options.salt_buckets or largest
    lg = None
    if sketch_threshold is not None:
        lg = max(DEFAULT_LG_MAX_MAP_SIZE, smallest_sketch_size(sketch_threshold))
    if target_rate is not None and subtask_rate is None and profile is None:
        raise SkewlabInputError(
            "a target rate needs what one subtask handles: give a subtask rate, or price it "
            "from a cost profile (remedies on; 'skewlab bench remedy_costs' measures one)"
        )
    spark_type, max_p = checked["key_type"], checked["max_parallelism"]
    bar = tqdm(total=3 + len(engines), desc="skew doctor", disable=not progress)

    # one count per key, computed once and kept (memory, spilling to disk) for what follows
    per_key = df.groupBy(key).count().persist(StorageLevel.MEMORY_AND_DISK)
    try:
        bar.set_postfix_str("counting keys")
        totals = per_key.agg(
            F.sum("count").alias("records"),
            F.count(F.col(key)).alias("distinct"),
            F.sum(F.when(F.col(key).isNull(), F.col("count")).otherwise(0)).alias("nulls"),
        ).first()
        records = int(totals["records"] or 0)
        if records == 0:
            raise SkewlabInputError("the input has no records: nothing to diagnose")
        nulls, distinct = int(totals["nulls"] or 0), int(totals["distinct"])
        bar.update()

        bar.set_postfix_str("hot keys")
        present = per_key.where(F.col(key).isNotNull())
        hottest = present.orderBy(F.desc("count"), F.asc(key)).limit(ZIPF_FIT_RANKS).collect()
        counts = np.array([r["count"] for r in hottest], dtype=np.int64)
        top_rows = [
            {"rank": i + 1, "key": _plain(r[key]), "records": int(r["count"]),
             "share": r["count"] / records}
            for i, r in enumerate(hottest[: options.top])
        ]  # fmt: skip
        bar.update()

        peak = None
        if time is not None and top_rows:
            bar.set_postfix_str("hottest key's peak")
            peak = _peak(df, key, time, hottest[0][key], window_seconds)
        bar.update()

        engines_out: dict[str, Any] = {}
        kg = None  # records per key group (Flink's), for the parallelism sweep
        hot_records = int(counts[0]) if counts.size else 0
        n = checked["partitions"]
        for engine in engines:
            bar.set_postfix_str(engine)
            if engine == "flink":
                routed = with_key_groups(present, key, max_p, 1)  # as a job routes them
                kg = _loads(routed, F.col(KEY_GROUP), max_p)
                engines_out["flink"] = _flink(kg, options.parallelism, max_p, nulls)
            elif engine == "spark":
                expr = F.expr(spark_partition_expression(key, n))
                engines_out["spark"] = _engine(
                    _loads(per_key, expr, n), "partition", partitions=n, null_keys_included=True
                )
            else:
                parts = _keyed_udf(
                    present, key, partial(kafka_partitions, spark_type=spark_type, partitions=n)
                )
                engines_out["kafka"] = _engine(
                    _loads(present, parts, n), "partition", partitions=n, null_keys_included=False
                )
            bar.update()
    finally:
        per_key.unpersist()
        bar.close()

    sweep = None
    if kg is not None:
        ps = sweep_parallelisms(max_p, options.parallelism)
        sweep = skew.parallelism_sweep(kg, ps, hot_records)
    sizes = entries or ((profile["cache_entries"],) if profile else ())
    max_count = profile["buffer"]["max_count"] if profile else DEFAULT_BUFFER_MAX_COUNT
    replays = {
        n: replay_subtasks(
            df, key, parallelism=largest, max_parallelism=max_p, time=time, cache_entries=n,
            buffer_max_count=max_count,
        )
        for n in sizes
    }  # fmt: skip
    caches = [_cache_view(replays[n]) for n in entries]
    priced = None
    if profile is not None:
        loads = salted_stage_one_loads(
            df, key, salt_buckets=salts, parallelism=largest, max_parallelism=max_p
        )
        priced = predict_remedies(
            replays[sizes[0]],
            loads,
            profile,
            disk=disk,
            bounded=options.bounded,
            salt_buckets=salts,
        )
    share = hot_records / (records - nulls) if records > nulls else 0.0
    sketched = None
    if lg is not None:
        found = source_heavy_hitters(df, key, threshold=sketch_threshold, lg_max_map_size=lg)
        above = [r for r in hottest if r["count"] > sketch_threshold * (records - nulls)]
        sketched = {
            "method": found.method,
            "threshold": sketch_threshold,
            "lg_max_map_size": lg,
            "epsilon": found.epsilon,
            "error_bound": found.error_bound,
            "sources": found.sources,
            "hot": [vars(h) for h in found.items],
            "exact_hot_keys": len(above),
            "finds_every_exact_hot_key": {str(r[key]) for r in above} <= set(found.hot_keys()),
        }
    target = None
    if target_rate is not None and sweep:
        rate_source = "given"
        if subtask_rate is None:
            subtask_rate = naive_subtask_rate(replays[sizes[0]], profile)
            rate_source = f"{BASELINE} on these keys, priced from the cost profile (measured)"
        target = {
            "target_rate": target_rate,
            "subtask_rate": subtask_rate,
            "subtask_rate_source": rate_source,
            **skew.smallest_parallelism(sweep, share, target_rate, subtask_rate),
        }
    return Diagnosis.from_json(
        {
            "input": {
                "key": key,
                "key_type": spark_type,
                "records": records,
                "null_keys": nulls,
                "null_share": nulls / records,
                "distinct_keys": distinct,
                "distinct_method": "exact",
            },
            "hot_keys": {
                "method": "exact: Spark's groupBy(key).count(), every key counted, no sketch error",
                "top": top_rows,
                "hottest_share": share,
                "max_speedup": 1 / share if share else None,
                "sketch": sketched,
            },
            "zipf": fit_zipf(counts),
            "peak": peak,
            "cache": caches,
            "remedies": priced,
            "remedies_unpriced": unpriced,
            "engines": engines_out,
            "parallelism": {
                "max_parallelism": max_p,
                "asked": list(options.parallelism),
                "sweep": sweep,
                "target": target,
            },
        }
    )


def _plain(value: Any) -> Any:
    """A key as JSON can hold it."""
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def _keyed_udf(df, key: str, place):
    """A column with ``place(keys)`` of each row's key, computed in the Python workers."""
    from pyspark.sql import functions as F

    def buckets(keys: pd.Series) -> pd.Series:
        values = keys.tolist() if keys.dtype == object else keys.to_numpy()
        return pd.Series(np.asarray(place(values), dtype=np.int32))

    return F.pandas_udf(buckets, "int")(F.col(key))


def _flink(kg: np.ndarray, parallelism: tuple[int, ...], max_p: int, nulls: int) -> dict:
    """Flink's loads: per key group, and per subtask at each asked parallelism."""
    return {
        "unit": "subtask",
        "max_parallelism": max_p,
        "key_group_loads": kg.tolist(),
        "key_groups": skew.load_summary(kg),
        "null_keys_refused": nulls,
        "subtasks": [_subtasks(kg, p) for p in parallelism],
    }


def _subtasks(kg: np.ndarray, parallelism: int) -> dict[str, Any]:
    """Records per subtask at ``parallelism``, and their summary."""
    loads = skew.subtask_loads(kg, parallelism)
    return {"parallelism": parallelism, "loads": loads.tolist(), **skew.load_summary(loads)}


def _peak(df, key: str, time: str, hottest, window_seconds: float) -> dict[str, Any]:
    """The hottest key's most records in one window of ``window_seconds``."""
    from pyspark.sql import functions as F

    stamp = F.col(time).cast("timestamp")
    windows = (
        df.where(F.col(key) == F.lit(hottest))
        .groupBy(F.window(stamp, f"{window_seconds} seconds"))
        .count()
    )
    row = windows.agg(F.max("count").alias("peak"), F.count(F.lit(1)).alias("windows")).first()
    most = int(row["peak"] or 0)
    return {
        "key": _plain(hottest),
        "window_seconds": window_seconds,
        "windows": int(row["windows"]),
        "peak_records": most,
        "peak_records_per_second": most / window_seconds,
    }


def sample_records(spark, size: str = "quick", directory: str | Path | None = None) -> str:
    """A path to records to diagnose when you have none at hand: a view set of this chapter's
    size (Zipf views, ``tweet_id`` the key, ``event_time`` the time), written once as Parquet
    (:func:`skewlab.inputs.views.save_views`, under ``data/views`` unless ``directory``).

    Example::

        >>> path = sample_records(spark, "tiny")                          # doctest: +SKIP
        >>> diagnose(read_records(spark, path), "tweet_id")["input"]["records"]  # doctest: +SKIP
        5000
    """
    spec = ViewSpec(**size_settings(CHAPTER, size))
    out = Path(directory) / default_views_path(spec).name if directory else default_views_path(spec)
    if (out / PARAMS_FILE).is_file():
        return str(out)  # written before: the same parameters, the same views
    return str(save_views(generate_views(spark, spec), spec, out))


def simulate_cache(
    df,
    key: str,
    cache_entries: int,
    *,
    parallelism: int,
    max_parallelism: int | None = None,
    time: str | None = None,
) -> dict[str, Any]:
    """The hit ratio an LRU cache of ``cache_entries`` per subtask (FLIP-325's, the ``cached``
    backend's own :class:`~skewlab.state.value_state.WriteBackLru`) would reach on these
    records: each subtask's records (Flink's key groups at ``parallelism``) replayed in order --
    by ``time`` where given, then in the input's own order -- through one ``get`` and one
    ``put`` each, as a keyed count does (:func:`~skewlab.doctor.subtask_replay.
    replay_subtasks`). Runs in Spark: nothing per record reaches the driver. Records with a null
    key are left out (Flink refuses them).

    Example::

        >>> simulate_cache(views, "tweet_id", 500, parallelism=4)["hit_ratio"]  # doctest: +SKIP
        0.71
    """
    options = DoctorOptions(  # checks the cache size and the parallelism
        time=time, engines=("flink",), parallelism=(parallelism,),
        max_parallelism=max_parallelism, cache_entries=(cache_entries,), remedies=False,
    )  # fmt: skip
    checked = _check(df, key, options)
    replay = replay_subtasks(
        df, key, parallelism=parallelism, max_parallelism=checked["max_parallelism"], time=time,
        cache_entries=cache_entries,
    )  # fmt: skip
    return _cache_view(replay)


def _cache_view(replay: dict[str, Any]) -> dict[str, Any]:
    """A replay's LRU hits and misses, overall and per subtask."""
    return {
        **replay["cache"],
        "parallelism": replay["parallelism"],
        "max_parallelism": replay["max_parallelism"],
        "order": replay["order"],
        "per_subtask": [
            {"subtask": s["subtask"], "hits": s["hits"], "misses": s["misses"],
             "hit_ratio": s["hits"] / (s["hits"] + s["misses"]) if s["hits"] + s["misses"]
             else None}
            for s in replay["subtasks"]
        ],
    }  # fmt: skip
