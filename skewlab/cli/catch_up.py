"""``skewlab catch-up``: seed 002's outage backlog -- measured rates, simulated parallelisms."""

from __future__ import annotations

import argparse
import json

from skewlab.experiments.profiles import PROFILES

EXAMPLES = """\
examples:
  skewlab catch-up --profile tiny                 # seconds: the three curves, measured inputs
  skewlab catch-up --outage-hours 6 --utilization 0.8
  skewlab catch-up --parallelism 4 --json         # the job normally runs at 4 subtasks
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "catch-up",
        help="the outage backlog: catch-up time against parallelism (seed 002)",
        description=(
            "An outage leaves a backlog; the job restores its savepoint at a larger "
            "parallelism, drains the backlog while records keep arriving, and scales back in. "
            "Measured on real runs here: each strategy's per-subtask rate and its capacity at "
            "parallelism 2, savepoint and restore time per byte, Spark's per-task start-up. "
            "Simulated from those: capacity and restart cost at every other parallelism (keys "
            "routed by Flink's key groups), and the catch-up times. Curves: uniform and Zipf "
            "keys with the naive reduce, Zipf with the buffer. Writes rows and summary under "
            "data/results/."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default="quick",
        help="tiny: seconds; quick: minutes (default); full: larger inputs",
    )
    parser.add_argument(
        "--outage-hours",
        type=float,
        default=None,
        help="how long the input was unavailable (default: the profile's, 4)",
    )
    parser.add_argument(
        "--utilization",
        type=float,
        default=None,
        help="input rate as a share of the slowest curve's normal capacity (default 0.7)",
    )
    parser.add_argument(
        "--parallelism",
        type=int,
        default=None,
        help="the job's normal parallelism (default: the profile's)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skewlab.experiments import catch_up

    result = catch_up.run_experiment(
        args.profile,
        parallelism=args.parallelism,
        outage_hours=args.outage_hours,
        utilization=args.utilization,
        progress=not args.json,
    )
    files = result.write()
    if args.json:
        print(json.dumps(result.to_json_dict(), default=float))
    else:
        print(catch_up.format_summary(result))
        print("results: " + ", ".join(str(f) for f in files))
    return 0
