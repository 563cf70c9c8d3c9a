"""Tests for ``conformance.selftest._bugs``: each rewrite does the bug it names to a wire body,
a stream or decoded events, and nothing else. Wire shapes from wire-formats.md §1-§5."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from conformance.adapters import get_adapter
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    Finish,
    StreamEvent,
    TextDelta,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
)
from conformance.selftest import _bugs as bugs


def _sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _fragment(index: int, call_id: str | None = None, name: str | None = None, arguments: str = "") -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        fragment.update(id=call_id, type="function")
        fragment["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}


def _stream_rewrite(patch: dict[str, Any], data: bytes, adapter: str = "openai_chat") -> list[StreamEvent]:
    return list(replace(get_adapter(adapter), **patch).stream_from_wire([data]))


def test_merge_parallel_by_index_puts_the_second_call_into_the_first() -> None:
    data = _sse(
        _fragment(0, "call_a", "get_weather"),
        _fragment(0, arguments='{"city":"Paris"}'),
        _fragment(1, "call_b", "get_weather"),
        _fragment(1, arguments='{"city":"Tokyo"}'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
    events = _stream_rewrite(bugs.merge_parallel_by_index(get_adapter("openai_chat")), data)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [s.tool_call_id for s in starts] == ["call_a"]
    assert end.tool_call_arguments_complete == '{"city":"Paris"}{"city":"Tokyo"}'
    assert end.arguments is None


def test_concat_repeated_names_joins_every_name_of_an_index() -> None:
    data = _sse(
        _fragment(0, "call_a", "get_weather"),
        _fragment(0, "call_a", "get_weather", '{"city":"Oslo"}'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
    events = _stream_rewrite(bugs.concat_repeated_names(get_adapter("openai_chat")), data)
    assert [e.tool_call_name for e in events if isinstance(e, ToolCallStart)] == ["get_weatherget_weather"]


def test_args_in_first_chunk_dropped_blanks_only_the_opening_fragment() -> None:
    data = _sse(
        _fragment(0, "call_a", "get_weather", '{"city":'),
        _fragment(0, arguments='"Oslo"}'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
    events = _stream_rewrite(bugs.args_in_first_chunk_dropped(get_adapter("openai_chat")), data)
    assert [e.tool_call_arguments_chunk for e in events if isinstance(e, ToolCallChunk)] == ['"Oslo"}']


def test_results_after_text_moves_the_text_in_front_of_the_tool_results() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}, {"type": "text", "text": "hi"}]}
        ]
    }
    out = bugs.results_after_text(body)
    assert [b["type"] for b in out["messages"][0]["content"]] == ["text", "tool_result"]


def test_drop_is_error_removes_the_flag_from_tool_results_only() -> None:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True}]}]
    }
    assert bugs.drop_is_error(body)["messages"][0]["content"][0] == {"type": "tool_result", "tool_use_id": "t1"}


def test_is_error_as_result_sends_the_error_as_a_result() -> None:
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"error": "boom"}}}]}]
    }
    response = bugs.is_error_as_result(body)["contents"][0]["parts"][0]["functionResponse"]["response"]
    assert response == {"result": "boom"}


def test_drop_gemini_call_ids_removes_the_ids_of_calls_and_responses_only() -> None:
    call = {"functionCall": {"name": "f", "args": {}, "id": "ab12cd34"}}
    response = {"functionResponse": {"name": "f", "id": "ab12cd34", "response": {"result": "ok"}}}
    body: dict[str, Any] = {"contents": [{"role": "model", "parts": [call]}, {"role": "user", "parts": [response]}]}
    contents = bugs.drop_gemini_call_ids(body)["contents"]
    assert contents[0]["parts"][0] == {"functionCall": {"name": "f", "args": {}}}
    assert contents[1]["parts"][0] == {"functionResponse": {"name": "f", "response": {"result": "ok"}}}


def test_reasoning_bugs_touch_only_the_reasoning_they_name() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": "sig"}
    anthropic: dict[str, Any] = {
        "messages": [{"role": "assistant", "content": [thinking, {"type": "text", "text": "x"}]}]
    }
    blocks = bugs.blank_thinking_signature(anthropic)["messages"][0]["content"]
    assert blocks == [{"type": "thinking", "thinking": "t", "signature": ""}, {"type": "text", "text": "x"}]
    call = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}
    gemini: dict[str, Any] = {"contents": [{"role": "model", "parts": [{"text": "a"}, call]}]}
    assert bugs.drop_thought_signatures(gemini)["contents"][0]["parts"] == [
        {"text": "a"},
        {"functionCall": call["functionCall"]},
    ]
    items = [
        {"role": "user", "content": "q"},
        {"type": "reasoning", "id": "rs_1"},
        {"type": "function_call", "call_id": "c"},
    ]
    responses: dict[str, Any] = {"input": items}
    assert bugs.drop_reasoning_items(responses)["input"] == [items[0], items[2]]


def test_issue_28_bugs_change_only_what_they_name() -> None:
    call = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}
    gemini: dict[str, Any] = {"contents": [{"role": "model", "parts": [{"text": "a", "thought": True}, call]}]}
    assert bugs.move_thought_signatures(gemini)["contents"][0]["parts"] == [
        {"text": "a", "thought": True, "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "f", "args": {}}},
    ]
    tool_turn = {"role": "assistant", "reasoning_content": "r", "tool_calls": [{"id": "c"}]}
    chat: dict[str, Any] = {"messages": [{"role": "user", "content": "q"}, dict(tool_turn), {"role": "user"}]}
    assert "reasoning_content" not in bugs.tool_turn_reasoning_dropped_at_user_turn(chat)["messages"][1]
    loop: dict[str, Any] = {"messages": [{"role": "user", "content": "q"}, dict(tool_turn), {"role": "tool"}]}
    assert bugs.tool_turn_reasoning_dropped_at_user_turn(loop)["messages"][1]["reasoning_content"] == "r"
    first: dict[str, Any] = {"tools": [1, 2], "messages": [{"role": "user", "content": "q"}]}
    assert bugs.tools_reordered_after_first_turn(first)["tools"] == [1, 2]
    later: dict[str, Any] = {"tools": [1, 2], "messages": [{"role": "user"}, {"role": "assistant"}]}
    assert bugs.tools_reordered_after_first_turn(later)["tools"] == [2, 1]

    def turn(args: str) -> dict[str, Any]:
        return {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": args}}]}

    body: dict[str, Any] = {"messages": [turn('{"a":1}'), {"role": "tool"}, turn('{"b":2}')]}
    out = bugs.earlier_calls_reserialised(body)["messages"]
    assert [m["tool_calls"][0]["function"]["arguments"] for m in (out[0], out[2])] == ['{"a": 1}', '{"b":2}']


def test_arguments_as_json_string_serializes_replayed_arguments() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"city": "Zürich"}}}]}
        ]
    }
    function = bugs.arguments_as_json_string(body)["messages"][0]["tool_calls"][0]["function"]
    assert function["arguments"] == '{"city": "Zürich"}'


def test_unflushed_loses_a_last_event_without_its_blank_line() -> None:
    assert bugs.unflushed(b'data: {"a": 1}\r\n\r\ndata: {"b": 2}') == b'data: {"a": 1}\r\n\r\n'
    assert bugs.unflushed(b'data: {"a": 1}\n\n') == b'data: {"a": 1}\n\n'
    assert bugs.unflushed(b'data: {"a": 1}') == b""


def test_stop_with_calls_as_stop_rewrites_only_a_gemini_stop() -> None:
    events: list[StreamEvent] = [Finish("tool_calls", "STOP")]
    assert bugs.stop_with_calls_as_stop(events, ()) == [Finish("stop", "STOP")]
    assert bugs.stop_with_calls_as_stop([Finish("length", "MAX_TOKENS")], ()) == [Finish("length", "MAX_TOKENS")]


def test_broken_stream_calls_valid_only_after_a_stream_error() -> None:
    cut = ToolCallEnd("c", '{"city":"Par', None, "the stream ended")
    error = ErrorEvent(ErrorInfo(kind="stream_incomplete", message="cut"))
    assert bugs.broken_stream_calls_valid([cut, Finish("tool_calls")], ()) == [cut, Finish("tool_calls")]
    fixed = bugs.broken_stream_calls_valid([cut, error, Finish("error")], ())
    assert fixed[0] == ToolCallEnd("c", '{"city":"Par', {"city": "Par"}, None)


def test_empty_args_error_and_bad_json_to_empty_are_opposite_mistakes() -> None:
    empty = ToolCallEnd("c", "", {}, None)
    bad = ToolCallEnd("c", "{oops", None, "invalid JSON")
    assert bugs.empty_args_error([empty], ())[0].arguments_error is not None  # type: ignore[union-attr]
    assert bugs.bad_json_to_empty([bad], ()) == [ToolCallEnd("c", "{oops", {}, None)]
    assert bugs.bad_json_to_empty([empty], ()) == [empty]


def test_text_dropped_with_calls_keeps_text_of_a_text_only_reply() -> None:
    text_only: list[StreamEvent] = [TextDelta("hi"), Finish("stop")]
    assert bugs.text_dropped_with_calls(text_only, ()) == text_only
    with_call: list[StreamEvent] = [
        TextDelta("hi"),
        ToolCallStart("c", "f", 0),
        ToolCallEnd("c", "", {}),
        Finish("tool_calls"),
    ]
    assert bugs.text_dropped_with_calls(with_call, ()) == with_call[1:]


def test_overloaded_and_busy_are_retyped_only_for_their_status() -> None:
    overloaded = ErrorInfo(kind="overloaded", message="Overloaded", status=529)
    busy = ErrorInfo(kind="overloaded", message="server busy", status=503)
    assert bugs.overloaded_as_server(overloaded).kind == "server"
    assert bugs.overloaded_as_server(busy).kind == "overloaded"
    assert bugs.unavailable_as_server(busy).kind == "server"


def test_client_tool_search_dropped_drops_only_that_call() -> None:
    search = [ToolCallStart("s", "tool_search", 0), ToolCallChunk("s", "{}"), ToolCallEnd("s", "{}", {}, None)]
    other = [ToolCallStart("c", "get_weather", 1), ToolCallEnd("c", "{}", {}, None)]
    kept = bugs.client_tool_search_dropped([*search, *other, Finish("tool_calls")], ())
    assert kept == [*other, Finish("tool_calls")]
