"""Signatures name a finding wherever it appears; only a defect fails its check."""

from __future__ import annotations

import pytest

from conformance.checks._common import verdict
from conformance.verdicts import (
    STATUS_ORDER,
    CaseResult,
    Finding,
    RunResult,
    generalised_path,
    signature,
    value_kind,
    worst,
)


@pytest.mark.parametrize(
    ("path", "general"),
    [
        ("$.messages[2].parts[0].is_error", "$.messages[*].parts[*].is_error"),
        ("tools['gmail.search']", "tools[*]"),
        ("$.messages[*].tool_call_id (call #1)", "$.messages[*].tool_call_id (call #*)"),
        ("turn 0 events", "turn * events"),
        ('$.headers["content-type"]', '$.headers["content-type"]'),  # a key, not an index
        ("", ""),
    ],
)
def test_paths_generalise_indices_not_keys(path: str, general: str) -> None:
    assert generalised_path(path) == general


def test_one_defect_in_two_cases_has_one_signature() -> None:
    first = Finding(check="client.call_ids", message="m", path="$.messages[2].tool_call_id (call #0)", expected="a")
    second = Finding(
        check="client.call_ids", message="other", path="$.messages[4].tool_call_id (call #1)", expected="b"
    )
    assert (
        signature(first)
        == signature(second)
        == "client.call_ids at $.messages[*].tool_call_id (call #*): string -> none"
    )
    other_kind = Finding(check="client.call_ids", message="m", path="$.messages[2].tool_call_id (call #0)", actual=[1])
    assert signature(other_kind) != signature(first)


@pytest.mark.parametrize(
    ("value", "kind"),
    [(None, "none"), (True, "boolean"), (0, "number"), (1.5, "number"), ("", "string"), ({}, "object"), ([], "array")],
)
def test_value_kinds_keep_booleans_apart_from_numbers(value: object, kind: str) -> None:
    assert value_kind(value) == kind


def test_only_a_defect_fails_a_check() -> None:
    def finding(kind: str) -> Finding:
        return Finding(check="c", message="m", kind=kind)  # type: ignore[arg-type]

    assert verdict("c", []).status == "pass"
    assert verdict("c", [finding("unasked"), finding("note")]).status == "pass"
    assert verdict("c", [finding("note"), finding("left")]).status == "left"
    assert verdict("c", [finding("left"), finding("defect")]).status == "fail"
    assert worst(["pass", "left", "unsupported"]) == "left"
    assert worst(["left", "stale"]) == "stale"


def test_a_deviation_ranks_above_left_and_below_what_fails() -> None:
    # the model did not do what the scenario asks: shown above the duties left to the caller, and a
    # malformed answer (fail), a stale gap or an error wins over it as the case's worst check
    assert STATUS_ORDER == ("pass", "xfail", "unsupported", "left", "deviated", "stale", "fail", "error")
    assert worst(["pass", "left", "deviated", "unsupported"]) == "deviated"
    assert worst(["deviated", "fail"]) == "fail"
    assert worst(["deviated", "stale"]) == "stale"
    assert worst(["error", "deviated"]) == "error"
    counts = RunResult(
        suite_version="0",
        adapters=(),
        scenarios=(),
        cases=(CaseResult(adapter="s/openai_chat", scenario="x", mode="stream", status="deviated"),),
    ).counts()
    assert list(counts) == list(STATUS_ORDER) and counts["deviated"] == 1
