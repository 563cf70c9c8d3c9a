"""Tests for ``conformance.traffic.scrub``: the header names and query parameters of toolchain.md §2, and
key shapes of the providers' documented key formats (OpenAI ``sk-``/``sk-proj-``, Anthropic
``sk-ant-``, Google ``AIza``), never over-matching ordinary words."""

from __future__ import annotations

import pytest

from conformance.traffic.scrub import REDACTED, Scrubber, is_secret_header


@pytest.mark.parametrize(
    "name",
    [
        "authorization",
        "Authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "x-stainless-api-key",
        "x-auth-token",
        "x-session-id",
    ],
)
def test_secret_headers(name: str) -> None:
    assert is_secret_header(name)


@pytest.mark.parametrize(
    "name", ["content-type", "retry-after", "anthropic-version", "x-request-id", "openai-processing-ms"]
)
def test_ordinary_headers_are_kept(name: str) -> None:
    assert not is_secret_header(name)
    assert Scrubber().header(name, "application/json") == "application/json"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-abc123DEF456", f"key {REDACTED}"),
        ("sk-ant-api03-abcdef_123-x", REDACTED),
        ("AIzaSyA1234567890abcdef", REDACTED),
        ("Authorization: Bearer eyJhbGciOi.J9-x_y", f"Authorization: Bearer {REDACTED}"),
        ("org-AbCdEf0123456789", REDACTED),
        ("task-abcdefgh and desk-123456 stay", "task-abcdefgh and desk-123456 stay"),
        ("sk-short", "sk-short"),
        ("请告诉我 sk-abcdef12", f"请告诉我 {REDACTED}"),
    ],
)
def test_key_shaped_strings(text: str, expected: str) -> None:
    assert Scrubber().text(text) == expected


def test_named_secrets_are_removed_anywhere() -> None:
    scrubber = Scrubber(["plain-secret-value", "abc"])  # under 4 characters: not a secret, never replaced
    assert scrubber.text("x plain-secret-value y abc") == f"x {REDACTED} y abc"
    assert scrubber.data(b"\xff plain-secret-value") == b"\xff " + REDACTED.encode()
    assert scrubber.json({"plain-secret-value": ["plain-secret-value", 1, None]}) == {REDACTED: [REDACTED, 1, None]}
    assert scrubber.leaked("still plain-secret-value") == ["plain-secret-value"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSyA1234567890abcdef",
            "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=REDACTED",
        ),
        (
            "https://h.example/x?api_key=abc&api-version=2024-10-21",
            "https://h.example/x?api_key=REDACTED&api-version=2024-10-21",
        ),
        ("https://user:pw@h.example/x", "https://h.example/x"),
        ("https://h.example/x?$alt=json;enum-encoding=int", "https://h.example/x?$alt=json;enum-encoding=int"),
    ],
)
def test_urls(url: str, expected: str) -> None:
    assert Scrubber().url(url) == expected
