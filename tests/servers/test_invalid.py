"""The invalid-request probes (``conformance.servers.invalid``): each breaks one documented rule of
its wire in the reference adapter's request, and nothing else.

Expected shapes come from the SDK request types: openai-python ``ChatCompletionNamedToolChoiceParam``
(``{"type": "function", "function": {"name"}}``) and ``ToolChoiceFunctionParam`` (Responses:
``{"type": "function", "name"}``), anthropic ``ToolChoiceToolParam`` (``{"type": "tool", "name"}``),
google-genai ``FunctionCallingConfig`` (``mode`` ANY, ``allowedFunctionNames``).
"""

from __future__ import annotations

import json

import pytest

from conformance.adapters import get_adapter
from conformance.scenarios.loader import load_scenarios
from conformance.servers.invalid import (
    DOCUMENTED,
    MISSING_CALL_ID,
    MISSING_TOOL,
    PROBES,
    basic_scenario,
    forced_tool,
    offered_tools,
    probe_id,
    probe_request,
)

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
ALL = load_scenarios().scenarios
BASIC = basic_scenario(ALL)


def test_the_probes_edit_basic_single_call() -> None:
    assert BASIC is not None and BASIC.id == "basic/single_call"
    assert probe_id("body_not_json") == "server/invalid/body_not_json"
    assert basic_scenario([]) is None


@pytest.mark.parametrize("wire", WIRES)
def test_each_probe_breaks_one_rule_and_keeps_the_rest(wire: str) -> None:
    assert BASIC is not None
    adapter = get_adapter(wire)
    for probe in PROBES:
        built = probe_request(probe, adapter, BASIC, model="m")
        if wire not in DOCUMENTED[probe]:
            assert built is None, (wire, probe)
            continue
        assert built is not None and built.rule == DOCUMENTED[probe][wire]
        assert built.method == "POST" and built.path.startswith("/")
        if probe == "body_not_json":
            with pytest.raises(ValueError):
                json.loads(built.body)
            continue
        body = json.loads(built.body)
        assert offered_tools(wire, body) == built.tools == ("get_weather",)
        if probe == "unknown_tool_choice":
            assert forced_tool(wire, body) == built.forced == MISSING_TOOL
            assert MISSING_TOOL not in built.tools
        elif probe == "schema_not_object":
            assert json.dumps({"type": "string", "description": "not an object schema"}) in json.dumps(body)
        elif probe == "result_without_call":
            assert MISSING_CALL_ID in built.body.decode() or wire == "gemini"  # Gemini keys results by name
            assert b"functionResponse" in built.body if wire == "gemini" else True


def test_the_edits_in_each_wires_own_fields() -> None:
    assert BASIC is not None
    chosen = {
        wire: json.loads(built.body)
        for wire in ("openai_chat", "openai_responses", "anthropic", "gemini")
        if (built := probe_request("unknown_tool_choice", get_adapter(wire), BASIC, model="m")) is not None
    }
    assert chosen["openai_chat"]["tool_choice"] == {"type": "function", "function": {"name": MISSING_TOOL}}
    assert chosen["openai_responses"]["tool_choice"] == {"type": "function", "name": MISSING_TOOL}
    assert chosen["anthropic"]["tool_choice"] == {"type": "tool", "name": MISSING_TOOL}
    assert chosen["gemini"]["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [MISSING_TOOL]}
    }
    schemas = {
        wire: json.loads(built.body)
        for wire in ("openai_chat", "openai_responses", "anthropic", "gemini")
        if (built := probe_request("schema_not_object", get_adapter(wire), BASIC, model="m")) is not None
    }
    assert schemas["openai_chat"]["tools"][0]["function"]["parameters"]["type"] == "string"
    assert schemas["openai_responses"]["tools"][0]["parameters"]["type"] == "string"
    assert schemas["anthropic"]["tools"][0]["input_schema"]["type"] == "string"
    assert schemas["gemini"]["tools"][0]["functionDeclarations"][0]["parameters"]["type"] == "string"


def test_reading_tools_and_the_forced_one_from_any_body() -> None:
    assert offered_tools("openai_chat", None) == ()
    assert offered_tools("gemini", {"tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}]}) == ("a", "b")
    assert forced_tool("openai_chat", {"tool_choice": "required"}) is None
    assert forced_tool("anthropic", {"tool_choice": {"type": "any"}}) is None
    assert (
        forced_tool("gemini", {"toolConfig": {"functionCallingConfig": {"allowedFunctionNames": ["a", "b"]}}}) is None
    )
