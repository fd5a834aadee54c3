"""The state's skew, read from a Spark Structured Streaming checkpoint: how many state rows and
bytes each state partition holds, the keys that hold the most, and how the same state would
spread over another number of partitions -- which can differ from the traffic's skew (a key
seen a million times may hold one row; a key seen once a minute may hold a growing list).

Read with Spark's own state data sources, never from the files directly:
``spark.read.format("state-metadata")`` names the stateful operators (their state stores,
partitions, committed batches and, for ``transformWithState``, state variables), and
``spark.read.format("statestore")`` reads each store at its latest committed batch, one row per
state key with its ``partition_id``. Per store:

=================  ==========================================================================
``partitions``     state rows and bytes per state partition (every partition, empty ones too)
``top_keys``       the keys holding the most state bytes: the whole state key, or one of its
                   fields (``key=``, e.g. the grouping column of a multi-column state key)
``placement``      the same rows over other partition counts: Spark's placement of a state
                   key (``pmod(hash(key columns), partitions)``: Murmur3, seed 42, as
                   ``HashPartitioning`` places it), taken only where it reproduces the
                   checkpoint's own ``partition_id`` for every row (``placement_key`` says
                   which leading fields of the key did; a join's ``keyWithIndexToValue``
                   store is placed by its join key, without the index)
``skew_score``     FLIP-418's skew score of the bytes per partition (:mod:`skewlab.engine.skew`)
=================  ==========================================================================

A state row's *bytes* are its key and value as Spark's ``UnsafeRow`` lays them out -- a null
bitmap word per 64 fields, 8 bytes a field, variable-length data rounded up to 8 bytes -- what
the state store keeps per row before compression, computed from the values read. A store the
data source cannot read is kept with one line saying why (Spark's own message), and the others
are read.

Example::

    >>> report = read_state("/tmp/query/checkpoint", key="tweet_id")         # doctest: +SKIP
    >>> report.stores[0].partitions[0]                                       # doctest: +SKIP
    StatePartition(partition=0, rows=412, bytes=854_032)
    >>> print(report.to_text())                                              # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from skewlab.engine.skew import load_summary
from skewlab.errors import SkewlabInputError, failure_cause
from skewlab.validation import check_whole

__all__ = [
    "StateKey",
    "StatePartition",
    "StatePlacement",
    "StateReport",
    "StateStore",
    "check_checkpoint",
    "count_stream",
    "read_state",
    "unsafe_row_bytes",
]

#: Operators whose state the data source reads per state variable (``stateVarName``).
_STATE_VARIABLE_OPERATORS = ("transformWithStateExec", "transformWithStateInPandasExec",
                             "transformWithStateInPySparkExec")  # fmt: skip
#: Bytes of a fixed-length value inside an ``UnsafeArrayData`` (elements are packed).
_ELEMENT_BYTES = {
    "boolean": 1, "tinyint": 1, "smallint": 2, "int": 4, "float": 4, "date": 4,
    "interval year to month": 4, "bigint": 8, "double": 8, "timestamp": 8, "timestamp_ntz": 8,
    "interval day to second": 8,
}  # fmt: skip


@dataclass(frozen=True)
class StatePartition:
    """One state partition: its state rows and their bytes."""

    partition: int
    rows: int
    bytes: int


@dataclass(frozen=True)
class StateKey:
    """One key's state: its rows, their bytes, and the partition holding them (``None`` when
    they lie in several: a ``key=`` field that is only part of the state key)."""

    key: Any
    rows: int
    bytes: int
    partition: int | None


@dataclass(frozen=True)
class StatePlacement:
    """The store's rows placed over ``partitions`` state partitions as Spark would place them."""

    partitions: int
    rows: tuple[int, ...]
    bytes: tuple[int, ...]
    busiest_share: float
    skew_score: float


@dataclass(frozen=True)
class StateStore:
    """One state store of one stateful operator (a ``transformWithState`` state variable is a
    store of its own), as read at ``batch``; ``unread`` says why it could not be read."""

    operator_id: int
    operator: str
    store: str
    state_variable: str | None
    num_partitions: int
    batch: int | None
    rows: int = 0
    bytes: int = 0
    partitions: tuple[StatePartition, ...] = ()
    top_keys: tuple[StateKey, ...] = ()
    key_fields: tuple[str, ...] = ()
    placement_key: tuple[str, ...] | None = None
    placement: tuple[StatePlacement, ...] = ()
    busiest_share: float = 0.0
    skew_score: float = 0.0
    unread: str | None = None

    @property
    def name(self) -> str:
        """``operator #id store`` (and the state variable), as the text names it."""
        what = self.state_variable or self.store
        return f"{self.operator} #{self.operator_id} {what}"


@dataclass(frozen=True)
class StateReport:
    """What :func:`read_state` found in a checkpoint: one :class:`StateStore` per store."""

    checkpoint: str
    key: str | None
    stores: tuple[StateStore, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON values.

        Example::

            >>> StateReport("ck", None).to_json()
            {'checkpoint': 'ck', 'key': None, 'stores': []}
        """
        return json.loads(json.dumps(asdict(self), default=str))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StateReport:
        """The report :meth:`to_json` wrote (a shipped reference's, say), read back.

        Example::

            >>> store = StateStore(0, "stateStoreSave", "default", None, 1, 0, rows=1, bytes=48,
            ...                    partitions=(StatePartition(0, 1, 48),), key_fields=("page",))
            >>> report = StateReport("ck", "page", (store,))
            >>> StateReport.from_json(report.to_json()) == report
            True
        """
        nested = {"partitions": StatePartition, "top_keys": StateKey}

        def store(s: dict[str, Any]) -> StateStore:
            fields = {k: tuple(cls_(**x) for x in s[k]) for k, cls_ in nested.items()}
            placement = tuple(
                StatePlacement(**{**p, "rows": tuple(p["rows"]), "bytes": tuple(p["bytes"])})
                for p in s["placement"]
            )
            key = s["placement_key"]
            return StateStore(**{
                **s, **fields, "placement": placement, "key_fields": tuple(s["key_fields"]),
                "placement_key": None if key is None else tuple(key),
            })  # fmt: skip

        return cls(data["checkpoint"], data["key"], tuple(store(s) for s in data["stores"]))

    def redacted(self) -> StateReport:
        """A copy with every key shown as a stable hash (:func:`~skewlab.doctor.redaction.
        redact_key`); rows, bytes and partitions unchanged.

        Example::

            >>> key = StateKey("user-42", 1, 48, 0)
            >>> store = StateStore(0, "stateStoreSave", "default", None, 1, 0, top_keys=(key,))
            >>> StateReport("ck", None, (store,)).redacted().stores[0].top_keys[0].key
            'key#9048e1940c'
        """
        from skewlab.doctor.redaction import redact_key

        stores = tuple(
            replace(s, top_keys=tuple(replace(k, key=redact_key(k.key)) for k in s.top_keys))
            for s in self.stores
        )
        return replace(self, stores=stores)

    def to_text(self, top: int = 5) -> str:
        """The report as text within 100 columns: per store its partitions, the keys holding
        the most state (``top`` of them) and its placement over other partition counts."""
        lines = [f"state of {self.checkpoint}"]
        for s in self.stores:
            lines.append("")
            if s.unread:
                lines.append(f"{s.name}: not read")
                lines += textwrap.wrap(s.unread, 98, initial_indent="  ", subsequent_indent="  ")
                continue
            lines.append(f"{s.name}")
            lines.append(
                f"  {s.rows:,} rows, {_size(s.bytes)} over {s.num_partitions} state partitions "
                f"at batch {s.batch}"
            )
            lines.append(
                f"  the busiest partition holds {s.busiest_share:.0%} of the bytes; skew score "
                f"{s.skew_score:.0f} %"
            )
            lines.append(f"  {'partition':>9}  {'rows':>12}  {'bytes':>12}  share")
            for p in s.partitions:
                share = p.bytes / s.bytes if s.bytes else 0.0
                lines.append(f"  {p.partition:>9}  {p.rows:>12,}  {p.bytes:>12,}  {share:5.0%}")
            if s.top_keys:
                by = self.key if self.key in s.key_fields else ", ".join(s.key_fields)
                lines.append(f"  keys holding the most state (by {by})"[:100])
                for k in s.top_keys[:top]:
                    where = "several" if k.partition is None else str(k.partition)
                    lines.append(
                        f"    {str(k.key)[:40]:<40}  {k.rows:>9,} rows  {_size(k.bytes):>10}"
                        f"  partition {where}"
                    )
            if s.placement_key is None:
                lines.append("  over other partition counts: no leading fields of the key "
                             "reproduce Spark's placement")  # fmt: skip
            for p in s.placement:
                lines.append(
                    f"  over {p.partitions:>3} partitions: busiest {p.busiest_share:5.0%} of the "
                    f"bytes, skew score {p.skew_score:3.0f} %"
                )
        return "\n".join(lines)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def check_checkpoint(path: str | Path) -> Path:
    """``path`` as a checkpoint with state and a committed micro-batch, or a one-line error
    saying what is missing -- checked on the files, before Spark starts.

    Example::

        >>> check_checkpoint("/nonexistent")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: checkpoint '/nonexistent' does not exist
    """
    root = Path(path)
    if not root.exists():
        raise SkewlabInputError(f"checkpoint {str(path)!r} does not exist")
    if not root.is_dir():
        raise SkewlabInputError(f"checkpoint {str(path)!r} is a file, not a directory")
    state = root / "state"
    operators = [p for p in state.iterdir() if p.is_dir() and p.name.isdigit()] if (
        state.is_dir()
    ) else []  # fmt: skip
    if not operators:
        raise SkewlabInputError(
            f"no state in {str(path)!r}: a stateful query's checkpoint keeps it under state/ "
            "(one folder per stateful operator); is this the query's checkpointLocation?"
        )
    commits = root / "commits"
    if not commits.is_dir() or not any(p.name.isdigit() for p in commits.iterdir()):
        raise SkewlabInputError(
            f"{str(path)!r} has state but no committed micro-batch (commits/ is empty): "
            "the state data source reads committed batches only"
        )
    return root


def _round8(n):
    from pyspark.sql import functions as F

    return F.floor((n + F.lit(7)) / F.lit(8)) * F.lit(8)


def _variable_bytes(col, dtype):
    """Bytes ``col``'s value takes in a row's variable-length region (0 for a fixed-length
    value and for null)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, T.StringType | T.BinaryType):
        size = _round8(F.octet_length(col))
    elif isinstance(dtype, T.StructType):
        size = unsafe_row_bytes(col, dtype)
    elif isinstance(dtype, T.DecimalType):
        size = F.lit(0 if dtype.precision <= 18 else 16)
    elif isinstance(dtype, T.CalendarIntervalType):
        size = F.lit(16)
    elif isinstance(dtype, T.ArrayType):
        size = _array_bytes(col, dtype.elementType)
    elif isinstance(dtype, T.MapType):
        size = (
            F.lit(8)
            + _array_bytes(F.map_keys(col), dtype.keyType)
            + _array_bytes(F.map_values(col), dtype.valueType)
        )
    elif dtype.simpleString() in _ELEMENT_BYTES or isinstance(dtype, T.NullType):
        return F.lit(0)
    else:
        raise SkewlabInputError(f"no UnsafeRow size for a state column of type {dtype}")
    return F.coalesce(size, F.lit(0))


def _array_bytes(col, element):
    """An ``UnsafeArrayData``: its element count, null bitmap, packed elements (8 bytes each
    for a variable-length element: its offset and size) and their variable-length data."""
    from pyspark.sql import functions as F

    n = F.size(col)
    width = _ELEMENT_BYTES.get(element.simpleString(), 8)
    size = F.lit(8) + F.floor((n + F.lit(63)) / F.lit(64)) * F.lit(8) + _round8(n * F.lit(width))
    if element.simpleString() not in _ELEMENT_BYTES:
        size = size + F.aggregate(
            col, F.lit(0).cast("long"), lambda acc, x: acc + _variable_bytes(x, element)
        )
    return size


def unsafe_row_bytes(col, schema):
    """A Spark column: the bytes of ``col`` (a struct of ``schema``) as an ``UnsafeRow`` --
    8 bytes of null bitmap per 64 fields, 8 bytes per field, and each variable-length field's
    data rounded up to 8 bytes (strings and binaries; structs, arrays and maps nested).

    Example::

        >>> from pyspark.sql import functions as F, types as T
        >>> schema = T.StructType([T.StructField("page", T.StringType()),
        ...                        T.StructField("user", T.LongType())])
        >>> row = F.struct(F.lit("hot").alias("page"), F.lit(1).alias("user"))  # doctest: +SKIP
        >>> spark.range(1).select(unsafe_row_bytes(row, schema)).first()[0]  # doctest: +SKIP
        32
    """
    from pyspark.sql import functions as F

    n = len(schema.fields)
    fixed = ((n + 63) // 64) * 8 + 8 * n
    size = F.lit(fixed).cast("long")
    for f in schema.fields:
        size = size + _variable_bytes(col[f.name], f.dataType)
    return F.when(col.isNull(), F.lit(0)).otherwise(size)


def _stores(spark, root: Path) -> list[dict[str, Any]]:
    """One entry per store to read: from ``state-metadata``, each ``transformWithState``
    state variable a store of its own; a checkpoint without operator metadata (an older
    Spark's) by its folders, each operator's ``default`` store."""
    from skewlab.engine.streaming.state_store import state_metadata

    try:
        meta = state_metadata(spark, root)
    except Exception:  # noqa: BLE001 -- no metadata: read the folders instead
        meta = None
    out = []
    if meta is None or not len(meta):
        for op in sorted((root / "state").iterdir(), key=lambda p: p.name):
            if op.is_dir() and op.name.isdigit():
                parts = [p for p in op.iterdir() if p.is_dir() and p.name.isdigit()]
                out.append(dict(operator_id=int(op.name), operator="(no metadata)",
                                store="default", state_variable=None,
                                num_partitions=len(parts), batch=None))  # fmt: skip
        return out
    for r in meta.itertuples():
        base = dict(operator_id=int(r.operatorId), operator=str(r.operatorName),
                    store=str(r.stateStoreName), num_partitions=int(r.numPartitions),
                    batch=int(r.maxBatchId))  # fmt: skip
        props = json.loads(r.operatorProperties) if r.operatorProperties else {}
        variables = props.get("stateVariables") or []
        if r.operatorName in _STATE_VARIABLE_OPERATORS and variables:
            out += [{**base, "state_variable": v["stateName"]} for v in variables]
        else:
            out.append({**base, "state_variable": None})
    return out


def _placement_key(frame, fields: Sequence[str], partitions: int) -> tuple[str, ...] | None:
    """The longest leading fields of the state key whose Spark hash placement reproduces every
    row's ``partition_id`` (``None``: none does)."""
    from pyspark.sql import functions as F

    for n in range(len(fields), 0, -1):
        cols = [F.col("key")[f] for f in fields[:n]]
        placed = F.pmod(F.hash(*cols), F.lit(partitions))
        if frame.where(placed != F.col("partition_id")).limit(1).count() == 0:
            return tuple(fields[:n])
    return None


def _loads(rows, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    by = {int(r["p"]): (int(r["rows"]), int(r["bytes"])) for r in rows}
    return (tuple(by.get(i, (0, 0))[0] for i in range(n)),
            tuple(by.get(i, (0, 0))[1] for i in range(n)))  # fmt: skip


def _read_store(spark, root: Path, entry: dict, key: str | None, top: int,
                partition_counts: Sequence[int] | None) -> StateStore:  # fmt: skip
    """One store read (see the module doc); a failure of Spark's reading it -- when the data
    source is built or when its first job runs -- is its ``unread`` line, Spark's own cause."""
    reader = spark.read.format("statestore").option("operatorId", entry["operator_id"])
    if entry["state_variable"] is not None:
        reader = reader.option("stateVarName", entry["state_variable"])
    elif entry["store"] != "default":
        reader = reader.option("storeName", entry["store"])
    try:
        return _measure_store(reader.load(str(root)), entry, key, top, partition_counts)
    except SkewlabInputError:
        raise
    except Exception as failed:  # noqa: BLE001 -- one line, and the other stores are read
        return StateStore(**entry, unread=failure_cause(str(failed), 300))


def _measure_store(frame, entry: dict, key: str | None, top: int,
                   partition_counts: Sequence[int] | None) -> StateStore:  # fmt: skip
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    fields = tuple(f.name for f in frame.schema["key"].dataType.fields)
    columns = [c for c in frame.columns if c != "partition_id"]
    # a struct column is a row of its own (the key, the value); another column (a flattened
    # list's element, a map's key or value) one field's 8 bytes and its variable-length data
    size = sum(
        (unsafe_row_bytes(F.col(c), frame.schema[c].dataType)
         if isinstance(frame.schema[c].dataType, T.StructType)
         else _variable_bytes(F.col(c), frame.schema[c].dataType) + F.lit(8))
        for c in columns
    )  # fmt: skip
    sized = frame.select("key", "partition_id", size.alias("bytes")).cache()
    try:
        per_partition = sized.groupBy(F.col("partition_id").alias("p")).agg(
            F.count(F.lit(1)).alias("rows"), F.sum("bytes").alias("bytes")
        ).collect()  # fmt: skip
        n = entry["num_partitions"] or (1 + max((int(r["p"]) for r in per_partition), default=0))
        rows, bytes_ = _loads(per_partition, n)
        grouped = F.col("key")[key] if key in fields else F.col("key")
        keys = (
            sized.groupBy(grouped.alias("k"))
            .agg(F.count(F.lit(1)).alias("rows"), F.sum("bytes").alias("bytes"),
                 F.min("partition_id").alias("first"), F.max("partition_id").alias("last"))
            .orderBy(F.desc("bytes"), F.desc("rows"))
            .limit(top)
            .collect()
        )  # fmt: skip
        top_keys = tuple(
            StateKey(
                key=_key_value(r["k"]), rows=int(r["rows"]), bytes=int(r["bytes"]),
                partition=int(r["first"]) if r["first"] == r["last"] else None,
            )
            for r in keys
        )  # fmt: skip
        placement_key = _placement_key(sized, fields, n)
        placements = []
        if placement_key is not None:
            counts = partition_counts or sorted({m for m in (n // 2, 2 * n) if m >= 2})
            for m in counts:
                placed = F.pmod(F.hash(*[F.col("key")[f] for f in placement_key]), F.lit(m))
                got = sized.groupBy(placed.alias("p")).agg(
                    F.count(F.lit(1)).alias("rows"), F.sum("bytes").alias("bytes")
                ).collect()  # fmt: skip
                r_m, b_m = _loads(got, m)
                summary = load_summary(b_m)
                placements.append(StatePlacement(m, r_m, b_m, summary["busiest_share"],
                                                 summary["skew_score"]))  # fmt: skip
    finally:
        sized.unpersist()
    summary = load_summary(bytes_) if sum(bytes_) else {"busiest_share": 0.0, "skew_score": 0.0}
    return StateStore(
        **entry,
        rows=sum(rows),
        bytes=sum(bytes_),
        partitions=tuple(
            StatePartition(i, r, b) for i, (r, b) in enumerate(zip(rows, bytes_, strict=True))
        ),
        top_keys=top_keys,
        key_fields=fields,
        placement_key=placement_key,
        placement=tuple(placements),
        busiest_share=summary["busiest_share"],
        skew_score=summary["skew_score"],
    )


def _key_value(value: Any) -> Any:
    """A key as the text shows it: a field's value, or the whole key's fields joined."""
    if hasattr(value, "asDict"):
        return ", ".join(str(v) for v in value.asDict().values())
    return value


def read_state(
    checkpoint: str | Path,
    *,
    key: str | None = None,
    top: int = 20,
    partitions: Sequence[int] | None = None,
    spark=None,
) -> StateReport:
    """Every state store of the checkpoint's stateful operators, read at its latest committed
    batch (see the module doc): rows and bytes per state partition, the ``top`` keys holding
    the most state (grouped by the state key's field ``key``, else by the whole state key),
    and the same state placed over each of ``partitions`` state partitions (default: half and
    twice the checkpoint's).

    Example::

        >>> report = read_state("/tmp/query/checkpoint", key="tweet_id")     # doctest: +SKIP
        >>> [s.name for s in report.stores]                                  # doctest: +SKIP
        ['transformWithStateInPandasExec #0 stats']
    """
    root = check_checkpoint(checkpoint)
    top = check_whole("top (--top)", top, 1)
    counts = None if partitions is None else [
        check_whole("state partitions (--state-partitions)", m, 1) for m in partitions
    ]  # fmt: skip
    if spark is None:
        from skewlab.doctor.spark_connect import doctor_spark

        spark = doctor_spark()
    stores = [_read_store(spark, root, e, key, top, counts) for e in _stores(spark, root)]
    read = [s for s in stores if s.unread is None]
    if key is not None and read and not any(key in s.key_fields for s in read):
        fields = sorted({f for s in read for f in s.key_fields})
        raise SkewlabInputError(
            f"no state key has a field {key!r}: the state keys' fields are {', '.join(fields)}"
        )
    return StateReport(str(checkpoint), key, tuple(stores))


def count_stream(
    spark, records, key: str, directory: str | Path | None = None, *, partitions: int
) -> Path:
    """A checkpoint to read when you have none at hand: ``records`` (a DataFrame) written as a
    Parquet source under ``directory`` (default: a temporary folder, removed when Python
    exits) and counted per ``key`` by Spark's own streaming aggregation (``groupBy(key)
    .count()`` over ``partitions`` state partitions, one micro-batch, every record); returns
    the query's checkpoint, ``directory/checkpoint``.

    Example::

        >>> checkpoint = count_stream(spark, records, "tweet_id", partitions=8)  # doctest: +SKIP
        >>> read_state(checkpoint).stores[0].rows                               # doctest: +SKIP
        2000
    """
    partitions = check_whole("state partitions", partitions, 1)
    if key not in records.columns:
        raise SkewlabInputError(f"no column {key!r}: the records have {', '.join(records.columns)}")
    if directory is None:
        directory = tempfile.mkdtemp(prefix="skewlab-state-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    root = Path(directory)
    if root.exists() and any(root.iterdir()):
        raise SkewlabInputError(f"{str(directory)!r} is not empty: give a new or empty folder")
    source = root / "source"
    records.write.parquet(str(source))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        query = (
            spark.readStream.schema(records.schema)
            .parquet(str(source))
            .groupBy(key)
            .count()
            .writeStream.format("noop")
            .outputMode("update")
            .option("checkpointLocation", str(root / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    return root / "checkpoint"
