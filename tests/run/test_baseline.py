"""``conformance.run.baseline``: parse and validate, apply, update and write baselines (pure, on
hand-made run results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.errors import UsageError
from conformance.run.baseline import (
    Baseline,
    BaselineEntry,
    apply_baseline,
    baseline_case,
    current_failures,
    parse_baseline,
    read_baseline,
    render_baseline,
    updated_entries,
    write_baseline,
)
from conformance.traffic.safe_yaml import load_yaml
from conformance.verdicts import CaseResult, CheckVerdict, RunResult

CHECKS = ("roundtrip.calls", "roundtrip.text", "streaming.events")
_MODES = ("non_stream", "stream")


def case(mode: str, *checks: tuple[str, str], status: str | None = None, **fields: Any) -> CaseResult:
    verdicts = tuple(CheckVerdict(check=c, status=s) for c, s in checks)  # type: ignore[arg-type]
    worst = status or ("fail" if any(s == "fail" for _, s in checks) else "pass")
    return CaseResult(adapter="acme", scenario="basic/get_time", mode=mode, status=worst, checks=verdicts, **fields)  # type: ignore[arg-type]


def run(*cases: CaseResult) -> RunResult:
    return RunResult(suite_version="t", adapters=(), scenarios=(), cases=cases)


def baseline(*entries: dict[str, Any]) -> Baseline:
    return parse_baseline({"version": 1, "entries": list(entries)}, "bl.yaml", check_ids=CHECKS)


def test_a_listed_failure_becomes_xfail_with_the_reason_and_an_unlisted_one_still_fails() -> None:
    result = run(
        case("stream", ("roundtrip.calls", "fail"), ("roundtrip.text", "fail")),
        case("non_stream", ("roundtrip.calls", "fail")),
    )
    applied = apply_baseline(
        result, baseline({"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-1"})
    )
    stream, non_stream = applied.result.cases
    assert applied.baselined == 1 and applied.stale == ()
    assert stream.status == "fail"  # roundtrip.text is not listed: a new failure
    assert [(v.check, v.status) for v in stream.checks] == [("roundtrip.calls", "xfail"), ("roundtrip.text", "fail")]
    assert stream.checks[0].message == "baselined (bl.yaml): ACME-1"
    assert non_stream.status == "fail"  # same check, other mode: not listed
    both = baseline(
        {"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-1"},
        {"case": "acme::basic/get_time::stream", "check": "roundtrip.text", "reason": "ACME-2"},
    )
    assert apply_baseline(result, both).result.cases[0].status == "xfail"


def test_an_erroring_case_is_baselined_by_an_entry_without_check() -> None:
    result = run(case("stream", status="error", message="the adapter raised KeyError: 'x'"))
    applied = apply_baseline(result, baseline({"case": "acme::basic/get_time::stream", "reason": "ACME-3"}))
    (only,) = applied.result.cases
    assert only.status == "xfail" and only.message == "baselined (bl.yaml): ACME-3 [the adapter raised KeyError: 'x']"
    # a check entry does not cover an error
    listed = baseline({"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-3"})
    assert apply_baseline(result, listed).result.cases[0].status == "error"


def test_an_entry_that_passes_now_is_a_warning_or_stale_under_strict() -> None:
    result = run(case("stream", ("roundtrip.calls", "pass")))
    entries = baseline({"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-1"})
    lenient = apply_baseline(result, entries)
    assert lenient.result.cases[0].status == "pass"
    assert lenient.stale == (
        "acme::basic/get_time::stream roundtrip.calls: baselined in bl.yaml (ACME-1) but passes now: delete the entry",
    )
    strict = apply_baseline(result, entries, strict=True)
    assert strict.result.cases[0].status == "stale"
    assert strict.result.cases[0].checks[0].status == "stale"
    error_entry = baseline({"case": "acme::basic/get_time::stream", "reason": "ACME-3"})
    assert apply_baseline(result, error_entry, strict=True).result.cases[0].status == "stale"


def test_entries_for_cases_or_checks_not_run_are_ignored() -> None:
    result = run(case("stream", ("roundtrip.calls", "fail")))
    applied = apply_baseline(
        result,
        baseline(
            {"case": "other::basic/get_time::stream", "check": "roundtrip.calls", "reason": "r"},
            {"case": "acme::basic/get_time::stream", "check": "streaming.events", "reason": "r"},
        ),
        strict=True,
    )
    assert applied.result == result and applied.stale == () and applied.baselined == 0


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ([], "top level: expected a mapping"),
        ({"version": 1, "entries": [], "extra": 1}, "top level: unknown key 'extra'"),
        ({"version": 2, "entries": []}, "version: expected 1, got 2"),
        ({"version": 1, "entries": {}}, "entries: expected a list"),
        ({"version": 1, "entries": ["x"]}, "entry 1: expected a mapping"),
        ({"version": 1, "entries": [{"case": 3}]}, "entry 1: 'case' must be a string"),
        ({"version": 1, "entries": [{"case": "a::b", "reason": "r"}]}, "adapter::scenario::mode"),
        ({"version": 1, "entries": [{"case": "a::b::streamed", "reason": "r"}]}, "mode non_stream or stream"),
        (
            {"version": 1, "entries": [{"case": "a::b::stream", "check": "roundtrip.nope", "reason": "r"}]},
            "entry 1 (a::b::stream roundtrip.nope): unknown check id 'roundtrip.nope'",
        ),
        ({"version": 1, "entries": [{"case": "a::b::stream", "check": 1, "reason": "r"}]}, "'check' must be"),
        ({"version": 1, "entries": [{"case": "a::b::stream", "reason": ["r"]}]}, "'reason' must be a string"),
        ({"version": 1, "entries": [{"case": "a::b::stream", "why": "r"}]}, "unknown key 'why'"),
        (
            {
                "version": 1,
                "entries": [{"case": "a::b::stream", "reason": "r"}, {"case": "a::b::stream", "reason": "s"}],
            },
            "entry 2 (a::b::stream): listed twice",
        ),
    ],
)
def test_a_malformed_baseline_is_a_usage_error_naming_file_and_entry(data: Any, needle: str) -> None:
    with pytest.raises(UsageError, match=r"^baseline bl\.yaml: ") as caught:
        parse_baseline(data, "bl.yaml", check_ids=CHECKS)
    assert needle in str(caught.value)


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_an_entry_without_a_reason_is_refused_with_what_to_do(reason: str | None) -> None:
    entry: dict[str, Any] = {"case": "acme::basic/get_time::stream", "check": "roundtrip.calls"}
    if reason is not None:
        entry["reason"] = reason
    with pytest.raises(UsageError) as caught:
        baseline(entry)
    message = str(caught.value)
    assert message.startswith("baseline bl.yaml: entry 1 (acme::basic/get_time::stream roundtrip.calls): no reason")
    assert "fix the failure and delete the entry" in message
    lenient = parse_baseline({"version": 1, "entries": [entry]}, "bl.yaml", check_ids=CHECKS, require_reasons=False)
    assert lenient.entries == (BaselineEntry(case="acme::basic/get_time::stream", check="roundtrip.calls"),)


def test_update_writes_the_failures_keeps_reasons_and_loads_back(tmp_path: Path) -> None:
    result = run(
        case("stream", ("roundtrip.calls", "fail"), ("roundtrip.text", "fail"), ("streaming.events", "pass")),
        case("non_stream", status="error", message="boom"),
    )
    assert current_failures(result) == [
        BaselineEntry(case="acme::basic/get_time::stream", check="roundtrip.calls"),
        BaselineEntry(case="acme::basic/get_time::stream", check="roundtrip.text"),
        BaselineEntry(case="acme::basic/get_time::non_stream", check=None),
    ]
    previous = baseline(
        {"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-1"},
        {"case": "acme::basic/get_time::stream", "check": "streaming.events", "reason": "fixed since"},
        {"case": "other::basic/get_time::stream", "check": "roundtrip.calls", "reason": "not run this time"},
    )
    entries = updated_entries(result, previous)
    path = tmp_path / "sub" / "bl.yaml"
    text = write_baseline(path, entries)
    assert path.read_text(encoding="utf-8") == text == render_baseline(entries)
    assert text.startswith("# conformance baseline")
    assert load_yaml(text) == {
        "version": 1,
        "entries": [
            {"case": "acme::basic/get_time::non_stream", "reason": ""},
            {"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-1"},
            {"case": "acme::basic/get_time::stream", "check": "roundtrip.text", "reason": ""},
            {"case": "other::basic/get_time::stream", "check": "roundtrip.calls", "reason": "not run this time"},
        ],
    }
    with pytest.raises(UsageError, match="entry 1 \\(acme::basic/get_time::non_stream\\): no reason"):
        read_baseline(path, check_ids=CHECKS)
    assert read_baseline(path, check_ids=CHECKS, require_reasons=False).entries == tuple(entries)


def test_reading_a_missing_or_broken_file_says_which(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file \\(write one with --update-baseline\\)"):
        read_baseline(tmp_path / "none.yaml", check_ids=CHECKS)
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\nentries: [\n", encoding="utf-8")
    with pytest.raises(UsageError, match=f"baseline {broken}: not valid YAML"):
        read_baseline(broken, check_ids=CHECKS)


def test_one_case_is_judged_as_the_whole_run_judges_it() -> None:
    result = run(
        case("stream", ("roundtrip.calls", "fail")),
        case("non_stream", ("roundtrip.calls", "pass")),
    )
    entries = baseline(
        {"case": "acme::basic/get_time::stream", "check": "roundtrip.calls", "reason": "ACME-1"},
        {"case": "acme::basic/get_time::non_stream", "check": "roundtrip.calls", "reason": "ACME-1"},
    )
    for strict in (False, True):
        whole = apply_baseline(result, entries, strict=strict).result.cases
        assert tuple(baseline_case(c, entries, strict=strict) for c in result.cases) == whole
    assert [c.status for c in apply_baseline(result, entries, strict=True).result.cases] == ["xfail", "stale"]


def test_every_entry_without_a_reason_is_named_at_once() -> None:
    entries = [{"case": f"acme::basic/get_time::{mode}", "check": "roundtrip.calls"} for mode in _MODES]
    with pytest.raises(UsageError) as caught:
        parse_baseline({"version": 1, "entries": entries}, "bl.yaml", check_ids=CHECKS)
    assert str(caught.value).startswith(
        "baseline bl.yaml: entry 1 (acme::basic/get_time::non_stream roundtrip.calls): no reason given "
        "(and 1 more: entry 2 (acme::basic/get_time::stream roundtrip.calls)): "
    )
