"""The ``--size tiny|quick|full`` option that ``skewlab bench`` and ``skewlab report`` share (a
helper module, not a command), with ``--profile`` as its former spelling.

Example::

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="skewlab report")
    >>> add_size_option(parser, "tiny: seconds; quick: minutes (default); full: the seeds' sizes")
    >>> parser.parse_args([]).size, parser.parse_args(["--size", "full"]).size
    ('quick', 'full')
"""

from __future__ import annotations

import argparse

from skewlab.cli._deprecated import add_deprecated_alias
from skewlab.experiments.chapters import SIZES

__all__ = ["add_size_option"]


def add_size_option(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--size`` (default ``quick``) and its deprecated spelling ``--profile``."""
    parser.add_argument("--size", choices=SIZES, default="quick", help=help)
    add_deprecated_alias(parser, old="--profile", new="--size", dest="size", choices=SIZES)
