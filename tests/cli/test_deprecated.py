"""The shared helper for an old option spelling kept for one release."""

from __future__ import annotations

import argparse

import pytest

from skewlab.cli._deprecated import add_deprecated_alias


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skewlab thing")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--disk", default="ebs-article")
    group.add_argument("--fio")
    add_deprecated_alias(group, old="--profile", new="--disk", dest="disk")
    return parser


def test_the_old_spelling_sets_the_new_destination_and_prints_one_line(capsys):
    args = _parser().parse_args(["--profile", "local"])
    assert args.disk == "local"
    assert capsys.readouterr().err.splitlines() == [
        "skewlab thing: --profile is deprecated, use --disk "
        "(it will be removed in the next release)"
    ]


def test_the_new_spelling_and_the_default_print_nothing(capsys):
    assert _parser().parse_args(["--disk", "local"]).disk == "local"
    assert _parser().parse_args([]).disk == "ebs-article"
    assert capsys.readouterr().err == ""


def test_the_alias_is_hidden_from_help_and_keeps_the_group_exclusive(capsys):
    parser = _parser()
    assert "--profile" not in parser.format_help()
    with pytest.raises(SystemExit):
        parser.parse_args(["--profile", "local", "--fio", "x.json"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_alias_checks_its_value_as_the_new_option_does(capsys):
    parser = argparse.ArgumentParser(prog="skewlab bench")
    parser.add_argument("--size", choices=["tiny", "quick", "full"], default="quick")
    add_deprecated_alias(
        parser, old="--profile", new="--size", dest="size", choices=["tiny", "quick", "full"]
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["--profile", "huge"])
    assert "invalid choice: 'huge'" in capsys.readouterr().err
