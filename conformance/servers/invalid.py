"""The deliberately invalid requests a server is asked (pure: builds bytes, sends nothing).

Each probe starts from the reference adapter's request for a basic scenario (one user message,
one tool: ``basic/single_call`` when the run has it), non-streamed, and breaks one documented rule
of the wire. A conforming server answers each with a 4xx and the wire's documented error body
(``conformance.checks.server.error_verdict``); a 200 (the request was not validated) or a 5xx (it
crashed on it) is a defect. Where the wire documents no error for the rule (Ollama has no
``tool_choice``, keys tool results by name, and validates no schema) the probe is not sent and its
case is UNSUPPORTED.

| probe | what is broken | where the rule is written |
|---|---|---|
| ``unknown_tool_choice`` | ``tool_choice`` names a tool the request does not offer | see ``DOCUMENTED`` |
| ``schema_not_object`` | the tool's parameter schema is ``{"type": "string"}`` | see ``DOCUMENTED`` |
| ``result_without_call`` | a tool result answers a call id no assistant message made | see ``DOCUMENTED`` |
| ``body_not_json`` | the body is the first half of the JSON text | every wire's 400 (see ``DOCUMENTED``) |
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.base import Adapter
from conformance.model import Message, Text, ToolResult
from conformance.run.conversation import build_request
from conformance.scenarios.values import Scenario

__all__ = [
    "BASIC_SCENARIO",
    "DOCUMENTED",
    "MISSING_CALL_ID",
    "MISSING_TOOL",
    "PROBES",
    "PROBE_BEHAVIOR",
    "Probe",
    "basic_scenario",
    "forced_tool",
    "offered_tools",
    "probe_id",
    "probe_request",
]

PROBES: tuple[str, ...] = ("unknown_tool_choice", "schema_not_object", "result_without_call", "body_not_json")
"""The invalid-request probes, in the order their cases run."""

BASIC_SCENARIO = "basic/single_call"
"""The scenario whose first request every probe edits (else the first one-tool scenario of the run)."""

MISSING_TOOL = "no_such_tool"
"""The tool ``unknown_tool_choice`` names (the request offers only the scenario's tools)."""

MISSING_CALL_ID = "call_no_such_call"
"""The call id ``result_without_call`` answers (no assistant message made it)."""

PROBE_BEHAVIOR: Mapping[str, str] = {
    "unknown_tool_choice": (
        "A request whose tool_choice names a tool the request does not offer is refused with a 4xx and the wire's "
        "documented error body (not answered, not a 5xx)."
    ),
    "schema_not_object": (
        'A request whose tool\'s parameter schema is not an object schema ({"type": "string"}) is refused with '
        "a 4xx and the wire's documented error body."
    ),
    "result_without_call": (
        "A request holding a tool result for a call id no assistant message made is refused with a 4xx and the "
        "wire's documented error body."
    ),
    "body_not_json": "A request body that is not JSON (cut in half) is refused with a 4xx and the wire's error body.",
}
"""What each probe's case asks of the server (its ``ScenarioInfo.behavior`` in reports)."""

DOCUMENTED: Mapping[str, Mapping[str, str]] = {
    "unknown_tool_choice": {
        "openai_chat": "a named tool_choice must name a function in tools; vLLM's check_tool_usage and SGLang "
        "(sgl-project/sglang#28862) answer 400; OpenAI's 400 envelope for a bad request: wire-formats.md §1e",
        "openai_responses": "tool_choice {type: function, name} names one of tools (openai-python "
        "response_create_params.py ToolChoiceFunction); 400 invalid_request_error: wire-formats.md §2e",
        "anthropic": "tool_choice {type: tool, name} forces 'the tool named' (anthropic-sdk-python "
        "tool_choice_tool_param.py); invalid_request_error 400: wire-formats.md §3e",
        "gemini": "allowedFunctionNames 'should match FunctionDeclaration.name' (google-genai types.py "
        "FunctionCallingConfig); 400 INVALID_ARGUMENT: wire-formats.md §4e",
    },
    "schema_not_object": {
        "openai_chat": "function parameters are 'described as a JSON Schema object' (openai-python "
        "shared_params/function_definition.py); invalid schema -> 400 invalid_request_error: wire-formats.md §1e",
        "openai_responses": "function parameters are 'a JSON schema object' (openai-python "
        "responses/function_tool_param.py); 400: wire-formats.md §2e",
        "anthropic": "input_schema.type must be 'object' (a literal in anthropic-sdk-python tool_param.py; "
        "wire-formats.md §3a); 400 invalid_request_error: §3e",
        "gemini": "parameters are 'in JSON Schema Object format' (google-genai types.py FunctionDeclaration); "
        "400 INVALID_ARGUMENT: wire-formats.md §4e",
    },
    "result_without_call": {
        "openai_chat": "each tool message answers an id of the preceding assistant tool_calls, 400 otherwise "
        "(wire-formats.md §1b)",
        "openai_responses": "a function_call_output answers the call_id of a function_call (openai-python "
        "response_input_item_param.py FunctionCallOutput); 400: wire-formats.md §2e",
        "anthropic": "a stray result: 400 'unexpected tool_use_id found in tool_result blocks' "
        "(wire-formats.md §3b, tghamm/Anthropic.SDK#184)",
        "gemini": "a functionResponse turn comes right after a functionCall turn, 400 otherwise "
        "(wire-formats.md §4b: 'Please ensure that function call turn ...', googleapis/python-genai#81)",
    },
    "body_not_json": {
        "openai_chat": "the request body is JSON; a bad request is 400 with the error envelope (wire-formats.md §1e)",
        "openai_responses": "400 with the error envelope (wire-formats.md §2e)",
        "anthropic": "400 invalid_request_error (wire-formats.md §3e)",
        "gemini": "400 INVALID_ARGUMENT 'Invalid JSON payload received' (wire-formats.md §4a, §4e)",
        "ollama": '400 bad request with {"error": ...} (wire-formats.md §5e, ollama docs/api/errors.mdx)',
    },
}
"""Probe -> wire -> where the wire documents the rule and its error. A wire missing here has no
documented error for the probe (its case is UNSUPPORTED, the probe is not sent)."""


@dataclass(frozen=True, kw_only=True)
class Probe:
    """One invalid request, ready to send: its bytes and what the checks need to know of it."""

    probe: str
    wire: str
    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes
    """The body sent, exactly (``body_not_json``: not JSON)."""
    rule: str
    """The documented rule the request breaks and where it is written (``DOCUMENTED``)."""
    tools: tuple[str, ...] = ()
    forced: str | None = None


def probe_id(probe: str) -> str:
    """The scenario id of a probe's case (``server/invalid/<probe>``)."""
    return f"server/invalid/{probe}"


def basic_scenario(scenarios: list[Scenario] | tuple[Scenario, ...]) -> Scenario | None:
    """The scenario the probes edit: ``BASIC_SCENARIO`` when given, else the first one whose first
    turn has a user message and which offers exactly one inline tool; None when there is none."""
    plain = [s for s in scenarios if s.mcp is None and len(s.tools) == 1 and s.turns and s.turns[0].user]
    return next((s for s in plain if s.id == BASIC_SCENARIO), plain[0] if plain else None)


def probe_request(probe: str, adapter: Adapter, scenario: Scenario, *, model: str) -> Probe | None:
    """The invalid request ``probe`` for ``adapter``'s wire, edited from its request for the first
    turn of ``scenario``; None when the wire documents no error for it (``DOCUMENTED``)."""
    wire = adapter.wire_format
    rule = DOCUMENTED.get(probe, {}).get(wire)
    if rule is None:
        return None
    user = Message(role="user", parts=scenario.turns[0].user)
    messages = [user]
    if probe == "result_without_call":
        tool = scenario.tools[0].name
        result = ToolResult(call_id=MISSING_CALL_ID, content=(Text(text="18C"),), name=tool)
        messages = [user, Message(role="tool", parts=(result,))]
    request = build_request(scenario, messages, model=model, stream=False)
    sent = adapter.request_to_wire(request)
    body: Any = json.loads(json.dumps(sent.body))  # a deep copy to edit
    if probe == "unknown_tool_choice":
        _name_missing_tool(wire, body)
    elif probe == "schema_not_object":
        _string_schema(wire, body)
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    if probe == "body_not_json":
        raw = raw[: len(raw) // 2]
    return Probe(
        probe=probe,
        wire=wire,
        method=sent.method,
        path=sent.path,
        headers=dict(sent.headers),
        body=raw,
        rule=rule,
        tools=offered_tools(wire, body),
        forced=forced_tool(wire, body),
    )


def _name_missing_tool(wire: str, body: dict[str, Any]) -> None:
    if wire == "openai_chat":
        body["tool_choice"] = {"type": "function", "function": {"name": MISSING_TOOL}}
    elif wire == "openai_responses":
        body["tool_choice"] = {"type": "function", "name": MISSING_TOOL}
    elif wire == "anthropic":
        body["tool_choice"] = {"type": "tool", "name": MISSING_TOOL}
    elif wire == "gemini":
        body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [MISSING_TOOL]}}


def _string_schema(wire: str, body: dict[str, Any]) -> None:
    tools = body.get("tools") or []
    if not tools:
        return
    schema = {"type": "string", "description": "not an object schema"}
    if wire == "openai_chat":
        tools[0]["function"]["parameters"] = schema
    elif wire == "openai_responses":
        tools[0]["parameters"] = schema
    elif wire == "anthropic":
        tools[0]["input_schema"] = schema
    elif wire == "gemini":
        tools[0]["functionDeclarations"][0]["parameters"] = schema


def offered_tools(wire: str, body: Any) -> tuple[str, ...]:
    """The tool names a request body offers, as the wire spells them (Chat and Ollama
    ``tools[].function.name``, Responses and Anthropic ``tools[].name``, Gemini
    ``tools[].functionDeclarations[].name``: wire-formats.md §1a-§5a)."""
    tools = body.get("tools") if isinstance(body, Mapping) else None
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        if wire in ("openai_chat", "ollama"):
            inner = tool.get("function")
            name = inner.get("name") if isinstance(inner, Mapping) else None
            names += [name] if isinstance(name, str) else []
        elif wire == "gemini":
            declarations = tool.get("functionDeclarations")
            for declaration in declarations if isinstance(declarations, list) else []:
                name = declaration.get("name") if isinstance(declaration, Mapping) else None
                names += [name] if isinstance(name, str) else []
        elif isinstance(tool.get("name"), str):
            names.append(tool["name"])
    return tuple(names)


def forced_tool(wire: str, body: Any) -> str | None:
    """The one tool a request's tool choice names (Chat ``tool_choice.function.name``, Responses
    ``tool_choice.name``, Anthropic ``tool_choice {type: tool, name}``, Gemini a single
    ``allowedFunctionNames`` in mode ANY), or None."""
    if not isinstance(body, Mapping):
        return None
    choice = body.get("tool_choice")
    if wire == "openai_chat" and isinstance(choice, Mapping):
        inner = choice.get("function")
        name = inner.get("name") if isinstance(inner, Mapping) else None
        return name if isinstance(name, str) else None
    if wire in ("openai_responses", "anthropic") and isinstance(choice, Mapping):
        if choice.get("type") in ("function", "tool") and isinstance(choice.get("name"), str):
            return str(choice["name"])
        return None
    if wire == "gemini":
        config = body.get("toolConfig")
        calling = config.get("functionCallingConfig") if isinstance(config, Mapping) else None
        names = calling.get("allowedFunctionNames") if isinstance(calling, Mapping) else None
        if isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
            return names[0]
    return None
