"""The requests a provider refuses get the provider's 4xx and error body from the emulator when it
plays no script (``conformance.emulator._refusals``), judged with each official SDK's own error
parsing (openai and anthropic ``_make_status_error_from_response``, google-genai
``APIError.raise_for_response``, ollama's ``{"error": ...}``); a scripted run still answers them.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google.genai import errors as genai_errors

from conformance.emulator import Emulator, EmulatorScript
from conformance.emulator._refusals import refusal
from conformance.scenarios.values import Reply

_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}

# One base body per wire: a user message, one tool ``get_weather``.
_BASE: dict[str, tuple[str, dict[str, Any]]] = {
    "openai_chat": (
        "/v1/chat/completions",
        {
            "model": "m",
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": _SCHEMA}}],
        },
    ),
    "openai_responses": (
        "/v1/responses",
        {
            "model": "m",
            "input": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "name": "get_weather", "parameters": _SCHEMA}],
        },
    ),
    "anthropic": (
        "/v1/messages",
        {
            "model": "m",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"name": "get_weather", "input_schema": _SCHEMA}],
        },
    ),
    "gemini": (
        "/v1beta/models/m:generateContent",
        {
            "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
            "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": _SCHEMA}]}],
        },
    ),
    "ollama": (
        "/api/chat",
        {
            "model": "m",
            "stream": False,
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": _SCHEMA}}],
        },
    ),
}


def _unknown_tool_choice(wire: str, body: dict[str, Any]) -> dict[str, Any]:
    if wire == "openai_chat":
        body["tool_choice"] = {"type": "function", "function": {"name": "nope"}}
    elif wire == "openai_responses":
        body["tool_choice"] = {"type": "function", "name": "nope"}
    elif wire == "anthropic":
        body["tool_choice"] = {"type": "tool", "name": "nope"}
    elif wire == "gemini":
        body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["nope"]}}
    return body


def _schema_not_object(wire: str, body: dict[str, Any]) -> dict[str, Any]:
    tool = body["tools"][0]
    if wire in ("openai_chat", "ollama"):
        tool["function"]["parameters"] = "a string" if wire == "ollama" else {"type": "string"}
    elif wire == "openai_responses":
        tool["parameters"] = {"type": "string"}
    elif wire == "anthropic":
        tool["input_schema"] = {"type": "string"}
    else:
        tool["functionDeclarations"][0]["parameters"] = {"type": "STRING"}
    return body


def _result_without_call(wire: str, body: dict[str, Any]) -> dict[str, Any]:
    if wire == "openai_chat":
        body["messages"].append({"role": "tool", "tool_call_id": "call_nowhere", "content": "18C"})
    elif wire == "openai_responses":
        body["input"].append({"type": "function_call_output", "call_id": "call_nowhere", "output": "18C"})
    elif wire == "anthropic":
        body["messages"].append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "18C"}]}
        )
    elif wire == "gemini":
        body["contents"].append(
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "18C"}}}]}
        )
    else:
        body["messages"].append({"role": "tool", "tool_name": "get_weather", "content": "18C"})
    return body


_PROBES = {
    "unknown_tool_choice": _unknown_tool_choice,
    "schema_not_object": _schema_not_object,
    "result_without_call": _result_without_call,
}

# (wire, probe) -> the documented message's start (None: the wire documents no refusal; answered 200)
_EXPECTED: dict[tuple[str, str], str | None] = {
    ("openai_chat", "unknown_tool_choice"): "Tool choice 'nope' not found in 'tools' parameter.",
    ("openai_chat", "schema_not_object"): "Invalid schema for function 'get_weather': schema must be a JSON Schema",
    ("openai_chat", "result_without_call"): "Invalid parameter: messages with role 'tool' must be a response",
    ("openai_responses", "unknown_tool_choice"): "Tool choice 'nope' not found in 'tools' parameter.",
    ("openai_responses", "schema_not_object"): "Invalid schema for function 'get_weather'",
    (
        "openai_responses",
        "result_without_call",
    ): "No tool call found for function call output with call_id call_nowhere.",
    ("anthropic", "unknown_tool_choice"): "tool_choice.name: Tool 'nope' not found in provided tools",
    ("anthropic", "schema_not_object"): "tools.0.custom.input_schema.type: Input should be 'object'",
    (
        "anthropic",
        "result_without_call",
    ): "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks",
    ("gemini", "unknown_tool_choice"): "The GenerateContentRequest proto is invalid",
    ("gemini", "schema_not_object"): "The GenerateContentRequest proto is invalid",
    ("gemini", "result_without_call"): "Please ensure that function response turn comes immediately after a function",
    ("ollama", "unknown_tool_choice"): None,
    ("ollama", "schema_not_object"): "json: cannot unmarshal string into Go struct field",
    ("ollama", "result_without_call"): None,
}
_PARAMS = {
    ("openai_chat", "unknown_tool_choice"): "tool_choice",
    ("openai_chat", "schema_not_object"): "tools[0].function.parameters",
    ("openai_chat", "result_without_call"): "messages.[1].role",
    ("openai_responses", "unknown_tool_choice"): "tool_choice",
    ("openai_responses", "schema_not_object"): "tools[0].parameters",
    ("openai_responses", "result_without_call"): "input",
}


_NOT_JSON = {
    "openai_chat": "We could not parse the JSON body of your request. (HINT: This likely means",
    "openai_responses": "We could not parse the JSON body of your request.",
    "anthropic": "The request body is not valid JSON: Expecting value: line 1 column 29 (char 28)",
    "gemini": "Invalid JSON payload received. Unexpected token.\n",
    "ollama": "unexpected EOF",
}


def _body(wire: str, probe: str) -> tuple[str, dict[str, Any]]:
    path, base = _BASE[wire]
    return path, _PROBES[probe](wire, json.loads(json.dumps(base)))


def _sdk_error(wire: str, base_url: str, response: httpx.Response) -> tuple[int, str, Any]:
    """Status, message and the SDK's parsed body, read by the wire's official SDK."""
    if wire in ("openai_chat", "openai_responses"):
        oai = openai.OpenAI(api_key="k", base_url=base_url + "/v1", max_retries=0)
        error = oai._make_status_error_from_response(response)  # type: ignore[arg-type]  # httpx2 types, same API
        body = error.body
        assert isinstance(body, dict)
        assert set(body) == {"message", "type", "param", "code"}
        assert body["type"] == "invalid_request_error"
        return error.status_code, body["message"], body
    if wire == "anthropic":
        ant = anthropic.Anthropic(api_key="k", base_url=base_url, max_retries=0)
        aerr = ant._make_status_error_from_response(response)  # type: ignore[arg-type]  # httpx2 types, same API
        abody = aerr.body
        assert isinstance(abody, dict) and abody["type"] == "error"
        assert abody["error"]["type"] == "invalid_request_error"
        return aerr.status_code, abody["error"]["message"], abody
    if wire == "gemini":
        with pytest.raises(genai_errors.ClientError) as caught:
            genai_errors.APIError.raise_for_response(response)
        assert caught.value.status == "INVALID_ARGUMENT"
        return caught.value.code, str(caught.value.message), caught.value.details
    payload = response.json()  # Ollama: {"error": "..."} (docs/api/errors.mdx)
    assert set(payload) == {"error"}
    return response.status_code, payload["error"], payload


@pytest.mark.parametrize(("wire", "probe"), sorted(_EXPECTED))
def test_a_request_a_provider_refuses_gets_its_status_and_body(
    emu: Emulator, client: httpx.Client, wire: str, probe: str
) -> None:
    path, body = _body(wire, probe)
    response = client.post(path, json=body)
    expected = _EXPECTED[(wire, probe)]
    if expected is None:
        assert response.status_code == 200, response.text  # Ollama documents no such refusal
        return
    assert response.status_code == 400, response.text
    status, message, parsed = _sdk_error(wire, emu.base_url, response)
    assert status == 400
    assert message.startswith(expected), message
    if (wire, probe) in _PARAMS:
        assert parsed["param"] == _PARAMS[(wire, probe)]


@pytest.mark.parametrize("wire", sorted(_BASE))
def test_a_body_that_is_not_json_is_a_400_in_the_wires_error_shape(
    emu: Emulator, client: httpx.Client, wire: str
) -> None:
    path, _ = _BASE[wire]
    response = client.post(path, content=b'{"model": "m", "messages": [', headers={"content-type": "application/json"})
    assert response.status_code == 400
    status, message, parsed = _sdk_error(wire, emu.base_url, response)
    assert status == 400
    assert message.startswith(_NOT_JSON[wire]), message
    if wire.startswith("openai"):
        assert parsed["param"] is None and parsed["code"] is None


@pytest.mark.parametrize("wire", sorted(_BASE))
def test_the_valid_base_request_is_answered(client: httpx.Client, wire: str) -> None:
    path, body = _BASE[wire]
    assert client.post(path, json=body).status_code == 200


def test_a_scripted_run_answers_what_it_is_sent(emu: Emulator, client: httpx.Client) -> None:
    """A script judges the client: its odd request is answered and the checks say what is wrong."""
    emu.set_script(EmulatorScript(scenario_id="s", replies=(Reply(text="ok"), Reply(text="ok"))))
    path, body = _body("openai_chat", "result_without_call")
    assert client.post(path, json=body).status_code == 200


def test_a_tool_choice_without_tools_is_openais_own_400(emu: Emulator, client: httpx.Client) -> None:
    path, body = _body("openai_chat", "unknown_tool_choice")
    del body["tools"]
    response = client.post(path, json=body)
    status, message, parsed = _sdk_error("openai_chat", emu.base_url, response)
    assert status == 400 and parsed["param"] == "tool_choice"
    assert message == "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."


def test_calls_made_earlier_are_answered() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "r"},
        ]
    }
    assert refusal("openai_chat", body, None) is None
    contents = [
        {"role": "user", "parts": [{"text": "x"}]},
        {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "f", "response": {}}}]},
    ]
    assert refusal("gemini", {"contents": contents}, None) is None
    stateful = {"previous_response_id": "resp_1", "input": [{"type": "function_call_output", "call_id": "c"}]}
    assert refusal("openai_responses", stateful, None) is None  # the call is in the stored response
