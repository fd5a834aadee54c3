"""``skewlab report``: execute every notebook and render the HTML report."""

from __future__ import annotations

import argparse
import sys

from skewlab.cli._size_option import add_size_option

EXAMPLES = """\
examples:
  skewlab report                       # quick size, into reports/
  skewlab report --size full --out /tmp/skewlab-report
  skewlab report --size full --notebooks 03,04      # two chapters at the seeds' sizes
  skewlab report --notebooks state_cache,backlog    # chapters by id
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="run every notebook through papermill and render them to HTML",
        description=(
            "Execute every notebook in notebooks/ at one size (papermill's `size` parameter), "
            "render each to standalone HTML (charts embedded, no network needed) and write an "
            "index.html linking them. The notebooks run one after the other in one kernel (one "
            "Spark driver); at the end a table shows, per notebook, the seconds spent starting "
            "the kernel, starting Spark, in its cells and writing its HTML."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_size_option(
        parser,
        "tiny: seconds; quick (default): a budget of 2 minutes on 2 cores (a line says when a "
        "run took longer), the lessons a short run settles live, the rest from the shipped "
        "reference; full: the seeds' sizes",
    )
    parser.add_argument("--out", default=None, help="output directory (default: reports/)")
    parser.add_argument(
        "--notebooks",
        default=None,
        metavar="N[,N...]",
        help="only these notebooks, by number, chapter id or file name, e.g. 3,5 (default: all)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # papermill and nbconvert load only when a report runs (seconds every other command skips)
    from skewlab.report import render_report, select_notebooks

    notebooks = select_notebooks(args.notebooks) if args.notebooks is not None else None
    result = render_report(args.size, args.out, notebooks=notebooks)
    for nb in result.notebooks:
        mark = "ok    " if nb.ok else "FAILED"
        print(f"{mark} {nb.name:32s} {nb.seconds:7.1f} s  {nb.html}")
    print(f"index: {result.index}  ({result.seconds:.0f} s)")
    print("\nwhere the time went (seconds; one kernel and one Spark for the whole report):")
    print(result.timings())
    if result.java_options_line():
        print(result.java_options_line())
    if result.budget_line():
        print(result.budget_line())
    if result.claims():
        print("\nclaims (each chapter's lessons checked on this run and on the shipped reference;")
        print(f"every outcome in {result.index.with_name('claims.json')}):")
        print(result.claims())
    for nb in result.failures:
        print(f"skewlab report: notebook {nb.name} failed at {nb.error}", file=sys.stderr)
    return 0 if result.ok else 1
