"""``conformance.reporting._defects``: findings grouped into defects, each said once.

The rules are checked on small hand-made runs (each value chosen to make one rule decide); the real
mutants that the plain words are checked against are in test__words.py."""

from __future__ import annotations

from typing import Any

from conformance.reporting import build_report, defects_of
from conformance.reporting._defects import SEVERITIES
from conformance.verdicts import CaseResult, CheckVerdict, Finding, FindingKind, RunResult, Status


def finding(
    check: str, path: str, expected: Any, actual: Any, *, turn: int = 1, kind: FindingKind = "defect"
) -> Finding:
    return Finding(check=check, message="differs", path=path, expected=expected, actual=actual, turn=turn, kind=kind)


def case(
    scenario: str, mode: str, *found: Finding, status: Status = "fail", passing: tuple[str, ...] = ()
) -> CaseResult:
    checks: dict[str, list[Finding]] = {}
    for f in found:
        checks.setdefault(f.check, []).append(f)
    verdicts = [
        CheckVerdict(check=c, status="left" if all(f.kind == "left" for f in fs) else status, findings=tuple(fs))
        for c, fs in checks.items()
    ]
    verdicts += [CheckVerdict(check=c, status="pass") for c in passing]
    worst = "fail" if any(v.status == "fail" for v in verdicts) else ("left" if verdicts else "pass")
    return CaseResult(adapter="lib/openai_chat", scenario=scenario, mode=mode, status=worst, checks=tuple(verdicts))  # type: ignore[arg-type]


def defects(*cases: CaseResult) -> list[dict[str, Any]]:
    run = RunResult(suite_version="0", adapters=(), scenarios=(), cases=cases)
    return build_report(run)["defects"]  # type: ignore[return-value]


def test_one_signature_on_many_cases_is_one_defect_with_every_case() -> None:
    found = [
        case(f"s{n}", mode, finding("roundtrip.finish_reason", "$.finish_reason", "length", "stop", turn=0))
        for n in range(5)
        for mode in ("non_stream", "stream")
    ]
    [defect] = defects(*found)
    assert len(defect["cases"]) == 10 and defect["scenarios"] == [f"s{n}" for n in range(5)]
    assert defect["modes"] == ["non_stream", "stream"] and defect["restated"] == []
    assert defect["evidence"]["case"] == "lib/openai_chat/s0/non_stream"


def test_other_checks_restating_the_same_fact_are_listed_under_it() -> None:
    found = [
        case(
            f"s{n}",
            "non_stream",
            finding("client.call_ids", "$.messages[2].tool_call_id (call #0)", "call_1", [""]),
            finding("translation.request_shape", "$.messages[2]", "required", "{}"),
            finding("client.recorded_request", "$.messages[1].parts[0].call_id", "call_1", ""),
        )
        for n in range(4)
    ]
    [defect] = defects(*found)
    assert defect["check"] == "client.call_ids"  # the check that says the most names it
    assert sorted(r["check"] for r in defect["restated"]) == ["client.recorded_request", "translation.request_shape"]
    assert all(r["cases"] == 4 for r in defect["restated"])


def test_a_defect_on_every_turn_does_not_swallow_one_on_a_few() -> None:
    """A header wrong on every request and a field lost in two scenarios: two defects."""
    header = finding("client.request_headers", 'headers["x-timeout"]', None, "NOT_GIVEN")
    lost = finding("translation.wire_paths", "$.tools[0].strict", True, None)
    found = [case(f"s{n}", "non_stream", header, *([lost] if n < 2 else [])) for n in range(10)]
    got = defects(*found)
    assert sorted(d["check"] for d in got) == ["client.request_headers", "translation.wire_paths"]
    assert all(d["restated"] == [] for d in got)


def test_two_signatures_of_one_check_are_two_defects() -> None:
    a = finding("translation.wire_paths", "$.tools[0].strict", True, None)
    b = finding("translation.wire_paths", "$.tool_choice", "required", None)
    assert len(defects(case("s", "non_stream", a, b))) == 2


def test_a_defect_and_a_duty_left_to_the_caller_are_never_joined() -> None:
    defect = finding("roundtrip.calls", "$.tool_calls", ["a"], [])
    left = finding("translation.tool_names", "tools['a.b']", "^[a-z]+$", "a.b", kind="left")
    got = defects(case("s", "non_stream", defect, left))
    assert [(d["kind"], d["severity"]) for d in got] == [("defect", "loses_data"), ("left", "left")]


def test_severities_come_worst_first_then_by_cases() -> None:
    note = finding("client.recorded_request", "$.stream_options", None, True, kind="unasked")
    rejected = finding("translation.request_shape", "$.tools[0]", "required", "{}")
    meaning = finding("roundtrip.finish_reason", "$.finish_reason", "length", "stop", turn=0)
    lost = finding("roundtrip.calls", "$.tool_calls", ["a"], [], turn=2)
    got = defects(case("a", "non_stream", note, rejected), case("b", "stream", meaning, lost))
    order = [d["severity"] for d in got]
    assert order == sorted(order, key=SEVERITIES.index) == ["loses_data", "changes_meaning", "rejected", "note"]


def test_an_accepted_failure_is_not_a_defect() -> None:
    xfail = case("s", "non_stream", finding("roundtrip.calls", "$.tool_calls", ["a"], []), status="xfail")
    assert defects(xfail) == []


def test_defects_of_report_data_equal_the_reports() -> None:
    found = [case("s", "non_stream", finding("roundtrip.calls", "$.tool_calls", ["a"], []))]
    report = build_report(RunResult(suite_version="0", adapters=(), scenarios=(), cases=tuple(found)))
    assert defects_of(report["cases"]) == report["defects"]


def test_each_mapping_of_a_closed_vocabulary_is_a_defect_of_its_own() -> None:
    """``tool_calls`` read as ``stop`` and ``malformed_tool_call`` read as ``error`` share a signature
    (a string for a string at ``$.finish_reason``) but are two mappings to fix."""
    found = [
        case("a", "non_stream", finding("roundtrip.finish_reason", "$.finish_reason", "tool_calls", "stop", turn=0)),
        case("b", "non_stream", finding("roundtrip.finish_reason", "$.finish_reason", "tool_calls", "stop", turn=0)),
        case("c", "non_stream", finding("roundtrip.finish_reason", "$.finish_reason", "malformed_tool_call", "error")),
    ]
    got = defects(*found)
    assert [(len(d["cases"]), d["signature"]) for d in got] == [
        (2, "roundtrip.finish_reason at $.finish_reason: string -> string"),
        (1, "roundtrip.finish_reason at $.finish_reason: string -> string"),
    ]
    assert '"tool_calls"' in got[0]["sentence"] and '"malformed_tool_call"' in got[1]["sentence"]
