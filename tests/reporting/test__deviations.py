"""``conformance.reporting._deviations``: the cases in which the model deviated, listed apart from the
defects, with what the model did; and the report's shape of them in every format (issue 29: a
certification "lists server defects apart from model deviations")."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from typing import cast

import jsonschema

from conformance.reporting import (
    build_report,
    deviations_of,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    report_deviations,
    report_schema,
)
from conformance.reporting._data import Report
from conformance.reporting._format import FAILING_STATUSES, run_outcome
from conformance.verdicts import STATUS_ORDER, CaseResult, CheckVerdict
from tests.reporting._runs import (
    DEVIATION_TEXT,
    DEVIATION_TOOL,
    build_mixed_run,
    deviated_only_run,
    deviated_run,
)


def test_each_case_in_which_the_model_deviated_is_listed_with_what_it_did() -> None:
    report = build_report(deviated_run())
    assert report["deviations"] == [
        {
            "case": "llama/openai_chat/basic/get-weather/non_stream",
            "adapter": "llama/openai_chat",
            "scenario": "basic/get-weather",
            "mode": "non_stream",
            "status": "deviated",
            "checks": ["server.model"],
            "message": DEVIATION_TEXT,  # the case's and the check's message, "model deviated:" said once
        },
        {  # the model deviated and the answer was malformed: the case fails, its deviation is listed too
            "case": "llama/anthropic/basic/get-weather/stream",
            "adapter": "llama/anthropic",
            "scenario": "basic/get-weather",
            "mode": "stream",
            "status": "fail",
            "checks": ["server.model"],
            "message": DEVIATION_TOOL,  # no message on the check: its findings say it
        },
    ]


def test_a_report_written_before_deviations_were_kept_computes_them() -> None:
    report = build_report(deviated_run())
    older = cast(Report, {k: v for k, v in report.items() if k != "deviations"})
    assert report_deviations(older) == report["deviations"]


def test_a_whole_case_judged_deviated_is_listed_with_its_message() -> None:
    case = CaseResult(
        adapter="s/openai_chat", scenario="x/y", mode="stream", status="deviated", message="  no call\n at all "
    )
    run = dataclasses.replace(deviated_run(), cases=(case,))
    [deviation] = deviations_of(build_report(run)["cases"])
    assert deviation["checks"] == [] and deviation["message"] == "no call at all"


def test_no_other_status_is_a_deviation() -> None:
    assert build_report(build_mixed_run())["deviations"] == []
    others = [s for s in STATUS_ORDER if s != "deviated"]
    cases = tuple(
        CaseResult(
            adapter="a",
            scenario=f"s/{status}",
            mode="non_stream",
            status=status,
            checks=(CheckVerdict(check="roundtrip.calls", status=status, message="m"),),
        )
        for status in others
    )
    assert build_report(dataclasses.replace(deviated_run(), cases=cases))["deviations"] == []


def test_a_deviation_is_never_a_defect() -> None:
    defects = build_report(deviated_run())["defects"]
    # the deviated checks' findings are of kind "defect" on purpose: the status decides
    assert [d["check"] for d in defects] == ["server.arguments"]
    assert all("server.model" not in [r["check"] for r in d["restated"]] for d in defects)
    assert build_report(deviated_only_run())["defects"] == []


def test_deviated_is_counted_and_fails_nothing() -> None:
    report = build_report(deviated_only_run())
    summary = report["summary"]
    assert summary["statuses"]["deviated"] == 1 and summary["statuses"]["pass"] == 2
    assert summary["verdict"] == "deviated"
    assert summary["by_adapter"]["llama/openai_chat"]["statuses"]["deviated"] == 1
    deviated_checks = {**dict.fromkeys(STATUS_ORDER, 0), "pass": 5, "deviated": 1}  # 3 server.shape, 2 server.model
    assert summary["by_check_family"]["server"]["statuses"] == deviated_checks
    assert "deviated" not in FAILING_STATUSES
    tally = {"total": summary["cases"], "statuses": summary["statuses"]}
    assert run_outcome(tally).word == "passed"  # the exit code is 0 then too (FAILING_STATUSES)
    assert run_outcome(tally).counts == "2 pass, 1 deviated"
    whole = build_report(deviated_run())["summary"]
    assert whole["verdict"] == "fail"  # a malformed answer wins over a deviation
    assert run_outcome({"total": whole["cases"], "statuses": whole["statuses"]}).word == "failed"


def test_the_json_report_with_deviations_is_schema_valid() -> None:
    validator = jsonschema.Draft202012Validator(report_schema())
    for run in (deviated_run(), deviated_only_run()):
        document = json.loads(render_json(run))
        errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(document)]
        assert not errors
        assert document["deviations"] == build_report(run)["deviations"]
    assert "deviated" in report_schema()["$defs"]["status"]["enum"]
    assert report_schema()["$defs"]["status"]["enum"] == list(STATUS_ORDER)


def section(markdown: str, heading: str) -> str:
    start = markdown.index(heading + "\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end != -1 else None]


def test_the_markdown_report_lists_the_deviations_apart_from_the_defects() -> None:
    markdown = render_markdown(deviated_run())
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings[:3] == ["## Defects", "## Model deviations", "## Summary"]
    deviations = section(markdown, "## Model deviations")
    rows = [line for line in deviations.splitlines() if line.startswith("| ")]
    assert rows[0] == "| column | scenario | mode | status | what the model did |"
    assert rows[2].startswith("| `llama/openai_chat` | `basic/get-weather` | non-stream | **deviated** | ")
    assert rows[2].endswith(f"| {DEVIATION_TEXT} |")  # the model's words, as the check said them
    assert rows[3].startswith("| `llama/anthropic` | `basic/get-weather` | stream | **fail** | ")
    assert "instead of get_weather" in rows[3]
    defects = section(markdown, "## Defects")
    assert "1 defect" in defects and "server.model" not in defects and "get_time" not in defects
    only = render_markdown(deviated_only_run())
    assert "\n**PASSED**: 2 pass, 1 deviated\n" in only
    assert "None: no check found a defect." in only
    assert "## Model deviations" not in render_markdown(build_mixed_run())  # none: no section


def test_the_html_report_lists_the_deviations_in_their_colour_with_a_filter() -> None:
    page = render_html(deviated_run())
    assert ".st-deviated { background: #1b7c83; color: #ffffff; }" in page
    start = page.index('<section id="deviations">')
    assert page.index('<section id="defects">') < start < page.index('<section id="adapters">')
    table = page[start : page.index("</section>", start)]
    assert table.count("<tr class=") == 2
    assert 'href="#case-llama-openai_chat-basic-get-weather-non_stream"' in table
    assert '<span class="badge st-deviated">deviated</span>' in table and "instead of calling get_weather" in table
    assert '<input type="radio" name="show" id="show-deviated">' in page  # the verdict filter
    assert "body:has(#show-deviated:checked)" in page
    assert 'title="llama/openai_chat/basic/get-weather/non_stream: deviated">' in page  # the matrix cell
    only = render_html(deviated_only_run())
    assert "<b>deviated</b>: the model did not do what the scenario asks" in only  # the header's note
    assert 'id="deviations"' not in render_html(build_mixed_run())


def test_a_deviated_case_is_a_skipped_testcase_in_junit() -> None:
    root = ET.fromstring(render_junit(deviated_run()).encode("utf-8"))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    chat = suites["llama/openai_chat"]
    assert (chat.get("tests"), chat.get("failures"), chat.get("errors"), chat.get("skipped")) == ("2", "0", "0", "1")
    [skipped] = chat.iter("skipped")
    assert skipped.get("message") == f"model deviated: {DEVIATION_TEXT}"
    anthropic = suites["llama/anthropic"]
    assert (anthropic.get("failures"), anthropic.get("skipped")) == ("1", "0")  # the malformed answer fails
    [failure] = anthropic.iter("failure")
    assert failure.get("type") == "server.arguments"
