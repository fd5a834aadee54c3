"""``skewlab generate``: synthetic views, generated in Spark, saved as Parquet."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from skewlab.inputs.views import (
    DISTRIBUTIONS,
    ViewSpec,
    check_output_dir,
    default_views_path,
    generate_views,
    save_views,
)

EXAMPLES = """\
examples:
  skewlab generate --views 100000 --users 25000 --tweets 20 --seed 1
  skewlab generate --views 1000000 --users 25000 --tweets 20000 --distribution zipf --skew 1.1
  skewlab generate --views 1000 --users 10 --tweets 5 --out /tmp/views
  skewlab generate --views 2000 --users 10 --tweets 5 --out /tmp/views --overwrite

--out must be a new or empty directory; an existing view set (one skewlab wrote, with its
_skewlab_views.json) is replaced only with --overwrite. No other directory is ever written into.
"""


def add_view_options(parser: argparse.ArgumentParser, *, views: bool = True) -> None:
    """The options that describe a synthetic view set (shared by every command that makes one).

    ``views=False`` leaves ``--views`` to the caller (``skewlab run`` also takes a path there).
    """
    if views:
        parser.add_argument("--views", type=int, required=True, help="number of views (rows)")
    parser.add_argument("--users", type=int, default=25_000, help="distinct users (default 25000)")
    parser.add_argument("--tweets", type=int, default=20, help="distinct tweets (default 20)")
    parser.add_argument(
        "--distribution", default="uniform", metavar="{uniform,zipf}",
        help="how views spread over tweets: uniform (the article's) or zipf (default uniform)",
    )  # fmt: skip
    parser.add_argument(
        "--skew", type=float, default=1.1, help="Zipf exponent s > 0 (default 1.1; zipf only)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def spec_from_args(args: argparse.Namespace) -> ViewSpec:
    """A validated :class:`ViewSpec` from the view options (raises SkewlabInputError)."""
    return ViewSpec(
        n_views=args.views,
        n_users=args.users,
        n_tweets=args.tweets,
        distribution=args.distribution,
        skew=args.skew,
        seed=args.seed,
    )


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="generate synthetic views in Spark and save them as Parquet",
        description=(
            "Generate View(view_id, user_id, tweet_id, event_time) rows in Spark, deterministic "
            "for a seed, and save them as Parquet with their parameters. "
            f"Distributions: {', '.join(DISTRIBUTIONS)}."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_view_options(parser)
    parser.add_argument(
        "--out", type=Path, default=None,
        help="output directory, new or empty (default data/views/<name>)",
    )  # fmt: skip
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace the view set already at --out (only one skewlab wrote; nothing else)",
    )  # fmt: skip
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skewlab.engine.session import get_spark

    spec = spec_from_args(args)
    out = check_output_dir(args.out or default_views_path(spec), overwrite=args.overwrite)
    started = time.perf_counter()
    spark = get_spark(args.master)
    df = generate_views(spark, spec)
    save_views(df, spec, out, overwrite=args.overwrite)
    written = spark.read.parquet(str(out))
    rows = written.count()
    tweets = written.select("tweet_id").distinct().count()
    print(
        f"wrote {rows:,} views ({tweets:,} distinct tweets, {spec.distribution}) to {out} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0
