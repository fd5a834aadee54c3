"""The doctor's result as typed records: :class:`Diagnosis` and its sections, written to JSON
with a schema version (``skewlab doctor --json``) and read back from it.

The sections a reader needs to name -- the input, the hot keys, the Zipf fit, the hottest key's
peak, each engine's loads, the parallelism plan -- are records with their fields; the remedies
(:func:`~skewlab.doctor.remedies.predict_remedies`), the cache replays, the parallelism sweep,
the target and the sketch keep the JSON form their modules document.

Example::

    >>> d = Diagnosis.from_json(EXAMPLE)
    >>> d.hot_keys.top[0].key, d.engines["spark"].partitions, d.engines["flink"].subtasks[0].loads
    ('a', 2, (6, 2))
    >>> Diagnosis.from_json(d.to_json()) == d and d.to_json()["schema_version"] == SCHEMA_VERSION
    True
    >>> Diagnosis.from_json({**EXAMPLE, "schema_version": 99})
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: a diagnosis of schema version 99: this skewlab reads version 1 (and files without one, written before versions)
"""  # noqa: E501

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from skewlab.errors import SkewlabInputError

__all__ = [
    "EXAMPLE",
    "SCHEMA_VERSION",
    "Diagnosis",
    "FlinkLoads",
    "HotKey",
    "HotKeys",
    "InputSummary",
    "LoadSummary",
    "ParallelismPlan",
    "PartitionLoads",
    "Peak",
    "SubtaskLoads",
    "ZipfFit",
]

#: The version of the JSON a diagnosis is written as; a reader refuses any other.
SCHEMA_VERSION = 1


def _tuple(values) -> tuple:
    return tuple(values) if values is not None else ()


@dataclass(frozen=True)
class InputSummary:
    """The records read: their key column and its Spark type, how many, how many with a null
    key (counted apart, never dropped), and how many distinct keys (exact)."""

    key: str
    key_type: str
    records: int
    null_keys: int
    null_share: float
    distinct_keys: int
    distinct_method: str = "exact"
    path: str | None = None
    keys_redacted: bool = False


@dataclass(frozen=True)
class HotKey:
    """One of the hottest keys: its rank, its records and their share of all records."""

    rank: int
    key: Any
    records: int
    share: float


@dataclass(frozen=True)
class HotKeys:
    """The hottest keys (exact counts), the hottest's share of the keyed records, the speedup no
    parallelism passes (one over that share), and the source-side sketch's answer if asked."""

    method: str
    top: tuple[HotKey, ...]
    hottest_share: float
    max_speedup: float | None
    sketch: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HotKeys:
        top = tuple(HotKey(**row) for row in data["top"])
        return cls(**{**data, "top": top, "sketch": _as_lists(data.get("sketch"))})


@dataclass(frozen=True)
class ZipfFit:
    """A Zipf exponent fitted by least squares on log count over log rank, with its R^2."""

    exponent: float
    r_squared: float
    ranks: int


@dataclass(frozen=True)
class Peak:
    """The hottest key's most records in one window of the time column."""

    key: Any
    window_seconds: float
    windows: int
    peak_records: int
    peak_records_per_second: float


@dataclass(frozen=True)
class LoadSummary:
    """Records per bucket summarised: the busiest over the mean, its share, FLIP-418's skew
    score (:func:`skewlab.engine.skew.load_summary`)."""

    max_over_mean: float
    busiest_share: float
    skew_score: float


@dataclass(frozen=True)
class SubtaskLoads(LoadSummary):
    """Records per Flink subtask at one parallelism."""

    parallelism: int = 0
    loads: tuple[int, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubtaskLoads:
        return cls(**{**data, "loads": _tuple(data["loads"])})


@dataclass(frozen=True)
class FlinkLoads:
    """Flink's routing: records per key group (``max_parallelism`` of them) and per subtask at
    each parallelism asked; records with a null key are refused by ``keyBy``."""

    max_parallelism: int
    key_group_loads: tuple[int, ...]
    key_groups: LoadSummary
    null_keys_refused: int
    subtasks: tuple[SubtaskLoads, ...]
    unit: str = "subtask"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FlinkLoads:
        return cls(
            max_parallelism=data["max_parallelism"],
            key_group_loads=_tuple(data["key_group_loads"]),
            key_groups=LoadSummary(**data["key_groups"]),
            null_keys_refused=data["null_keys_refused"],
            subtasks=tuple(SubtaskLoads.from_json(s) for s in data["subtasks"]),
            unit=data.get("unit", "subtask"),
        )

    def at(self, parallelism: int | None) -> SubtaskLoads:
        """The subtasks at ``parallelism`` (the largest asked where not among them)."""
        return next((s for s in self.subtasks if s.parallelism == parallelism), self.subtasks[-1])


@dataclass(frozen=True)
class PartitionLoads(LoadSummary):
    """Spark's or Kafka's routing: records per partition, and whether null keys are among
    them (Spark hashes them; Kafka sends a keyless record to its sticky partition)."""

    partitions: int = 0
    null_keys_included: bool = False
    loads: tuple[int, ...] = ()
    unit: str = "partition"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PartitionLoads:
        return cls(**{**data, "loads": _tuple(data["loads"])})


@dataclass(frozen=True)
class ParallelismPlan:
    """Flink's max parallelism, the parallelisms asked, the sweep of every P up to it (rows as
    :func:`skewlab.engine.skew.parallelism_sweep` gives them) and the target answered, if any."""

    max_parallelism: int
    asked: tuple[int, ...]
    sweep: list[dict[str, Any]] | None = None
    target: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParallelismPlan:
        return cls(**{
            **data, "asked": _tuple(data["asked"]), "sweep": _as_lists(data.get("sweep")),
            "target": _as_lists(data.get("target")),
        })  # fmt: skip

    @property
    def largest(self) -> int | None:
        """The largest parallelism asked: where the verdict speaks."""
        return max(self.asked) if self.asked else None


@dataclass(frozen=True)
class Diagnosis:
    """What :func:`~skewlab.doctor.diagnosis.diagnose` found (see the module doc)."""

    input: InputSummary
    hot_keys: HotKeys
    engines: dict[str, FlinkLoads | PartitionLoads]
    parallelism: ParallelismPlan
    zipf: ZipfFit | None = None
    peak: Peak | None = None
    cache: list[dict[str, Any]] = field(default_factory=list)
    remedies: dict[str, Any] | None = None
    remedies_unpriced: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The diagnosis as JSON-ready data (tuples as lists), with its schema version."""
        return {"schema_version": SCHEMA_VERSION, **_as_lists(dataclasses.asdict(self))}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Diagnosis:
        """A diagnosis from :meth:`to_json`'s data (a file ``skewlab doctor --json`` wrote); any
        schema version but :data:`SCHEMA_VERSION` raises
        :class:`~skewlab.errors.SkewlabInputError`."""
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise SkewlabInputError(
                f"a diagnosis of schema version {version}: this skewlab reads version "
                f"{SCHEMA_VERSION} (and files without one, written before versions)"
            )
        engines = {
            name: FlinkLoads.from_json(e) if name == "flink" else PartitionLoads.from_json(e)
            for name, e in data["engines"].items()
        }
        return cls(
            input=InputSummary(**data["input"]),
            hot_keys=HotKeys.from_json(data["hot_keys"]),
            engines=engines,
            parallelism=ParallelismPlan.from_json(data["parallelism"]),
            zipf=ZipfFit(**data["zipf"]) if data.get("zipf") else None,
            peak=Peak(**data["peak"]) if data.get("peak") else None,
            cache=_as_lists(list(data.get("cache") or [])),
            remedies=_as_lists(data.get("remedies")),
            remedies_unpriced=data.get("remedies_unpriced"),
        )

    def replace(self, **changes: Any) -> Diagnosis:
        """A copy with ``changes`` (fields of this record)."""
        return dataclasses.replace(self, **changes)


def _as_lists(value: Any) -> Any:
    """``value`` with every tuple a list, nested (JSON's form)."""
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_lists(v) for v in value]
    return value


#: A small diagnosis as JSON (the examples' and tests' input).
EXAMPLE: dict[str, Any] = {
    "input": {"key": "k", "key_type": "string", "records": 10, "null_keys": 0,
              "null_share": 0.0, "distinct_keys": 2, "distinct_method": "exact"},
    "hot_keys": {"method": "exact", "top": [{"rank": 1, "key": "a", "records": 8,
                                             "share": 0.8}],
                 "hottest_share": 0.8, "max_speedup": 1.25, "sketch": None},
    "engines": {
        "flink": {"max_parallelism": 128, "key_group_loads": [8, 2] + [0] * 126,
                  "key_groups": {"max_over_mean": 102.4, "busiest_share": 0.8,
                                 "skew_score": 100.0},
                  "null_keys_refused": 0,
                  "subtasks": [{"parallelism": 2, "loads": [6, 2], "max_over_mean": 1.2,
                                "busiest_share": 0.6, "skew_score": 50.0}]},
        "spark": {"partitions": 2, "null_keys_included": True, "loads": [8, 2],
                  "max_over_mean": 1.6, "busiest_share": 0.8, "skew_score": 75.0},
    },
    "parallelism": {"max_parallelism": 128, "asked": [2], "sweep": None, "target": None},
    "zipf": None, "peak": None, "cache": [], "remedies": None, "remedies_unpriced": None,
}  # fmt: skip
