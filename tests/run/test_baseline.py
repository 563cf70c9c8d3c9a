"""``conformance.run.baseline``: parse and validate, apply, update and write baselines of defect
signatures (pure, on hand-made run results; the CLI runs them on real runs in ``tests/cli/test_ci.py``).

The findings here carry the paths the checks give them (``conformance/checks/roundtrip.py``:
``roundtrip.text`` at ``$.text``, ``roundtrip.calls`` at ``$.tool_calls[n].name`` and
``$.tool_calls[*].id``), so their signatures are the ones a run writes."""

from __future__ import annotations

import os
import string
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.errors import UsageError
from conformance.run.baseline import (
    Baseline,
    BaselineEntry,
    Version1Entry,
    apply_baseline,
    baseline_case,
    current_failures,
    missing_reasons,
    new_defects_lines,
    parse_baseline,
    read_baseline,
    render_baseline,
    signature_problem,
    unmigrated,
    updated_entries,
    write_baseline,
)
from conformance.traffic.safe_yaml import load_yaml
from conformance.verdicts import CaseResult, CheckVerdict, Finding, FindingKind, RunResult, signature

CHECKS = ("roundtrip.calls", "roundtrip.text", "streaming.events")
STREAM = "acme::basic/get_time::stream"
NON_STREAM = "acme::basic/get_time::non_stream"

TEXT = Finding(check="roundtrip.text", message="text differs", path="$.text", expected="Hi", actual="", turn=0)
NAME = Finding(
    check="roundtrip.calls", message="the tool name differs", path="$.tool_calls[0].name", expected="a", actual="A"
)
IDS = Finding(
    check="roundtrip.calls", message="a tool-call id is empty", path="$.tool_calls[*].id", actual=[""], turn=0
)
TEXT_SIG = "roundtrip.text at $.text: string -> string"
NAME_SIG = "roundtrip.calls at $.tool_calls[*].name: string -> string"
IDS_SIG = "roundtrip.calls at $.tool_calls[*].id: none -> array"


def test_the_signatures_used_here_are_the_findings_signatures() -> None:
    assert [signature(f) for f in (TEXT, NAME, IDS)] == [TEXT_SIG, NAME_SIG, IDS_SIG]


def check(name: str, *findings: Finding, status: str | None = None) -> CheckVerdict:
    kinds = {f.kind for f in findings}
    return CheckVerdict(check=name, status=status or ("fail" if "defect" in kinds else "pass"), findings=findings)  # type: ignore[arg-type]


def case(mode: str, *checks: CheckVerdict, status: str | None = None, **fields: Any) -> CaseResult:
    worst = status or ("fail" if any(c.status == "fail" for c in checks) else "pass")
    return CaseResult(adapter="acme", scenario="basic/get_time", mode=mode, status=worst, checks=checks, **fields)  # type: ignore[arg-type]


def run(*cases: CaseResult) -> RunResult:
    return RunResult(suite_version="t", adapters=(), scenarios=(), cases=cases)


def baseline(*entries: dict[str, Any]) -> Baseline:
    return parse_baseline({"version": 2, "entries": list(entries)}, "bl.yaml", check_ids=CHECKS)


def entry(key: str, *signatures: str, reason: str = "ACME-1") -> dict[str, Any]:
    return {"case": key, "reason": reason, **({"signatures": list(signatures)} if signatures else {})}


# -- apply -----------------------------------------------------------------------------------------------


def test_a_check_whose_defects_are_all_listed_becomes_xfail_with_the_reason() -> None:
    result = run(case("stream", check("roundtrip.calls", NAME), check("roundtrip.text", TEXT)))
    applied = apply_baseline(result, baseline(entry(STREAM, NAME_SIG), entry(STREAM, TEXT_SIG, reason="ACME-2")))
    (only,) = applied.result.cases
    assert only.status == "xfail" and applied.baselined == 2 and applied.stale == () and applied.new == {}
    assert [(v.check, v.status, v.message) for v in only.checks] == [
        ("roundtrip.calls", "xfail", "baselined (bl.yaml): ACME-1"),
        ("roundtrip.text", "xfail", "baselined (bl.yaml): ACME-2"),
    ]


def test_a_new_defect_in_a_listed_check_still_fails_and_its_message_names_the_new_signature() -> None:
    """The whole point: once ``roundtrip.calls`` fails for a known reason, a second defect of the same
    check in the same case is not masked."""
    result = run(case("stream", check("roundtrip.calls", NAME, IDS), check("roundtrip.text", TEXT)))
    applied = apply_baseline(result, baseline(entry(STREAM, NAME_SIG, TEXT_SIG)))
    (only,) = applied.result.cases
    assert only.status == "fail" and applied.baselined == 1
    calls, text = only.checks
    assert calls.status == "fail" and calls.findings == (NAME, IDS)
    assert calls.message == f"new defect (not in baseline bl.yaml): {IDS_SIG}"
    assert text.status == "xfail"
    assert applied.new == {IDS_SIG: (STREAM,)}
    assert new_defects_lines(applied, "bl.yaml") == [
        f"new defect (not in baseline bl.yaml): {IDS_SIG} in 1 case: {STREAM}"
    ]


def test_a_failing_check_of_a_case_without_entries_names_its_signatures_too() -> None:
    result = run(
        case("stream", check("roundtrip.calls", NAME, IDS)),
        case("non_stream", check("roundtrip.calls", IDS)),
    )
    applied = apply_baseline(result, baseline(entry("other::basic/get_time::stream", NAME_SIG)))
    stream, non_stream = applied.result.cases
    assert stream.status == non_stream.status == "fail"
    assert stream.checks[0].message == f"new defects (not in baseline bl.yaml): {NAME_SIG}; {IDS_SIG}"
    assert applied.new == {NAME_SIG: (STREAM,), IDS_SIG: (STREAM, NON_STREAM)}


@pytest.mark.parametrize("kind", ["unasked", "note", "left"])
def test_only_defect_findings_need_a_signature(kind: FindingKind) -> None:
    other = Finding(check="roundtrip.calls", message="sent unasked", path="$.strict", actual=True, kind=kind)
    result = run(case("stream", check("roundtrip.calls", NAME, other)))
    (only,) = apply_baseline(result, baseline(entry(STREAM, NAME_SIG))).result.cases
    assert only.status == "xfail"
    passing = run(case("stream", check("roundtrip.calls", other, status="left" if kind == "left" else "pass")))
    assert apply_baseline(passing, baseline()).result == passing  # nothing fails: nothing to name


def test_an_erroring_case_is_baselined_by_an_entry_without_signatures() -> None:
    result = run(case("stream", status="error", message="the adapter raised KeyError: 'x'"))
    applied = apply_baseline(result, baseline(entry(STREAM, reason="ACME-3")))
    (only,) = applied.result.cases
    assert only.status == "xfail" and only.message == "baselined (bl.yaml): ACME-3 [the adapter raised KeyError: 'x']"
    assert applied.baselined == 1
    # a signature entry does not cover an error
    assert apply_baseline(result, baseline(entry(STREAM, NAME_SIG))).result.cases[0].status == "error"


def test_an_accepted_error_does_not_mask_a_new_defect_beside_it() -> None:
    crashed = CheckVerdict(check="recovery.internal", status="error", message="ValueError: boom")
    result = run(case("stream", check("roundtrip.calls", IDS), crashed, status="error"))
    (only,) = apply_baseline(result, baseline(entry(STREAM, reason="ACME-3"))).result.cases
    assert only.status == "fail"
    assert [v.status for v in only.checks] == ["fail", "xfail"]
    accepted = apply_baseline(result, baseline(entry(STREAM, reason="ACME-3"), entry(STREAM, IDS_SIG)))
    assert accepted.result.cases[0].status == "xfail" and accepted.baselined == 2


def test_a_signature_that_no_longer_appears_is_a_warning_or_stale_under_strict() -> None:
    entries = baseline(entry(STREAM, NAME_SIG, IDS_SIG), entry(NON_STREAM, NAME_SIG))
    result = run(
        case("stream", check("roundtrip.calls", NAME)),  # the ids are fixed: one signature is stale
        case("non_stream", check("roundtrip.calls")),  # all fixed: the check passes
    )
    lenient = apply_baseline(result, entries)
    assert [c.status for c in lenient.result.cases] == ["xfail", "pass"]
    assert lenient.stale == (
        f"{STREAM}: {IDS_SIG}: baselined in bl.yaml (ACME-1) but no longer found: delete it",
        f"{NON_STREAM}: {NAME_SIG}: baselined in bl.yaml (ACME-1) but no longer found: delete it",
    )
    strict = apply_baseline(result, entries, strict=True)
    assert [c.status for c in strict.result.cases] == ["stale", "stale"]
    assert strict.result.cases[0].checks[0].message == lenient.stale[0]
    # a new defect stays a FAIL (the worse) under strict, and its message keeps both lines
    worse = run(case("stream", check("roundtrip.calls", replace(NAME, actual=None))))
    (only,) = apply_baseline(worse, entries, strict=True).result.cases
    assert only.status == "fail" and only.checks[0].message.count("\n") == 2


def test_an_error_entry_of_a_case_that_no_longer_errors_is_stale() -> None:
    result = run(case("stream", check("roundtrip.calls")))
    entries = baseline(entry(STREAM, reason="ACME-3"))
    line = f"{STREAM}: baselined as an ERROR in bl.yaml (ACME-3) but no longer errors"
    assert apply_baseline(result, entries).stale == (line,)
    strict = apply_baseline(result, entries, strict=True).result.cases[0]
    assert (strict.status, strict.message) == ("stale", line)
    unsupported = run(case("stream", status="unsupported"))
    assert apply_baseline(unsupported, entries, strict=True).stale == ()


def test_a_case_whose_cassette_is_stale_did_not_run_so_its_error_entry_is_neither_stale_nor_dropped() -> None:
    # STALE without checks: the cassette was recorded from another version of the scenario (runner)
    stale_cassette = run(case("non_stream", status="stale", message="stale cassette c.yaml: re-record it with ..."))
    entries = baseline(entry(NON_STREAM, reason="ACME-3"))
    applied = apply_baseline(stale_cassette, entries, strict=True)
    assert applied.stale == () and applied.baselined == 0
    assert applied.result.cases == stale_cassette.cases  # still STALE: re-record it, no entry accepts that
    assert updated_entries(stale_cassette, entries) == list(entries.entries)


def test_entries_for_cases_or_checks_not_run_or_not_judged_are_ignored() -> None:
    crashed = CheckVerdict(check="streaming.events", status="error", message="boom")
    result = run(case("stream", check("roundtrip.calls", NAME), crashed, status="error"))
    applied = apply_baseline(
        result,
        baseline(
            entry("other::basic/get_time::stream", NAME_SIG),
            entry(STREAM, NAME_SIG, "roundtrip.text at $.text: string -> string"),  # roundtrip.text did not run
            entry(STREAM, "streaming.events at turn * events: array -> array"),  # it erred: cannot judge
        ),
        strict=True,
    )
    assert applied.stale == () and applied.baselined == 1
    assert [v.status for v in applied.result.cases[0].checks] == ["xfail", "error"]


def test_one_case_is_judged_as_the_whole_run_judges_it() -> None:
    result = run(
        case("stream", check("roundtrip.calls", NAME, IDS)),
        case("non_stream", check("roundtrip.calls")),
    )
    entries = baseline(entry(STREAM, NAME_SIG), entry(NON_STREAM, NAME_SIG))
    for strict in (False, True):
        whole = apply_baseline(result, entries, strict=strict).result.cases
        assert tuple(baseline_case(c, entries, strict=strict) for c in result.cases) == whole
    assert [c.status for c in apply_baseline(result, entries, strict=True).result.cases] == ["fail", "stale"]


# -- parse and validate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ([], "top level: expected a mapping"),
        ({"version": 2, "entries": [], "extra": 1}, "top level: unknown key 'extra'"),
        ({"version": 3, "entries": []}, "version: expected 2, got 3"),
        ({"version": "2", "entries": []}, "version: expected 2, got '2'"),
        ({"version": 2, "entries": {}}, "entries: expected a list"),
        ({"version": 2, "entries": ["x"]}, "entry 1: expected a mapping"),
        ({"version": 2, "entries": [{"case": 3}]}, "entry 1: 'case' must be a string"),
        ({"version": 2, "entries": [{"case": "a::b", "reason": "r"}]}, "adapter::scenario::mode"),
        ({"version": 2, "entries": [{"case": "a::b::streamed", "reason": "r"}]}, "mode non_stream or stream"),
        ({"version": 2, "entries": [{"case": "a::b::stream", "reason": ["r"]}]}, "'reason' must be a string"),
        (
            {"version": 2, "entries": [{"case": "a::b::stream", "why": "r"}]},
            "entry 1 (a::b::stream): unknown key 'why'",
        ),
        (
            {"version": 2, "entries": [{"case": "a::b::stream", "check": "roundtrip.text", "reason": "r"}]},
            "entry 1 (a::b::stream): 'check' is version 1; version 2 lists the accepted defects in 'signatures'",
        ),
        (
            {"version": 2, "entries": [entry("a::b::stream"), entry("a::b::stream", reason="s")]},
            "entry 2 (a::b::stream): the ERROR of this case is listed twice (also in entry 1)",
        ),
        (
            {"version": 2, "entries": [entry("a::b::stream", NAME_SIG, IDS_SIG), entry("a::b::stream", IDS_SIG)]},
            f"entry 2 (a::b::stream): signature {IDS_SIG!r} is listed twice (also in entry 1): delete one",
        ),
        (
            {"version": 2, "entries": [entry("a::b::stream", NAME_SIG, NAME_SIG)]},
            f"signature {NAME_SIG!r} is listed twice in this entry",
        ),
        (
            {"version": 2, "entries": [{**entry("a::b::stream"), "signatures": []}]},
            "'signatures' must be a list of signatures, one per line (- 'roundtrip.text at $.text: string -> "
            "string'), got an empty list; leave the key out for an entry that accepts the case being an ERROR",
        ),
        (
            {"version": 2, "entries": [{**entry("a::b::stream"), "signatures": TEXT_SIG}]},
            "'signatures' must be a list of signatures",
        ),
        ({"version": 2, "entries": [{**entry("a::b::stream"), "signatures": [3]}]}, "signature 1 must be a string"),
    ],
)
def test_a_malformed_baseline_is_a_usage_error_naming_file_and_entry(data: Any, needle: str) -> None:
    with pytest.raises(UsageError, match=r"^baseline bl\.yaml: ") as caught:
        parse_baseline(data, "bl.yaml", check_ids=CHECKS)
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "roundtrip.text $.text string",
            "not a signature: write '<check> at <path>: <expected-kind> -> <actual-kind>' (e.g. 'roundtrip.text at "
            "$.text: string -> string'), as report.json shows it in each finding's 'signature' and --update-baseline "
            "writes it",
        ),
        ("roundtrip.text at $.text: string", "not a signature"),
        ("roundtrip.text at $.text: string -> string\n", "not a signature"),
        (
            "roundtrip.txt at $.text: string -> string",
            "unknown check id 'roundtrip.txt' (did you mean 'roundtrip.text'? valid: roundtrip.calls, roundtrip.text, "
            "streaming.events)",
        ),
        (
            "roundtrip.text at $.text: str -> string",
            "unknown expected kind 'str' (did you mean 'string'? valid: none, boolean, number, string, object, array, "
            "other)",
        ),
        ("roundtrip.text at $.text: string -> dict", "unknown actual kind 'dict' (valid: none, boolean"),
        (
            "roundtrip.calls at $.tool_calls[0].name: string -> string",
            "the path '$.tool_calls[0].name' names an index, which a signature generalises: write "
            "'$.tool_calls[*].name'",
        ),
        ("streaming.events at turn 1 events: array -> array", "write 'turn * events'"),
        ("roundtrip.text at  $.text: string -> string", "the path ' $.text' has spaces around it: write '$.text'"),
    ],
)
def test_a_malformed_signature_says_what_to_write_instead(text: str, problem: str) -> None:
    assert problem in signature_problem(text, CHECKS)
    with pytest.raises(UsageError) as caught:
        baseline(entry("a::b::stream", TEXT_SIG, text))
    assert str(caught.value) == f"baseline bl.yaml: entry 1 (a::b::stream): signature 2 {text!r}: " + signature_problem(
        text, CHECKS
    )


_PATHS = st.text(alphabet=string.ascii_letters + string.digits + "$.[]'\"#*:->_ ()", max_size=40).filter(
    lambda p: p == p.strip()
)
_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3),
    st.dictionaries(st.text(max_size=2), st.none(), max_size=2), st.lists(st.none(), max_size=2), st.just(object()),
)  # fmt: skip


@given(check_id=st.sampled_from(CHECKS), path=_PATHS, expected=_VALUES, actual=_VALUES)
def test_every_signature_a_finding_has_is_a_valid_one(check_id: str, path: str, expected: Any, actual: Any) -> None:
    """The parser accepts exactly what ``conformance.verdicts.signature`` writes, whatever the path holds
    (a ``: `` or `` -> `` inside it, quotes, indices, numbered calls and turns)."""
    finding = Finding(check=check_id, message="m", path=path, expected=expected, actual=actual)
    assert signature_problem(signature(finding), CHECKS) == ""


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_an_entry_without_a_reason_is_refused_with_what_to_do(reason: str | None) -> None:
    item: dict[str, Any] = {"case": STREAM, "signatures": [NAME_SIG]}
    if reason is not None:
        item["reason"] = reason
    with pytest.raises(UsageError) as caught:
        baseline(item)
    assert str(caught.value).splitlines() == [
        "baseline bl.yaml: give each entry a reason (an issue link, the known bug), or fix the failure and delete "
        "the entry",
        "1 entry of 1 has none (and accepts nothing until then):",
        f"  entry 1 ({STREAM}): {NAME_SIG}",
    ]
    lenient = parse_baseline({"version": 2, "entries": [item]}, "bl.yaml", check_ids=CHECKS, require_reasons=False)
    assert lenient.entries == (BaselineEntry(case=STREAM, signatures=(NAME_SIG,)),)


def test_every_entry_without_a_reason_is_named_at_once() -> None:
    entries = [{"case": key, "signatures": [NAME_SIG]} for key in (NON_STREAM, STREAM)]
    with pytest.raises(UsageError) as caught:
        parse_baseline({"version": 2, "entries": entries}, "bl.yaml", check_ids=CHECKS)
    assert str(caught.value).splitlines()[1:] == [
        "2 entries of 2 have none (and accept nothing until then):",
        f"  entry 1 ({NON_STREAM}): {NAME_SIG}",
        f"  entry 2 ({STREAM}): {NAME_SIG}",
    ]


def test_many_entries_without_a_reason_are_a_short_list_not_one_long_line() -> None:
    """The refusal says what to do first, then one line per entry (case and signature), the first 20."""
    keys = [f"acme::basic/scenario_{n:02}::stream" for n in range(45)]
    entries: list[dict[str, Any]] = [{"case": key, "signatures": [NAME_SIG, TEXT_SIG]} for key in keys]
    entries.insert(3, {"case": NON_STREAM, "reason": "ACME-1", "signatures": [TEXT_SIG]})  # has one: not listed
    entries.append({"case": STREAM})  # an ERROR entry
    with pytest.raises(UsageError) as caught:
        parse_baseline({"version": 2, "entries": entries}, "bl.yaml", check_ids=CHECKS)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("baseline bl.yaml: give each entry a reason (an issue link, the known bug)")
    assert lines[1] == "46 entries of 47 have none (and accept nothing until then):"
    assert lines[2] == f"  entry 1 ({keys[0]}): {NAME_SIG} (and 1 more signature)"
    assert lines[5] == f"  entry 5 ({keys[3]}): {NAME_SIG} (and 1 more signature)"  # entry 4 has its reason
    assert len(lines) == 2 + 20 + 1 and lines[-1] == "  and 26 more"
    assert max(map(len, lines)) < 130  # one line of ~2,000 characters before
    assert missing_reasons("bl.yaml", [BaselineEntry(case=STREAM)]) == [
        lines[0],
        "1 entry of 1 has none (and accepts nothing until then):",
        f"  entry 1 ({STREAM}): its ERROR (no signatures)",
    ]
    assert missing_reasons("bl.yaml", [BaselineEntry(case=STREAM, reason="ACME-1")]) == []


def test_an_entry_without_a_reason_accepts_nothing() -> None:
    """Only --update-baseline holds one (it is refused when read): its failures still fail the run."""
    result = run(
        case("stream", check("roundtrip.calls", NAME)),
        case("non_stream", status="error", message="boom"),
    )
    unexplained = Baseline(
        source="bl.yaml", entries=(BaselineEntry(case=STREAM, signatures=(NAME_SIG,)), BaselineEntry(case=NON_STREAM))
    )
    applied = apply_baseline(result, unexplained)
    assert applied.baselined == 0 and applied.new == {} and applied.stale == ()
    stream, non_stream = applied.result.cases
    assert (stream.status, stream.checks[0].status) == ("fail", "fail")
    assert stream.checks[0].message == f"listed without a reason in baseline bl.yaml: {NAME_SIG}"
    assert (non_stream.status, non_stream.message) == ("error", "boom")


VERSION_1 = {
    "version": 1,
    "entries": [
        {"case": STREAM, "check": "roundtrip.calls", "reason": "ACME-1: misnames the tool"},
        {"case": NON_STREAM, "reason": "ACME-3: crashes"},
        {"case": "other::basic/get_time::stream", "check": "roundtrip.text", "reason": "ACME-4"},
        {"case": "other::basic/get_time::non_stream", "reason": "ACME-5"},
    ],
}


def test_a_version_1_baseline_is_refused_with_how_to_migrate_it() -> None:
    with pytest.raises(UsageError) as caught:
        parse_baseline(VERSION_1, "bl.yaml", check_ids=CHECKS)
    assert str(caught.value) == (
        "baseline bl.yaml: version: version 1 accepts whole failing checks, which would mask a new defect in a "
        "check that already fails; version 2 lists the signatures of the accepted defects. Migrate: run the same "
        "command once with --update-baseline (it writes the signatures this run finds, keeping each entry's reason "
        "for the signatures of its check), then read the reasons over"
    )
    migrating = parse_baseline(VERSION_1, "bl.yaml", check_ids=CHECKS, migrate=True)
    assert migrating.entries == ()
    assert migrating.version1[:2] == (
        Version1Entry(case=STREAM, check="roundtrip.calls", reason="ACME-1: misnames the tool"),
        Version1Entry(case=NON_STREAM, check=None, reason="ACME-3: crashes"),
    )
    # version 1's own rules still hold while migrating
    broken = {"version": 1, "entries": [{"case": STREAM, "check": "roundtrip.nope", "reason": "r"}]}
    with pytest.raises(UsageError, match=f"entry 1 \\({STREAM} roundtrip.nope\\): unknown check id 'roundtrip.nope'"):
        parse_baseline(broken, "bl.yaml", check_ids=CHECKS, migrate=True)


# -- update and the file ---------------------------------------------------------------------------------


def test_update_writes_signatures_keeps_reasons_and_loads_back(tmp_path: Path) -> None:
    result = run(
        case("stream", check("roundtrip.calls", NAME, IDS), check("roundtrip.text", TEXT), check("streaming.events")),
        case("non_stream", status="error", message="boom"),
    )
    assert current_failures(result) == [
        BaselineEntry(case=STREAM, signatures=(NAME_SIG, IDS_SIG, TEXT_SIG)),
        BaselineEntry(case=NON_STREAM),
    ]
    previous = baseline(
        entry(STREAM, NAME_SIG, "streaming.events at turn * events: array -> array", reason="ACME-1"),
        entry("other::basic/get_time::stream", NAME_SIG, reason="not run this time"),
    )
    entries = updated_entries(result, previous)
    path = tmp_path / "sub" / "bl.yaml"
    text = write_baseline(path, entries)
    assert path.read_text(encoding="utf-8") == text == render_baseline(entries)
    assert text.startswith("# conformance baseline")
    assert load_yaml(text) == {
        "version": 2,
        "entries": [
            {"case": NON_STREAM, "reason": ""},
            {"case": STREAM, "reason": "", "signatures": [IDS_SIG, TEXT_SIG]},  # new: a reason to fill in
            {"case": STREAM, "reason": "ACME-1", "signatures": [NAME_SIG]},  # kept; the fixed one is gone
            {"case": "other::basic/get_time::stream", "reason": "not run this time", "signatures": [NAME_SIG]},
        ],
    }
    with pytest.raises(UsageError, match=f"\n  entry 1 \\({NON_STREAM}\\): its ERROR"):
        read_baseline(path, check_ids=CHECKS)
    assert read_baseline(path, check_ids=CHECKS, require_reasons=False).entries == tuple(entries)
    # filled in, the update is a fixed point: the same file again
    filled = [BaselineEntry(case=e.case, signatures=e.signatures, reason=e.reason or "ACME-9") for e in entries]
    again = Baseline(source="bl.yaml", entries=tuple(filled))
    assert updated_entries(result, again) == filled
    assert apply_baseline(result, again).result.counts()["xfail"] == 2


def test_update_keeps_what_this_run_could_not_judge() -> None:
    only_calls = run(case("stream", check("roundtrip.calls", NAME)), case("non_stream", status="unsupported"))
    previous = baseline(
        entry(STREAM, NAME_SIG, TEXT_SIG, reason="ACME-1"),  # roundtrip.text did not run (--checks)
        entry(NON_STREAM, reason="ACME-3"),  # unsupported now: cannot tell whether it still errors
    )
    assert updated_entries(only_calls, previous) == list(previous.entries[::-1])


def test_update_migrates_a_version_1_baseline_carrying_reasons_per_check() -> None:
    result = run(
        case("stream", check("roundtrip.calls", NAME, IDS), check("roundtrip.text", TEXT)),
        case("non_stream", status="error", message="boom"),
    )
    old = parse_baseline(VERSION_1, "bl.yaml", check_ids=CHECKS, migrate=True)
    assert updated_entries(result, old) == [
        BaselineEntry(case=NON_STREAM, reason="ACME-3: crashes"),
        BaselineEntry(case=STREAM, signatures=(IDS_SIG, NAME_SIG), reason="ACME-1: misnames the tool"),
        BaselineEntry(case=STREAM, signatures=(TEXT_SIG,)),  # roundtrip.text was not in version 1: a new failure
        BaselineEntry(case="other::basic/get_time::non_stream", reason="ACME-5"),  # an ERROR entry needs no run
    ]
    # a failing check of a case this run did not run has no signatures to carry its reason to
    assert unmigrated(result, old) == [
        Version1Entry(case="other::basic/get_time::stream", check="roundtrip.text", reason="ACME-4")
    ]
    assert unmigrated(result, None) == []


def test_reading_a_missing_or_broken_file_says_which(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file \\(write one with --update-baseline\\)"):
        read_baseline(tmp_path / "none.yaml", check_ids=CHECKS)
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 2\nentries: [\n", encoding="utf-8")
    with pytest.raises(UsageError, match=f"baseline {broken}: not valid YAML"):
        read_baseline(broken, check_ids=CHECKS)
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(UsageError, match="cannot write it"):
        write_baseline(tmp_path / "dir.yaml", [])


def test_an_empty_file_is_an_empty_baseline(tmp_path: Path) -> None:
    empty = tmp_path / "bl.yaml"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    assert read_baseline(empty, check_ids=CHECKS) == Baseline(source=str(empty))


# -- hostile files and machines (issue 27, point 5) ---------------------------------------------------------


@pytest.mark.parametrize("migrate", [False, True])
@pytest.mark.parametrize("version", [True, False, 2.0, "2"])
def test_a_version_that_is_not_a_whole_number_is_refused(version: Any, migrate: bool) -> None:
    """``version: true`` was taken as 1 (``True == 1``), and ``--update-baseline`` migrated it."""
    with pytest.raises(UsageError, match=r"^baseline bl\.yaml: version: expected 2, got .*not a whole number"):
        parse_baseline({"version": version, "entries": []}, "bl.yaml", check_ids=CHECKS, migrate=migrate)


def test_version_true_in_a_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "bl.yaml"
    path.write_text("version: true\nentries: []\n", encoding="utf-8")
    with pytest.raises(UsageError, match=f"^baseline {path}: version: expected 2, got true \\(a boolean"):
        read_baseline(path, check_ids=CHECKS, require_reasons=False, migrate=True)


@pytest.mark.parametrize("depth", [150, 100_000])
def test_a_deeply_nested_baseline_is_refused_naming_the_file_and_the_limit(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "bl.yaml"
    path.write_text("version: 2\nentries: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=f"^baseline {path}: .*nesting_depth=100"):
        read_baseline(path, check_ids=CHECKS)


def test_a_baseline_larger_than_the_limit_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bl.yaml"
    path.write_text("version: 2\nentries: []\n" + "# padding\n" * 200, encoding="utf-8")
    monkeypatch.setenv("CONFORMANCE_LIMITS", "yaml_expanded_bytes=1K")
    with pytest.raises(UsageError, match=f"^baseline {path}: larger than 1024 bytes: .*yaml_expanded_bytes"):
        read_baseline(path, check_ids=CHECKS)


FULL_DISK = """
import resource, sys
from pathlib import Path
from conformance.errors import UsageError
from conformance.run.baseline import BaselineEntry, write_baseline

entries = [BaselineEntry(case=f"acme::basic/case_{n}::stream", reason=f"ACME-{n}") for n in range(2000)]
resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))  # a full disk: EFBIG past 16 KiB (SIGXFSZ ignored)
try:
    write_baseline(Path(sys.argv[1]), entries)
except UsageError as exc:
    print(exc)
"""


def test_a_full_disk_leaves_the_old_baseline_whole(tmp_path: Path) -> None:
    """The baseline was written in place: truncated mid-entry, and the next run accepted it."""
    path = tmp_path / "bl.yaml"
    old = render_baseline([BaselineEntry(case=f"acme::basic/old_{n}::stream", reason="ACME-1") for n in range(300)])
    path.write_text(old, encoding="utf-8")
    assert 8192 < len(old) < 16384
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"baseline {path}: cannot write it (File too large); the file is as it was: free space or fix the path, "
        "then run again with --update-baseline"
    )
    assert path.read_text(encoding="utf-8") == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bl.yaml"]


def test_a_link_at_the_baseline_path_is_followed_only_inside_its_folder(tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    planted = tmp_path / "planted.yaml"
    link = tmp_path / "ci" / "bl.yaml"
    link.symlink_to(planted)  # dangling, outside ci/
    with pytest.raises(UsageError, match=f"^baseline {link}: cannot write it \\({link}: a symbolic link to {planted}"):
        write_baseline(link, [BaselineEntry(case=STREAM, reason="ACME-1")])
    assert not planted.exists()
    link.unlink()
    link.symlink_to("baselines/main.yaml")  # inside ci/: followed, and the link kept
    write_baseline(link, [BaselineEntry(case=STREAM, reason="ACME-1")])
    assert link.is_symlink()
    assert read_baseline(tmp_path / "ci" / "baselines" / "main.yaml", check_ids=CHECKS).entries == (
        BaselineEntry(case=STREAM, reason="ACME-1"),
    )


def test_a_deviated_case_is_no_failure_to_baseline_and_keeps_what_it_could_not_judge() -> None:
    # the model did not do what the scenario asks (conformance.verdicts "deviated"): its script could not
    # be judged, so a listed signature of that check is neither stale nor dropped, and nothing is added
    deviated = check("roundtrip.calls", NAME, status="deviated")  # a finding of kind defect: the status decides
    result = run(case("stream", deviated, check("roundtrip.text"), status="deviated"))
    assert current_failures(result) == []
    assert updated_entries(result, None) == []
    entries = baseline(entry(STREAM, NAME_SIG, reason="ACME-1"))
    applied = apply_baseline(result, entries, strict=True)
    assert applied.stale == () and applied.baselined == 0 and applied.new == {}
    assert applied.result.cases == result.cases  # still deviated: never a failure, never accepted
    assert updated_entries(result, entries) == list(entries.entries)
