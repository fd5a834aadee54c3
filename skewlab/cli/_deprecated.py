"""An old option spelling kept working for one release (a helper module, not a command).

:func:`add_deprecated_alias` adds the old spelling as a hidden option (absent from ``--help``)
that sets the new option's destination and prints one line to stderr when it is used::

    $ skewlab latency --profile local
    skewlab latency: --profile is deprecated, use --disk (it will be removed in the next release)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_deprecated_alias", "deprecation_line", "hide_suppressed_commands"]


def deprecation_line(prog: str, old: str, new: str) -> str:
    """The one line printed when ``old`` is used instead of ``new`` in command ``prog``.

    >>> deprecation_line("skewlab latency", "--profile", "--disk")
    'skewlab latency: --profile is deprecated, use --disk (it will be removed in the next release)'
    """
    return f"{prog}: {old} is deprecated, use {new} (it will be removed in the next release)"


class _DeprecatedAlias(argparse.Action):
    """Store the value in the new option's destination, after one line to stderr."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        old = option_string or self.option_strings[0]
        print(deprecation_line(parser.prog, old, self.new), file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(
    parser: Any, *, old: str, new: str, dest: str, **kwargs: Any
) -> argparse.Action:
    """Add ``old`` to ``parser`` as a hidden, deprecated spelling of the option ``new``.

    ``parser`` is an ``ArgumentParser`` or one of its (mutually exclusive) argument groups: put
    the alias in the group of ``new`` so that argparse refuses the same combinations for both
    spellings. The alias takes one value, like ``new``; ``kwargs`` (``type``, ``choices``,
    ``metavar``, ``nargs``) go to ``add_argument`` so the value is checked as ``new``'s is. A
    use prints :func:`deprecation_line` to stderr and stores the value in ``dest``; the alias
    never sets a default, so ``new``'s default stands when neither is given.

    >>> import contextlib, io
    >>> parser = argparse.ArgumentParser(prog="skewlab bench")
    >>> _ = parser.add_argument("--size", default="quick", choices=["tiny", "quick", "full"])
    >>> _ = add_deprecated_alias(
    ...     parser, old="--profile", new="--size", dest="size", choices=["tiny", "quick", "full"]
    ... )
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     args = parser.parse_args(["--profile", "tiny"])
    >>> args.size
    'tiny'
    >>> print(err.getvalue(), end="")
    skewlab bench: --profile is deprecated, use --size (it will be removed in the next release)
    >>> parser.parse_args([]).size
    'quick'
    >>> "--profile" in parser.format_help()
    False
    """
    return parser.add_argument(
        old,
        dest=dest,
        action=_DeprecatedAlias,
        new=new,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
        **kwargs,
    )


def hide_suppressed_commands(subparsers: argparse._SubParsersAction) -> None:
    """Leave the sub-commands added with ``help=argparse.SUPPRESS`` (former names, still
    accepted) out of ``--help``'s command list.

    >>> parser = argparse.ArgumentParser(prog="skewlab")
    >>> sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    >>> _ = sub.add_parser("backlog", help="the outage backlog")
    >>> _ = sub.add_parser("catch-up", help=argparse.SUPPRESS)
    >>> hide_suppressed_commands(sub)
    >>> "catch-up" in parser.format_help(), "backlog" in parser.format_help()
    (False, True)
    >>> parser.parse_args(["catch-up"]).command
    'catch-up'
    """
    listed = subparsers._choices_actions  # noqa: SLF001 - where argparse keeps the listed ones
    listed[:] = [action for action in listed if action.help is not argparse.SUPPRESS]
