"""``pkg``, ``dchoices``, ``wchoices``: key splitting by the power of choices, on key groups.

Salting gives every key ``N`` sub-keys, hot or cold. The papers split a key only as far as its
load needs, and let each *sender* pick where a record goes from what it has sent so far:

* **PKG**, partial key grouping (Nasir et al., "The Power of Both Choices", ICDE 2015, arXiv
  1504.00788): every key has two candidate subtasks; a sender counts the records it sent to each
  subtask (its *local load estimate*) and sends a record to the less loaded of its key's two.
  The abstract: load imbalance down "by up to several orders of magnitude" against hashing, "up
  to 60 % in throughput" on a Storm cluster.
* **D-Choices** and **W-Choices** (Nasir et al., "When Two Choices Are not Enough", ICDE 2016,
  arXiv 1510.05714): each sender finds the heavy hitters of what it has read with a
  frequent-items sketch; a hot key gets ``d >= 2`` candidates (D-Choices: the smallest ``d``
  meeting the paper's bound, or the ``choices`` given) or all ``W`` subtasks (W-Choices); the
  other keys keep PKG's two. The abstract: "150 % and 60 %" better throughput and latency than
  PKG on Storm.

Every candidate is a **sub-key Flink itself routes**: the first is the key itself (its own
subtask: a cold key whose two candidates are level stays where Flink would put it), the others
are ``key#1``, ``key#2``, ... -- the first whose key group (``murmur(String.hashCode) % maxP``)
falls on a subtask not yet among the key's candidates. So the partial stage is an ordinary
``keyBy(sub-key)``: its state, savepoints and rescaling are Flink's key groups, and no routing
table exists anywhere (the papers' point). Candidates are distinct subtasks (the papers' ``d``
independent hash functions may collide; here ``d`` candidates are ``d`` subtasks, at most
``p``).

Hot, per sender (as the authors' simulator, anisnasir/SLBSimulator, decides it): a key whose
share of the sender's records *may* exceed ``hot_threshold`` -- its sketch upper bound over the
records read so far, DataSketches' ``frequent_strings_sketch`` (the detector of
:mod:`skewlab.engine.heavy_hitters`, one per sender; the papers' senders cannot merge theirs, so
neither do these). skewlab's default threshold is ``2 / (5 p)``: the simulator's
``2 / (n T)`` with ``T = 5``. D-Choices' ``d`` is recomputed every ``refresh`` records from the
sketch's head (its hottest key's share, the head's share and size) with the simulator's loop
(:func:`dchoices_d`).

After the partial stage (a running partial per sub-key, emitted under the key), the partials
are merged per key exactly as salting's are (``keyBy tweet -> reduce`` of the partials): the
HLL union is idempotent, so the result is the reference's registers. A key keeps per-key order
only while it has one sub-key: a split key's records reach the merge by two paths (counted as
for salting: ``check_order``).

Senders are the source subtasks (the partitions of the views, in their order); each keeps its
own load vector, sketch and ``d``.

Example::

    >>> sender = Sender("pkg", parallelism=4)
    >>> sender.route(["tweet-0"] * 6)        # one key, two candidates, alternating
    ['tweet-0', 'tweet-0#1', 'tweet-0', 'tweet-0#1', 'tweet-0', 'tweet-0#1']
    >>> sender.loads.tolist()
    [0, 3, 3, 0]
    >>> Pkg().parameters()
    {'backend': 'rocksdb'}
    >>> run_strategy(views, DChoices(choices=3), JobConfig(parallelism=4))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import numpy as np

from skewlab.aggregates.stats_state import StatsSerializer
from skewlab.engine.heavy_hitters import DEFAULT_LG_MAX_MAP_SIZE, smallest_sketch_size
from skewlab.engine.job import collect_stage, run_stage
from skewlab.errors import SkewlabInputError
from skewlab.state.java_hash import java_string_hash_array
from skewlab.state.key_groups import (
    assign_to_key_group_array,
    check_parallelism,
    compute_default_max_parallelism,
)
from skewlab.strategies.keyed import fold, split_key_stages, upstream
from skewlab.strategies.parameters import KeyedStateParameters, parameter
from skewlab.validation import check_choice, check_number, check_whole

__all__ = [
    "SCHEMES",
    "SPLIT_KEY",
    "DChoices",
    "Pkg",
    "Sender",
    "WChoices",
    "check_hot_threshold",
    "dchoices_d",
    "default_hot_threshold",
    "with_split_keys",
]

#: The column the senders add: the sub-key each record is sent under.
SPLIT_KEY = "_split_key"
#: The splitting schemes, by name.
SCHEMES = ("pkg", "dchoices", "wchoices")
#: The separator between a key and its candidate's number (``tweet-7#2``).
SEPARATOR = "#"
#: D-Choices' slack in its bound (the authors' simulator's default epsilon).
DEFAULT_EPSILON = 0.001
#: A sender recomputes D-Choices' ``d`` after this many records.
DEFAULT_REFRESH = 1_000


def default_hot_threshold(parallelism: int) -> float:
    """skewlab's default hot threshold at ``parallelism`` subtasks: ``2 / (5 p)`` (the authors'
    simulator's ``2 / (n T)`` with ``T = 5``).

    Example::

        >>> default_hot_threshold(4)
        0.1
    """
    return 2 / (5 * parallelism)


def check_hot_threshold(threshold: float) -> float:
    """A hot threshold, a share of the records strictly between 0 and 1.

    Example::

        >>> check_hot_threshold(1.5)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: hot threshold (--hot-threshold) must be a share of the records strictly between 0 and 1, got 1.5
    """  # noqa: E501
    check_number("hot threshold (--hot-threshold)", threshold)
    if not 0 < threshold < 1:
        raise SkewlabInputError(
            "hot threshold (--hot-threshold) must be a share of the records strictly between "
            f"0 and 1, got {threshold!r}"
        )
    return float(threshold)


def dchoices_d(
    p_top: float, p_head: float, head_keys: int, workers: int, epsilon: float = DEFAULT_EPSILON
) -> int:
    """D-Choices' number of candidates for the hot keys: the smallest ``d`` (from
    ``round(p_top * n)``, at least 2, at most ``n``) meeting both of the paper's constraints, as
    the authors' simulator (``LBDChoice``) loops over them --

    * the head's ``h`` keys on ``d`` choices each cover the workers they need:
      ``p_head + p_tail * b**2 <= b + epsilon`` with ``b = 1 - ((n-1)/n)**(h d)``;
    * the hottest key fits: ``p_top + (p_head - p_top) * c**d + p_tail * c**2 <= c + epsilon``
      with ``c = 1 - ((n-1)/n)**d``.

    ``p_top``: the hottest key's share; ``p_head``: the hot keys' share; ``head_keys``: how many.

    Example::

        >>> dchoices_d(0.05, 0.12, 3, 8), dchoices_d(0.5, 0.6, 2, 8), dchoices_d(0.01, 0.01, 1, 8)
        (2, 8, 2)
    """
    n = float(workers)
    keep = (n - 1) / n
    p_tail = 1.0 - p_head
    d = max(2, round(p_top * n))
    while d < workers:
        b = 1.0 - keep ** (head_keys * d)
        c = 1.0 - keep**d
        head_fits = p_head + p_tail * b**2 <= b + epsilon
        top_fits = p_top + (p_head - p_top) * c**d + p_tail * c**2 <= c + epsilon
        if head_fits and top_fits:
            return d
        d += 1
    return max(2, min(d, workers)) if workers >= 2 else 1


class Sender:
    """One sender (a source subtask): routes each record's key to one of its candidates by its
    local load estimate; see the module doc.

    ``scheme``: ``pkg`` | ``dchoices`` | ``wchoices``; ``choices``: D-Choices' ``d`` for hot
    keys (``None``: the paper's bound, :func:`dchoices_d`); ``hot_threshold``: a share of the
    sender's records (default :func:`default_hot_threshold`).

    Example::

        >>> w = Sender("wchoices", parallelism=4, hot_threshold=0.3)
        >>> w.route(["a"] * 8)[:4], w.loads.tolist(), w.hot_records
        (['a', 'a#1', 'a#2', 'a#5'], [2, 2, 2, 2], 8)
    """

    def __init__(
        self,
        scheme: str,
        parallelism: int,
        max_parallelism: int | None = None,
        *,
        choices: int | None = None,
        hot_threshold: float | None = None,
        lg_max_map_size: int | None = None,
        epsilon: float = DEFAULT_EPSILON,
        refresh: int = DEFAULT_REFRESH,
    ) -> None:
        check_choice("key splitting scheme", scheme, SCHEMES)
        self.scheme = scheme
        self.parallelism = check_whole("parallelism", parallelism, 1)
        self.max_parallelism = max_parallelism or compute_default_max_parallelism(parallelism)
        check_parallelism(self.parallelism, self.max_parallelism)
        if choices is not None:
            check_whole("choices (--choices)", choices, 2)
            if choices > parallelism:
                raise SkewlabInputError(
                    f"choices (--choices) must be at most the parallelism {parallelism} (one "
                    f"candidate per subtask), got {choices}"
                )
        self.choices = choices
        self.threshold = check_hot_threshold(
            default_hot_threshold(parallelism) if hot_threshold is None else hot_threshold
        )
        self.epsilon = epsilon
        self.refresh = check_whole("refresh", refresh, 1)
        self.lg = max(DEFAULT_LG_MAX_MAP_SIZE, smallest_sketch_size(self.threshold))
        if lg_max_map_size is not None:
            self.lg = lg_max_map_size
        self.loads = np.zeros(parallelism, dtype=np.int64)
        self.records = 0
        self.hot_records = 0
        self._candidates: dict[str, list[tuple[int, str]]] = {}
        self._sketch = None
        self.hot_choices = (choices or 2) if scheme == "dchoices" else parallelism
        if scheme != "pkg":
            from datasketches import frequent_strings_sketch

            self._sketch = frequent_strings_sketch(self.lg)

    # ------------------------------------------------------------------ candidates
    def candidates(self, key: str) -> list[tuple[int, str]]:
        """``key``'s candidates, ``(subtask, sub-key)``, first its own; as many distinct
        subtasks as its scheme can use (2, or ``p`` for D- and W-Choices)."""
        return self._find([key], 2 if self.scheme == "pkg" else self.parallelism)[key]

    def _find(self, keys: Sequence[str], want: int) -> dict[str, list[tuple[int, str]]]:
        """At least ``want`` candidates (at most ``p``) of every key in ``keys``, vectorised:
        the key groups of ``key``, ``key#1``, ``key#2``, ... until each key has its subtasks.
        A key's candidates are found in the same order every time, so more of them extend the
        fewer (a cold key needs two; a hot one gets its ``d`` when it is found hot)."""
        want = min(want, self.parallelism)
        todo = [k for k in dict.fromkeys(keys) if len(self._candidates.get(k, ())) < want]
        for key in todo:
            self._candidates[key] = []
        start, width = 0, 4 * want
        while todo:
            names = [
                k if i == 0 else f"{k}{SEPARATOR}{i}" for k in todo for i in range(start, width)
            ]
            groups = assign_to_key_group_array(java_string_hash_array(names), self.max_parallelism)
            subtasks = (
                (groups.astype(np.int64) * self.parallelism) // self.max_parallelism
            ).tolist()
            span = width - start
            left = []
            for j, key in enumerate(todo):
                mine = self._candidates[key]
                have = {s for s, _ in mine}
                for i in range(j * span, (j + 1) * span):
                    if subtasks[i] not in have:
                        mine.append((subtasks[i], names[i]))
                        have.add(subtasks[i])
                        if len(mine) == want:
                            break
                if len(mine) < want:
                    left.append(key)
            todo, start, width = left, width, 2 * width
        return self._candidates

    # ------------------------------------------------------------------ routing
    def _refresh_d(self) -> None:
        """D-Choices' ``d`` from the sketch's head (every key that may be hot)."""
        from datasketches import frequent_items_error_type

        head = self._sketch.get_frequent_items(
            frequent_items_error_type.NO_FALSE_NEGATIVES, int(self.threshold * self.records)
        )
        shares = [upper / self.records for _, _, _, upper in head]
        if shares:
            self.hot_choices = dchoices_d(
                max(shares), min(1.0, sum(shares)), len(shares), self.parallelism, self.epsilon
            )

    def route(self, keys: Sequence[str | None]) -> list[str | None]:
        """The sub-key of every key in ``keys`` (in the sender's order; ``None`` stays
        ``None``, to be rejected downstream), updating the sender's loads."""
        self._find([k for k in keys if k is not None], 2)
        table, loads, out, p = self._candidates, self.loads, [], self.parallelism
        sketch, threshold, pkg = self._sketch, self.threshold, self.scheme == "pkg"
        auto_d = self.scheme == "dchoices" and self.choices is None
        for key in keys:
            if key is None:
                out.append(None)
                continue
            self.records += 1
            choices = 2
            if not pkg:
                sketch.update(key)
                if sketch.get_upper_bound(key) > threshold * self.records:
                    choices = self.hot_choices
                    self.hot_records += 1
                if auto_d and self.records % self.refresh == 0:
                    self._refresh_d()
            candidates = table[key]
            if choices > len(candidates) and len(candidates) < p:  # a key just found hot
                candidates = self._find([key], choices)[key]
            best_subtask, best_key = candidates[0]
            best_load = loads[best_subtask]
            for subtask, sub_key in candidates[1:choices]:
                if loads[subtask] < best_load:
                    best_subtask, best_key, best_load = subtask, sub_key, loads[subtask]
            loads[best_subtask] += 1
            out.append(best_key)
        return out


def with_split_keys(df, key_col: str, make_sender) -> object:
    """``df`` with :data:`SPLIT_KEY`: each partition (a source subtask) routes its records
    through its own ``make_sender()`` in the partition's order (lazily, ``mapInArrow``)."""
    import pyarrow as pa

    def senders(batches):
        sender = make_sender()
        for batch in batches:
            split = sender.route(batch.column(key_col).to_pylist())
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, pa.array(split, type=pa.string())],
                names=[*batch.schema.names, SPLIT_KEY],
            )

    schema = ", ".join(f"`{name}` {kind}" for name, kind in df.dtypes)
    return df.mapInArrow(senders, f"{schema}, `{SPLIT_KEY}` string")


@dataclass(frozen=True, kw_only=True)
class _KeySplitting(KeyedStateParameters):
    """What the three schemes share: senders, a partial stage on sub-keys, the merge."""

    scheme: ClassVar[str] = ""
    resumable: ClassVar[bool] = False  # a sender's load estimate is not in a savepoint
    periodic_checkpoints: ClassVar[bool] = False
    modelled_as: ClassVar[str | None] = None

    def sender_factory(self, parallelism: int, max_parallelism: int | None = None):
        """What makes this scheme's senders at ``parallelism`` (one per source subtask); checks
        ``choices`` against it at once.

        Example::

            >>> DChoices(choices=2).sender_factory(4)().route(["a", "a"])
            ['a', 'a#1']
        """
        options = self._sender_options()
        Sender(self.scheme, parallelism, max_parallelism, **options)  # bad input fails here
        return partial(Sender, self.scheme, parallelism, max_parallelism, **options)

    def _sender_options(self) -> dict:
        return {}

    def run(self, spark, views, job):
        make_sender = self.sender_factory(job.parallelism, job.max_parallelism)
        split = with_split_keys(upstream(views, self), "tweet_id", make_sender)
        stage1, stage2 = split_key_stages(
            self.name, SPLIT_KEY, self.state_backend(), self.precision
        )
        out = collect_stage(
            run_stage(run_stage(split, spark, stage1, job), spark, stage2, job), StatsSerializer
        )
        return fold(self, job, out), out.results


@dataclass(frozen=True, kw_only=True)
class Pkg(_KeySplitting):
    """Partial key grouping: every key on the less loaded of its two candidate subtasks (by each
    sender's local load estimate), partials merged per key."""

    name: ClassVar[str] = "pkg"
    scheme: ClassVar[str] = "pkg"


@dataclass(frozen=True, kw_only=True)
class _HotKeySplitting(_KeySplitting):
    hot_threshold: float = parameter(
        0.0, "a key is hot above this share of a sender's records (0: 2 / (5 p))"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.hot_threshold != 0:
            check_hot_threshold(self.hot_threshold)

    def _sender_options(self) -> dict:
        return {"hot_threshold": self.hot_threshold or None}


@dataclass(frozen=True, kw_only=True)
class DChoices(_HotKeySplitting):
    """D-Choices: hot keys on the least loaded of ``d`` candidates (``choices``; 0: the paper's
    bound, recomputed by each sender), the rest as PKG."""

    name: ClassVar[str] = "dchoices"
    scheme: ClassVar[str] = "dchoices"

    choices: int = parameter(0, "candidates per hot key, 2 .. p (0: the paper's bound)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.choices != 0:
            check_whole("choices (--choices)", self.choices, 2)

    def _sender_options(self) -> dict:
        return super()._sender_options() | {"choices": self.choices or None}


@dataclass(frozen=True, kw_only=True)
class WChoices(_HotKeySplitting):
    """W-Choices: hot keys on the least loaded of all ``p`` subtasks, the rest as PKG."""

    name: ClassVar[str] = "wchoices"
    scheme: ClassVar[str] = "wchoices"
