"""Seed 002's experiment: restore at a new parallelism three ways, on real savepoints.

Three parts, each on real files:

1. **The seed's example** (Figure 3): keys 0..20, an identity hash, 10 key groups, parallelism
   3 -> 4. Without key groups (``hash % p``, Figure 3A) a new subtask's keys lie in every old
   subtask's file; with key groups (Figure 3B) in one or two contiguous ranges. A snapshot of
   the 21 keys is written as 3 subtask files and every new subtask restores its keys three
   ways: ``read_all`` (read every file, filter), ``per_key_index`` (read the index, then one
   read per key), ``key_groups`` (one sequential read per intersecting range).
2. **Realistic cases**: max parallelism 128, ``p -> p'`` in ``cases`` (3 -> 4, 4 -> 2, 2 -> 12),
   uniform and Zipf views. Each case is a real run on Spark: ``naive`` (RocksDB) stops with a
   savepoint after half the views and resumes at ``p'`` (its digest checked against the
   reference); the savepoint's keyed state is then restored by every new subtask the three ways.
3. **RocksDB's native restore** for the first case: the old subtasks' RocksDB instances (rebuilt
   from the savepoint) snapshot natively, and every new subtask restores by ``clip``, ``copy`` and
   ``ingest`` (:mod:`skewlab.state.rocksdb_native`).

Each restore row has bytes read, read requests, files opened, keys read and kept, the measured
time (on this machine, from the page cache: the files were just written) and the modelled time
of its requests under three storages (:mod:`skewlab.iomodel.restore_time`): seed 000's EBS
profile, this machine's disk (``local``, probed) and an object store (default parameters).

===================  =============================================================  ==========
way                  reads, per new subtask                                          requests
===================  =============================================================  ==========
``read_all``         every old file, whole                                           p
``per_key_index``    every old index, whole; then each owned key's entry             p + keys
``key_groups``       the intersecting key-group range of each overlapping old file   1 or 2 ..
===================  =============================================================  ==========

Summary keys: ``bytes_read_ratio_naive_over_keygroups`` and
``requests_ratio_index_over_keygroups`` (totals over the realistic cases),
``digest_equal_after_rescale`` (every case's resumed run), ``keygroups_read_only_owned_bytes``
(each new subtask read exactly the bytes of the entries it kept and of its key groups'
checksums, counted apart), and the seed
example's per-way totals.

Example::

    >>> table = key_assignment_table(range(21), max_parallelism=10, old_parallelism=3,
    ...                              new_parallelism=4)
    >>> table.loc[table.key == 13, ["key_group", "old_subtask", "new_subtask"]].values.tolist()
    [[3, 0, 1]]
    >>> result = run_experiment("tiny")        # doctest: +SKIP
    >>> result.summary["digest_equal_after_rescale"]   # doctest: +SKIP
    True
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from skewlab.aggregates.digest import result_digest
from skewlab.aggregates.reference import spark_reference_aggregate
from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.config import JobConfig
from skewlab.engine.savepoint import Savepoint
from skewlab.engine.session import get_spark
from skewlab.experiments.chapters import size_settings
from skewlab.experiments.results import BenchResult
from skewlab.inputs.views import ViewSpec, generate_views
from skewlab.iomodel.disk_probe import local_disk_profile
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.iomodel.restore_time import StorageReadModel, object_store_model
from skewlab.state import create_backend
from skewlab.state.api import PickleSerializer
from skewlab.state.key_groups import (
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
)
from skewlab.state.restore import RESTORE_WAYS, RestoreIO, check_new_parallelism, restore_subtask
from skewlab.state.rocksdb import encode_key
from skewlab.state.rocksdb_native import NATIVE_METHODS, native_snapshot, restore_native
from skewlab.state.snapshot import (
    BLOCK_CHECKSUM,
    KeyedStateSnapshot,
    add_per_key_index,
    write_keyed_snapshot,
)
from skewlab.strategies import Naive
from skewlab.strategies.resume import run_with_savepoint

__all__ = [
    "HEADLINES",
    "EXPERIMENT",
    "SEED_EXAMPLE",
    "in_flight_table",
    "key_assignment_table",
    "restore_table",
    "run_experiment",
    "seed_example",
    "source_offsets",
    "storage_models",
    "summarize",
]

EXPERIMENT = "rescaling"
#: What the headline ratios are computed from: bytes read and read requests of the restores.
HEADLINE_MEASURE = "bytes_read_and_requests"
#: The seed's Figure 3: keys 0..20, identity hash, 10 key groups, 3 -> 4.
SEED_EXAMPLE = {"keys": 21, "max_parallelism": 10, "old_parallelism": 3, "new_parallelism": 4}
#: The headline ratios (summary keys); the seed published no figures for them.
HEADLINES: dict[str, float | None] = {
    "bytes_read_ratio_naive_over_keygroups": None,
    "requests_ratio_index_over_keygroups": None,
}


def key_assignment_table(
    keys: Iterable[int],
    *,
    max_parallelism: int,
    old_parallelism: int,
    new_parallelism: int,
) -> pd.DataFrame:
    """Where each key goes, with an identity hash as in the seed's Figure 3: without key groups
    (``key % p``: ``old_modulo`` / ``new_modulo``) and with them (``key_group = key % maxP``,
    ranges: ``old_subtask`` / ``new_subtask``).

    Example::

        >>> t = key_assignment_table(range(4), max_parallelism=4, old_parallelism=2,
        ...                          new_parallelism=4)
        >>> t.new_subtask.tolist(), t.new_modulo.tolist()
        ([0, 1, 2, 3], [0, 1, 2, 3])
    """
    check_new_parallelism(old_parallelism, max_parallelism)
    check_new_parallelism(new_parallelism, max_parallelism)
    rows = []
    for key in keys:
        group = key % max_parallelism
        rows.append(
            {
                "key": key,
                "key_group": group,
                "old_subtask": compute_operator_index_for_key_group(
                    max_parallelism, old_parallelism, group
                ),
                "new_subtask": compute_operator_index_for_key_group(
                    max_parallelism, new_parallelism, group
                ),
                "old_modulo": key % old_parallelism,
                "new_modulo": key % new_parallelism,
            }
        )
    return pd.DataFrame(rows)


def storage_models(local_probe: tuple[float, float] = (2, 0.3)) -> dict[str, StorageReadModel]:
    """The storages the restore is priced on: seed 000's EBS, this machine's disk (probed for
    ``(size_mb, seconds)`` unless ``skewlab probe-disk`` saved a profile) and an object store."""
    size_mb, seconds = local_probe
    return {
        "ebs": StorageReadModel.from_profile(load_disk_profile("ebs-article")),
        "local": StorageReadModel.from_profile(
            local_disk_profile(size_mb=size_mb, seconds=seconds, progress=False)
        ),
        "object_store": object_store_model(),
    }


def restore_table(
    snapshot: KeyedStateSnapshot,
    parallelism: int,
    models: dict[str, StorageReadModel],
    *,
    ways: Sequence[str] = RESTORE_WAYS,
    **labels: Any,
) -> list[dict[str, Any]]:
    """One row per (way, new subtask of ``parallelism``): the
    :class:`~skewlab.state.restore.RestoreIO` counters, the owned key groups' bytes (counted
    apart: the entries kept and each owned block's checksum) and the modelled time under each
    storage; ``labels`` go in every row."""
    rows = []
    for subtask in range(parallelism):
        owned_bytes = None
        for way in ways:
            entries, io = restore_subtask(snapshot, parallelism, subtask, way)
            if owned_bytes is None:  # the owned entries, and each owned key group's checksum
                owned = compute_key_group_range_for_operator_index(
                    snapshot.max_parallelism, parallelism, subtask
                )
                owned_bytes = sum(
                    2 + len(encode_key(kg, key)) + 4 + len(raw) for kg, key, raw in entries
                ) + BLOCK_CHECKSUM.size * len(owned)
            rows.append(_row(io, owned_bytes, models, labels))
    return rows


def _row(io: RestoreIO, owned_bytes: int | None, models, labels) -> dict[str, Any]:
    row = {**labels, **io.to_row(), "owned_bytes": owned_bytes}
    for name, model in models.items():
        row[f"modelled_seconds_{name}"] = model.seconds(io.request_bytes)
    row["request_bytes"] = list(io.request_bytes)
    return row


def seed_example(directory: str | Path, models: dict[str, StorageReadModel]) -> list[dict]:
    """The seed's Figure 3 on real files: the 21 keys' snapshot at 3 subtasks, restored at 4 by
    every way; the rows of :func:`restore_table` (``case`` = ``"seed 3->4"``)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    example = SEED_EXAMPLE
    max_p, old_p = example["max_parallelism"], example["old_parallelism"]
    handles = []
    for subtask in range(old_p):
        kgs = compute_key_group_range_for_operator_index(max_p, old_p, subtask)
        with create_backend("heap", key_group_range=kgs) as backend:
            for key in range(example["keys"]):
                if key % max_p in kgs:
                    backend.put(key % max_p, key, f"state of key {key}")
            handles.append(
                write_keyed_snapshot(backend, directory, subtask, PickleSerializer(), index=True)
            )
    snapshot = KeyedStateSnapshot.create(directory, max_p, PickleSerializer(), handles)
    return restore_table(
        snapshot,
        example["new_parallelism"],
        models,
        case="seed 3->4",
        distribution="identity",
        old_parallelism=old_p,
        new_parallelism=example["new_parallelism"],
    )


def _native_rows(snapshot: KeyedStateSnapshot, new_p: int, root: Path, labels) -> list[dict]:
    """RocksDB's native restore, every method, for every new subtask (keys checked against the
    key-group way)."""
    loads = StatsSerializer.loads
    handles = []
    for i, handle in enumerate(snapshot.handles):
        with create_backend(
            "rocksdb", key_group_range=handle.key_group_range, serializer=StatsSerializer
        ) as old:
            entries, _ = restore_subtask(snapshot, snapshot.parallelism, i, loads=loads)
            old.restore(entries)
            handles.append(native_snapshot(old, root / f"native-{i}"))
    rows = []
    for subtask in range(new_p):
        owned = compute_key_group_range_for_operator_index(snapshot.max_parallelism, new_p, subtask)
        expected = len(restore_subtask(snapshot, new_p, subtask)[0])
        for method in NATIVE_METHODS:
            with create_backend(
                "rocksdb", key_group_range=owned, serializer=StatsSerializer
            ) as new:
                io = restore_native(handles, new, method)
            io.subtask = subtask
            if io.keys_kept != expected:
                raise RuntimeError(f"native {method} restored {io.keys_kept} keys, not {expected}")
            rows.append({**labels, **io.to_row(), "owned_bytes": None})
    return rows


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    parallelism: int | None = None,
    cases: Sequence[tuple[int, int]] | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Run the rescale experiment; see the module doc. ``runs`` and ``parallelism`` are not
    used (the cases name their parallelisms; each restore is one measurement)."""
    from tqdm.auto import tqdm

    settings = size_settings(EXPERIMENT, size)
    cases = tuple(tuple(c) for c in (cases or settings["cases"]))
    max_p = settings["max_parallelism"]
    for old_p, new_p in cases:
        check_new_parallelism(old_p, max_p)
        check_new_parallelism(new_p, max_p)
    specs = {
        dist: ViewSpec(
            settings["n_views"],
            settings["n_users"],
            settings["n_tweets"],
            dist,
            settings.get("skew", 1.1) if dist == "zipf" else None,
            seed=2,
        )  # fmt: skip
        for dist in settings["distributions"]
    }
    models = storage_models((settings["probe_size_mb"], settings["probe_seconds"]))
    spark = spark or get_spark()
    scratch = Path(tempfile.mkdtemp(prefix="skewlab-rescale-"))
    rows: list[dict] = []
    digests: list[bool] = []
    bar = tqdm(total=1 + len(cases) * len(specs), desc=EXPERIMENT, disable=not progress)
    try:
        rows += seed_example(scratch / "seed", models)
        bar.update()
        for dist, spec in specs.items():
            views = generate_views(spark, spec).cache()
            reference = result_digest(spark_reference_aggregate(views))
            for number, (old_p, new_p) in enumerate(cases):
                bar.set_postfix_str(f"{dist} {old_p}->{new_p}")
                path = scratch / f"{dist}-{old_p}-{new_p}"
                run = run_with_savepoint(
                    views, Naive(backend="rocksdb"),
                    JobConfig(parallelism=old_p, max_parallelism=max_p, disk_profile=None),
                    savepoint_at=spec.n_views // 2, resume_parallelism=new_p, path=path,
                    spark=spark,
                )  # fmt: skip
                digests.append(run.result_digest == reference)
                keyed = Savepoint.load(path).operators["1:naive"].keyed["value"]
                keyed = add_per_key_index(keyed)
                labels = {"case": f"{old_p}->{new_p}", "distribution": dist,
                          "old_parallelism": old_p, "new_parallelism": new_p}  # fmt: skip
                rows += restore_table(keyed, new_p, models, **labels)
                if number == 0:
                    rows += _native_rows(keyed, new_p, path, labels)
                bar.update()
            views.unpersist()
    finally:
        bar.close()
        shutil.rmtree(scratch, ignore_errors=True)
    summary = summarize(rows)
    summary["digest_equal_after_rescale"] = bool(digests) and all(digests)
    summary["all_digests_match"] = summary["digest_equal_after_rescale"]
    summary["storages"] = {name: model.source for name, model in models.items()}
    return BenchResult(EXPERIMENT, size, [_without_lists(r) for r in rows], summary)


def _without_lists(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "request_bytes"}


def _total(rows, way: str, field: str) -> float:
    return sum(r[field] for r in rows if r["way"] == way)


def summarize(rows: list[dict]) -> dict[str, Any]:
    """Totals per way over the realistic cases and the seed example, their ratios, and whether
    every key-group restore read only the bytes of the entries it kept."""
    seed = [r for r in rows if r["case"].startswith("seed")]
    real = [r for r in rows if not r["case"].startswith("seed")]
    summary: dict[str, Any] = {"headline_measure": HEADLINE_MEASURE}
    for label, part in (("seed", seed), ("cases", real)):
        for way in RESTORE_WAYS:
            for field in ("bytes_read", "requests", "files_opened", "keys_read"):
                summary[f"{label}_{way}_{field}"] = _total(part, way, field)
    kg_bytes = summary["cases_key_groups_bytes_read"]
    kg_requests = summary["cases_key_groups_requests"]
    summary["bytes_read_ratio_naive_over_keygroups"] = (
        summary["cases_read_all_bytes_read"] / kg_bytes if kg_bytes else None
    )
    summary["requests_ratio_index_over_keygroups"] = (
        summary["cases_per_key_index_requests"] / kg_requests if kg_requests else None
    )
    keygroup_rows = [r for r in rows if r["way"] == "key_groups"]
    summary["keygroups_read_only_owned_bytes"] = all(
        r["bytes_read"] == r["owned_bytes"] for r in keygroup_rows
    )
    for model in ("ebs", "local", "object_store"):
        column = f"modelled_seconds_{model}"
        for way in RESTORE_WAYS:
            slowest: dict[tuple[str, str], float] = {}
            for r in real:
                if r["way"] == way and column in r:
                    case = (r["case"], r["distribution"])
                    slowest[case] = max(slowest.get(case, 0.0), r[column])
            # new subtasks restore in parallel: a case's time is its slowest subtask's
            summary[f"cases_{way}_job_seconds_{model}"] = sum(slowest.values())
    return summary


def source_offsets(partitions: int, parallelism: int) -> list[list[str]]:
    """A Kafka-like source's operator state, the seed's example: ``partition:offset`` pairs,
    partition ``i`` read by subtask ``i % parallelism`` (offsets made up as ``100 + 7 i``).

    Example::

        >>> source_offsets(4, 3)
        [['p0:100', 'p3:121'], ['p1:107'], ['p2:114']]
    """
    return [
        [f"p{i}:{100 + 7 * i}" for i in range(partitions) if i % parallelism == subtask]
        for subtask in range(parallelism)
    ]


def in_flight_table(
    views, *, parallelism: int = 2, new_parallelism: int = 3, max_count: int = 400, spark=None
) -> pd.DataFrame:
    """Seed 000's note 2 on real runs: a buffered job stopped with records in flight, the three
    ways its buffer enters the savepoint, resumed at ``new_parallelism``. Per policy: the
    in-flight elements the savepoint holds, how many split-distribute would send to a subtask
    that does not own their key, and whether the resumed run ended with the reference digest
    (the list-state policy is refused before its second job when any would be misrouted)."""
    from skewlab.errors import SkewlabInputError
    from skewlab.strategies import Buffered
    from skewlab.strategies.resume import (
        misrouted_in_flight,
        resume_from_savepoint,
        stop_with_savepoint,
    )

    spark = spark or views.sparkSession
    reference = result_digest(spark_reference_aggregate(views))
    strategy = Buffered(max_count=max_count, trigger_interval_ms=0, buffer="list")
    job = JobConfig(parallelism=parallelism, disk_profile=None)
    stop_at = views.count() // 2
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="skewlab-in-flight-"))
    try:
        for policy in ("operator_state", "flush", "keyed_state"):
            path = scratch / policy
            _, first, savepoint = stop_with_savepoint(
                views, strategy, job, savepoint_at=stop_at, path=path, in_flight=policy,
                spark=spark,
            )  # fmt: skip
            operator = savepoint.operators["1:buffered"]
            held = operator.keyed["in-flight"].entries if "in-flight" in operator.keyed else 0
            if operator.operator_state is not None:
                held = sum(
                    len(operator.operator_state.elements(i, "in-flight"))
                    for i in range(savepoint.parallelism)
                )
            wrong = sum(misrouted_in_flight(savepoint, new_parallelism))
            try:
                _, second = resume_from_savepoint(
                    views, strategy, job, savepoint, parallelism=new_parallelism,
                    in_flight=policy, spark=spark,
                )  # fmt: skip
                outcome = result_digest({**first, **second}) == reference
            except SkewlabInputError:
                outcome = "refused"
            rows.append(
                {
                    "in_flight": policy,
                    "in_flight_elements": held,
                    "misrouted_at_new_parallelism": wrong,
                    "resumed_digest_equals_reference": outcome,
                }
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return pd.DataFrame(rows)
