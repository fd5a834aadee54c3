"""The hot keys of a running stream, named live with their age: records read as files keep
arriving in a folder, and per window and over the run so far the keys that may hold at least a
``threshold`` share of the records.

A Spark Structured Streaming query reads the folder (the file source: Parquet, CSV with a
header, JSON lines -- the formats the doctor reads; or, for a demo with no files, Spark's
``rate`` source: :class:`RateSource`) with a processing-time trigger of one *window*: each
micro-batch is the window's new records. In each, every Spark partition feeds its
keys into an Apache DataSketches frequent-items sketch (:mod:`skewlab.engine.heavy_hitters`,
the doctor's sketch at the source); the sketches are merged on the driver into the window's and
into the run's, each with its error bound (every reported count's lower and upper bounds hold
for the true count; no key above the threshold is missed). Per hot key: its estimate and
bounds, its share, where its records land -- the Flink subtask (key groups), the Spark partition
(``pmod(hash(key), n)``, computed by Spark) and the Kafka partition (murmur2) -- and **how long
it has been hot**: the window it first crossed the threshold in its current run of windows and
how many consecutive windows since (Google Cloud Dataflow's ``hotKeyAge``, per key here).

The doctor's own memory stays bounded whatever the stream's length: two sketches of at most
``0.75 * 2**lg_max_map_size`` counters, the ages and places of the keys listed now, and the
last :data:`HISTORY` windows. With ``checkpoint_dir`` the query's checkpoint and the doctor's own
state (the run's sketch, the ages, each window) are kept there, written after each window and
keyed by its micro-batch id: a restarted follow resumes where it stopped and a micro-batch
Spark replays after a failure is not counted twice.

Through Spark Connect (a remote Spark) ``foreachBatch``'s function would run on the server, away
from this process: there each window is one ``availableNow`` run of the query started from here,
its sketches read back through a Parquet file sink in the checkpoint (:func:`_follow_in_runs`).

Example::

    >>> summary = follow("incoming/", "user_id", window_seconds=5, threshold=0.05,
    ...                  on_window=lambda w: print(w.to_text()))        # doctest: +SKIP
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from skewlab.doctor.spark_connect import is_connect
from skewlab.errors import SkewlabInputError
from skewlab.validation import check_number, check_whole

__all__ = [
    "FILE_STATUS_CACHE",
    "FOLLOW_SPARK_CONFIG",
    "HISTORY",
    "FileDrops",
    "FollowState",
    "FollowWindow",
    "HotKeyNow",
    "RateSource",
    "check_follow_checkpoint",
    "check_follow_inputs",
    "follow",
]

#: How many past windows a follow keeps (its memory bound).
HISTORY = 100
#: Spark's own memory of a long follow held to its last 20 jobs, stages, SQL executions and
#: query progress updates (Spark keeps 1,000 jobs and stages by default, UI or not, and a
#: follow runs at least one job a window): for a session made to follow (the CLI's), set when
#: its driver starts.
FOLLOW_SPARK_CONFIG = {
    "spark.ui.retainedJobs": "20",
    "spark.ui.retainedStages": "20",
    "spark.sql.ui.retainedExecutions": "20",
    "spark.sql.streaming.numRecentProgressUpdates": "20",
}
#: Spark's cache of file listings (``FileStatusCache``: 250 MB by default, shared by the JVM's
#: sessions) keeps every file a micro-batch of a file source read (1.5 to 4 KiB a file,
#: measured), under the batch's own index, which no later read asks for: set to 0 (no cache)
#: while a follow runs.
FILE_STATUS_CACHE = "spark.sql.hive.filesourcePartitionFileCacheSize"
#: The doctor's own state in ``checkpoint_dir`` (beside Spark's checkpoint, ``query/``).
STATE_FILE = "doctor-state.json"


#: ``follow("rate:N[:S]", "key")`` (``--follow rate:N``): Spark's ``rate`` source instead of a
#: folder, a demo with no files. N records a second, numbered 0, 1, ... (the source's ``value``);
#: the key column ``key`` spreads them over ``k0``..``k996`` (``value % 997``), and from second S
#: on (default 30) every fifth record is the key ``hot``: a key that turns hot, to watch it named.
RATE_SOURCE = "rate:"
RATE_KEY = "key"
RATE_COLD_KEYS = 997
RATE_HOT_EVERY = 5
RATE_HOT_FROM_SECOND = 30


@dataclass(frozen=True)
class RateSource:
    """``rate:N[:S]``: ``rows_per_second`` records a second, the key ``hot`` from second
    ``hot_from_second`` on (see :data:`RATE_SOURCE`)."""

    rows_per_second: int
    hot_from_second: int = RATE_HOT_FROM_SECOND

    @classmethod
    def parse(cls, source: str | Path) -> RateSource | None:
        """The rate source ``source`` names, None for a folder; a one-line error for a bad one.

        Example::

            >>> RateSource.parse("rate:500:10")
            RateSource(rows_per_second=500, hot_from_second=10)
            >>> RateSource.parse("incoming/") is None
            True
        """
        text = str(source)
        if not text.startswith(RATE_SOURCE):
            return None
        parts = text[len(RATE_SOURCE) :].split(":")
        if len(parts) > 2 or not all(p.isdigit() for p in parts) or int(parts[0]) < 1:
            raise SkewlabInputError(
                f"{text!r} is not a rate source: use rate:N (N records a second, N >= 1) or "
                "rate:N:S (the key 'hot' from second S on)"
            )
        return cls(*(int(p) for p in parts))

    def key(self, value: int) -> str:
        """The key of record ``value`` (the oracle of what the source streams).

        Example::

            >>> [RateSource(2, 1).key(v) for v in (0, 1, 2, 5)]
            ['k0', 'k1', 'k2', 'hot']
        """
        if value >= self.hot_from_second * self.rows_per_second and value % RATE_HOT_EVERY == 0:
            return "hot"
        return f"k{value % RATE_COLD_KEYS}"

    def stream(self, spark):
        """The streaming DataFrame: ``key`` as :meth:`key` gives it, and no file (``_file``)."""
        from pyspark.sql import functions as F

        value = F.col("value")
        hot = (value >= self.hot_from_second * self.rows_per_second) & (value % RATE_HOT_EVERY == 0)
        cold = F.concat(F.lit("k"), (value % RATE_COLD_KEYS).cast("string"))
        return (
            spark.readStream.format("rate")
            .option("rowsPerSecond", self.rows_per_second)
            .load()
            .select(
                F.when(hot, F.lit("hot")).otherwise(cold).alias(RATE_KEY),
                F.lit(None).cast("string").alias("_file"),
            )
        )


@dataclass(frozen=True)
class HotKeyNow:
    """One hot key: estimate and bounds (they hold for the true count), its share of the
    records with a key, where it lands per engine, and its age: the window its current run of
    hot windows began in (``hot_since``, and when) and how many consecutive windows it has been
    hot up to this one (0, ``hot_since`` None: hot over the run but not in this window)."""

    key: str
    estimate: int
    lower: int
    upper: int
    share: float
    places: dict[str, int]
    hot_since: int | None
    hot_since_time: str | None
    windows_hot: int


@dataclass(frozen=True)
class FollowWindow:
    """One window (one micro-batch): its records, the hot keys in it and over the run so far,
    each sketch's error bound (in records) and the files it read."""

    window: int
    batch_id: int
    ended_at: str
    records: int
    null_keys: int
    run_records: int
    run_null_keys: int
    error_bound: float
    run_error_bound: float
    hot: tuple[HotKeyNow, ...]
    run_hot: tuple[HotKeyNow, ...]
    files: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The window as one JSON object (``--json`` prints one per line)."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FollowWindow:
        """The window :meth:`to_json` wrote, read back.

        Example::

            >>> hot = HotKeyNow("a", 5, 5, 5, 0.5, {"flink": 1}, 0, "t", 1)
            >>> w = FollowWindow(0, 0, "t", 10, 0, 10, 0, 0.0, 0.0, (hot,), (hot,), ("f",))
            >>> FollowWindow.from_json(w.to_json()) == w
            True
        """

        def hot(rows):
            return tuple(HotKeyNow(**h) for h in rows)

        return cls(**{**data, "hot": hot(data["hot"]), "run_hot": hot(data["run_hot"]),
                      "files": tuple(data["files"])})  # fmt: skip

    def redacted(self) -> FollowWindow:
        """A copy with every key shown as a stable hash
        (:func:`~skewlab.doctor.redaction.redact_key`).

        Example::

            >>> hot = HotKeyNow("user-42", 5, 5, 5, 0.5, {}, 0, "t", 1)
            >>> w = FollowWindow(0, 0, "t", 10, 0, 10, 0, 0.0, 0.0, (hot,), (hot,))
            >>> w.redacted().hot[0].key
            'key#9048e1940c'
        """
        from skewlab.doctor.redaction import redact_key

        def keys(hot):
            return tuple(replace(h, key=redact_key(h.key)) for h in hot)

        return replace(self, hot=keys(self.hot), run_hot=keys(self.run_hot))

    def to_text(self, width: int = 100) -> str:
        """The window as a short table within ``width`` columns.

        Example::

            >>> hot = HotKeyNow("UA", 4637, 4637, 4637, 0.172, {"flink": 2, "spark": 5},
            ...                 0, "2026-11-30T05:16:39Z", 1)
            >>> window = FollowWindow(0, 0, "2026-11-30T05:16:39Z", 27004, 0, 27004, 0, 92.0,
            ...                       92.0, (hot,), (hot,))
            >>> print(window.to_text())
            window 0 (2026-11-30T05:16:39Z): 27,004 records, 27,004 so far; sketch error at most 92 / 92
              key                   share  count (bounds)              hot for  since  flink  spark
              UA                    17.2%  4,637..4,637               1 window      0      2      5
        """  # noqa: E501
        lines = [
            f"window {self.window} ({self.ended_at}): {self.records:,} records, "
            f"{self.run_records:,} so far; sketch error at most {self.error_bound:,.0f} / "
            f"{self.run_error_bound:,.0f}"
        ]
        if not self.hot:
            lines.append("  no key above the threshold in this window")
            return "\n".join(line[:width] for line in lines)
        engines = list(self.hot[0].places)
        lines.append(
            f"  {'key':<20}  {'share':>5}  {'count (bounds)':<23}  {'hot for':>10}  {'since':>5}"
            + "".join(f"  {e:>5}" for e in engines)
        )
        for h in self.hot:
            since = "" if h.hot_since is None else str(h.hot_since)
            lines.append(
                f"  {str(h.key)[:20]:<20}  {h.share:5.1%}  {f'{h.lower:,}..{h.upper:,}':<23}  "
                f"{_windows(h.windows_hot):>10}  {since:>5}"
                + "".join(f"  {h.places[e]:>5}" for e in engines)
            )
        return "\n".join(line[:width] for line in lines)


@dataclass
class FollowState:
    """What a follow keeps between windows (and in ``checkpoint_dir``): the last micro-batch
    counted, the window count, the run's sketch, null keys, ages and recent windows."""

    lg_max_map_size: int
    batch_id: int = -1
    windows: int = 0
    run_sketch: bytes | None = None
    run_null_keys: int = 0
    ages: dict[str, list] = field(default_factory=dict)  # key -> [since window, since time, n]
    history: list[dict[str, Any]] = field(default_factory=list)
    stopped_by: str | None = None

    def summary(self, redact: bool = False) -> str:
        """The run so far in a few lines: windows, records, the keys hot over the run (each as
        a stable hash with ``redact``)."""
        from skewlab.doctor.redaction import redact_key

        last = self.history[-1] if self.history else None
        if last is None:
            return f"no window counted yet (stopped by {self.stopped_by})"
        lines = [
            f"summary: {_windows(self.windows)}, {last['run_records']:,} records "
            f"({last['run_null_keys']:,} with a null key), stopped by {self.stopped_by}"
        ]
        for h in last["run_hot"]:
            key = redact_key(h["key"]) if redact else h["key"]
            lines.append(
                f"  {str(key)[:40]:<40} {h['share']:6.1%} of the run's records "
                f"({h['lower']:,}..{h['upper']:,})"
            )
        if not last["run_hot"]:
            lines.append("  no key above the threshold over the run")
        return "\n".join(lines)

    def save(self, path: Path) -> None:
        """Written whole to a new file, then renamed over the old: a crash leaves one or the
        other, never half."""
        data = asdict(self)
        data["run_sketch"] = base64.b64encode(self.run_sketch).decode() if self.run_sketch else None
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> FollowState:
        data = json.loads(path.read_text())
        if data["run_sketch"]:
            data["run_sketch"] = base64.b64decode(data["run_sketch"])
        return cls(**data)


def _stream_files(root: Path) -> list[Path]:
    """The files Spark's file source reads in ``root``: partition folders too (date=.../),
    hidden ones (``_``, ``.``) not."""
    return [
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    ]


def _columns(path: Path, fmt: str) -> set[str]:
    """The columns of one file, read without Spark: a Parquet file's schema, a CSV file's
    header, the fields of a JSON-lines file's first 1,000 records."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return set(pq.read_schema(path).names)
    with path.open(encoding="utf-8", errors="replace") as lines:
        if fmt == "csv":
            import csv

            return set(next(csv.reader(lines), []))
        names: set[str] = set()
        for _, line in zip(range(1_000), lines, strict=False):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            names |= set(record) if isinstance(record, dict) else set()
        return names


def check_follow_inputs(
    directory: str | Path,
    threshold: float,
    window_seconds: float,
    fmt: str | None,
    key: str | None = None,
) -> tuple[Path, str]:
    """The folder and its format, checked before Spark starts: an existing folder with at least
    one readable file, a threshold in (0, 1), a window above 0, and ``key`` among the first
    file's columns.

    Example::

        >>> check_follow_inputs("/nonexistent", 0.1, 1.0, None)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: no such folder to follow: '/nonexistent'
    """
    from skewlab.doctor.diagnosis import FORMATS

    rate = RateSource.parse(directory)
    if rate is not None:
        _check_threshold_and_window(threshold, window_seconds)
        if key not in (None, RATE_KEY):
            raise SkewlabInputError(
                f"no key column {key!r}: the rate source's key column is {RATE_KEY!r}"
            )
        if fmt is not None:
            raise SkewlabInputError("--format is for files, not for a rate source")
        return Path(directory), "rate"
    root = Path(directory)
    if not root.is_dir():
        raise SkewlabInputError(
            f"no such folder to follow: {str(directory)!r}"
            if not root.exists()
            else f"{str(directory)!r} is a file: --follow takes the folder new files arrive in"
        )
    _check_threshold_and_window(threshold, window_seconds)
    files = _stream_files(root)
    if fmt is None:
        for name, endings in FORMATS.items():
            if files and all(p.name.lower().endswith(endings) for p in files):
                fmt = name
                break
    if not files or fmt is None:
        raise SkewlabInputError(
            f"no readable files in {str(directory)!r}: --follow needs at least one "
            f"({', '.join(FORMATS)}: its columns are the stream's) before it starts"
            if not files
            else f"cannot tell the format of {str(directory)!r}'s files: give --format"
        )
    if fmt not in FORMATS:
        raise SkewlabInputError(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
    if key is not None:
        first = min(files)
        try:
            columns = _columns(first, fmt)
        except Exception as failed:  # noqa: BLE001 -- the reader's reason, in one line
            raise SkewlabInputError(f"cannot read {str(first)!r} as {fmt}: {failed}") from None
        if key not in columns:
            raise SkewlabInputError(
                f"no key column {key!r} in {first.name}: its columns are "
                f"{', '.join(sorted(columns)) or 'none'}"
            )
    return root, fmt


def check_follow_checkpoint(checkpoint_dir: str | Path) -> Path:
    """``checkpoint_dir`` as a follow's folder: new, empty, or one a follow wrote (its state
    file and Spark's checkpoint, ``query/``, and nothing else) -- never a folder of someone
    else's files, checked before Spark starts.

    Example::

        >>> check_follow_checkpoint("/tmp/a-new-folder-for-a-follow")
        PosixPath('/tmp/a-new-folder-for-a-follow')
    """
    base = Path(checkpoint_dir)
    if base.exists() and not base.is_dir():
        raise SkewlabInputError(f"--checkpoint-dir {str(checkpoint_dir)!r} is a file, not a folder")
    others = sorted(p.name for p in base.iterdir() if p.name not in (STATE_FILE, "query")) if (
        base.is_dir()
    ) else []  # fmt: skip
    if others:
        raise SkewlabInputError(
            f"--checkpoint-dir {str(checkpoint_dir)!r} holds files a follow did not write "
            f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}): give a new or empty "
            "folder, or one a follow wrote"
        )
    return base


def _check_threshold_and_window(threshold: float, window_seconds: float) -> None:
    check_number("threshold (--threshold)", threshold, above=0)
    if not threshold < 1:
        raise SkewlabInputError(f"threshold (--threshold) must be below 1, got {threshold!r}")
    check_number("window (--window)", window_seconds, above=0)


def _windows(n: int) -> str:
    return f"{n} window{'s' * (n != 1)}"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


#: A window's rows, one per Spark partition: its sketch (serialized), null keys, files read.
SKETCH_SCHEMA = "sketch binary, nulls long, files array<string>"


def _partition_sketches(lg: int, key: str):
    """``mapInPandas``'s function: a Spark partition's keys in one frequent-items sketch of
    ``2**lg`` entries, with its null keys and the files its records came from. Module level,
    holding nothing but ``lg`` and ``key``: over Spark Connect it is pickled to the server."""

    def sketch(batches):
        import pandas as pd
        from datasketches import frequent_strings_sketch

        one = frequent_strings_sketch(lg)
        nulls = 0
        files: set[str] = set()
        for b in batches:
            keys = b[key]
            nulls += int(keys.isna().sum())
            for value in keys.dropna().tolist():
                one.update(value, 1)
            files.update(b["_file"].dropna().unique().tolist())
        yield pd.DataFrame(
            {"sketch": [one.serialize()], "nulls": [nulls], "files": [sorted(files)]}
        )

    return sketch


class _Follower:
    """The driver's side of a follow: merges each micro-batch's sketches (see the module doc)."""

    def __init__(self, spark, key: str, key_type: str, *, threshold: float, lg: int,
                 parallelism: int, max_parallelism: int, partitions: int,
                 state: FollowState, state_path: Path | None,
                 on_window: Callable[[FollowWindow], None] | None) -> None:  # fmt: skip
        self.spark, self.key, self.key_type = spark, key, key_type
        self.threshold, self.lg = threshold, lg
        self.parallelism, self.max_parallelism, self.partitions = (
            parallelism, max_parallelism, partitions,
        )  # fmt: skip
        self.state, self.state_path, self.on_window = state, state_path, on_window
        self.places: dict[str, dict[str, int]] = {}
        self.error: BaseException | None = None
        self.busy = False
        self.idle_since = time.monotonic()

    def _placed(self, keys: list[str]) -> dict[str, dict[str, int]]:
        """Where each key lands per engine (cached: only hot keys are asked)."""
        from skewlab.engine.partitioners import (
            flink_key_groups,
            kafka_partitions,
            spark_partition_expression,
        )
        from skewlab.state.key_groups import compute_operator_index_for_key_group

        new = [k for k in keys if k not in self.places]
        if new:
            typed = [int(k) for k in new] if self.key_type != "string" else new
            groups = flink_key_groups(typed, self.key_type, self.max_parallelism)
            kafka = kafka_partitions(typed, self.key_type, self.partitions)
            frame = self.spark.createDataFrame([(v,) for v in typed], f"k {self.key_type}")
            spark_parts = [
                int(r[0])
                for r in frame.selectExpr(spark_partition_expression("k", self.partitions))
                .collect()
            ]  # fmt: skip
            for k, g, s, p in zip(new, groups, spark_parts, kafka, strict=True):
                self.places[k] = {
                    "flink": compute_operator_index_for_key_group(
                        self.max_parallelism, self.parallelism, int(g)
                    ),
                    "spark": s,
                    "kafka": int(p),
                }
        return {k: self.places[k] for k in keys}

    def _hot(self, sketch, ages: dict[str, list]) -> tuple[list[HotKeyNow], float]:
        """The keys of ``sketch`` that may reach the threshold share of its records, hottest
        first, with their ages, and the sketch's error bound in records."""
        from datasketches import frequent_items_error_type, frequent_strings_sketch

        total = int(sketch.total_weight)
        items = sketch.get_frequent_items(
            frequent_items_error_type.NO_FALSE_NEGATIVES, int(self.threshold * total)
        ) if total else []  # fmt: skip
        places = self._placed([i[0] for i in items])
        out = []
        for k, estimate, lower, upper in sorted(items, key=lambda i: (-i[1], i[0])):
            since, when, runs = ages.get(k, (None, None, 0))
            out.append(HotKeyNow(
                key=k, estimate=int(estimate), lower=int(lower), upper=int(upper),
                share=estimate / total, places=places[k], hot_since=since,
                hot_since_time=when, windows_hot=runs,
            ))  # fmt: skip
        bound = frequent_strings_sketch.get_epsilon_for_lg_size(self.lg) * total
        return out, bound

    def batch(self, frame, batch_id: int) -> None:
        """One micro-batch: one window (foreachBatch's function)."""
        self.busy = True
        try:
            self._batch(frame, batch_id)
        except BaseException as failed:  # surfaced by follow() after the query stops
            self.error = failed
            raise
        finally:
            self.busy = False
            self.idle_since = time.monotonic()

    def _batch(self, frame, batch_id: int) -> None:
        if batch_id <= self.state.batch_id:
            return  # counted before a restart or a failure: Spark replays it, we do not count it
        rows = frame.mapInPandas(_partition_sketches(self.lg, self.key), SKETCH_SCHEMA).collect()
        self.merge(rows, batch_id)

    def merge(self, rows, batch_id: int) -> None:
        """One window from its partitions' sketches (rows of :data:`SKETCH_SCHEMA`): merged
        into the window's and the run's, the ages moved on, the window reported and kept."""
        from datasketches import frequent_strings_sketch

        lg = self.lg
        window = frequent_strings_sketch(lg)
        run = (frequent_strings_sketch.deserialize(self.state.run_sketch)
               if self.state.run_sketch else frequent_strings_sketch(lg))  # fmt: skip
        nulls = 0
        files: set[str] = set()
        for r in rows:
            one = frequent_strings_sketch.deserialize(bytes(r["sketch"]))
            window.merge(one)
            run.merge(one)
            nulls += int(r["nulls"])
            files.update(r["files"] or [])
        state = self.state
        index = state.windows
        # ages: a key hot in this window continues its run if it was hot in the last window
        hot, bound = self._hot(window, {})
        ages = {}
        for h in hot:
            before = state.ages.get(h.key)
            if before is not None and before[0] + before[2] == index:
                ages[h.key] = [before[0], before[1], before[2] + 1]
            else:
                ages[h.key] = [index, _now(), 1]
        state.ages = ages
        hot = [replace(h, hot_since=a[0], hot_since_time=a[1], windows_hot=a[2])
               for h, a in ((h, ages[h.key]) for h in hot)]  # fmt: skip
        state.run_null_keys += nulls
        state.run_sketch = run.serialize()
        run_hot, run_bound = self._hot(run, ages)
        result = FollowWindow(
            window=index, batch_id=batch_id, ended_at=_now(),
            records=int(window.total_weight) + nulls, null_keys=nulls,
            run_records=int(run.total_weight) + state.run_null_keys,
            run_null_keys=state.run_null_keys, error_bound=bound, run_error_bound=run_bound,
            hot=tuple(hot), run_hot=tuple(run_hot), files=tuple(sorted(files)),
        )  # fmt: skip
        # the places of the keys listed now only: a key hot once long ago is not kept
        listed = {h.key for h in (*hot, *run_hot)}
        self.places = {k: v for k, v in self.places.items() if k in listed}
        state.windows = index + 1
        state.batch_id = batch_id
        state.history = [*state.history, result.to_json()][-HISTORY:]
        if self.state_path is not None:
            state.save(self.state_path)
        if self.on_window is not None:
            self.on_window(result)


def follow(
    directory: str | Path,
    key: str,
    *,
    window_seconds: float = 10.0,
    threshold: float = 0.05,
    fmt: str | None = None,
    parallelism: int = 8,
    max_parallelism: int | None = None,
    partitions: int | None = None,
    lg_max_map_size: int | None = None,
    checkpoint_dir: str | Path | None = None,
    on_window: Callable[[FollowWindow], None] | None = None,
    stop: threading.Event | None = None,
    idle_seconds: float | None = None,
    spark=None,
) -> FollowState:
    """Follow the files arriving in ``directory`` (or Spark's rate source, ``rate:N[:S]``: see
    :data:`RATE_SOURCE`) and name the hot keys of ``key`` per window of
    ``window_seconds`` and over the run so far (see the module doc); ``on_window`` is called
    with each :class:`FollowWindow`. Runs until ``stop`` is set, until no new records came for
    ``idle_seconds``, or until interrupted (Ctrl-C stops the query cleanly); returns what it
    kept (:class:`FollowState`: the run's sketch, the ages, the recent windows). Places are
    per engine at ``parallelism`` Flink subtasks (``max_parallelism``: Flink's default for it)
    and ``partitions`` Spark and Kafka partitions (default ``parallelism``). While it runs,
    ``spark``'s cache of file listings is off (:data:`FILE_STATUS_CACHE`), its value restored
    when it stops.

    Example::

        >>> state = follow("incoming/", "page", window_seconds=2, idle_seconds=10)  # doctest: +SKIP
        >>> state.history[-1]["run_hot"][0]["key"]                                  # doctest: +SKIP
        'home'
        >>> follow("rate:2000:5", "key", window_seconds=2, on_window=print)       # doctest: +SKIP
    """
    from skewlab.engine.heavy_hitters import check_sketch_size, smallest_sketch_size
    from skewlab.state.key_groups import check_parallelism, compute_default_max_parallelism

    root, fmt = check_follow_inputs(directory, threshold, window_seconds, fmt, key)
    parallelism = check_whole("parallelism", parallelism, 1)
    max_parallelism = max_parallelism or compute_default_max_parallelism(parallelism)
    check_parallelism(parallelism, max_parallelism)
    partitions = check_whole("partitions", partitions or parallelism, 1)
    smallest = smallest_sketch_size(threshold)
    lg = check_sketch_size(lg_max_map_size if lg_max_map_size is not None else max(smallest, 10))
    if lg < smallest:
        raise SkewlabInputError(
            f"a sketch of 2**{lg} entries could miss a key at the threshold {threshold:.2%}: use "
            f"a sketch size of at least {smallest}"
        )
    if idle_seconds is not None:
        check_number("idle seconds", idle_seconds, above=0)
    state_path = None
    state = FollowState(lg_max_map_size=lg)
    if checkpoint_dir is not None:
        base = check_follow_checkpoint(checkpoint_dir)
        base.mkdir(parents=True, exist_ok=True)
        state_path = base / STATE_FILE
        if state_path.exists():
            state = FollowState.load(state_path)
            if state.lg_max_map_size != lg:
                raise SkewlabInputError(
                    f"{str(checkpoint_dir)!r} was followed with a sketch of 2**"
                    f"{state.lg_max_map_size} entries, not 2**{lg}: use the same, or a new folder"
                )
        query_checkpoint = base / "query"
    else:  # a checkpoint of this run only, removed when it stops
        query_checkpoint = Path(tempfile.mkdtemp(prefix="skewlab-follow-"))
    if spark is None:
        from skewlab.doctor.spark_connect import doctor_spark

        spark = doctor_spark()
    if fmt == "rate":
        source, key_type = RateSource.parse(directory).stream(spark), "string"
    else:
        source, key_type = _file_stream(spark, root, fmt, key)
    follower = _Follower(
        spark, key, key_type, threshold=threshold, lg=lg, parallelism=parallelism,
        max_parallelism=max_parallelism, partitions=partitions, state=state,
        state_path=state_path, on_window=on_window,
    )  # fmt: skip
    state.stopped_by = "the query's end"
    interrupted = threading.Event()
    # Ctrl-C sets an event the loops read: PySpark's own handler would cancel the jobs of the
    # window being counted through the same connection the loop is waiting on
    previous = (
        signal.signal(signal.SIGINT, lambda *_: interrupted.set())
        if threading.current_thread() is threading.main_thread()
        else None
    )
    until = _Until(interrupted, stop, idle_seconds, state)
    cache_size = spark.conf.get(FILE_STATUS_CACHE)  # the session's, restored when this stops
    spark.conf.set(FILE_STATUS_CACHE, "0")
    try:
        if is_connect(spark):
            _follow_in_runs(source, follower, query_checkpoint, window_seconds, until)
        else:
            _follow_in_micro_batches(source, follower, query_checkpoint, window_seconds, until)
    finally:
        spark.conf.set(FILE_STATUS_CACHE, cache_size)
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        if checkpoint_dir is None:
            shutil.rmtree(query_checkpoint, ignore_errors=True)
    if follower.error is not None and state.stopped_by != "Ctrl-C":
        raise follower.error  # (a window Ctrl-C cut short was not counted: a resume reads it)
    return state


def _file_stream(spark, root: Path, fmt: str, key: str):
    """The files arriving in ``root`` as a stream of the key (a string, as the sketch counts
    it) and the file each record came from; and the key's Spark type."""
    from pyspark.sql import functions as F

    from skewlab.doctor.diagnosis import read_records
    from skewlab.engine.partitioners import check_key_type

    first = min(_stream_files(root))  # its schema: the stream's (no read of the whole folder)
    schema = read_records(spark, str(first), fmt).schema
    if key not in schema.fieldNames():
        raise SkewlabInputError(
            f"no key column {key!r}: the files' columns are {', '.join(schema.fieldNames())}"
        )
    key_type = schema[key].dataType.simpleString()
    check_key_type(key_type, ("flink", "spark", "kafka"))
    reader = spark.readStream.schema(schema)
    if fmt == "csv":
        reader = reader.option("header", True)
    source = (
        reader.format("json" if fmt == "jsonl" else fmt)
        .load(str(root))
        .select(F.col(key).cast("string").alias(key), F.col("_metadata.file_path").alias("_file"))
    )
    return source, key_type


@dataclass
class _Until:
    """When a follow stops: Ctrl-C, ``stop`` set, or no new records for ``idle_seconds``;
    :meth:`reached` says so and records why in ``state.stopped_by``."""

    interrupted: threading.Event
    stop: threading.Event | None
    idle_seconds: float | None
    state: FollowState

    def reached(self, idle_since: float) -> bool:
        if self.interrupted.is_set():  # Ctrl-C: stop cleanly, keep what was counted
            self.state.stopped_by = "Ctrl-C"
        elif self.stop is not None and self.stop.is_set():
            self.state.stopped_by = "asked"
        elif self.idle_seconds is not None and time.monotonic() - idle_since > self.idle_seconds:
            self.state.stopped_by = f"no new records for {self.idle_seconds:g} s"
        else:
            return False
        return True


def _follow_in_micro_batches(source, follower: _Follower, checkpoint: Path,
                             window_seconds: float, until: _Until) -> None:  # fmt: skip
    """An embedded or cluster Spark: one query, a micro-batch a window, each counted by
    ``foreachBatch`` in this process."""
    query = (
        source.writeStream.foreachBatch(follower.batch)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime=f"{window_seconds} seconds")
        .start()
    )
    try:
        while query.isActive:
            query.awaitTermination(min(window_seconds, 0.5))
            if until.interrupted.is_set():
                until.reached(follower.idle_since)
                break
            if follower.busy:  # a window being counted is finished before any stop
                continue
            if query.lastProgress is None:  # not one trigger yet: idle from the first
                follower.idle_since = time.monotonic()
            if until.reached(follower.idle_since):
                break
    finally:
        query.stop()


def _follow_in_runs(source, follower: _Follower, checkpoint: Path, window_seconds: float,
                    until: _Until) -> None:  # fmt: skip
    """Over Spark Connect, where ``foreachBatch``'s function would run on the server, away from
    this process's follower: one ``availableNow`` run of the query a window, started from here.
    Each run writes its partitions' sketches to a Parquet file sink in the checkpoint
    (``sketches/window=N/``), read back when the run ends: the sink's log keeps a run's rows
    exactly once, and rows a run wrote before a crash, not yet counted, are read with the
    window of the same number after a restart."""
    from pyspark.sql import functions as F

    sink = str(checkpoint / "sketches")
    spark = source.sparkSession
    sketches = source.mapInPandas(_partition_sketches(follower.lg, follower.key), SKETCH_SCHEMA)
    next_run = time.monotonic()
    while True:
        index = follower.state.windows
        query = (
            sketches.withColumn("window", F.lit(index))
            .writeStream.format("parquet")
            .partitionBy("window")
            .option("path", sink)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
        finally:
            query.stop()
        progress = query.recentProgress  # every micro-batch of the run, not only its last
        if sum(p.numInputRows for p in progress):
            rows = spark.read.parquet(sink).where(F.col("window") == index).collect()
            follower.merge(rows, progress[-1].batchId)
            follower.idle_since = time.monotonic()
        next_run = max(next_run + window_seconds, time.monotonic())  # a slow run: next at once
        while time.monotonic() < next_run:
            if until.reached(follower.idle_since):
                return
            time.sleep(min(0.2, max(0.0, next_run - time.monotonic())))
        if until.reached(follower.idle_since):
            return


class FileDrops:
    """A stream to follow when you have none at hand: ``records`` (a Spark DataFrame) split in
    ``parts`` Parquet files by ``order_by`` (default the input's order), dropped into a folder
    (default a temporary one, removed when Python exits) one at a time: the first now, each
    next one when :meth:`after_window` is called -- pass it as ``follow``'s ``on_window``, and
    every window reads one part.

    Example::

        >>> drops = FileDrops(records, parts=3, order_by="event_time")          # doctest: +SKIP
        >>> follow(drops.folder, "tweet_id", on_window=drops.after_window)     # doctest: +SKIP
    """

    def __init__(self, records, *, parts: int = 3, order_by: str | None = None,
                 folder: str | Path | None = None) -> None:  # fmt: skip
        import atexit

        self.parts = check_whole("parts", parts, 1)
        if folder is not None and Path(folder).exists() and any(Path(folder).iterdir()):
            raise SkewlabInputError(f"{str(folder)!r} is not empty: give a new or empty folder")
        frame = records.toPandas()
        if order_by is not None:
            frame = frame.sort_values(order_by, kind="stable")
        size = -(-len(frame) // self.parts)
        self._pieces = [frame.iloc[i * size : (i + 1) * size] for i in range(self.parts)]
        if folder is None:
            folder = tempfile.mkdtemp(prefix="skewlab-follow-in-")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.dropped = 0
        self._drop()

    def _drop(self) -> None:
        if self.dropped < self.parts:
            part = self.folder / f".part-{self.dropped:03d}.parquet.tmp"
            # Spark reads Parquet timestamps in microseconds, not pandas' nanoseconds
            self._pieces[self.dropped].to_parquet(
                part, index=False, coerce_timestamps="us", allow_truncated_timestamps=True
            )
            part.rename(self.folder / f"part-{self.dropped:03d}.parquet")  # whole, or not at all
            self.dropped += 1

    def after_window(self, window: FollowWindow | None = None) -> None:
        """Drop the next part (nothing once all are dropped)."""
        self._drop()
