"""A streaming query's directory, what Spark's checkpoint in it records, and rescaling it.

A skewlab streaming query lives in one directory::

    <directory>/query.json    whose query this is: strategy, variant, precision, view set
    <directory>/checkpoint/   Spark's checkpointLocation: offsets/, commits/, state/, ...
    <directory>/source/       the source log the query reads (skewlab.inputs.stream_source)
    <directory>/sink/         the idempotent sink (skewlab.engine.streaming.sink)

:func:`claim_query_directory` refuses a directory that belongs to another query (another
strategy, variant, precision or view set) before anything runs, and says whether the query
resumes. Spark's write-ahead log is read as Spark writes it: ``offsets/<b>`` is written before
micro-batch ``b`` runs, ``commits/<b>`` after it committed, so a batch with an offset file and no
commit file is the one that did not finish (:func:`uncommitted_batch`), and the second line of
an offset file holds the settings the batch ran with (:func:`recorded_conf`).

:func:`repartition_checkpoint` calls pyspark 4.2+'s **experimental, private**
``spark._streamingCheckpointManager.repartition`` on a stopped query's checkpoint, guarded: when
the call is missing or fails, it says so and changes nothing it can avoid changing.

Example::

    >>> QueryIdentity("streaming", "per-batch", 10, "6000:ab").describe()
    'streaming, variant per-batch, precision 10, views 6000:ab'
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from skewlab.engine.streaming.failure import failure_cause
from skewlab.errors import SkewlabInputError

__all__ = [
    "QueryDirectory",
    "QueryIdentity",
    "RepartitionOutcome",
    "claim_query_directory",
    "committed_batches",
    "committed_offset",
    "recorded_conf",
    "repartition_checkpoint",
    "uncommitted_batch",
]

_IDENTITY = "query.json"


@dataclass(frozen=True)
class QueryIdentity:
    """What makes a checkpoint this query's: the strategy, its variant and precision, and the
    fingerprint of the view set it reads."""

    strategy: str
    variant: str
    precision: int
    views: str

    def describe(self) -> str:
        return (f"{self.strategy}, variant {self.variant}, precision {self.precision}, "
                f"views {self.views}")  # fmt: skip


@dataclass(frozen=True)
class QueryDirectory:
    """The layout of one query's directory (see the module doc)."""

    root: Path

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def sink(self) -> Path:
        return self.root / "sink"

    @property
    def identity_file(self) -> Path:
        return self.root / _IDENTITY

    def identity(self) -> QueryIdentity | None:
        """The query this directory belongs to (its ``query.json``), ``None`` for none; a
        ``query.json`` that is not one (damaged, edited) raises
        :class:`~skewlab.errors.SkewlabInputError` naming it."""
        if not self.identity_file.exists():
            return None
        try:
            recorded = json.loads(self.identity_file.read_text(encoding="utf-8"))
            identity = QueryIdentity(**recorded)
        except (ValueError, TypeError) as exc:  # bad JSON or UTF-8, a missing or extra field
            raise SkewlabInputError(
                f"{str(self.identity_file)!r} is damaged ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}): it must name the "
                f"query's {', '.join(f.name for f in fields(QueryIdentity))}; use a new "
                "checkpoint directory"
            ) from exc
        types = {"str": str, "int": int}  # the annotations, as strings
        wrong = [f.name for f in fields(QueryIdentity)
                 if type(getattr(identity, f.name)) is not types[f.type]]  # fmt: skip
        if wrong:
            raise SkewlabInputError(
                f"{str(self.identity_file)!r} is damaged: {', '.join(wrong)} of the wrong type; "
                "use a new checkpoint directory"
            )
        return identity

    def has_checkpoint(self) -> bool:
        return (self.checkpoint / "offsets").is_dir()


def claim_query_directory(
    directory: str | Path, identity: QueryIdentity
) -> tuple[QueryDirectory, bool]:
    """The query directory at ``directory`` for ``identity``, and whether the query resumes.

    A new or empty directory is claimed (``query.json`` written). One that holds this query's
    checkpoint resumes. Anything else -- a file, a directory of other files, another query's
    directory -- raises :class:`~skewlab.errors.SkewlabInputError`, before Spark works.

    Example::

        >>> claim_query_directory("/tmp/q", identity)       # doctest: +SKIP
        (QueryDirectory(root=PosixPath('/tmp/q')), False)
    """
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise SkewlabInputError(f"checkpoint directory {str(root)!r} is a file, not a directory")
    query = QueryDirectory(root)
    found = query.identity()
    if found is None:
        if root.exists() and any(root.iterdir()):
            raise SkewlabInputError(
                f"checkpoint directory {str(root)!r} is not empty and belongs to no skewlab "
                "streaming query: use a new directory"
            )
        root.mkdir(parents=True, exist_ok=True)
        query.identity_file.write_text(json.dumps(asdict(identity)) + "\n")
        return query, False
    if found != identity:
        raise SkewlabInputError(
            f"checkpoint directory {str(root)!r} belongs to another query ({found.describe()}), "
            f"not this one ({identity.describe()}): use a new directory"
        )
    return query, query.has_checkpoint()


def _batch_ids(directory: Path) -> list[int]:
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())


def committed_batches(checkpoint: str | Path) -> list[int]:
    """The micro-batches the checkpoint's commit log holds."""
    return _batch_ids(Path(checkpoint) / "commits")


def uncommitted_batch(checkpoint: str | Path) -> int | None:
    """The micro-batch that has an offset entry but no commit: the one that did not finish."""
    offsets = _batch_ids(Path(checkpoint) / "offsets")
    commits = set(committed_batches(checkpoint))
    pending = [b for b in offsets if b not in commits]
    return pending[-1] if pending else None


def committed_offset(checkpoint: str | Path) -> int:
    """The source offset the last committed micro-batch ended at (0 before any): where a
    resumed query starts reading (the third line of its offset file, the source's offset)."""
    commits = committed_batches(checkpoint)
    if not commits:
        return 0
    lines = (Path(checkpoint) / "offsets" / str(commits[-1])).read_text().splitlines()
    return int(json.loads(lines[2])["offset"]) if len(lines) > 2 else 0


def recorded_conf(checkpoint: str | Path, batch_id: int | None = None) -> dict[str, str]:
    """The settings Spark recorded with a micro-batch's offsets (default the latest batch):
    the state store provider and ``spark.sql.shuffle.partitions`` among them."""
    offsets = _batch_ids(Path(checkpoint) / "offsets")
    if not offsets:
        return {}
    chosen = offsets[-1] if batch_id is None else batch_id
    lines = (Path(checkpoint) / "offsets" / str(chosen)).read_text().splitlines()
    return dict(json.loads(lines[1]).get("conf", {})) if len(lines) > 1 else {}


@dataclass(frozen=True)
class RepartitionOutcome:
    """What happened to a request to rescale a checkpoint's state partitions."""

    requested: int
    done: bool
    reason: str = ""

    def describe(self) -> str:
        if self.done:
            return f"state repartitioned to {self.requested} partitions"
        return f"state NOT repartitioned to {self.requested} partitions: {self.reason}"


def repartition_checkpoint(spark, checkpoint: str | Path, partitions: int) -> RepartitionOutcome:
    """Rescale a stopped query's state to ``partitions`` partitions with pyspark's experimental,
    private ``spark._streamingCheckpointManager.repartition`` (4.2+). Never raises for the
    call itself: a missing API or a failure comes back as ``done=False`` with the reason.

    Example::

        >>> repartition_checkpoint(spark, "/tmp/q/checkpoint", 8).describe()  # doctest: +SKIP
        'state repartitioned to 8 partitions'
    """
    manager = getattr(type(spark), "_streamingCheckpointManager", None)
    if manager is None:
        return RepartitionOutcome(
            partitions, False,
            "this pyspark has no spark._streamingCheckpointManager (it came with 4.2)",
        )  # fmt: skip
    try:
        spark._streamingCheckpointManager.repartition(str(checkpoint), int(partitions))
    except Exception as exc:  # noqa: BLE001 - reported, never hidden
        return RepartitionOutcome(partitions, False, failure_cause(str(exc)))
    return RepartitionOutcome(partitions, True)
