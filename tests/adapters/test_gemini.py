"""``conformance.adapters.gemini``: the adapter value and tools (declarations, names, tool choice).

Expected values come from the documented wire shapes: wire-formats.md §4a and §8 (google-genai
``types.py``: ``FunctionDeclaration``, ``FunctionCallingConfigMode``), never from the adapter's own
output. Requests are in ``test_gemini_requests.py``, responses and errors in
``test_gemini_responses.py``, streams in ``test_gemini_stream.py``, the schema conversion in
``test_gemini_schema.py``, real traffic in ``test_gemini_realworld.py``.

Edge cases of wire-formats.md §10 covered in this file:
- E14 MCP names with ``.``, ``/``, a leading digit, > 128 chars: test_mcp_names_*
- E15 (on the wire request) schema changes are reported: test_schema_changes_are_reported_on_the_wire_request,
      test_parameters_outside_the_subset_are_converted_the_other_documented_normalisation
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from deepdiff import DeepDiff

from conformance.adapters import detect_adapter, get_adapter
from conformance.adapters import gemini as adapter
from conformance.adapters.base import CAPABILITIES
from conformance.errors import UnsupportedContentError
from conformance.model import (
    Message,
    Request,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)

NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$")  # §4a, E14
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool(name="get_weather", description="Weather of a city", input_schema=SCHEMA)
TIME = Tool(name="get_time", description="Time in a zone", input_schema={"type": "object", "properties": {}})
USER = Message(role="user", parts=(Text(text="Weather in Paris?"),))


def _body(request: Request) -> dict[str, Any]:
    return adapter.request_to_wire(request).body


def _reply(*parts: dict[str, Any], finish: Any = "STOP", **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


# --------------------------------------------------------------------------------------------
# Adapter value
# --------------------------------------------------------------------------------------------


def test_the_registry_serves_this_module_and_capabilities_are_declared() -> None:
    assert get_adapter("gemini") is adapter.ADAPTER
    assert adapter.ADAPTER.wire_format == "gemini"
    assert adapter.capabilities <= CAPABILITIES
    assert adapter.capabilities == {
        "streaming",
        "parallel_tool_calls",
        "tool_choice_auto",
        "tool_choice_none",
        "tool_choice_required",
        "tool_choice_named",
        "is_error_in_tool_results",
        "reasoning_replay",
        "system_prompt",
        "images_in_tool_results",
        # issue 28: generationConfig.thinkingConfig (thinkingLevel, thinkingBudget, 0 = off)
        "reasoning_effort",
        "reasoning_budget",
        "reasoning_off",
    }
    # no parallel switch exists (§4a) and ids are usually synthetic (§4b)
    assert "disable_parallel_tool_calls" not in adapter.capabilities and "call_ids" not in adapter.capabilities


@pytest.mark.parametrize(
    "url",
    [
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent",
        "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse",
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/m:generateContent",
    ],
)
def test_generate_content_urls_route_here(url: str) -> None:
    assert detect_adapter(url) == "gemini"


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def test_tools_go_out_as_function_declarations() -> None:
    wire = adapter.tools_to_wire([WEATHER, TIME])
    assert wire.tools == [
        {
            "functionDeclarations": [
                {"name": "get_weather", "description": "Weather of a city", "parameters": SCHEMA},
                {"name": "get_time", "description": "Time in a zone", "parameters": TIME.input_schema},
            ]
        }
    ]
    assert wire.changes == ()
    assert adapter.tools_to_wire([]).tools == []


def test_schema_changes_are_reported_on_the_wire_request() -> None:
    # MCP's recommended no-argument schema (§7a) carries additionalProperties, which Gemini rejects (E15)
    tool = Tool(name="ping", input_schema={"type": "object", "additionalProperties": False})
    wire = adapter.request_to_wire(Request(model="m", messages=(USER,), tools=(tool,)))
    assert wire.body["tools"][0]["functionDeclarations"][0]["parameters"] == {"type": "object"}
    (change,) = wire.schema_changes
    assert (change.tool, change.pointer, change.action) == ("ping", "/additionalProperties", "dropped")


def test_mcp_names_go_out_valid_and_come_back_via_tools() -> None:
    tools = [
        Tool(name="admin.tools.list"),  # dots are fine on Gemini (E14)
        Tool(name="fs/read_file"),
        Tool(name="9lives"),  # must start with a letter or underscore
        Tool(name="x" * 100),  # <= 128 is fine on Gemini, unlike OpenAI/Anthropic
        Tool(name="y" * 140),
    ]
    wire = adapter.tools_to_wire(tools)
    names = [d["name"] for d in wire.tools[0]["functionDeclarations"]]
    assert all(NAME_RE.fullmatch(n) for n in names)
    assert names[0] == "admin.tools.list" and names[3] == "x" * 100
    assert len(set(names)) == len(names)
    reply = _reply(*({"functionCall": {"name": n, "args": {}}} for n in names))
    assert [c.name for c in adapter.response_from_wire(reply, tools=tools).tool_calls] == [t.name for t in tools]
    assert [c.name for c in adapter.response_from_wire(reply).tool_calls] == names  # no tools: wire names


def test_mcp_names_are_mapped_in_history_results_and_named_tool_choice() -> None:
    tool = Tool(name="fs/read")
    request = Request(
        messages=(
            USER,
            Message(role="assistant", parts=(ToolCall(id="c1", name="fs/read", arguments={}),)),
            Message(role="tool", parts=(ToolResult(call_id="c1", name="fs/read", content=(Text(text="x"),)),)),
        ),
        tools=(tool,),
        tool_choice="fs/read",
    )
    body = _body(request)
    assert body["contents"][1]["parts"][0]["functionCall"]["name"] == "fs_read"
    assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == "fs_read"
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["fs_read"]}}
    back = adapter.request_from_wire(body, tools=[tool])
    assert back.tool_choice == "fs/read" and back.tools[0].name == "fs/read"
    assert back.messages[1].parts[0].name == "fs/read"  # type: ignore[union-attr]
    assert back.messages[2].parts[0].name == "fs/read"  # type: ignore[union-attr]


def test_a_parameters_json_schema_tool_is_forwarded_untouched() -> None:
    # §4a: parametersJsonSchema is raw JSON Schema; google-genai forwards it as is
    schema = {"type": "object", "additionalProperties": False, "properties": {"k": {"const": 3}}}
    body = {
        "contents": [],
        "tools": [{"functionDeclarations": [{"name": "t", "parametersJsonSchema": schema}]}],
    }
    request = adapter.request_from_wire(body)
    assert request.tools[0].input_schema == schema
    wire = adapter.request_to_wire(request)
    assert wire.body == body and wire.schema_changes == ()


def test_declaration_fields_the_model_does_not_cover_round_trip() -> None:
    declaration = {
        "name": "t",
        "description": None,  # llm-gemini sends a null description
        "parameters": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
        "response": {"type": "STRING"},
        "behavior": "NON_BLOCKING",
    }
    body = {"contents": [], "tools": [{"functionDeclarations": [declaration]}, {"googleSearch": {}}]}
    request = adapter.request_from_wire(body)
    (tool,) = request.tools
    assert tool.description is None and tool.input_schema == declaration["parameters"]
    assert DeepDiff(body, _body(request)) == {}


def test_several_function_declaration_entries_merge_into_one_the_documented_normalisation() -> None:
    body = {
        "contents": [],
        "tools": [
            {"functionDeclarations": [{"name": "a", "parameters": {"type": "object"}}]},
            {"functionDeclarations": [{"name": "b", "parameters": {"type": "object"}}]},
        ],
    }
    diff = DeepDiff(body, _body(adapter.request_from_wire(body)))
    assert diff == {
        "iterable_item_removed": {
            "root['tools'][1]": {"functionDeclarations": [{"name": "b", "parameters": {"type": "object"}}]}
        },
        "iterable_item_added": {
            "root['tools'][0]['functionDeclarations'][1]": {"name": "b", "parameters": {"type": "object"}}
        },
    }


def test_parameters_outside_the_subset_are_converted_the_other_documented_normalisation() -> None:
    # a body the API would reject (E15: additionalProperties in parameters) comes back converted
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "additionalProperties": False}
    body = {"contents": [], "tools": [{"functionDeclarations": [{"name": "t", "parameters": schema}]}]}
    wire = adapter.request_to_wire(adapter.request_from_wire(body))
    assert DeepDiff(body, wire.body) == {
        "dictionary_item_added": [
            "root['tools'][0]['functionDeclarations'][0]['parameters']['properties']['a']['nullable']"
        ],
        "dictionary_item_removed": [
            "root['tools'][0]['functionDeclarations'][0]['parameters']['additionalProperties']"
        ],
        "type_changes": {
            "root['tools'][0]['functionDeclarations'][0]['parameters']['properties']['a']['type']": {
                "old_type": list,
                "new_type": str,
                "old_value": ["string", "null"],
                "new_value": "string",
            }
        },
    }
    assert [(c.pointer, c.action) for c in wire.schema_changes] == [
        ("/properties/a/type", "changed"),
        ("/additionalProperties", "dropped"),
    ]


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("get_time", {"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
    ],
)
def test_tool_choice_mapping(choice: str, config: dict[str, Any]) -> None:
    # §8: auto -> AUTO, required -> ANY, none -> NONE, named -> ANY + allowedFunctionNames
    request = Request(model="m", messages=(USER,), tools=(WEATHER, TIME), tool_choice=choice)
    body = _body(request)
    assert body["toolConfig"] == {"functionCallingConfig": config}
    assert adapter.request_from_wire(body).tool_choice == choice


def test_no_tool_choice_sends_no_tool_config() -> None:
    assert "toolConfig" not in _body(Request(model="m", messages=(USER,), tools=(WEATHER,)))


def test_any_with_several_allowed_names_and_validated_mode_round_trip() -> None:
    for config in (
        {"mode": "ANY", "allowedFunctionNames": ["get_weather", "get_time"]},  # pydantic-ai's form
        {"mode": "VALIDATED"},  # GG-SDK FunctionCallingConfigMode
        {"mode": "AUTO", "allowedFunctionNames": ["get_time"]},
    ):
        body = {"contents": [], "toolConfig": {"functionCallingConfig": config}}
        request = adapter.request_from_wire(body)
        assert request.tool_choice == {"ANY": "required", "AUTO": "auto"}.get(config["mode"])
        assert _body(request) == body


def test_disabling_parallel_calls_cannot_be_expressed() -> None:
    # §4a: "No parallel-calls switch exists"
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(model="m", messages=(USER,), tools=(WEATHER,), parallel_tool_calls=False))
    assert "parallel" not in str(_body(Request(model="m", messages=(USER,), parallel_tool_calls=True)))
