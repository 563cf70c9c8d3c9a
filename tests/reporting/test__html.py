"""render_html: one self-contained, escaped page; the matrix, the cases, the provenance, read back as a tree."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest

from conformance.reporting import STATUS_COLOURS, build_report, render_html
from conformance.verdicts import AdapterInfo, CaseResult, CheckVerdict, Finding, RunResult
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
        ["fail", "pass", "xfail", "stale", "unsupported", "unsupported"],
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


def test_findings_table_shows_check_path_expected_actual_escaped(page: str) -> None:
    doc, _ = parse(page)
    case = failing_details(doc)
    tables = case.find_all("table")
    findings = tables[1]
    assert [th.text() for th in findings.find_all("th")] == ["check id", "path", "expected", "actual", "message"]
    rows = [[td.text() for td in tr.find_all("td")] for tr in findings.find("tbody").find_all("tr")]
    # the parser unescapes: what the reader sees is exactly the value as JSON
    assert rows[0] == [
        "translation.arguments",
        "$.tool_calls[1].arguments.city (turn 0)",
        json.dumps(HOSTILE, ensure_ascii=False),
        '{"city": "\\"Paris\\"", "n": 1}',
        f"arguments differ {HOSTILE}",
    ]
    assert rows[1][2:4] == ['{"name": "getTime"}', "null"]
    assert rows[2] == ["roundtrip.request", "$.id", '"a|b"', "2", "id | pipe"]
    checks = [[td.text() for td in tr.find_all("td")] for tr in tables[0].find("tbody").find_all("tr")]
    assert checks == [
        ["translation.tool_names", "pass", ""],
        ["translation.arguments", "fail", ""],
        ["roundtrip.request", "fail", ""],
    ]


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


def test_counts_tables(page: str) -> None:
    doc, _ = parse(page)
    section = next(s for s in doc.find_all("section") if s.attrs.get("id") == "counts")
    by_adapter = section.find_all("table")[0]
    rows = [[c.text() for c in tr.children if isinstance(c, Node)] for tr in by_adapter.find("tbody").find_all("tr")]
    assert rows[1] == ["anthropic", "4", "1", "1", "0", "1", "0", "1"]
    chips = doc.find("div", "chips")
    assert [c.text() for c in chips.find_all("span", "chip")] == [
        "pass6",
        "xfail1",
        "unsupported2",
        "stale1",
        "fail1",
        "error1",
    ]


def test_an_empty_run_says_so(empty_run: RunResult) -> None:
    doc, _ = parse(render_html(empty_run))
    assert "No cases were run." in doc.find("section").text()


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
