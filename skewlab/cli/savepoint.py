"""``skewlab savepoint PATH``: check a savepoint whole and say what it holds."""

from __future__ import annotations

import argparse
import json

EXAMPLES = """\
examples:
  skewlab run naive --views 20000 --savepoint-at 10000 --resume-parallelism 4 --savepoint sp1
  skewlab savepoint sp1                  # every file read, every checksum and entry checked
  skewlab savepoint sp1 --json
  skewlab savepoint sp1 --max-parallelism 128   # refused unless it was taken with 128
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "savepoint",
        help="check a savepoint whole and print what it holds",
        description=(
            "Read a savepoint written by 'skewlab run --savepoint-at ... --savepoint PATH': its "
            "metadata (and its checksum), every state file and every entry: each key-group "
            "block's xxh64 checksum, each key against the key group its file's offsets place it "
            "in and re-hashed to its key group, each value decoded whole, each operator state's "
            "checksum. A damaged, foreign or older-format savepoint is refused with one line "
            "naming the file, the key group and what differed, and exit status 2; a whole one "
            "is summarised: max parallelism, parallelism, source position, and per operator its "
            "keyed states' entries and bytes."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", metavar="PATH", help="the savepoint directory")
    parser.add_argument(
        "--max-parallelism", type=int, default=None,
        help="refuse a savepoint taken with another max parallelism",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skewlab.strategies.resume import verify_savepoint

    savepoint = verify_savepoint(args.path, max_parallelism=args.max_parallelism)
    summary = savepoint.summary()
    if args.json:
        print(json.dumps(summary))
        return 0
    for name in ("path", "max_parallelism", "parallelism", "source_position", "job"):
        print(f"{name:<16} {summary[name]}")
    for operator, info in summary["operators"].items():
        line = f"operator {operator}: keyed {info['keyed_states']}, {info['state_bytes']:,} bytes"
        if info["operator_state"]:
            line += f", operator state {info['operator_state']}"
        print(line)
    return 0
