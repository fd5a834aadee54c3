"""``skewlab probe-disk``: measure this machine's disk and save it as the ``local`` disk profile.

Example::

    $ skewlab probe-disk --size-mb 64 --seconds 10
    $ skewlab latency --disk local
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from skewlab.cli._deprecated import add_deprecated_alias
from skewlab.errors import SkewlabInputError
from skewlab.iomodel.disk_probe import MAX_SECONDS, MAX_SIZE_MB, probe_disk
from skewlab.iomodel.profiles import latency_dir, load_disk_profile, parse_size, save_profile
from skewlab.validation import check_writable_dir

_DESCRIPTION = f"""\
Measure random reads and writes (8 KiB by default) on a temporary file, one request at a time,
the way seed 000 measured EBS with fio, and save the result as a disk profile.

Uses O_DIRECT where the filesystem allows it (so the page cache does not answer for the disk);
elsewhere it falls back to buffered I/O with fdatasync after each write, with a warning.
Bounded: the file is at most {MAX_SIZE_MB} MiB, the run at most {MAX_SECONDS:g} s, and the file
is removed afterwards. The disk profile goes to data/latency/local.json unless --out says
otherwise; then 'skewlab latency --disk local' shows this machine's per-key ceilings.
"""

_EPILOG = """\
examples:
  skewlab probe-disk                               # 64 MiB, 10 s, in the temp directory
  skewlab probe-disk --size 16 --seconds 3         # quicker
  skewlab probe-disk --dir /mnt/data --out /tmp/data-disk.json
  skewlab latency --disk local                     # the ceilings on this machine
"""


def register(subparsers: Any) -> None:
    """Add the ``probe-disk`` command."""
    parser = subparsers.add_parser(
        "probe-disk",
        help="measure this disk's random read/write latency into a disk profile",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--size-mb",
        dest="size_mb",
        type=float,
        default=64,
        metavar="MB",
        help="test file size in MiB (default 64)",
    )
    # --size is the run-size word (tiny|quick|full) elsewhere; here it was the file's MiB
    add_deprecated_alias(parser, old="--size", new="--size-mb", dest="size_mb", type=float)
    parser.add_argument(
        "--seconds", type=float, default=10, metavar="S", help="measuring time (default 10)"
    )
    parser.add_argument(
        "--block-size", default="8k", metavar="B", help="I/O size, e.g. 8192 or 8k (default 8k)"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="directory for the test file (default: the system's temp directory)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PATH",
        help="where to write the disk profile (default data/latency/local.json)",
    )
    parser.add_argument(
        "--name", default=None, help="disk profile name (default: --out's file stem)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``skewlab probe-disk``."""
    out = args.out if args.out is not None else latency_dir() / "local.json"
    if out.suffix != ".json":
        raise SkewlabInputError(f"--out must be a .json file, got {out}")
    if out.exists() and out.is_dir():
        raise SkewlabInputError(f"--out is a directory: {out}")
    check_writable_dir("--out's folder", out.parent)
    if out.exists():  # replace a disk profile (a new probe of this disk), never a user's file
        try:
            load_disk_profile(out)
        except (SkewlabInputError, ValueError, KeyError, TypeError) as exc:
            raise SkewlabInputError(
                f"--out {str(out)!r} exists and is not a disk profile ({exc}): choose a new "
                "path; probe-disk replaces only a disk profile"
            ) from exc
    profile = probe_disk(
        size_mb=args.size_mb,
        seconds=args.seconds,
        block_size=parse_size(args.block_size),
        directory=args.dir,
        progress=not args.no_progress,
        name=args.name or out.stem,
    )
    path = save_profile(profile, out)
    for direction in ("read", "write"):
        dist = getattr(profile, direction)
        print(
            f"{direction:<5} mean {dist.mean_us:,.1f} us  p50 {dist.quantile_us(50):,.1f} us  "
            f"p99 {dist.quantile_us(99):,.1f} us  max {dist.max_us:,.1f} us  "
            f"({dist.samples:,} I/Os, {dist.iops:,.0f}/s)"
        )
    print(f"wrote {path} (disk profile {profile.name!r})")
    return 0
