"""``skewlab run STRATEGY``: one strategy over one view set, its RunResult printed.

Each strategy is a sub-command whose own options are built from its parameters class
(:data:`~skewlab.strategies.STRATEGIES`): a field ``max_count`` is ``--max-count``, with the
field's type, default and one-line doc; ``skewlab run STRATEGY --help`` lists them. The
savepoint and failure options are there for the strategies that are ``resumable``.

Example::

    $ skewlab run buffered --views 100000 --tweets 20 --max-count 1000
    $ skewlab run buffered --help
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

from skewlab.cli._deprecated import add_deprecated_alias
from skewlab.cli._recovery_options import EXAMPLES as RECOVERY_EXAMPLES
from skewlab.cli._recovery_options import (
    add_recovery_options,
    recovery_flags,
    recovery_requested,
    run_with_recovery,
)
from skewlab.cli.generate import add_view_options
from skewlab.engine.config import DEFAULT_DISK_PROFILE, JobConfig
from skewlab.errors import SkewlabInputError
from skewlab.inputs.views import ViewSpec
from skewlab.strategies import STRATEGIES, StrategyParameters, strategy_parameters
from skewlab.strategies.resume import RESUMABLE, check_resumable

__all__ = [
    "DEFAULT_VIEWS",
    "job_from_args",
    "option_flag",
    "register",
    "run",
    "strategy_fields",
    "strategy_from_args",
    "strategy_options",
]

DEFAULT_VIEWS = 100_000

_EXAMPLES = """\
  skewlab run naive --views 100000 --tweets 20 --backend rocksdb
  skewlab run buffered --views 100000 --tweets 20 --trigger-interval-ms 100 --max-count 1000
  skewlab run cached --cache-entries 500 --views data/views/v100000-u25000-t20-uniform-seed1
  skewlab run salted --salt-buckets 4 --distribution zipf --skew 1.2 --json
  skewlab run buffered --source-rate 20000 --trigger-interval-ms 50 --views 20000
  skewlab run streaming --variant per-record --tweets 20 --views 20000 --max-rows-per-trigger 2000
  skewlab run streaming --variant per-batch --checkpoint-dir /tmp/q --stop-after-batches 3
"""


def strategy_fields(cls: type[StrategyParameters]) -> list[dataclasses.Field]:
    """The parameters of strategy class ``cls`` in option order: its own first, then the one
    every strategy has (``precision``).

    Example::

        >>> from skewlab.strategies import Buffered
        >>> [f.name for f in strategy_fields(Buffered)][:4]
        ['backend', 'cache_entries', 'cache_policy', 'trigger_interval_ms']
    """
    common = {f.name for f in dataclasses.fields(StrategyParameters)}
    every = dataclasses.fields(cls)
    return [f for f in every if f.name not in common] + [f for f in every if f.name in common]


def option_flag(name: str) -> str:
    """The command-line option of parameter ``name``.

    Example::

        >>> option_flag("max_rows_per_trigger")
        '--max-rows-per-trigger'
    """
    return "--" + name.replace("_", "-")


def strategy_options(cls: type[StrategyParameters]) -> list[str]:
    """The options of strategy class ``cls`` (one per parameter), in option order.

    Example::

        >>> from skewlab.strategies import Naive, Sorted
        >>> strategy_options(Naive), strategy_options(Sorted)
        (['--backend', '--cache-entries', '--cache-policy', '--precision'], ['--precision'])
    """
    return [option_flag(f.name) for f in strategy_fields(cls)]


@functools.cache
def _type_hints(cls: type[StrategyParameters]) -> dict[str, Any]:
    """``cls``'s resolved field types, read once per class (the parser is built per command,
    and resolving a class's hints is a third of the time building it takes)."""
    return typing.get_type_hints(cls)


def _value_type(cls: type[StrategyParameters], field: dataclasses.Field) -> type:
    """The Python type an option's value is read as (``int | None`` -> ``int``)."""
    hint = _type_hints(cls)[field.name]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = kinds[0] if len(kinds) == 1 else hint
    if hint not in (int, float, str, bool):
        raise TypeError(f"{cls.__name__}.{field.name}: no command-line option for type {hint}")
    return hint


def _default_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _add_strategy_option(group, cls: type[StrategyParameters], field: dataclasses.Field) -> None:
    """One parameter of ``cls`` as an option: its doc, type, choices and default shown; the
    value is only set when given (the class's default stands otherwise, and checks values)."""
    if "doc" not in field.metadata:
        raise TypeError(f"{cls.__name__}.{field.name} has no doc: declare it with parameter()")
    kind = _value_type(cls, field)
    help_text = f"{field.metadata['doc']} (default {_default_text(field.default)})"
    options: dict[str, Any] = {"default": argparse.SUPPRESS, "help": help_text}
    if kind is bool:
        options["action"] = argparse.BooleanOptionalAction
    else:
        options["type"] = kind
        choices = field.metadata.get("choices")
        options["metavar"] = "{" + ",".join(choices) + "}" if choices else field.name.upper()
    group.add_argument(option_flag(field.name), dest=field.name, **options)


def _add_job_options(parser: argparse.ArgumentParser) -> None:
    """The views and the job's settings: the options every strategy has."""
    parser.add_argument(
        "--views",
        default=str(DEFAULT_VIEWS),
        help=f"views to generate (a number, default {DEFAULT_VIEWS}) or a saved view set's path",
    )
    add_view_options(parser, views=False)
    parser.add_argument("--parallelism", type=int, default=None, help="operator subtasks")
    parser.add_argument(
        "--max-parallelism", type=int, default=None, help="key groups (default: Flink's rule)"
    )
    parser.add_argument(
        "--source-rate", type=float, default=None, help="replay at R records/s (default: max)"
    )
    parser.add_argument(
        "--disk",
        default=DEFAULT_DISK_PROFILE,
        metavar="NAME|FILE",
        help=f"disk profile for the modelled I/O time (default {DEFAULT_DISK_PROFILE})",
    )
    add_deprecated_alias(parser, old="--latency-profile", new="--disk", dest="disk")
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _summary(cls: type[StrategyParameters]) -> str:
    """The first sentence of the class's docstring, on one line, without RST markup."""
    doc = " ".join((cls.__doc__ or cls.name).split()).replace("``", "")
    return doc.split(". ")[0].rstrip(".")


def _description(cls: type[StrategyParameters]) -> str:
    """What ``skewlab run STRATEGY --help`` says of it: its summary, then its facts."""
    summary = textwrap.fill(f"{cls.name}: {_summary(cls)}.", 88, break_on_hyphens=False)
    return f"{summary}\n\n{_facts(cls)}"


def _facts(cls: type[StrategyParameters]) -> str:
    savepoints = "yes (--savepoint-at, --fail-at)" if cls.resumable else "no"
    if cls.resumable and not cls.periodic_checkpoints:
        savepoints = "yes, without periodic checkpoints (--savepoint-at, --fail-at)"
    modelled = f"as {cls.modelled_as!r}" if cls.modelled_as else "no"
    return (
        f"savepoints and failures: {savepoints}\nper-key ceiling in 'skewlab latency': {modelled}"
    )


def _examples(name: str) -> str:
    lines = [
        line
        for line in (_EXAMPLES + RECOVERY_EXAMPLES).splitlines()
        if line.split()[:3] == ["skewlab", "run", name]
    ]
    return "\n".join(lines or [f"  skewlab run {name} --views 20000 --tweets 20"])


def _strategies_help() -> str:
    width = max(map(len, STRATEGIES))
    return "\n".join(
        textwrap.fill(
            " ".join(strategy_options(cls)),
            94,
            initial_indent=f"  {name:<{width}}  ",
            subsequent_indent=" " * (width + 4),
            break_on_hyphens=False,
        )
        for name, cls in STRATEGIES.items()
    )


def _epilog() -> str:
    return (
        f"examples:\n{_EXAMPLES}\n"
        "--views takes a number (views to generate, with --users/--tweets/--distribution/--skew/"
        "--seed)\nor the path of a saved view set (from 'skewlab generate'). A strategy takes "
        "only its own options\n(skewlab run STRATEGY --help), after its name:\n"
        f"{_strategies_help()}\n\n"
        f"savepoints and failures ({', '.join(RESUMABLE)}):\n{RECOVERY_EXAMPLES}"
    )


class _StrategyAction(argparse._SubParsersAction):
    """The strategy sub-commands; an unknown name gets the strategies' own one-line error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = None  # checked in __call__, with the strategies' message

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if values[0] not in self._name_parser_map:
            try:
                strategy_parameters(values[0])  # raises, naming the strategies
            except SkewlabInputError as exc:
                raise argparse.ArgumentError(self, str(exc)) from None
        super().__call__(parser, namespace, values, option_string)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one aggregation strategy on Spark and print what it measured",
        description=(
            "Run one strategy over a view set on Spark and print its RunResult: records in/out/"
            "rejected, operator and end-to-end throughput, state reads and writes, cache hit "
            "ratio, buffer flushes, latency p50/p99, modelled I/O time under a disk profile, "
            "and the result digest (equal to the reference for every strategy). "
            f"Strategies: {', '.join(STRATEGIES)}."
        ),
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    strategies = parser.add_subparsers(
        dest="strategy", metavar="STRATEGY", action=_StrategyAction, title="strategies"
    )
    strategies.required = True
    for name, cls in STRATEGIES.items():
        sub = strategies.add_parser(
            name,
            help=_summary(cls),
            description=_description(cls),
            epilog=f"examples:\n{_examples(name)}\n",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_job_options(sub)
        own = sub.add_argument_group(
            f"{name}'s options", f"the parameters of skewlab.strategies.{cls.__name__}"
        )
        for field in strategy_fields(cls):
            _add_strategy_option(own, cls, field)
        if cls.resumable:
            add_recovery_options(sub)
        # a foreign option is refused in run() with the strategy's own one-line error
        sub.set_defaults(func=run, passes_extra_args=True)


def _views_source(args: argparse.Namespace) -> tuple[Path | None, ViewSpec | None]:
    value = args.views
    as_path = Path(value)
    if as_path.is_dir():
        return as_path, None
    try:
        n = int(value)
    except ValueError:
        raise SkewlabInputError(
            f"--views {value!r} is neither a number of views nor an existing view set directory"
        ) from None
    return None, ViewSpec(n, args.users, args.tweets, args.distribution, args.skew, args.seed)


def _check_extra_args(args: argparse.Namespace) -> None:
    """Refuse what the strategy's parser did not know: another strategy's option (one line
    naming the strategy's own), a savepoint option of a strategy that takes none, the rest."""
    extra = list(getattr(args, "extra_args", None) or [])
    if not extra:
        return
    cls = STRATEGIES[args.strategy]
    given = [arg.split("=", 1)[0] for arg in extra if arg.startswith("--")]
    if not cls.resumable and set(given) & set(recovery_flags()):
        check_resumable(cls)  # raises
    everyone = {flag for other in STRATEGIES.values() for flag in strategy_options(other)}
    foreign = [flag for flag in given if flag in everyone]
    if foreign:
        raise SkewlabInputError(
            f"strategy {args.strategy!r} has no option {', '.join(foreign)}; "
            f"its options: {', '.join(strategy_options(cls))}"
        )
    raise SkewlabInputError(
        f"unrecognized arguments: {' '.join(extra)} "
        f"(see skewlab run {args.strategy} --help; options go after the strategy)"
    )


def strategy_from_args(args: argparse.Namespace) -> StrategyParameters:
    """The strategy's parameters from the command line: only its own options may be given.

    Raises :class:`~skewlab.errors.SkewlabInputError` for an option the strategy does not have
    or a bad value.
    """
    _check_extra_args(args)
    cls = STRATEGIES[args.strategy]
    given = {f.name: getattr(args, f.name) for f in strategy_fields(cls) if hasattr(args, f.name)}
    return strategy_parameters(args.strategy, **given)


def job_from_args(args: argparse.Namespace) -> JobConfig:
    """The job's configuration from the command line (raises SkewlabInputError)."""
    return JobConfig(
        parallelism=args.parallelism,
        max_parallelism=args.max_parallelism,
        source_rate=args.source_rate,
        disk_profile=args.disk,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``skewlab run STRATEGY``."""
    from skewlab.engine.session import get_spark
    from skewlab.inputs.views import generate_views, load_views
    from skewlab.strategies import run_strategy

    strategy, job = strategy_from_args(args), job_from_args(args)
    recovering = recovery_requested(args)
    path, spec = _views_source(args)
    spark = get_spark(args.master)
    views = load_views(spark, path) if path is not None else generate_views(spark, spec)
    if recovering:
        return run_with_recovery(args, views, strategy, job, spark)
    result, _ = run_strategy(views, strategy, job, spark)
    if args.json:
        print(result.to_json())
    else:
        print(result.format_table())
    return 0
