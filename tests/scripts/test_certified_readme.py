"""The certified libraries at a glance (issue 25, point 4): ``docs/certified/README.md`` fits one screen
and is what ``scripts/certify_libraries.py`` renders now from the committed reports (so it cannot go
stale); its library x wire matrix counts *defects* by severity, recomputed here from each report's
defects, not failing cases; every library has its worst-defect line; every page explains each of its
FAIL defects; ``index.html`` shows the same counts and, in headless Chromium, fits 1280 px with every
link resolving to a file."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, cast
from urllib.parse import unquote, urlsplit

import pytest

from conformance.reporting._data import Report, report_defects
from conformance.reporting._defects import SEVERITIES, SEVERITY_WORDS, defects_of

ROOT = Path(__file__).resolve().parents[2]
CERTIFIED = ROOT / "docs" / "certified"
RENDER = "python scripts/certify_libraries.py --render-only"
LINES = 50
"""One screen: a 50-row terminal (issue 19 asked for one screen with 8 Python libraries, 40 lines then;
issue 30's eight JavaScript libraries add a matrix row and a worst-defect line each: 48)."""
COLUMNS = 100

LETTERS = {"D": "loses_data", "M": "changes_meaning", "R": "rejected", "C": "left", "E": "erred"}
"""The legend, read independently of the script (``test_the_legend_names_every_letter`` ties the two)."""

LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(([^)\s]*)\)")


def readme() -> str:
    return (CERTIFIED / "README.md").read_text(encoding="utf-8")


def reports(script: ModuleType) -> Iterator[tuple[Any, str, Path, dict[str, Any]]]:
    """(library, label, folder, committed report) of every certification."""
    for lib in script.LIBRARIES:
        for label, folder in script.report_dirs(lib):
            if (folder / "report.json").is_file():
                yield lib, label, folder, json.loads((folder / "report.json").read_text(encoding="utf-8"))


def recomputed(script: ModuleType) -> dict[str, dict[str, Counter[str]]]:
    """page (relative to docs/certified/) -> wire -> severity -> defects, from each report's defects:
    a defect counts once on each wire of its adapters; cases that erred or went stale as ``erred``."""
    out: dict[str, dict[str, Counter[str]]] = {}
    for _lib, _label, folder, report in reports(script):
        wires = {a["name"]: a["wire_format"] for a in report["adapters"]}
        cells: dict[str, Counter[str]] = {wire: Counter() for wire in wires.values()}
        for defect in report_defects(cast(Report, report)):
            if defect["severity"] == "note":  # no defect of the library: its page lists it, the matrix does not
                continue
            for wire in {wires[a] for a in defect["adapters"]}:
                cells[wire][defect["severity"]] += 1
        for case in report["cases"]:
            if case["status"] in ("error", "stale"):
                cells[wires[case["adapter"]]]["erred"] += 1
        out[(folder / "report.md").relative_to(CERTIFIED).as_posix()] = cells
    return out


def parse_cell(text: str) -> Counter[str]:
    """``2D 1M 3C`` -> the counts by severity (``none``: none)."""
    if text == "none":
        return Counter()
    counts: Counter[str] = Counter()
    for part in text.split(" "):
        match = re.fullmatch(r"(\d+)([A-Z])", part)
        assert match is not None and match.group(2) in LETTERS, f"cell {text!r}: {part!r} is not a count and a letter"
        counts[LETTERS[match.group(2)]] = int(match.group(1))
    return counts


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def shown(markdown: str) -> str:
    """A line's text as GitHub shows it: links as their text, no emphasis, escapes read."""
    text = LINK.sub(lambda m: m.group(1), markdown)
    return re.sub(r"\\(.)", r"\1", text.replace("**", ""))


def matrix(text: str) -> dict[str, dict[str, tuple[str, str]]]:
    """README's matrix: page -> wire -> (cell text, link target); an uncertified wire is absent."""
    header, _rule, *body = table_lines(text)
    wires = cells(header)[1:]
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for line in body:
        first, *rest = cells(line)
        page_link = LINK.fullmatch(first)
        assert page_link is not None, line
        row = out.setdefault(page_link.group(2), {})
        for wire, cell in zip(wires, rest, strict=True):
            if cell == "—":
                continue
            link = LINK.fullmatch(cell)
            assert link is not None, f"{wire} of {first}: {cell!r} links nowhere"
            row[wire] = (link.group(1), link.group(2))
    return out


# -- the README ------------------------------------------------------------------------------------------


def test_the_readme_and_index_html_are_what_the_script_renders_from_the_committed_reports(script: ModuleType) -> None:
    assert readme() == script.readme(script.LIBRARIES), f"docs/certified/README.md is stale: run `{RENDER}`"
    page = (CERTIFIED / "index.html").read_text(encoding="utf-8")
    assert page == script.index_html(script.LIBRARIES), f"docs/certified/index.html is stale: run `{RENDER}`"


def test_the_readme_fits_one_screen() -> None:
    text = readme()
    assert len(text.splitlines()) <= LINES
    rows = [[shown(c) for c in cells(line)] for line in table_lines(text) if not line.startswith("|---")]
    widths = [max(len(row[n]) for row in rows) for n in range(len(rows[0]))]
    assert sum(widths) + 3 * len(widths) + 1 <= COLUMNS, widths  # every column as wide as its widest cell
    for line in text.splitlines():
        if line.startswith("- "):
            assert len(shown(line)) <= COLUMNS, shown(line)


def test_the_legend_names_every_letter(script: ModuleType) -> None:
    assert {mark: key for key, mark in script.MARKS.items()} == LETTERS
    for mark, key in LETTERS.items():
        assert f"**{mark}** {script.MARK_WORDS[key]}" in readme()


def test_the_matrix_counts_the_defects_of_each_report_by_wire(script: ModuleType) -> None:
    shown_cells = matrix(readme())
    expected = recomputed(script)
    assert set(shown_cells) == set(expected)
    for page, wires in expected.items():
        assert set(shown_cells[page]) == set(wires), page
        for wire, counts in wires.items():
            text, _link = shown_cells[page][wire]
            assert parse_cell(text) == +counts, (page, wire, text, dict(counts))


def test_the_committed_reports_carry_their_defects(script: ModuleType) -> None:
    """JSON readers get the defects (the "defects" key ``build_report`` writes), as computed from the cases."""
    for lib, label, _folder, report in reports(script):
        wires = {a["name"]: a["wire_format"] for a in report["adapters"]}
        assert report.get("defects") == defects_of(report["cases"], wires), (
            f"{lib.name} {label}: the report's defects are not its cases' (run `{RENDER}`)"
        )
        assert list(report).index("defects") == list(report).index("cases") - 1


def test_pydantic_ai_on_gemini_is_a_few_defects_not_a_hundred_failing_cases() -> None:
    """One mapping (Gemini's finish reason "tool_calls" read as "stop") fails most of pydantic-ai's Gemini
    cases: the cell counts it once, beside the few other defects there."""
    report = json.loads((CERTIFIED / "pydantic-ai" / "report.json").read_text(encoding="utf-8"))
    failing = [c for c in report["cases"] if c["adapter"] == "pydantic-ai/gemini" and c["status"] == "fail"]
    assert len(failing) > 100
    on_gemini = [d for d in report["defects"] if "pydantic-ai/gemini" in d["adapters"]]
    finish = [d for d in on_gemini if d["check"] == "roundtrip.finish_reason"]
    assert max(len(d["cases"]) for d in finish) > 100 and len(finish) <= 2
    text, link = matrix(readme())["pydantic-ai/report.md"]["gemini"]
    counts = parse_cell(text)
    assert counts == Counter(d["severity"] for d in on_gemini if d["severity"] != "note")
    assert sum(counts[s] for s in ("loses_data", "changes_meaning", "rejected")) < 5, text
    assert link.startswith("pydantic-ai/report.md#")


def test_every_library_has_its_worst_defect_line(script: ModuleType) -> None:
    lines = [line for line in readme().splitlines() if line.startswith("- **")]
    assert len(lines) == len(script.LIBRARIES)
    for lib, line in zip(script.LIBRARIES, lines, strict=True):
        defects = [
            (SEVERITIES.index(d["severity"]), -len(d["cases"]), n, d)
            for n, (other, _label, _folder, report) in enumerate(reports(script))
            if other is lib
            for d in report["defects"][:1]
        ]
        assert defects, lib.name
        worst = min(defects, key=lambda t: t[:3])[3]
        lead = f"- **{lib.name} {script.pinned_version(lib)}"
        assert line.startswith(lead) and f", {SEVERITY_WORDS[worst['severity']]}: [" in line, line
        link = LINK.search(line)
        assert link is not None, line
        sentence = shown(link.group(1))
        assert worst["sentence"].startswith(sentence.removesuffix("…")), (sentence, worst["sentence"])


def test_every_link_of_the_readme_resolves_to_a_file_and_a_heading_there(script: ModuleType) -> None:
    links = [target for _text, target in LINK.findall(readme())]
    assert len(links) > 20
    for target in links:
        path, _, anchor = target.partition("#")
        assert (CERTIFIED / path).is_file(), target
        if anchor:
            page = (CERTIFIED / path).read_text(encoding="utf-8")
            assert anchor in {a for _line, a in script.heading_anchors(page)}, target


def test_a_heading_anchor_is_githubs(script: ModuleType) -> None:
    """github-slugger: lower case, punctuation and symbols dropped, each space a hyphen, a repeat numbered."""
    page = "# Report\n\n### 1. Drops retry\\_after (2.0): `x.y` — é!\n\n```sh\n# not a heading\n```\n\n## Report\n"
    assert [a for _line, a in script.heading_anchors(page)] == ["report", "1-drops-retry_after-20-xy--é", "report-1"]


# -- the library pages -----------------------------------------------------------------------------------


def test_every_fail_defect_of_every_page_shows_why_it_is_one(script: ModuleType) -> None:
    missing: list[str] = []
    for lib, label, folder, report in reports(script):
        page = (folder / "report.md").read_text(encoding="utf-8")
        for defect in report["defects"]:
            if defect["kind"] != "defect":
                continue
            where = f"{lib.name}{'/' + label if label else ''}: {defect['signature']}"
            by_wire = script.reasons(lib, defect, report)
            missing += [f"{where} on {wire}" for wire, reason in by_wire.items() if reason is None]
            reason = script.defect_reason(lib, defect, report)
            assert reason is None or f"**Why this is a defect of the library:** {reason}\n" in page, (
                f"{where}: its page does not show its reason (run `{RENDER}`)"
            )
    assert not missing, "FAIL defects no DEFECTS entry explains:\n" + "\n".join(missing)


def test_the_pages_list_the_defects_before_the_cases() -> None:
    for path in sorted(CERTIFIED.rglob("report.md")):
        page = path.read_text(encoding="utf-8")
        assert 0 < page.index("\n## Defects\n") < page.index("\n## Summary\n"), path


# -- index.html ------------------------------------------------------------------------------------------


def test_index_html_is_self_contained_and_escaped(script: ModuleType, tmp_path: Path, monkeypatch: Any) -> None:
    page = (CERTIFIED / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and " src=" not in page and "url(" not in page and "@import" not in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not [h for h in re.findall(r'href="([^"]*)"', page) if re.match(r"[a-z]+:", h)]
    # a hostile sentence in a report stays text in both files
    hostile = '<script>alert("x")</script> & [link](javascript:x) | `tick`'
    lib = next(lib for lib in script.LIBRARIES if lib.name == "google-genai")
    report = json.loads((CERTIFIED / lib.name / "report.json").read_text(encoding="utf-8"))
    report["defects"][0]["sentence"] = hostile
    (tmp_path / lib.name).mkdir()
    (tmp_path / lib.name / "report.json").write_text(json.dumps(report), encoding="utf-8")
    monkeypatch.setattr(script, "CERTIFIED", tmp_path)
    html_page = script.index_html([lib])
    assert "<script>" not in html_page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp;" in html_page
    markdown = script.readme([lib])
    assert "<script>" not in markdown and "\\<script\\>" in markdown and "\\[link\\]" in markdown


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)"
)


@pytest.mark.browser
@needs_chromium
def test_in_chromium_index_html_fits_1280_px_links_to_files_and_counts_like_the_readme(script: ModuleType) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from screenshot_report import Browser
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert CHROMIUM is not None
    with Browser(CHROMIUM, size=(1280, 900)) as browser:
        browser.open((CERTIFIED / "index.html").as_uri())
        assert browser.evaluate("document.documentElement.scrollWidth") <= 1280
        assert browser.evaluate("document.querySelector('table.matrix').getBoundingClientRect().right") <= 1280
        hrefs = browser.evaluate("[...document.querySelectorAll('a')].map((a) => a.href)")
        grid = browser.evaluate(
            """[...document.querySelectorAll('table.matrix tbody tr')].map((tr) => [
                tr.querySelector('th a').getAttribute('href'),
                [...tr.querySelectorAll('td')].map((td) => [td.dataset.wire || '', td.innerText.trim()]),
            ])"""
        )
        wires = browser.evaluate(
            "[...document.querySelectorAll('table.matrix thead th')].slice(1).map((e) => e.innerText)"
        )
        assert not [m for m in browser.console if "Content Security Policy" in m], browser.console
    assert len(hrefs) > 20
    for href in hrefs:
        parts = urlsplit(href)
        assert parts.scheme == "file" and Path(unquote(parts.path)).is_file(), href
    from_readme = matrix(readme())
    expected = recomputed(script)
    assert [page for page, _ in grid] == list(from_readme) == list(expected)
    for page, tds in grid:
        shown_here = {wire: text for wire, text in tds if wire}
        assert [text for wire, text in tds if not wire] == ["—"] * (len(wires) - len(shown_here)), page
        assert shown_here == {wire: text for wire, (text, _link) in from_readme[page].items()}, page
        assert {wire: parse_cell(text) for wire, text in shown_here.items()} == {
            wire: +counts for wire, counts in expected[page].items()
        }, page


# -- certify renders the pages the same way --------------------------------------------------------------


def test_a_certify_run_renders_its_pages_as_render_only_does(
    script: ModuleType, tmp_path: Path, monkeypatch: Any
) -> None:
    """``certify`` writes report.json and a report.md that knows no reasons; the script renders the page
    again from the report, with the defects in the JSON and each FAIL defect's reason on the page."""
    lib = next(lib for lib in script.LIBRARIES if lib.name == "google-genai")
    committed = json.loads((CERTIFIED / lib.name / "report.json").read_text(encoding="utf-8"))
    made = {k: v for k, v in committed.items() if k != "defects"}
    commands: list[list[str]] = []

    def run(command: list[str], cwd: Path, env: Any = None) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        folder = Path(cwd) / command[command.index("--report-dir") + 1]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.json").write_text(json.dumps(made), encoding="utf-8")
        (folder / "report.md").write_text("# as certify wrote it\n", encoding="utf-8")
        return subprocess.CompletedProcess(command, 1)

    monkeypatch.setattr(script, "CERTIFIED", tmp_path)
    monkeypatch.setattr(script.subprocess, "run", run)
    assert script.certify(lib) == 1
    [command] = commands
    assert command[3:] == script.certify_arguments(lib, tmp_path / lib.name, ())
    written = json.loads((tmp_path / lib.name / "report.json").read_text(encoding="utf-8"))
    assert written == committed
    page = (tmp_path / lib.name / "report.md").read_text(encoding="utf-8")
    assert page == script.page(lib, tmp_path / lib.name, (), written)
    assert page.count("**Why this is a defect of the library:**") == sum(
        d["kind"] == "defect" for d in written["defects"]
    )


def test_the_rerun_commands_are_certifys(script: ModuleType) -> None:
    """The page's rerun command names the client as ``conformance certify`` does (its own words)."""
    from conformance.cli import build_parser
    from conformance.cli.plans import rerun_command
    from conformance.pipeline.targets import client_rerun_words, command_rerun_words

    for lib, label, folder, report in reports(script):
        added = next(a for lbl, _f, a in script.runs(lib) if lbl == label)
        arguments = script.certify_arguments(lib, folder, added)
        reruns = script.reruns_of(arguments, report)
        args = build_parser().parse_args(arguments)
        case = next((c for c in report["cases"] if c["status"] == "fail"), None)
        if case is None:  # a library without a FAIL (ai-sdk-anthropic): no rerun command on its page
            assert not reruns, lib.name
            continue
        where = SimpleNamespace(adapter=case["adapter"], scenario=case["scenario"], mode=case["mode"])
        if args.driver_command is not None:  # a JavaScript library's Node driver (certify --command)
            words = command_rerun_words(args.driver_command, case["adapter"])
            assert words[:3] == ["certify", "--command", f"node examples/clients/{lib.driver}"]
        else:
            words = client_rerun_words(args.client, case["adapter"], python=args.python, intercept=args.intercept)
        expected = rerun_command(args, where, words)
        assert reruns[f"{case['adapter']}::{case['scenario']}::{case['mode']}"] == expected
        assert f"```sh\n{expected}\n```" in (folder / "report.md").read_text(encoding="utf-8")
