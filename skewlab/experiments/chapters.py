"""The chapters of the lab: ONE registry that ``skewlab bench``, ``bench compare``, ``report``
and the notebooks read.

A chapter is a lesson: one notebook, and the same word (its ``id``) names its notebook
(``notebooks/NN_<id>.ipynb``), its experiment module (``skewlab.experiments.<id>`` unless it
names another, where it measures something), its figures (``skewlab.viz.<id>`` unless it names
another: the skew doctor's live in :mod:`skewlab.doctor`), its sizes (:func:`size_settings`)
and its benchmark (``skewlab bench <id>``). A chapter may hold more than one benchmark (chapter
``sorted_input`` also runs ``value_state``, FLIP-140's micro-benchmark); each benchmark is a
:class:`Benchmark` record with its own id, sizes, headline ratios and extra options.

Sizes (how big a run is) are ``tiny`` (seconds; what the tests render), ``quick`` (minutes on a
laptop; the default) and ``full`` (the seeds' own sizes). They are not *disk profiles* (what a
state access costs, :mod:`skewlab.iomodel.profiles`): two words, everywhere.

Adding a chapter means adding one :class:`Chapter` here (and its notebook; the tests in
``tests/experiments/test_chapters.py`` say what is missing)::

    Chapter(
        id="doctor", number=9, seed="-", title="The skew doctor: your own keys",
        sizes={"tiny": {...}, "quick": {...}, "full": {...}},
        benchmarks=(Benchmark(id="doctor", help="...", headlines="HEADLINES"),),
    )

Example::

    >>> chapter("state_cache").notebook
    '04_state_cache.ipynb'
    >>> benchmark("cache").id          # an old bench name still finds its benchmark
    'state_cache'
    >>> size_settings("state_cache", "full")["n"]
    20000000
    >>> size_settings("state_cache", "huge")
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: unknown size (--size) 'huge': use one of tiny, quick, full
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.validation import check_choice, check_whole

__all__ = [
    "BENCHMARKS",
    "CHAPTERS",
    "SEED_CARDINALITIES",
    "SEED_KEYS",
    "SIZES",
    "Benchmark",
    "Chapter",
    "Option",
    "benchmark",
    "chapter",
    "headline_ratios",
    "resolve_runs",
    "size_settings",
]

#: The sizes, smallest first.
SIZES = ("tiny", "quick", "full")

#: Seed 000's tweet cardinalities, 20,000 down to 1.
SEED_CARDINALITIES = (20_000, 10_000, 5_000, 1_000, 500, 100, 50, 20, 10, 5, 2, 1)
#: Seed 000's headline point: 20 distinct tweets (the summaries' ``..._at_20_keys``).
SEED_KEYS = 20
#: The floor's view job: seed 000's 25,000 users over 20 tweets (the buffering headline's
#: cardinality), at p = 1 and 2.
_FLOOR_VIEWS = {"view_users": 25_000, "view_tweets": SEED_KEYS, "parallelism": (1, 2)}
_CACHE_SWEEP = (50, 150, 250, 350, 450, 499, 500, 600, 750, 900, 999, 1000, 1250, 1500)


def mib_list(text: str) -> tuple[int, ...]:
    """A comma-separated list of whole MiB on the command line.

    Example::

        >>> mib_list("400, 700")
        (400, 700)
        >>> mib_list("400MB")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: '400MB' is not a comma-separated list of whole MiB (e.g. 400,700)
    """  # noqa: E501
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of whole MiB (e.g. 400,700)"
        ) from None


@dataclass(frozen=True)
class Option:
    """An extra ``skewlab bench`` option of one benchmark: ``--flag`` sets the keyword ``dest``
    of its ``run_experiment`` (left out when not given, so the function's default applies)."""

    flag: str
    dest: str
    type: Callable[[str], Any]
    help: str
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class Benchmark:
    """One ``skewlab bench`` experiment.

    Its measurement is ``run_experiment(size, runs, *, parallelism, progress, spark, ...)`` in
    its ``module`` (default ``skewlab.experiments.<id>``; a
    :class:`~skewlab.experiments.results.BenchResult`), its headline ratios a dict ``summary
    key -> the seed's figure`` (``None`` where the seed published none) named ``headlines`` in
    that module; its printed summary is ``formatter(result)`` in ``viz_module``, its chapter's
    figures (presentation lives there: the registry only names the function,
    :func:`skewlab.viz.summary_formatter` finds it; a measurement never imports its figures).

    Its verdicts (:mod:`skewlab.experiments.intervals`) read two more fields: ``bounds``, the
    physical bounds its summary must keep (job-level ratio key -> the operators' ratio key of
    the same two sides: the job's ratio lies between 1 and the operators'), and
    ``run_to_run_spread``, how far one run's ratio lands from the median of many on the
    two-core machines of docs/benchmarks.md ("Run-to-run spread"; relative, ``None`` where
    not measured), the interval a one-run result gets.

    Example::

        >>> benchmark("value_state").formatter, benchmark("value_state").viz_module
        ('format_value_state_summary', 'skewlab.viz.sorted_input')
        >>> benchmark("buffering").bounds["speedup_at_20_keys"]
        'operator_speedup_at_20_keys'
    """

    id: str
    help: str
    sizes: dict[str, dict[str, Any]]
    headlines: str = "HEADLINES"
    options: tuple[Option, ...] = ()
    aliases: tuple[str, ...] = ()
    formatter: str = "format_summary"
    chapter: str = ""  # filled in by the chapter that holds it
    bounds: dict[str, str] = field(default_factory=dict)
    run_to_run_spread: float | None = None
    #: the module of its ``run_experiment`` (default ``skewlab.experiments.<id>``)
    module: str = ""
    #: where its printed summary lives (default: its chapter's figures, filled in by the chapter)
    viz_module: str = ""

    def __post_init__(self) -> None:
        if not self.module:
            object.__setattr__(self, "module", f"skewlab.experiments.{self.id}")

    def run_function(self) -> Callable[..., Any]:
        return importlib.import_module(self.module).run_experiment


@dataclass(frozen=True)
class Chapter:
    """One lesson: its notebook, seed, sizes and benchmarks (see the module doc)."""

    id: str
    number: int
    seed: str
    title: str
    sizes: dict[str, dict[str, Any]] | None = None
    benchmarks: tuple[Benchmark, ...] = ()
    measures: bool = True  # has a module that measures (its experiment module)
    extra_sizes: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    #: its measurement (default ``skewlab.experiments.<id>``; ``None`` where it measures nothing)
    experiment_module: str | None = ""
    #: its figures, tables, sentences and controls (default ``skewlab.viz.<id>``)
    viz_module: str = ""
    #: the one question the chapter asks: stated at the top of its notebook, answered at its
    #: end by the claims ``answered_by`` names (its claims table opens with the answer)
    question: str = ""
    answered_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.experiment_module == "":
            default = f"skewlab.experiments.{self.id}" if self.measures else None
            object.__setattr__(self, "experiment_module", default)
        if not self.viz_module:
            object.__setattr__(self, "viz_module", f"skewlab.viz.{self.id}")
        for bench in self.benchmarks:
            object.__setattr__(bench, "chapter", self.id)
            if not bench.viz_module:
                object.__setattr__(bench, "viz_module", self.viz_module)

    @property
    def notebook(self) -> str:
        return f"{self.number:02d}_{self.id}.ipynb"


#: The streaming benchmark's sizes; ``hot_views``, ``hot_rows_per_trigger``, ``n_users`` and
#: ``parallelism`` are also the hot-partition run's (:func:`_hot_partition_sizes`).
_STREAMING_SIZES = {
    "tiny": {
        "cardinalities": (20,),
        "distributions": ("uniform",),
        "n_views": 1_200,
        "n_users": 500,
        "runs": 1,
        "max_rows_per_trigger": 600,
        "parallelism": 4,
        "warmup": False,
        "latency_views": 300,
        "source_rate": 600,
        "trigger_intervals": (100, 400),
        "rescale_views": 900,
        "hot_views": 1_200,
        "hot_rows_per_trigger": 600,
    },
    "quick": {
        "cardinalities": (20,),
        "distributions": ("uniform",),
        "n_views": 10_000,
        "n_users": 25_000,
        # one run: its ratios have no interval of their own (a query here
        # makes two micro-batches, the first of which also pays the query's
        # start); the reference's runs carry the verdicts
        "runs": 1,
        "max_rows_per_trigger": 5_000,
        "parallelism": 2,  # two state partitions on two cores: half the commits
        "warmup": True,
        "latency_views": 500,
        "source_rate": 1_000,
        # the longer interval beyond a micro-batch's own duration (about
        # 2 s here), or the trigger changes nothing; half a second of arrivals
        # makes 1-2 micro-batches per interval, too few for a median's interval
        # (6 at 2 s or more each would cost the report 12 s and more a point):
        # the latency claim is inconclusive live, and the reference carries it
        "trigger_intervals": (100, 3_000),
        "rescale_views": 1_000,
        # the hot partition (one per-record run over Zipf views): two
        # micro-batches show it
        "hot_views": 2_000,
        "hot_rows_per_trigger": 1_000,
    },
    "full": {
        "cardinalities": SEED_CARDINALITIES,
        "distributions": ("uniform", "zipf"),
        "n_views": 100_000,
        "n_users": 25_000,
        "runs": 3,
        "max_rows_per_trigger": 10_000,
        "parallelism": 4,
        "warmup": True,
        # 20 s of arrivals: 10 micro-batches or more at every interval, what
        # a median's order-statistics interval needs (6 at least)
        "latency_views": 40_000,
        "source_rate": 2_000,
        "trigger_intervals": (50, 100, 250, 500, 1_000, 2_000),
        "rescale_views": 20_000,
        "hot_views": 100_000,
        "hot_rows_per_trigger": 10_000,
    },
}


def _hot_partition_sizes() -> dict[str, dict[str, Any]]:
    """``bench hot_partition``'s sizes: the hot-partition run's settings of the streaming
    benchmark, one run of 20 tweets.

    Example::

        >>> _hot_partition_sizes()["quick"]["n_views"] == _STREAMING_SIZES["quick"]["hot_views"]
        True
    """
    return {
        size: {
            "n_views": s["hot_views"],
            "n_users": s["n_users"],
            "n_tweets": 20,
            "rows_per_trigger": s["hot_rows_per_trigger"],
            "parallelism": s["parallelism"],
            "runs": 1,
        }
        for size, s in _STREAMING_SIZES.items()
    }


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(
        id="hot_keys",
        question="How unevenly does a hot key load an operator's subtasks?",
        answered_by=("hot_key_overloads_a_subtask",),
        number=0,
        seed="000",
        title="The problem in pictures: per-key and per-subtask load",
        measures=False,
        sizes={
            "tiny": {"n_views": 2_000, "n_users": 500, "n_tweets": 50},
            "quick": {"n_views": 20_000, "n_users": 25_000, "n_tweets": 1_000},
            "full": {"n_views": 1_000_000, "n_users": 25_000, "n_tweets": 20_000},
        },
    ),
    Chapter(
        id="ebs_latency",
        question=(
            "How many records per second can one key absorb "
            "when every record reads and writes its state on disk?"
        ),
        answered_by=("ebs_caps_a_key_near_70",),
        number=1,
        seed="000",
        title="The EBS arithmetic, this machine's disk, a real run measured and modelled",
        measures=False,
        sizes={
            "tiny": {"probe_size_mb": 2, "probe_seconds": 1, "run_views": 2_000},
            "quick": {"probe_size_mb": 8, "probe_seconds": 1, "run_views": 10_000},
            "full": {"probe_size_mb": 256, "probe_seconds": 20, "run_views": 100_000},
        },
    ),
    Chapter(
        id="salting",
        question="What does salting a hot key buy, and what does it break?",
        answered_by=(
            "salting_spreads_the_load",
            "running_partials_double_count",
            "salting_loses_order",
        ),
        number=2,
        seed="000",
        title="Key salting: the double count and the per-key order it loses",
        sizes={
            "tiny": {
                "n_views": 2_000,
                "n_users": 500,
                "n_tweets": 5,
                "routing_parallelism": 4,
                "n_event_users": 1_000,
            },
            "quick": {
                "n_views": 10_000,
                "n_users": 5_000,
                "n_tweets": 5,
                "routing_parallelism": 8,
                "n_event_users": 5_000,
            },
            "full": {
                "n_views": 100_000,
                "n_users": 25_000,
                "n_tweets": 20,
                "routing_parallelism": 8,
                "n_event_users": 100_000,
            },
        },
    ),
    Chapter(
        id="buffering",
        question=(
            "How much faster does an in-memory buffer "
            "make a hot key, and what does it cost in latency?"
        ),
        answered_by=(
            "buffer_wins_at_20_keys",
            "gain_shrinks_with_keys",
            "latency_grows_with_interval",
        ),
        number=3,
        seed="000",
        title="In-memory buffering: throughput over cardinality, latency over the interval",
        benchmarks=(
            Benchmark(
                id="buffering",
                help="seed 000: naive (RocksDB) vs buffered view counting, tweet cardinality "
                "20,000 .. 1",
                bounds={
                    "speedup_at_20_keys": "operator_speedup_at_20_keys",
                    "speedup_at_20_keys_list": "operator_speedup_at_20_keys_list",
                    "speedup_at_20000_keys": "operator_speedup_at_20000_keys",
                },
                # one quick run (`--runs 1`: one round of the slope) of the headline at 20
                # keys landed up to 6.9x from the median of five (docs/benchmarks.md)
                run_to_run_spread=5.9,
                sizes={
                    "tiny": {
                        "cardinalities": (1_000, 20),
                        "n_views": 2_000,
                        "n_users": 1_000,
                        "runs": 1,
                        "sides": ("naive", "buffered", "buffered_list", "buffered_hotkey"),
                    },
                    # a quick run measures the lesson a short run can conclude: the seed's
                    # headline point (20 keys, naive and the vectorised buffer, 3 rounds); the
                    # rest of the chapter is the shipped reference's (the seed's grid); 10,000
                    # views a round (20,000 took 3-4 s more at 2 subtasks and concluded the same)
                    "quick": {
                        "cardinalities": (20,),
                        "n_views": 10_000,
                        "n_users": 25_000,
                        "runs": 3,
                        "sides": ("naive", "buffered"),
                    },
                    "full": {
                        "cardinalities": SEED_CARDINALITIES,
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "runs": 5,
                        "sides": ("naive", "buffered", "buffered_list", "buffered_hotkey"),
                    },
                },
            ),
        ),
        extra_sizes={
            # rounds: a median latency's interval is taken over the sweep's rounds
            "latency_sweep": {
                "tiny": {
                    "views": 1_000,
                    "source_rate": 2_000,
                    "trigger_intervals": (20, 200),
                    "rounds": 2,
                },
                # half a second of arrivals a run (the baseline and 3 rounds of the two
                # intervals: 7 runs): the medians at 10 ms and 500 ms stay an order of
                # magnitude apart
                "quick": {
                    "views": 1_000,
                    "source_rate": 2_000,
                    "trigger_intervals": (10, 500),
                    "rounds": 3,
                },
                "full": {
                    "views": 20_000,
                    "source_rate": 2_000,
                    "trigger_intervals": (5, 10, 20, 50, 100, 200, 500),
                    "rounds": 3,
                },
            }
        },
    ),
    Chapter(
        id="state_cache",
        question=(
            "When does an LRU cache of objects in front of "
            "RocksDB pay, and what does it cost when it misses?"
        ),
        answered_by=("cache_wins_at_all_hits", "speedup_grows_with_hits", "zero_hits_cost_little"),
        number=4,
        seed="003",
        title="FLIP-325: an LRU cache of objects in front of RocksDB",
        benchmarks=(
            Benchmark(
                id="state_cache",
                help="seed 003 (FLIP-325): LRU cache of 250/500/1,000 objects in front of RocksDB",
                aliases=("cache",),
                options=(
                    Option(
                        "--write-batch",
                        "write_batch",
                        int,
                        "evicted entries per RocksDB write batch of the batched write-back "
                        "(default 128; FLIP-325's LRU beside it writes one at a time)",
                    ),
                    Option(
                        "--cache-policy",
                        "cache_policy",
                        str,
                        "lru (default): the seed's part only; tinylfu: then LRU against "
                        "W-TinyLFU's admission on FLIP-325's keys and Zipf streams, OPT beside",
                        choices=("lru", "tinylfu"),
                    ),
                ),
                # the job's ratio lies between 1 and the operators' wall-clock ratio (the job's
                # time holds the operators' and work both sides share)
                bounds={
                    **{
                        f"speedup_{size}{suffix}": f"operator_wall_speedup_{size}{suffix}"
                        for size in (250, 500, 1000)
                        for suffix in ("", "_batched")
                    },
                    **{
                        f"batched_over_lru_{size}": f"operator_wall_batched_over_lru_{size}"
                        for size in (250, 500, 1000)
                    },
                },
                # batched_sizes: the cache sizes the batched write-back runs at
                sizes={
                    "tiny": {
                        "n": 20_000,
                        "runs": 1,
                        "batched_sizes": (250, 500, 1000),
                        "sweep_n": 10_000,
                        "sweep_sizes": (250, 500, 1000),
                        "costs_n": 20_000,
                        "policy_n": 20_000,
                        "policy_keys": 2_000,
                    },
                    # a quick run measures in 3 rounds what a short run can conclude: the cache
                    # at 100% hits and the hit-ratio staircase; FLIP-325's LRU at 0% hits runs
                    # too, a small effect its rounds may not tell apart; the batched write-back
                    # (about 5 s of a quick report) and the 0%-hit breakdown (4-8 s, its claim
                    # inconclusive in most quick runs: docs/report.md) are the reference's
                    "quick": {
                        "n": 100_000,
                        "runs": 3,
                        "batched_sizes": (),
                        "sweep_n": 50_000,
                        "sweep_sizes": (250, 500, 750, 1000, 1500),
                        "costs_n": 0,
                        "policy_n": 200_000,
                        "policy_keys": 100_000,
                    },
                    # the policy part (--cache-policy tinylfu) at the simulation's
                    # size: 1,000,000 requests over 100,000 keys
                    "full": {
                        "n": 20_000_000,
                        "runs": 3,
                        "batched_sizes": (250, 500, 1000),
                        "sweep_n": 2_000_000,
                        "sweep_sizes": _CACHE_SWEEP,
                        "costs_n": 2_000_000,
                        "policy_n": 1_000_000,
                        "policy_keys": 100_000,
                    },
                },
            ),
            Benchmark(
                id="floor",
                help="the engine's floor: seed 003's count job and seed 000's view job with a "
                "pass-through operator, built up part by part (source, key group, shuffle, "
                "Arrow to Python, loop, emission, the engine), per-record cost of each, Spark's "
                "own aggregation beside",
                formatter="format_floor_summary",
                # n: the count job's records; view_n: the view job's views (Parquet)
                sizes={
                    "tiny": {"n": 20_000, "view_n": 20_000, **_FLOOR_VIEWS, "runs": 1},
                    "quick": {"n": 1_000_000, "view_n": 1_000_000, **_FLOOR_VIEWS, "runs": 3},
                    "full": {"n": 20_000_000, "view_n": 5_000_000, **_FLOOR_VIEWS, "runs": 3},
                },
            ),
        ),
    ),
    Chapter(
        id="sorted_input",
        question="On bounded input, does sorting by key beat keeping every key's state?",
        answered_by=(
            "sorted_beats_rocksdb",
            "heap_beats_sorted_here",
            "sorted_finishes_where_heap_runs_out",
        ),
        number=5,
        seed="001",
        title="FLIP-140: sorted input with single-key state for bounded input",
        benchmarks=(
            Benchmark(
                id="sorted_input",
                help="seed 001 (FLIP-140): WordCount, keyed RocksDB/heap vs sorted input with "
                "single-key state",
                aliases=("sorted",),
                options=(
                    Option(
                        "--key-type",
                        "key_type",
                        str,
                        "key type of the WordCount input: int or string (default int)",
                    ),
                ),
                # sort-then-group and sorted input share every step but the operator (the same
                # sort): their job's time ratio lies between 1 and their operators'
                bounds={"sorted_over_sort_group": "sorted_over_sort_group_operator_wall"},
                # strategies: the sides timed; a quick run times RocksDB and sorted input (the
                # large effect) in 3 rounds and traces the memory claim's runs (the heap and
                # sorted input, untimed); the heap's, the sort-then-group baseline's and Spark
                # SQL's times are the reference's
                sizes={
                    "tiny": {
                        "n": 20_000,
                        "k": 2_000,
                        "runs": 1,
                        "strategies": ("rocksdb", "heap", "sort_group", "sorted", "spark_sql"),
                    },
                    "quick": {
                        "n": 100_000,
                        "k": 40_000,
                        "runs": 3,
                        "strategies": ("rocksdb", "sorted"),
                    },
                    "full": {
                        "n": 40_000_000,
                        "k": 4_000_000,
                        "runs": 3,
                        "strategies": ("rocksdb", "heap", "sort_group", "sorted", "spark_sql"),
                    },
                },
            ),
            Benchmark(
                id="value_state",
                help="seed 001 (FLIP-140): ValueState micro-benchmark, heap / rocksdb / "
                "single_key in ops/ms",
                aliases=("value-state",),
                formatter="format_value_state_summary",
                # 3 rounds at quick too: every ratio gets its interval; a quick run's 10,000
                # keys (about 1 s) conclude what 50,000 (about 5 s) did, the ratios tens of x
                sizes={
                    "tiny": {"keys": 2_000, "runs": 1},
                    "quick": {"keys": 10_000, "runs": 3},
                    "full": {"keys": 500_000, "runs": 5},  # flink-benchmarks' setupKeyCount
                },
            ),
            Benchmark(
                id="memory_cap",
                help="seed 001 (FLIP-140) where memory decides: WordCount with heap vs sorted "
                "input under a memory cap (MiB) on each Python worker",
                aliases=("memory-cap",),
                formatter="format_memory_cap_summary",
                options=(
                    Option(
                        "--caps-mb",
                        "caps_mb",
                        mib_list,
                        "the Python workers' memory caps to run under, MiB, comma-separated "
                        "(e.g. 400,700; a run without a cap is always added)",
                    ),
                ),
                # a cap is an address-space limit (RLIMIT_AS): a worker with pyarrow and pandas
                # loaded needs about 270 MiB of it before it holds any state
                sizes={
                    "tiny": {"n": 2_000_000, "k": 2_000_000, "caps_mb": (400,), "runs": 1},
                    "quick": {"n": 4_000_000, "k": 4_000_000, "caps_mb": (400, 700), "runs": 1},
                    "full": {
                        "n": 40_000_000,
                        "k": 4_000_000,
                        "caps_mb": (300, 400, 500, 700, 1_000),
                        "runs": 1,
                    },
                },
            ),
        ),
        # notebook 05's memory-cap section: millions of keys, too long for a quick report, so
        # a quick (or tiny) report shows the shipped reference's run instead of its own
        extra_sizes={
            "memory_cap_section": {
                "tiny": {"run": False},
                "quick": {"run": False},
                "full": {"run": True},
            },
            # notebook 05's WordCount runs (RocksDB against sorted input in 3 rounds, the
            # memory claim's 4 traced runs: 11-22 s of a quick report on 2 cores for a
            # 1.3-1.7x effect a cold JVM's first rounds do not always tell, docs/report.md):
            # a quick report shows the reference's; the tests' tiny report runs them
            "sorted_runs": {
                "tiny": {"run": True},
                "quick": {"run": False},
                "full": {"run": True},
            },
        },
    ),
    Chapter(
        id="rescaling",
        question="When a job changes its parallelism, which bytes does a new subtask read?",
        answered_by=(
            "key_groups_read_less",
            "key_groups_read_only_owned",
            "index_reads_more_bytes_than_key_groups",
        ),
        number=6,
        seed="002",
        title="Rescaling through key groups: restore at a new parallelism",
        benchmarks=(
            Benchmark(
                id="rescaling",
                help="seed 002: restore at a new parallelism -- read-all vs per-key index vs "
                "key groups",
                aliases=("rescale",),
                sizes={
                    "tiny": {
                        "cases": ((3, 4),),
                        "distributions": ("uniform", "zipf"),
                        "n_views": 2_000,
                        "n_users": 500,
                        "n_tweets": 400,
                        "max_parallelism": 128,
                        "probe_size_mb": 2,
                        "probe_seconds": 0.2,
                    },
                    # the quick report's claims are counts of bytes and requests, exact at
                    # any size: every case, over Zipf views only (a run per case and
                    # distribution, 1-2 s each; the reference has both)
                    "quick": {
                        "cases": ((3, 4), (4, 2), (2, 12)),
                        "distributions": ("zipf",),
                        "n_views": 5_000,
                        "n_users": 2_500,
                        "n_tweets": 1_000,
                        "max_parallelism": 128,
                        "probe_size_mb": 2,
                        "probe_seconds": 0.2,
                    },
                    "full": {
                        "cases": ((3, 4), (4, 2), (2, 12)),
                        "distributions": ("uniform", "zipf"),
                        "n_views": 1_000_000,
                        "n_users": 250_000,
                        "n_tweets": 200_000,
                        "max_parallelism": 128,
                        "probe_size_mb": 256,
                        "probe_seconds": 10,
                    },
                },
            ),
        ),
    ),
    Chapter(
        id="backlog",
        question=(
            "After an outage, how much does scaling out speed the catch-up when one key is hot?"
        ),
        answered_by=(
            "uniform_scales_out",
            "hot_key_slows_the_catch_up",
            "hot_key_caps_capacity",
            "buffering_lifts_ceiling",
        ),
        number=7,
        seed="002",
        title="The outage backlog: catch-up time against parallelism",
        benchmarks=(
            Benchmark(
                id="backlog",
                help="seed 002: the outage backlog -- measured rates, simulated parallelisms, "
                "catch-up time against parallelism",
                aliases=("catch_up", "catch-up"),
                options=(
                    Option(
                        "--outage-hours",
                        "outage_hours",
                        float,
                        "how long the input was unavailable (default: the size's, 4)",
                    ),
                    Option(
                        "--utilization",
                        "utilization",
                        float,
                        "input rate as a share of the slowest curve's normal capacity "
                        "(default 0.7)",
                    ),
                ),
                sizes={
                    "tiny": {
                        "n_views": 4_000,
                        "n_users": 1_000,
                        "n_tweets": 1_000,
                        "skew": 1.1,
                        "outage_hours": 4,
                        "utilization": 0.7,
                        "normal_parallelism": 2,
                        "startup_tasks": 4,
                        "startup_repeats": 1,
                        "runs": 2,  # two rounds: every measured figure gets an interval
                    },
                    "quick": {
                        "n_views": 20_000,
                        "n_users": 10_000,
                        "n_tweets": 5_000,
                        "skew": 1.1,
                        "outage_hours": 4,
                        "utilization": 0.7,
                        "normal_parallelism": 4,
                        "startup_tasks": 8,
                        "startup_repeats": 2,
                        # two rounds of every curve: each figure the median of two, its
                        # interval their range (a third round would add three
                        # stop-with-savepoint runs to the report)
                        "runs": 2,
                    },
                    "full": {
                        "n_views": 1_000_000,
                        "n_users": 250_000,
                        "n_tweets": 100_000,
                        "skew": 1.1,
                        "outage_hours": 4,
                        "utilization": 0.7,
                        "normal_parallelism": 4,
                        "startup_tasks": 32,
                        "startup_repeats": 5,
                        "runs": 5,
                    },
                },
            ),
        ),
        # notebook 07's measured runs: three curves, each a stop-with-savepoint run in every
        # round (about 11 s of a quick report on 2 cores, docs/report.md); a quick report shows
        # the reference's rates (and the curves simulated from them), and its explorer starts
        # from those
        extra_sizes={
            "backlog_runs": {
                "tiny": {"run": True},
                "quick": {"run": False},
                "full": {"run": True},
            },
        },
    ),
    Chapter(
        id="streaming",
        question="Do the hot-key lessons hold in Spark's own streaming engine?",
        answered_by=(
            "per_batch_beats_per_record",
            "builtin_beats_per_batch",
            "latency_grows_with_trigger",
        ),
        number=8,
        seed="000",
        title="Spark Structured Streaming: per-record, per-batch and Spark's aggregation",
        benchmarks=(
            Benchmark(
                id="streaming",
                help="seed 000 on Spark Structured Streaming: per-record vs per-batch "
                "transformWithState vs Spark's aggregation, latency vs trigger interval, "
                "rescaling a checkpoint",
                sizes=_STREAMING_SIZES,
            ),
            Benchmark(
                id="hot_partition",
                help="notebook 08's demonstrations: one per-record transformWithState run over "
                "Zipf views, the processor's time per state partition and micro-batch and the "
                "partition holding tweet-0; what Spark says on its default state store provider",
                formatter="format_hot_partition_summary",
                # a demonstration, one run: the partition holding tweet-0 and Spark's refusal
                sizes=_hot_partition_sizes(),
            ),
        ),
        # notebook 08's rescale section: its queries are a demonstration, not a claim, so a
        # quick report shows the shipped reference's section instead of running its own
        extra_sizes={
            "checkpoint_rescale": {
                "tiny": {"run": True},
                "quick": {"run": False},
                "full": {"run": True},
            },
            # notebook 08's throughput and latency runs: at the quick size one run of each
            # variant concludes none of the chapter's claims (the per-batch gain at 20 keys is
            # within one run's spread, two micro-batches bound no median), so a quick report
            # shows the reference's runs and their verdicts, and runs the hot partition live;
            # so does the tests' tiny report (tests/experiments/test_streaming.py runs the
            # experiment at tiny and draws this section from it, once)
            "streaming_runs": {
                "tiny": {"run": False},
                "quick": {"run": False},
                "full": {"run": True},
            },
            # notebook 08's default-provider query and hot-partition run: demonstrations that
            # conclude no claim and take about 30 s of a quick report on the slower 2-core
            # machine (docs/report.md), so a quick (or tiny) report shows the shipped
            # reference's (`skewlab bench hot_partition` measures them here)
            "hot_partition_section": {
                "tiny": {"run": False},
                "quick": {"run": False},
                "full": {"run": True},
            },
        },
    ),
    Chapter(
        id="skew_doctor",
        question="How far can the doctor's counts and predictions on your keys be trusted?",
        answered_by=(
            "doctor_counts_what_runs_count",
            "doctor_throughput_within_tolerance",
            "doctor_ranks_remedies_as_measured",
        ),
        number=9,
        seed="-",
        title="The skew doctor: your own keys, where their load lands, what parallelism can do",
        experiment_module="skewlab.doctor.diagnosis",
        viz_module="skewlab.doctor.viz",
        # the sample records the notebook diagnoses when given no path: Zipf views
        sizes={
            "tiny": {
                "n_views": 5_000,
                "n_users": 1_000,
                "n_tweets": 500,
                "distribution": "zipf",
                "skew": 1.1,
                "seed": 9,
            },
            "quick": {
                "n_views": 20_000,
                "n_users": 5_000,
                "n_tweets": 2_000,
                "distribution": "zipf",
                "skew": 1.1,
                "seed": 9,
            },
            "full": {
                "n_views": 1_000_000,
                "n_users": 25_000,
                "n_tweets": 20_000,
                "distribution": "zipf",
                "skew": 1.1,
                "seed": 9,
            },
        },
        benchmarks=(
            Benchmark(
                id="remedy_costs",
                module="skewlab.doctor.remedy_costs",
                help="the skew doctor's cost profile: every remedy's job time per record on "
                "this machine, by records per key (naive heap / RocksDB, buffered, cached, "
                "salted, sorted)",
                aliases=("remedy-costs", "costs"),
                formatter="format_remedy_costs_summary",
                # 100,000 views (seed 000's size) over 20 .. 20,000 tweets: 5,000 .. 5 per key
                sizes={
                    "tiny": {
                        "n_views": 5_000,
                        "n_users": 1_000,
                        "cardinalities": (20, 1_000),
                        "parallelism": 2,
                        "runs": 1,
                        "max_rounds": 1,
                    },
                    "quick": {
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "cardinalities": (20, 200, 2_000, 20_000),
                        "parallelism": 2,
                        "runs": 3,
                        "max_rounds": 3,
                    },
                    # a short job spreads more: at full size, a fast remedy runs up to four
                    # times the rounds (matched_rounds)
                    "full": {
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "cardinalities": (20, 200, 2_000, 20_000),
                        "parallelism": 2,
                        "runs": 5,
                        "max_rounds": 20,
                    },
                },
            ),
            Benchmark(
                id="remedy_check",
                module="skewlab.doctor.remedy_check",
                help="is the skew doctor right? its predicted throughput, records per subtask, "
                "hit ratio and ranking of remedies beside real runs on four workloads (one held "
                "out: public flights)",
                aliases=("remedy-check",),
                formatter="format_remedy_check_summary",
                options=(
                    Option(
                        "--costs",
                        "costs",
                        str,
                        "a 'skewlab bench remedy_costs' result file to price with instead of "
                        "a profile measured in the check's own rounds (the default, which also "
                        "judges the stored profile: the newest here, else the shipped reference)",
                    ),
                ),
                sizes={
                    "tiny": {
                        "n_views": 5_000,
                        "n_users": 1_000,
                        "n_tweets": 1_000,
                        "runs": 1,
                        "max_rounds": 1,
                    },
                    "quick": {
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "n_tweets": 20_000,
                        "runs": 3,
                        "max_rounds": 3,
                    },
                    "full": {
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "n_tweets": 20_000,
                        "runs": 5,
                        "max_rounds": 20,
                    },
                },
            ),
            Benchmark(
                id="state_and_follow",
                module="skewlab.doctor.state_and_follow",
                help="notebook 09's demonstrations: the sample records' state skew read from a "
                "checkpoint made of them, and the records followed live as a stream of files",
                formatter="format_state_and_follow_summary",
                # demonstrations, one run each, over the chapter's sample records at its size
                sizes={"tiny": {"runs": 1}, "quick": {"runs": 1}, "full": {"runs": 1}},
            ),
        ),
        # notebook 09's check of the doctor against real runs: every remedy on four workloads
        # takes minutes, so a quick (or tiny) report shows the shipped reference's check
        extra_sizes={
            "remedy_check_section": {
                "tiny": {"run": False},
                "quick": {"run": False},
                "full": {"run": True},
            },
            # notebook 09's checkpoint state and live follow: demonstrations that conclude no
            # claim, a streaming query each (about 7 s of a quick report on a 2-core VM,
            # docs/report.md), so a quick report shows the shipped reference's
            # (`skewlab bench state_and_follow` runs them here); the tests' tiny report runs them
            "doctor_live_sections": {
                "tiny": {"run": True},
                "quick": {"run": False},
                "full": {"run": True},
            },
        },
    ),
    Chapter(
        id="beyond_salting",
        question="Can a hot key be split only as far as its load needs?",
        answered_by=(
            "pkg_cuts_the_imbalance_by_an_order_of_magnitude",
            "splitting_keeps_fewer_replicas_than_salting",
            "pkg_job_throughput_beats_naive",
        ),
        number=10,
        seed="-",
        title="Beyond salting: two choices, D-Choices and W-Choices split only the keys that "
        "need it",
        measures=False,
        # the notebook's run: a quick report runs the benchmarks' tiny size (the full grid
        # takes many minutes) and shows the shipped full reference beside it
        sizes={
            "tiny": {"bench_size": "tiny", "explorer_records": 20_000},
            "quick": {"bench_size": "tiny", "explorer_records": 100_000},
            "full": {"bench_size": "full", "explorer_records": 100_000},
        },
        # the key-splitting runs: five sides, each over two sizes in every round, take about
        # half a minute even at the tiny size and their timed claims conclude nothing there;
        # a quick (or the tests' tiny) report shows the reference's runs (their routing,
        # replicas and verdicts) and runs the cache admission parts live
        # (tests/experiments/test_splitting.py runs them at tiny and draws this section)
        extra_sizes={
            "splitting_runs": {
                "tiny": {"run": False},
                "quick": {"run": False},
                "full": {"run": True},
            },
            # the cache policies on real runs of the count job: about 12-18 s of a quick report
            # on the slower 2-core machine (docs/report.md) for three claims its reference
            # concludes as well; a quick (or tiny) report shows the reference's runs
            # (tests/experiments/test_cache_policy.py runs the policies on real runs, smaller)
            "policy_runs": {
                "tiny": {"run": False},
                "quick": {"run": False},
                "full": {"run": True},
            },
        },
        benchmarks=(
            Benchmark(
                id="splitting",
                help="key splitting: naive, salted (N = p), PKG, D-Choices and W-Choices on Zipf "
                "views -- imbalance, job throughput and state replicas per hot key, p = 2 and 4 "
                "measured, up to 128 simulated",
                aliases=("key-splitting", "pkg"),
                formatter="format_splitting_summary",
                # seed 000's 100,000 views; Zipf over 20 and 20,000 tweets
                sizes={
                    "tiny": {
                        "n_views": 4_000,
                        "n_users": 1_000,
                        "tweets": (2_000,),
                        "skews": (1.0,),
                        "parallelisms": (4,),
                        "runs": 1,
                        "simulated_parallelisms": (8, 128),
                    },
                    "quick": {
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "tweets": (20_000,),
                        "skews": (1.0, 1.5),
                        "parallelisms": (2, 4),
                        "runs": 3,
                        "simulated_parallelisms": (8, 32, 128),
                    },
                    "full": {
                        "n_views": 100_000,
                        "n_users": 25_000,
                        "tweets": (20, 20_000),
                        "skews": (0.8, 1.0, 1.2, 1.5),
                        "parallelisms": (2, 4),
                        "runs": 3,
                        "simulated_parallelisms": (8, 32, 128),
                    },
                },
            ),
            Benchmark(
                id="cache_admission",
                help="cache admission, simulated: LRU, W-TinyLFU and Belady's OPT hit ratios at "
                "250 / 500 / 1,000 entries on FLIP-325's key sequence and Zipf key streams",
                aliases=("admission",),
                formatter="format_cache_admission_summary",
                # the quick simulation: 100,000 keys, 1,000,000 requests
                sizes={
                    "tiny": {
                        "n_keys": 2_000,
                        "requests": 20_000,
                        "skews": (1.0,),
                        "capacities": (250, 500, 1_000),
                        "runs": 1,
                    },
                    "quick": {
                        "n_keys": 100_000,
                        "requests": 200_000,
                        "skews": (0.8, 1.0, 1.2),
                        "capacities": (250, 500, 1_000),
                        "runs": 1,
                    },
                    "full": {
                        "n_keys": 100_000,
                        "requests": 1_000_000,
                        "skews": (0.8, 1.0, 1.2),
                        "capacities": (250, 500, 1_000),
                        "runs": 1,
                    },
                },
            ),
        ),
    ),
)

_BY_ID = {c.id: c for c in CHAPTERS}
#: every benchmark, by id (``skewlab bench ID``)
BENCHMARKS: dict[str, Benchmark] = {b.id: b for c in CHAPTERS for b in c.benchmarks}
_ALIASES = {alias: b.id for b in BENCHMARKS.values() for alias in b.aliases}
#: every id that has sizes: chapters, benchmarks and a chapter's extra parts
_SIZES: dict[str, dict[str, dict[str, Any]]] = {
    **{c.id: c.sizes for c in CHAPTERS if c.sizes is not None},
    **{b.id: b.sizes for b in BENCHMARKS.values()},
    **{name: sizes for c in CHAPTERS for name, sizes in c.extra_sizes.items()},
}


def chapter(chapter_id: str) -> Chapter:
    """The chapter named ``chapter_id``."""
    check_choice("chapter", chapter_id, _BY_ID)
    return _BY_ID[chapter_id]


def benchmark(name: str) -> Benchmark:
    """The benchmark ``name`` (its id, or a former name such as ``cache``)."""
    name = _ALIASES.get(name, name)
    check_choice("benchmark", name, BENCHMARKS)
    return BENCHMARKS[name]


def is_alias(name: str) -> bool:
    """True for a former benchmark name (``cache``, ``sorted``, ...), still accepted."""
    return name in _ALIASES


def size_settings(name: str, size: str) -> dict[str, Any]:
    """The settings of ``name`` (a chapter, benchmark or part with sizes) at ``size``, a copy."""
    name = _ALIASES.get(name, name)
    if name not in _SIZES:
        raise SkewlabInputError(f"no sizes for {name!r}: use one of {', '.join(sorted(_SIZES))}")
    check_choice("size (--size)", size, SIZES)
    return dict(_SIZES[name][size])


def headline_ratios(name: str) -> dict[str, float | None]:
    """The headline ratios of benchmark ``name``: summary key -> the seed's figure (``None``
    where the seed published none), from its experiment module."""
    bench = benchmark(name)
    return dict(getattr(importlib.import_module(bench.module), bench.headlines))


def resolve_runs(settings: dict[str, Any], runs: int | None) -> int:
    """``runs`` if given (checked), else the size's.

    Example::

        >>> resolve_runs({"runs": 3}, None), resolve_runs({"runs": 3}, 1)
        (3, 1)
    """
    return check_whole("runs (--runs)", settings["runs"] if runs is None else runs, 1)
