"""docs/selftest.md stays true: its table lists the bundled mutants in the command's order with their
bugs, each is caught where the table says (the mutant run on that scenario alone), the reference
adapters it names give the number of cases it says, none of them failing, and its commands parse."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

import pytest

from conformance.cli import build_parser
from conformance.run.runner import RunOptions
from conformance.selftest import (
    MUTANTS,
    default_cassette_dir,
    killed_by,
    mcp_scenarios,
    reference_cases,
    replayed_scenarios,
    run_mutant,
)
from conformance.verdicts import CaseResult

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "selftest.md").read_text(encoding="utf-8")
ROWS = re.findall(r"^\| `(\S+)` \| (.*) \| (\S+ @ (\S+) \[[^]]*\]) \|$", DOC, re.M)
SUMMARY = re.search(r"^(\d+) mutants: (\d+) killed; reference adapters \(([^)]*)\):\s+(\d+) cases, 0 false", DOC, re.M)


def test_the_table_lists_every_mutant_with_its_bug() -> None:
    assert [name for name, *_ in ROWS] == list(MUTANTS)
    assert [bug.replace("\\|", "|") for _, bug, *_ in ROWS] == [m.description for m in MUTANTS.values()]


@pytest.fixture(scope="module")
def references() -> tuple[dict[str, Mapping[tuple[str, str], CaseResult]], list[CaseResult]]:
    """Each reference adapter's cases on the self-test's scenarios, and those that failed."""
    options = RunOptions(cassette_dir=default_cassette_dir())
    cases: dict[str, Mapping[tuple[str, str], CaseResult]] = {}
    failed: list[CaseResult] = []
    for base in sorted({m.base for m in MUTANTS.values()}):
        # as the command runs them: a mutant's MCP scenarios (mcp_tag) for its base as well
        more = {s.id: s for m in MUTANTS.values() if m.base == base and m.mcp_tag for s in mcp_scenarios(m.mcp_tag)}
        cases[base], bad = reference_cases(base, [*replayed_scenarios(), *more.values()], options)
        failed += bad
    return cases, failed


def test_the_summary_is_the_reference_adapters_run(
    references: tuple[dict[str, Mapping[tuple[str, str], CaseResult]], list[CaseResult]],
) -> None:
    cases, failed = references
    assert SUMMARY is not None
    assert int(SUMMARY.group(1)) == int(SUMMARY.group(2)) == len(MUTANTS)
    assert SUMMARY.group(3).split(", ") == sorted(cases)
    assert int(SUMMARY.group(4)) == sum(len(c) for c in cases.values())
    assert failed == []


def test_each_mutant_is_caught_where_the_table_says(
    references: tuple[dict[str, Mapping[tuple[str, str], CaseResult]], list[CaseResult]],
) -> None:
    tagged = {s.id: s for m in MUTANTS.values() if m.mcp_tag for s in mcp_scenarios(m.mcp_tag)}
    scenarios = {**{s.id: s for s in replayed_scenarios()}, **tagged}
    options = RunOptions(cassette_dir=default_cassette_dir())
    wrong = []
    for name, _, caught, scenario in ROWS:
        mutant = MUTANTS[name]
        result = run_mutant(mutant, [scenarios[scenario]], options, references[0][mutant.base])
        first = killed_by(result.kills, limit=1)
        if first[:1] != [caught]:
            wrong.append(f"{name}: the table says {caught}, the run {first[:1]}")
    assert wrong == []


def test_its_commands_parse() -> None:
    lines = [line.partition("#")[0] for block in re.findall(r"```\n(.*?)```", DOC, re.S) for line in block.splitlines()]
    commands = [shlex.split(line) for line in lines if line.startswith("conformance ")]
    assert commands
    for words in commands:
        assert build_parser().parse_args(words[1:]).command == "selftest"
