"""write_reports: the four files, atomically, and nothing else; unknown formats are refused; each format
is written on its own (one that fails costs only its file); an incomplete run says so in every file;
``check_report_dir`` refuses a folder the reports cannot go to before a run starts."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.errors import UsageError
from conformance.reporting import (
    FORMATS,
    check_report_dir,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    report_schema,
    write_each_report,
    write_reports,
)
from conformance.traffic.atomic import stale_temporaries
from conformance.verdicts import RunResult
from tests.reporting._runs import KEY, SECRET


def test_writes_the_four_reports(mixed_run: RunResult, tmp_path: Path) -> None:
    target = tmp_path / "reports" / "run-1"  # created when missing
    paths = write_reports(mixed_run, target)
    assert paths == [target / "report.json", target / "report.md", target / "report.html", target / "junit.xml"]
    assert sorted(p.name for p in target.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    assert (target / "report.json").read_text(encoding="utf-8") == render_json(mixed_run)
    assert (target / "report.md").read_text(encoding="utf-8") == render_markdown(mixed_run)
    assert (target / "report.html").read_text(encoding="utf-8") == render_html(mixed_run)
    assert (target / "junit.xml").read_text(encoding="utf-8") == render_junit(mixed_run)
    assert json.loads((target / "report.json").read_bytes())["summary"]["cases"] == 12
    assert ET.parse(target / "junit.xml").getroot().tag == "testsuites"
    for path in paths:
        assert stale_temporaries(path) == []


def test_writes_only_the_formats_asked_in_their_order(mixed_run: RunResult, tmp_path: Path) -> None:
    assert write_reports(mixed_run, tmp_path, formats=("junit", "json", "junit")) == [
        tmp_path / "junit.xml",
        tmp_path / "report.json",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.json"]


def test_replaces_an_older_report(mixed_run: RunResult, empty_run: RunResult, tmp_path: Path) -> None:
    write_reports(mixed_run, tmp_path, formats=("json",))
    write_reports(empty_run, tmp_path, formats=("json",))
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["cases"] == []


def test_an_unknown_format_is_refused_before_anything_is_written(mixed_run: RunResult, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"unknown report format 'pdf': choose from json, md, html, junit"):
        write_reports(mixed_run, tmp_path / "out", formats=("json", "pdf"))
    assert not (tmp_path / "out").exists()


def test_named_secrets_never_reach_a_file(mixed_run: RunResult, tmp_path: Path) -> None:
    for path in write_reports(mixed_run, tmp_path, secrets=[SECRET]):
        text = path.read_text(encoding="utf-8")
        assert SECRET not in text and KEY not in text, path.name


REASON = "interrupted (Ctrl-C) after 12 finished cases; the cases that did not finish are not listed"


def test_an_incomplete_report_says_so_in_every_format(mixed_run: RunResult, tmp_path: Path) -> None:
    written = write_reports(mixed_run, tmp_path, incomplete=REASON)
    assert [p.name for p in written] == ["report.json", "report.md", "report.html", "junit.xml"]
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["incomplete"] == REASON
    assert data["summary"]["verdict"] == "error"  # not what was asked, whatever the cases finished as
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert f"> **Incomplete report**: {REASON}" in markdown
    assert markdown.index("Incomplete report") < markdown.index("## Summary")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<p class="incomplete" role="alert"><b>Incomplete report</b>: interrupted (Ctrl-C)' in page
    root = ET.parse(tmp_path / "junit.xml").getroot()
    suites = root.findall("testsuite")
    assert suites
    for suite in suites:
        assert suite[0].tag == "properties"  # the first child, as the JUnit XSD wants
        assert [(p.get("name"), p.get("value")) for p in suite[0]] == [("incomplete", REASON)]


def test_one_failing_renderer_costs_only_its_own_file(
    mixed_run: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(report: Any) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(FORMATS, "html", ("report.html", broken))
    done = write_each_report(mixed_run, tmp_path)
    assert [p.name for p in done.written] == ["report.json", "report.md", "junit.xml"]
    assert len(done.failed) == 1
    assert str(done.failed[0]) == (
        f"{tmp_path / 'report.html'}: not written: a value is nested too deeply to render "
        "(RecursionError: maximum recursion depth exceeded)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.json", "report.md"]
    with pytest.raises(RecursionError):  # write_reports raises it, after writing the others
        write_reports(mixed_run, tmp_path / "again")
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == ["junit.xml", "report.json", "report.md"]


def test_a_file_that_cannot_be_written_costs_only_itself(mixed_run: RunResult, tmp_path: Path) -> None:
    (tmp_path / "report.md").mkdir()  # a folder where the Markdown report goes
    done = write_each_report(mixed_run, tmp_path)
    assert [p.name for p in done.written] == ["report.json", "report.html", "junit.xml"]
    assert [f.path.name for f in done.failed] == ["report.md"]
    assert "report.md: not written: Is a directory" in str(done.failed[0])


def test_a_lone_surrogate_does_not_cost_the_json_report(mixed_run: RunResult, tmp_path: Path) -> None:
    case = dataclasses.replace(mixed_run.cases[0], message="broken \ud800 text")
    run = dataclasses.replace(mixed_run, cases=(case, *mixed_run.cases[1:]))
    done = write_each_report(run, tmp_path)
    assert done.failed == ()
    messages = [c["message"] for c in json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["cases"]]
    assert "broken \ud800 text" in messages


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda d: d.write_text("x"), "it is a file, not a folder"),
        (lambda d: None, ""),  # missing (parents too): created
        (lambda d: (d / "report.json").mkdir(parents=True), "report.json is a folder"),
    ],
)
def test_check_report_dir(tmp_path: Path, setup: Any, reason: str) -> None:
    target = tmp_path / "a" / "b"
    target.parent.mkdir()
    setup(target)
    if not reason:
        check_report_dir(target)
        assert target.is_dir() and list(target.iterdir()) == []  # the probe file is gone
        return
    with pytest.raises(UsageError, match="--report-dir") as caught:
        check_report_dir(target)
    assert str(target) in str(caught.value) and reason in str(caught.value)
    assert "--report-dir DIR" in str(caught.value)


def test_check_report_dir_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match=r"cannot create it \(Not a directory"):
        check_report_dir(tmp_path / "file" / "reports")
    check_report_dir(tmp_path / "file" / "reports", formats=())  # no report asked: nothing to check
