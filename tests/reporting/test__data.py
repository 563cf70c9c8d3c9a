"""build_report: counts, matrix, case order and ids, provenance, JSON values and scrubbing; values
nested thousands of levels deep cut at ``MAX_DEPTH`` with a marker, in the data and in every renderer
(issue 14, defect 5)."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import xml.etree.ElementTree as ET
from typing import Any

import jsonschema

from conformance.reporting import (
    MAX_DEPTH,
    build_report,
    cap_depth,
    check_family,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    report_schema,
)
from conformance.traffic.scrub import REDACTED
from conformance.verdicts import CaseResult, CheckVerdict, Finding, RunResult
from tests.reporting._runs import (
    CASSETTE_ANTHROPIC,
    CASSETTE_GET_TIME,
    CASSETTE_PARALLEL,
    HOSTILE,
    KEY,
    SECRET,
    build_mixed_run,
)

STATUSES = ["pass", "xfail", "unsupported", "left", "deviated", "stale", "fail", "error"]


def counts(**given: int) -> dict[str, int]:
    return {status: given.get(status, 0) for status in STATUSES}


def test_top_level_keys_come_in_a_fixed_order(mixed_run: RunResult) -> None:
    report = build_report(mixed_run)
    assert list(report) == [
        "report_format",
        "suite_version",
        "suite",
        "selection",
        "incomplete",
        "summary",
        "adapters",
        "scenarios",
        "matrix",
        "defects",
        "deviations",
        "cases",
        "provenance",
        "problems",
        "commands",
    ]
    assert report["report_format"] == 1
    assert report["suite_version"] == "0.1.0"


def test_summary_counts_cases_per_status_adapter_and_mode(mixed_run: RunResult) -> None:
    summary = build_report(mixed_run)["summary"]
    assert summary["cases"] == 12
    assert summary["statuses"] == counts(**{"pass": 6, "fail": 1, "error": 1, "xfail": 1, "stale": 1, "unsupported": 2})
    assert list(summary["statuses"]) == STATUSES
    assert summary["verdict"] == "error"
    assert summary["by_adapter"] == {
        "openai_chat": {"total": 5, "statuses": counts(**{"pass": 4, "fail": 1})},
        "anthropic": {"total": 4, "statuses": counts(**{"pass": 1, "error": 1, "xfail": 1, "stale": 1})},
        "gemini": {"total": 3, "statuses": counts(**{"pass": 1, "unsupported": 2})},
    }
    assert summary["by_mode"] == {
        "non_stream": {"total": 7, "statuses": counts(**{"pass": 4, "fail": 1, "xfail": 1, "unsupported": 1})},
        "stream": {"total": 5, "statuses": counts(**{"pass": 2, "error": 1, "stale": 1, "unsupported": 1})},
    }
    # durations: six passing cases of 0.25 s, the failing one 0.5 s, the erroring one 1.0 s
    assert summary["duration"] == 3.0
    assert summary["problems"] == 0


def test_summary_counts_check_verdicts_per_family(mixed_run: RunResult) -> None:
    families = build_report(mixed_run)["summary"]["by_check_family"]
    assert list(families) == ["roundtrip", "streaming", "translation"]
    assert families["translation"] == {"total": 15, "statuses": counts(**{"pass": 14, "fail": 1})}
    assert families["roundtrip"] == {"total": 1, "statuses": counts(fail=1)}
    assert families["streaming"] == {"total": 2, "statuses": counts(xfail=1, stale=1)}


def test_check_family_is_the_first_dotted_part() -> None:
    assert check_family("translation.tool_names") == "translation"
    assert check_family("streaming.lifecycle.order") == "streaming"
    assert check_family("recovery") == "recovery"


def test_verdict_is_the_worst_case_and_error_when_the_run_has_problems(mixed_run: RunResult) -> None:
    only_pass = dataclasses.replace(mixed_run, cases=tuple(c for c in mixed_run.cases if c.status == "pass"))
    assert build_report(only_pass)["summary"]["verdict"] == "pass"
    no_errors = dataclasses.replace(mixed_run, cases=tuple(c for c in mixed_run.cases if c.status != "error"))
    assert build_report(no_errors)["summary"]["verdict"] == "fail"
    broken = dataclasses.replace(only_pass, problems=("scenarios/x.yaml: line 3: turns is required",))
    report = build_report(broken)
    assert report["summary"]["verdict"] == "error"
    assert report["summary"]["problems"] == 1
    assert report["problems"] == ["scenarios/x.yaml: line 3: turns is required"]


def test_cases_are_ordered_like_the_matrix(mixed_run: RunResult) -> None:
    ids = [case["id"] for case in build_report(mixed_run)["cases"]]
    assert ids == [
        "openai_chat/basic/get-time/non_stream",
        "openai_chat/basic/get-time/stream",
        "anthropic/basic/get-time/non_stream",
        "anthropic/basic/get-time/stream",
        "gemini/basic/get-time/non_stream",
        "openai_chat/basic/parallel-calls/non_stream",
        "openai_chat/basic/parallel-calls/stream",
        "anthropic/basic/parallel-calls/non_stream",
        "anthropic/basic/parallel-calls/stream",
        "gemini/basic/parallel-calls/non_stream",
        "gemini/basic/parallel-calls/stream",
        "openai_chat/errors/rate-limit/non_stream",
    ]


def test_the_report_does_not_depend_on_the_order_of_cases(mixed_run: RunResult) -> None:
    shuffled = list(mixed_run.cases)
    random.Random(7).shuffle(shuffled)
    again = dataclasses.replace(mixed_run, cases=tuple(shuffled))
    assert json.dumps(build_report(again)) == json.dumps(build_report(mixed_run))


def test_a_case_keeps_its_checks_and_findings(mixed_run: RunResult) -> None:
    case = next(c for c in build_report(mixed_run)["cases"] if c["status"] == "fail")
    assert [(c["check"], c["family"], c["status"]) for c in case["checks"]] == [
        ("translation.tool_names", "translation", "pass"),
        ("translation.arguments", "translation", "fail"),
        ("roundtrip.request", "roundtrip", "fail"),
    ]
    first = case["checks"][1]["findings"][0]
    assert first == {
        "check": "translation.arguments",
        "message": f"arguments differ {HOSTILE}",
        "path": "$.tool_calls[1].arguments.city",
        "expected": HOSTILE,
        "actual": {"city": '"Paris"', "n": 1},
        "turn": 0,
        "kind": "defect",
        "remedy": "",
        "signature": "translation.arguments at $.tool_calls[*].arguments.city: string -> object",
        "wrong_mode": None,
    }
    assert case["cassette"] == CASSETTE_PARALLEL
    assert case["duration"] == 0.5
    erroring = next(c for c in build_report(mixed_run)["cases"] if c["status"] == "error")
    assert erroring["traceback"] is not None and "KeyError" in erroring["traceback"]
    assert erroring["message"] == "adapter raised KeyError: 'index'"


def test_matrix_has_a_cell_per_scenario_and_adapter_with_both_modes(mixed_run: RunResult) -> None:
    matrix = build_report(mixed_run)["matrix"]
    assert matrix["adapters"] == ["openai_chat", "anthropic", "gemini"]
    assert matrix["modes"] == ["non_stream", "stream"]
    assert [row["scenario"] for row in matrix["rows"]] == [
        "basic/get-time",
        "basic/parallel-calls",
        "errors/rate-limit",
    ]
    table = {
        (row["scenario"], cell["adapter"]): (
            cell["status"],
            *(None if cell["modes"][m] is None else cell["modes"][m]["status"] for m in ("non_stream", "stream")),  # type: ignore[index]
        )
        for row in matrix["rows"]
        for cell in row["cells"]
    }
    assert table == {
        ("basic/get-time", "openai_chat"): ("pass", "pass", "pass"),
        ("basic/get-time", "anthropic"): ("error", "pass", "error"),
        ("basic/get-time", "gemini"): ("pass", "pass", None),
        ("basic/parallel-calls", "openai_chat"): ("fail", "fail", "pass"),
        ("basic/parallel-calls", "anthropic"): ("stale", "xfail", "stale"),
        ("basic/parallel-calls", "gemini"): ("unsupported", "unsupported", "unsupported"),
        ("errors/rate-limit", "openai_chat"): ("pass", "pass", None),
        ("errors/rate-limit", "anthropic"): (None, None, None),
        ("errors/rate-limit", "gemini"): (None, None, None),
    }
    cell = matrix["rows"][1]["cells"][0]["modes"]["non_stream"]
    assert cell == {"status": "fail", "case": "openai_chat/basic/parallel-calls/non_stream"}


def test_adapters_and_scenarios_only_named_by_cases_follow_the_declared_ones(mixed_run: RunResult) -> None:
    extra = CaseResult(adapter="aaa_third_party", scenario="zzz/extra", mode="stream", status="pass")
    report = build_report(dataclasses.replace(mixed_run, cases=(*mixed_run.cases, extra)))
    assert [a["name"] for a in report["adapters"]] == ["openai_chat", "anthropic", "gemini", "aaa_third_party"]
    assert report["adapters"][-1] == {
        "name": "aaa_third_party",
        "wire_format": "",
        "capabilities": [],
        "known_gaps": {},
        "model": None,
    }
    assert [s["id"] for s in report["scenarios"]][-1] == "zzz/extra"
    assert report["cases"][-1]["id"] == "aaa_third_party/zzz/extra/stream"


def test_a_repeated_case_gets_a_distinct_id_and_the_cell_shows_the_worst(mixed_run: RunResult) -> None:
    again = CaseResult(adapter="openai_chat", scenario="basic/get-time", mode="stream", status="fail")
    report = build_report(dataclasses.replace(mixed_run, cases=(*mixed_run.cases, again)))
    ids = [c["id"] for c in report["cases"]]
    assert ids[1:3] == ["openai_chat/basic/get-time/stream", "openai_chat/basic/get-time/stream#2"]
    assert len(set(ids)) == len(ids)
    assert report["matrix"]["rows"][0]["cells"][0]["modes"]["stream"] == {
        "status": "fail",
        "case": "openai_chat/basic/get-time/stream#2",
    }


def test_adapters_and_scenarios_are_described(mixed_run: RunResult) -> None:
    report = build_report(mixed_run)
    assert report["adapters"][1] == {
        "name": "anthropic",
        "wire_format": "anthropic-messages",
        "capabilities": ["parallel_tool_calls", "streaming"],
        "known_gaps": {"streaming.lifecycle@basic/parallel-calls": "tool_use blocks interleave"},
        "model": None,
    }
    assert report["scenarios"][1]["requires"] == ["parallel_tool_calls"]


def test_provenance_lists_every_cassette_with_its_block_and_cases(mixed_run: RunResult) -> None:
    entries = build_report(mixed_run)["provenance"]
    assert [e["cassette"] for e in entries] == sorted([CASSETTE_ANTHROPIC, CASSETTE_GET_TIME, CASSETTE_PARALLEL])
    by_path = {e["cassette"]: e for e in entries}
    assert by_path[CASSETTE_ANTHROPIC]["provenance"] is None  # replayed, but the run knows no block for it
    assert by_path[CASSETTE_ANTHROPIC]["cases"] == [
        "anthropic/basic/get-time/non_stream",
        "anthropic/basic/get-time/stream",
    ]
    block = by_path[CASSETTE_GET_TIME]["provenance"]
    assert block is not None
    assert block["clients"] == {"python": "3.11.7", "httpx": "0.28.1"}
    assert list(block)[:3] == ["suite", "adapter", "mode"]


def test_no_secret_reaches_the_report(mixed_run: RunResult) -> None:
    report = build_report(mixed_run, secrets=[SECRET])
    text = json.dumps(report)
    assert KEY not in text
    assert SECRET not in text
    exchange = next(c for c in report["cases"] if c["status"] == "fail")["exchanges"][0]
    assert exchange["request"]["headers"] == {"authorization": REDACTED, "content-type": "application/json"}
    assert exchange["request"]["url"] == f"http://127.0.0.1/v1/chat/completions?key={REDACTED}"
    assert exchange["request"]["body"]["messages"][0]["content"] == f"my key is {REDACTED}"
    assert SECRET not in exchange["response"] and REDACTED in exchange["response"]
    provenance = {e["cassette"]: e["provenance"] for e in report["provenance"]}
    assert provenance[CASSETTE_PARALLEL] == {
        "adapter": "openai_chat",
        "mode": "live",
        "note": HOSTILE,
        "token": REDACTED,
    }


def test_secret_headers_are_redacted_in_any_header_shape() -> None:
    exchange = {
        "request_headers": [["X-Api-Key", "plain-value-1"], ["accept", "application/json"]],
        "response_headers": {"set-cookie": ["session=abc", "other=def"], "x-request-id": ["req_1"]},
    }
    case = CaseResult(adapter="a", scenario="s", mode="stream", status="error", exchanges=(exchange,))
    run = RunResult(suite_version="0", adapters=(), scenarios=(), cases=(case,))
    scrubbed = build_report(run)["cases"][0]["exchanges"][0]
    assert scrubbed["request_headers"] == [["X-Api-Key", REDACTED], ["accept", "application/json"]]
    assert scrubbed["response_headers"] == {"set-cookie": [REDACTED, REDACTED], "x-request-id": ["req_1"]}


def test_any_value_a_check_reports_becomes_a_json_value() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "Opaque()"

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: tuple[int, ...]

    finding = Finding(
        check="c.x",
        message="m",
        expected={"t": (1, 2), 3: b"caf\xc3\xa9", "nan": math.nan, "set": frozenset({"b", "a"})},
        actual=[Opaque(), Point(x=1, y=(2,)), math.inf],
    )
    case = CaseResult(
        adapter="a",
        scenario="s",
        mode="non_stream",
        status="fail",
        checks=(CheckVerdict(check="c.x", status="fail", findings=(finding,)),),
        duration=math.nan,
    )
    run = RunResult(suite_version="0", adapters=(), scenarios=(), cases=(case,))
    report = build_report(run)
    json.dumps(report, allow_nan=False)  # strict JSON: no NaN or Infinity left
    got = report["cases"][0]["checks"][0]["findings"][0]
    assert got["expected"] == {"t": [1, 2], "3": "café", "nan": "nan", "set": ["a", "b"]}
    assert got["actual"] == ["Opaque()", {"x": 1, "y": [2]}, "inf"]
    assert report["cases"][0]["duration"] == 0.0


def test_an_empty_run_gives_an_empty_report(empty_run: RunResult) -> None:
    report = build_report(empty_run)
    assert report["summary"]["cases"] == 0
    assert report["summary"]["verdict"] == "pass"
    assert report["matrix"]["adapters"] == [] and report["matrix"]["rows"] == []
    assert report["matrix"]["modes"] == ["non_stream", "stream"]
    assert report["cases"] == [] and report["provenance"] == [] and report["problems"] == []


def test_building_twice_gives_the_same_report() -> None:
    assert json.dumps(build_report(build_mixed_run())) == json.dumps(build_report(build_mixed_run()))


# -- values nested too deeply (issue 14) ------------------------------------------------------------


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def depth_of(value: Any) -> int:
    """Levels of lists and mappings (iterative, so any depth can be measured)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = list(item.values()) if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def deep_run(mixed_run: RunResult, depth: int = 3000) -> RunResult:
    """The mixed run with one failing case whose finding and exchange hold values ``depth`` levels deep."""
    deep_text = "[" * depth + "]" * depth
    case = CaseResult(
        adapter="openai_chat",
        scenario="basic/get-time",
        mode="stream",
        status="fail",
        checks=(
            CheckVerdict(
                check="roundtrip.calls",
                status="fail",
                findings=(Finding(check="roundtrip.calls", message="deep", expected=1, actual=nested(depth)),),
            ),
        ),
        exchanges=({"method": "POST", "url": "http://127.0.0.1/v1", "request": nested(depth), "response": deep_text},),
    )
    return dataclasses.replace(mixed_run, cases=(*mixed_run.cases[:1], case, *mixed_run.cases[2:]))


def test_cap_depth_cuts_below_the_limit_with_a_marker_and_keeps_the_rest() -> None:
    value = {"a": [1, {"b": [2, [3]]}], "c": "x"}
    assert cap_depth(value, 10) == value
    assert cap_depth(value, 2) == {"a": [1, "… (nested deeper than 2 levels: cut in the report)"], "c": "x"}
    capped = cap_depth(nested(100_000), MAX_DEPTH)  # iterative: no RecursionError at any depth
    assert depth_of(capped) == MAX_DEPTH


def test_values_3000_levels_deep_render_in_every_format(mixed_run: RunResult) -> None:
    run = deep_run(mixed_run)
    report = build_report(run)
    finding = report["cases"][1]["checks"][0]["findings"][0]
    assert depth_of(finding["actual"]) == MAX_DEPTH
    assert "nested deeper than 100 levels" in json.dumps(finding["actual"])
    texts = {
        "json": render_json(report),
        "md": render_markdown(report),
        "html": render_html(report),
        "junit": render_junit(report),
    }
    for name, text in texts.items():
        assert "nested deeper than 100 levels" in text, name
    assert json.loads(texts["json"])["cases"][1]["exchanges"][0]["response"].startswith("[[[")
    ET.fromstring(texts["junit"])


def test_renderers_given_a_deep_mapping_directly_do_not_recurse_without_bound(mixed_run: RunResult) -> None:
    """A report mapping not built by build_report (no cap yet) still renders: the text helpers cut it."""
    report: Any = build_report(mixed_run)
    report["cases"][0]["checks"][0]["findings"] = [
        {"check": "x", "message": "m", "path": "", "expected": nested(5000), "actual": 1, "turn": None}
    ]
    report["cases"][0]["status"] = "fail"
    report["cases"][0]["checks"][0]["status"] = "fail"
    assert "nested deeper than" in render_markdown(report)
    assert "nested deeper than" in render_junit(report)
    assert "nested deeper than" in render_html(report)


def test_a_complete_report_has_no_banner(mixed_run: RunResult) -> None:
    report = build_report(mixed_run)
    assert report["incomplete"] is None
    jsonschema.Draft202012Validator(report_schema()).validate(json.loads(render_json(report)))
    assert "Incomplete" not in render_markdown(report)
    assert 'class="incomplete"' not in render_html(report)
    assert "<properties>" not in render_junit(report)


def test_the_suite_the_selection_and_each_adapters_model_are_reported() -> None:
    from tests.reporting._runs import FINGERPRINT, suited_run

    report = build_report(suited_run())
    assert report["suite"] == {
        "fingerprint": FINGERPRINT,
        "version": "0.1.0",
        "check_version": 1,
        "scenarios": 3,
        "equivalences": "ab" * 32,
    }
    assert report["selection"] == {
        "command": "certify",
        "scenarios": ["basic/*"],
        "keyword": None,
        "checks": ["translation"],
        "wires": None,
        "model": "m-1",
        "shard": "2/3",
        "merged": [],
        "note": None,
    }
    assert [a.get("model") for a in report["adapters"]] == [
        "openai_chat-model-1",
        "anthropic-model-1",
        "gemini-model-1",
    ]


def test_a_run_made_through_the_api_reports_no_suite_or_selection(mixed_run: RunResult) -> None:
    report = build_report(mixed_run)
    assert report["suite"] is None and report["selection"] is None
