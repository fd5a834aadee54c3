"""What the skew doctor is asked: one record of options with their defaults, checks and help,
written once. ``skewlab doctor``'s flags are built from it (:func:`add_arguments`), and
:func:`~skewlab.doctor.diagnosis.diagnose` takes it (or the same names as keyword arguments).

Every check here needs no input and runs before any Spark job; what depends on the records'
columns (the key's and the time column's types) is checked by ``diagnose`` before its first job.

Example::

    >>> options = DoctorOptions(parallelism=(4, 8), top=5)
    >>> options.engines, options.parallelism, options.window_seconds
    (('flink', 'spark', 'kafka'), (4, 8), 1.0)
    >>> DoctorOptions(sketch_threshold=1.5)
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: hot threshold (a share of the records) must be from 0.001 to below 1, got 1.5
"""  # noqa: E501

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skewlab.engine.partitioners import ENGINES
from skewlab.errors import SkewlabInputError
from skewlab.state.key_groups import UPPER_BOUND_MAX_PARALLELISM
from skewlab.validation import check_whole

__all__ = ["DEFAULT_PARALLELISM", "DoctorOptions", "ZIPF_FIT_RANKS", "add_arguments"]

#: The parallelisms looked at when the user names none.
DEFAULT_PARALLELISM = (2, 4, 8)
#: How many of the hottest keys are counted for the Zipf fit (and at most listed).
ZIPF_FIT_RANKS = 1_000


def _option(default: Any, help: str, **cli: Any) -> Any:
    """A field with its command-line help and argparse settings (``flag`` if not the name's)."""
    return field(default=default, metadata={"help": help, **cli})


@dataclass(frozen=True)
class DoctorOptions:
    """The doctor's options (see :func:`~skewlab.doctor.diagnosis.diagnose` for what each
    does); checked when made, so a bad value fails before any work."""

    time: str | None = _option(
        None,
        "a time column (timestamp, or seconds since the epoch): the hottest key's peak records "
        "per window",
    )
    window_seconds: float = _option(
        1.0, "the window of --time's peak, seconds (default 1)", type=float, metavar="S"
    )
    engines: tuple[str, ...] = _option(
        tuple(ENGINES),
        "whose routing to compute (default all)",
        flag="--engine",
        choices=(*ENGINES, "all"),
    )
    parallelism: tuple[int, ...] = _option(
        DEFAULT_PARALLELISM,
        "Flink parallelisms to show subtask by subtask (default "
        + " ".join(map(str, DEFAULT_PARALLELISM))
        + ")",
        type=int,
        nargs="+",
        metavar="P",
    )
    max_parallelism: int | None = _option(
        None,
        f"Flink's max parallelism, 1..{UPPER_BOUND_MAX_PARALLELISM} (default: Flink's default "
        "for the largest P)",
        type=int,
        metavar="M",
    )
    partitions: int | None = _option(
        None,
        "Spark's shuffle partitions and Kafka's topic partitions (default: the largest P)",
        type=int,
        metavar="N",
    )
    top: int = _option(20, "how many hot keys to list (default 20)", type=int)
    cache_entries: tuple[int, ...] = _option(
        (),
        "also replay the records through an LRU cache of N entries per subtask (at the largest "
        "P) and give its hit ratio",
        type=int,
        nargs="+",
        metavar="N",
    )
    target_rate: float | None = _option(
        None,
        "records/s into the job: with --subtask-rate, the smallest P that keeps up",
        type=float,
        metavar="R",
    )
    subtask_rate: float | None = _option(
        None,
        "records/s one subtask of your job handles (measured on your job; default: what one "
        "naive RocksDB subtask handles on these keys, from the cost profile)",
        type=float,
        metavar="C",
    )
    remedies: bool = _option(
        True,
        "skip pricing the remedies (no replay of the records)",
        flag="--no-remedies",
        action="store_false",
    )
    costs: str | Path | dict[str, Any] | None = _option(
        None,
        "a 'skewlab bench remedy_costs' result file to price the remedies with (default: the "
        "newest on this machine, else the shipped reference)",
        metavar="FILE",
    )
    disk_profile: str | Path | None = _option(
        None,
        "model the state accesses that reach a disk on this profile: ebs-article (seed 000's "
        "EBS), local (skewlab probe-disk), or an fio JSON file (default: none, state on this "
        "machine as measured)",
        metavar="NAME|FILE",
    )
    bounded: bool = _option(
        False, "the input is bounded (a batch): sorted input is weighed too", action="store_true"
    )
    salt_buckets: int | None = _option(
        None, "salts per key for the salted remedy (default: the largest P)", type=int, metavar="N"
    )
    sketch_threshold: float | None = _option(
        None,
        "also find the keys holding at least this share of the records (0..1) the way a source "
        "would: a frequent-items sketch per partition (Apache DataSketches), merged, beside the "
        "exact counts with its error bound",
        type=float,
        metavar="SHARE",
    )

    def __post_init__(self) -> None:
        engines = self.engines
        if engines is None or engines == "all" or engines == ("all",):
            engines = tuple(ENGINES)
        elif isinstance(engines, str):
            engines = (engines,)
        unknown = [e for e in engines if e not in ENGINES]
        if unknown or not engines:
            raise SkewlabInputError(
                f"unknown engine {', '.join(map(repr, unknown)) or '(none)'}: use "
                f"{', '.join(ENGINES)} or all"
            )
        parallelism = tuple(check_whole("parallelism", p, 1) for p in self.parallelism)
        entries = tuple(check_whole("cache entries", n, 1) for n in self.cache_entries)
        # the checked values, normalised (a frozen record is set while it is being made)
        object.__setattr__(self, "engines", tuple(dict.fromkeys(engines)))
        parallelism = tuple(sorted(set(parallelism or DEFAULT_PARALLELISM)))
        object.__setattr__(self, "parallelism", parallelism)
        object.__setattr__(self, "cache_entries", entries)
        if self.max_parallelism is not None:
            check_whole(
                "max parallelism (Flink's bounds, inclusive)",
                self.max_parallelism,
                1,
                UPPER_BOUND_MAX_PARALLELISM,
            )
        if self.partitions is not None:
            check_whole("partitions", self.partitions, 1)
        check_whole("top", self.top, 1, ZIPF_FIT_RANKS)
        if self.salt_buckets is not None:
            check_whole("salt buckets", self.salt_buckets, 1)
        if not self.window_seconds > 0:
            raise SkewlabInputError(f"window seconds must be above 0, got {self.window_seconds!r}")
        threshold = self.sketch_threshold
        # at most 1 / threshold keys can hold the threshold: all among the hottest counted
        if threshold is not None and not 1 / ZIPF_FIT_RANKS <= threshold < 1:
            raise SkewlabInputError(
                f"hot threshold (a share of the records) must be from {1 / ZIPF_FIT_RANKS:g} "
                f"to below 1, got {threshold!r}"
            )
        for name, rate in (("target rate", self.target_rate), ("subtask rate", self.subtask_rate)):
            if rate is not None and not rate > 0:
                raise SkewlabInputError(f"{name} must be above 0 records/s, got {rate!r}")
        if self.subtask_rate is not None and self.target_rate is None:
            raise SkewlabInputError("a subtask rate answers a target rate: give a target rate too")
        if self.target_rate is not None and "flink" not in self.engines:
            raise SkewlabInputError(
                "a target rate asks for Flink's parallelism: include the flink engine "
                "(--engine flink or all)"
            )
        if not self.remedies and (self.disk_profile is not None or self.costs is not None):
            raise SkewlabInputError(
                "a cost or disk profile prices the remedies: leave them on, with the flink engine"
            )

    @property
    def largest_parallelism(self) -> int:
        """The largest Flink parallelism asked for: where remedies and caches are replayed."""
        return max(self.parallelism)

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> DoctorOptions:
        """The options a parsed ``skewlab doctor`` command line gives (see
        :func:`add_arguments`)."""
        return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per :class:`DoctorOptions` field, with its default, help and type from the
    record (a flag's name is the field's, dashed, unless the field names another).

    Example::

        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["--engine", "kafka", "--parallelism", "4", "--no-remedies"])
        >>> options = DoctorOptions.from_namespace(args)
        >>> options.engines, options.parallelism, options.remedies, options.top
        (('kafka',), (4,), False, 20)
    """
    for f in dataclasses.fields(DoctorOptions):
        cli = dict(f.metadata)
        flag = cli.pop("flag", "--" + f.name.replace("_", "-"))
        default = f.default
        if cli.get("nargs") == "+":
            default = list(default)
        parser.add_argument(flag, dest=f.name, default=default, **cli)
