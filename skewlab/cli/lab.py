"""``skewlab lab``: start JupyterLab in the notebooks folder."""

from __future__ import annotations

import argparse
import subprocess
import sys

from skewlab import paths


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lab",
        help="start JupyterLab in notebooks/",
        description="Start JupyterLab with notebooks/ as its root; extra arguments go to it.",
        epilog="examples:\n  skewlab lab\n  skewlab lab --no-browser --port 8899\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=run, passes_extra_args=True)


def run(args: argparse.Namespace) -> int:
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--notebook-dir={paths.notebooks_dir()}",
        *args.extra_args,
    ]
    return subprocess.call(command)
