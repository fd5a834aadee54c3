"""``skewlab bench EXPERIMENT``: reproduce a seed's benchmark, print figures, write result files."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from skewlab.experiments.headlines import HEADLINE_RATIOS, TOLERANCE, compare_profiles
from skewlab.experiments.machine import describe_machine
from skewlab.experiments.profiles import PROFILES

#: experiment name -> (module, help)
EXPERIMENTS = {
    "buffering": (
        "skewlab.experiments.buffering",
        "seed 000: naive (RocksDB) vs buffered view counting, tweet cardinality 20,000 .. 1",
    ),
    "cache": (
        "skewlab.experiments.cache",
        "seed 003 (FLIP-325): LRU cache of 250/500/1,000 objects in front of RocksDB",
    ),
    "sorted": (
        "skewlab.experiments.sorted_input",
        "seed 001 (FLIP-140): WordCount, keyed RocksDB/heap vs sorted input with single-key state",
    ),
    "rescale": (
        "skewlab.experiments.rescale",
        "seed 002: restore at a new parallelism -- read-all vs per-key index vs key groups",
    ),
    "streaming": (
        "skewlab.experiments.streaming",
        "seed 000 on Spark Structured Streaming: per-record vs per-batch transformWithState vs "
        "Spark's aggregation, latency vs trigger interval, rescaling a checkpoint",
    ),
    "value-state": (
        "skewlab.experiments.value_state",
        "seed 001 (FLIP-140): ValueState micro-benchmark, heap / rocksdb / single_key in ops/ms",
    ),
}

EXAMPLES = """\
examples:
  skewlab bench buffering                     # quick profile, 1 run per point
  skewlab bench buffering --profile full      # the seed's 12 cardinalities, 5 runs each
  skewlab bench buffering --runs 3 --json
  skewlab bench cache --profile quick --json  # FLIP-325: hit ratio and speedup per cache size
  skewlab bench cache --write-batch 64        # the batched write-back: 64 evictions per batch
  skewlab bench sorted --key-type string      # FLIP-140 WordCount with string keys
  skewlab bench value-state --json            # FLIP-140 ValueState ops/ms
  skewlab bench rescale --profile tiny        # seed 002: restore I/O three ways, Figure 3
  skewlab bench streaming --profile full      # Spark Structured Streaming, 20,000 .. 1 keys
  skewlab bench compare                       # each headline ratio: newest quick vs full run
"""

COMPARE_HELP = (
    "each benchmark's headline ratios from its newest quick and full result files side by "
    "side, with the difference (the quick profile should stay within 15% of the full one); "
    "it says when the two files were not measured on one machine"
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run a seed's benchmark and write its results to data/results/",
        description=(
            "Reproduce one of the seeds' experiments on Spark: print the measured figures "
            "(beside the seed's where it published them) and write rows and summary as CSV "
            "and JSON under data/results/."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    for name, (_, help_text) in EXPERIMENTS.items():
        exp = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=EXAMPLES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        exp.add_argument(
            "--profile",
            choices=PROFILES,
            default="quick",
            help="tiny: seconds; quick: minutes (default); full: the seed's sizes",
        )
        exp.add_argument("--runs", type=int, default=None, help="runs per point")
        exp.add_argument("--json", action="store_true", help="print one JSON object")
        exp.add_argument("--parallelism", type=int, default=None, help="operator subtasks")
        if name == "cache":
            exp.add_argument(
                "--write-batch",
                type=int,
                default=None,
                help="evicted entries per RocksDB write batch of the batched write-back "
                "(default 128; FLIP-325's LRU beside it writes one at a time)",
            )
        if name == "sorted":
            exp.add_argument(
                "--key-type",
                default="int",
                help="key type of the WordCount input: int or string (default int)",
            )
        exp.set_defaults(func=run)
    compare = sub.add_parser(
        "compare",
        help=COMPARE_HELP.replace("%", "%%"),
        description=COMPARE_HELP,
        epilog="example:\n  skewlab bench cache --profile quick && skewlab bench cache "
        "--profile full && skewlab bench compare cache",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument(
        "experiments", nargs="*", metavar="EXPERIMENT",
        help=f"the benchmarks to compare: {', '.join(HEADLINE_RATIOS)} (default: all)",
    )  # fmt: skip
    compare.set_defaults(func=run_compare)


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(EXPERIMENTS[args.experiment][0])
    options = {}
    if getattr(args, "key_type", None) is not None:
        options["key_type"] = args.key_type
    if getattr(args, "write_batch", None) is not None:
        options["write_batch"] = args.write_batch
    result = module.run_experiment(
        args.profile, args.runs, parallelism=args.parallelism, progress=not args.json, **options
    )
    files = result.write()
    if args.json:
        print(json.dumps(result.to_json_dict(), default=float))
    else:
        print(module.format_summary(result) if hasattr(module, "format_summary") else "")
        print("results: " + ", ".join(str(f) for f in files))
    if result.summary.get("java_options"):
        print(
            "skewlab bench: Spark's JVMs ran with SKEWLAB_JAVA_OPTIONS="
            f"{' '.join(result.summary['java_options'])!r}; the result file records it, and its "
            "figures are not comparable with a run without it",
            file=sys.stderr,
        )
    ok = result.summary.get("all_digests_match", True)
    if not ok:
        print("skewlab bench: a strategy's result differs from the reference", file=sys.stderr)
    if result.summary.get("all_emissions_match") is False:
        print("skewlab bench: a run's emissions do not add up to its counts", file=sys.stderr)
        ok = False
    return 0 if ok else 1


def run_compare(args: argparse.Namespace) -> int:
    """Print the quick-vs-full table; say which result files are missing and how to make them."""
    unknown = [e for e in args.experiments if e not in HEADLINE_RATIOS]
    if unknown:
        print(
            f"skewlab bench compare: unknown experiment {unknown[0]!r}: use one of "
            f"{', '.join(HEADLINE_RATIOS)}",
            file=sys.stderr,
        )
        return 2
    rows, missing = compare_profiles(args.experiments or None)
    if rows:
        print(f"{'experiment':12s} {'headline ratio':40s} {'quick':>8s} {'full':>8s} {'diff':>7s}")
        for r in rows:
            q, f, d = (r["quick"], r["full"], r["difference"])
            mark = (
                "" if r["within"] is None else ("" if r["within"] else f"  outside {TOLERANCE:.0%}")
            )
            print(
                f"{r['experiment']:12s} {r['ratio']:40s} {_num(q):>8s} {_num(f):>8s} "
                f"{'-' if d is None else format(d, '+.1%'):>7s}{mark}"
            )
    # the machine fields are the same on every row of an experiment: one row each will do
    for first in {r["experiment"]: r for r in rows}.values():
        experiment = first["experiment"]
        if first["same_machine"]:
            continue
        why = (
            "were measured on different machines"
            if first["same_machine"] is False
            else "are not known to come from one machine"
        )
        print(
            f"{experiment}: quick and full {why}, so a difference may be the machine's, "
            f"not the profile's\n"
            f"  quick: {describe_machine(first['quick_machine'])}\n"
            f"  full:  {describe_machine(first['full_machine'])}"
        )
    for command in missing:
        print(f"no result file yet: run `{command}`", file=sys.stderr)
    return 0


def _num(value) -> str:
    return "-" if value is None else f"{value:.2f}"
