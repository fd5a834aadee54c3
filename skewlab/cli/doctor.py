"""``skewlab doctor``: point skewlab at your own records and learn which keys are hot and where
their load lands in Flink, Spark and Kafka (:mod:`skewlab.doctor.diagnosis`)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from skewlab.doctor.diagnosis import FORMATS
from skewlab.doctor.options import DoctorOptions, add_arguments
from skewlab.doctor.spark_connect import doctor_master, doctor_spark
from skewlab.errors import SkewlabInputError

EXAMPLES = """\
examples:
  skewlab doctor data/views.parquet --key tweet_id
  skewlab doctor clicks.csv --key user_id --time ts --parallelism 4 8 --max-parallelism 128
  skewlab doctor flights.csv --key tailnum --null-value NA
  skewlab doctor events.jsonl --key page --engine kafka --partitions 12 --json
  skewlab doctor data/views.parquet --key tweet_id --html doctor.html
  skewlab doctor data/views.parquet --key tweet_id --cache-entries 250 500 1000
  skewlab doctor data/views.parquet --key tweet_id --target-rate 50000 --subtask-rate 8000
  skewlab doctor data/views.parquet --key tweet_id --parallelism 4 --disk-profile ebs-article
  skewlab doctor data/views.parquet --key tweet_id --bounded --costs my-costs.json
  skewlab doctor data/views.parquet --key tweet_id --sketch-threshold 0.01
  skewlab doctor data/views.parquet --key tweet_id --redact --html doctor.html
  skewlab doctor --state /tmp/query/checkpoint --key tweet_id --state-partitions 4 16
  skewlab doctor --follow incoming/ --key page --window 5 --threshold 0.05
  skewlab doctor --follow incoming/ --key page --json --checkpoint-dir /tmp/follow
  skewlab doctor --follow rate:2000 --window 5   # a demo: Spark's rate source, 'hot' from 30 s
  skewlab doctor data/views.parquet --key tweet_id --remote sc://spark.example.com:15002

the state's skew (--state): a Structured Streaming checkpoint read with Spark's state data
sources: rows and bytes per state partition, the keys holding the most state, and the same
state placed over other partition counts as Spark would place it.

a live stream (--follow DIR): files arriving in DIR read as a stream, one micro-batch a window;
per window and over the run the keys that may hold the threshold's share, with DataSketches'
bounds, where each lands in Flink, Spark and Kafka (--parallelism, --partitions), and how many
consecutive windows it has been hot; Ctrl-C stops and prints the summary. --follow rate:N[:S]
streams Spark's rate source instead (N records a second, the key column 'key': k0..k996 and,
from second S on, default 30, every fifth record 'hot'): a demo with no files.

where the data lives (--remote sc://HOST:PORT, or SPARK_REMOTE): the same three modes run
through a Spark Connect server, its Spark reading the paths given (a URI such as s3a://...,
or a local path the server sees too); the figures are the embedded session's.

which remedy pays: the doctor prices naive (heap, RocksDB), buffered, cached, salted and sorted
input at the largest P from a cost profile measured on this machine by
'skewlab bench remedy_costs' (about 3 minutes; without one, the shipped reference measured on
the machine it names) and the records' own counts, replayed (LRU hits, buffer flushes, key
densities). 'skewlab bench remedy_check' shows how close its predictions come to real runs.
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="diagnose the keys of your own records: hot keys, load per engine, parallelism, "
        "which remedy pays",
        description=(
            "Read records through Spark (Parquet, CSV with a header, or JSON lines) and report "
            "the hottest keys (exact counts), the number of distinct keys, a fitted Zipf "
            "exponent, where the records land under Flink's key groups, Spark's "
            "repartition(n, key) and Kafka's default partitioner (busiest over the mean, "
            "FLIP-418's skew score), what each Flink parallelism up to the max parallelism "
            "can and cannot do, and which remedy pays (predicted throughput and p99 latency). "
            "Only small aggregates reach the driver, whatever the input's "
            "size."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "path", nargs="?", help="a file or folder of records (a URI such as s3a://... too)"
    )
    parser.add_argument(
        "--key",
        help="the key column (with --state: a field of the state key to group the state by; "
        "default the whole state key)",
    )
    parser.add_argument(
        "--state",
        metavar="CHECKPOINT_DIR",
        help="read a Structured Streaming checkpoint's state instead of records: its skew over "
        "the state partitions",
    )
    parser.add_argument(
        "--follow",
        metavar="DIR",
        help="follow the files arriving in DIR (a stream) and name its hot keys per window, "
        "with how long each has been hot, until Ctrl-C; rate:N for Spark's rate source (a demo)",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=10.0,
        metavar="S",
        help="with --follow: the window, one micro-batch every S seconds (default 10)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.05,
        metavar="F",
        help="with --follow: a key is hot when it may hold this share of a window's records, "
        "0 < F < 1 (default 0.05)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        metavar="DIR",
        help="with --follow: keep the stream's checkpoint and the doctor's counts here; the "
        "same folder resumes without counting a file twice",
    )
    parser.add_argument(
        "--remote",
        metavar="sc://HOST:PORT",
        help="run through a Spark Connect server (default $SPARK_REMOTE, else skewlab's "
        "master: $SKEWLAB_SPARK_MASTER or the embedded Spark); its Spark reads the paths given",
    )
    parser.add_argument(
        "--state-partitions",
        nargs="+",
        type=int,
        metavar="N",
        help="with --state: the partition counts to place the same state over (default half "
        "and twice the checkpoint's)",
    )
    parser.add_argument(
        "--format",
        choices=tuple(FORMATS),
        help="the records' format (default: from the file endings)",
    )
    parser.add_argument(
        "--null-value",
        metavar="TEXT",
        help="the text a CSV file writes for a missing value (e.g. NA): such keys count as null "
        "keys, not as one hot key",
    )
    add_arguments(parser)  # every option of the diagnosis, from DoctorOptions
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--redact",
        action="store_true",
        help="print every key as a stable hash (key#, 10 hex digits of its SHA-256) in the "
        "text, the JSON and the HTML page: the same key, the same hash",
    )
    parser.add_argument(
        "--html",
        metavar="OUT",
        help="also write the report as an HTML page (a new file, or one the doctor wrote)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skewlab.doctor.diagnosis import diagnose, read_records
    from skewlab.doctor.redaction import redact
    from skewlab.doctor.viz import check_html_out, doctor_text, write_html

    options = DoctorOptions.from_namespace(args)  # checked before any work
    if args.remote is not None:
        doctor_master(args.remote)  # a bad --remote: one line, before any work
    if args.follow is not None:
        return run_follow(args, options)
    if args.state is not None or args.path is None:
        return run_state(args, options.top)
    if args.key is None:
        raise SkewlabInputError("--key is required with records: the column whose keys to count")
    if args.state_partitions is not None:
        raise SkewlabInputError("--state-partitions is for --state CHECKPOINT_DIR")
    if args.html:
        check_html_out(args.html)  # before any work: never over a file skewlab did not write
    spark = doctor_spark(args.remote)
    records = read_records(spark, args.path, args.format, args.null_value)
    report = diagnose(records, args.key, options, progress=not args.json)
    report = report.replace(input=dataclasses.replace(report.input, path=args.path))
    if args.redact:
        report = redact(report)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        print(doctor_text(report))
    if args.html:
        print(f"report: {write_html(report, args.html)}")
    return 0


def run_state(args: argparse.Namespace, top: int) -> int:
    """``skewlab doctor --state CHECKPOINT_DIR``: the state's skew (see
    :mod:`skewlab.doctor.checkpoint_state`)."""
    from skewlab.doctor.checkpoint_state import check_checkpoint, read_state

    if args.state is None:
        raise SkewlabInputError(
            "give a file or folder of records (with --key), --follow DIR (with --key), or "
            "--state CHECKPOINT_DIR"
        )
    if args.path is not None:
        raise SkewlabInputError(f"give records ({args.path!r}) or --state {args.state!r}, not both")
    for flag in ("html", "format", "null_value"):
        if getattr(args, flag):
            raise SkewlabInputError(f"--{flag.replace('_', '-')} is for records, not for --state")
    check_checkpoint(args.state)  # before Spark starts
    report = read_state(
        args.state, key=args.key, top=top, partitions=args.state_partitions,
        spark=doctor_spark(args.remote),
    )  # fmt: skip
    if args.redact:
        report = report.redacted()
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.to_text())
    return 0


def run_follow(args: argparse.Namespace, options: DoctorOptions) -> int:
    """``skewlab doctor --follow DIR --key COL``: the hot keys of a stream, live (see
    :mod:`skewlab.doctor.live_hot_keys`)."""
    import sys

    from skewlab.doctor.live_hot_keys import (
        FOLLOW_SPARK_CONFIG,
        RATE_KEY,
        RateSource,
        check_follow_checkpoint,
        check_follow_inputs,
        follow,
    )

    if args.path is not None or args.state is not None:
        raise SkewlabInputError("give one of records, --follow DIR or --state CHECKPOINT_DIR")
    if args.key is None and RateSource.parse(args.follow) is not None:
        args.key = RATE_KEY
    if args.key is None:
        raise SkewlabInputError("--key is required with --follow: the column whose keys to count")
    for flag in ("html", "null_value", "state_partitions"):
        if getattr(args, flag):
            raise SkewlabInputError(f"--{flag.replace('_', '-')} is not for --follow")
    check_follow_inputs(args.follow, args.threshold, args.window, args.format, args.key)
    if args.checkpoint_dir is not None:
        check_follow_checkpoint(args.checkpoint_dir)
    largest = options.largest_parallelism
    spark = doctor_spark(args.remote, driver_config=FOLLOW_SPARK_CONFIG)
    live = _LiveTable() if sys.stdout.isatty() and not args.json else None

    def on_window(window) -> None:
        if args.redact:
            window = window.redacted()
        if args.json:
            print(json.dumps(window.to_json()), flush=True)
        elif live is not None:
            live.show(window)
        else:
            print(window.to_text(), flush=True)

    try:
        state = follow(
            args.follow, args.key, window_seconds=args.window, threshold=args.threshold,
            fmt=args.format, parallelism=largest, max_parallelism=options.max_parallelism,
            partitions=options.partitions, checkpoint_dir=args.checkpoint_dir,
            on_window=on_window, spark=spark,
        )  # fmt: skip
    finally:
        if live is not None:
            live.stop()
    summary = state.summary(redact=args.redact)
    print(summary, file=sys.stderr if args.json else sys.stdout, flush=True)
    return 0


class _LiveTable:
    """A refreshing terminal table (rich's live display) of each window's hot keys."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.live = Live(console=Console(width=100), auto_refresh=False)
        self.live.start()

    def show(self, window) -> None:
        from rich.table import Table

        table = Table(title=window.to_text().splitlines()[0], title_justify="left")
        for column in ("key", "share", "count", "hot for", "since", "flink", "spark", "kafka"):
            table.add_column(column, justify="left" if column == "key" else "right")
        for h in window.hot:
            table.add_row(
                str(h.key)[:24], f"{h.share:.1%}", f"{h.lower:,}..{h.upper:,}",
                f"{h.windows_hot} window{'s' * (h.windows_hot != 1)}", f"window {h.hot_since}",
                *(str(h.places[e]) for e in ("flink", "spark", "kafka")),
            )  # fmt: skip
        self.live.update(table, refresh=True)

    def stop(self) -> None:
        self.live.stop()
