"""render_markdown: the summary, the matrix table and the findings tables, read back as tables."""

from __future__ import annotations

import dataclasses
import re

from conformance.reporting import render_html, render_markdown
from conformance.verdicts import AdapterInfo, RunResult, ScenarioInfo


def section(markdown: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = markdown.index(heading + "\n") + len(heading) + 1
    stop = re.compile(rf"^#{{1,{level}}} ", re.M).search(markdown, start)
    return markdown[start : stop.start() if stop else len(markdown)]


def split_row(line: str) -> list[str]:
    """The cells of a GFM table row (``\\|`` is a pipe inside a cell)."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line[1:-1])]


def tables(text: str) -> list[list[list[str]]]:
    """Every table in ``text``: rows of cells, without the delimiter row."""
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = split_row(line)
            if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def test_summary_counts_and_verdict(mixed_run: RunResult) -> None:
    markdown = render_markdown(mixed_run)
    assert markdown.startswith("# Conformance report\n")
    assert "\n**FAILED**: 1 error, 1 fail, 1 stale, 6 pass, 1 xfail, 2 unsupported\n" in markdown
    assert "worst case status **error** · 12 cases · 3 adapters · 3 scenarios" in markdown

    [statuses] = tables(section(markdown, "## Summary").split("### ")[0])
    assert statuses == [
        ["status", "cases"],
        ["pass", "6"],
        ["xfail", "1"],
        ["unsupported", "2"],
        ["left", "0"],
        ["deviated", "0"],
        ["stale", "1"],
        ["fail", "1"],
        ["error", "1"],
    ]
    [by_adapter] = tables(section(markdown, "### By adapter"))
    assert by_adapter[0] == [
        "adapter",
        "cases",
        "pass",
        "xfail",
        "unsupported",
        "left",
        "deviated",
        "stale",
        "fail",
        "error",
    ]
    assert by_adapter[2] == ["`anthropic`", "4", "1", "1", "0", "0", "0", "1", "0", "1"]
    [families] = tables(section(markdown, "### By check family"))
    assert families[3] == ["`translation`", "15", "14", "0", "0", "0", "0", "0", "1", "0"]


def test_a_run_whose_other_cases_are_unsupported_reads_passed(mixed_run: RunResult) -> None:
    kept = tuple(c for c in mixed_run.cases if c.status in ("pass", "unsupported"))
    markdown = render_markdown(dataclasses.replace(mixed_run, cases=kept))
    assert "\n**PASSED**: 6 pass, 2 unsupported\n" in markdown


def test_matrix_table_has_a_row_per_scenario_and_the_verdict_per_mode(mixed_run: RunResult) -> None:
    markdown = render_markdown(mixed_run)
    matrix_text = section(markdown, "## Matrix")
    assert "Each cell: non-stream / stream; — = not run." in matrix_text
    [matrix] = tables(matrix_text)
    assert matrix == [
        ["scenario", "`openai_chat`", "`anthropic`", "`gemini`"],
        ["`basic/get-time`", "pass / pass", "pass / **error**", "pass / —"],
        ["`basic/parallel-calls`", "**fail** / pass", "**xfail** / **stale**", "**unsupported** / **unsupported**"],
        ["`errors/rate-limit`", "pass / —", "— / —", "— / —"],
    ]


def test_every_case_that_did_not_pass_has_a_section_and_no_passing_case_does(mixed_run: RunResult) -> None:
    cases = section(render_markdown(mixed_run), "## Cases that did not pass")
    headings = re.findall(r"^### (.+)$", cases, re.M)
    assert headings == [
        "`anthropic/basic/get-time/stream`: error",
        "`openai_chat/basic/parallel-calls/non_stream`: fail",
        "`anthropic/basic/parallel-calls/non_stream`: xfail",
        "`anthropic/basic/parallel-calls/stream`: stale",
        "`gemini/basic/parallel-calls/non_stream`: unsupported",
        "`gemini/basic/parallel-calls/stream`: unsupported",
    ]


def test_findings_table_has_check_path_expected_actual(mixed_run: RunResult) -> None:
    markdown = render_markdown(mixed_run)
    failing = section(markdown, "### `openai_chat/basic/parallel-calls/non_stream`: fail")
    checks, findings = tables(failing)
    assert checks == [
        ["check", "status", "reason"],
        ["`translation.arguments`", "fail", ""],
        ["`roundtrip.request`", "fail", ""],
    ]
    assert findings[0] == ["check id", "path", "expected", "actual", "message"]
    assert findings[1][:4] == [
        "`translation.arguments`",
        "`$.tool_calls[1].arguments.city` (turn 0)",
        '`"<script>alert(\\"x\\")</script> & \'quoted\'"`',
        '`{"city": "\\"Paris\\"", "n": 1}`',
    ]
    # prose is escaped so that a renderer shows it as text, never as HTML
    assert findings[1][4] == "arguments differ \\<script\\>alert(\"x\")\\</script\\> \\& 'quoted'"
    assert findings[2][2:4] == ['`{"name": "getTime"}`', "`null`"]
    # a pipe is escaped (split_row reads \\| back as |) and the row keeps its five cells
    assert findings[3] == ["`roundtrip.request`", "`$.id`", '`"a|b"`', "`2`", "id | pipe"]
    assert '| `roundtrip.request` | `$.id` | `"a\\|b"` | `2` | id \\| pipe |' in failing
    assert "<script>" not in re.sub(r"`[^`]*`", "", markdown)  # raw only inside code spans


def test_an_error_shows_its_message_and_traceback_in_a_fence(mixed_run: RunResult) -> None:
    erroring = section(render_markdown(mixed_run), "### `anthropic/basic/get-time/stream`: error")
    assert "adapter raised KeyError: 'index'" in erroring
    fence = re.search(r"^```text\n(.*?)\n```$", erroring, re.M | re.S)
    assert fence is not None
    assert fence.group(1).splitlines()[-1] == "KeyError: 'index' <b>not bold</b>\\x1b[0m"


def test_a_traceback_holding_backticks_gets_a_longer_fence(mixed_run: RunResult) -> None:
    case = dataclasses.replace(mixed_run.cases[6], traceback="line one\n```\nline three")
    run = dataclasses.replace(mixed_run, cases=(*mixed_run.cases[:6], case, *mixed_run.cases[7:]))
    erroring = section(render_markdown(run), "### `anthropic/basic/get-time/stream`: error")
    assert "````text\nline one\n```\nline three\n````" in erroring


def test_reasons_of_unsupported_and_xfail_are_shown(mixed_run: RunResult) -> None:
    markdown = render_markdown(mixed_run)
    assert "requires parallel_tool_calls, which gemini does not declare" in section(
        markdown, "### `gemini/basic/parallel-calls/stream`: unsupported"
    )
    xfail = section(markdown, "### `anthropic/basic/parallel-calls/non_stream`: xfail")
    assert tables(xfail)[0][1] == ["`streaming.lifecycle`", "xfail", "known gap: tool_use blocks interleave"]


def test_provenance_table_lists_each_cassette(mixed_run: RunResult) -> None:
    [provenance] = tables(section(render_markdown(mixed_run), "## Provenance"))
    assert [row[0] for row in provenance[1:]] == [
        "`cassettes/anthropic/basic/get-time.yaml`",
        "`cassettes/openai_chat/basic/get-time.yaml`",
        "`cassettes/openai_chat/basic/parallel-calls.yaml`",
    ]
    assert provenance[1][1] == "unknown"
    assert "mode: `emulator`" in provenance[2][1]
    assert "token: `REDACTED`" in provenance[3][1]


def test_problems_and_an_all_pass_run(mixed_run: RunResult, empty_run: RunResult) -> None:
    passing = dataclasses.replace(
        mixed_run, cases=tuple(c for c in mixed_run.cases if c.status == "pass"), problems=("scenarios/x.yaml: bad",)
    )
    markdown = render_markdown(passing)
    assert section(markdown, "## Problems").strip() == "- scenarios/x.yaml: bad"
    assert section(markdown, "## Cases that did not pass").strip() == "None: every case passed."
    assert "No cases were run." in render_markdown(empty_run)


def test_a_rerun_command_goes_under_each_failing_case_only(mixed_run: RunResult) -> None:
    reruns = {
        f"{c.adapter}::{c.scenario}::{c.mode}": f"conformance run -k {c.adapter}-{c.mode}" for c in mixed_run.cases
    }
    markdown = render_markdown(mixed_run, reruns=reruns)
    shown = re.findall(r"```sh\n(.*)\n```", section(markdown, "## Cases that did not pass"))
    failing = [c for c in mixed_run.cases if c.status in ("fail", "error", "stale")]
    assert failing and len(shown) == len(failing)
    assert set(shown) == {reruns[f"{c.adapter}::{c.scenario}::{c.mode}"] for c in failing}
    assert render_markdown(mixed_run) == render_markdown(mixed_run, reruns={})
    assert "```sh" not in render_markdown(mixed_run)
    # each defect's evidence case is rerun under the defect too
    defects = section(markdown, "## Defects")
    assert set(re.findall(r"```sh\n(.*)\n```", defects)) <= set(shown)


def test_the_suite_fingerprint_the_shard_and_the_models_are_shown_briefly() -> None:
    from tests.reporting._runs import FINGERPRINT, suited_run

    text = render_markdown(suited_run())
    line = next(line for line in text.splitlines() if line.startswith("Suite fingerprint"))
    assert f"`{FINGERPRINT[:16]}` (checks v1, 3 scenarios)" in line
    assert "shard `2/3`" in line
    assert "model asked for: `openai_chat` `openai_chat-model-1`" in line


def test_one_of_a_kind_is_counted_in_the_singular() -> None:
    from tests.reporting._runs import _pass

    run = RunResult(
        suite_version="0.1.0",
        adapters=(AdapterInfo(name="acme", wire_format="openai_chat"),),
        scenarios=(ScenarioInfo(id="basic/get_time", behavior="b", source="s"),),
        cases=(_pass("acme", "basic/get_time", "non_stream"),),
    )
    markdown = render_markdown(run)
    assert "1 case · 1 adapter · 1 scenario" in markdown
    assert "1 adapters" not in markdown and "1 cases" not in markdown
    html = render_html(run)
    assert "<b>1</b> case · <b>1</b> adapter · <b>1</b> scenario" in html


def test_the_html_says_what_does_not_fail_a_run_in_the_number_it_takes() -> None:
    from tests.reporting._runs import _pass

    unsupported = dataclasses.replace(_pass("acme", "basic/get_time", "stream"), status="unsupported", checks=())
    run = RunResult(
        suite_version="0.1.0",
        adapters=(AdapterInfo(name="acme", wire_format="openai_chat"),),
        scenarios=(ScenarioInfo(id="basic/get_time", behavior="b", source="s"),),
        cases=(_pass("acme", "basic/get_time", "non_stream"), unsupported),
    )
    html = render_html(run)
    assert "It does not fail a run." in html and "Neither" not in html
