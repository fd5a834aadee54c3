"""``skewlab bench BENCHMARK``: reproduce a seed's benchmark, print figures, write result files.

The benchmarks, their help, sizes and extra options are the chapter registry's
(:mod:`skewlab.experiments.chapters`); this module only turns them into a command.
"""

from __future__ import annotations

import argparse
import json
import sys

from skewlab.cli._deprecated import deprecation_line, hide_suppressed_commands
from skewlab.cli._size_option import add_size_option
from skewlab.experiments.chapters import BENCHMARKS, Benchmark, benchmark, is_alias
from skewlab.experiments.headlines import TOLERANCE, compare_sizes, compared_benchmarks
from skewlab.experiments.machine import describe_machine
from skewlab.experiments.references import check_reference_size, save_reference
from skewlab.viz.text import estimate_text

EXAMPLES = """\
examples:
  skewlab bench buffering                        # quick size, 1 run per point
  skewlab bench buffering --size full            # the seed's 12 cardinalities, 5 runs each
  skewlab bench buffering --runs 3 --json
  skewlab bench state_cache --size quick --json  # FLIP-325: hit ratio and speedup per cache size
  skewlab bench state_cache --write-batch 64     # the batched write-back: 64 evictions per batch
  skewlab bench sorted_input --key-type string   # FLIP-140 WordCount with string keys
  skewlab bench value_state --json               # FLIP-140 ValueState ops/ms
  skewlab bench rescaling --size tiny            # seed 002: restore I/O three ways, Figure 3
  skewlab bench backlog --outage-hours 6         # seed 002: the outage backlog's catch-up time
  skewlab bench streaming --size full            # Spark Structured Streaming, 20,000 .. 1 keys
  skewlab bench compare                          # each headline ratio: newest quick vs full run
  skewlab bench state_cache --size full --save-reference   # re-measure the shipped reference
"""

COMPARE_HELP = (
    "each benchmark's headline ratios from its newest quick and full result files side by "
    "side, with the difference (marked beyond 15%) and whether the quick ratio lies on the "
    "same side of 1 as the full one (a quick run is there to show a lesson's direction); "
    "without a full result file, the full side is the shipped reference; it says when the "
    "two were not measured on one machine, and when the reference predates a change to the "
    "timed code"
)


def add_benchmark_arguments(parser: argparse.ArgumentParser, bench: Benchmark) -> None:
    """The options of ``skewlab bench <bench.id>``: the common ones and the benchmark's own
    (:attr:`~skewlab.experiments.chapters.Benchmark.options`).

    Example::

        >>> parser = argparse.ArgumentParser(prog="skewlab bench state_cache")
        >>> add_benchmark_arguments(parser, benchmark("state_cache"))
        >>> args = parser.parse_args(["--size", "tiny", "--write-batch", "64"])
        >>> args.size, args.write_batch, args.runs
        ('tiny', 64, None)
    """
    add_size_option(parser, "tiny: seconds; quick: minutes (default); full: the seed's sizes")
    parser.add_argument("--runs", type=int, default=None, help="runs per point")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--parallelism", type=int, default=None, help="operator subtasks")
    parser.add_argument(
        "--save-reference",
        action="store_true",
        help="also write the run as the benchmark's shipped reference, "
        "skewlab/references/<benchmark>.json, with its provenance (--size full only)",
    )
    for option in bench.options:
        parser.add_argument(
            option.flag,
            dest=option.dest,
            type=option.type,
            choices=option.choices,
            default=None,
            help=option.help,
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
    sub = parser.add_subparsers(dest="experiment", metavar="BENCHMARK", required=True)
    for bench in BENCHMARKS.values():
        for name in (bench.id, *bench.aliases):
            exp = sub.add_parser(
                name,
                help=bench.help if name == bench.id else argparse.SUPPRESS,
                description=bench.help,
                epilog=EXAMPLES,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
            add_benchmark_arguments(exp, bench)
            exp.set_defaults(func=run)
    hide_suppressed_commands(sub)
    compare = sub.add_parser(
        "compare",
        help=COMPARE_HELP.replace("%", "%%"),
        description=COMPARE_HELP,
        epilog="example:\n  skewlab bench state_cache --size quick && skewlab bench state_cache "
        "--size full && skewlab bench compare state_cache",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument(
        "experiments", nargs="*", metavar="BENCHMARK",
        help=f"the benchmarks to compare: {', '.join(compared_benchmarks())} (default: all)",
    )  # fmt: skip
    compare.set_defaults(func=run_compare)


def run(args: argparse.Namespace) -> int:
    bench = benchmark(args.experiment)
    if args.save_reference:
        check_reference_size(args.size)  # before the run, not after it
    if is_alias(args.experiment):
        print(
            deprecation_line("skewlab bench", repr(args.experiment), repr(bench.id)),
            file=sys.stderr,
        )
    options = {
        o.dest: getattr(args, o.dest) for o in bench.options if getattr(args, o.dest) is not None
    }
    result = bench.run_function()(
        args.size, args.runs, parallelism=args.parallelism, progress=not args.json, **options
    )
    files = result.write()
    if args.save_reference:
        files.append(save_reference(result))
    if args.json:
        print(json.dumps(result.to_json_dict(), default=float))
    else:
        from skewlab.viz import summary_formatter

        print(summary_formatter(bench)(result))
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
    compared = compared_benchmarks()
    names = [benchmark(e).id if e in BENCHMARKS or is_alias(e) else e for e in args.experiments]
    unknown = [e for e in names if e not in compared]
    if unknown:
        print(
            f"skewlab bench compare: unknown benchmark {unknown[0]!r}: use one of "
            f"{', '.join(compared)}",
            file=sys.stderr,
        )
        return 2
    rows, missing = compare_sizes(names or None)
    if rows:
        print(
            f"{'benchmark':12s} {'headline ratio':40s} {'quick [interval]':>22s} "
            f"{'full [interval]':>22s} {'diff':>7s} {'direction':>9s}"
        )
        for r in rows:
            d = r["difference"]
            mark = (
                "" if r["within"] is None else ("" if r["within"] else f"  outside {TOLERANCE:.0%}")
            )
            if r["intervals_overlap"] is False:
                mark += "  intervals apart"
            direction = {None: "-", True: "same", False: "REVERSED"}[r["same_direction"]]
            print(
                f"{r['experiment']:12s} {r['ratio']:40s} "
                f"{estimate_text(r['quick_interval'], '.2f', ''):>22s} "
                f"{estimate_text(r['full_interval'], '.2f', ''):>22s} "
                f"{'-' if d is None else format(d, '+.1%'):>7s} {direction:>9s}{mark}"
            )
    # the machine fields are the same on every row of an experiment: one row each will do
    for first in {r["experiment"]: r for r in rows}.values():
        experiment = first["experiment"]
        if first["full_source"] == "reference":
            status = first["reference_status"]
            print(
                f"{experiment}: full is the shipped reference (no full result file here); "
                + ("measured by the running code" if status == "current" else status)
            )
        if first["same_machine"]:
            continue
        why = (
            "were measured on different machines"
            if first["same_machine"] is False
            else "are not known to come from one machine"
        )
        print(
            f"{experiment}: quick and full {why}, so a difference may be the machine's, "
            f"not the size's\n"
            f"  quick: {describe_machine(first['quick_machine'])}\n"
            f"  full:  {describe_machine(first['full_machine'])}"
        )
    for command in missing:
        print(f"no result file yet: run `{command}`", file=sys.stderr)
    return 0
