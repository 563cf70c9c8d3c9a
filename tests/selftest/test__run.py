"""Tests for ``conformance.selftest._run``: a kill is a check that passes for the reference and
fails for the mutant; a harmless copy is reported as not killed; selection and the run's verdict."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from conformance.errors import UsageError
from conformance.scenarios.values import Scenario
from conformance.selftest import (
    MUTANTS,
    Kill,
    MutantResult,
    SelftestResult,
    default_cassette_dir,
    harmless_copy,
    replayed_scenarios,
    run_selftest,
    select_mutants,
)
from conformance.selftest._run import _kills
from conformance.verdicts import CaseResult, CheckVerdict, Finding, Status


def _case(status: Status, *checks: tuple[str, Status], message: str = "") -> CaseResult:
    verdicts = tuple(
        CheckVerdict(
            check=c,
            status=s,
            findings=(Finding(check=c, message="differs", path="$.x", expected=1, actual=2),) if s == "fail" else (),
        )
        for c, s in checks
    )
    return CaseResult(
        adapter="a~b", scenario="basic/single_call", mode="stream", status=status, checks=verdicts, message=message
    )


def test_a_check_that_passes_for_the_reference_and_fails_for_the_mutant_is_a_kill() -> None:
    reference = _case("pass", ("roundtrip.calls", "pass"), ("roundtrip.text", "pass"))
    mutant = _case("fail", ("roundtrip.calls", "fail"), ("roundtrip.text", "pass"))
    assert _kills(mutant, reference) == [
        Kill(
            check="roundtrip.calls",
            scenario="basic/single_call",
            mode="stream",
            message="$.x: differs (expected 1, actual 2)",
        )
    ]


def test_a_check_that_also_fails_for_the_reference_is_no_kill() -> None:
    reference = _case("fail", ("roundtrip.calls", "fail"), ("roundtrip.text", "pass"))
    mutant = _case("fail", ("roundtrip.calls", "fail"), ("roundtrip.text", "fail"))
    assert [k.check for k in _kills(mutant, reference)] == ["roundtrip.text"]


def test_a_case_the_reference_cannot_run_kills_nothing() -> None:
    reference = _case("error", message="missing cassette")
    assert _kills(_case("error", message="missing cassette"), reference) == []


def test_a_case_error_of_the_mutant_alone_is_a_kill_named_case_error() -> None:
    kills = _kills(
        _case("error", message="the adapter raised KeyError: 'x'"), _case("pass", ("roundtrip.calls", "pass"))
    )
    assert [(k.check, k.message) for k in kills] == [("case.error", "the adapter raised KeyError: 'x'")]


def test_a_passing_mutant_case_is_no_kill() -> None:
    assert _kills(_case("pass", ("roundtrip.calls", "pass")), _case("pass", ("roundtrip.calls", "pass"))) == []


def test_a_harmless_copy_is_reported_as_not_killed(scenarios: Sequence[Scenario]) -> None:
    result = run_selftest([harmless_copy("gemini")], scenarios=scenarios)
    (only,) = result.mutants
    assert only.status == "survived" and only.kills == () and only.cases > 0
    assert result.references == ("gemini",)
    assert not result.ok and result.exit_code == 1


def _result(*statuses: tuple[str | None, bool], false_failures: int = 0) -> SelftestResult:
    mutants = []
    for gap, killed in statuses:
        base = harmless_copy("ollama")
        mutant = base if gap is None else type(base)(**{**base.__dict__, "gap": gap})
        kills = (Kill(check="roundtrip.calls", scenario="s", mode="stream"),) if killed else ()
        mutants.append(MutantResult(mutant=mutant, kills=kills))
    failures = tuple(
        CaseResult(adapter="ollama", scenario="s", mode="stream", status="fail") for _ in range(false_failures)
    )
    return SelftestResult(
        mutants=tuple(mutants), references=("ollama",), reference_cases=1, false_failures=failures, duration=0.0
    )


def test_the_run_is_ok_when_every_mutant_is_killed_or_a_declared_gap() -> None:
    result = _result((None, True), ("needs scenario X", False))
    assert [m.status for m in result.mutants] == ["killed", "gap"]
    assert result.ok and result.exit_code == 0


@pytest.mark.parametrize(
    ("statuses", "false_failures", "why"),
    [
        (((None, False),), 0, "survived"),
        ((("needs scenario X", True),), 0, "stale"),
        (((None, True),), 1, "false failure"),
    ],
)
def test_the_run_fails_on_a_survivor_a_stale_gap_or_a_false_failure(
    statuses: tuple[tuple[str | None, bool], ...], false_failures: int, why: str
) -> None:
    result = _result(*statuses, false_failures=false_failures)
    assert not result.ok and result.exit_code == 1, why


def test_select_mutants_by_name_glob_or_base() -> None:
    assert [m.name for m in select_mutants(["gemini~names_not_mapped_back"])] == ["gemini~names_not_mapped_back"]
    assert {m.base for m in select_mutants(["ollama"])} == {"ollama"}
    assert {m.name for m in select_mutants(["*~names_not_mapped_back"])} == {
        "gemini~names_not_mapped_back",
        "ollama~names_not_mapped_back",
    }
    assert len(select_mutants()) == len(MUTANTS)


def test_select_mutants_names_the_known_ones_for_an_unknown_pattern() -> None:
    with pytest.raises(UsageError, match="no mutant matches 'nope'; known: openai_chat~merge_parallel_by_index"):
        select_mutants(["nope"])


def test_the_replayed_scenarios_are_the_bundled_ones_not_served_by_an_mcp_server() -> None:
    ids = {s.id for s in replayed_scenarios()}
    assert {"basic/single_call", "multi_turn/results_then_user_text", "streaming/name_repeated"} <= ids
    assert all(s.mcp is None for s in replayed_scenarios())
    assert not any(i.startswith("mcp/") for i in ids)


def test_the_default_cassettes_are_the_bundled_ones() -> None:
    assert (default_cassette_dir() / "openai_chat" / "basic" / "single_call.yaml").is_file()
