from __future__ import annotations

from conformance.checks._common import diff_findings
from conformance.checks.roundtrip import is_subset


def test_is_subset() -> None:
    assert is_subset({"a": 1}, {"a": 1, "b": 2})
    assert is_subset({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 3}]}, "e": 0})
    assert not is_subset({"a": 1}, {"a": 2})
    assert not is_subset({"a": [1]}, {"a": [1, 2]})
    assert not is_subset({"a": True}, {"a": 1})  # a boolean is not the number 1 in JSON
    assert is_subset({"a": 1}, {"a": 1.0})


def test_diff_findings_give_json_paths_expected_and_actual() -> None:
    findings = diff_findings(
        "c", {"a": [1, {"b": "x"}], "k.y": 1}, {"a": [1, {"b": "y"}], "k.y": 1, "n": 2}, prefix="$"
    )
    by_path = {f.path: (f.expected, f.actual) for f in findings}
    assert by_path["$.a[1].b"] == ("x", "y")
    assert by_path["$.n"] == (None, 2)
