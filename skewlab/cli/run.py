"""``skewlab run STRATEGY``: one strategy over one view set, its RunResult printed."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from skewlab.cli._recovery_options import EXAMPLES as RECOVERY_EXAMPLES
from skewlab.cli._recovery_options import (
    add_recovery_options,
    recovery_requested,
    run_with_recovery,
)
from skewlab.cli.generate import add_view_options
from skewlab.engine.config import DEFAULT_LATENCY_PROFILE, JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec
from skewlab.operators.buffers import BUFFER_KINDS
from skewlab.strategies import KEYED_BACKENDS, STRATEGIES, StrategyParameters, strategy_parameters

DEFAULT_VIEWS = 100_000

EXAMPLES = (
    """\
examples:
  skewlab run naive --views 100000 --tweets 20 --backend rocksdb
  skewlab run buffered --views 100000 --tweets 20 --trigger-interval-ms 100 --max-count 1000
  skewlab run cached --cache-entries 500 --views data/views/v100000-u25000-t20-uniform-seed1
  skewlab run salted --salt-buckets 4 --distribution zipf --skew 1.2 --json
  skewlab run buffered --source-rate 20000 --trigger-interval-ms 50 --views 20000
  skewlab run streaming --variant per-record --tweets 20 --views 20000 --max-rows-per-trigger 2000
  skewlab run streaming --variant per-batch --checkpoint-dir /tmp/q --stop-after-batches 3

--views takes a number (views to generate, with --users/--tweets/--distribution/--skew/--seed)
or the path of a saved view set (from 'skewlab generate'). A strategy takes only its own
options: naive --backend --cache-entries; cached --cache-entries; buffered --buffer
--trigger-interval-ms --max-count --backend --cache-entries; salted --salt-buckets --backend
--cache-entries; sorted and spark_sql none; streaming --variant --trigger-interval-ms
--max-rows-per-trigger --checkpoint-dir --stop-after-batches (its state partitions are
--parallelism, its arrival rate --source-rate).

savepoints and failures (naive, salted, buffered, cached, sorted):
"""
    + RECOVERY_EXAMPLES
)

#: command-line option -> the strategy parameter it sets (only the strategy's own are allowed)
STRATEGY_OPTIONS = {
    "backend": "--backend",
    "cache_entries": "--cache-entries",
    "trigger_interval_ms": "--trigger-interval-ms",
    "max_count": "--max-count",
    "buffer": "--buffer",
    "salt_buckets": "--salt-buckets",
    "variant": "--variant",
    "max_rows_per_trigger": "--max-rows-per-trigger",
    "checkpoint_dir": "--checkpoint-dir",
    "stop_after_batches": "--stop-after-batches",
}


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
    parser.add_argument(
        "--backend",
        default=None,
        metavar="{" + ",".join(KEYED_BACKENDS) + "}",
        help="naive, buffered, salted: state backend of the keyed reduce (default rocksdb)",
    )
    parser.add_argument("--parallelism", type=int, default=None, help="operator subtasks")
    parser.add_argument(
        "--max-parallelism", type=int, default=None, help="key groups (default: Flink's rule)"
    )
    parser.add_argument(
        "--trigger-interval-ms",
        type=float,
        default=None,
        help="buffered: flush at least this often (default 100; 0: count-triggered only); "
        "streaming: the processing-time trigger (default 100)",
    )
    parser.add_argument(
        "--max-count",
        type=int,
        default=None,
        help="buffered: flush at this many records (default 1000)",
    )
    parser.add_argument(
        "--buffer",
        default=None,
        metavar="{" + ",".join(BUFFER_KINDS) + "}",
        help="buffered: which buffer (default vectorized)",
    )
    parser.add_argument(
        "--cache-entries",
        type=int,
        default=None,
        help="cached (and --backend cached): LRU entries (default 1000)",
    )
    parser.add_argument(
        "--salt-buckets", type=int, default=None, help="salted: sub-keys per key (default 4)"
    )
    parser.add_argument(
        "--source-rate", type=float, default=None, help="replay at R records/s (default: max)"
    )
    parser.add_argument(
        "--variant",
        default=None,
        help="streaming: per-record, per-batch (default) or builtin",
    )
    parser.add_argument(
        "--max-rows-per-trigger",
        type=int,
        default=None,
        help="streaming: rows per micro-batch at most (default 1000)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        default=None,
        help="streaming: keep the query's directory here; the same directory resumes it",
    )
    parser.add_argument(
        "--stop-after-batches",
        type=int,
        default=None,
        help="streaming: stop the query after N micro-batches (resume with --checkpoint-dir)",
    )
    parser.add_argument(
        "--latency-profile",
        default=DEFAULT_LATENCY_PROFILE,
        help=f"disk profile for the modelled I/O time (default {DEFAULT_LATENCY_PROFILE})",
    )
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_recovery_options(parser)
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


def strategy_from_args(args: argparse.Namespace) -> StrategyParameters:
    """The strategy's parameters from the command line: only its own options may be given.

    Raises :class:`~skewlab.errors.SkewlabInputError` for an unknown strategy, an option the
    strategy does not have, or a bad value.
    """
    if args.strategy not in STRATEGIES:
        strategy_parameters(args.strategy)  # raises, naming the strategies
    fields = {f.name for f in dataclasses.fields(STRATEGIES[args.strategy])}
    given = {name: getattr(args, name) for name in STRATEGY_OPTIONS}
    given = {name: value for name, value in given.items() if value is not None}
    foreign = [STRATEGY_OPTIONS[name] for name in given if name not in fields]
    if foreign:
        own = [flag for name, flag in STRATEGY_OPTIONS.items() if name in fields]
        raise SkewlabInputError(
            f"strategy {args.strategy!r} has no option {', '.join(foreign)}; "
            f"its options: {', '.join(own) or 'none'}"
        )
    return strategy_parameters(args.strategy, **given)


def job_from_args(args: argparse.Namespace) -> JobConfig:
    """The job's configuration from the command line (raises SkewlabInputError)."""
    return JobConfig(
        parallelism=args.parallelism,
        max_parallelism=args.max_parallelism,
        source_rate=args.source_rate,
        latency_profile=args.latency_profile,
    )


def run(args: argparse.Namespace) -> int:
    from skewlab.engine.session import get_spark
    from skewlab.inputs.views import generate_views, load_views
    from skewlab.strategies import run_strategy

    strategy, job = strategy_from_args(args), job_from_args(args)
    recovering = recovery_requested(args)
    path, spec = _views_source(args)
    spark = get_spark(args.master)
    views = load_views(spark, path) if path is not None else generate_views(spark, spec)
    if recovering:
        return run_with_recovery(args, views, strategy, job, spark)
    result, _ = run_strategy(views, strategy, job, spark)
    if args.json:
        print(result.to_json())
    else:
        print(result.format_table())
    return 0
