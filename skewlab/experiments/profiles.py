"""The one table of sizes: every experiment and lesson at ``tiny``, ``quick`` and ``full``.

``skewlab bench EXPERIMENT --profile P``, ``skewlab report --profile P`` and the notebooks'
``profile`` parameter all read :data:`SETTINGS`, so a profile means the same sizes everywhere:

* ``tiny`` -- seconds; what the test suite renders the notebooks with;
* ``quick`` -- minutes on a laptop; the default;
* ``full`` -- the seeds' own sizes (100,000 views over 20,000 .. 1 tweets, 5 runs; FLIP-325's
  2e7 longs; FLIP-140's 40,000,000 records over 4,000,000 keys).

Example::

    >>> from skewlab.experiments.profiles import profile_settings
    >>> profile_settings("cache", "full")["n"]
    20000000
    >>> profile_settings("cache", "huge")
    Traceback (most recent call last):
    ...
    skewlab.errors.SkewlabInputError: unknown profile (--profile) 'huge': use one of tiny, quick, full
"""  # noqa: E501

from __future__ import annotations

from typing import Any

from skewlab.validation import check_choice, check_whole

__all__ = [
    "PROFILES",
    "SEED_CARDINALITIES",
    "SEED_KEYS",
    "SETTINGS",
    "profile_settings",
    "resolve_runs",
]

#: The profiles, smallest first.
PROFILES = ("tiny", "quick", "full")

#: Seed 000's tweet cardinalities, 20,000 down to 1.
SEED_CARDINALITIES = (20_000, 10_000, 5_000, 1_000, 500, 100, 50, 20, 10, 5, 2, 1)
#: Seed 000's headline point: 20 distinct tweets (the summaries' ``..._at_20_keys``).
SEED_KEYS = 20
_CACHE_SWEEP = (50, 150, 250, 350, 450, 499, 500, 600, 750, 900, 999, 1000, 1250, 1500)

#: experiment or lesson -> profile -> its settings.
SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    # notebook 00: the problem in pictures
    "hot_keys": {
        "tiny": {"n_views": 2_000, "n_users": 500, "n_tweets": 50},
        "quick": {"n_views": 50_000, "n_users": 25_000, "n_tweets": 1_000},
        "full": {"n_views": 1_000_000, "n_users": 25_000, "n_tweets": 20_000},
    },
    # notebook 01: the EBS arithmetic, this machine's disk, a real run measured and modelled
    "ebs_latency": {
        "tiny": {"probe_size_mb": 2, "probe_seconds": 1, "run_views": 2_000},
        "quick": {"probe_size_mb": 8, "probe_seconds": 1, "run_views": 10_000},
        "full": {"probe_size_mb": 256, "probe_seconds": 20, "run_views": 100_000},
    },
    # notebook 02: key salting
    "salting": {
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
    # seed 000: naive (RocksDB) vs buffered over tweet cardinality (skewlab bench buffering)
    "buffering": {
        "tiny": {"cardinalities": (1_000, 20), "n_views": 2_000, "n_users": 1_000, "runs": 1},
        "quick": {  # the seed's 100,000 views: at 50,000 the job's fixed costs halve the 20x
            "cardinalities": (20_000, 20, 1),
            "n_views": 100_000,
            "n_users": 25_000,
            "runs": 1,
        },
        "full": {
            "cardinalities": SEED_CARDINALITIES,
            "n_views": 100_000,
            "n_users": 25_000,
            "runs": 5,
        },
    },
    # seed 000: the buffer's latency against the trigger interval, with a paced source
    "latency_sweep": {
        "tiny": {"views": 1_000, "source_rate": 2_000, "trigger_intervals": (20, 200)},
        "quick": {
            "views": 2_000,
            "source_rate": 2_000,
            "trigger_intervals": (10, 50, 200, 500),
        },
        "full": {
            "views": 20_000,
            "source_rate": 2_000,
            "trigger_intervals": (5, 10, 20, 50, 100, 200, 500),
        },
    },
    # seed 003, FLIP-325: the LRU cache over RocksDB (skewlab bench cache)
    "cache": {
        "tiny": {
            "n": 20_000,
            "runs": 1,
            "sweep_n": 10_000,
            "sweep_sizes": (250, 500, 1000),
            "costs_n": 20_000,
        },
        # 1 round of 500,000: speedups up to 31% above full; 2 rounds of 1,000,000: +2..+19%
        # (a round varies by +-8%); see the README's quick-vs-full table
        "quick": {
            "n": 1_000_000,
            "runs": 2,
            "sweep_n": 100_000,
            "sweep_sizes": (250, 500, 750, 1000, 1500),
            "costs_n": 200_000,
        },
        "full": {
            "n": 20_000_000,
            "runs": 3,
            "sweep_n": 2_000_000,
            "sweep_sizes": _CACHE_SWEEP,
            "costs_n": 2_000_000,
        },
    },
    # seed 001, FLIP-140: WordCount, keyed vs sorted (skewlab bench sorted)
    "sorted": {
        "tiny": {"n": 20_000, "k": 2_000, "runs": 1},
        "quick": {"n": 400_000, "k": 40_000, "runs": 1},
        "full": {"n": 40_000_000, "k": 4_000_000, "runs": 3},
    },
    # seed 002: restore at a new parallelism three ways, on real savepoints (skewlab bench rescale)
    "rescale": {
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
        "quick": {
            "cases": ((3, 4), (4, 2), (2, 12)),
            "distributions": ("uniform", "zipf"),
            "n_views": 10_000,
            "n_users": 5_000,
            "n_tweets": 2_000,
            "max_parallelism": 128,
            "probe_size_mb": 4,
            "probe_seconds": 0.5,
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
    # seed 002: the outage backlog, measured rates and simulated parallelisms (skewlab catch-up)
    "catch_up": {
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
        },
        "quick": {
            "n_views": 50_000,
            "n_users": 25_000,
            "n_tweets": 20_000,
            "skew": 1.1,
            "outage_hours": 4,
            "utilization": 0.7,
            "normal_parallelism": 4,
            "startup_tasks": 8,
            "startup_repeats": 2,
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
        },
    },
    # seed 000 on Spark Structured Streaming: per-record / per-batch / builtin, latency over the
    # trigger interval, rescaling a checkpoint (skewlab bench streaming, notebook 08)
    "streaming": {
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
            "n_views": 20_000,
            "n_users": 25_000,
            "runs": 1,
            "max_rows_per_trigger": 10_000,
            "parallelism": 4,
            "warmup": True,
            "latency_views": 500,
            "source_rate": 1_000,
            "trigger_intervals": (100, 1_000),
            "rescale_views": 1_000,
            # the hot partition (one per-record run over Zipf views): two micro-batches show it
            "hot_views": 4_000,
            "hot_rows_per_trigger": 2_000,
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
            "latency_views": 10_000,
            "source_rate": 2_000,
            "trigger_intervals": (50, 100, 250, 500, 1_000, 2_000, 5_000),
            "rescale_views": 20_000,
            "hot_views": 100_000,
            "hot_rows_per_trigger": 10_000,
        },
    },
    # seed 001, FLIP-140: the ValueState micro-benchmark (skewlab bench value-state)
    "value-state": {
        "tiny": {"keys": 2_000, "runs": 1},
        "quick": {"keys": 500_000, "runs": 1},  # at 50,000 keys heap/RocksDB comes out 2x
        "full": {"keys": 500_000, "runs": 5},  # flink-benchmarks' setupKeyCount
    },
}


def profile_settings(experiment: str, profile: str) -> dict[str, Any]:
    """The settings of ``experiment`` (a key of :data:`SETTINGS`) at ``profile`` (a copy)."""
    check_choice("experiment", experiment, SETTINGS)
    check_choice("profile (--profile)", profile, PROFILES)
    return dict(SETTINGS[experiment][profile])


def resolve_runs(settings: dict[str, Any], runs: int | None) -> int:
    """``runs`` if given (checked), else the profile's.

    Example::

        >>> resolve_runs({"runs": 3}, None), resolve_runs({"runs": 3}, 1)
        (3, 1)
    """
    return check_whole("runs (--runs)", settings["runs"] if runs is None else runs, 1)
