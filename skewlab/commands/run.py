"""``skewlab run STRATEGY``: one strategy over one view set, its RunResult printed."""

from __future__ import annotations

import argparse
from pathlib import Path

from skewlab.commands.generate import add_view_options
from skewlab.errors import SkewlabInputError
from skewlab.runtime import BUFFER_KINDS, NAIVE_BACKENDS, RunConfig, validate_config
from skewlab.strategies import STRATEGIES
from skewlab.views import ViewSpec

DEFAULT_VIEWS = 100_000

EXAMPLES = """\
examples:
  skewlab run naive --views 100000 --tweets 20 --backend rocksdb
  skewlab run buffered --views 100000 --tweets 20 --trigger-interval-ms 100 --max-count 1000
  skewlab run cached --cache-entries 500 --views data/views/v100000-u25000-t20-uniform-seed1
  skewlab run salted --salt-buckets 4 --distribution zipf --skew 1.2 --json
  skewlab run buffered --source-rate 20000 --trigger-interval-ms 50 --views 20000

--views takes a number (views to generate, with --users/--tweets/--distribution/--skew/--seed)
or the path of a saved view set (from 'skewlab generate').
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one aggregation strategy on Spark and print what it measured",
        description=(
            "Run one strategy over a view set on Spark and print its RunResult: records in/out/"
            "rejected, operator and end-to-end throughput, state reads and writes, cache hit "
            "ratio, buffer flushes, latency p50/p99, modelled I/O time under a disk latency "
            "profile, and the result digest (equal to the reference for every strategy). "
            f"Strategies: {', '.join(STRATEGIES)}."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("strategy", metavar="STRATEGY", help=f"one of {', '.join(STRATEGIES)}")
    parser.add_argument(
        "--views",
        default=str(DEFAULT_VIEWS),
        help=f"views to generate (a number, default {DEFAULT_VIEWS}) or a saved view set's path",
    )
    add_view_options(parser, views=False)
    defaults = RunConfig()
    parser.add_argument(
        "--backend",
        default=defaults.backend,
        metavar="{" + ",".join(NAIVE_BACKENDS) + "}",
        help=f"state backend of naive, buffered and salted (default {defaults.backend})",
    )
    parser.add_argument("--parallelism", type=int, default=None, help="operator subtasks")
    parser.add_argument(
        "--max-parallelism", type=int, default=None, help="key groups (default: Flink's rule)"
    )
    parser.add_argument(
        "--trigger-interval-ms",
        type=float,
        default=defaults.trigger_interval_ms,
        help=f"buffered: flush at least this often (default {defaults.trigger_interval_ms:g})",
    )
    parser.add_argument(
        "--max-count",
        type=int,
        default=defaults.max_count,
        help=f"buffered: flush at this many records (default {defaults.max_count})",
    )
    parser.add_argument(
        "--buffer",
        default=defaults.buffer,
        metavar="{" + ",".join(BUFFER_KINDS) + "}",
        help=f"buffered: which buffer (default {defaults.buffer})",
    )
    parser.add_argument(
        "--cache-entries",
        type=int,
        default=defaults.cache_entries,
        help=f"cached: LRU entries (default {defaults.cache_entries})",
    )
    parser.add_argument(
        "--salt-buckets",
        type=int,
        default=defaults.salt_buckets,
        help=f"salted: sub-keys per key (default {defaults.salt_buckets})",
    )
    parser.add_argument(
        "--source-rate", type=float, default=None, help="replay at R records/s (default: max)"
    )
    parser.add_argument(
        "--latency-profile",
        default=defaults.latency_profile,
        help=f"disk profile for the modelled I/O time (default {defaults.latency_profile})",
    )
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _views_source(args: argparse.Namespace) -> tuple[Path | None, ViewSpec | None]:
    value = args.views
    as_path = Path(value)
    if as_path.is_dir():
        return as_path, None
    try:
        n = int(value)
    except ValueError:
        raise SkewlabInputError(
            f"--views {value!r} is neither a number of views nor an existing view set directory"
        ) from None
    return None, ViewSpec(n, args.users, args.tweets, args.distribution, args.skew, args.seed)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """A validated :class:`RunConfig` from the command line (raises SkewlabInputError)."""
    config = RunConfig(
        strategy=args.strategy,
        parallelism=args.parallelism,
        max_parallelism=args.max_parallelism,
        backend=args.backend,
        trigger_interval_ms=args.trigger_interval_ms,
        max_count=args.max_count,
        buffer=args.buffer,
        cache_entries=args.cache_entries,
        salt_buckets=args.salt_buckets,
        source_rate=args.source_rate,
        latency_profile=args.latency_profile,
    )
    validate_config(config)
    return config


def run(args: argparse.Namespace) -> int:
    from skewlab.spark import get_spark
    from skewlab.strategies import run_strategy
    from skewlab.views import generate_views, load_views

    config = config_from_args(args)
    path, spec = _views_source(args)
    spark = get_spark(args.master)
    views = load_views(spark, path) if path is not None else generate_views(spark, spec)
    result, _ = run_strategy(views, config, spark)
    if args.json:
        print(result.to_json())
    else:
        print(result.format_table())
    return 0
