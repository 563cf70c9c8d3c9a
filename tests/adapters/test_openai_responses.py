"""Unit tests of ``conformance.adapters.openai_responses`` on small hand-made wire bodies and streams.

The shapes come from wire-formats.md §2 (openai-python ``types/responses``: ``FunctionToolParam``,
``ResponseFunctionToolCallParam``, ``ResponseReasoningItemParam``, ``ResponseErrorEvent``,
``ResponseError``, ``response_usage.py``), the recorded VFX fixtures it cites, and the real cassettes
(``test_openai_responses_realworld.py`` covers those).

Edge cases of wire-formats.md §10 that apply to the Responses wire, and where they are covered:
- E1  UTF-8 split across chunks: realworld ``test_cuts_inside_utf8_code_points…``, here ``test_chunk_invariance…``
- E2  arguments split mid-token / mid-escape: ``test_arguments_split_mid_token_and_mid_escape``
- E3  empty-string arguments: ``test_empty_arguments_mean_no_arguments``
- E5  several JSON values under one call: ``test_several_json_values_in_one_call_are_an_error``
- E7  no finish reason; calls decide: ``test_calls_make_tool_calls_whatever_the_status_says``
- E8  stream without its terminal event / cut by length: ``test_stream_without_terminal_event…``,
      ``test_incomplete_by_length…``
- E9  unknown events interleaved: ``test_unknown_events_sequence_numbers_and_done_are_ignored``
- E11 error event flat / nested, then response.failed: ``test_error_event_flat_and_nested``, ``test_response_failed…``
- E12 two ids: ``test_two_ids_call_id_is_the_id_and_the_item_id_rides_along``
- E14 name sanitation both ways: ``test_mcp_names_go_out_valid_and_come_back``
- E19 usage only in the terminal event: ``test_usage_details_are_optional``, ``test_stream_without_terminal_event…``
- E23 400 on a stream request is JSON: ``test_error_from_wire_statuses_and_codes`` (and realworld)
- E29 ``data:`` before ``event:`` or no ``event:`` line: ``test_data_before_event_and_no_event_line``
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import get_adapter
from conformance.adapters import openai_responses as adapter
from conformance.adapters._tool_output import left_out_note, placeholder_text
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    Audio,
    ErrorEvent,
    ErrorInfo,
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

WEATHER = Tool(
    name="get_weather",
    description="Weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


# --------------------------------------------------------------------------------------------
# Wire builders (shapes from §2a-§2d and the SDK types)
# --------------------------------------------------------------------------------------------


def sse(*events: dict[str, Any], data_first: bool = False, named: bool = True) -> bytes:
    blocks = []
    for number, event in enumerate(events):
        data = "data: " + json.dumps({**event, "sequence_number": number}, ensure_ascii=False)
        name = f"event: {event.get('type')}"
        lines = ([data, name] if data_first else [name, data]) if named and "type" in event else [data]
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks).encode()


def created() -> dict[str, Any]:
    return {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}


def fc_item(item_id: str, call_id: str, name: str, arguments: str = "", status: str = "in_progress") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def added(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def item_done(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def delta(item_id: str, text: str, index: int = 0) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": index, "delta": text}


def args_done(item_id: str, arguments: str, index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "item_id": item_id,
        "output_index": index,
        "arguments": arguments,
    }


def text_delta(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": text,
    }


USAGE = {
    "input_tokens": 80,
    "input_tokens_details": {"cached_tokens": 16, "cache_write_tokens": 4},
    "output_tokens": 30,
    "output_tokens_details": {"reasoning_tokens": 12},
    "total_tokens": 110,
}


def terminal(kind: str = "completed", output: list[Any] | None = None, **response: Any) -> dict[str, Any]:
    body = {"id": "resp_1", "status": kind, "output": output or [], "usage": USAGE, **response}
    return {"type": f"response.{kind}", "response": body}


def events_of(data: bytes, chunks: list[bytes] | None = None, **kw: Any) -> list[StreamEvent]:
    events = list(adapter.stream_from_wire(chunks if chunks is not None else [data], **kw))
    assert lifecycle_problems(events) == []
    return events


ONE_CALL = sse(  # the recorded gpt-5.1 sequence of §2d (VFX issue-19493)
    created(),
    {"type": "response.in_progress", "response": {"id": "resp_1", "status": "in_progress"}},
    added(fc_item("fc_1", "call_1", "get_weather")),
    delta("fc_1", '{"'),
    delta("fc_1", "city"),
    delta("fc_1", '":"Beijing"}'),
    args_done("fc_1", '{"city":"Beijing"}'),
    item_done(fc_item("fc_1", "call_1", "get_weather", '{"city":"Beijing"}', "completed")),
    terminal(output=[fc_item("fc_1", "call_1", "get_weather", '{"city":"Beijing"}', "completed")]),
)


# --------------------------------------------------------------------------------------------
# Tools and requests
# --------------------------------------------------------------------------------------------


def test_tools_are_flat_and_strict_is_off_unless_asked() -> None:
    (wire,) = adapter.tools_to_wire([WEATHER]).tools
    # §2a flat shape; strict omitted means strict (OAI-DOCS 2026-03-31), so false is sent explicitly
    assert wire == {
        "type": "function",
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": dict(WEATHER.input_schema),
        "strict": False,
    }
    strict = Tool(name="f", input_schema={"type": "object"}, provider_details={"tool": {"strict": True}})
    (no_description,) = adapter.tools_to_wire([strict]).tools
    assert no_description["strict"] is True and "description" not in no_description


def test_a_wire_tool_keeps_strict_absent_null_description_and_extra_fields() -> None:
    tools = [
        {"type": "function", "name": "a", "description": None, "parameters": {"type": "object"}, "strict": True},
        {"type": "function", "name": "b", "parameters": {"type": "object"}, "defer_loading": True},
        {"type": "web_search"},
    ]
    body = {"model": "m", "input": "hi", "tools": tools}
    request = adapter.request_from_wire(body)
    assert [t.name for t in request.tools] == ["a", "b"]
    assert request.tools[0].description is None
    assert adapter.request_to_wire(request).body == body


def test_mcp_names_go_out_valid_and_come_back() -> None:
    long_name = "server." + "x" * 80
    tools = [Tool(name="admin.tools/list"), Tool(name=long_name), WEATHER]
    wire = adapter.tools_to_wire(tools)
    names = [t["name"] for t in wire.tools]
    for name in names:
        assert len(name) <= 64 and all(c.isalnum() or c in "_-" for c in name)  # §1a/§2a rule, E14
    assert names[2] == "get_weather" and len(set(names)) == 3
    request = Request(model="m", tools=tuple(tools), tool_choice=long_name, messages=())
    body = adapter.request_to_wire(request).body
    assert body["tool_choice"] == {"type": "function", "name": names[1]}
    back = adapter.request_from_wire(body, tools=tools)
    assert [t.name for t in back.tools] == [t.name for t in tools] and back.tool_choice == long_name
    stream = sse(
        added(fc_item("fc_1", "call_1", names[0])),
        item_done(fc_item("fc_1", "call_1", names[0], "{}", "completed")),
        terminal(),
    )
    assert [c.name for c in fold(events_of(stream, tools=tools)).tool_calls] == ["admin.tools/list"]
    body_response = {"status": "completed", "output": [fc_item("fc_1", "call_1", names[1], "{}", "completed")]}
    assert adapter.response_from_wire(body_response, tools=tools).tool_calls[0].name == long_name


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_weather", {"type": "function", "name": "get_weather"}),  # flat, §8
    ],
)
def test_tool_choice_mapping(choice: str, wire: Any) -> None:
    request = Request(model="m", tools=(WEATHER,), tool_choice=choice, parallel_tool_calls=False)
    body = adapter.request_to_wire(request).body
    assert body["tool_choice"] == wire and body["parallel_tool_calls"] is False
    assert adapter.request_from_wire(body).tool_choice == choice


def test_allowed_tools_choice_is_kept_raw() -> None:
    choice = {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]}
    body = {"model": "m", "input": [], "tool_choice": choice}
    request = adapter.request_from_wire(body)
    assert request.tool_choice is None
    assert adapter.request_to_wire(request).body == body


def test_request_fields_path_instructions_and_max_output_tokens() -> None:
    request = Request(
        model="gpt-5",
        system="Be brief.",
        messages=(Message(role="user", parts=(Text(text="hi"),)),),
        stream=True,
        max_tokens=50,
    )
    wire = adapter.request_to_wire(request)
    assert (wire.method, wire.path, wire.stream) == ("POST", "/v1/responses", True)
    assert wire.body == {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": "hi"}],
        "stream": True,
        "max_output_tokens": 50,
    }
    assert adapter.request_from_wire(wire.body) == request
    string_input = {"model": "m", "input": "hi", "stream": False}
    assert adapter.request_to_wire(adapter.request_from_wire(string_input)).body == string_input


def test_unified_wire_unified_is_identity_for_calls_results_and_errors() -> None:
    call = ToolCall(
        id="call_A",
        name="get_weather",
        arguments={"city": "Paris"},
        arguments_raw='{"city": "Paris"}',
        provider_details={"item_id": "fc_A"},
    )
    bad = ToolCall(id="call_B", name="get_weather", arguments={"city": "Rome"}, arguments_raw='{"city":"Rome"}')
    image = Image(media_type="image/png", data="iVBORw0KGgo=")
    results = (
        ToolResult(call_id="call_A", content=(Text(text="18C"),)),
        ToolResult(call_id="call_B", content=(Text(text="city unknown"),), is_error=True),
    )
    history = (
        Message(role="user", parts=(Text(text="Weather?"),)),
        Message(role="assistant", parts=(Text(text="Checking."), call, bad)),
        Message(role="tool", parts=results),
    )
    request = Request(model="m", system="sys", messages=history, tools=(WEATHER,))
    body = adapter.request_to_wire(request).body
    items = body["input"]
    assert items[1] == {"role": "assistant", "content": "Checking."}
    assert items[2] == {
        "type": "function_call",
        "call_id": "call_A",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "id": "fc_A",
    }
    assert items[4] == {"type": "function_call_output", "call_id": "call_A", "output": "18C"}
    assert items[5]["output"] == "Error: city unknown"  # no is_error flag on the wire (§2b)
    back = adapter.request_from_wire(body)
    assert back.messages[2].parts == results
    assert back.messages[1].parts[1:] == (call, bad)
    assert back.tools == (WEATHER,)
    assert back.system == "sys"
    # images travel in tool results as input_image parts (§2b), and keep is_error
    with_image = ToolResult(call_id="call_A", content=(image, Text(text="a chart")), is_error=True)
    body = adapter.request_to_wire(Request(messages=(Message(role="tool", parts=(with_image,)),))).body
    assert body["input"][0]["output"] == [
        {"type": "input_text", "text": "Error: "},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
        {"type": "input_text", "text": "a chart"},
    ]
    (result,) = adapter.request_from_wire(body).messages[0].parts
    assert isinstance(result, ToolResult)
    assert (result.content, result.is_error) == ((image, Text(text="a chart")), True)


def test_user_images_carry_detail() -> None:
    user = Message(role="user", parts=(Text(text="what is it?"), Image(url="https://x/cat.png")))
    (item,) = adapter.request_to_wire(Request(messages=(user,))).body["input"]
    # ResponseInputImageParam: detail is required in message content
    assert item["content"][1] == {"type": "input_image", "image_url": "https://x/cat.png", "detail": "auto"}
    assert adapter.request_from_wire({"input": [item]}).messages[0].parts == user.parts


@pytest.mark.parametrize(
    "item", [Audio(media_type="audio/wav", data="AA=="), Resource(uri="file:///a", blob="AA==")], ids=["audio", "blob"]
)
def test_content_a_function_call_output_cannot_carry_is_a_placeholder_with_a_note(item: Any) -> None:
    # FunctionCallOutput.output: input_text / input_image / input_file (no audio; docs/mcp.md)
    result = ToolResult(call_id="c", content=(item,))
    wire = adapter.request_to_wire(Request(messages=(Message(role="tool", parts=(result,)),)))
    assert wire.body["input"][0]["output"] == placeholder_text(item)
    assert wire.notes == (left_out_note(result, 0, item, "openai_responses"),)


@pytest.mark.parametrize(
    "message",
    [
        Message(role="assistant", parts=(Image(url="https://x/y.png"),)),
        Message(role="user", parts=(ToolCall(id="c", name="f", arguments={}),)),
    ],
)
def test_content_the_wire_cannot_carry_raises(message: Message) -> None:
    with pytest.raises(UnsupportedContentError):
        adapter.request_to_wire(Request(messages=(message,)))


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": [{"type": "input_image", "file_id": "file_1", "detail": "auto"}]},
        {"type": "item_reference", "id": "msg_1"},
        {"role": "user", "content": [{"type": "input_file", "file_id": "file_1"}]},
    ],
)
def test_wire_content_without_a_unified_form_raises(item: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedContentError):
        adapter.request_from_wire({"model": "m", "input": [item]})


def test_reasoning_items_replay_verbatim_and_foreign_reasoning_is_not_sent() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Plan."}],
        "encrypted_content": "gAAA",
    }
    body = {
        "model": "m",
        "input": [{"role": "user", "content": "q"}, item, fc_item("fc_1", "call_1", "f", "{}", "completed")],
    }
    request = adapter.request_from_wire(body)
    reasoning = request.messages[1].parts[0]
    assert isinstance(reasoning, Reasoning)
    assert (reasoning.text, reasoning.signature) == ("Plan.", "gAAA")
    assert adapter.request_to_wire(request).body == body
    foreign = Message(role="assistant", parts=(Reasoning(text="thinking", signature="EqQBCkgI"), Text(text="ok")))
    assert adapter.request_to_wire(Request(messages=(foreign,))).body["input"] == [
        {"role": "assistant", "content": "ok"}
    ]


def test_assistant_message_items_keep_their_form() -> None:
    items = [
        {"role": "user", "content": "q"},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "a", "annotations": []}, {"type": "refusal", "refusal": "no"}],
        },
        {"role": "assistant", "content": "b"},
        {"role": "developer", "content": [{"type": "input_text", "text": "rule"}]},
    ]
    body = {"input": items}
    request = adapter.request_from_wire(body)
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert [p.text for p in request.messages[1].parts if isinstance(p, Text)] == ["a", "no", "b"]
    assert adapter.request_to_wire(request).body == body


# --------------------------------------------------------------------------------------------
# Non-streamed responses
# --------------------------------------------------------------------------------------------


def test_two_ids_call_id_is_the_id_and_the_item_id_rides_along() -> None:
    body = {
        "id": "resp_1",
        "model": "gpt-4.1",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Calling.", "annotations": []}],
            },
            fc_item("fc_1", "call_1", "get_weather", '{"city":"Paris"}', "completed"),
            fc_item("fc_2", "call_2", "get_weather", '{"city":"Rome"}', "completed"),
        ],
        "usage": USAGE,
    }
    response = adapter.response_from_wire(body)
    assert response.text == "Calling."
    assert [(c.id, c.provider_details["item_id"], c.arguments) for c in response.tool_calls] == [
        ("call_1", "fc_1", {"city": "Paris"}),
        ("call_2", "fc_2", {"city": "Rome"}),
    ]
    assert response.finish_reason == "tool_calls" and response.provider_details["finish_reason"] == "completed"
    assert response.provider_details["id"] == "resp_1"


def test_calls_make_tool_calls_whatever_the_status_says() -> None:
    # E7: no finish reason at all on Responses; a forced choice still ends "completed"
    body = {"status": "completed", "output": [fc_item("fc_1", "call_1", "f", "{}", "completed")]}
    assert adapter.response_from_wire(body).finish_reason == "tool_calls"
    assert adapter.response_from_wire({"status": "completed", "output": []}).finish_reason == "stop"


def test_usage_details_are_optional() -> None:
    response = adapter.response_from_wire({"status": "completed", "output": [], "usage": USAGE})
    assert response.usage is not None
    assert (response.usage.cache_read_tokens, response.usage.cache_write_tokens, response.usage.reasoning_tokens) == (
        16,
        4,
        12,
    )
    bare = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    usage = adapter.response_from_wire({"status": "completed", "output": [], "usage": bare}).usage
    assert usage is not None and (usage.total_tokens, usage.cache_read_tokens, usage.reasoning_tokens) == (
        7,
        None,
        None,
    )


@pytest.mark.parametrize("details", [0.5, "16", ["cached_tokens"]])
def test_usage_details_that_are_not_objects_are_read_as_absent(details: object) -> None:
    # found by the fuzz tier: a float in input_tokens_details raised AttributeError
    raw = {"input_tokens": 3, "output_tokens": 4, "input_tokens_details": details, "output_tokens_details": details}
    usage = adapter.response_from_wire({"status": "completed", "output": [], "usage": raw}).usage
    assert usage is not None and (usage.input_tokens, usage.cache_read_tokens, usage.reasoning_tokens) == (
        3,
        None,
        None,
    )


def test_incomplete_by_length_ends_the_open_call_with_an_error() -> None:
    body = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [
            fc_item("fc_1", "call_1", "f", '{"a":1}', "completed"),
            fc_item("fc_2", "call_2", "f", '{"a":', "incomplete"),
        ],
    }
    response = adapter.response_from_wire(body)
    first, second = response.tool_calls
    assert first.arguments == {"a": 1} and first.arguments_error is None  # complete before the cut
    assert second.arguments is None and second.arguments_error and second.arguments_raw == '{"a":'
    assert (response.finish_reason, response.provider_details["finish_reason"]) == ("length", "max_output_tokens")
    stream = sse(
        added(fc_item("fc_1", "call_1", "f")),
        delta("fc_1", '{"a": [1, 2'),
        terminal("incomplete", incomplete_details={"reason": "max_output_tokens"}),
    )
    events = events_of(stream)
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments is None and end.arguments_error and end.tool_call_arguments_complete == '{"a": [1, 2'
    assert events[-1] == Finish("length", "max_output_tokens")


def test_content_filter_failed_refusal_and_hosted_items() -> None:
    filtered = {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []}
    assert adapter.response_from_wire(filtered).finish_reason == "content_filter"
    failed = {"status": "failed", "error": {"code": "server_error", "message": "boom"}, "output": []}
    response = adapter.response_from_wire(failed)
    assert response.finish_reason == "error" and response.error is not None
    assert (response.error.kind, response.error.message, response.error.status) == ("server", "boom", None)
    refusal = {
        "status": "completed",
        "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help."}]},
        ],
    }
    response = adapter.response_from_wire(refusal)
    assert response.text == "I can't help." and response.tool_calls == ()


def test_invalid_argument_json_never_crashes_and_never_becomes_empty() -> None:
    body = {"status": "completed", "output": [fc_item("fc_1", "call_1", "f", '{"city": "Par', "completed")]}
    (call,) = adapter.response_from_wire(body).tool_calls
    assert call.arguments is None and call.arguments_error and call.arguments_raw == '{"city": "Par'
    stream = sse(
        added(fc_item("fc_1", "call_1", "f")),
        delta("fc_1", "{'city': 'Paris'}"),
        args_done("fc_1", "{'city': 'Paris'}"),
        terminal(),
    )
    (call,) = fold(events_of(stream)).tool_calls
    assert call.arguments is None and call.arguments_error and call.arguments_raw == "{'city': 'Paris'}"


def test_empty_arguments_mean_no_arguments() -> None:
    # E3: strict no-arg tools may send "" instead of "{}"
    stream = sse(added(fc_item("fc_1", "call_1", "f")), args_done("fc_1", ""), terminal())
    (call,) = fold(events_of(stream)).tool_calls
    assert (call.arguments, call.arguments_raw, call.arguments_error) == ({}, "", None)


def test_several_json_values_in_one_call_are_an_error() -> None:
    body = {"status": "completed", "output": [fc_item("fc_1", "call_1", "f", '{"a":1}{"a":2}', "completed")]}
    (call,) = adapter.response_from_wire(body).tool_calls
    assert call.arguments is None and call.arguments_error == "several JSON values in one call's arguments"


def test_reasoning_summary_and_encrypted_content_for_replay() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "First."}, {"type": "summary_text", "text": "Second."}],
        "encrypted_content": "gAAAfinal",
    }
    body = {"status": "completed", "output": [item, fc_item("fc_1", "call_1", "f", "{}", "completed")]}
    one_piece = adapter.response_from_wire(body)
    reasoning = one_piece.parts[0]
    assert isinstance(reasoning, Reasoning)
    assert (reasoning.text, reasoning.signature, reasoning.provider_details["item"]) == (
        "First.\n\nSecond.",
        "gAAAfinal",
        item,
    )
    summary = {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0}
    stream = sse(
        added({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAApartial"}),
        {**summary, "summary_index": 0, "delta": "First."},
        {**summary, "summary_index": 1, "delta": "Second."},
        item_done(item),
        added(fc_item("fc_1", "call_1", "f"), 1),
        item_done(fc_item("fc_1", "call_1", "f", "{}", "completed"), 1),
        terminal(output=body["output"]),
    )
    events = events_of(stream)
    assert [e for e in events if isinstance(e, ReasoningDelta)][:2] == [
        ReasoningDelta("First.", source="openai_responses"),
        ReasoningDelta("\n\nSecond.", source="openai_responses"),
    ]
    assert fold(events).parts == one_piece.parts
    next_turn = adapter.request_to_wire(Request(messages=(Message(role="assistant", parts=one_piece.parts),))).body
    assert next_turn["input"][0] == item  # replayed verbatim with the final encrypted_content


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


def test_a_call_streams_start_chunks_end_usage_finish() -> None:
    events = events_of(ONE_CALL)
    assert events == [
        ToolCallStart("call_1", "get_weather", 0, {"item_id": "fc_1"}),
        ToolCallChunk("call_1", '{"'),
        ToolCallChunk("call_1", "city"),
        ToolCallChunk("call_1", '":"Beijing"}'),
        ToolCallEnd("call_1", '{"city":"Beijing"}', {"city": "Beijing"}),
        UsageEvent(
            Usage(
                input_tokens=80,
                output_tokens=30,
                total_tokens=110,
                cache_read_tokens=16,
                cache_write_tokens=4,
                reasoning_tokens=12,
            )
        ),
        Finish("tool_calls", "completed"),
    ]


def test_arguments_split_mid_token_and_mid_escape() -> None:
    # E2: only the concatenation is valid JSON; an escape may straddle two fragments
    pieces = ['{"c', 'ity":"Z\\u00', 'fcrich \\"', 'old\\" town"}']
    stream = sse(added(fc_item("fc_1", "call_1", "f")), *[delta("fc_1", p) for p in pieces], terminal())
    (call,) = fold(events_of(stream)).tool_calls
    assert call.arguments == {"city": 'Zürich "old" town'} and call.arguments_raw == "".join(pieces)


def test_done_text_that_extends_the_deltas_adds_the_rest_as_a_chunk() -> None:
    stream = sse(
        added(fc_item("fc_1", "call_1", "f")), delta("fc_1", '{"a":'), args_done("fc_1", '{"a":1}'), terminal()
    )
    events = events_of(stream)
    assert [e.tool_call_arguments_chunk for e in events if isinstance(e, ToolCallChunk)] == ['{"a":', "1}"]
    assert fold(events).tool_calls[0].arguments == {"a": 1}
    # no arguments.done at all: output_item.done's arguments are used the same way
    stream = sse(
        added(fc_item("fc_1", "call_1", "f")),
        delta("fc_1", '{"a"'),
        item_done(fc_item("fc_1", "call_1", "f", '{"a":2}', "completed")),
        terminal(),
    )
    assert fold(events_of(stream)).tool_calls[0].arguments == {"a": 2}


def test_done_text_that_disagrees_with_the_deltas_is_an_error() -> None:
    stream = sse(
        added(fc_item("fc_1", "call_1", "f")), delta("fc_1", '{"a":1}'), args_done("fc_1", '{"b":2}'), terminal()
    )
    (call,) = fold(events_of(stream)).tool_calls
    assert call.arguments is None and call.arguments_raw == '{"a":1}'
    assert call.arguments_error is not None and '{"b":2}' in call.arguments_error


def test_whole_items_without_added_or_deltas() -> None:
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hi."}],
    }
    stream = sse(item_done(message), item_done(fc_item("fc_1", "call_1", "f", '{"x":1}', "completed"), 1), terminal())
    folded = fold(events_of(stream))
    assert folded.text == "Hi." and folded.tool_calls[0].arguments == {"x": 1}
    # a server that sends the output only in the terminal event
    only_terminal = sse(terminal(output=[message, fc_item("fc_1", "call_1", "f", '{"x":1}', "completed")]))
    assert fold(events_of(only_terminal)).parts == folded.parts


def test_parallel_calls_are_keyed_by_item_id_even_when_interleaved() -> None:
    stream = sse(
        added(fc_item("fc_1", "call_1", "a"), 0),
        added(fc_item("fc_2", "call_2", "b"), 1),
        delta("fc_2", '{"y":'),
        delta("fc_1", '{"x":'),
        delta("fc_1", "1}", 0),
        delta("fc_2", "2}", 1),
        terminal(),
    )
    events = events_of(stream)
    assert [(e.tool_call_id, e.index) for e in events if isinstance(e, ToolCallStart)] == [("call_1", 0), ("call_2", 1)]
    assert [(c.id, c.arguments) for c in fold(events).tool_calls] == [("call_1", {"x": 1}), ("call_2", {"y": 2})]


def test_text_deltas_fold_to_the_message_text_and_are_never_empty() -> None:
    stream = sse(created(), text_delta("msg_1", "Hel"), text_delta("msg_1", ""), text_delta("msg_1", "lo"), terminal())
    events = events_of(stream)
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("Hel"), TextDelta("lo")]
    assert events[-1] == Finish("stop", "completed")


def test_stream_without_terminal_event_ends_open_calls_then_error_then_finish() -> None:
    stream = sse(created(), added(fc_item("fc_1", "call_1", "f")), delta("fc_1", '{"a":'))
    events = events_of(stream)
    end, error, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments is None and end.arguments_error
    assert isinstance(error, ErrorEvent) and error.error.kind == "stream_incomplete"
    assert finish == Finish("error")
    assert not any(isinstance(e, UsageEvent) for e in events)  # E19: usage only comes in the terminal event


@pytest.mark.parametrize(
    ("event", "kind", "code"),
    [
        # flat, as the SDK's ResponseErrorEvent declares it
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None},
            "rate_limit",
            "rate_limit_exceeded",
        ),
        # nested, as recorded (VFX openai-error.1.chunks.txt, E11)
        (
            {
                "type": "error",
                "error": {
                    "type": "insufficient_quota",
                    "code": "insufficient_quota",
                    "message": "quota",
                    "param": None,
                },
            },
            "rate_limit",
            "insufficient_quota",
        ),
        # a proxy's bare error payload without a type (the SDK raises on any data with an "error" key)
        ({"error": {"type": "server_error", "code": None, "message": "oops"}}, "server", "server_error"),
        # nested with a null code (VFX openai-error-null-code.1.chunks.txt)
        (
            {"type": "error", "error": {"type": "server_error", "code": None, "message": "oops", "param": None}},
            "server",
            "server_error",
        ),
    ],
)
def test_error_event_flat_and_nested(event: dict[str, Any], kind: str, code: str) -> None:
    failed = terminal("failed", error={"code": code, "message": "again"})
    stream = sse(created(), added(fc_item("fc_1", "call_1", "f")), event, failed)
    events = events_of(stream)
    end, error, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments_error
    assert isinstance(error, ErrorEvent) and (error.error.kind, error.error.code) == (kind, code)
    assert error.error.status is None and finish.type == "finish" and finish.reason == "error"
    assert sum(isinstance(e, Finish) for e in events) == 1  # the response.failed after it is not read


def test_response_failed_alone_reports_its_error() -> None:
    # VFX openai-response-failed-only.1.chunks.txt: no error event, only response.failed
    stream = sse(created(), terminal("failed", error={"code": "rate_limit_exceeded", "message": "TPM"}, usage=None))
    events = events_of(stream)
    assert events[-2:] == [
        ErrorEvent(ErrorInfo(kind="rate_limit", message="TPM", code="rate_limit_exceeded")),
        Finish("error", "failed"),
    ]


def test_unknown_events_sequence_numbers_and_done_are_ignored() -> None:
    stream = sse(
        created(),
        {"type": "response.in_progress"},
        {"type": "response.content_part.added", "item_id": "msg_1", "part": {"type": "output_text", "text": ""}},
        {"type": "ping"},
        {"type": "response.some_future_event", "delta": "x"},
        text_delta("msg_1", "ok"),
        {"type": "response.output_text.done", "item_id": "msg_1", "text": "ok"},
        terminal(),
    )
    assert events_of(stream) == events_of(sse(text_delta("msg_1", "ok"), terminal()))
    # §2d: Responses sends no [DONE]; one after the terminal event is tolerated, one before it is not a terminal
    assert events_of(stream + b"data: [DONE]\n\n") == events_of(stream)
    cut = events_of(sse(text_delta("msg_1", "ok")) + b"data: [DONE]\n\n")
    assert isinstance(cut[-2], ErrorEvent) and cut[-2].error.kind == "stream_incomplete"


def test_data_before_event_and_no_event_line() -> None:
    # E29 (Bedrock mantle): data: before event:; some servers send no event: line at all
    assert events_of(ONE_CALL.replace(b"event: ", b"event: x")) == events_of(ONE_CALL)  # the data type decides
    events = [
        created(),
        added(fc_item("fc_1", "call_1", "get_weather")),
        delta("fc_1", '{"city":"Beijing"}'),
        terminal(),
    ]
    expected = events_of(sse(*events))
    assert events_of(sse(*events, data_first=True)) == expected
    assert events_of(sse(*events, named=False)) == expected


def test_malformed_json_in_an_event_breaks_the_stream() -> None:
    stream = sse(added(fc_item("fc_1", "call_1", "f"))) + b'data: {"type": "response.output_text.delta", "delta": \n\n'
    events = events_of(stream)
    assert isinstance(events[-2], ErrorEvent) and events[-2].error.kind == "malformed_response"
    assert events[-1] == Finish("error")


def test_events_leave_as_soon_as_their_bytes_arrive() -> None:
    def chunks() -> Iterator[bytes]:
        yield sse(added(fc_item("fc_1", "call_1", "f")))
        raise AssertionError("the adapter read past the bytes it needed")

    stream = adapter.stream_from_wire(chunks())
    assert next(stream) == ToolCallStart("call_1", "f", 0, {"item_id": "fc_1"})


HAND_MADE = sse(
    created(),
    text_delta("msg_1", "Météo à 東京 ✅ "),
    added(fc_item("fc_1", "call_1", "get_weather"), 1),
    delta("fc_1", '{"city":"Zü'),
    delta("fc_1", 'rich 🌏"}'),
    args_done("fc_1", '{"city":"Zürich 🌏"}'),
    terminal(),
    data_first=True,
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(HAND_MADE) - 1), max_size=40))
def test_chunk_invariance_on_multibyte_text(cuts: list[int]) -> None:
    bounds = [0, *sorted(set(cuts)), len(HAND_MADE)]
    chunks = [HAND_MADE[a:b] for a, b in itertools.pairwise(bounds)]
    assert events_of(HAND_MADE, chunks) == events_of(HAND_MADE)


def test_chunk_invariance_inside_code_points_and_single_bytes() -> None:
    expected = events_of(HAND_MADE)
    inside = [i for i in range(1, len(HAND_MADE)) if HAND_MADE[i] & 0xC0 == 0x80]
    for i in inside:
        assert events_of(HAND_MADE, [HAND_MADE[:i], HAND_MADE[i:]]) == expected
    assert events_of(HAND_MADE, [HAND_MADE[i : i + 1] for i in range(len(HAND_MADE))]) == expected
    folded = fold(expected)
    assert folded.text == "Météo à 東京 ✅ " and folded.tool_calls[0].arguments == {"city": "Zürich 🌏"}


# --------------------------------------------------------------------------------------------
# Errors and the adapter value
# --------------------------------------------------------------------------------------------


def _error_body(etype: str, code: str | None, message: str = "m") -> bytes:
    return json.dumps({"error": {"message": message, "type": etype, "param": None, "code": code}}).encode()


@pytest.mark.parametrize(
    ("status", "etype", "code", "kind"),
    [
        (400, "invalid_request_error", "model_not_found", "not_found"),  # §2e: unknown model is 400 here
        (400, "invalid_request_error", "decimal_below_min_value", "invalid_request"),  # recorded (E23)
        (401, "invalid_request_error", "invalid_api_key", "auth"),
        (403, "permission_error", None, "permission"),
        (404, "invalid_request_error", None, "not_found"),
        (429, "requests", "rate_limit_exceeded", "rate_limit"),
        (429, "insufficient_quota", "insufficient_quota", "rate_limit"),
        (500, "server_error", None, "server"),
        (503, "server_error", None, "overloaded"),
    ],
)
def test_error_from_wire_statuses_and_codes(status: int, etype: str, code: str | None, kind: str) -> None:
    error = adapter.error_from_wire(status, {"content-type": "application/json"}, _error_body(etype, code, "why"))
    assert (error.status, error.kind, error.message, error.retry_after) == (status, kind, "why", None)
    assert error.info.code == (code or etype)


def test_error_from_wire_retry_after_and_non_json_bodies() -> None:
    body = _error_body("requests", "rate_limit_exceeded")
    assert adapter.error_from_wire(429, {"Retry-After": "7"}, body).retry_after == 7.0
    assert adapter.error_from_wire(429, {"retry-after-ms": "1500", "retry-after": "7"}, body).retry_after == 1.5
    error = adapter.error_from_wire(502, {}, b"<html>Bad gateway</html>")
    assert (error.kind, error.message) == ("server", "<html>Bad gateway</html>")
    assert adapter.error_from_wire(500, {}, None).message == "HTTP 500"


def test_adapter_value_and_capabilities() -> None:
    assert get_adapter("openai_responses") is adapter.ADAPTER
    assert adapter.ADAPTER.wire_format == "openai_responses"
    assert adapter.capabilities == {
        "streaming",
        "parallel_tool_calls",
        "disable_parallel_tool_calls",
        "tool_choice_auto",
        "tool_choice_none",
        "tool_choice_required",
        "tool_choice_named",
        "images_in_tool_results",
        "system_prompt",
        "call_ids",
        "reasoning_replay",
        "reasoning_effort",
        "reasoning_off",
    }
    assert "is_error_in_tool_results" not in adapter.capabilities  # §8: no flag, text only


def test_documented_normalisations_are_the_only_differences() -> None:
    body = {
        "model": "m",
        "input": [
            {"type": "function_call_output", "call_id": "c", "output": "Error: not found"},
            {
                "type": "function_call_output",
                "call_id": "d",
                "output": [
                    {"type": "input_text", "text": "Error: "},
                    {"type": "input_image", "image_url": "https://x/y.png"},
                ],
            },
        ],
        "tools": [{"type": "function", "name": "f", "strict": False}],
    }
    request = adapter.request_from_wire(body)
    first, second = request.messages[0].parts
    assert isinstance(first, ToolResult) and isinstance(second, ToolResult)
    assert (first.is_error, first.content) == (True, (Text(text="not found"),))
    assert (second.is_error, second.content) == (True, (Image(url="https://x/y.png"),))
    wire = adapter.request_to_wire(request)
    # the module docstring's one normalisation: a tool without parameters gets an empty object schema
    assert DeepDiff(body, wire.body) == {"dictionary_item_added": ["root['tools'][0]['parameters']"]}
    assert wire.body["tools"][0]["parameters"] == {"type": "object", "properties": {}}
    assert [c.tool for c in wire.schema_changes] == ["f"]


@pytest.mark.parametrize("content", [[{"type": "output_text", "text": ["a"]}], ["just text"]])
def test_a_message_part_that_is_not_a_text_part_is_a_wire_format_error(content: list[Any]) -> None:
    from conformance.errors import WireFormatError

    body = {"id": "r", "status": "completed", "output": [{"type": "message", "role": "assistant", "content": content}]}
    with pytest.raises(WireFormatError, match=r"output\[0\]\.content\[0\] is not a text or refusal part"):
        get_adapter("openai_responses").response_from_wire(body)


# --------------------------------------------------------------------------------------------
# Items the client must execute (tool_search_call with execution "client")
# --------------------------------------------------------------------------------------------


def search_item(execution: str, status: str = "completed") -> dict[str, Any]:
    """openai-python ``ResponseToolSearchCall``: id, arguments (an object), call_id, execution, status, type."""
    return {
        "type": "tool_search_call",
        "id": "tsc_1",
        "call_id": "call_s",
        "execution": execution,
        "status": status,
        "arguments": {"query": "calendar", "limit": 2},
    }


def test_a_client_tool_search_call_is_surfaced_as_a_call() -> None:
    body = {"id": "resp_1", "status": "completed", "output": [search_item("client")], "usage": USAGE}
    response = adapter.response_from_wire(body)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments, call.arguments_error) == (
        "call_s",
        adapter.TOOL_SEARCH,
        {"query": "calendar", "limit": 2},
        None,
    )
    assert call.provider_details["item_type"] == "tool_search_call"
    assert response.finish_reason == "tool_calls"


def test_a_client_tool_search_call_is_surfaced_in_a_stream() -> None:
    data = sse(
        created(),
        added(search_item("client", "in_progress")),
        item_done(search_item("client")),
        terminal(output=[search_item("client")]),
    )
    response = fold(events_of(data))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_s", adapter.TOOL_SEARCH, {"query": "calendar", "limit": 2})
    ]
    assert response.finish_reason == "tool_calls"


def test_a_server_tool_search_call_ran_on_the_server_and_is_not_a_call() -> None:
    body = {"id": "resp_1", "status": "completed", "output": [search_item("server")], "usage": USAGE}
    assert adapter.response_from_wire(body).tool_calls == ()


def test_a_call_whose_ids_are_not_text_is_still_read_under_ids_of_the_readers_making() -> None:
    # found by the fuzz corpus (python -m tests.fuzz._drive --seed 0 cassette 1555): a call_id that is a list
    body = {
        "id": "resp_1",
        "status": "completed",
        "output": [{"type": "function_call", "id": ["x"], "call_id": ["y"], "name": "f", "arguments": "{}"}],
    }
    [call] = adapter.response_from_wire(body).tool_calls
    assert call.name == "f" and isinstance(call.id, str) and call.id


# --------------------------------------------------------------------------------------------
# Issue 28: reasoning settings, replay rules, reasoning from another wire, bad reasoning payloads
# (openai-python 3.x: shared/reasoning_effort.py, responses/response_create_params.py ``include``/``store``,
# responses/response_reasoning_item.py; issue 28 wire facts §3)
# --------------------------------------------------------------------------------------------


def reasoning_item(item_id: str, summary: str = "", encrypted: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": []}
    if summary:
        item["summary"] = [{"type": "summary_text", "text": summary}]
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


@pytest.mark.parametrize(
    ("settings", "reasoning", "stateless"),
    [
        (ReasoningSettings(effort="low"), {"effort": "low"}, True),
        (ReasoningSettings(effort="minimal"), {"effort": "minimal"}, True),
        (ReasoningSettings(enabled=False), {"effort": "none"}, False),
        (ReasoningSettings(), None, True),  # on, at the model's default effort
        (None, None, False),
    ],
)
def test_reasoning_settings_go_out_as_reasoning_effort(
    settings: ReasoningSettings | None, reasoning: dict[str, Any] | None, stateless: bool
) -> None:
    body = adapter.request_to_wire(Request(model="m", messages=(user_message("q"),), reasoning=settings)).body
    assert body.get("reasoning") == reasoning
    # asking for reasoning makes the request stateless, so the items come back with their payload
    assert ("include" in body, "store" in body) == (stateless, stateless)
    if stateless:
        assert (body["include"], body["store"]) == (["reasoning.encrypted_content"], False)
    back = adapter.request_from_wire(body)
    assert back.reasoning == (None if reasoning is None else settings)
    assert adapter.request_to_wire(back).body == body


def test_a_reasoning_budget_has_no_field_and_is_refused() -> None:
    with pytest.raises(UnsupportedContentError, match="budget"):
        adapter.request_to_wire(Request(model="m", reasoning=ReasoningSettings(budget_tokens=2048)))


@pytest.mark.parametrize(
    "body",
    [
        # recorded (pydantic-ai__test_openai_responses_streaming_usage.yaml): include without store, summary null
        {
            "model": "m",
            "input": "q",
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"effort": "low", "summary": None},
        },
        {"model": "m", "input": "q", "reasoning": {"effort": "low"}},  # effort, no include, no store
        {"model": "m", "input": "q", "reasoning": {"effort": "xhigh"}},  # no unified effort: kept raw
        {
            "model": "m",
            "input": "q",
            "reasoning": {"effort": "high"},
            "store": True,
            "include": ["message.output_text.logprobs"],
        },
    ],
)
def test_reasoning_bodies_round_trip(body: dict[str, Any]) -> None:
    assert adapter.request_to_wire(adapter.request_from_wire(body)).body == body


def user_message(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


def test_interleaved_reasoning_replays_in_order_before_the_item_it_preceded() -> None:
    first, second = reasoning_item("rs_1", "Plan.", "gAAA1"), reasoning_item("rs_2", "", "gAAA2")
    output = [
        first,
        fc_item("fc_1", "call_1", "f", "{}", "completed"),
        second,
        fc_item("fc_2", "call_2", "g", "{}", "completed"),
    ]
    decoded = adapter.response_from_wire({"status": "completed", "output": output})
    assert [p.kind for p in decoded.parts] == ["reasoning", "tool_call", "reasoning", "tool_call"]
    assert {p.source for p in decoded.parts if isinstance(p, Reasoning)} == {"openai_responses"}
    # streamed: the second item arrives after the first call is done, and lands after it
    stream = sse(
        added(reasoning_item("rs_1"), 0),
        {
            "type": "response.reasoning_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Pl",
        },
        item_done({**first, "content": [{"type": "reasoning_text", "text": "Pl"}]}, 0),
        added(fc_item("fc_1", "call_1", "f"), 1),
        item_done(fc_item("fc_1", "call_1", "f", "{}", "completed"), 1),
        added(reasoning_item("rs_2"), 2),
        item_done(second, 2),
        added(fc_item("fc_2", "call_2", "g"), 3),
        item_done(fc_item("fc_2", "call_2", "g", "{}", "completed"), 3),
        terminal(output=output),
    )
    streamed = fold(events_of(stream))
    assert [p.kind for p in streamed.parts] == ["reasoning", "tool_call", "reasoning", "tool_call"]
    reasoning = [p for p in streamed.parts if isinstance(p, Reasoning)]
    assert [(r.text, r.signature, r.redacted, r.source) for r in reasoning] == [
        ("Pl", "gAAA1", None, "openai_responses"),
        ("", None, "gAAA2", "openai_responses"),  # only the payload: redacted reasoning
    ]
    results = Message(role="tool", parts=(ToolResult(call_id="call_1"), ToolResult(call_id="call_2")))
    history = Request(messages=(user_message("q"), Message(role="assistant", parts=decoded.parts), results))
    wire = adapter.request_to_wire(history)
    assert [(i.get("type"), i.get("id")) for i in wire.body["input"][1:5]] == [
        ("reasoning", "rs_1"),
        ("function_call", "fc_1"),
        ("reasoning", "rs_2"),
        ("function_call", "fc_2"),
    ]
    assert wire.body["input"][1] == first and wire.body["input"][3] == second  # verbatim
    assert wire.notes == ()


def test_reasoning_of_another_wire_is_left_out_and_said() -> None:
    anthropic = Reasoning(text="thinking", signature="EqQBCkgI", source="anthropic")
    gemini = Reasoning(signature="c2ln", source="gemini")
    call = ToolCall(id="call_1", name="f", arguments={}, arguments_raw="{}")
    wire = adapter.request_to_wire(Request(messages=(Message(role="assistant", parts=(anthropic, gemini, call)),)))
    assert [i["type"] for i in wire.body["input"]] == ["function_call"]
    assert len(wire.notes) == 2 and all("openai_responses cannot verify" in n for n in wire.notes)
    assert "anthropic" in wire.notes[0] and "gemini" in wire.notes[1]


def test_our_reasoning_without_its_item_or_with_nothing_after_it_is_left_out_and_said() -> None:
    no_item = Reasoning(text="Plan.", signature="gAAA", source="openai_responses")
    wire = adapter.request_to_wire(Request(messages=(Message(role="assistant", parts=(no_item, Text(text="ok"))),)))
    assert wire.body["input"] == [{"role": "assistant", "content": "ok"}]
    assert wire.notes and "no item id" in wire.notes[0]
    # coder/mux#59: "Item rs_* of type reasoning was provided without its required following item" (400)
    alone = Reasoning(signature="gAAA", source="openai_responses", provider_details={"item": reasoning_item("rs_9")})
    wire = adapter.request_to_wire(Request(messages=(user_message("q"), Message(role="assistant", parts=(alone,)))))
    assert [i.get("type", "message") for i in wire.body["input"]] == ["message"]
    assert wire.notes and "rs_9" in wire.notes[0] and "following item" in wire.notes[0]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": 42}, "encrypted_content is a int"),
        ({"type": "reasoning", "id": "rs_1", "summary": "thought"}, "summary is a str"),
        ({"type": "reasoning", "id": "rs_1", "summary": [7]}, r"summary\[0\] is not a text part"),
        (
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": 1}]},
            "content",
        ),
    ],
)
def test_a_reasoning_payload_of_the_wrong_type_is_a_clear_error(item: dict[str, Any], message: str) -> None:
    body = {"status": "completed", "output": [{"type": "message", "content": []}, item]}
    with pytest.raises(WireFormatError, match=rf"output\[1\]: {message}"):
        adapter.response_from_wire(body)
    with pytest.raises(WireFormatError, match=rf"output\[1\]: {message}"):
        list(adapter.stream_from_wire([sse(added(reasoning_item("rs_1"), 1), item_done(item, 1), terminal())]))
    with pytest.raises(WireFormatError, match=rf"input\[0\]: {message}"):
        adapter.request_from_wire({"model": "m", "input": [item]})


def test_a_megabyte_of_reasoning_summary_decodes_whole() -> None:
    text = "x" * (1 << 20)
    item = reasoning_item("rs_1", text, "gAAA")
    body = {"status": "completed", "output": [item, fc_item("fc_1", "call_1", "f", "{}", "completed")]}
    (reasoning, _) = adapter.response_from_wire(body).parts
    assert isinstance(reasoning, Reasoning) and reasoning.text == text
    pieces = [
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": text[i : i + 4096],
        }
        for i in range(0, len(text), 4096)
    ]
    streamed = fold(events_of(sse(added(reasoning_item("rs_1")), *pieces, item_done(item), terminal(output=[item]))))
    assert isinstance(streamed.parts[0], Reasoning) and streamed.parts[0].text == text


def _schema_errors(body: dict[str, Any]) -> list[str]:
    import jsonschema

    text = (Path(adapter.__file__).parents[1] / "schemas" / "requests" / "openai_responses.schema.json").read_text()
    return [e.message for e in jsonschema.Draft202012Validator(json.loads(text)).iter_errors(body)]


def test_the_request_schema_knows_reasoning_settings_and_reasoning_items() -> None:
    item = reasoning_item("rs_1", "Plan.", "gAAA")
    parts = (Reasoning(source="openai_responses", signature="gAAA", provider_details={"item": item}),)
    call = ToolCall(id="call_1", name="f", arguments={}, arguments_raw="{}")
    history = (user_message("q"), Message(role="assistant", parts=(*parts, call)))
    body = adapter.request_to_wire(
        Request(model="m", messages=history, reasoning=ReasoningSettings(effort="high"))
    ).body
    assert _schema_errors(body) == []
    assert _schema_errors({**body, "reasoning": {"effort": "extreme"}}) != []
    assert _schema_errors({"model": "m", "input": [{"type": "reasoning", "summary": []}]}) != []  # id required


def test_an_item_with_only_its_payload_is_redacted_reasoning_and_replays_verbatim() -> None:
    # recorded gpt-5 items without a summary asked for: summary [], encrypted_content (wire facts §3a, §7)
    item = reasoning_item("rs_1", "", "gAAAonly")
    output = [item, fc_item("fc_1", "call_1", "f", "{}", "completed")]
    (reasoning, call) = adapter.response_from_wire({"status": "completed", "output": output}).parts
    assert isinstance(reasoning, Reasoning)
    assert (reasoning.text, reasoning.signature, reasoning.redacted) == ("", None, "gAAAonly")
    body = {"model": "m", "input": [{"role": "user", "content": "q"}, *output]}
    request = adapter.request_from_wire(body)
    assert request.messages[1].parts[0] == reasoning
    assert adapter.request_to_wire(request).body == body
    changed = Reasoning(redacted="gAAAother", source="openai_responses", provider_details={"item": item})
    wire = adapter.request_to_wire(Request(messages=(Message(role="assistant", parts=(changed, call)),)))
    assert wire.body["input"][0] == {**item, "encrypted_content": "gAAAother"}  # the part's payload is what goes


@pytest.mark.parametrize("role", ["developer", "system"])
@pytest.mark.parametrize("typed", [False, True])
def test_a_first_developer_or_system_message_is_the_system_prompt(role: str, typed: bool) -> None:
    """``instructions`` is "A system (or developer) message inserted into the model's context"
    (openai-python ``response_create_params.py:112-113``); the AI SDK sends the system prompt as the
    first input message with role ``developer`` for reasoning models (@ai-sdk/openai dist/index.js:716,
    5996-6003): ``EasyInputMessageParam`` with role ``developer`` and a string content."""
    first: dict[str, Any] = {"role": role, "content": "Answer in one word."}
    if typed:
        first = {"type": "message", **first}
    body = {"model": "o4-mini", "input": [first, {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
    request = adapter.request_from_wire(body)
    assert request.system == "Answer in one word."
    assert [m.role for m in request.messages] == ["user"]
    assert adapter.request_to_wire(request).body == body  # written back as it came
    # with instructions given, a developer message is a message of its own (two instructions, both kept)
    both = adapter.request_from_wire({**body, "instructions": "Be kind."})
    assert both.system == "Be kind." and len(both.messages) == 2
    # a developer message with parts or other keys is kept as a message (it is not only the prompt)
    listed = {"model": "o4-mini", "input": [{"role": role, "content": [{"type": "input_text", "text": "x"}]}]}
    assert adapter.request_from_wire(listed).system is None


def test_a_reasoning_summary_beside_the_effort_leaves_the_effort_read() -> None:
    """``Reasoning.summary`` (openai-python ``shared_params/reasoning.py:54-60``) asks for a summary of
    the reasoning beside ``effort``; the AI SDK sends ``summary: "detailed"`` whenever an effort is set
    (@ai-sdk/openai docs/03-openai.mdx:280). The effort is the call's; the summary stays a wire field."""
    body = {"model": "o4-mini", "input": "hi", "reasoning": {"effort": "low", "summary": "detailed"}, "store": False}
    request = adapter.request_from_wire(body)
    assert request.reasoning is not None and request.reasoning.effort == "low"
    assert request.provider_details["extra"]["reasoning"] == {"summary": "detailed"}
    assert adapter.request_to_wire(request).body == body
    # without an effort, or with one outside the unified efforts, the object stays whole
    for raw in ({"summary": "auto"}, {"effort": "xhigh", "summary": "auto"}):
        kept = adapter.request_from_wire({"model": "o4-mini", "input": "hi", "reasoning": raw})
        assert kept.reasoning is None and kept.provider_details["extra"]["reasoning"] == raw


def test_an_item_reference_resolves_to_the_item_an_earlier_answer_gave() -> None:
    """``ItemReference`` (openai-python ``response_input_item_param.py:744-751``) names a stored item by
    id; ``store`` "Defaults to true when omitted" (``response_create_params.py:260-263``), and the AI SDK
    then sends its history's items by reference (@ai-sdk/openai dist/index.js:6089-6101, 6414-6430)."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think."}]}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_time", "arguments": "{}"}
    answer = {"id": "resp_1", "object": "response", "status": "completed", "output": [reasoning, call]}
    streamed = (
        b"event: response.created\ndata: "
        + json.dumps({"type": "response.created", "response": {"id": "resp_1", "output": []}}).encode()
        + b"\n\nevent: response.output_item.done\ndata: "
        + json.dumps({"type": "response.output_item.done", "output_index": 0, "item": reasoning}).encode()
        + b"\n\n"
    )
    body = {
        "model": "o4-mini",
        "input": [
            {"role": "user", "content": "time?"},
            {"type": "item_reference", "id": "rs_1"},
            call,
            {"type": "function_call_output", "call_id": "call_1", "output": "12:00"},
        ],
    }
    for served in ([json.dumps(answer).encode()], [streamed]):
        resolved = adapter.resolve_item_references(body, served)
        assert resolved["input"][1] == reasoning and resolved["input"][2] == call
        assert adapter.request_from_wire(resolved).messages[1].parts[0].kind == "reasoning"
    assert adapter.resolve_item_references({"model": "m", "input": "hi"}, []) == {"model": "m", "input": "hi"}
    # an id no answer gave stays a reference, which the reader refuses saying so
    left = adapter.resolve_item_references(body, [b'{"output": []}', b"not json"])
    assert left["input"][1] == {"type": "item_reference", "id": "rs_1"}
    with pytest.raises(UnsupportedContentError, match="item_reference 'rs_1' names no item an earlier answer gave"):
        adapter.request_from_wire(left)
