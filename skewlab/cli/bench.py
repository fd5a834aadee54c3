"""``skewlab bench EXPERIMENT``: reproduce a seed's benchmark, print figures, write result files."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

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
"""


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
    ok = result.summary.get("all_digests_match", True)
    if not ok:
        print("skewlab bench: a strategy's result differs from the reference", file=sys.stderr)
    if result.summary.get("all_emissions_match") is False:
        print("skewlab bench: a run's emissions do not add up to its counts", file=sys.stderr)
        ok = False
    return 0 if ok else 1
