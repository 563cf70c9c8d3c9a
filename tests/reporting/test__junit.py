"""render_junit: parses, counts right, one testcase per case, and keeps to the common JUnit XSD shape."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

from conformance.reporting import SEVERITY_WORDS, render_junit
from conformance.verdicts import CaseResult, CheckVerdict, Finding, RunResult
from tests.reporting._runs import HOSTILE

# The shape of Jenkins' junit-10.xsd (the schema CI servers validate against): attributes each
# element may carry, the ones it must, and the children a testcase may hold.
ALLOWED = {
    "testsuites": set("name time tests failures disabled errors".split()),
    "testsuite": set(
        "name tests failures errors time disabled skipped skips timestamp hostname id package assertions file skip log"
        " url".split()
    ),
    "testcase": set("name assertions time timestamp classname status class file line log group url".split()),
    "failure": {"type", "message"},
    "error": {"type", "message"},
    "skipped": {"type", "message"},
}
REQUIRED = {"testsuite": {"tests"}, "testcase": {"name"}}
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
    "failure": set(),
    "error": set(),
    "skipped": set(),
}


def parse(xml: str) -> ET.Element:
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(xml.encode("utf-8"))


def assert_xsd_shape(element: ET.Element) -> None:
    assert element.tag in ALLOWED, element.tag
    extra = set(element.attrib) - ALLOWED[element.tag]
    assert not extra, f"<{element.tag}> has attributes the XSD does not allow: {extra}"
    missing = REQUIRED.get(element.tag, set()) - set(element.attrib)
    assert not missing, f"<{element.tag}> lacks {missing}"
    for child in element:
        assert child.tag in CHILDREN[element.tag], f"<{child.tag}> inside <{element.tag}>"
        assert_xsd_shape(child)


def test_the_document_keeps_to_the_junit_xsd_shape(mixed_run: RunResult) -> None:
    root = parse(render_junit(mixed_run))
    assert root.tag == "testsuites"
    assert_xsd_shape(root)
    for element in root.iter():
        for name in ("tests", "failures", "errors", "skipped"):
            if name in element.attrib:
                assert element.attrib[name].isdigit()
        if "time" in element.attrib:
            assert float(element.attrib["time"]) >= 0


def test_one_testsuite_per_adapter_with_its_counts(mixed_run: RunResult) -> None:
    root = parse(render_junit(mixed_run))
    suites = {s.get("name"): s.attrib for s in root.findall("testsuite")}
    assert list(suites) == ["openai_chat", "anthropic", "gemini"]
    assert {k: suites["openai_chat"][k] for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5",
        "failures": "1",
        "errors": "0",
        "skipped": "0",
    }
    # anthropic: pass, error, xfail (skipped), stale (a failure: the declared gap must be removed)
    assert {k: suites["anthropic"][k] for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "4",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
    }
    assert {k: suites["gemini"][k] for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "3",
        "failures": "0",
        "errors": "0",
        "skipped": "2",
    }
    assert suites["openai_chat"]["time"] == "1.500"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("12", "2", "1")
    assert root.get("time") == "3.000"


def test_the_counts_agree_with_the_testcases(mixed_run: RunResult) -> None:
    root = parse(render_junit(mixed_run))
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "")) == len(cases)
        assert int(suite.get("failures", "")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors", "")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped", "")) == sum(c.find("skipped") is not None for c in cases)
        for case in cases:
            assert len(list(case)) <= 1  # one outcome element at most


def test_testcases_are_named_by_adapter_mode_and_scenario(mixed_run: RunResult) -> None:
    root = parse(render_junit(mixed_run))
    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(names) == 12
    assert names[:5] == [
        ("openai_chat.non_stream", "basic/get-time"),
        ("openai_chat.stream", "basic/get-time"),
        ("openai_chat.non_stream", "basic/parallel-calls"),
        ("openai_chat.stream", "basic/parallel-calls"),
        ("openai_chat.non_stream", "errors/rate-limit"),
    ]


def find_case(root: ET.Element, classname: str, name: str) -> ET.Element:
    found = [c for c in root.iter("testcase") if c.get("classname") == classname and c.get("name") == name]
    assert len(found) == 1
    return found[0]


def test_a_failure_carries_the_check_id_and_every_finding(mixed_run: RunResult) -> None:
    root = parse(render_junit(mixed_run))
    failure = find_case(root, "openai_chat.non_stream", "basic/parallel-calls").find("failure")
    assert failure is not None
    assert failure.get("type") == "translation.arguments"
    # the message: the case's worst defect in plain words, and how many more; the text: each defect, then
    # every check that did not pass (values escaped in the file, intact when parsed)
    message = failure.get("message", "")
    worst = message.partition("] ")[0].removeprefix("[")
    assert worst in SEVERITY_WORDS.values() and message.endswith("(and 1 more defect)"), message
    text = failure.text or ""
    said, _, listed = text.partition("\n\ntranslation.arguments fail\n")
    assert said.startswith(message.removesuffix(" (and 1 more defect)")) and said.count("\n[") == 1
    assert f"arguments differ {HOSTILE}" in said and listed
    assert f"[translation.arguments] at $.tool_calls[1].arguments.city (turn 0): arguments differ {HOSTILE}" in text
    assert '  actual:   {"city": "\\"Paris\\"", "n": 1}' in text
    assert "[translation.arguments] at $.tool_calls[2]: second call missing" in text
    assert "roundtrip.request fail\n[roundtrip.request] at $.id: id | pipe" in text
    assert "translation.tool_names" not in text  # a passing check is not listed


def test_stale_is_a_failure_error_has_the_traceback_and_skips_have_their_reason(mixed_run: RunResult) -> None:
    root = parse(render_junit(mixed_run))
    stale = find_case(root, "anthropic.stream", "basic/parallel-calls").find("failure")
    assert stale is not None
    assert stale.get("type") == "streaming.lifecycle"
    assert stale.get("message") == "stale: declared gap now passes"
    error = find_case(root, "anthropic.stream", "basic/get-time").find("error")
    assert error is not None
    assert error.get("message") == "adapter raised KeyError: 'index'"
    assert "Traceback (most recent call last):" in (error.text or "")
    assert (error.text or "").endswith("KeyError: 'index' <b>not bold</b>\\x1b[0m")  # no control character
    xfail = find_case(root, "anthropic.non_stream", "basic/parallel-calls").find("skipped")
    assert xfail is not None and xfail.get("message") == "xfail: known gap: tool_use blocks interleave"
    unsupported = find_case(root, "gemini.stream", "basic/parallel-calls").find("skipped")
    assert unsupported is not None
    assert unsupported.get("message") == "unsupported: requires parallel_tool_calls, which gemini does not declare"
    assert list(find_case(root, "gemini.non_stream", "basic/get-time")) == []


def test_control_characters_and_long_messages_stay_valid_xml() -> None:
    finding = Finding(check="c.x", message="bell\x07 " + "x" * 2000, expected="\x00", actual="\ufffe")
    case = CaseResult(
        adapter="a\x01",
        scenario="s",
        mode="stream",
        status="fail",
        checks=(CheckVerdict(check="c.x", status="fail", findings=(finding,)),),
    )
    run = RunResult(suite_version="0", adapters=(), scenarios=(), cases=(case,))
    root = parse(render_junit(run))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert root.find("testsuite") is not None and root.find("testsuite").get("name") == "a\\x01"  # type: ignore[union-attr]
    message = failure.get("message", "")
    assert "bell\\x07 xxx" in message and len(message) <= 500 and "…" in message  # cut, the control escaped
    assert '  expected: "\\u0000"' in (failure.text or "")  # JSON escapes it before XML sees it


def test_an_empty_run_is_an_empty_document(empty_run: RunResult) -> None:
    root = parse(render_junit(empty_run))
    assert root.findall("testsuite") == []
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("0", "0", "0")


def test_an_adapter_without_cases_still_gets_an_empty_suite(mixed_run: RunResult) -> None:
    run = dataclasses.replace(mixed_run, cases=tuple(c for c in mixed_run.cases if c.adapter != "gemini"))
    suites = parse(render_junit(run)).findall("testsuite")
    assert [(s.get("name"), s.get("tests")) for s in suites][-1] == ("gemini", "0")


def test_each_testsuite_names_the_suite_fingerprint_the_shard_and_its_model() -> None:
    from tests.reporting._runs import FINGERPRINT, suited_run

    root = ET.fromstring(render_junit(suited_run()))
    for suite in root.iter("testsuite"):
        properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert properties == {
            "suite_fingerprint": FINGERPRINT,
            "shard": "2/3",
            "model": f"{suite.get('name')}-model-1",
        }
