"""``conformance.checks._common.diff_findings``: each difference in plain words, expected the first
value (the scenario's or the recording's) and actual the second (the adapter's)."""

from __future__ import annotations

from conformance.checks._common import calls_words, diff_findings


def test_each_difference_is_said_in_plain_words_with_its_side() -> None:
    expected = {"city": "Lisbon", "days": 3, "units": "metric", "tags": ["a"]}
    actual = {"city": "Porto", "days": "3", "extra": True, "tags": ["a", "b"]}
    found = {
        f.path: f for f in diff_findings("roundtrip.calls", expected, actual, prefix="$.arguments", message="arguments")
    }
    assert {path: f.message for path, f in found.items()} == {
        "$.arguments.city": "arguments: differs",
        "$.arguments.days": "arguments: a string where a number is expected",
        "$.arguments.units": "arguments: missing",
        "$.arguments.extra": "arguments: not expected",
        "$.arguments.tags[1]": "arguments: not expected",
    }
    assert (found["$.arguments.city"].expected, found["$.arguments.city"].actual) == ("Lisbon", "Porto")
    assert (found["$.arguments.units"].expected, found["$.arguments.units"].actual) == ("metric", None)
    assert (found["$.arguments.extra"].expected, found["$.arguments.extra"].actual) == (None, True)


def test_a_value_that_became_null_is_said_so() -> None:
    [finding] = diff_findings("roundtrip.request", {"system": "Be brief."}, {"system": None})
    assert finding.message == "null where a string is expected" and finding.expected == "Be brief."


def test_calls_in_words() -> None:
    assert calls_words([]) == "no call"
    assert calls_words(["get_time"]) == "1 call get_time"
    assert calls_words(["get_weather", "get_time"]) == "2 calls get_weather, get_time"
