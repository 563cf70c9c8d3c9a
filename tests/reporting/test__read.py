"""``conformance.reporting._read``: a report.json read back (``--last-failed``, ``merge-reports``) is
an untrusted file, read with the bounds of cassettes; every report the suite writes reads back,
even one holding a value nested past ``MAX_DEPTH`` (capped when written) and a deep provenance."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from _runs import build_mixed_run

from conformance.errors import UsageError
from conformance.reporting import MAX_DEPTH, render_json
from conformance.reporting._read import REPORT_FRAME, load_report
from conformance.verdicts import CaseResult, CheckVerdict, Finding, RunResult


def _nested(levels: int) -> list[object]:
    value: list[object] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_a_report_with_values_as_deep_as_the_writer_lets_them_be_reads_back(tmp_path: Path) -> None:
    deep = _nested(MAX_DEPTH * 3)  # capped at MAX_DEPTH levels when written
    finding = Finding(check="roundtrip.text", message="m", path="$.text", expected=deep, actual={"a": deep}, turn=0)
    case = CaseResult(
        adapter="a",
        scenario="basic/get_time",
        mode="stream",
        status="fail",
        checks=(CheckVerdict(check="roundtrip.text", status="fail", findings=(finding,)),),
    )
    run: RunResult = build_mixed_run()
    run = dataclasses.replace(run, cases=(*run.cases, case))
    path = tmp_path / "report.json"
    path.write_text(render_json(run), encoding="utf-8")
    data = load_report(path, str(path))
    assert data == json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("levels", [MAX_DEPTH + REPORT_FRAME + 1, 100_000])
def test_a_report_nested_deeper_than_the_suite_writes_is_refused_before_it_is_parsed(
    tmp_path: Path, levels: int
) -> None:
    path = tmp_path / "report.json"
    path.write_text('{"report_format": 1, "cases": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}")
    with pytest.raises(UsageError, match=r"^here: nests deeper than a conformance report can \(116 levels\)"):
        load_report(path, "here")


def test_the_nesting_allowed_follows_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "report.json"
    levels = 200
    path.write_text('{"report_format": 1, "cases": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}")
    with pytest.raises(UsageError, match="nesting_depth=100"):
        load_report(path, "here")
    monkeypatch.setenv("CONFORMANCE_LIMITS", "nesting_depth=200")
    assert load_report(path, "here")["report_format"] == 1


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"not json", "here: not JSON ("),
        (b"\xff\xfe{", "here: not JSON ("),
        (
            b'{"report_format": true, "cases": []}',
            "here: not a conformance JSON report of format 1 (report_format true)",
        ),
        (b'{"report_format": "1"}', 'here: not a conformance JSON report of format 1 (report_format "1")'),
        (b'{"report_format": 1.0}', "here: not a conformance JSON report of format 1 (report_format 1.0)"),
        (b"[]", "here: not a conformance JSON report of format 1 (no report_format)"),
    ],
)
def test_what_is_not_a_report_is_a_usage_error(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(content)
    with pytest.raises(UsageError) as caught:
        load_report(path, "here")
    assert str(caught.value).startswith(said), str(caught.value)


def test_a_folder_or_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^here: a folder"):
        load_report(tmp_path, "here")
    with pytest.raises(FileNotFoundError):
        load_report(tmp_path / "none.json", "here")
