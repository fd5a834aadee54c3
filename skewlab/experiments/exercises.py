"""Exercises: at the end of a chapter, tasks the reader answers and checks in the notebook.

An :class:`Exercise` is a task, a ``check(answer)`` that decides with skewlab's own parts --
Flink's key-group formulas, the LRU cache core the state backend runs, the buffer's flush rule --
never against a typed answer, and a ``solve()`` that finds the answer with the same parts (the
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

from skewlab.errors import SkewlabInputError, UnsortedInputError
from skewlab.experiments.chapters import chapter as chapter_record
from skewlab.inputs.wordcount import flip325_key
from skewlab.state import create_backend
from skewlab.state.key_groups import (
    assign_to_key_group,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
)
from skewlab.state.single_key import SingleKeyStateBackend
from skewlab.state.value_state import WriteBackLru
from skewlab.strategies.key_splitting import Sender

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


def _whole(answer: Any, what: str) -> int:
    if isinstance(answer, bool) or not isinstance(answer, int | float) or answer != int(answer):
        raise SkewlabInputError(f"the answer is {what}, a whole number; got {answer!r}")
    return int(answer)


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
    m = _whole(answer, "a max parallelism")
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
    opened = _whole(answer, "a number of files")
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
    p = _whole(answer, "a parallelism")
    ok = p == 128
    return ok, (
        f"at max parallelism 128, parallelism {p} "
        + ("is the most there can be: one key group per subtask." if ok else
           ("leaves some subtasks more key groups than others." if p < 128 and 128 % p else
            "is refused: there cannot be more subtasks than key groups." if p > 128 else
            "splits the key groups evenly, but more subtasks are still possible."))
    )  # fmt: skip


def _partial_sum(answer):
    total = _whole(answer, "a sum")
    right = total == 10 * 11 // 2
    return (
        right,
        f"{total} is {'' if right else 'not '}what the running partials 1, 2, ..., 10 add up to.",
    )


def _partials_sent(answer):
    sent = _whole(answer, "a number of partials")
    right = sent == 24
    return right, (
        f"{sent} partials: " + ("one per view, whatever the salt." if right else
                                "stage 1 sends one running partial per view it counts.")
    )  # fmt: skip


def _writes_per_flush(answer):
    writes = _whole(answer, "a number of writes")
    bound = min(1_000, 20)
    right = writes == bound
    return right, (
        f"{writes} writes: a flush writes each buffered key once, and at most "
        f"min(max_count, keys) = min(1,000, 20) keys are buffered."
        if right
        else f"{writes} is not the most writes one flush makes: count the keys it holds."
    )


def _flushes(answer):
    flushes = _whole(answer, "a number of flushes")
    right = flushes == math.ceil(40 / 8)
    return right, (
        f"{flushes} flushes: one every 8 records, the last at the end of input."
        if right
        else f"{flushes} is not how often a buffer of 8 records empties over 40 records."
    )


def _hit_ratios(answer, keys: list[int]) -> tuple[int, float, float]:
    """The answer as a cache size, the LRU's hit ratio over ``keys`` at that size and at one
    entry fewer (0 at none)."""
    entries = _whole(answer, "a cache size in entries")
    if entries < 1:
        raise SkewlabInputError(f"a cache holds at least one entry; got {entries}")
    below = _lru_hit_ratio(entries - 1, keys) if entries > 1 else 0.0
    return entries, _lru_hit_ratio(entries, keys), below


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
    index = _whole(answer, "a record's index")
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
        subtasks = _whole(answer, "a number of subtasks")
        reached = _subtasks_of_a_hot_key(scheme)
        right = subtasks == reached
        return right, (
            f"under {name} at parallelism 8, 1,000 records of one hot key reach {reached} "
            "subtasks" + ("." if right else f", not {subtasks}.")
        )

    return judge


_pkg_spread, _wchoices_spread = _spread("pkg", "PKG"), _spread("wchoices", "W-Choices")


def _smallest(judge, low: int, high: int) -> int:
    """The smallest answer in ``low .. high`` the judge accepts."""
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
