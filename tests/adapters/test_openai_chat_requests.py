"""``openai_chat`` tools, requests, round trips and errors, on small hand-made wire data.

Wire facts: wire-formats.md §1a/§1b/§1e and §8 (openai-python ``types/chat/*_param.py``:
``ChatCompletionToolMessageParam`` takes a string or text parts only and has no error flag,
``ChatCompletionFunctionMessageParam{role: "function", name, content}``, ``function_call`` is
``"none" | "auto" | {"name"}`` with no ``"required"``; ``_base_client.py`` reads ``retry-after-ms``
before ``retry-after``; the ``error`` object is ``{message, type, param, code}``).

Edge cases: E14 (name sanitation both ways), E25 (Mistral ``tool_choice: "any"``), E35 (legacy
``functions``/``function_call`` and ``role: "function"`` results). The documented round-trip
normalisation (a tool without ``parameters``) is asserted exactly with deepdiff.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from deepdiff import DeepDiff

from conformance.adapters import detect_adapter, get_adapter
from conformance.adapters import openai_chat as adapter
from conformance.adapters._tool_output import left_out_note, placeholder_text
from conformance.adapters.base import CAPABILITIES
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    Audio,
    Image,
    Message,
    Reasoning,
    Request,
    Resource,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # §1a, the server's own pattern
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def round_trip(body: dict[str, Any]) -> dict[str, Any]:
    return adapter.request_to_wire(adapter.request_from_wire(body)).body


# --------------------------------------------------------------------------------------------
# Tools (§1a) and names (E14)
# --------------------------------------------------------------------------------------------


def test_tools_go_out_in_the_nested_function_shape() -> None:
    wire = adapter.tools_to_wire([Tool(name="get_weather", description="Weather.", input_schema=SCHEMA)])
    assert wire.tools == [
        {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": SCHEMA}}
    ]
    assert wire.changes == ()


def test_mcp_names_go_out_valid_and_come_back_as_the_original() -> None:
    long = "srv." + "x" * 80
    tools = (Tool(name="admin.tools.list"), Tool(name="fs/read"), Tool(name=long), Tool(name="ok_name-1"))
    wire = adapter.tools_to_wire(tools)
    names = [t["function"]["name"] for t in wire.tools]
    assert all(WIRE_NAME.match(n) for n in names) and len(set(names)) == 4
    assert names[3] == "ok_name-1"  # a valid name is left alone
    request = Request(model="m", tools=tools, tool_choice=long)
    body = adapter.request_to_wire(request).body
    assert body["tool_choice"] == {"type": "function", "function": {"name": names[2]}}
    back = adapter.request_from_wire(body, tools=tools)
    assert [t.name for t in back.tools] == [t.name for t in tools] and back.tool_choice == long
    # and a response naming the wire tool maps back too
    reply = {
        "id": "r",
        "choices": [{"message": {"tool_calls": [_call("c1", names[0], "{}")]}, "finish_reason": "tool_calls"}],
    }
    assert adapter.response_from_wire(reply, tools=tools).tool_calls[0].name == "admin.tools.list"


def test_an_empty_schema_becomes_an_empty_object_schema_and_says_so() -> None:
    wire = adapter.tools_to_wire([Tool(name="noop", input_schema={})])
    assert wire.tools[0]["function"]["parameters"] == {"type": "object", "properties": {}}
    (change,) = wire.changes
    assert change.tool == "noop"


def test_wire_only_tool_fields_round_trip() -> None:
    tool = {
        "type": "function",
        "function": {"name": "f", "description": "d", "strict": True, "parameters": {"type": "object"}},
    }
    assert round_trip({"model": "m", "messages": [], "tools": [tool]}) == {
        "model": "m",
        "messages": [],
        "tools": [tool],
    }


# --------------------------------------------------------------------------------------------
# tool_choice and parallel calls (§8)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_mapping(choice: str, wire: Any) -> None:
    tools = (Tool(name="get_weather", input_schema=SCHEMA),)
    body = adapter.request_to_wire(Request(model="m", tools=tools, tool_choice=choice)).body
    assert body["tool_choice"] == wire
    assert adapter.request_from_wire(body).tool_choice == choice


def test_parallel_tool_calls_off() -> None:
    body = adapter.request_to_wire(Request(model="m", parallel_tool_calls=False)).body
    assert body["parallel_tool_calls"] is False
    assert adapter.request_from_wire(body).parallel_tool_calls is False


def test_mistral_any_reads_as_required_and_goes_back_as_any() -> None:
    body = {"model": "mistral-small-latest", "messages": [], "tool_choice": "any"}  # E25
    assert adapter.request_from_wire(body).tool_choice == "required"
    assert round_trip(body) == body


@pytest.mark.parametrize(
    "choice",
    [
        {
            "type": "allowed_tools",
            "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "a"}}]},
        },
        {"type": "custom", "custom": {"name": "grammar"}},
        "validated",
    ],
)
def test_tool_choices_without_a_unified_word_are_kept_as_sent(choice: Any) -> None:
    body = {"model": "m", "messages": [], "tool_choice": choice}
    assert adapter.request_from_wire(body).tool_choice is None
    assert round_trip(body) == body


# --------------------------------------------------------------------------------------------
# Request round trips (JSON-equal, or the documented normalisation exactly)
# --------------------------------------------------------------------------------------------


def _call(id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_body_using_every_message_shape_round_trips() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
            {"role": "user", "content": "Plain", "name": "alice"},
            {"role": "assistant", "content": "", "tool_calls": [_call("c1", "f", '{"a": 1}'), _call("c2", "g", "{}")]},
            {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "one"},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "Error: two"}]},
            {"role": "assistant", "tool_calls": [_call("c3", "f", "not json")]},
            {"role": "tool", "tool_call_id": "c3", "content": ""},
            {"role": "system", "content": "A later system message."},
            {"role": "assistant", "content": None, "refusal": "I can't."},
            {"role": "user", "content": "Ok."},
            {"role": "assistant", "content": [{"type": "text", "text": "parts"}]},
            {"role": "assistant", "content": "Done."},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "tool_choice": "required",
        "parallel_tool_calls": True,
        "stream": False,
        "max_completion_tokens": 100,
        "max_tokens": 50,
        "temperature": 0,
        "stream_options": {"include_usage": True},
        "response_format": {"type": "text"},
    }
    assert DeepDiff(body, round_trip(body)) == {}
    request = adapter.request_from_wire(body)
    assert request.system == "Be brief." and request.max_tokens == 100
    (bad,) = [p for p in request.messages[4].parts if isinstance(p, ToolCall)]
    assert bad.arguments is None and bad.arguments_error and bad.arguments_raw == "not json"


def test_the_documented_normalisation_a_tool_without_parameters() -> None:
    # module docstring: a missing or empty `parameters` goes out as an empty object schema
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "function": {"name": "a"}},
            {"type": "function", "function": {"name": "b", "parameters": {}}},
        ],
    }
    empty_object = {"type": "object", "properties": {}}
    assert DeepDiff(body, round_trip(body)).to_dict() == {
        "dictionary_item_added": ["root['tools'][0]['function']['parameters']"],
        "values_changed": {"root['tools'][1]['function']['parameters']": {"new_value": empty_object, "old_value": {}}},
    }


def test_legacy_functions_request_round_trips() -> None:
    # E35: functions + function_call, an assistant function_call and its role "function" result
    body = {
        "model": "gpt-3.5-turbo",
        "messages": [
            {"role": "user", "content": "Extract."},
            {"role": "assistant", "content": None, "function_call": {"name": "extract", "arguments": '{"a": 1}'}},
            {"role": "function", "name": "extract", "content": "ok"},
            {"role": "assistant", "content": "", "function_call": {"name": "extract", "arguments": "{}"}},
            {"role": "function", "name": "extract", "content": "Error: bad"},
        ],
        "functions": [{"name": "extract", "description": "d", "parameters": {"type": "object"}}],
        "function_call": {"name": "extract"},
    }
    assert DeepDiff(body, round_trip(body)) == {}
    request = adapter.request_from_wire(body)
    assert request.tool_choice == "extract"
    (call,) = request.messages[1].parts
    (result,) = request.messages[2].parts
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
    assert result.call_id == call.id and result.name == "extract"  # paired: the wire has no ids
    (second_call,) = request.messages[3].parts
    (second,) = request.messages[4].parts
    assert isinstance(second_call, ToolCall) and isinstance(second, ToolResult)
    assert second.call_id == second_call.id != call.id and second.is_error
    for choice in ("auto", "none"):
        assert round_trip(body | {"function_call": choice}) == body | {"function_call": choice}


def test_legacy_functions_have_no_required_choice() -> None:
    request = adapter.request_from_wire({"model": "m", "messages": [], "functions": [{"name": "f"}]})
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(
            Request(model="m", tools=request.tools, tool_choice="required", provider_details=request.provider_details)
        )


def test_unknown_roles_are_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError):
        adapter.request_from_wire({"model": "m", "messages": [{"role": "robot", "content": "x"}]})
    with pytest.raises(WireFormatError):
        adapter.request_from_wire([])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Unified -> wire -> unified identity
# --------------------------------------------------------------------------------------------

TOOLS = (
    Tool(name="weather.get", description="Weather.", input_schema=SCHEMA),
    Tool(name="clock", input_schema={"type": "object", "properties": {}}),
)


def _conversation(results: tuple[ToolResult, ...]) -> Request:
    calls = (
        ToolCall(id="call_1", name="weather.get", arguments={"city": "Zürich"}),
        ToolCall(id="call_2", name="clock", arguments={}),
    )
    return Request(
        model="gpt-4o",
        system="sys",
        messages=(
            Message(role="user", parts=(Text(text="Weather and time?"),)),
            Message(role="assistant", parts=(Text(text="Checking."), *calls)),
            Message(role="tool", parts=results),
        ),
        tools=TOOLS,
        tool_choice="weather.get",
        parallel_tool_calls=False,
        max_tokens=64,
    )


def _there_and_back(request: Request) -> Request:
    return adapter.request_from_wire(adapter.request_to_wire(request).body, tools=request.tools)


def test_tools_calls_ids_arguments_and_results_survive_the_trip() -> None:
    results = (
        ToolResult(call_id="call_1", content=(Text(text="18C"),)),
        ToolResult(call_id="call_2", content=(Text(text="clock broke"),), is_error=True),
    )
    request = _conversation(results)
    back = _there_and_back(request)
    assert [(t.name, t.description, dict(t.input_schema)) for t in back.tools] == [
        (t.name, t.description, dict(t.input_schema)) for t in TOOLS
    ]
    assert (back.model, back.system, back.tool_choice, back.parallel_tool_calls, back.max_tokens) == (
        "gpt-4o",
        "sys",
        "weather.get",
        False,
        64,
    )
    sent_calls = [p for p in request.messages[1].parts if isinstance(p, ToolCall)]
    got_calls = [p for p in back.messages[1].parts if isinstance(p, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in got_calls] == [(c.id, c.name, c.arguments) for c in sent_calls]
    assert back.messages[1].parts[0] == Text(text="Checking.")
    got = [p for p in back.messages[2].parts if isinstance(p, ToolResult)]
    assert [(r.call_id, r.content, r.is_error) for r in got] == [(r.call_id, r.content, r.is_error) for r in results]


def test_is_error_travels_as_the_error_prefix() -> None:
    results = (ToolResult(call_id="call_1", content=(Text(text="boom"),), is_error=True),)
    messages = adapter.request_to_wire(_conversation(results)).body["messages"]
    assert messages[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "Error: boom"}


@pytest.mark.parametrize(
    "result",
    [
        ToolResult(call_id="call_1", content=(Text(text="Error: already prefixed"),), is_error=True),
        ToolResult(call_id="call_1", content=(Text(text="a"), Text(text="b")), is_error=True),
        ToolResult(call_id="call_1", content=(Text(text="a"), Text(text="b"))),
        ToolResult(call_id="call_1", content=(), is_error=True),
        ToolResult(call_id="call_1", content=()),
    ],
)
def test_result_content_and_is_error_identity(result: ToolResult) -> None:
    back = _there_and_back(_conversation((result,)))
    (got,) = back.messages[2].parts
    assert isinstance(got, ToolResult)
    assert (got.call_id, got.content, got.is_error) == (result.call_id, result.content, result.is_error)


def test_is_error_false_with_the_prefix_is_the_one_ambiguity() -> None:
    # the wire has no flag (§1b): a successful result whose text starts with "Error: " reads back as an error
    result = ToolResult(call_id="call_1", content=(Text(text="Error: none, all fine"),))
    (got,) = _there_and_back(_conversation((result,))).messages[2].parts
    assert isinstance(got, ToolResult) and got.is_error and got.content == (Text(text="none, all fine"),)


def test_text_resources_travel_as_text() -> None:
    result = ToolResult(call_id="call_1", content=(Resource(uri="file:///a.txt", text="hello"),))
    messages = adapter.request_to_wire(_conversation((result,))).body["messages"]
    assert messages[-1]["content"] == "hello"


@pytest.mark.parametrize(
    "item",
    [
        Image(media_type="image/png", data="iVBORw0KGgo="),
        Audio(media_type="audio/wav", data="UklGRg=="),
        Resource(uri="file:///a.bin", blob="AAEC"),
    ],
)
def test_content_a_tool_message_cannot_carry_is_a_placeholder_with_a_note(item: Any) -> None:
    # §1b: the tool message takes text (parts) only; never dropped silently (docs/mcp.md)
    result = ToolResult(call_id="call_1", content=(Text(text="see"), item))
    wire = adapter.request_to_wire(_conversation((result,)))
    sent = [{"type": "text", "text": "see"}, {"type": "text", "text": placeholder_text(item)}]
    assert wire.body["messages"][-1]["content"] == sent
    assert wire.notes == (left_out_note(result, 1, item, "openai_chat"),)


@pytest.mark.parametrize(
    "message",
    [
        Message(role="assistant", parts=(Image(url="https://x/y.png"),)),
        Message(role="assistant", parts=(ToolResult(call_id="c"),)),
        Message(role="user", parts=(ToolCall(id="c", name="f", arguments={}),)),
        Message(role="tool", parts=(Text(text="not a result"),)),
    ],
)
def test_parts_a_message_cannot_carry_are_refused(message: Message) -> None:
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(model="m", messages=(message,)))


def test_reasoning_is_not_replayed_and_raw_arguments_are_replayed_verbatim() -> None:
    call = ToolCall(id="c1", name="f", arguments={"a": 1}, arguments_raw='{"a":  1}')
    message = Message(role="assistant", parts=(Reasoning(text="hmm", signature="s"), call))
    (wire,) = adapter.request_to_wire(Request(model="m", messages=(message,))).body["messages"]
    assert wire == {"role": "assistant", "content": None, "tool_calls": [_call("c1", "f", '{"a":  1}')]}


# --------------------------------------------------------------------------------------------
# Errors (§1e)
# --------------------------------------------------------------------------------------------


def _error(code: str | None, type_: str = "invalid_request_error", message: str = "msg") -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


@pytest.mark.parametrize(
    ("status", "body", "kind", "code"),
    [
        (400, _error("invalid_value"), "invalid_request", "invalid_value"),
        (400, _error(None), "invalid_request", "invalid_request_error"),
        (400, _error("context_length_exceeded"), "context_length", "context_length_exceeded"),
        (401, _error("invalid_api_key"), "auth", "invalid_api_key"),
        (
            403,
            _error("unsupported_country_region_territory", "request_forbidden"),
            "permission",
            "unsupported_country_region_territory",
        ),
        (404, _error("model_not_found"), "not_found", "model_not_found"),
        (429, _error("rate_limit_exceeded", "requests"), "rate_limit", "rate_limit_exceeded"),
        (429, _error("insufficient_quota", "insufficient_quota"), "rate_limit", "insufficient_quota"),
        (500, _error(None, "server_error"), "server", "server_error"),
        (503, _error(None, "server_error"), "overloaded", "server_error"),
        (
            429,
            {"error": {"code": "429", "message": "Requests ... Please retry after 20 seconds."}},
            "rate_limit",
            "429",
        ),
    ],
)
def test_error_statuses_and_codes(status: int, body: dict[str, Any], kind: str, code: str | None) -> None:
    for raw in (body, json.dumps(body), json.dumps(body).encode()):
        error = adapter.error_from_wire(status, {}, raw)
        assert (error.status, error.kind) == (status, kind)
        assert error.message == body["error"]["message"]
        if code is not None:
            assert error.info.code == code


def test_retry_after_headers() -> None:
    body = _error("rate_limit_exceeded", "requests")
    assert adapter.error_from_wire(429, {"retry-after": "20"}, body).retry_after == 20.0
    assert adapter.error_from_wire(429, {"Retry-After-Ms": "1500"}, body).retry_after == 1.5
    both = {"retry-after": "20", "retry-after-ms": "250"}  # _base_client.py: retry-after-ms first
    assert adapter.error_from_wire(429, both, body).retry_after == 0.25
    dated = {"retry-after": "Wed, 21 Oct 2026 07:28:30 GMT", "date": "Wed, 21 Oct 2026 07:28:00 GMT"}
    assert adapter.error_from_wire(429, dated, body).retry_after == 30.0
    assert adapter.error_from_wire(429, {}, body).retry_after is None


@pytest.mark.parametrize(
    ("status", "body", "kind", "message"),
    [
        (502, b"<html><body>502 Bad Gateway</body></html>", "server", "<html><body>502 Bad Gateway</body></html>"),
        (500, b"", "server", "HTTP 500"),
        (503, None, "overloaded", "HTTP 503"),
        (500, "upstream timeout\n", "server", "upstream timeout"),
        (400, {"error": "bad things"}, "invalid_request", "bad things"),  # compatible servers: a string error
    ],
)
def test_non_json_and_empty_error_bodies(status: int, body: Any, kind: str, message: str) -> None:
    error = adapter.error_from_wire(status, {}, body)
    assert (error.status, error.kind, error.message) == (status, kind, message)


# --------------------------------------------------------------------------------------------
# The adapter value
# --------------------------------------------------------------------------------------------


def test_the_adapter_value_and_registry() -> None:
    assert get_adapter("openai_chat") is adapter.ADAPTER
    assert adapter.ADAPTER.wire_format == "openai_chat"
    assert adapter.capabilities <= CAPABILITIES
    # no is_error flag and no images in tool results on this wire (§1b, §8)
    assert not {"images_in_tool_results", "is_error_in_tool_results"} & adapter.capabilities
    for url in (
        "https://api.openai.com/v1/chat/completions",
        "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-12-01-preview",
        "https://api.mistral.ai/v1/chat/completions#stream",
        "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
    ):
        assert detect_adapter(url) == "openai_chat"


def test_user_audio_and_file_parts_are_read_and_written_back_in_their_places() -> None:
    """§1b: a user message takes ``input_audio`` (format wav or mp3, OAI-SDK
    ``chat_completion_content_part_input_audio_param.py:14``) and ``file`` parts (``file_data``, ``filename``,
    ``chat_completion_content_part_param.py:15-25``); pydantic-ai sends a tool's audio and blobs so."""
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    blob = {"type": "file", "file": {"file_data": "data:application/gzip;base64,H4sI", "filename": "a.gz"}}
    body = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "<a>"}, audio, blob, {"type": "text", "text": "</a>"}],
            }
        ],
    }
    assert round_trip(body)["messages"] == body["messages"]
    [message] = adapter.request_from_wire(body).messages
    assert [p.text for p in message.parts if isinstance(p, Text)] == ["<a>", "</a>"]
    with pytest.raises(UnsupportedContentError, match="unsupported content part 'video'"):
        adapter.request_from_wire({"model": "m", "messages": [{"role": "user", "content": [{"type": "video"}]}]})
