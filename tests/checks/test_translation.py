"""The request-shape schemas accept what real clients sent and providers answered with 200, and reject
bodies that break documented rules (wire facts: each provider's API reference, cited in the schemas)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import detect_adapter
from conformance.checks.translation import NAME_RULES, request_schema
from conformance.traffic.cassettes import load_cassette

REALWORLD = Path(__file__).resolve().parents[1] / "realworld" / "cassettes"
WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")


@pytest.mark.parametrize("wire", WIRES)
def test_every_wire_has_a_request_schema(wire: str) -> None:
    assert request_schema(wire) is not None


@pytest.mark.realworld
def test_real_requests_answered_with_200_validate() -> None:
    checked = 0
    failures: list[str] = []
    for path in sorted(REALWORLD.rglob("*.yaml")):
        for interaction in load_cassette(path).interactions:
            body = interaction.request.json
            response = interaction.response
            if not isinstance(body, dict) or response is None or response.status != 200:
                continue
            wire = detect_adapter(interaction.request.uri, body)
            if wire is None or "/deployments/" in interaction.request.uri:  # Azure: the model is in the path
                continue
            if body.get("tool_choice") == "any":  # not in OpenAI's documented enum; a test server answered it
                continue
            validator = request_schema(wire)
            assert validator is not None
            checked += 1
            failures += [f"{path.name}#{interaction.index}: {e.message}" for e in validator.iter_errors(body)]
    assert checked >= 50
    assert failures == []


@pytest.mark.parametrize(
    ("wire", "body", "needle"),
    [
        # Anthropic: max_tokens is required; roles are user/assistant only (system is top-level).
        ("anthropic", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "max_tokens"),
        ("anthropic", {"model": "m", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}, "system"),
        # OpenAI chat: a tool message needs tool_call_id; function tools are wrapped in {type, function}.
        ("openai_chat", {"model": "m", "messages": [{"role": "tool", "content": "1"}]}, "tool_call_id"),
        (
            "openai_chat",
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f"}]},
            "type",
        ),
        # Responses: a function_call_output needs call_id.
        ("openai_responses", {"model": "m", "input": [{"type": "function_call_output", "output": "1"}]}, "call_id"),
        # Gemini: functionResponse.response must be an object (E16).
        (
            "gemini",
            {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": 1}}]}]},
            "object",
        ),
    ],
)
def test_documented_violations_are_rejected(wire: str, body: dict[str, object], needle: str) -> None:
    validator = request_schema(wire)
    assert validator is not None
    messages = [e.message for e in validator.iter_errors(body)]
    assert any(needle in m for m in messages), messages


@pytest.mark.parametrize(
    ("wire", "name", "valid"),
    [
        ("openai_chat", "get_weather", True),
        ("openai_chat", "fs.read", False),  # E14: OpenAI rejects '.'
        ("anthropic", "a" * 128, True),  # the API 400 names {1,128} (home-assistant/core#147760)
        ("anthropic", "a" * 129, False),
        ("gemini", "fs.read", True),  # E14: Gemini accepts '.' and ':'
        ("gemini", "1tool", False),  # ... but needs a letter or '_' first
        ("gemini", "a" * 128, True),  # 128 at most (python-genai 29103464, wire-formats.md §4a)
        ("gemini", "a" * 129, False),
    ],
)
def test_name_rules(wire: str, name: str, valid: bool) -> None:
    assert bool(NAME_RULES[wire].match(name)) is valid


def test_a_gemini_inline_data_may_spell_its_mime_type_either_way() -> None:
    """proto3 JSON parsers accept a field's lowerCamelCase name and its original name
    (https://protobuf.dev/programming-guides/json/): ``mime_type`` is ``mimeType``; neither is a defect."""
    validator = request_schema("gemini")
    assert validator is not None
    for key in ("mimeType", "mime_type"):
        part = {"inlineData": {key: "image/png", "data": "iVBORw0KGgo="}}
        body = {"contents": [{"role": "user", "parts": [part]}]}
        assert list(validator.iter_errors(body)) == []
    without = {"contents": [{"role": "user", "parts": [{"inlineData": {"data": "iVBORw0KGgo="}}]}]}
    assert list(validator.iter_errors(without)) != []
