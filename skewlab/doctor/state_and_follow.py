"""Notebook 09's two live demonstrations over one set of records, as sections to draw and as
``skewlab bench state_and_follow``:

- **the state's skew** (:func:`state_section`): the records counted per key by Spark's own
  streaming aggregation into a checkpoint made now (:func:`~skewlab.doctor.checkpoint_state.
  count_stream`), read back with Spark's state data sources (:func:`~skewlab.doctor.
  checkpoint_state.read_state`), beside the traffic: the records per partition as the
  diagnosis routes them at the state's partition count;
- **a followed stream** (:func:`follow_section`): the records dropped into a folder in
  :data:`PARTS` parts in time order, the next part as each window is counted, and followed
  (:func:`~skewlab.doctor.live_hot_keys.follow`) with :data:`WINDOW_SECONDS` windows; per window
  its hot keys.

Neither concludes a claim, and both are fixed costs of a few seconds whatever the records'
size (a streaming query's start, its micro-batches, a follow's idle wait): a quick report shows
the shipped reference's sections (``skewlab bench state_and_follow --size full
--save-reference`` made it; the registry's ``doctor_live_sections`` part says at which sizes a
notebook runs them). The benchmark runs both over the chapter's sample records at its size,
diagnosed as notebook 09 diagnoses them (without pricing remedies: the sections do not read
them).

Example::

    >>> result = run_experiment("tiny", progress=False)                    # doctest: +SKIP
    >>> StateSection.from_json(result.summary).store.rows                  # doctest: +SKIP
    435
    >>> len(FollowSection.from_json(result.summary).windows)               # doctest: +SKIP
    3
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from skewlab.doctor.checkpoint_state import StateReport, StateStore, count_stream, read_state
from skewlab.doctor.live_hot_keys import FileDrops, FollowWindow, follow
from skewlab.doctor.schema import Diagnosis, PartitionLoads
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import resolve_runs, size_settings
from skewlab.experiments.results import BenchResult
from skewlab.validation import check_number

__all__ = [
    "EXPERIMENT",
    "FollowSection",
    "HEADLINES",
    "PARTS",
    "StateSection",
    "THRESHOLD",
    "WINDOW_SECONDS",
    "follow_section",
    "run_experiment",
    "state_section",
]

EXPERIMENT = "state_and_follow"
#: No ratio: demonstrations, no figure of the seeds' to hold them against.
HEADLINES: dict[str, float | None] = {}
#: A key is hot from this share of a window's records.
THRESHOLD = 0.05
#: The follow's window (one micro-batch), seconds; the follow stops after a window's worth of
#: seconds twice over with no new records.
WINDOW_SECONDS = 0.5
#: The parts the records are dropped in, one a window.
PARTS = 3
#: The sample records' key and time column (the chapter's Zipf views).
_KEY, _TIME = "tweet_id", "event_time"
#: Whose figures a section shows when this run measured them.
_THIS_RUN = "this run"


@dataclass(frozen=True)
class StateSection:
    """A checkpoint's state read back (``state``), the records per partition as the doctor
    routes them at the state's partition count (``traffic``: the diagnosis' Spark loads;
    ``None`` when their partition count differs), and whose figures they are (``whose``:
    ``"this run"`` or the reference, as :func:`skewlab.viz.titles.whose_figures` says it)."""

    state: StateReport
    traffic: PartitionLoads | None
    whose: str = _THIS_RUN

    @property
    def store(self) -> StateStore:
        """The first store the data source could read (what the figure and text show)."""
        store = _first_read(self.state)
        if store is None:
            raise SkewlabInputError(f"no state store of {self.state.checkpoint} could be read")
        return store

    def to_json(self) -> dict[str, Any]:
        """The section as plain JSON values (``whose`` left out: a reader names it)."""
        traffic = None if self.traffic is None else json.loads(json.dumps(asdict(self.traffic)))
        return {"state": self.state.to_json(), "traffic": traffic}

    @classmethod
    def from_json(cls, data: dict[str, Any], whose: str = _THIS_RUN) -> StateSection:
        """The section :meth:`to_json` wrote (or a benchmark summary holding it), read back.

        Example::

            >>> section = StateSection(StateReport("ck", "page"), None)
            >>> StateSection.from_json(section.to_json()) == section
            True
        """
        traffic = data["traffic"]
        return cls(
            StateReport.from_json(data["state"]),
            None if traffic is None else PartitionLoads.from_json(traffic),
            whose,
        )


@dataclass(frozen=True)
class FollowSection:
    """A follow's windows in order, the threshold it named hot keys by, and whose they are."""

    windows: tuple[FollowWindow, ...]
    threshold: float
    whose: str = _THIS_RUN

    def to_json(self) -> dict[str, Any]:
        """The section as plain JSON values (``whose`` left out: a reader names it)."""
        return {"threshold": self.threshold, "windows": [w.to_json() for w in self.windows]}

    @classmethod
    def from_json(cls, data: dict[str, Any], whose: str = _THIS_RUN) -> FollowSection:
        """The section :meth:`to_json` wrote (or a benchmark summary holding it), read back.

        Example::

            >>> FollowSection.from_json({"threshold": 0.05, "windows": []})
            FollowSection(windows=(), threshold=0.05, whose='this run')
        """
        windows = tuple(FollowWindow.from_json(w) for w in data["windows"])
        return cls(windows, float(data["threshold"]), whose)


def state_section(spark, records, key: str, report: Diagnosis) -> StateSection:
    """``records`` counted per ``key`` into a checkpoint made now, over as many state partitions
    as ``report``'s Spark loads (the diagnosis of the same records), and read back; see the
    module doc.

    Example::

        >>> section = state_section(spark, records, "tweet_id", report)  # doctest: +SKIP
        >>> section.store.rows == records.select("tweet_id").distinct().count()  # doctest: +SKIP
        True
    """
    traffic = report.engines.get("spark")
    if traffic is None:
        raise SkewlabInputError(
            "the diagnosis has no Spark loads to set the state beside: diagnose with the spark "
            "engine among its engines"
        )
    checkpoint = count_stream(spark, records, key, partitions=traffic.partitions)
    state = read_state(checkpoint, key=key)
    first = _first_read(state)
    same = first is not None and first.num_partitions == traffic.partitions
    return StateSection(state, traffic if same else None)


def _first_read(state: StateReport) -> StateStore | None:
    """The first of ``state``'s stores the data source could read (``None``: none)."""
    return next((s for s in state.stores if s.unread is None), None)


def follow_section(
    spark,
    records,
    key: str,
    *,
    time: str | None = None,
    threshold: float = THRESHOLD,
    on_window: Callable[[FollowWindow], None] | None = None,
) -> FollowSection:
    """``records`` dropped into a folder in :data:`PARTS` parts in ``time`` order (the input's
    order when ``None``), the next as each window ends, and followed by ``key`` with
    :data:`WINDOW_SECONDS` windows; ``on_window`` sees each window as it ends (a notebook's
    :class:`~skewlab.doctor.viz.HotKeysBoard`'s ``update``).

    Example::

        >>> section = follow_section(spark, records, "tweet_id", time="event_time")  # doctest: +SKIP
        >>> len(section.windows)                                                    # doctest: +SKIP
        3
    """  # noqa: E501
    check_number("threshold", threshold, above=0)
    drops = FileDrops(records, parts=PARTS, order_by=time)
    windows: list[FollowWindow] = []

    def seen(window: FollowWindow) -> None:
        windows.append(window)
        if on_window is not None:
            on_window(window)
        drops.after_window(window)

    follow(
        drops.folder, key, window_seconds=WINDOW_SECONDS, threshold=threshold,
        idle_seconds=2 * WINDOW_SECONDS, on_window=seen, spark=spark,
    )  # fmt: skip
    return FollowSection(tuple(windows), threshold)


def run_experiment(
    size: str = "quick",
    runs: int | None = None,
    *,
    parallelism: int | None = None,
    progress: bool = True,
    spark=None,
) -> BenchResult:
    """Both sections over the chapter's sample records at ``size`` (the ``skew_doctor``
    chapter's view sizes), diagnosed at the doctor's parallelisms, or at ``parallelism`` alone;
    see the module doc. ``progress`` is accepted for the bench's signature: two steps need no
    bar. Writes nothing (the CLI does).
    """
    from skewlab.doctor.diagnosis import DEFAULT_PARALLELISM, diagnose, read_records, sample_records
    from skewlab.engine.session import get_spark

    resolve_runs(size_settings(EXPERIMENT, size), runs)  # demonstrations: one run
    parallelisms = DEFAULT_PARALLELISM if parallelism is None else (parallelism,)
    spark = spark or get_spark()
    records = read_records(spark, sample_records(spark, size))
    report = diagnose(records, _KEY, time=_TIME, parallelism=parallelisms, remedies=False)
    state = state_section(spark, records, _KEY, report)
    followed = follow_section(spark, records, _KEY, time=_TIME)
    rows = [
        {"window": w.window, "records": w.records, "hot_keys": len(w.hot)} for w in followed.windows
    ]
    summary = {
        "records": report.input.records,
        "parallelism": list(parallelisms),
        **state.to_json(),
        **followed.to_json(),
    }
    return BenchResult(EXPERIMENT, size, rows, summary)
