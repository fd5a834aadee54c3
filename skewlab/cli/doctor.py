"""``skewlab doctor``: point skewlab at your own records and learn which keys are hot and where
their load lands in Flink, Spark and Kafka (:mod:`skewlab.doctor.diagnosis`)."""

from __future__ import annotations

import argparse
import json

from skewlab.doctor.diagnosis import DEFAULT_PARALLELISM, FORMATS
from skewlab.engine.partitioners import ENGINES

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
    parser.add_argument("path", help="a file or folder of records (a URI such as s3a://... too)")
    parser.add_argument("--key", required=True, help="the key column")
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
    parser.add_argument(
        "--time",
        help="a time column (timestamp, or seconds since the epoch): the hottest key's peak "
        "records per window",
    )
    parser.add_argument(
        "--window-seconds",
        type=float,
        default=1.0,
        help="the window of --time's peak, seconds (default 1)",
    )
    parser.add_argument(
        "--engine",
        choices=(*ENGINES, "all"),
        default="all",
        help="whose routing to compute (default all)",
    )
    parser.add_argument(
        "--parallelism",
        type=int,
        nargs="+",
        default=list(DEFAULT_PARALLELISM),
        metavar="P",
        help="Flink parallelisms to show subtask by subtask (default 2 4 8)",
    )
    parser.add_argument(
        "--max-parallelism",
        type=int,
        metavar="M",
        help="Flink's max parallelism, 1..32768 (default: Flink's default for the largest P)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="Spark's shuffle partitions and Kafka's topic partitions (default: the largest P)",
    )
    parser.add_argument("--top", type=int, default=20, help="how many hot keys to list")
    parser.add_argument(
        "--cache-entries",
        type=int,
        nargs="+",
        default=[],
        metavar="N",
        help="also replay the records through an LRU cache of N entries per subtask (at the "
        "largest P) and give its hit ratio",
    )
    parser.add_argument(
        "--target-rate",
        type=float,
        metavar="R",
        help="records/s into the job: with --subtask-rate, the smallest P that keeps up",
    )
    parser.add_argument(
        "--subtask-rate",
        type=float,
        metavar="C",
        help="records/s one subtask of your job handles (measured on your job; default: what "
        "one naive RocksDB subtask handles on these keys, from the cost profile)",
    )
    parser.add_argument(
        "--costs",
        metavar="FILE",
        help="a 'skewlab bench remedy_costs' result file to price the remedies with (default: "
        "the newest on this machine, else the shipped reference)",
    )
    parser.add_argument(
        "--disk-profile",
        metavar="NAME|FILE",
        help="model the state accesses that reach a disk on this profile: ebs-article (seed "
        "000's EBS), local (skewlab probe-disk), or an fio JSON file (default: none, state on "
        "this machine as measured)",
    )
    parser.add_argument(
        "--bounded",
        action="store_true",
        help="the input is bounded (a batch): sorted input is weighed too",
    )
    parser.add_argument(
        "--salt-buckets",
        type=int,
        metavar="N",
        help="salts per key for the salted remedy (default: the largest P)",
    )
    parser.add_argument(
        "--sketch-threshold",
        type=float,
        metavar="SHARE",
        help="also find the keys holding at least this share of the records (0..1) the way a "
        "source would: a frequent-items sketch per partition (Apache DataSketches), merged, "
        "beside the exact counts with its error bound",
    )
    parser.add_argument(
        "--no-remedies",
        action="store_true",
        help="skip pricing the remedies (no replay of the records)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--html",
        metavar="OUT",
        help="also write the report as an HTML page (a new file, or one the doctor wrote)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skewlab.doctor.diagnosis import diagnose, read_records
    from skewlab.doctor.viz import check_html_out, doctor_text, write_html
    from skewlab.engine.session import get_spark

    if args.html:
        check_html_out(args.html)  # before any work: never over a file skewlab did not write
    spark = get_spark()
    records = read_records(spark, args.path, args.format, args.null_value)
    report = diagnose(
        records,
        args.key,
        time=args.time,
        engines=args.engine if args.engine == "all" else (args.engine,),
        parallelism=tuple(args.parallelism),
        max_parallelism=args.max_parallelism,
        partitions=args.partitions,
        top=args.top,
        window_seconds=args.window_seconds,
        cache_entries=tuple(args.cache_entries),
        target_rate=args.target_rate,
        subtask_rate=args.subtask_rate,
        remedies=not args.no_remedies,
        costs=args.costs,
        disk_profile=args.disk_profile,
        bounded=args.bounded,
        salt_buckets=args.salt_buckets,
        sketch_threshold=args.sketch_threshold,
        progress=not args.json,
    )
    report["input"]["path"] = args.path
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(doctor_text(report))
    if args.html:
        print(f"report: {write_html(report, args.html)}")
    return 0
