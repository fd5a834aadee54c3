"""The ``skewlab`` command line.

Each command lives in its own module of this package (found automatically) and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to the function that runs
it.

Example::

    $ skewlab generate --views 100000 --users 25000 --tweets 20 --seed 1
    $ skewlab report --size quick
    $ skewlab --debug run naive --views 1000   # a failure shows its traceback

An input error is one line and exit status 2, before any work; a failure during the work (a
Spark job, a full disk) is one line and exit status 1, its traceback only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from skewlab.cli._deprecated import hide_suppressed_commands
from skewlab.errors import JavaNotFoundError, SkewlabInputError, failure_cause


def _command_modules() -> list[str]:
    """Every command module of this package, in name order (one command or group each)."""
    import pkgutil

    return [
        f"{__name__}.{info.name}"
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name)
        if not info.name.startswith("_")
    ]


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2 (argparse's own convention)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command registered."""
    parser = _Parser(
        prog="skewlab",
        description="A laboratory for hot keys in stateful stream aggregation, on Apache Spark.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  skewlab generate --views 100000 --users 25000 --tweets 20 --seed 1\n"
            "  skewlab report --size quick\n"
            "  skewlab lab\n"
            "  skewlab --debug run naive --views 1000   (a failure shows its traceback)\n"
        ),
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on a failure, show its whole traceback instead of one line",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in _command_modules():
        importlib.import_module(name).register(subparsers)
    hide_suppressed_commands(subparsers)  # former command names still work, unlisted
    return parser


#: The commands that need no classic Spark: the doctor (which runs over Spark Connect too) and
#: the ones that start no Spark at all; the rest refuse a Spark Connect URL in one line.
_WITHOUT_CLASSIC_SPARK = frozenset({"doctor", "latency", "probe-disk"})


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skewlab`` script; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passes_extra_args", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra_args = extra
    try:
        if args.command not in _WITHOUT_CLASSIC_SPARK:
            from skewlab.engine.connect_scope import refuse_connect

            refuse_connect(args.command, getattr(args, "master", None))
        status = args.func(args)
    except (SkewlabInputError, JavaNotFoundError) as exc:  # bad input or environment: no work
        print(f"skewlab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"skewlab {args.command}: failed: {failure_line(exc)}", file=sys.stderr)
        return 1
    return int(status or 0)


def failure_line(exc: BaseException) -> str:
    """One line for a failure: its type, the line of its message that names what failed
    (:func:`~skewlab.errors.failure_cause`: a Spark error's message is pages long), and where
    the traceback is.

    Example::

        >>> failure_line(RuntimeError("Spark did not start\\n  at ..."))
        'RuntimeError: Spark did not start (skewlab --debug ... shows the traceback)'
    """
    first = failure_cause(str(exc), limit=400) if str(exc).strip() else "(no message)"
    return f"{type(exc).__name__}: {first} (skewlab --debug ... shows the traceback)"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
