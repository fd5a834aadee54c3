"""``skewlab catch-up``: the former name of ``skewlab bench backlog`` (kept for one release)."""

from __future__ import annotations

import argparse
import sys

from skewlab.cli._deprecated import deprecation_line
from skewlab.cli.bench import add_benchmark_arguments
from skewlab.cli.bench import run as run_benchmark
from skewlab.experiments.chapters import benchmark


def register(subparsers) -> None:
    bench = benchmark("backlog")
    parser = subparsers.add_parser(
        "catch-up",
        help=argparse.SUPPRESS,
        description=f"Deprecated: use `skewlab bench backlog`. {bench.help}",
        epilog="example:\n  skewlab bench backlog --size tiny --outage-hours 6",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_benchmark_arguments(parser, bench)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(deprecation_line("skewlab", "catch-up", "skewlab bench backlog"), file=sys.stderr)
    args.experiment = "backlog"
    return run_benchmark(args)
