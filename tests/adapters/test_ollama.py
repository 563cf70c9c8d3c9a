"""Unit tests for ``conformance.adapters.ollama`` on hand-made wire bodies built from documented shapes.

Wire facts: wire-formats.md §5 (OLLAMA ``api/types.go``, ``server/routes.go``, ``llm/server.go``,
``docs/api.md``, ``docs/api/errors.mdx``, ``docs/capabilities/tool-calling.mdx``), §8 and §9 rule 6.
Real traffic and chunk invariance: ``test_ollama_realworld.py``.

Edge cases of wire-formats.md §10 that apply to Ollama, and where they are covered:
- E1  UTF-8 split across chunks: test_ollama_realworld.py (random cuts, single bytes, cuts inside code points).
- E3  empty / absent arguments: test_absent_or_empty_arguments_mean_no_arguments.
- E6  whole call in one line: test_streamed_calls_arrive_whole_and_end_at_done,
      test_stream_and_body_fold_to_the_same_response.
- E7  (analogue) ``done_reason: stop`` with calls -> ``tool_calls``: test_stop_with_calls_is_tool_calls.
- E8  stream ends without ``done: true`` / cut by length: test_stream_without_done_is_incomplete,
      test_length_ends_calls_with_an_error.
- E9  unknown lines and keys ignored: test_unknown_lines_and_keys_are_ignored.
- E10 thinking before tool calls: test_thinking_then_calls_keeps_the_order, test_reasoning_travels_as_thinking.
- E13 ids replayed as received, synthetic ids never sent: test_synthetic_ids_are_deterministic_and_never_sent.
- E14 name sanitation both ways: test_mcp_names_go_out_valid_and_come_back.
- E15 schema keyword loss reported, schema sent unchanged: test_schema_goes_out_unchanged_and_losses_are_reported.
- E19 usage only on the last line, omitempty counters: test_usage_counters.
- E23 an error before any content comes as a plain JSON body with its status: test_error_from_wire_by_status;
      an ``{"error": ...}`` line mid-stream: test_mid_stream_error_line.
E2, E4, E5 (argument text fragments, repeated names/ids), E11, E12, E16-E18, E20-E22, E24-E35 are about other
wire formats: Ollama arguments are JSON objects and calls arrive whole.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from deepdiff import DeepDiff

from conformance.adapters import detect_adapter, get_adapter
from conformance.adapters import ollama as adapter
from conformance.adapters._tool_output import left_out_note, placeholder_text, resource_link_text
from conformance.adapters.base import CAPABILITIES
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    Audio,
    ErrorEvent,
    Finish,
    Image,
    Message,
    Reasoning,
    ReasoningDelta,
    ReasoningSettings,
    Request,
    Resource,
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

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
WEATHER = Tool(
    name="get_weather",
    description="Get the weather",
    input_schema={"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}},
)


def lines(*objs: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(o) + b"\n" for o in objs)


def line(created_at: str = "t", *, done: bool = False, **message: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"model": "m", "created_at": created_at, "message": {"role": "assistant", "content": ""}}
    obj["message"].update(message)
    obj["done"] = done
    return obj


def last(reason: str | None = "stop", **metrics: Any) -> dict[str, Any]:
    obj = line("t9", done=True, **metrics.pop("message", {}))
    if reason is not None:
        obj["done_reason"] = reason
    obj.update(metrics)
    return obj


def call(name: str, arguments: Any, call_id: str | None = None, index: int = 0) -> dict[str, Any]:
    wire: dict[str, Any] = {"function": {"index": index, "name": name, "arguments": arguments}}
    if call_id is not None:
        wire["id"] = call_id
    return wire


def stream(*objs: dict[str, Any], tools: tuple[Tool, ...] = ()) -> list[StreamEvent]:
    events = list(adapter.stream_from_wire([lines(*objs)], tools=tools))
    assert lifecycle_problems(events) == [], events
    return events


# --------------------------------------------------------------------------------------------
# Registry and capabilities
# --------------------------------------------------------------------------------------------


def test_the_adapter_is_registered_and_declares_known_capabilities() -> None:
    assert get_adapter("ollama") is adapter.ADAPTER
    assert detect_adapter("http://127.0.0.1:11434/api/chat") == "ollama"
    assert adapter.capabilities <= CAPABILITIES
    # §8: no tool_choice field and no parallel flag; images in tool results are template-dependent
    assert not adapter.capabilities & {"tool_choice_required", "tool_choice_named", "disable_parallel_tool_calls"}
    assert "images_in_tool_results" not in adapter.capabilities
    assert {"streaming", "system_prompt", "tool_choice_auto", "tool_choice_none"} <= adapter.capabilities


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def test_tool_shape() -> None:
    (wire,) = adapter.tools_to_wire([WEATHER]).tools
    assert wire == {
        "type": "function",
        "function": {"name": "get_weather", "description": "Get the weather", "parameters": dict(WEATHER.input_schema)},
    }


def test_schema_goes_out_unchanged_and_losses_are_reported() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Args",
        "additionalProperties": False,
        "$defs": {"Unit": {"type": "string", "enum": ["C", "F"], "default": "C"}},
        "required": ["city"],
        "properties": {
            "city": {"type": "string", "minLength": 1, "pattern": "^[A-Z]", "description": "City"},
            "unit": {"$ref": "#/$defs/Unit"},
            "days": {"type": "integer", "minimum": 1, "default": 3},
            "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
            "opts": {"type": "object", "properties": {"a/b": {"type": "boolean", "const": True}}, "required": ["a/b"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
        },
    }
    tool = Tool(name="forecast", input_schema=schema)
    out = adapter.tools_to_wire([tool])
    assert out.tools[0]["function"]["parameters"] == schema  # sent as is: the server does the dropping
    dropped = {(c.pointer, c.action) for c in out.changes}
    # ToolFunctionParameters keeps type/$defs/items/required/properties; ToolProperty keeps
    # anyOf/type/items/description/enum/properties/required; items and $defs are `any` (verbatim)
    assert dropped == {
        ("/$schema", "dropped"),
        ("/title", "dropped"),
        ("/additionalProperties", "dropped"),
        ("/properties/city/minLength", "dropped"),
        ("/properties/city/pattern", "dropped"),
        ("/properties/unit/$ref", "dropped"),
        ("/properties/days/minimum", "dropped"),
        ("/properties/days/default", "dropped"),
        ("/properties/when/anyOf/0/format", "dropped"),
        ("/properties/opts/properties/a~1b/const", "dropped"),
    }
    assert all(c.tool == "forecast" and "api/types.go" in c.detail for c in out.changes)
    ref = next(c for c in out.changes if c.pointer.endswith("$ref"))
    assert "$defs" in ref.detail
    assert adapter.request_to_wire(Request(model="m", tools=(tool,))).schema_changes == out.changes


def test_empty_schema_becomes_an_object_schema_and_says_so() -> None:
    out = adapter.tools_to_wire([Tool(name="ping", input_schema={})])
    assert out.tools[0]["function"]["parameters"] == {"type": "object", "properties": {}}
    assert [c.action for c in out.changes] == ["changed"]


def test_mcp_names_go_out_valid_and_come_back() -> None:
    long_name = "x" * 70
    tools = (
        Tool(name="admin.tools.list"),
        Tool(name="files/read"),
        Tool(name=long_name),
        Tool(name="get_weather"),
    )
    out = adapter.tools_to_wire(tools)
    wire_names = [t["function"]["name"] for t in out.tools]
    assert all(WIRE_NAME.match(n) for n in wire_names)
    assert len(set(wire_names)) == 4 and wire_names[3] == "get_weather"
    calls = [call(n, {}, f"call_{i}", i) for i, n in enumerate(wire_names)]
    response = adapter.response_from_wire(last(message={"tool_calls": calls}), tools=tools)
    assert [c.name for c in response.tool_calls] == [t.name for t in tools]
    events = stream(line(tool_calls=calls), last(), tools=tools)
    assert [e.tool_call_name for e in events if isinstance(e, ToolCallStart)] == [t.name for t in tools]
    request = Request(model="m", tools=tools, messages=(Message(role="user", parts=(Text(text="hi"),)),))
    body = adapter.request_to_wire(request).body
    back = adapter.request_from_wire(body, tools=tools)
    assert [t.name for t in back.tools] == [t.name for t in tools]


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def user(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


@pytest.mark.parametrize("choice", [None, "auto"])
def test_tool_choice_auto_is_the_default(choice: str | None) -> None:
    body = adapter.request_to_wire(Request(model="m", tools=(WEATHER,), tool_choice=choice)).body
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert "tool_choice" not in body


def test_tool_choice_none_omits_the_tools() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}}
    request = Request(model="m", tools=(Tool(name="t", input_schema=schema),), tool_choice="none")
    wire = adapter.request_to_wire(request)
    assert "tools" not in wire.body and "tool_choice" not in wire.body
    assert wire.schema_changes == ()


@pytest.mark.parametrize("choice", ["required", "get_weather"])
def test_required_and_named_tool_choice_are_unsupported(choice: str) -> None:
    with pytest.raises(UnsupportedContentError, match="tool_choice"):
        adapter.request_to_wire(Request(model="m", tools=(WEATHER,), tool_choice=choice))


def test_parallel_tool_calls() -> None:
    with pytest.raises(UnsupportedContentError, match="parallel"):
        adapter.request_to_wire(Request(model="m", parallel_tool_calls=False))
    body = adapter.request_to_wire(Request(model="m", parallel_tool_calls=True)).body
    assert set(body) == {"model", "messages", "stream"}


@pytest.mark.parametrize("flag", [True, False])
def test_stream_is_always_explicit(flag: bool) -> None:
    wire = adapter.request_to_wire(Request(model="m", messages=(user("hi"),), stream=flag))
    assert wire.body["stream"] is flag and wire.stream is flag
    assert wire.path == "/api/chat" and wire.method == "POST"


def test_a_body_without_stream_streams_and_round_trips() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}  # docs/api.md: streams by default
    request = adapter.request_from_wire(body)
    assert request.stream is True
    wire = adapter.request_to_wire(request)
    assert wire.body == body and wire.stream is True


def test_system_prompt_and_max_tokens() -> None:
    request = Request(model="m", system="Be brief.", messages=(user("hi"),), max_tokens=50)
    body = adapter.request_to_wire(request).body
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["options"] == {"num_predict": 50}  # docs/api.md options, api.Options.NumPredict
    back = adapter.request_from_wire(body)
    assert (back.system, back.max_tokens, back.messages) == ("Be brief.", 50, request.messages)
    body = {"model": "m", "messages": [], "stream": False, "options": {"temperature": 0, "num_predict": 5}}
    back = adapter.request_from_wire(body)
    assert back.max_tokens == 5
    assert adapter.request_to_wire(back).body == body


def conversation() -> Request:
    # arguments_raw of an object-valued wire is the compact JSON of the object
    first = ToolCall(
        id="call_ab12cd34", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'
    )
    second = ToolCall(
        id="call_ef56gh78", name="get_weather", arguments={"city": "Oslo"}, arguments_raw='{"city":"Oslo"}'
    )
    return Request(
        model="m",
        system="sys",
        tools=(WEATHER,),
        messages=(
            user("Weather in Paris and Oslo?"),
            Message(role="assistant", parts=(Reasoning(text="Two calls.", source="ollama"), first, second)),
            Message(
                role="tool",
                parts=(
                    ToolResult(call_id=first.id, name="get_weather", content=(Text(text="18C"),)),
                    ToolResult(call_id=second.id, content=(Text(text="no station"),), is_error=True),
                ),
            ),
        ),
    )


def test_unified_history_goes_out_as_documented() -> None:
    body = adapter.request_to_wire(conversation()).body
    assistant, first, second = body["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "content": "",
        "thinking": "Two calls.",
        "tool_calls": [
            {"id": "call_ab12cd34", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"id": "call_ef56gh78", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
        ],
    }
    # §5b: results are role "tool" with tool_name (documented) and tool_call_id (accepted)
    assert first == {"role": "tool", "content": "18C", "tool_name": "get_weather", "tool_call_id": "call_ab12cd34"}
    # no error flag: the "Error: " prefix; the name comes from the call in the history
    assert second == {
        "role": "tool",
        "content": "Error: no station",
        "tool_name": "get_weather",
        "tool_call_id": "call_ef56gh78",
    }


def test_unified_wire_unified_is_identity_where_the_wire_carries_it() -> None:
    request = conversation()
    back = adapter.request_from_wire(adapter.request_to_wire(request).body, tools=request.tools)
    assert back.tools == request.tools
    assert (back.system, back.model, back.stream) == (request.system, request.model, request.stream)
    assert back.messages[:2] == request.messages[:2]
    results = back.messages[2].parts
    assert [(r.call_id, r.content, r.is_error) for r in results if isinstance(r, ToolResult)] == [
        ("call_ab12cd34", (Text(text="18C"),), False),
        ("call_ef56gh78", (Text(text="no station"),), True),
    ]
    # the name travels as tool_name, so it comes back even where the unified result left it None
    assert [r.name for r in results if isinstance(r, ToolResult)] == ["get_weather", "get_weather"]


def test_synthetic_ids_are_deterministic_and_never_sent() -> None:
    body = last(message={"tool_calls": [call("get_weather", {"city": "Paris"})]})
    first = adapter.response_from_wire(body).tool_calls[0]
    assert first.id == adapter.response_from_wire(body).tool_calls[0].id  # same bytes, same id
    assert first.provider_details["synthetic_id"] is True
    other = adapter.response_from_wire({**body, "created_at": "later"}).tool_calls[0]
    assert other.id != first.id  # a later turn calling the same tool gets another id
    result = ToolResult(call_id=first.id, content=(Text(text="18C"),))
    request = Request(
        model="m",
        messages=(Message(role="assistant", parts=(first,)), Message(role="tool", parts=(result,))),
    )
    sent_call, sent_result = adapter.request_to_wire(request).body["messages"]
    assert "id" not in sent_call["tool_calls"][0]
    assert sent_result == {"role": "tool", "content": "18C", "tool_name": "get_weather"}


def test_documented_history_bodies_round_trip() -> None:
    # docs/capabilities/tool-calling.mdx, "parallel tool calling": results paired by tool_name, in order
    calls = [
        {"type": "function", "function": {"index": i, "name": n, "arguments": {"city": c}}}
        for i, (n, c) in enumerate(
            [
                ("get_temperature", "New York"),
                ("get_conditions", "New York"),
                ("get_temperature", "London"),
                ("get_conditions", "London"),
            ]
        )
    ]
    body = {
        "model": "qwen3",
        "messages": [
            {"role": "user", "content": "What are the conditions?"},
            {"role": "assistant", "tool_calls": calls},
            {"role": "tool", "tool_name": "get_temperature", "content": "22°C"},
            {"role": "tool", "tool_name": "get_conditions", "content": "Partly cloudy"},
            {"role": "tool", "tool_name": "get_temperature", "content": "15°C"},
            {"role": "tool", "tool_name": "get_conditions", "content": "Rainy"},
        ],
        "stream": False,
    }
    request = adapter.request_from_wire(body)
    assistant, results = request.messages[1:]
    ids = [p.id for p in assistant.parts if isinstance(p, ToolCall)]
    assert len(set(ids)) == 4
    assert [r.call_id for r in results.parts if isinstance(r, ToolResult)] == ids
    assert DeepDiff(body, adapter.request_to_wire(request).body) == {}


def test_results_pair_by_tool_call_id_first() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "assistant", "content": "", "tool_calls": [call("a", {}, "call_1"), call("a", {}, "call_2", 1)]},
            {"role": "tool", "tool_call_id": "call_2", "content": "two"},
            {"role": "tool", "tool_name": "a", "content": "one"},
        ],
        "stream": False,
    }
    (_, tool) = adapter.request_from_wire(body).messages
    assert [(r.call_id, r.name) for r in tool.parts if isinstance(r, ToolResult)] == [("call_2", "a"), ("call_1", "a")]
    assert adapter.request_to_wire(adapter.request_from_wire(body)).body == body


def test_string_arguments_are_a_documented_normalisation() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "assistant", "content": "", "tool_calls": [call("a", '{"x": 1}', "call_1")]}],
        "stream": False,
    }
    diff = DeepDiff(body, adapter.request_to_wire(adapter.request_from_wire(body)).body)
    assert diff == {
        "type_changes": {
            "root['messages'][0]['tool_calls'][0]['function']['arguments']": {
                "old_type": str,
                "new_type": dict,
                "old_value": '{"x": 1}',
                "new_value": {"x": 1},
            }
        }
    }


def test_images() -> None:
    png = "iVBORw0KGgo="
    message = Message(role="user", parts=(Text(text="What is this?"), Image(media_type="image/png", data=png)))
    body = adapter.request_to_wire(Request(model="m", messages=(message,))).body
    assert body["messages"] == [{"role": "user", "content": "What is this?", "images": [png]}]
    back = adapter.request_from_wire(body).messages[0]
    assert back.parts == (Text(text="What is this?"), Image(data=png))  # media type: not on the wire
    with pytest.raises(UnsupportedContentError, match="base64"):
        url = Message(role="user", parts=(Image(url="https://example.com/a.png"),))
        adapter.request_to_wire(Request(model="m", messages=(url,)))


@pytest.mark.parametrize(
    "item",
    [
        Image(media_type="image/png", data="iVBORw0KGgo="),
        Audio(media_type="audio/wav", data="UklGRg=="),
        Resource(uri="f"),
    ],
)
def test_tool_results_carry_text_only(item: Any) -> None:
    result = ToolResult(call_id="call_1", name="a", content=(Text(text="see"), item))
    wire = adapter.request_to_wire(Request(model="m", messages=(Message(role="tool", parts=(result,)),)))
    shown = resource_link_text(item) if isinstance(item, Resource) else placeholder_text(item)
    assert wire.body["messages"][0]["content"] == "see" + shown  # docs/mcp.md, "What the model receives"
    assert wire.notes == (() if isinstance(item, Resource) else (left_out_note(result, 1, item, "ollama"),))
    text = ToolResult(call_id="call_1", name="a", content=(Resource(uri="f", text="body"),))
    body = adapter.request_to_wire(Request(model="m", messages=(Message(role="tool", parts=(text,)),))).body
    assert body["messages"][0]["content"] == "body"  # an embedded text resource travels as its text


def test_reasoning_travels_as_thinking() -> None:
    message = Message(role="assistant", parts=(Reasoning(text="hmm", signature="sig"), Text(text="Hi")))
    body = adapter.request_to_wire(Request(model="m", messages=(message,))).body
    assert body["messages"] == [{"role": "assistant", "content": "Hi", "thinking": "hmm"}]
    notes = adapter.request_to_wire(Request(model="m", messages=(message,))).notes
    assert notes == ("a reasoning signature left out: Ollama's thinking carries text only",)
    # read back from this wire, the reasoning names it (Reasoning.source)
    assert adapter.request_from_wire(body).messages[0].parts == (
        Reasoning(text="hmm", source="ollama"),
        Text(text="Hi"),
    )
    with pytest.raises(UnsupportedContentError, match="redacted"):
        redacted = Message(role="assistant", parts=(Reasoning(redacted="xx"),))
        adapter.request_to_wire(Request(model="m", messages=(redacted,)))


def test_unusable_call_arguments_cannot_be_replayed() -> None:
    bad = ToolCall(id="call_1", name="a", arguments_raw="{bad", arguments_error="invalid JSON")
    with pytest.raises(UnsupportedContentError, match="object"):
        adapter.request_to_wire(Request(model="m", messages=(Message(role="assistant", parts=(bad,)),)))


def test_request_from_wire_rejects_what_is_not_the_wire_format() -> None:
    with pytest.raises(WireFormatError):
        adapter.request_from_wire([])  # type: ignore[arg-type]
    with pytest.raises(WireFormatError, match="string"):
        adapter.request_from_wire({"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]})


# --------------------------------------------------------------------------------------------
# Responses and streams
# --------------------------------------------------------------------------------------------


def test_streamed_calls_arrive_whole_and_end_at_done() -> None:
    events = stream(
        line("t1", content="Checking."),
        line("t2", tool_calls=[call("get_weather", {"city": "Paris"}, "call_ab12cd34")]),
        last(prompt_eval_count=10, eval_count=5),
    )
    assert events == [
        TextDelta("Checking."),
        ToolCallStart("call_ab12cd34", "get_weather", 0, {"function": {"index": 0}}),
        ToolCallChunk("call_ab12cd34", '{"city":"Paris"}'),
        ToolCallEnd("call_ab12cd34", '{"city":"Paris"}', {"city": "Paris"}),
        UsageEvent(Usage(input_tokens=10, output_tokens=5)),
        Finish("tool_calls", "stop"),
    ]


def test_stop_with_calls_is_tool_calls() -> None:
    response = adapter.response_from_wire(last(message={"tool_calls": [call("a", {"x": 1}, "call_1")]}))
    assert (response.finish_reason, response.provider_details["finish_reason"]) == ("tool_calls", "stop")
    plain = adapter.response_from_wire(last(message={"content": "Hello"}))
    assert (plain.finish_reason, plain.text) == ("stop", "Hello")


def test_stream_and_body_fold_to_the_same_response() -> None:
    calls = [call("a", {"x": 1}, "call_1"), call("b", {}, None, 1)]
    streamed = fold(stream(line("t1", thinking="hm"), line("t1", content="ok"), line("t1", tool_calls=calls), last()))
    body = adapter.response_from_wire(
        {**last(message={"thinking": "hm", "content": "ok", "tool_calls": calls}), "created_at": "t1"}
    )
    assert streamed.parts == body.parts and streamed.finish_reason == body.finish_reason == "tool_calls"


def test_thinking_then_calls_keeps_the_order() -> None:
    events = stream(line(thinking="Let me "), line(thinking="check."), line(tool_calls=[call("a", {}, "c1")]), last())
    assert events[:2] == [ReasoningDelta("Let me ", source="ollama"), ReasoningDelta("check.", source="ollama")]
    parts = fold(events).parts
    assert isinstance(parts[0], Reasoning) and parts[0].text == "Let me check."
    assert isinstance(parts[1], ToolCall)


def test_absent_or_empty_arguments_mean_no_arguments() -> None:
    absent = {"id": "c1", "function": {"name": "ping"}}
    response = adapter.response_from_wire(
        last(message={"tool_calls": [absent, call("ping", "", "c2"), call("ping", {}, "c3")]})
    )
    assert [(c.arguments, c.arguments_raw, c.arguments_error) for c in response.tool_calls] == [
        ({}, "", None),
        ({}, "", None),
        ({}, "{}", None),
    ]


@pytest.mark.parametrize(
    ("arguments", "why"), [("{bad", "invalid JSON"), ([1, 2], "list"), ('{"a":1}{"b":2}', "several JSON values")]
)
def test_unusable_arguments_never_crash_and_never_become_empty(arguments: Any, why: str) -> None:
    events = stream(line(tool_calls=[call("a", arguments, "c1")]), last())
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error is not None and why in end.arguments_error
    assert end.tool_call_arguments_complete == (arguments if isinstance(arguments, str) else "[1,2]")
    (folded,) = fold(events).tool_calls
    assert folded.arguments is None and folded.arguments_raw == end.tool_call_arguments_complete


def test_a_call_without_a_name_is_unusable() -> None:
    events = list(adapter.stream_from_wire([lines(line(tool_calls=[{"function": {"arguments": {}}}]), last())]))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error is not None


def test_stream_without_done_is_incomplete() -> None:
    events = stream(line(content="Hi"), line(tool_calls=[call("a", {"x": 1}, "c1")]))
    end, error, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments is None and end.arguments_error
    assert end.tool_call_arguments_complete == '{"x":1}'  # raw kept
    assert isinstance(error, ErrorEvent) and error.error.kind == "stream_incomplete"
    assert finish == Finish("error")


def test_length_ends_calls_with_an_error() -> None:
    events = stream(line(tool_calls=[call("a", {"x": 1}, "c1")]), last("length"))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error is not None and "length" in end.arguments_error
    assert events[-1] == Finish("length", "length")


def test_mid_stream_error_line() -> None:
    # docs/api/errors.mdx: {"error": "..."} after content; status stays 200
    error_line = {"error": "an error was encountered while running the model"}
    events = stream(line(content="I"), line(tool_calls=[call("a", {}, "c1")]), error_line)
    end, error, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments_error is not None
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.status, error.error.message) == ("server", None, error_line["error"])
    assert finish == Finish("error")
    response = fold(events)
    assert response.finish_reason == "error" and response.error == error.error


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        ({"error": "model 'x' not found"}, "not_found"),
        ({"error": '"m" does not support tools'}, "invalid_request"),
        ({"error": "the input length exceeds the context length"}, "context_length"),
        ({"error": "slow down", "status": 429}, "rate_limit"),  # routes.go: gin.H{"error", "status"}
    ],
)
def test_mid_stream_error_kinds(payload: dict[str, Any], kind: str) -> None:
    (error, finish) = stream(payload)
    assert isinstance(error, ErrorEvent) and error.error.kind == kind and finish == Finish("error")


def test_malformed_lines_break_the_stream() -> None:
    for bad in (b'{"model": "m", "message": {"content": "x"\n', b"[1, 2]\n", b"42\n"):
        events = list(adapter.stream_from_wire([lines(line(content="a")), bad, lines(last())]))
        assert lifecycle_problems(events) == []
        error = next(e for e in events if isinstance(e, ErrorEvent))
        assert error.error.kind == "malformed_response" and events[-1] == Finish("error")


def test_unknown_lines_and_keys_are_ignored() -> None:
    events = stream(
        {"model": "m", "created_at": "t", "done": False},
        {**line(content="a"), "logprobs": [{"token": "a", "logprob": -0.1}], "remote_host": "x"},
        {"status": "pinging"},
        last(),
    )
    assert events == [TextDelta("a"), Finish("stop", "stop")]


def test_done_reasons() -> None:
    assert stream(last(None))[-1] == Finish("stop")  # done_reason omitted (pre-2024 servers)
    assert stream(last("load"))[-1] == Finish("other", "load")  # empty-messages request (routes.go)
    events = list(adapter.stream_from_wire([lines(last(), line(content="after"))]))
    assert events == [Finish("stop", "stop")]  # nothing after done


def test_usage_counters() -> None:
    (usage, _) = stream(last(eval_count=7))  # prompt_eval_count is omitempty (cached prompt)
    assert isinstance(usage, UsageEvent)
    assert (usage.usage.input_tokens, usage.usage.output_tokens, usage.usage.total_tokens) == (None, 7, None)
    assert stream(line(content="x"), last())[-1] == Finish("stop", "stop")
    assert adapter.response_from_wire(last()).usage is None


def test_duplicate_ids_in_one_response_are_made_unique() -> None:
    calls = [call("a", {"x": 1}, "call_same"), call("a", {"x": 2}, "call_same", 1)]
    first, second = adapter.response_from_wire(last(message={"tool_calls": calls})).tool_calls
    assert first.id == "call_same" and second.id != first.id and second.provider_details["synthetic_id"] is True


def test_bodies_that_are_not_a_final_response() -> None:
    error = adapter.response_from_wire({"error": "boom"})
    assert error.finish_reason == "error" and error.error is not None and error.error.message == "boom"
    partial = adapter.response_from_wire(line(content="half"))
    assert partial.text == "half" and partial.error is not None and partial.error.kind == "stream_incomplete"
    with pytest.raises(WireFormatError):
        adapter.response_from_wire([])  # type: ignore[arg-type]


def test_streams_are_incremental() -> None:
    consumed: list[int] = []

    def chunks() -> Any:
        for i, chunk in enumerate([lines(line(content="a")), lines(line(content="b")), lines(last())]):
            consumed.append(i)
            yield chunk

    events = adapter.stream_from_wire(chunks())
    assert next(events) == TextDelta("a") and consumed == [0]
    assert next(events) == TextDelta("b") and consumed == [0, 1]


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (400, '"llama2" does not support tools', "invalid_request"),  # server/images.go capability check
        (401, "unauthorized", "auth"),
        (403, "cloud model access is disabled", "permission"),
        (404, "model 'nonexistent-model:latest' not found", "not_found"),
        (429, "too many requests", "rate_limit"),
        (500, "the model failed to generate a response", "server"),
        (502, "cloud model unreachable", "server"),
        (503, "server busy, please try again.  maximum pending requests exceeded", "overloaded"),
    ],
)
def test_error_from_wire_by_status(status: int, message: str, kind: str) -> None:
    body = orjson.dumps({"error": message})
    for given in (body, body.decode(), orjson.loads(body)):
        error = adapter.error_from_wire(status, {}, given)
        assert (error.status, error.kind, error.message, error.info.code) == (status, kind, message, None)


def test_retry_after_headers() -> None:
    body = b'{"error": "too many requests"}'
    assert adapter.error_from_wire(429, {"Retry-After": "7"}, body).retry_after == 7.0
    assert adapter.error_from_wire(429, {"retry-after-ms": "1500"}, body).retry_after == 1.5
    assert adapter.error_from_wire(429, {}, body).retry_after is None


def test_error_bodies_that_are_not_ollama_json() -> None:
    error = adapter.error_from_wire(502, {}, b"<html>Bad Gateway</html>")
    assert (error.kind, error.message) == ("server", "<html>Bad Gateway</html>")
    assert adapter.error_from_wire(500, {}, None).message == "HTTP 500"
    signin = adapter.error_from_wire(401, {}, b'{"error": "unauthorized", "signin_url": "https://ollama.com/connect"}')
    assert signin.kind == "auth" and signin.info.provider_details == {"signin_url": "https://ollama.com/connect"}


def test_a_message_that_is_not_an_object_is_a_malformed_answer_not_a_crash() -> None:
    # found by the fuzz corpus (python -m tests.fuzz._drive --seed 0 cassette 1182)
    response = adapter.response_from_wire({"model": "m", "message": "hi", "done": True})
    assert response.error is not None and response.error.kind == "malformed_response"
    assert "message is not a JSON object" in response.error.message


# --------------------------------------------------------------------------------------------
# Issue 28: think settings, replaying thinking, reasoning from another wire, bad thinking payloads
# (ollama-python _types.py: ``think: Optional[Union[bool, str]]``, ``Message.thinking: Optional[str]``;
# examples/gpt-oss-tools-stream.py sends thinking back on the assistant message; issue 28 wire facts §5)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "think"),
    [
        (ReasoningSettings(enabled=False), False),
        (ReasoningSettings(), True),
        (ReasoningSettings(effort="low"), "low"),
        (ReasoningSettings(effort="medium"), "medium"),
        (ReasoningSettings(effort="high"), "high"),
        (None, None),
    ],
)
def test_reasoning_settings_go_out_as_think(settings: ReasoningSettings | None, think: bool | str | None) -> None:
    body = adapter.request_to_wire(Request(model="m", messages=(user("q"),), reasoning=settings)).body
    assert body.get("think") == think and ("think" in body) == (think is not None)
    back = adapter.request_from_wire(body)
    assert back.reasoning == settings
    assert adapter.request_to_wire(back).body == body


@pytest.mark.parametrize(
    ("settings", "word"),
    [(ReasoningSettings(effort="minimal"), "minimal"), (ReasoningSettings(budget_tokens=1024), "budget")],
)
def test_settings_think_cannot_carry_are_refused(settings: ReasoningSettings, word: str) -> None:
    with pytest.raises(UnsupportedContentError, match=word):
        adapter.request_to_wire(Request(model="m", reasoning=settings))


def test_a_think_value_the_adapter_does_not_write_round_trips_raw() -> None:
    body = {"model": "m", "messages": [], "stream": False, "think": "max"}
    request = adapter.request_from_wire(body)
    assert request.reasoning is None and request.provider_details["extra"] == {"think": "max"}
    assert adapter.request_to_wire(request).body == body


def test_thinking_goes_back_on_its_message_and_another_wires_reasoning_is_left_out_and_said() -> None:
    ours = Reasoning(text="Check the weather.", source="ollama")
    theirs = Reasoning(text="hidden", signature="EqQBCkgI", source="anthropic")
    redacted = Reasoning(redacted="opaque", source="anthropic")  # not ours: a note, not an error
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}')
    message = Message(role="assistant", parts=(theirs, redacted, ours, call))
    wire = adapter.request_to_wire(Request(model="m", messages=(user("q"), message), tools=(WEATHER,)))
    sent = wire.body["messages"][1]
    assert sent["thinking"] == "Check the weather." and sent["tool_calls"][0]["function"]["name"] == "get_weather"
    assert len(wire.notes) == 2 and all("anthropic" in n and "ollama cannot verify" in n for n in wire.notes)


def test_thinking_that_is_not_a_string_is_malformed() -> None:
    events = list(adapter.stream_from_wire([lines(line(thinking=["a"]), last())]))
    assert isinstance(events[-2], ErrorEvent) and events[-2].error.kind == "malformed_response"
    assert "thinking is a list" in events[-2].error.message and events[-1] == Finish("error")
    body = last(message={"thinking": {"text": "a"}})
    response = adapter.response_from_wire(body)
    assert response.error is not None and response.error.kind == "malformed_response"
    with pytest.raises(WireFormatError, match=r"messages\[0\]: Ollama thinking is a string, not int"):
        adapter.request_from_wire({"messages": [{"role": "assistant", "content": "", "thinking": 7}]})


def test_a_megabyte_of_thinking_streams_and_decodes_whole() -> None:
    text = "y" * (1 << 20)
    pieces = [line(thinking=text[i : i + 8192]) for i in range(0, len(text), 8192)]
    (reasoning, _) = fold(stream(*pieces, line(content="ok"), last())).parts
    assert isinstance(reasoning, Reasoning) and (reasoning.text, reasoning.source) == (text, "ollama")
    (reasoning, _) = adapter.response_from_wire(last(message={"thinking": text, "content": "ok"})).parts
    assert isinstance(reasoning, Reasoning) and reasoning.text == text


def test_the_request_schema_knows_think() -> None:
    import jsonschema

    text = (Path(adapter.__file__).parents[1] / "schemas" / "requests" / "ollama.schema.json").read_text()
    validator = jsonschema.Draft202012Validator(orjson.loads(text))
    for settings in (ReasoningSettings(enabled=False), ReasoningSettings(), ReasoningSettings(effort="medium")):
        body = adapter.request_to_wire(Request(model="m", messages=(user("q"),), reasoning=settings)).body
        assert list(validator.iter_errors(body)) == []
    assert list(validator.iter_errors({"model": "m", "messages": [], "think": "minimal"})) != []
