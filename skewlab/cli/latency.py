"""``skewlab latency``: the per-key ceiling of every strategy under a disk profile.

Example::

    $ skewlab latency --disk ebs-article
    $ skewlab latency --fio read.json write.json --buffer-size 1000 --json
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from skewlab.cli._deprecated import add_deprecated_alias
from skewlab.errors import SkewlabInputError
from skewlab.iomodel.fio import profile_from_fio_json
from skewlab.iomodel.model import (
    DEFAULT_BUFFER_SIZE,
    DEFAULT_HIT_RATIO,
    DEFAULT_RUN_LENGTH,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    ceiling_summary,
)
from skewlab.iomodel.profiles import DiskProfile, check_block_size, load_disk_profile

#: The disk profile ``skewlab latency`` models unless told otherwise: seed 000's EBS volume.
DEFAULT_DISK = "ebs-article"
#: Deprecated alias of :data:`DEFAULT_DISK` (kept for one release).
DEFAULT_PROFILE = DEFAULT_DISK

_DESCRIPTION = """\
Print the most records one key can absorb per second (the per-key ceiling) under a disk
profile (what one state read and one write cost on a disk), for each strategy, and the
distribution of state time per record.

One key's records are processed one after the other, so a key that costs t seconds of disk
time per record cannot go faster than 1/t records per second (seed 000's EBS arithmetic).
  naive     1 read + 1 write per record                     ceiling = 1e6 / (R + W)
  buffered  1 read + 1 write per flush of B records of a key  ceiling = B * 1e6 / (R + W)
  cached    write-back LRU with hit ratio h: a miss reads the state and writes back the
            evicted (dirty) entry                           ceiling = 1e6 / ((1 - h)(R + W))
  sorted    sorted input, single-key state: 1 write per run of L records  = L * 1e6 / W
R and W are the disk profile's mean read and write latencies in us (fio's 'lat' mean). Defaults:
B = 100, h = 0.5, L = 10 (see skewlab.iomodel.model). p50/p99 per-record state time are
Monte Carlo estimates (fixed seed) from the profile's percentiles, else its buckets.

A disk profile is measured at one block size; --block-size only checks it, and a different
size is refused (latency does not scale with bytes): measure a profile at that size instead.
(--profile is the deprecated spelling of --disk.)
"""

_EPILOG = """\
examples:
  skewlab latency                                  # the seed's EBS volume (ebs-article)
  skewlab latency --disk local                     # this machine (after skewlab probe-disk)
  skewlab latency --disk ebs-article --json        # one JSON object
  skewlab latency --fio result.json                # any fio --output-format=json result
  skewlab latency --fio read.json write.json       # a read run and a write run
  skewlab latency --buffer-size 1000 --hit-ratio 0.9 --run-length 100
"""


def register(subparsers: Any) -> None:
    """Add the ``latency`` command."""
    parser = subparsers.add_parser(
        "latency",
        help="per-key ceiling (records/key/s) of each strategy under a disk profile",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--disk",
        metavar="NAME|FILE",
        help=f"a disk profile in data/latency/ or a path to one's JSON (default {DEFAULT_DISK})",
    )
    add_deprecated_alias(source, old="--profile", new="--disk", dest="disk", metavar="NAME")
    source.add_argument(
        "--fio",
        nargs="+",
        metavar="FILE",
        help="fio --output-format=json result(s) to import instead of a disk profile",
    )
    parser.add_argument(
        "--block-size",
        metavar="B",
        help="block size to model (8192 or 8k); must be the disk profile's own",
    )
    parser.add_argument(
        "--buffer-size",
        type=int,
        default=DEFAULT_BUFFER_SIZE,
        metavar="B",
        help=f"records of one key per buffer flush (default {DEFAULT_BUFFER_SIZE})",
    )
    parser.add_argument(
        "--hit-ratio",
        type=float,
        default=DEFAULT_HIT_RATIO,
        metavar="H",
        help=f"cache hit ratio in [0, 1] (default {DEFAULT_HIT_RATIO})",
    )
    parser.add_argument(
        "--run-length",
        type=int,
        default=DEFAULT_RUN_LENGTH,
        metavar="L",
        help=f"records per key run in sorted input (default {DEFAULT_RUN_LENGTH})",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help=f"Monte Carlo samples per strategy (default {DEFAULT_SAMPLES})",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="Monte Carlo seed (default %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _validate(args: argparse.Namespace) -> None:
    if args.buffer_size < 1:
        raise SkewlabInputError(f"--buffer-size must be at least 1, got {args.buffer_size}")
    if not 0.0 <= args.hit_ratio <= 1.0:  # also refuses nan
        raise SkewlabInputError(f"--hit-ratio must be in [0, 1], got {args.hit_ratio}")
    if args.run_length < 1:
        raise SkewlabInputError(f"--run-length must be at least 1, got {args.run_length}")
    if args.samples < 1:
        raise SkewlabInputError(f"--samples must be at least 1, got {args.samples}")


def _load(args: argparse.Namespace) -> DiskProfile:
    if args.fio:
        return profile_from_fio_json(args.fio if len(args.fio) > 1 else args.fio[0])
    return load_disk_profile(args.disk or DEFAULT_DISK)


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _table(summary: dict[str, Any], profile: DiskProfile) -> str:
    lines = [
        f"disk profile {profile.name}: {profile.block_size}-byte blocks, mean read "
        f"{profile.read.mean_us:,.2f} us, mean write {profile.write.mean_us:,.2f} us (fio 'lat')",
    ]
    if profile.source:
        lines.append(
            f"  source: {profile.source[:160]}{'...' if len(profile.source) > 160 else ''}"
        )
    header = (
        f"{'strategy':<38}{'reads/rec':>10}{'writes/rec':>11}{'records/key/s':>15}"
        f"{'state us/rec: mean':>20}{'p50':>11}{'p99':>12}"
    )
    lines += ["", header, "-" * len(header)]
    for row in summary["strategies"]:
        ceiling = row["records_per_key_per_second"]
        st = row["state_time_us"]
        lines.append(
            f"{row['label']:<38}{row['reads_per_record']:>10.3g}{row['writes_per_record']:>11.3g}"
            f"{'unbounded' if ceiling is None else f'{ceiling:,.1f}':>15}"
            f"{_us(st['mean_us']):>20}{_us(st['p50_us']):>11}{_us(st['p99_us']):>12}"
        )
    source = summary["strategies"][0]["state_time_us"]["source"]
    lines += [
        "",
        f"p50/p99: Monte Carlo over the profile's {source}, {summary['samples']:,} samples, "
        f"seed {summary['seed']}; processing time not included.",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``skewlab latency``."""
    _validate(args)
    profile = _load(args)
    check_block_size(profile, args.block_size)
    summary = ceiling_summary(
        profile,
        buffer_size=args.buffer_size,
        hit_ratio=args.hit_ratio,
        run_length=args.run_length,
        samples=args.samples,
        seed=args.seed,
    )
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        print(_table(summary, profile))
    return 0
