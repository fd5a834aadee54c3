"""Exercises: at the end of a chapter, tasks the reader answers and checks in the notebook.

An :class:`Exercise` is a task, a ``check(answer)`` that decides with skewlab's own parts --
Flink's key-group formulas, the LRU cache core the state backend runs, the salted counter's
operators (run in this process), the disk model, Spark's hash partitioning (evaluated by
Spark), Kafka's partitioner; only the buffer's two checks write its flush rule out -- never
against a typed answer, and a ``solve()`` that finds the answer with the same parts (the
solutions page, ``docs/solutions.md``, is written from it by :func:`solutions_markdown`). A check
says whether the answer is right and, either way, what the answer given does.

Example::

    >>> print(check("rescaling", "even_key_groups", 720))
    right: at parallelism 6, max parallelism 720 gives every subtask 120 key groups.
    >>> print(check("rescaling", "even_key_groups", 128))
    not yet: at parallelism 6, max parallelism 128 gives subtasks 21 or 22 key groups.
    >>> print(check("rescaling", "even_key_groups", None))
    not answered yet: set answer = ... and run the cell again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from skewlab.engine.config import JobConfig
from skewlab.engine.operator import OperatorContext
from skewlab.engine.partitioners import (
    flink_key_groups,
    kafka_partitions,
    spark_partition_expression,
)
from skewlab.engine.routing import KEY_GROUP
from skewlab.engine.stage import StageSpec
from skewlab.errors import SkewlabInputError, UnsortedInputError
from skewlab.experiments.backlog import catch_up_seconds, max_subtask_share, zipf_shares
from skewlab.experiments.chapters import chapter as chapter_record
from skewlab.inputs.wordcount import flip325_key
from skewlab.iomodel.model import buffered_pattern, cached_pattern, per_key_ceiling
from skewlab.iomodel.profiles import load_disk_profile
from skewlab.operators.running_count import (
    SALT,
    SALTED_KEY,
    PairSerializer,
    RunningCount,
    SumOfPartials,
)
from skewlab.state import StateBackend, create_backend
from skewlab.state.key_groups import (
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
)
from skewlab.state.single_key import SingleKeyStateBackend
from skewlab.state.value_state import WriteBackLru
from skewlab.strategies.key_splitting import Sender
from skewlab.validation import check_number, check_whole

__all__ = [
    "EXERCISES",
    "Check",
    "Exercise",
    "attempt",
    "chapter_exercises",
    "check",
    "exercise",
    "solutions_markdown",
]


@dataclass(frozen=True)
class Check:
    """What a check found: ``right`` and a sentence on what the answer does."""

    right: bool | None  # None: not answered
    text: str

    def __str__(self) -> str:
        if self.right is None:
            return f"not answered yet: {self.text}"
        return f"{'right' if self.right else 'not yet'}: {self.text}"


@dataclass(frozen=True)
class Exercise:
    """One task of a chapter: ``task`` (what to find, in the chapter's words), ``hint``,
    ``check(answer) -> (right, what the answer does)`` and ``solve() -> answer``."""

    id: str
    chapter: str
    task: str
    hint: str
    judge: Callable[[Any], tuple[bool, str]]
    solve: Callable[[], Any]

    def check(self, answer: Any) -> Check:
        """Check ``answer`` (``None``: not answered yet)."""
        if answer is None:
            return Check(None, "set answer = ... and run the cell again.")
        right, text = self.judge(answer)
        return Check(right, text)


# --------------------------------------------------------------------- the parts checks use


def _sizes(max_parallelism: int, parallelism: int) -> list[int]:
    """Key groups per subtask (Flink's ranges)."""
    return [
        len(compute_key_group_range_for_operator_index(max_parallelism, parallelism, i))
        for i in range(parallelism)
    ]


def _lru_hit_ratio(entries: int, keys: list[int]) -> float:
    """The hit ratio of the state backend's LRU core (FLIP-325's) of ``entries`` over
    ``keys``, each key read and written back as the count operator does."""
    store: dict[int, int] = {}
    lru = WriteBackLru(entries, lambda g, k: store.get(k), lambda g, k, v: store.update({k: v}))
    for key in keys:
        lru.put(0, key, (lru.get(0, key) or 0) + 1)
    return lru.hits / (lru.hits + lru.misses)


_CYCLE = [x % 6 for x in range(60)]


@cache
def _flip325_keys() -> list[int]:
    """FLIP-325's key sequence over 8,000 records (made when an exercise first needs it)."""
    return [flip325_key(x) for x in range(8_000)]


# ------------------------------------------------------------------------------- exercises


def _even_key_groups(answer):
    m = check_whole("a max parallelism", answer)
    if not 6 <= m <= 32_768:
        return False, f"a max parallelism must lie in 6 .. 32,768 at parallelism 6; got {m:,}."
    sizes = sorted(set(_sizes(m, 6)))
    if len(sizes) == 1:
        return (
            True,
            f"at parallelism 6, max parallelism {m:,} gives every subtask {sizes[0]} key groups.",
        )
    return False, (
        f"at parallelism 6, max parallelism {m:,} gives subtasks {sizes[0]} or {sizes[-1]} key "
        "groups."
    )


def _files_opened(answer):
    opened = check_whole("a number of files", answer)
    new = compute_key_group_range_for_operator_index(10, 4, 1)
    files = [
        i for i in range(3) if set(compute_key_group_range_for_operator_index(10, 3, i)) & set(new)
    ]
    right = opened == len(files)
    return right, (
        f"new subtask 1 owns key groups {new.start_key_group}-{new.end_key_group}; "
        + (f"{opened} is the number of old files holding some of them."
           if right else f"{opened} is not the number of old files holding some of them.")
    )  # fmt: skip


def _key_group_and_subtask(answer):
    try:
        group, subtask = answer
    except (TypeError, ValueError):
        raise SkewlabInputError(
            f"the answer is a pair (key group, subtask); got {answer!r}"
        ) from None
    true_group = assign_to_key_group("tweet-7", 128)
    true_subtask = compute_operator_index_for_key_group(128, 4, true_group)
    if group != true_group:
        return False, f"key group {group} is not where Flink's murmur hash puts 'tweet-7'."
    if subtask != true_subtask:
        return False, f"key group {group} is right; subtask {subtask} does not own it at P=4."
    r = compute_key_group_range_for_operator_index(128, 4, true_subtask)
    return True, (
        f"'tweet-7' is in key group {group}, which subtask {subtask} owns "
        f"(key groups {r.start_key_group}-{r.end_key_group})."
    )


def _max_parallelism_ceiling(answer):
    p = check_whole("a parallelism", answer)
    ok = p == 128
    return ok, (
        f"at max parallelism 128, parallelism {p} "
        + ("is the most there can be: one key group per subtask." if ok else
           ("leaves some subtasks more key groups than others." if p < 128 and 128 % p else
            "is refused: there cannot be more subtasks than key groups." if p > 128 else
            "splits the key groups evenly, but more subtasks are still possible."))
    )  # fmt: skip


def _run_operator(operator, columns: dict[str, list], *, final: bool) -> OperatorContext:
    """Run the skewlab operator class ``operator`` in this process, as one subtask (parallelism
    1, heap state) over ``columns`` (each a list, one entry per record), to its end; its
    context holds what it emitted (``output``) and its counters (``metrics``)."""
    stage = StageSpec(operator.__name__, "key", operator, final=final, serializer=PairSerializer)
    ctx = OperatorContext(
        stage, JobConfig(parallelism=1, max_parallelism=128, disk_profile=None), 0
    )
    n = len(next(iter(columns.values())))
    running = operator(ctx, StateBackend("heap"))
    running.process(columns, n, [0] * n)
    running.finish()
    return ctx


def _salted_counter(salted_keys: list[tuple[str, int]]) -> tuple[OperatorContext, OperatorContext]:
    """The seed's salted counter over records of ``(tweet, salt)``, both stages run as the
    engine runs them: stage 1 (:class:`RunningCount`) sends every running count on, stage 2
    (:class:`SumOfPartials`) adds them up per tweet. Their contexts: what each emitted."""
    n = len(salted_keys)
    tweets, salts = [t for t, _ in salted_keys], [s for _, s in salted_keys]
    subkeys = [f"{t}-{s}" for t, s in salted_keys]
    first = _run_operator(RunningCount, {
        SALTED_KEY: subkeys, "tweet_id": tweets, SALT: salts,
        KEY_GROUP: [assign_to_key_group(k, 128) for k in subkeys], "seq": list(range(n)),
    }, final=False)  # fmt: skip
    out = first.output
    second = _run_operator(SumOfPartials, {
        "key": out.forward_keys, "value": out.forward_values,
        KEY_GROUP: [assign_to_key_group(k, 128) for k in out.forward_keys],
        "arrival_ns": out.forward_arrivals, "seq": out.forward_seqs,
    }, final=True)  # fmt: skip
    return first, second


@cache
def _seed_sum_of_one_sub_key() -> int:
    """The seed's downstream sum when one sub-key receives 10 records (the real operators)."""
    _, second = _salted_counter([("tweet-0", 0)] * 10)
    seed_total, _ = second.output.results["tweet-0"]
    return seed_total


@cache
def _partials_of_the_step_through() -> int:
    """Running partials stage 1 sends over the step-through's 24 views, 2 salts per tweet."""
    first, _ = _salted_counter([(f"tweet-{i % 3}", i % 2) for i in range(24)])
    return first.metrics.records_out


def _partial_sum(answer):
    total = check_whole("a sum", answer)
    right = total == _seed_sum_of_one_sub_key()
    return (
        right,
        f"{total} is {'' if right else 'not '}what the running partials 1, 2, ..., 10 add up to.",
    )


def _partials_sent(answer):
    sent = check_whole("a number of partials", answer)
    right = sent == _partials_of_the_step_through()
    return right, (
        f"{sent} partials: " + ("one per view, whatever the salt." if right else
                                "stage 1 sends one running partial per view it counts.")
    )  # fmt: skip


def _writes_per_flush(answer):
    writes = check_whole("a number of writes", answer)
    bound = min(1_000, 20)
    right = writes == bound
    return right, (
        f"{writes} writes: a flush writes each buffered key once, and at most "
        f"min(max_count, keys) = min(1,000, 20) keys are buffered."
        if right
        else f"{writes} is not the most writes one flush makes: count the keys it holds."
    )


def _flushes(answer):
    flushes = check_whole("a number of flushes", answer)
    right = flushes == math.ceil(40 / 8)
    return right, (
        f"{flushes} flushes: one every 8 records, the last at the end of input."
        if right
        else f"{flushes} is not how often a buffer of 8 records empties over 40 records."
    )


def _at_and_below(
    answer: Any, what: str, value_of: Callable[[int], float], least: int, most: int | None = None
) -> tuple[int, float, float]:
    """The answer as a whole number ``n`` (``least`` .. ``most``) and ``value_of`` at ``n`` and
    at ``n - 1`` (0 below ``least``): what a "find the smallest ... that reaches ..." check
    compares."""
    n = check_whole(what, answer, least, most)
    return n, value_of(n), value_of(n - 1) if n > least else 0.0


def _hit_ratios(answer, keys: list[int]) -> tuple[int, float, float]:
    """The answer as a cache size, the LRU's hit ratio over ``keys`` at that size and at one
    entry fewer (0 at none)."""
    return _at_and_below(answer, "a cache size in entries", lambda n: _lru_hit_ratio(n, keys), 1)


def _half_hits(answer):
    entries, ratio, below = _hit_ratios(answer, _flip325_keys())
    right = ratio >= 0.5 > below
    return right, (
        f"at {entries:,} entries the LRU hits {ratio:.1%} of the seed's lookups"
        + (f", and at {entries - 1:,} only {below:.1%}." if right else
           "; the smallest cache reaching 50 % is elsewhere.")
    )  # fmt: skip


def _cycle_fits(answer):
    entries, ratio, below = _hit_ratios(answer, _CYCLE)
    right = ratio > 0 and below == 0
    return right, (
        f"at {entries} entries the LRU hits {ratio:.0%} of 60 lookups cycling through 6 keys"
        + (f"; at {entries - 1} it never hits." if right else ".")
    )


def _pair(answer, what: str) -> tuple[Any, Any]:
    try:
        first, second = answer
    except (TypeError, ValueError):
        raise SkewlabInputError(f"the answer is a pair ({what}); got {answer!r}") from None
    return first, second


def _held_after_sorted_wordcount() -> tuple[int, int]:
    """Entries the single-key and the heap backend hold after counting 1,000 records of 100
    words in sorted input's order (by key group and key)."""
    words = sorted((assign_to_key_group(w, 128), w) for w in range(100) for _ in range(10))
    held = []
    for backend in (SingleKeyStateBackend(), create_backend("heap")):
        for group, word in words:
            backend.put(group, word, (backend.get(group, word) or 0) + 1)
        held.append(sum(1 for _ in backend.items()))
        backend.close()
    return held[0], held[1]


def _entries_held(answer):
    single, heap = _pair(answer, "single-key entries, heap entries")
    held = _held_after_sorted_wordcount()
    right = (single, heap) == held
    return right, (
        f"after 1,000 sorted records of 100 words the single-key backend holds {held[0]} entry "
        f"and the heap {held[1]}" + ("." if right else f"; ({single}, {heap}) is not that.")
    )


def _first_refused(answer):
    index = check_whole("a record's index", answer)
    backend = SingleKeyStateBackend()
    refused = None
    for i, key in enumerate("aabac"):
        try:
            backend.put(0, key, (backend.get(0, key) or 0) + 1)
        except UnsortedInputError:
            refused = i
            break
    right = index == refused
    return right, (
        f"record {index} is " + ("where" if right else "not where")
        + " the single-key backend first refuses a key that came back after it was finished."
    )  # fmt: skip


def _subtasks_of_a_hot_key(scheme: str) -> int:
    """How many subtasks one key's records reach when it is every record, under ``scheme``
    at parallelism 8 (skewlab's key-splitting sender)."""
    sender = Sender(scheme, 8)
    where = dict((sub_key, subtask) for subtask, sub_key in sender.candidates("hot"))
    return len({where[k] for k in sender.route(["hot"] * 1_000)})


def _spread(scheme: str, name: str):
    """The judge of "over how many subtasks does a key that is every record spread under
    ``scheme`` at parallelism 8?"."""

    def judge(answer):
        subtasks = check_whole("a number of subtasks", answer)
        reached = _subtasks_of_a_hot_key(scheme)
        right = subtasks == reached
        return right, (
            f"under {name} at parallelism 8, 1,000 records of one hot key reach {reached} "
            "subtasks" + ("." if right else f", not {subtasks}.")
        )

    return judge


_pkg_spread, _wchoices_spread = _spread("pkg", "PKG"), _spread("wchoices", "W-Choices")


@cache
def _article_profile():
    """The article's EBS volume (its fio figures, as published)."""
    return load_disk_profile("ebs-article")


def _buffer_for_10k(answer):
    size, ceiling, below = _at_and_below(
        answer, "a buffer size in records",
        lambda b: per_key_ceiling(_article_profile(), buffered_pattern(b)), 1,
    )  # fmt: skip
    right = ceiling >= 10_000 > below
    return right, (
        f"a buffer of {size:,} records per flush lets one key absorb {ceiling:,.0f} records/s "
        "on the article's volume"
        + (f"; {size - 1:,} would give {below:,.0f}." if right else
           "; the smallest buffer reaching 10,000 is elsewhere.")
    )  # fmt: skip


def _hit_ratio_for_1k(answer):
    percent, ceiling, below = _at_and_below(
        answer, "a hit ratio in whole percent",
        lambda h: per_key_ceiling(_article_profile(), cached_pattern(h / 100)), 0, 100,
    )  # fmt: skip
    right = ceiling >= 1_000 > below
    return right, (
        f"at a hit ratio of {percent} % one key absorbs {ceiling:,.0f} records/s on the article's "
        "volume"
        + (f"; at {percent - 1} % only {below:,.0f}." if right else
           "; the smallest hit ratio reaching 1,000 is elsewhere.")
    )  # fmt: skip


#: The catch-up exercise: a 4-hour outage at 1,000 records/s, restarted at 3,000 records/s.
_OUTAGE_HOURS, _RATE, _CAPACITY = 4, 1_000, 3_000


def _catch_up_hours(answer):
    hours = check_number("a number of hours", answer, above=0)
    backlog = _RATE * _OUTAGE_HOURS * 3_600
    true = catch_up_seconds(backlog, _RATE, _CAPACITY, 0, 0, _CAPACITY) / 3_600
    right = math.isclose(hours, true, rel_tol=0.01)
    return right, (
        f"{hours:g} h "
        + ("is" if right else "is not") + f" how long a backlog of {backlog:,} records takes to "
        f"drain at {_CAPACITY:,} records/s while {_RATE:,} records/s keep arriving."
    )  # fmt: skip


def _zipf_capacity(parallelism: int) -> float:
    """Records/s 10 Zipf(1.0) keys reach at ``parallelism`` subtasks of 2,000 records/s each,
    routed through Flink's key groups (max parallelism 128)."""
    return 2_000 / max_subtask_share(zipf_shares(10, 1.0), parallelism, 128)


@cache
def _highest_zipf_capacity() -> int:
    """The highest of :func:`_zipf_capacity` over parallelism 1 .. 128, in whole records/s."""
    return round(max(_zipf_capacity(p) for p in range(1, 129)))


def _zipf_ceiling(answer):
    capacity = check_whole("a capacity in records/s", answer)
    right = capacity == _highest_zipf_capacity()
    return right, (
        f"{capacity:,} records/s "
        + ("is the highest capacity: once the hottest key's subtask is the busiest, more "
           "subtasks cannot lift it." if right else
           "is not the highest capacity any parallelism up to 128 reaches.")
    )  # fmt: skip


@cache
def _spark_state_partitions(
    partitions: tuple[int, ...], n_keys: int
) -> tuple[tuple[int, ...], ...]:
    """The state partition Spark's hash partitioning puts each of the keys ``tweet-0`` ..
    ``tweet-<n_keys - 1>`` on, at each number of ``partitions``: computed by Spark itself."""
    from skewlab.engine.session import get_spark

    frame = get_spark().createDataFrame(
        [(f"tweet-{i}", i) for i in range(n_keys)], "k string, i int"
    )
    columns = [f"{spark_partition_expression('k', n)} AS p{n}" for n in partitions]
    rows = frame.selectExpr("i", *columns).orderBy("i").collect()
    return tuple(tuple(int(r[f"p{n}"]) for r in rows) for n in partitions)


def _state_partition_of_tweet_7(answer):
    partition = check_whole("a state partition", answer)
    right = partition == _spark_state_partitions((4, 5), 1_000)[0][7]
    return right, (
        f"Spark's hash puts 'tweet-7' on state partition {partition} of 4."
        if right else f"Spark's hash does not put 'tweet-7' on state partition {partition} of 4."
    )  # fmt: skip


def _keys_moved_4_to_5() -> tuple[int, int]:
    """Of the keys tweet-0 .. tweet-999, how many change place from 4 to 5: Spark's state
    partitions (hash modulo the number), Flink's subtasks (key groups, max parallelism 128)."""
    at_4, at_5 = _spark_state_partitions((4, 5), 1_000)
    spark_moved = sum(a != b for a, b in zip(at_4, at_5, strict=True))
    groups = flink_key_groups([f"tweet-{i}" for i in range(1_000)], "string", 128)
    flink_moved = sum(
        compute_operator_index_for_key_group(128, 4, int(g))
        != compute_operator_index_for_key_group(128, 5, int(g))
        for g in groups
    )
    return spark_moved, flink_moved


def _keys_moved(answer):
    spark, flink = _pair(answer, "keys moved in Spark, keys moved in Flink")
    moved = _keys_moved_4_to_5()
    right = (spark, flink) == moved
    return right, (
        f"from 4 to 5, Spark moves {moved[0]} of 1,000 keys to another state partition and "
        f"Flink {moved[1]} to another subtask: Spark rehashes every key, Flink moves whole "
        "key groups between contiguous ranges."
        if right else f"({spark}, {flink}) is not how many keys change place in Spark and Flink."
    )  # fmt: skip


def _kafka_partition_of_tweet_7(answer):
    partition = check_whole("a Kafka partition", answer)
    right = partition == int(kafka_partitions(["tweet-7"], "string", 6)[0])
    return right, (
        f"Kafka's default partitioner {'puts' if right else 'does not put'} the key 'tweet-7' "
        f"on partition {partition} of 6."
    )


@cache
def _hot_key_alone(parallelism: int) -> bool:
    """Whether, at ``parallelism``, the busiest subtask carries the hottest of 10 Zipf(1.0)
    keys alone (Flink's key groups, max parallelism 128)."""
    shares = zipf_shares(10, 1.0)
    return math.isclose(max_subtask_share(shares, parallelism, 128), max(shares.values()))


def _hot_key_floor(answer):
    p = check_whole("a parallelism", answer, 1, 128)
    right = _hot_key_alone(p) and not any(_hot_key_alone(q) for q in range(1, p))
    return right, (
        f"at parallelism {p} the busiest subtask "
        + ("carries the hottest key alone, and at every smaller one it carries more."
           if right else
           ("carries the hottest key alone, but a smaller parallelism already does."
            if _hot_key_alone(p) else "still carries more than the hottest key."))
    )  # fmt: skip


@cache
def _smallest(judge, low: int, high: int) -> int:
    """The smallest answer in ``low .. high`` the judge accepts (searched once per process: a
    solution found for its notebook and again for the solutions page is not searched twice)."""
    return next(a for a in range(low, high + 1) if judge(a)[0])


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "key_group_of_tweet_7", "hot_keys",
        "At max parallelism 128, which key group does the key 'tweet-7' fall in, and which of 4 "
        "subtasks owns it? Answer a pair: (key group, subtask).",
        "skewlab.state.key_groups has Flink's assign_to_key_group and "
        "compute_operator_index_for_key_group.",
        _key_group_and_subtask,
        lambda: (
            (g := assign_to_key_group("tweet-7", 128)),
            compute_operator_index_for_key_group(128, 4, g),
        ),
    ),
    Exercise(
        "most_subtasks", "hot_keys",
        "At max parallelism 128, what is the most subtasks a keyed operator can have?",
        "A subtask owns whole key groups.",
        _max_parallelism_ceiling,
        lambda: 128,
    ),
    Exercise(
        "buffer_for_10k_records_per_second", "ebs_latency",
        "On the article's EBS volume, what is the smallest buffer, in records of one key per "
        "flush, that lets one key absorb 10,000 records per second?",
        "A flush reads and writes the key's state once for all the records it holds "
        "(skewlab.iomodel.model.buffered_pattern, per_key_ceiling).",
        _buffer_for_10k,
        lambda: _smallest(_buffer_for_10k, 1, 100_000),
    ),
    Exercise(
        "hit_ratio_for_1k_records_per_second", "ebs_latency",
        "On the article's EBS volume, what is the smallest cache hit ratio, in whole percent, "
        "at which one key absorbs 1,000 records per second?",
        "Only a miss goes to the disk: the ceiling is the naive one over (1 - hit ratio).",
        _hit_ratio_for_1k,
        lambda: _smallest(_hit_ratio_for_1k, 0, 100),
    ),
    Exercise(
        "sum_of_running_partials", "salting",
        "A sub-key receives 10 records. What does the seed's downstream sum of its running "
        "partials add up to?",
        "Stage 1 emits its running count after every record.",
        _partial_sum,
        lambda: _smallest(_partial_sum, 1, 1_000),
    ),
    Exercise(
        "partials_sent", "salting",
        "The step-through's salted counter reads 24 views with 2 salts per tweet. How many "
        "running partials does stage 1 send downstream?",
        "Count the step-through's stage-1 steps, or think about what Flink's reduce emits.",
        _partials_sent,
        lambda: _smallest(_partials_sent, 0, 1_000),
    ),
    Exercise(
        "writes_per_flush", "buffering",
        "The article's buffer holds up to 1,000 records over 20 hot tweets. At most how many "
        "keyed state writes does one flush make?",
        "A flush merges one partial per buffered key.",
        _writes_per_flush,
        lambda: _smallest(_writes_per_flush, 0, 1_000),
    ),
    Exercise(
        "flushes_over_40_records", "buffering",
        "The step-through's buffer holds 8 records and has no timer. How many times does it "
        "flush over 40 records?",
        "It flushes when full, and once more at the end of input if it holds anything.",
        _flushes,
        lambda: _smallest(_flushes, 0, 100),
    ),
    Exercise(
        "cache_for_half_hits", "state_cache",
        "Over the seed's key sequence (blocks of 1,000 records touching 500 keys twice, "
        "alternating between keys 0-499 and 500-999), find the smallest LRU, in entries, whose "
        "hit ratio reaches 50 %.",
        "Between two accesses to a key, 499 other keys are touched within a block.",
        _half_hits,
        lambda: _smallest(_half_hits, 1, 1_000),
    ),
    Exercise(
        "cycle_fits", "state_cache",
        "In the step-through, keys cycle through 0..5. What is the smallest LRU, in entries, "
        "that hits at all?",
        "An LRU evicts the key a cycle needs next until the whole cycle fits.",
        _cycle_fits,
        lambda: _smallest(_cycle_fits, 1, 10),
    ),
    Exercise(
        "entries_held", "sorted_input",
        "A WordCount reads 1,000 records of 100 words, sorted as sorted input hands them (by "
        "key group and key: each word's 10 records together). At the end, how many entries "
        "does the single-key backend hold, and the heap backend? Answer a pair: (single key, "
        "heap).",
        "The single-key backend keeps only the current key's value.",
        _entries_held,
        _held_after_sorted_wordcount,
    ),
    Exercise(
        "first_refused", "sorted_input",
        "The single-key backend reads the keys a, a, b, a, c in that order. At which record "
        "(counting from 0) does it refuse the input?",
        "A key that does not compare greater than the previous one means unsorted input.",
        _first_refused,
        lambda: _smallest(_first_refused, 0, 4),
    ),
    Exercise(
        "pkg_spread", "beyond_salting",
        "Under PKG (two choices) at parallelism 8, over how many subtasks do the records of a key "
        "that is every record spread?",
        "PKG gives every key two candidates and sends each record to the less loaded one.",
        _pkg_spread,
        lambda: _smallest(_pkg_spread, 1, 8),
    ),
    Exercise(
        "wchoices_spread", "beyond_salting",
        "Under W-Choices at parallelism 8, over how many subtasks do the records of a key that is "
        "every record spread?",
        "W-Choices gives a hot key every subtask as a candidate.",
        _wchoices_spread,
        lambda: _smallest(_wchoices_spread, 1, 8),
    ),
    Exercise(
        "catch_up_hours", "backlog",
        f"The input was down for {_OUTAGE_HOURS} hours at {_RATE:,} records/s. The job restarts "
        f"with a capacity of {_CAPACITY:,} records/s while new records keep arriving at "
        f"{_RATE:,}/s. With restarts free, how many hours does it take to catch up?",
        "The backlog drains at the capacity the arriving records leave over "
        "(skewlab.experiments.backlog.catch_up_seconds).",
        _catch_up_hours,
        lambda: catch_up_seconds(_RATE * _OUTAGE_HOURS * 3_600, _RATE, _CAPACITY, 0, 0,
                                 _CAPACITY) / 3_600,
    ),
    Exercise(
        "zipf_capacity_ceiling", "backlog",
        "Ten keys 'tweet-0' .. 'tweet-9' share the records under Zipf skew 1.0; one subtask "
        "handles 2,000 records/s. Routed through Flink's key groups (max parallelism 128), "
        "what is the highest capacity, in whole records/s, any parallelism up to 128 reaches?",
        "Capacity at P is 2,000 over the busiest subtask's share "
        "(skewlab.experiments.backlog.zipf_shares, max_subtask_share).",
        _zipf_ceiling,
        _highest_zipf_capacity,
    ),
    Exercise(
        "state_partition_of_tweet_7", "streaming",
        "A streaming aggregation keyed by tweet runs with 4 state partitions. Which state "
        "partition holds the state of 'tweet-7'?",
        "Spark puts a key where repartition(4, key) puts it: "
        "skewlab.engine.partitioners.spark_partition_expression, evaluated by Spark.",
        _state_partition_of_tweet_7,
        lambda: _spark_state_partitions((4, 5), 1_000)[0][7],
    ),
    Exercise(
        "keys_moved_4_to_5", "streaming",
        "The keys 'tweet-0' .. 'tweet-999' live on 4 state partitions (Spark) or 4 subtasks "
        "(Flink, max parallelism 128). Rescaled to 5, how many keys change place in each? "
        "Answer a pair: (Spark, Flink).",
        "Spark's state partition is the hash modulo their number; Flink moves whole key "
        "groups between contiguous ranges.",
        _keys_moved,
        _keys_moved_4_to_5,
    ),
    Exercise(
        "kafka_partition_of_tweet_7", "skew_doctor",
        "The doctor routes keys as Kafka's default partitioner does. On which of 6 partitions "
        "does the string key 'tweet-7' land?",
        "Kafka hashes the key's UTF-8 bytes with murmur2 (skewlab.engine.partitioners).",
        _kafka_partition_of_tweet_7,
        lambda: int(kafka_partitions(["tweet-7"], "string", 6)[0]),
    ),
    Exercise(
        "hot_key_floor", "skew_doctor",
        "Ten keys 'tweet-0' .. 'tweet-9' share the records under Zipf skew 1.0, routed through "
        "Flink's key groups (max parallelism 128). What is the smallest parallelism at which "
        "the busiest subtask carries the hottest key alone -- the floor no parallelism beats?",
        "skewlab.experiments.backlog.max_subtask_share gives the busiest subtask's share.",
        _hot_key_floor,
        lambda: _smallest(_hot_key_floor, 1, 128),
    ),
    Exercise(
        "even_key_groups", "rescaling",
        "Choose a max parallelism for parallelism 6 such that every subtask gets the same "
        "number of key groups (Flink's default is 128).",
        "Flink gives subtask i the key groups ceil(i * M / p) .. ceil((i + 1) * M / p) - 1.",
        _even_key_groups,
        lambda: _smallest(_even_key_groups, 128, 32_768),
    ),
    Exercise(
        "files_opened_3_to_4", "rescaling",
        "In the seed's figure (max parallelism 10), 3 subtasks rescale to 4. How many old "
        "files does new subtask 1 open to restore its key groups?",
        "Compare new subtask 1's key-group range with each old subtask's.",
        _files_opened,
        lambda: _smallest(_files_opened, 0, 3),
    ),
)  # fmt: skip


def chapter_exercises(chapter: str) -> tuple[Exercise, ...]:
    """The exercises at the end of chapter ``chapter`` (empty where it has none)."""
    return tuple(e for e in EXERCISES if e.chapter == chapter)


def exercise(chapter: str, exercise_id: str) -> Exercise:
    """One exercise of a chapter, by its id."""
    found = {e.id: e for e in chapter_exercises(chapter)}
    if exercise_id not in found:
        raise SkewlabInputError(
            f"chapter {chapter!r} has no exercise {exercise_id!r}: it has "
            f"{', '.join(found) or 'none'}"
        )
    return found[exercise_id]


def attempt(chapter: str, exercise_id: str, answer: Any) -> str:
    """What a notebook's exercise cell prints: the task, its hint, and the check of
    ``answer`` (``None``: not answered yet).

    Example::

        >>> print(attempt("hot_keys", "most_subtasks", None))
        Exercise most_subtasks: At max parallelism 128, what is the most subtasks a keyed operator can have?
        Hint: A subtask owns whole key groups.
        -> not answered yet: set answer = ... and run the cell again.
    """  # noqa: E501
    e = exercise(chapter, exercise_id)
    return f"Exercise {e.id}: {e.task}\nHint: {e.hint}\n-> {e.check(answer)}"


def check(chapter: str, exercise_id: str, answer: Any) -> Check:
    """Check ``answer`` to exercise ``exercise_id`` of ``chapter`` (``None``: not answered).

    Example::

        >>> print(check("state_cache", "cycle_fits", 6))
        right: at 6 entries the LRU hits 90% of 60 lookups cycling through 6 keys; at 5 it never hits.
    """  # noqa: E501
    return exercise(chapter, exercise_id).check(answer)


def solutions_markdown() -> str:
    """The solutions page: every exercise, chapter by chapter, its answer found by
    ``solve()`` and what the check says of it (``docs/solutions.md`` is this text)."""
    lines = [
        "# Solutions to the exercises",
        "",
        "Written by `skewlab.experiments.exercises.solutions_markdown()`: each answer is found by",
        "the exercise's own `solve()` and checked by the check the notebook runs "
        "(`tests/experiments/test_exercises.py` fails when this page and the code part).",
    ]
    for chapter in dict.fromkeys(e.chapter for e in EXERCISES):
        record = chapter_record(chapter)
        lines += ["", f"## {record.notebook.removesuffix('.ipynb')}", ""]
        lines += [f"*{record.question}*", ""] if record.question else []
        for e in chapter_exercises(chapter):
            answer = e.solve()
            lines += [
                f"**{e.id}.** {e.task}",
                "",
                f"*Answer:* `{answer!r}` -- {e.check(answer).text}",
            ]
            lines += [""] if e is not chapter_exercises(chapter)[-1] else []
    return "\n".join(lines).rstrip() + "\n"
