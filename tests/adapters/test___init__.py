"""The adapter registry: ``detect_adapter`` names the wire of a request from its URL."""

from __future__ import annotations

import pytest

from conformance.adapters import detect_adapter


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("http://127.0.0.1/v1/chat/completions", "openai_chat"),
        ("https://api.openai.com/v1/responses/", "openai_responses"),
        ("http://127.0.0.1/v1/messages?beta=true", "anthropic"),
        ("http://127.0.0.1/v1beta/models/g:streamGenerateContent?alt=sse", "gemini"),
        ("http://127.0.0.1:11434/api/chat", "ollama"),
        ("http://127.0.0.1/v1/embeddings", None),
    ],
)
def test_the_wire_is_named_by_the_url_path(url: str, name: str | None) -> None:
    assert detect_adapter(url) == name


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1/v1/messages", "http://[bad]/v1/chat/completions"])
def test_a_uri_that_is_not_a_url_is_served_by_no_adapter(url: str) -> None:
    # a cassette is untrusted input: urlsplit raises ValueError on these (found by the fuzz tier)
    assert detect_adapter(url) is None
