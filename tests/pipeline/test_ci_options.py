"""``conformance.pipeline.ci``: the baseline and ``--last-failed`` read from plain values (docs/ci.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.pipeline.ci import CiOptions, read_ci, read_last_failed
from conformance.reporting._data import REPORT_FORMAT
from conformance.scenarios.loader import load_scenarios


def _report(folder: Path, statuses: dict[tuple[str, str, str], str]) -> Path:
    cases = [{"adapter": a, "scenario": s, "mode": m, "status": st} for (a, s, m), st in statuses.items()]
    folder.mkdir(parents=True, exist_ok=True)
    document = {"report_format": REPORT_FORMAT, "cases": cases}  # what --last-failed reads of a report
    (folder / "report.json").write_text(json.dumps(document), encoding="utf-8")
    return folder / "report.json"


def test_strict_needs_a_baseline_and_a_missing_report_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--strict-baseline needs --baseline FILE"):
        read_ci(strict=True)
    with pytest.raises(UsageError, match="run once without --last-failed"):
        read_ci(last_failed=True, report_dir=tmp_path)
    assert read_ci() == CiOptions()


def test_last_failed_reruns_the_failed_errored_and_stale_cases_only(tmp_path: Path) -> None:
    report = _report(
        tmp_path,
        {
            ("gemini", "basic/get_time", "stream"): "fail",
            ("gemini", "basic/get_time", "non_stream"): "pass",
            ("anthropic", "basic/single_call", "stream"): "error",
            ("anthropic", "basic/get_time", "stream"): "stale",
            ("anthropic", "basic/get_time", "non_stream"): "xfail",
        },
    )
    wanted = read_last_failed(report)
    assert wanted == {
        ("gemini", "basic/get_time", "stream"),
        ("anthropic", "basic/single_call", "stream"),
        ("anthropic", "basic/get_time", "stream"),
    }
    ci = read_ci(last_failed=True, report_dir=tmp_path)
    scenarios = [
        s for s in load_scenarios([]).scenarios if s.id in ("basic/get_time", "basic/single_call", "basic/empty")
    ]
    select, narrowed = ci.narrow(None, scenarios)
    assert select is not None and {s.id for s in narrowed} == {"basic/get_time", "basic/single_call"}
    assert select("gemini", "basic/get_time", "stream") and not select("gemini", "basic/get_time", "non_stream")
    narrower, _ = ci.narrow(lambda adapter, scenario, mode: adapter == "anthropic", scenarios)
    assert narrower is not None and not narrower("gemini", "basic/get_time", "stream")


def test_a_report_without_failures_leaves_nothing_to_rerun(tmp_path: Path) -> None:
    _report(tmp_path, {("gemini", "basic/get_time", "stream"): "pass"})
    ci = read_ci(last_failed=True, report_dir=tmp_path)
    assert ci.last_failed == frozenset() and "nothing to rerun" in ci.nothing_to_rerun
