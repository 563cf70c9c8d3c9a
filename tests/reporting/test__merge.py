"""merge_reports: the shards of one run join into its report; anything else is a usage error naming
the file and what to do."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import jsonschema
import pytest

from conformance.errors import UsageError
from conformance.reporting import build_report, merge_reports, render_json, report_schema
from conformance.verdicts import RunResult, Selection
from tests.reporting._runs import suited_run


def _shards(count: int, run: RunResult | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``run``'s cases dealt round robin over ``count`` shard reports, as the shards would write them."""
    run = run or suited_run()
    assert run.selection is not None
    reports = []
    for k in range(1, count + 1):
        cases = tuple(c for i, c in enumerate(run.cases) if i % count == k - 1)
        shard = dataclasses.replace(
            run, cases=cases, selection=dataclasses.replace(run.selection, shard=f"{k}/{count}")
        )
        reports.append((f"shard{k}/report.json", json.loads(render_json(shard))))
    return reports


def _comparable(report: Any) -> Any:
    data = json.loads(json.dumps(report))
    data.pop("selection")
    return data


def test_the_shards_merge_into_the_report_of_one_run() -> None:
    whole = build_report(
        dataclasses.replace(
            suited_run(), selection=dataclasses.replace(suited_run().selection or Selection(command="x"), shard=None)
        )
    )
    merged = merge_reports(_shards(3), schema=report_schema())
    assert merged.notes == ()
    assert merged.report["selection"] is not None and merged.report["selection"]["merged"] == ["1/3", "2/3", "3/3"]
    assert _comparable(merged.report) == _comparable(whole)  # cases, order, counts, matrix, provenance
    assert not list(jsonschema.Draft202012Validator(report_schema()).iter_errors(merged.report))


def test_shards_given_in_any_order_merge_to_the_same_report() -> None:
    shards = _shards(3)
    assert merge_reports(shards).report == merge_reports(list(reversed(shards))).report


def test_a_missing_shard_is_refused_unless_partial_is_allowed_and_then_named() -> None:
    shards = _shards(3)
    with pytest.raises(UsageError) as caught:
        merge_reports([shards[0], shards[2]])
    assert str(caught.value).startswith("shard 2/3 of the run is missing (given: 1/3, 3/3): give the report.json")
    assert "--allow-partial" in str(caught.value)
    merged = merge_reports([shards[0], shards[2]], allow_partial=True)
    assert merged.report["incomplete"] == "shards missing: 2/3 (merged 1/3, 3/3 only with --allow-partial)"
    assert merged.report["summary"]["verdict"] == "error"
    assert merged.notes == ("merged without shard 2/3: the report is marked incomplete",)


def test_reports_from_another_suite_are_refused() -> None:
    shards = _shards(2)
    other = json.loads(json.dumps(shards[1][1]))
    other["suite"]["fingerprint"] = "0" * 64
    with pytest.raises(UsageError) as caught:
        merge_reports([shards[0], ("old/report.json", other)])
    assert str(caught.value).startswith("old/report.json: made by a different suite than shard1/report.json")
    assert "re-run every shard with the same conformance" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda r: r.pop("suite"), "carries no suite fingerprint"),
        (lambda r: r["selection"].update(model="other"), "run with another selection than shard1/report.json (model:"),
        (lambda r: r["selection"].update(shard="2/4"), "is a shard of 4 and shard1/report.json a shard of 3"),
        (lambda r: r["selection"].update(shard="1/3"), "shard 1/3 is also in shard1/report.json: overlapping shards"),
        (lambda r: r["selection"].update(shard=None), "not a shard (run without --shard)"),
        (lambda r: r.update(cases="none"), "not a valid conformance JSON report (at cases: 'none' is not of type"),
        (lambda r: r.pop("cases"), "not a conformance JSON report (no report_format and cases)"),
        (lambda r: r.update(report_format=True), "report_format is true, not 1"),
    ],
)
def test_what_is_not_a_shard_of_the_same_run_is_a_usage_error_naming_the_file(change: Any, said: str) -> None:
    shards = _shards(3)
    changed = json.loads(json.dumps(shards[1][1]))
    change(changed)
    with pytest.raises(UsageError) as caught:
        merge_reports([shards[0], ("odd/report.json", changed), shards[2]], schema=report_schema())
    message = str(caught.value)
    assert said in message
    assert "odd/report.json" in message


def test_a_case_in_two_reports_is_refused() -> None:
    run = dataclasses.replace(suited_run(), selection=Selection(command="run"))
    data = json.loads(render_json(run))
    with pytest.raises(UsageError) as caught:
        merge_reports([("a/report.json", data), ("b/report.json", data)])
    assert str(caught.value).startswith("b/report.json: case openai_chat::basic/get-time::non_stream is also in a/")


def test_unsharded_reports_of_other_cases_merge_and_an_interrupted_shard_makes_it_incomplete() -> None:
    run = dataclasses.replace(suited_run(), selection=Selection(command="run"))
    first = dataclasses.replace(run, cases=tuple(c for c in run.cases if c.adapter == "openai_chat"))
    rest = dataclasses.replace(run, cases=tuple(c for c in run.cases if c.adapter != "openai_chat"))
    reports = [("a.json", json.loads(render_json(first))), ("b.json", build_report(rest, incomplete="interrupted"))]
    merged = merge_reports(reports).report
    assert len(merged["cases"]) == len(run.cases)
    assert merged["incomplete"] == "b.json: interrupted" and merged["selection"]["merged"] == []  # type: ignore[index]


def test_report_format_true_is_refused_without_the_schema_too() -> None:
    """``True == 1`` in Python: merged through the API (no schema), a report of format ``true`` passed."""
    shards = _shards(2)
    changed = json.loads(json.dumps(shards[1][1]))
    changed["report_format"] = True
    with pytest.raises(UsageError, match=r"^odd/report\.json: report_format is true, not 1"):
        merge_reports([shards[0], ("odd/report.json", changed)])


def test_merged_shards_keep_the_model_deviations_apart_from_the_defects() -> None:
    from conformance.verdicts import SuiteInfo
    from tests.reporting._runs import FINGERPRINT, deviated_run

    run = dataclasses.replace(
        deviated_run(),
        suite=SuiteInfo(fingerprint=FINGERPRINT, version="0.1.0", check_version=1, scenarios=1, equivalences="ab" * 32),
        selection=Selection(command="certify"),
    )
    whole = build_report(run)
    merged = merge_reports(_shards(2, run), schema=report_schema()).report
    assert merged["deviations"] == whole["deviations"] and len(merged["deviations"]) == 2
    assert merged["summary"]["statuses"]["deviated"] == 1
    assert [d["check"] for d in merged["defects"]] == ["server.arguments"]
    assert not list(jsonschema.Draft202012Validator(report_schema()).iter_errors(merged))
