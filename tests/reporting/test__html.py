"""render_html: one self-contained, escaped page; the matrix, the cases, the provenance, read back as a tree."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import re
import shutil
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.cli import main
from conformance.reporting import (
    SEVERITIES,
    SEVERITY_WORDS,
    STATUS_COLOURS,
    build_report,
    render_html,
    write_each_report,
)
from conformance.reporting._format import defect_where
from conformance.reporting._html import OUTCOME_COLOURS, SEVERITY_COLOURS
from conformance.verdicts import AdapterInfo, CaseResult, CheckVerdict, Finding, RunResult
from tests.reporting import _runs
from tests.reporting._runs import HOSTILE, KEY, SECRET

VOID = {"meta", "col", "br", "img", "link", "input", "hr", "source", "wbr", "area", "base", "embed", "track"}


@dataclasses.dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = dataclasses.field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.walk() if n.tag == tag and (cls is None or cls in n.attrs.get("class", "").split())]

    def find(self, tag: str, cls: str | None = None) -> Node:
        found = self.find_all(tag, cls)
        assert found, f"no <{tag} class={cls}>"
        return found[0]


class TreeBuilder(HTMLParser):
    """A strict little DOM: every non-void element must be closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.doctype = ""

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> tuple[Node, str]:
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    return builder.root, builder.doctype


@pytest.fixture
def page(mixed_run: RunResult) -> str:
    return render_html(build_report(mixed_run, secrets=[SECRET]))


def cell_rows(doc: Node) -> list[list[tuple[str, str]]]:
    """The matrix body: per row, (class, text) of each mode cell."""
    table = doc.find("table", "matrix")
    body = table.find("tbody")
    return [[(td.attrs["class"], td.text()) for td in tr.find_all("td")] for tr in body.find_all("tr")]


# -- the document -----------------------------------------------------------------------------------------


def test_a_well_formed_page_with_a_header_and_no_date(page: str) -> None:
    doc, doctype = parse(page)
    assert doctype.lower() == "doctype html"
    assert doc.find("html").attrs["lang"] == "en"
    assert doc.find("meta").attrs == {"charset": "utf-8"}
    header = doc.find("header")
    assert header.find("h1").text() == "Conformance report"
    line = header.find("p", "meta").text()
    assert "suite 0.1.0" in line and "12 cases" in line and "3 adapters" in line and "3 scenarios" in line
    assert not re.search(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}", header.text())  # no date, no time of day
    assert doc.find("title").text() == "Conformance report: 0.1.0"


def test_the_page_is_self_contained(page: str) -> None:
    doc, _ = parse(page)
    assert not doc.find_all("script") and not doc.find_all("link") and not doc.find_all("img")
    assert not doc.find_all("iframe") and not doc.find_all("object") and not doc.find_all("embed")
    for node in doc.walk():
        for name in ("src", "href", "action", "srcset", "poster", "data"):
            value = node.attrs.get(name)
            if value is not None:
                assert not re.match(r"(?i)\s*(https?:|//|file:|data:|javascript:)", value), (node.tag, name, value)
    styles = doc.find_all("style")
    assert len(styles) == 1
    assert "url(" not in styles[0].text() and "@import" not in styles[0].text()
    csp = [m for m in doc.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert len(csp) == 1 and "default-src 'none'" in csp[0].attrs["content"]
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)


def test_every_link_points_at_an_element_of_the_page(page: str) -> None:
    doc, _ = parse(page)
    ids = [n.attrs["id"] for n in doc.walk() if "id" in n.attrs]
    assert len(ids) == len(set(ids)), "duplicate ids"
    hrefs = [n.attrs["href"] for n in doc.find_all("a")]
    assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs)


def test_rendering_is_deterministic(mixed_run: RunResult) -> None:
    assert render_html(mixed_run) == render_html(mixed_run)


# -- the matrix -------------------------------------------------------------------------------------------


def test_matrix_has_adapters_with_both_modes_and_a_row_per_scenario(page: str) -> None:
    doc, _ = parse(page)
    table = doc.find("table", "matrix")
    head_rows = table.find("thead").find_all("tr")
    assert [th.text() for th in head_rows[0].find_all("th")] == ["scenario", "openai_chat", "anthropic", "gemini"]
    assert [th.attrs.get("colspan") for th in head_rows[0].find_all("th", "adapter")] == ["2", "2", "2"]
    assert [th.text() for th in head_rows[1].find_all("th")] == ["non-stream", "stream"] * 3
    scenarios = [th.find("span", "id").text() for th in table.find("tbody").find_all("th", "scenario")]
    assert scenarios == ["basic/get-time", "basic/parallel-calls", "errors/rate-limit"]
    assert [[text for _, text in row] for row in cell_rows(doc)] == [
        ["pass", "pass", "pass", "error", "pass", "—"],
        ["fail", "pass", "xfail", "stale", "unsup.", "unsup."],  # the cell's title has the whole word
        ["pass", "—", "—", "—", "—", "—"],
    ]
    classes = [cls.split()[0] for row in cell_rows(doc) for cls, _ in row]
    assert classes[:6] == ["st-pass", "st-pass", "st-pass", "st-error", "st-pass", "none"]
    assert classes[6:12] == ["st-fail", "st-pass", "st-xfail", "st-stale", "st-unsupported", "st-unsupported"]


def test_each_matrix_cell_links_to_its_case(page: str) -> None:
    doc, _ = parse(page)
    body = doc.find("table", "matrix").find("tbody")
    fail_cell = body.find_all("tr")[1].find_all("td")[0]
    target = fail_cell.find("a").attrs["href"][1:]
    details = next(d for d in doc.find_all("details", "case") if any(n.attrs.get("id") == target for n in d.walk()))
    assert "openai_chat/basic/parallel-calls/non_stream" in details.find("summary").text()
    # the anchor is inside the <details>, so following the link opens it; a pass cell links into the pass list
    pass_target = body.find_all("tr")[0].find_all("td")[0].find("a").attrs["href"][1:]
    item = next(n for n in doc.walk() if n.attrs.get("id") == pass_target)
    assert item.tag == "li" and "openai_chat/basic/get-time/non_stream" in item.text()
    not_run = body.find_all("tr")[0].find_all("td")[5]
    assert not not_run.find_all("a") and not_run.attrs["title"] == "stream: not run"


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def luminance(colour: str) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_verdict_colours_follow_the_legend_and_stay_readable(page: str) -> None:
    hue = {status: rgb(bg) for status, (bg, _) in STATUS_COLOURS.items()}
    r, g, b = hue["pass"]
    assert g > r and g > b  # green
    r, g, b = hue["fail"]
    assert r > 2 * g and r > 2 * b  # red
    r, g, b = hue["error"]
    assert r > 2 * g and r > 2 * b and luminance(STATUS_COLOURS["error"][0]) < luminance(STATUS_COLOURS["fail"][0])
    r, g, b = hue["unsupported"]
    assert max(r, g, b) - min(r, g, b) < 32  # grey
    r, g, b = hue["xfail"]
    assert r > g > b and r > 200  # amber
    r, g, b = hue["stale"]
    assert r > g and b > g  # purple
    for status, (bg, fg) in STATUS_COLOURS.items():
        light, dark = sorted((luminance(bg), luminance(fg)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 4.5, status  # WCAG AA for normal text
        assert re.search(rf"\.st-{status} \{{ background: {bg}; color: {fg}; \}}", page)
    for word, (bg, fg) in OUTCOME_COLOURS.items():  # the headline: green passed, red failed, dark red incomplete
        light, dark = sorted((luminance(bg), luminance(fg)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 4.5, word
    assert rgb(OUTCOME_COLOURS["passed"][0])[1] > 2 * rgb(OUTCOME_COLOURS["passed"][0])[0]
    assert rgb(OUTCOME_COLOURS["failed"][0])[0] > 2 * rgb(OUTCOME_COLOURS["failed"][0])[1]
    assert list(SEVERITY_COLOURS) == list(SEVERITIES)
    for severity, (bg, fg) in SEVERITY_COLOURS.items():  # the defects' badges
        light, dark = sorted((luminance(bg), luminance(fg)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 4.5, severity


# -- the cases --------------------------------------------------------------------------------------------


def test_each_case_that_did_not_pass_has_its_details(page: str) -> None:
    doc, _ = parse(page)
    cases = next(s for s in doc.find_all("section") if s.attrs.get("id") == "cases")
    details = cases.find_all("details", "case")
    assert [d.find("summary").find("span", "badge").text() for d in details] == [
        "error",
        "fail",
        "xfail",
        "stale",
        "unsupported",
        "unsupported",
        "pass",
    ]
    assert "6 passing cases" in details[-1].find("summary").text()
    assert len(details[-1].find_all("li")) == 6


def failing_details(doc: Node) -> Node:
    return next(d for d in doc.find_all("details", "case") if "parallel-calls/non_stream" in d.find("summary").text())


def test_findings_show_check_path_and_expected_beside_actual_escaped(page: str) -> None:
    doc, _ = parse(page)
    case = failing_details(doc)
    findings = case.find_all("div", "finding")
    assert [f.find("p").text() for f in findings] == [
        f"translation.arguments at $.tool_calls[1].arguments.city (turn 0): arguments differ {HOSTILE}",
        "translation.arguments at $.tool_calls[2]: second call missing",
        "roundtrip.request at $.id: id | pipe",
    ]
    sides = [f.find("div", "sides") for f in findings]
    # expected (the scenario's value) on the left, actual (the adapter's) on the right, in one grid
    assert [[c.attrs["class"] for c in s.children if isinstance(c, Node)] for s in sides] == [
        ["expected", "actual"]
    ] * 3
    # the parser unescapes: what the reader sees is exactly the value as JSON
    first = sides[0]
    assert first.find("div", "expected").find("pre").text() == json.dumps(HOSTILE, ensure_ascii=False)
    assert first.find("div", "actual").find("pre").text() == '{"city": "\\"Paris\\"", "n": 1}'
    assert [s.find("div", "expected").find("pre").text() for s in sides[1:]] == ['{"name": "getTime"}', '"a|b"']
    assert [s.find("div", "actual").find("pre").text() for s in sides[1:]] == ["null", "2"]
    checks = [[td.text() for td in tr.find_all("td")] for tr in case.find("table").find("tbody").find_all("tr")]
    assert checks == [
        ["translation.tool_names", "pass", ""],
        ["translation.arguments", "fail", ""],
        ["roundtrip.request", "fail", ""],
    ]


def test_a_closed_case_shows_its_first_finding_or_its_message(page: str) -> None:
    doc, _ = parse(page)
    why = failing_details(doc).find("summary").find("span", "why").text()
    assert (
        why == f"translation.arguments at $.tool_calls[1].arguments.city (turn 0): arguments differ {HOSTILE} (+2 more)"
    )
    reasons = {
        d.find("summary").find("span", "mono").text(): d.find("summary").find("span", "why").text()
        for d in doc.find_all("details", "case")
        if d.find_all("span", "why")
    }
    assert reasons["anthropic/basic/get-time/stream"] == "adapter raised KeyError: 'index'"


def test_a_finding_without_a_message_shows_expected_and_actual_when_closed() -> None:
    finding = Finding(check="roundtrip.calls", message="", path="$.tool_calls", expected=["getTime"], actual=[])
    case = CaseResult(
        adapter="a",
        scenario="s",
        mode="non_stream",
        status="fail",
        checks=(CheckVerdict(check="roundtrip.calls", status="fail", findings=(finding,)),),
    )
    doc, _ = parse(render_html(RunResult(suite_version="1", adapters=(), scenarios=(), cases=(case,))))
    why = doc.find("details", "case").find("span", "why").text()
    assert why == 'roundtrip.calls at $.tool_calls: expected ["getTime"], actual []'


def test_a_rerun_command_is_shown_in_each_failing_case_only(mixed_run: RunResult) -> None:
    reruns = {
        f"{c.adapter}::{c.scenario}::{c.mode}": f"conformance run -k {c.adapter}-{c.mode}" for c in mixed_run.cases
    }
    doc, _ = parse(render_html(mixed_run, reruns=reruns))
    shown = {
        d.find("summary").find("span", "mono").text(): d.find("p", "rerun").find("code").text()
        for d in doc.find_all("details", "case")
        if d.find_all("p", "rerun")
    }
    failing = [c for c in mixed_run.cases if c.status in ("fail", "error", "stale")]
    assert shown == {f"{c.adapter}/{c.scenario}/{c.mode}": f"conformance run -k {c.adapter}-{c.mode}" for c in failing}
    assert render_html(mixed_run) == render_html(mixed_run, reruns={})


def test_written_reports_carry_the_rerun_commands(mixed_run: RunResult, tmp_path: Path) -> None:
    reruns = {"openai_chat::basic/parallel-calls::non_stream": "conformance run -k 'openai_chat::x'"}
    write_each_report(mixed_run, tmp_path, ("md", "html"), reruns=reruns)
    assert "conformance run -k &#x27;openai_chat::x&#x27;" in (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "conformance run -k 'openai_chat::x'" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_hostile_text_is_escaped_everywhere(page: str) -> None:
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;quoted&#x27;" in page
    assert "<b>not bold</b>" not in page and "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert "\x1b" not in page and "\\x1b[0m" in page


def test_hostile_names_in_attributes_stay_inside_their_quotes() -> None:
    name = '"><script>alert(1)</script><a href="https://evil.example/'
    case = CaseResult(
        adapter=name,
        scenario='s"1',
        mode="non_stream",
        status="fail",
        checks=(CheckVerdict(check="c.x", status="fail", findings=(Finding(check="c.x", message="m"),)),),
    )
    run = RunResult(suite_version="1", adapters=(AdapterInfo(name=name, wire_format="w"),), scenarios=(), cases=(case,))
    page = render_html(run)
    doc, _ = parse(page)
    assert "<script" not in page.lower() and 'href="https://evil' not in page
    cell = doc.find("table", "matrix").find("tbody").find("td")
    assert cell.attrs["title"] == f'{name}/s"1/non_stream: fail'
    anchor = cell.find("a").attrs["href"]
    assert re.fullmatch(r"#case-[A-Za-z0-9_.-]+", anchor)


def test_an_error_shows_its_traceback_and_a_failure_its_wire_exchange(page: str) -> None:
    doc, _ = parse(page)
    error = next(d for d in doc.find_all("details", "case") if "get-time/stream" in d.find("summary").text())
    assert "adapter raised KeyError" in error.find("summary").text()
    pres = [p.text() for p in error.find_all("pre")]
    assert any(p.startswith("Traceback (most recent call last):") and "<b>not bold</b>" in p for p in pres)
    exchange = failing_details(doc).find("details", "exchange")
    assert exchange.find("summary").text() == "Exchange 1: POST http://127.0.0.1/v1/chat/completions?key=REDACTED → 200"
    request, response = (p.text() for p in exchange.find_all("pre"))
    assert json.loads(request)["headers"] == {"authorization": "REDACTED", "content-type": "application/json"}
    assert '\n  "body": {\n    "model": "gpt-4o",' in request  # indented, body included
    assert json.loads(response)["choices"][0]["message"]["content"] == "REDACTED"
    assert '\n  "choices": [' in response  # a JSON string body is shown indented
    assert KEY not in page and SECRET not in page


def test_provenance_lists_cassettes_with_their_blocks(page: str) -> None:
    doc, _ = parse(page)
    section = next(s for s in doc.find_all("section") if s.attrs.get("id") == "provenance")
    rows = section.find("tbody").find_all("tr")
    assert [r.find("td").text() for r in rows] == [
        "cassettes/anthropic/basic/get-time.yaml",
        "cassettes/openai_chat/basic/get-time.yaml",
        "cassettes/openai_chat/basic/parallel-calls.yaml",
    ]
    assert "unknown" in rows[0].text()
    block = rows[1].find("dl", "prov")
    pairs = dict(
        zip([dt.text() for dt in block.find_all("dt")], [dd.text() for dd in block.find_all("dd")], strict=True)
    )
    assert pairs["mode"] == "emulator"
    assert pairs["clients"] == '{"python": "3.11.7", "httpx": "0.28.1"}'
    assert [a.text() for a in rows[1].find_all("a")] == [
        "openai_chat/basic/get-time/non_stream",
        "openai_chat/basic/get-time/stream",
    ]


def test_the_adapter_summary_follows_the_defects_with_counts_and_outcome(page: str) -> None:
    doc, _ = parse(page)
    body = doc.find("body")
    sections = [n.attrs.get("id") for n in body.children if isinstance(n, Node) and n.tag in ("section", "nav")]
    assert sections[:4] == ["defects", "adapters", "filters", "matrix"]
    table = doc.find("table", "adapters")
    rows = [[c.text() for c in tr.children if isinstance(c, Node)] for tr in table.find("tbody").find_all("tr")]
    # adapter, wire format, outcome, cases, pass, xfail, unsupported, left, deviated, stale, fail, error, share bar
    assert [r[:12] for r in rows] == [
        ["openai_chat", "openai-chat", "failed", "5", "4", "0", "0", "0", "0", "0", "1", "0"],
        ["anthropic", "anthropic-messages", "failed", "4", "1", "1", "0", "0", "0", "1", "0", "1"],
        ["gemini", "gemini", "passed", "3", "1", "0", "2", "0", "0", "0", "0", "0"],  # unsupported does not fail it
    ]
    chips = doc.find("div", "chips")
    assert [c.text() for c in chips.find_all("span", "chip")] == [
        "pass6",
        "xfail1",
        "unsupported2",
        "left0",
        "deviated0",
        "stale1",
        "fail1",
        "error1",
    ]


def outcome(run: RunResult, **kwargs: str) -> tuple[str, str]:
    headline = parse(render_html(build_report(run, **kwargs)))[0].find("div", "headline")  # type: ignore[arg-type]
    return headline.find("span", "outcome").text(), headline.find("span", "counts").text()


def test_the_headline_says_passed_when_only_unsupported_and_xfail_cases_did_not_pass(mixed_run: RunResult) -> None:
    kept = tuple(c for c in mixed_run.cases if c.status in ("pass", "unsupported", "xfail"))
    assert outcome(dataclasses.replace(mixed_run, cases=kept)) == ("passed", "6 pass, 1 xfail, 2 unsupported")
    assert outcome(mixed_run) == ("failed", "1 error, 1 fail, 1 stale, 6 pass, 1 xfail, 2 unsupported")
    stale_only = tuple(c for c in mixed_run.cases if c.status in ("pass", "stale"))
    assert outcome(dataclasses.replace(mixed_run, cases=stale_only))[0] == "failed"  # a stale gap fails a run
    problem = dataclasses.replace(mixed_run, cases=kept, problems=("scenarios/x.yaml: bad",))
    assert outcome(problem)[0] == "failed"
    assert outcome(dataclasses.replace(mixed_run, cases=kept), incomplete="interrupted")[0] == "incomplete"


def test_filters_name_each_present_verdict_and_every_adapter(page: str) -> None:
    doc, _ = parse(page)
    nav = doc.find("nav", "filters")
    radios = [i for i in nav.find_all("input") if i.attrs["type"] == "radio"]
    assert [r.attrs["id"] for r in radios] == [
        "show-all",
        "show-problems",
        "show-pass",
        "show-xfail",
        "show-unsupported",
        "show-stale",
        "show-fail",
        "show-error",
    ]
    assert "checked" in radios[0].attrs and all("checked" not in r.attrs for r in radios[1:])
    labels = {lab.attrs["for"]: lab.text() for lab in nav.find_all("label")}
    assert labels["show-problems"] == "not passing (6)" and labels["show-fail"] == "fail (1)"
    boxes = [i for i in nav.find_all("input") if i.attrs["type"] == "checkbox"]
    assert [labels[b.attrs["id"]] for b in boxes] == ["openai_chat", "anthropic", "gemini"]
    # each matrix cell and case carries its adapter's number, the rows their verdicts
    cells = doc.find("table", "matrix").find("tbody").find_all("tr")[1].find_all("td")
    assert [c.attrs["class"].split()[-1] for c in cells] == ["ad-0", "ad-0", "ad-1", "ad-1", "ad-2", "ad-2"]
    assert doc.find("table", "matrix").find("tbody").find_all("tr")[2].attrs["class"] == "row h-pass clean"
    style = doc.find("style").text()
    assert "body:has(#show-fail:checked) :is(details.case, li.case):not(.is-fail)" in style
    assert "body:has(#adapter-2:not(:checked)) .ad-2 { display: none; }" in style


def test_mode_counts_tables(page: str) -> None:
    doc, _ = parse(page)
    section = next(s for s in doc.find_all("section") if s.attrs.get("id") == "counts")
    by_mode = section.find_all("table")[0]
    rows = [[c.text() for c in tr.children if isinstance(c, Node)] for tr in by_mode.find("tbody").find_all("tr")]
    assert rows == [
        ["non-stream", "7", "4", "1", "1", "0", "0", "0", "1", "0"],
        ["stream", "5", "2", "0", "1", "0", "0", "1", "0", "1"],
    ]


def test_an_empty_run_says_so(empty_run: RunResult) -> None:
    doc, _ = parse(render_html(empty_run))
    sections = {s.attrs["id"]: s.text() for s in doc.find_all("section")}
    assert "No cases were run." in sections["matrix"]
    assert sections["defects"] == "DefectsNone: no check found a defect."


def test_the_runners_exchange_shape_is_shown_with_its_body_indented() -> None:
    # conformance.run.runner keeps an exchange as method, url, request (the JSON body), status, stream, response, error
    exchange = {
        "method": "POST",
        "url": "http://127.0.0.1:8080/v1/messages?key=abc123",
        "request": {"model": "claude", "tools": [{"name": "getTime"}]},
        "status": 400,
        "stream": False,
        "response": '{"type": "error", "error": {"type": "invalid_request_error", "message": "<bad>"}}',
        "error": None,
    }
    case = CaseResult(adapter="anthropic", scenario="s", mode="non_stream", status="error", exchanges=(exchange,))
    doc, _ = parse(render_html(RunResult(suite_version="1", adapters=(), scenarios=(), cases=(case,))))
    details = doc.find("details", "exchange")
    assert details.find("summary").text() == "Exchange 1: POST http://127.0.0.1:8080/v1/messages?key=REDACTED → 400"
    assert details.find("p", "meta").text() == "stream: false"  # a None error is left out
    assert [h.text() for h in details.find_all("h3")] == ["request", "response"]
    request, response = (p.text() for p in details.find_all("pre"))
    assert request == '{\n  "model": "claude",\n  "tools": [\n    {\n      "name": "getTime"\n    }\n  ]\n}'
    assert json.loads(response)["error"]["message"] == "<bad>"
    assert response.startswith('{\n  "type": "error",')


# -- the defects ------------------------------------------------------------------------------------------

BUGS = '''
"""openai_chat with one bug: its non-streamed decoder drops the tool calls."""
import dataclasses
from conformance.adapters import get_adapter
from conformance.model import ToolCall

REFERENCE = get_adapter("openai_chat")


def _no_calls(body, *, tools=()):
    response = REFERENCE.response_from_wire(body, tools=tools)
    return dataclasses.replace(response, parts=tuple(p for p in response.parts if not isinstance(p, ToolCall)))


NON_STREAM_BUG = dataclasses.replace(REFERENCE, name="chat_whole_bug", response_from_wire=_no_calls)
'''


@dataclasses.dataclass(frozen=True)
class RealRun:
    """A real run of ``arguments/*`` on the buggy adapter and the reference one, as the CLI wrote it."""

    report: dict[str, Any]
    page: str
    """The CLI's own report.html (with its rerun commands)."""


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealRun]:
    folder = tmp_path_factory.mktemp("real_run")
    (folder / "html_bugs.py").write_text(BUGS, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        patch.chdir(folder)
        argv = ["run", "--adapter", "html_bugs:NON_STREAM_BUG", "--adapter", "openai_chat"]
        argv += ["--scenarios", "arguments/*", "--report-dir", "reports", "--format", "json,html", "-j", "1"]
        assert main(argv) == 1
        yield RealRun(
            json.loads((folder / "reports" / "report.json").read_text(encoding="utf-8")),
            (folder / "reports" / "report.html").read_text(encoding="utf-8"),
        )
    sys.modules.pop("html_bugs", None)


def section(doc: Node, name: str) -> Node:
    return next(s for s in doc.find_all("section") if s.attrs.get("id") == name)


def defect_blocks(doc: Node) -> list[Node]:
    return section(doc, "defects").find_all("li", "defect")


def test_the_defects_come_first_each_with_its_sentence_severity_evidence_and_rerun(real_run: RealRun) -> None:
    defects = real_run.report["defects"]
    assert defects and defects[0]["check"] == "roundtrip.calls"  # the bug, found by the real run
    doc, _ = parse(real_run.page)
    body = [n.attrs.get("id") or n.tag for n in doc.find("body").children if isinstance(n, Node)]
    assert body.index("defects") == body.index("header") + 1 and body.index("defects") < body.index("matrix")

    tally = section(doc, "defects").find("p", "tally")
    assert tally.text().startswith(f"{len(defects)} defects: {len(defects)} {SEVERITY_WORDS['loses_data']}")
    blocks = defect_blocks(doc)
    assert len(blocks) == len(defects)
    cases = section(doc, "cases")
    for n, (block, defect) in enumerate(zip(blocks, defects, strict=True), 1):
        evidence = defect["evidence"]
        assert block.attrs["id"] == f"defect-{n}" and f"is-{defect['severity']}" in block.attrs["class"].split()
        heading = block.find("h3")
        assert heading.find("span", "sentence").text() == defect["sentence"]
        assert heading.find("span", "badge").text() == SEVERITY_WORDS[defect["severity"]]
        assert block.find("p", "meta").text() == f"{defect['check']} · {defect_where(defect)}"
        # the evidence: the case, linked to its details in the cases section; the place; the fragment
        shown = block.find("div", "evidence")
        link = shown.find("a")
        assert link.text() == evidence["case"]
        target = next(d for d in cases.find_all("details", "case") if link.attrs["href"][1:] in _ids(d))
        assert target.find("summary").find("span", "mono").text() == evidence["case"]
        assert f"turn {evidence['turn']}" in shown.text() and evidence["path"] in shown.text()
        assert evidence["cassette"] and evidence["cassette"] in shown.text()
        if evidence["shown"]:
            assert shown.find("pre").text() == "\n".join(evidence["shown"])
        # the rerun command of the evidence case, the same as in that case's own details
        rerun = shown.find("p", "rerun").find("code").text()
        assert f"-k {evidence['adapter']}::{evidence['scenario']}::{evidence['mode']}" in rerun
        assert rerun == target.find("p", "rerun").find("code").text()
        restated = block.find_all("p", "restated")
        assert [r["check"] for r in defect["restated"]] == [c.text() for r in restated for c in r.find_all("code")]
        scenarios = block.find("details", "scenarios")
        assert scenarios.find("summary").text() == f"{len(defect['scenarios'])} scenarios"
        assert [s.text() for s in scenarios.find_all("span", "mono")] == defect["scenarios"]
    assert blocks[0].find_all("p", "restated")  # streaming.fold says it again, from the other mode


def _ids(node: Node) -> set[str]:
    return {n.attrs["id"] for n in node.walk() if "id" in n.attrs}


def test_a_defect_says_what_to_do_and_why_when_known(real_run: RealRun) -> None:
    report = copy.deepcopy(real_run.report)
    report["defects"][0]["remedy"] = "Read every entry of message.tool_calls."
    reasons = {
        report["defects"][0]["signature"]: "The decoder reads `choices[0].message.content` only, see "
        "[the source](https://github.com/example/lib/blob/v1/chat.py#L42) or https://example.com/doc."
    }
    doc, _ = parse(render_html(report, explain=lambda d: reasons.get(d["signature"])))
    first, second = defect_blocks(doc)[:2]
    assert first.find("p", "todo").text() == "To do: Read every entry of message.tool_calls."
    why = first.find("p", "why")
    assert why.text() == (
        "Why this is a defect of the library: The decoder reads choices[0].message.content only, see "
        "the source or https://example.com/doc."
    )
    assert why.find("code").text() == "choices[0].message.content"
    assert [(a.attrs["href"], a.text()) for a in why.find_all("a")] == [
        ("https://github.com/example/lib/blob/v1/chat.py#L42", "the source"),
        ("https://example.com/doc", "https://example.com/doc"),  # the full stop ends the sentence, not the URL
    ]
    assert not second.find_all("p", "why") and not second.find_all("p", "todo")  # nothing known, nothing said
    assert render_html(report) == render_html(report, explain=lambda d: None)


def test_hostile_text_in_a_defect_is_escaped(real_run: RealRun) -> None:
    report = copy.deepcopy(real_run.report)
    defect = report["defects"][0]
    defect["sentence"] = f"{HOSTILE}\x1b[0m\x00"
    defect["remedy"] = HOSTILE
    defect["evidence"]["shown"] = [f"expected {HOSTILE}", "actual \x07</pre><script>"]
    defect["evidence"]["path"] = '$["<img src=x>"]'
    defect["scenarios"] = ['"><script>alert(1)</script>', *defect["scenarios"][1:]]
    defect["restated"] = [{"signature": "s", "check": "<i>c</i>", "message": HOSTILE, "cases": 1}]
    reason = f'{HOSTILE} `<b>code</b>` [x"y](javascript:alert(1)) https://e.example/?a="b<script>'
    page = render_html(
        report, explain=lambda d: reason, reruns={"chat_whole_bug::arguments/empty_string::non_stream": HOSTILE}
    )
    assert "<script" not in page.lower() and "<img" not in page and "<i>" not in page and "<b>code" not in page
    assert "\x1b" not in page and "\x00" not in page and "\x07" not in page
    doc, _ = parse(page)
    block = defect_blocks(doc)[0]
    assert block.find("span", "sentence").text() == f"{HOSTILE}\\x1b[0m\\x00"  # control characters shown as escapes
    assert block.find("pre").text() == f"expected {HOSTILE}\nactual \\x07</pre><script>"
    assert block.find("details", "scenarios").find("span", "mono").text() == '"><script>alert(1)</script>'
    assert block.find("p", "rerun").find("code").text() == HOSTILE
    assert block.find("p", "todo").text() == f"To do: {HOSTILE}"
    why = block.find("p", "why")
    assert why.find("code").text() == "<b>code</b>"
    assert [a.attrs["href"] for a in why.find_all("a")] == ["https://e.example/?a="]  # no javascript: link
    assert '[x"y](javascript:alert(1))' in why.text()


def test_no_defect_is_said_in_one_line(mixed_run: RunResult) -> None:
    kept = tuple(c for c in mixed_run.cases if c.status in ("pass", "unsupported"))
    doc, _ = parse(render_html(dataclasses.replace(mixed_run, cases=kept)))
    defects = section(doc, "defects")
    assert [n.tag for n in defects.children if isinstance(n, Node)] == ["h2", "p"]
    assert defects.find("p").text() == "None: no check found a defect."


def test_many_defects_show_ten_blocks_then_one_linked_line_each(real_run: RealRun) -> None:
    report = copy.deepcopy(real_run.report)
    first = report["defects"][0]
    report["defects"] = [
        {**first, "signature": f"sig {n}", "sentence": f"Defect number {n}.", "cases": first["cases"][: n % 5 + 1]}
        for n in range(1, 36)
    ]
    page = render_html(report)
    doc, _ = parse(page)
    assert [b.find("span", "sentence").text() for b in defect_blocks(doc)] == [
        f"Defect number {n}." for n in range(1, 11)
    ]
    more = section(doc, "defects").find("ol", "more-defects")
    assert more.attrs["start"] == "11"
    items = more.find_all("li")
    assert len(items) == 25
    ids = _ids(doc)
    for n, item in zip(range(11, 36), items, strict=True):
        assert item.attrs["id"] == f"defect-{n}"
        assert item.find("a").text() == f"Defect number {n}." and item.find("a").attrs["href"][1:] in ids
        assert item.find("span", "badge").text() == SEVERITY_WORDS["loses_data"]
        assert item.find("span", "meta").text() == f"{n % 5 + 1} case" + ("s" if n % 5 else "")
    test_every_link_points_at_an_element_of_the_page(page)


# -- in a real browser --------------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)"
)
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot_report.py"


def screenshot_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshot_report", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert CHROMIUM is not None
    with screenshot_script().Browser(CHROMIUM, size=(1400, 900)) as opened:
        yield opened


VISIBLE = "(sel) => [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length > 0)"


def shown(browser: Any, selector: str, what: str = "e.id || e.className") -> list[str]:
    """What the reader sees of the elements matching ``selector`` (those laid out: not display:none)."""
    return list(browser.evaluate(f"({VISIBLE})({json.dumps(selector)}).map((e) => {what})"))


def click(browser: Any, selector: str) -> None:
    browser.evaluate(f"document.querySelector({json.dumps(selector)}).click()")


@pytest.mark.browser
@needs_chromium
def test_in_chromium_the_headline_the_summary_and_the_filters(page: str, browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser.console.clear()
    browser.open(path.as_uri())
    assert browser.evaluate("document.querySelector('#outcome .outcome').innerText") == "FAILED"
    sections = browser.evaluate("[...document.body.children].map((e) => e.id || e.tagName)")
    assert sections[:5] == ["HEADER", "defects", "adapters", "filters", "matrix"]
    assert shown(browser, "table.adapters tbody th", "e.innerText") == ["openai_chat", "anthropic", "gemini"]
    every_case = shown(browser, "details.case > summary > .mono, li.case > .mono", "e.innerText")
    assert len(every_case) == 6 + 1 + 6  # six cases that did not pass, the pass group's title, six passing ones

    click(browser, 'label[for="show-fail"]')
    assert shown(browser, "details.case summary > .mono", "e.innerText") == [
        "openai_chat/basic/parallel-calls/non_stream"
    ]
    assert shown(browser, "#matrix tbody th .id", "e.innerText") == ["basic/parallel-calls"]
    click(browser, 'label[for="show-problems"]')
    assert len(shown(browser, "details.case")) == 6 and shown(browser, "li.case") == []
    click(browser, 'label[for="show-all"]')
    click(browser, 'label[for="adapter-1"]')  # anthropic off
    assert browser.evaluate("document.querySelector('#adapter-1').checked") is False
    assert shown(browser, "#matrix thead th.adapter", "e.innerText") == ["openai_chat", "gemini"]
    assert not [
        c for c in shown(browser, "details.case > summary > .mono, li.case > .mono", "e.innerText") if "anthropic" in c
    ]
    assert len(shown(browser, "#matrix tbody td")) == 4 * 3
    assert not [m for m in browser.console if "Content Security Policy" in m], browser.console


@pytest.mark.browser
@needs_chromium
def test_in_chromium_a_passing_run_with_unsupported_cases_reads_passed(
    mixed_run: RunResult, browser: Any, tmp_path: Path
) -> None:
    kept = tuple(c for c in mixed_run.cases if c.status in ("pass", "unsupported"))
    path = tmp_path / "report.html"
    path.write_text(render_html(dataclasses.replace(mixed_run, cases=kept)), encoding="utf-8")
    browser.open(path.as_uri())
    assert browser.evaluate("document.querySelector('#outcome .outcome').innerText") == "PASSED"
    colour = browser.evaluate("getComputedStyle(document.querySelector('#outcome .outcome')).backgroundColor")
    assert colour == "rgb(26, 127, 55)"  # green, not the grey of unsupported


LARGE_BYTES = 4_000_000
LARGE_LOAD_SECONDS = 10.0


@pytest.mark.browser
@needs_chromium
def test_a_2000_case_run_loads_and_keeps_its_header_and_scenario_column_in_view(browser: Any, tmp_path: Path) -> None:
    run = _runs.large_run()
    assert len(run.cases) == 2000
    page = render_html(run)
    assert len(page.encode()) < LARGE_BYTES
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    seconds = browser.open(path.as_uri())
    assert seconds < LARGE_LOAD_SECONDS
    # in a 1400 px window the eight adapters' sixteen columns fit beside the scenario column
    assert browser.evaluate("document.querySelector('.matrix-box').scrollWidth") <= 1400 - 2 * 24
    box = browser.evaluate(
        """(() => {
        const box = document.querySelector('.matrix-box');
        box.scrollIntoView();
        box.scrollTop = 3000; box.scrollLeft = 400;
        const top = box.getBoundingClientRect();
        const head = document.querySelector('#matrix thead th.adapter').getBoundingClientRect();
        const rows = [...document.querySelectorAll('#matrix tbody th.scenario')];
        const row = rows.find((r) => r.getBoundingClientRect().top > top.top + 80).getBoundingClientRect();
        return {boxTop: top.top, boxLeft: top.left, headTop: head.top, rowLeft: row.left, scrolled: box.scrollTop};
    })()"""
    )
    assert box["scrolled"] > 2000
    assert abs(box["headTop"] - box["boxTop"]) <= 2  # the header row stays at the top of the box
    assert abs(box["rowLeft"] - box["boxLeft"]) <= 2  # the scenario column stays at its left
    click(browser, 'label[for="show-fail"]')
    assert len(shown(browser, "details.case")) == 125
    assert shown(browser, "details.case .why", "e.innerText")[0] == (
        "family3.check_3 at $.tool_calls: the call is missing (+1 more)"
    )


@pytest.mark.browser
@needs_chromium
def test_in_chromium_at_1280x900_the_first_defect_is_on_the_first_screen_above_the_matrix(
    real_run: RealRun, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    path.write_text(real_run.page, encoding="utf-8")
    assert CHROMIUM is not None
    with screenshot_script().Browser(CHROMIUM, size=(1280, 900)) as small:
        small.open(path.as_uri())
        box = small.evaluate(
            """(() => {
            const top = (s) => document.querySelector(s).getBoundingClientRect();
            const sentence = top('#defects li.defect .sentence');
            return {innerHeight, outcome: top('#outcome').bottom, sentence: sentence.top, bottom: sentence.bottom,
                    text: document.querySelector('#defects li.defect .sentence').innerText, matrix: top('#matrix').top};
        })()"""
        )
    assert box["innerHeight"] == 900
    assert box["text"] == real_run.report["defects"][0]["sentence"]
    assert 0 <= box["outcome"] < box["sentence"] and box["bottom"] < 900  # the headline, then the defect, in view
    assert box["sentence"] < box["matrix"]


def test_the_suite_fingerprint_the_shard_and_the_models_are_in_the_header() -> None:
    header = render_html(_runs.suited_run()).split("</header>")[0]
    assert f'title="{_runs.FINGERPRINT}">{_runs.FINGERPRINT[:16]}</b> (checks v1, 3 scenarios)' in header
    assert 'shard <b class="mono">2/3</b>' in header
    assert "anthropic: anthropic-model-1" in header
