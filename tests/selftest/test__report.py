"""Tests for ``conformance.selftest._report``: the table (text and Markdown) and the
``conformance selftest`` command (exit codes, ``--markdown``, usage errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from conformance.selftest import (
    Kill,
    MutantResult,
    SelftestResult,
    harmless_copy,
    killed_by,
    table_markdown,
    table_text,
)
from conformance.verdicts import CaseResult, CheckVerdict


def _kill(check: str, scenario: str, mode: str) -> Kill:
    return Kill(check=check, scenario=scenario, mode=mode)  # type: ignore[arg-type]


def test_killed_by_groups_modes_and_cuts_the_tail() -> None:
    kills = [
        _kill("roundtrip.calls", "basic/parallel_calls", "non_stream"),
        _kill("roundtrip.calls", "basic/parallel_calls", "stream"),
        _kill("streaming.fold", "basic/parallel_calls", "stream"),
        _kill("roundtrip.calls", "names/dotted", "stream"),
        _kill("roundtrip.calls", "names/slash", "stream"),
    ]
    assert killed_by(kills) == [
        "roundtrip.calls @ basic/parallel_calls [non_stream, stream]",
        "streaming.fold @ basic/parallel_calls [stream]",
        "roundtrip.calls @ names/dotted [stream]",
        "+1 more",
    ]


def _result() -> SelftestResult:
    killed = harmless_copy("ollama")
    gap = type(killed)(**{**killed.__dict__, "bug": "needs_more", "gap": "a scenario with an unterminated last event"})
    survivor = type(killed)(**{**killed.__dict__, "bug": "sly", "description": "a | pipe"})
    false_failure = CaseResult(
        adapter="ollama",
        scenario="basic/no_tools",
        mode="stream",
        status="fail",
        checks=(CheckVerdict(check="roundtrip.text", status="fail"),),
    )
    return SelftestResult(
        mutants=(
            MutantResult(mutant=killed, kills=(_kill("recovery.provider_error", "errors/unavailable", "stream"),)),
            MutantResult(mutant=gap),
            MutantResult(mutant=survivor),
        ),
        references=("ollama",),
        reference_cases=118,
        false_failures=(false_failure,),
        duration=1.25,
    )


def test_table_text_has_one_row_per_mutant_then_false_failures_and_the_summary() -> None:
    lines = table_text(_result()).splitlines()
    assert [cell.strip() for cell in lines[0].split("|")] == ["mutant", "base", "bug", "killed by (check @ scenario)"]
    assert lines[2].startswith("ollama~identical_copy | ollama | identical_copy | ")
    assert "recovery.provider_error @ errors/unavailable [stream]" in lines[2]
    assert "not killed (known gap): needs a scenario with an unterminated last event" in lines[3]
    assert lines[4].endswith("NOT KILLED by any bundled scenario")
    assert lines[5] == "FALSE FAILURE ollama basic/no_tools [stream]: fail roundtrip.text"
    assert lines[6] == (
        "3 mutants: 1 killed, 1 known gaps, 1 survived; reference adapters (ollama): 118 cases, 1 false failures; 1.2 s"
    )


def test_table_markdown_escapes_pipes_and_names_the_source() -> None:
    text = table_markdown(_result())
    lines = text.splitlines()
    assert lines[0] == "| mutant | base | bug | killed by (check @ scenario) |"
    assert lines[2].startswith(
        "| `ollama~identical_copy` | ollama | No bug: the reference function itself. Source: (control) |"
    )
    assert "a \\| pipe" in lines[4]
    assert text.endswith("1.2 s\n")


def test_the_command_runs_chosen_mutants_and_writes_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "notes" / "table.md"
    code = main(["selftest", "--mutant", "ollama~busy_503_as_server", "--markdown", str(target)])
    out = capsys.readouterr().out
    assert "killed            ollama~busy_503_as_server" in out
    assert "recovery.provider_error @ errors/unavailable" in out
    assert "1 mutants: 1 killed" in out
    assert target.read_text("utf-8").startswith("| mutant | base | bug | killed by (check @ scenario) |")
    assert code in (0, 1)  # 1 only if another helper's scenario lacks cassettes (a false failure, printed)
    if code == 1:
        assert "FALSE FAILURE" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["selftest", "--mutant", "nope"], "no mutant matches 'nope'"),
        (["selftest", "--timeout", "0"], "--timeout must be positive"),
        (["selftest", "--cassette-dir", "/no/such/dir"], "--cassette-dir /no/such/dir is not a directory"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
