"""The unified model as plain JSON (``conformance.clients.codec``, docs/protocol.md "Values"): every
value kind survives a trip through a JSON line read by its declared type, its sequences come back as
tuples while plain JSON inside stays lists, a kind outside its union is a ``UsageError``, and what
another process sends that does not fit the model (an unknown or missing field, a value of another
type) is refused naming the place."""

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
    Part,
    Reasoning,
    ReasoningDelta,
    Request,
    Resource,
    Response,
    StreamEvent,
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


def _trip(value: Any, hint: Any = None) -> Any:
    """Through a JSON line and back, as the protocol sends it, read by its declared type."""
    return from_json(json.loads(json.dumps(to_json(value))), hint if hint is not None else type(value))


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


@pytest.mark.parametrize("event", EVENTS, ids=lambda v: type(v).__name__)
def test_each_stream_event_is_read_by_its_type_from_the_union(event: StreamEvent) -> None:
    assert _trip(event, StreamEvent) == event


@pytest.mark.parametrize(
    "part", [*MESSAGES[1].parts, RESULT, MESSAGES[0].parts[1], BROKEN_CALL], ids=lambda v: type(v).__name__
)
def test_each_part_is_read_by_its_kind_from_the_union(part: Part) -> None:
    assert _trip(part, Part) == part


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


def test_the_json_form_is_the_fields_by_name_with_no_tag() -> None:
    """docs/protocol.md "Values": an object per value with its fields by name; a stream event says
    which it is by ``type``, a part by ``kind`` (the fields the model has), nothing else."""
    assert to_json(Finish(reason="stop")) == {"reason": "stop", "provider_reason": None, "type": "finish"}
    assert to_json(Text(text="a"))["kind"] == "text"
    assert to_json(CALL)["arguments"] == ARGS  # plain JSON is written as it is
    assert to_json({"a": (1, 2), "s": frozenset({"b", "a"})}) == {"a": [1, 2], "s": ["a", "b"]}
    assert "$" not in json.dumps(to_json(RESPONSE))


def test_a_field_with_a_default_may_be_left_out() -> None:
    assert from_json({"type": "text_delta", "text": "a"}, StreamEvent) == TextDelta(text="a")
    assert from_json({"parts": []}, Response) == Response(parts=())


def test_plain_json_fields_come_back_untouched() -> None:
    data = {"a": [1, {"b": [2]}], "c": None, "d": "x"}
    assert from_json(to_json(data), dict[str, Any]) == data
    assert from_json(data, Any) == data


@pytest.mark.parametrize("kind", ["nope", "Text", 3, None, "__class__"])
def test_an_unknown_kind_is_a_usage_error(kind: object) -> None:
    with pytest.raises(UsageError, match=r"\$: kind .* is none of 'text', "):
        from_json({"kind": kind, "text": "x"}, Part)


@pytest.mark.parametrize("kind", ["nope", "TextDelta", 3, None])
def test_an_unknown_event_type_is_a_usage_error(kind: object) -> None:
    with pytest.raises(UsageError, match=r"\$: type .* is none of 'text_delta', "):
        from_json({"type": kind, "text": "x"}, StreamEvent)


def test_an_unknown_kind_deep_inside_is_a_usage_error_naming_the_place() -> None:
    data = to_json(Response(parts=(Text(text="a"),)))
    data["parts"][0]["kind"] = "bogus"
    with pytest.raises(UsageError, match=r"\$\.parts\[0\]: kind str 'bogus' is none of"):
        from_json(data, Response)


def test_a_value_missing_a_required_field_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"\$: ToolCall needs 'name'"):
        from_json({"kind": "tool_call", "id": "c"}, Part)


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        ({"type": "text_delta", "text": "a", "from_a_newer_suite": 1}, StreamEvent),
        ({"kind": "tool_call", "id": "c", "name": "n", "toolCallId": "c"}, Part),
        ({"parts": [], "finishReason": "stop"}, Response),
    ],
)
def test_an_unknown_field_is_refused_by_name(data: dict[str, Any], hint: Any) -> None:
    """docs/protocol.md: "Unknown fields are refused (a typo such as ``toolCallId`` is named, not lost)"."""
    extra = next(k for k in data if k not in ("type", "text", "kind", "id", "name", "parts"))
    with pytest.raises(UsageError, match=f"has no field '{extra}'"):
        from_json(data, hint)


# ---- what another process sends is checked (issue 27, point 2) -----------------------------------


def test_plain_json_shaped_like_a_model_value_comes_back_as_it_was() -> None:
    args = {"kind": "text", "text": "not a model value", "$": "Text", "inner": {"type": "finish", "value": [1]}}
    call = ToolCall(id="c", name="n", arguments=args, arguments_raw=json.dumps(args))
    back = _trip(call, Part)
    assert back == call and back.arguments == args


@pytest.mark.parametrize(
    ("data", "hint", "said"),
    [
        ({"kind": "text", "text": 5}, Part, "$.text: int 5 where str is declared"),
        ({"returned": "sideways"}, TurnResult, "$.returned: str 'sideways' is none of"),
        ({"returned": "events", "events": [{"kind": "text", "text": "x"}]}, TurnResult, "$.events[0]: type null"),
        ({"parts": "abc"}, Response, "$.parts: str 'abc' where an array is declared"),
        ({"kind": "rate_limit", "message": "m", "status": True}, ErrorInfo, "$.status: bool True fits none"),
        ({"kind": "tool_call", "id": "c", "name": "n", "arguments": [1]}, Part, "$.arguments: list [1] fits none"),
        ({"kind": "text", "text": "x", "provider_details": {"a": {1, 2}}}, Part, "$.provider_details"),
        ({"kind": "text", "text": "x", "provider_details": {"a": float("nan")} | {"b": object()}}, Part, "not plain"),
        (["text"], Response, "$: list ['text'] where a Response object is declared"),
    ],
)
def test_a_value_that_does_not_fit_its_field_types_is_a_usage_error_naming_the_field(
    data: Any, hint: Any, said: str
) -> None:
    with pytest.raises(UsageError) as caught:
        from_json(data, hint)
    assert said in str(caught.value)


def test_a_value_nested_past_the_bound_is_a_usage_error_not_a_recursion_error() -> None:
    deep: Any = "x"
    for _ in range(500):
        deep = [deep]
    with pytest.raises(UsageError, match=r"^\$\.arguments: "):
        from_json({"kind": "tool_call", "id": "c", "name": "n", "arguments": {"a": deep}}, Part)
