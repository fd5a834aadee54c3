"""Predict, then run: the question a chapter asks its reader before its main measurement, and
the figure that answers it.

A :class:`Prediction` asks for one figure of one of the chapter's claims (the claims module
computes it from a result, :mod:`skewlab.experiments.claims`), on a scale the reader can set
(a linear or a logarithmic slider, its unit). :meth:`Prediction.answers` gives the figure three
ways, as a claim is checked: this run's, the shipped reference's (for a benchmark) and the
seed's words -- so a reveal sets the reader's guess beside figures it never types.
:func:`record_guess` appends a locked-in guess to ``data/predictions.jsonl`` (or the file
``$SKEWLAB_PREDICTIONS`` names).

Example::

    >>> p = prediction("buffering", "buffer_speedup_at_20_keys")
    >>> p.claim().id, p.figure, p.unit
    ('buffer_wins_at_20_keys', 'speedup', 'x')
    >>> p.format(12.345)
    '12.3x'
    >>> [q.id for q in chapter_predictions("state_cache")]
    ['hit_ratio_at_250_entries']
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skewlab import paths
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import BENCHMARKS
from skewlab.experiments.claims import Claim, Outcome, claim, figure_field
from skewlab.experiments.intervals import Estimate
from skewlab.experiments.references import load_reference

__all__ = [
    "PREDICTIONS",
    "PREDICTIONS_LOG_ENV",
    "Answers",
    "Prediction",
    "chapter_predictions",
    "prediction",
    "predictions_log",
    "record_guess",
]


@dataclass(frozen=True)
class Prediction:
    """One question put before a measurement: ``question``; the figure that answers it (figure
    ``figure`` of claim ``claim_id`` of ``chapter``); the control's scale (``low`` .. ``high``,
    ``log``: a logarithmic slider, ``start``: where it opens) and ``unit``: ``x`` (a ratio),
    ``%`` (a share, figures in 0..1, the slider in percent), a unit written after the number
    (``" h"``, ``" records/s"``) or ``""``."""

    id: str
    chapter: str
    question: str
    claim_id: str
    figure: str
    unit: str
    low: float
    high: float
    start: float
    log: bool = False

    def claim(self) -> Claim:
        """The claim whose figure answers the question."""
        return claim(self.chapter, self.claim_id)

    def format(self, value: float, *, unit: bool = True) -> str:
        """A figure (or a guess) as the claim's own sentence writes that figure, in the
        question's unit (``unit=False``: the number alone, as an interval's bounds are
        written)."""
        found = figure_field(self.claim().measured, self.figure)
        spec = (found and found.group(1)) or (".0%" if self.unit == "%" else ".3g")
        text = format(value, spec)
        if self.unit == "%":
            return text if unit else text.rstrip("%")
        return text + self.unit if unit else text

    def answers(self, result: Any) -> Answers:
        """This figure over ``result`` (this run), over its source's shipped reference (when
        the source is a benchmark) and the seed's words."""
        c = self.claim()
        reference = load_reference(c.source) if c.source in BENCHMARKS else None
        return Answers(
            self,
            c.evaluate(result),
            None if reference is None else c.evaluate(reference),
            c.seed,
        )


@dataclass(frozen=True)
class Answers:
    """What answers a :class:`Prediction`: its claim over this run and over the reference."""

    prediction: Prediction
    this_run: Outcome
    reference: Outcome | None
    seed: str

    def value(self, outcome: Outcome | None) -> float | None:
        """The prediction's figure in ``outcome`` (``None``: not measured)."""
        if outcome is None:
            return None
        figure = outcome.figures.get(self.prediction.figure)
        return figure.value if isinstance(figure, Estimate) else figure

    def text(self, outcome: Outcome | None) -> str:
        """The figure with its interval where it has one: ``"21.3x [18.0..24.1] (3 runs)"``."""
        value = self.value(outcome)
        if value is None:
            return "not measured"
        figure = outcome.figures[self.prediction.figure]  # type: ignore[union-attr]
        fmt = self.prediction.format
        if isinstance(figure, Estimate) and figure.has_interval and figure.method != "exact":
            runs = f"{figure.runs} run{'s' * (figure.runs != 1)}"
            low, high = fmt(figure.low, unit=False), fmt(figure.high, unit=False)
            return f"{fmt(value)} [{low}..{high}] ({runs})"
        return fmt(value)

    def beside(self, guess: float) -> str:
        """The guess against this run's figure: ``"your guess is 2.1x this run's figure"``."""
        measured = self.value(self.this_run)
        if measured is None or not measured or guess <= 0:
            return ""
        ratio = guess / measured
        if 0.8 <= ratio <= 1.25:
            return "your guess is within 25 % of this run's figure"
        side = "above" if ratio > 1 else "below"
        times = ratio if ratio > 1 else 1 / ratio
        return f"your guess is {times:.1f} times {side} this run's figure"


PREDICTIONS: tuple[Prediction, ...] = (
    Prediction(
        id="busiest_subtask_over_mean",
        chapter="hot_keys",
        question=(
            "Under Zipf views, how many times the mean load will the busiest subtask carry? "
            "(1 is an even share; the parallelism is the most it can be)"
        ),
        claim_id="hot_key_overloads_a_subtask",
        figure="zipf",
        unit="x",
        low=1.0,
        high=8.0,
        start=1.5,
    ),
    Prediction(
        id="records_per_second_per_key_on_ebs",
        chapter="ebs_latency",
        question=(
            "On the article's EBS volume an 8 KiB read takes about 6 ms and a write about 8 ms. "
            "When every record of a key reads and writes its state, how many records per "
            "second can that one key absorb?"
        ),
        claim_id="ebs_caps_a_key_near_70",
        figure="naive",
        unit=" records/s",
        low=1.0,
        high=100_000.0,
        start=1_000.0,
        log=True,
    ),
    Prediction(
        id="salted_sum_over_true_count",
        chapter="salting",
        question=(
            "Summed from the sub-keys' running partials, how many times the true count will "
            "the hottest tweet's total be?"
        ),
        claim_id="running_partials_double_count",
        figure="worst",
        unit="x",
        low=1.0,
        high=10_000.0,
        start=2.0,
        log=True,
    ),
    Prediction(
        id="buffer_speedup_at_20_keys",
        chapter="buffering",
        question=(
            "At 20 keys, how many times the naive reduce's job throughput will the buffer reach?"
        ),
        claim_id="buffer_wins_at_20_keys",
        figure="speedup",
        unit="x",
        low=0.1,
        high=1_000.0,
        start=2.0,
        log=True,
    ),
    Prediction(
        id="hit_ratio_at_250_entries",
        chapter="state_cache",
        question=(
            "The keys cycle through 1,000 keys in blocks of 500 (each touched twice per block). "
            "With an LRU of 250 entries, what share of the lookups will hit?"
        ),
        claim_id="hit_ratio_staircase",
        figure="h250",
        unit="%",
        low=0.0,
        high=1.0,
        start=0.25,
    ),
    Prediction(
        id="rocksdb_over_sorted_job_time",
        chapter="sorted_input",
        question=(
            "On bounded input, how many times sorted input's job time will keyed state on "
            "RocksDB take, sort included? (below 1: RocksDB is faster)"
        ),
        claim_id="sorted_beats_rocksdb",
        figure="ratio",
        unit="x",
        low=0.1,
        high=100.0,
        start=1.0,
        log=True,
    ),
    Prediction(
        id="busiest_subtask_under_two_choices",
        chapter="beyond_salting",
        question=(
            "With two choices per key (PKG), how many times the mean load will the busiest "
            "subtask carry? (1 is an even share)"
        ),
        claim_id="pkg_cuts_the_imbalance_by_an_order_of_magnitude",
        figure="pkg",
        unit="x",
        low=1.0,
        high=4.0,
        start=2.0,
    ),
    Prediction(
        id="zipf_catch_up_hours",
        chapter="backlog",
        question=(
            "The input was down for 4 hours and now arrives at 70 % of the job's normal "
            "capacity. With one tweet hot (Zipf keys) and the job scaled out as far as it "
            "helps, how many hours will the naive job take to catch up? (uniform keys: minutes)"
        ),
        claim_id="hot_key_slows_the_catch_up",
        figure="zipf",
        unit=" h",
        low=0.01,
        high=100.0,
        start=0.5,
        log=True,
    ),
    Prediction(
        id="per_batch_over_per_record_at_20_keys",
        chapter="streaming",
        question=(
            "At 20 keys, how many times the per-record processor's throughput will the "
            "per-batch one reach (one state read and write per key and micro-batch instead of "
            "per row)?"
        ),
        claim_id="per_batch_beats_per_record",
        figure="ratio",
        unit="x",
        low=0.1,
        high=1_000.0,
        start=2.0,
        log=True,
    ),
    Prediction(
        id="doctor_predictions_within_tolerance",
        chapter="skew_doctor",
        question=(
            "The doctor prices every remedy on four workloads before any of them runs. What "
            "share of its job-throughput predictions will land within 25 % of what the runs "
            "measure?"
        ),
        claim_id="doctor_throughput_within_tolerance",
        figure="share",
        unit="%",
        low=0.0,
        high=1.0,
        start=0.5,
    ),
    Prediction(
        id="bytes_read_all_over_key_groups",
        chapter="rescaling",
        question=(
            "Restoring at a new parallelism: how many times the bytes of a key-group restore "
            "will reading every old file whole cost?"
        ),
        claim_id="key_groups_read_less",
        figure="ratio",
        unit="x",
        low=1.0,
        high=100.0,
        start=2.0,
        log=True,
    ),
)


def chapter_predictions(chapter: str) -> tuple[Prediction, ...]:
    """The predictions chapter ``chapter`` asks (empty where it asks none)."""
    return tuple(p for p in PREDICTIONS if p.chapter == chapter)


def prediction(chapter: str, prediction_id: str) -> Prediction:
    """One prediction of a chapter, by its id.

    Example::

        >>> prediction("buffering", "nothing")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: chapter 'buffering' asks no prediction 'nothing': it asks buffer_speedup_at_20_keys
    """  # noqa: E501
    asked = chapter_predictions(chapter)
    for p in asked:
        if p.id == prediction_id:
            return p
    raise SkewlabInputError(
        f"chapter {chapter!r} asks no prediction {prediction_id!r}: it asks "
        f"{', '.join(p.id for p in asked) or 'none'}"
    )


#: Set to a file's path, where locked-in guesses are recorded instead of the default.
PREDICTIONS_LOG_ENV = "SKEWLAB_PREDICTIONS"


def predictions_log() -> Path:
    """Where locked-in guesses are recorded: ``$SKEWLAB_PREDICTIONS``, else
    ``data/predictions.jsonl``."""
    env = os.environ.get(PREDICTIONS_LOG_ENV)
    return Path(env) if env else paths.data_dir() / "predictions.jsonl"


def record_guess(p: Prediction, guess: float, path: Path | None = None) -> dict[str, Any]:
    """Append a locked-in guess to the predictions log (one JSON line); returns the line.

    A guess outside the prediction's scale is refused.
    """
    if not p.low <= guess <= p.high:
        raise SkewlabInputError(
            f"a guess for {p.id!r} must lie in {p.format(p.low)} .. {p.format(p.high)}, got "
            f"{p.format(guess)}"
        )
    line = {
        "chapter": p.chapter,
        "prediction": p.id,
        "guess": guess,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = path or predictions_log()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    return line
