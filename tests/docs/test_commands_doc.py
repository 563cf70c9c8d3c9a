"""docs/commands.md: every ``conformance`` command it shows is one the command line takes (its
flags, choices and arguments, as its own parser reads them), and each command it names has a line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conformance.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")


def commands(text: str) -> list[str]:
    """The ``conformance`` lines of the page's code blocks, without their comments; ``[...]`` (an
    optional part) is taken as written and ``PATH...`` as one ``PATH``."""
    lines = [
        re.split(r"\s{2,}#", line)[0]
        for block in re.findall(r"```\n(.*?)```", text, re.S)
        for line in block.splitlines()
    ]
    return [re.sub(r"[\[\]]|\.\.\.", "", line).strip() for line in lines if line.startswith("conformance ")]


COMMANDS = commands(DOC)


def test_the_page_shows_a_line_for_every_command() -> None:
    subcommands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert {shlex.split(line)[1] for line in COMMANDS} == set(subcommands)


@pytest.mark.parametrize("line", COMMANDS)
def test_the_command_line_takes_it(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    words = shlex.split(line)
    try:
        args = build_parser().parse_args(words[1:])
    except SystemExit:
        pytest.fail(f"{line}: {capsys.readouterr().err}")
    assert args.command == words[1]


def test_optional_parts_and_comments_are_read_as_meant() -> None:
    text = '```\nconformance validate [PATH...]     # check\nconformance run -k "a or b"   # x #y\npytest\n```\n'
    assert commands(text) == ["conformance validate PATH", 'conformance run -k "a or b"']
