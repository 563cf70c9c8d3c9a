"""The unified model as JSON (``conformance.clients.codec``): every value kind survives a trip
through a JSON line, its sequences come back as tuples while plain JSON inside stays lists, and
a tag that is no model class is a ``UsageError``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.clients.codec import from_json, to_json
from conformance.clients.contract import Call
from conformance.clients.invoke import TurnResult
from conformance.errors import UsageError
from conformance.model import (
    Audio,
    ErrorEvent,
    ErrorInfo,
    Finish,
    Image,
    Message,
    Reasoning,
    ReasoningDelta,
    Request,
    Resource,
    Response,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageEvent,
)

ARGS = {"cities": ["Paris", "Lyon"], "options": {"units": ["C", "F"], "n": 2}, "deep": [[1, 2], [3]]}
SCHEMA = {
    "type": "object",
    "properties": {"cities": {"type": "array", "items": {"type": "string"}}},
    "required": ["cities"],
}
TOOL = Tool(
    name="get_weather",
    description="Weather.",
    input_schema=SCHEMA,
    title="Weather",
    output_schema={"type": "object", "required": ["t"]},
    annotations={"readOnlyHint": True},
    provider_details={"cache_control": {"type": "ephemeral"}},
)
CALL = ToolCall(id="call_1", name="get_weather", arguments=ARGS, arguments_raw=json.dumps(ARGS))
BROKEN_CALL = ToolCall(id="call_2", name="x", arguments=None, arguments_raw="{oops", arguments_error="not JSON")
RESULT = ToolResult(
    call_id="call_1",
    content=(
        Text(text="18C"),
        Image(media_type="image/png", data="iVBOR"),
        Image(media_type="image/png", url="https://example.com/a.png"),
        Audio(media_type="audio/wav", data="UklG"),
        Resource(uri="file:///a.txt", media_type="text/plain", text="a"),
        Resource(uri="file:///b.bin", blob="AAEC"),
    ),
    is_error=True,
    name="get_weather",
)
MESSAGES = (
    Message(role="user", parts=(Text(text="Weather in Paris and Lyon?"), Image(media_type="image/jpeg", data="/9j/"))),
    Message(
        role="assistant",
        parts=(Reasoning(text="think", signature="sig", provider_details={"k": [1]}), Text(text="Looking."), CALL),
    ),
    Message(role="tool", parts=(RESULT,)),
    Message(role="assistant", parts=(Reasoning(text="", redacted="opaque"), BROKEN_CALL)),
)
ERROR = ErrorInfo(
    kind="rate_limit",
    message="slow down",
    status=429,
    retry_after=2.5,
    code="rate_limit_exceeded",
    provider_details={"a": [1, 2]},
)
USAGE = Usage(
    input_tokens=10, output_tokens=5, total_tokens=15, cache_read_tokens=1, cache_write_tokens=0, reasoning_tokens=3
)
REQUEST = Request(
    model="gpt-4.1-mini",
    system="Be brief.",
    messages=MESSAGES,
    tools=(TOOL, Tool(name="get_time", input_schema={"type": "object"})),
    tool_choice="get_weather",
    parallel_tool_calls=False,
    stream=True,
    max_tokens=256,
    provider_details={"temperature": 0, "stop": ["\n"]},
)
RESPONSE = Response(
    parts=(Reasoning(text="r"), Text(text="Here."), CALL),
    finish_reason="tool_calls",
    usage=USAGE,
    error=ERROR,
    provider_details={"id": "resp_1", "ids": ["a", "b"]},
)
EVENTS = (
    TextDelta(text="Hel"),
    ReasoningDelta(text="hmm", signature="s", provider_details={"x": [1]}),
    ToolCallStart(tool_call_id="call_1", tool_call_name="get_weather", index=0, provider_details={"n": [0]}),
    ToolCallChunk(tool_call_id="call_1", tool_call_arguments_chunk='{"cities": ['),
    ToolCallEnd(tool_call_id="call_1", tool_call_arguments_complete=json.dumps(ARGS), arguments=ARGS),
    ToolCallEnd(tool_call_id="call_2", tool_call_arguments_complete="{", arguments=None, arguments_error="truncated"),
    Finish(reason="tool_calls", provider_reason="TOOL_USE"),
    UsageEvent(usage=USAGE),
    ErrorEvent(error=ERROR),
)
CALL_VALUE = Call(
    wire="anthropic",
    base_url="http://127.0.0.1:8080",
    api_key="fake",
    model="claude-x",
    system="s",
    messages=MESSAGES,
    tools=(TOOL,),
    tool_choice="required",
    parallel_tool_calls=True,
    max_tokens=64,
    stream=True,
    timeout=2.5,
    turn=2,
    scenario="basic/get_time",
)


def _trip(value: Any) -> Any:
    """Through a JSON line and back, as the child protocol sends it."""
    return from_json(json.loads(json.dumps(to_json(value))))


@pytest.mark.parametrize(
    "value",
    [
        REQUEST,
        RESPONSE,
        Response(parts=()),
        *EVENTS,
        ERROR,
        ErrorInfo(kind="unknown", message="?"),
        USAGE,
        TOOL,
        *MESSAGES,
        RESULT,
        CALL_VALUE,
        TurnResult(returned="response", response=RESPONSE, seconds=0.25),
        TurnResult(returned="events", events=EVENTS),
        TurnResult(returned="raised", events=EVENTS[:2], exception="httpx.ReadError: boom", error_info=ERROR),
        TurnResult(returned="raised", exception="x: y", error_info_failed="KeyError: 'status'"),
        TurnResult(returned="timeout", exception="the turn did not finish within 1 s"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_every_value_kind_survives_a_json_line(value: Any) -> None:
    assert _trip(value) == value


def test_sequences_come_back_as_tuples_and_plain_json_inside_as_lists() -> None:
    request = _trip(REQUEST)
    assert isinstance(request.messages, tuple) and isinstance(request.tools, tuple)
    assert isinstance(request.messages[1].parts, tuple)
    assert isinstance(request.messages[2].parts[0].content, tuple)
    call = request.messages[1].parts[2]
    assert isinstance(call, ToolCall)
    assert call.arguments == ARGS
    assert isinstance(call.arguments["cities"], list)
    assert isinstance(call.arguments["options"]["units"], list)
    assert all(isinstance(inner, list) for inner in call.arguments["deep"])
    assert isinstance(request.tools[0].input_schema["required"], list)
    assert isinstance(request.provider_details["stop"], list)
    result = _trip(TurnResult(returned="events", events=EVENTS))
    assert isinstance(result.events, tuple)
    assert isinstance(result.events[4].arguments["cities"], list)


def test_the_json_form_is_tagged_with_the_class() -> None:
    data = to_json(Finish(reason="stop"))
    assert data == {"$": "Finish", "reason": "stop", "provider_reason": None, "type": "finish"}
    assert to_json(CALL)["arguments"] == ARGS  # plain JSON is written as it is
    assert to_json({"a": (1, 2), "s": frozenset({"b", "a"})}) == {"a": [1, 2], "s": ["a", "b"]}


def test_plain_json_round_trips_untouched() -> None:
    data = {"a": [1, {"b": [2]}], "c": None, "d": "x"}
    assert from_json(to_json(data)) == data
    assert from_json([1, [2]]) == [1, [2]]


@pytest.mark.parametrize("tag", ["Nope", "UsageError", 3, "__class__"])
def test_an_unknown_tag_is_a_usage_error(tag: object) -> None:
    with pytest.raises(UsageError, match="unknown value"):
        from_json({"$": tag, "text": "x"})


def test_an_unknown_tag_deep_inside_is_a_usage_error() -> None:
    data = to_json(Response(parts=(Text(text="a"),)))
    data["parts"][0]["$"] = "Bogus"
    with pytest.raises(UsageError, match="'Bogus'"):
        from_json(data)


def test_a_value_missing_a_required_field_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="does not fit the model"):
        from_json({"$": "ToolCall", "id": "c"})


def test_unknown_fields_are_ignored() -> None:
    assert from_json({"$": "TextDelta", "text": "a", "from_a_newer_suite": 1}) == TextDelta(text="a")


# ---- what another process sends is checked (issue 27, point 2) -----------------------------------


def test_plain_json_with_a_dollar_key_of_its_own_comes_back_as_it_was() -> None:
    args = {"$": "Text", "text": "not a model value", "inner": {"$": "$map", "value": [1]}}
    call = ToolCall(id="c", name="n", arguments=args, arguments_raw=json.dumps(args))
    assert from_json(json.loads(json.dumps(to_json(call)))) == call


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"$": "Text", "text": 5}, "text: int 5 where str is declared"),
        ({"$": "TurnResult", "returned": "sideways"}, "returned: str 'sideways' is none of"),
        ({"$": "TurnResult", "returned": "events", "events": [{"$": "Text", "text": "x"}]}, "events: [0] Text"),
        ({"$": "Response", "parts": "abc"}, "parts: str 'abc' where a list is declared"),
        ({"$": "ErrorInfo", "kind": "rate_limit", "message": "m", "status": True}, "status: bool True fits none"),
        ({"$": "ToolCall", "id": "c", "name": "n", "arguments": [1]}, "arguments: tuple (1,) fits none"),
        ({"$": "Text", "text": "x", "provider_details": {"a": {"$": "Usage"}}}, "a model value inside plain JSON"),
    ],
)
def test_a_value_that_does_not_fit_its_field_types_is_a_usage_error_naming_the_field(
    data: dict[str, Any], said: str
) -> None:
    with pytest.raises(UsageError, match="does not fit the model") as caught:
        from_json(data)
    assert said in str(caught.value)
