"""write_reports: the four files, atomically, and nothing else; unknown formats are refused."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.reporting import render_html, render_json, render_junit, render_markdown, write_reports
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
