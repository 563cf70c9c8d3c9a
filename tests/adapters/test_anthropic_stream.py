"""``conformance.adapters.anthropic.stream_from_wire`` on hand-made SSE streams.

The streams are built from the documented event shapes (wire-formats.md §3d, the anthropic-sdk-python
``lib/streaming/_messages.py`` accumulator and ``_streaming.py``), not from the adapter's output.

Edge cases of wire-formats.md §10 covered here:
- E1  multi-byte UTF-8 cut between chunks: test_utf8_cut_anywhere_gives_the_same_events
- E2  arguments split mid-token: test_documented_stream_example
- E3  only empty ``partial_json`` -> ``{}``: test_a_no_argument_tool_streams_only_empty_fragments
- E5  several JSON values in one call: test_invalid_or_doubled_arguments_never_become_an_empty_object
- E8  stream cut without its terminator / by max_tokens: test_stream_without_message_stop_*,
      test_max_tokens_right_after_a_tool_use_block_*
- E9  ping and unknown events: test_ping_and_unknown_events_are_ignored
- E10 thinking before tool_use: test_thinking_then_tool_use
- E19 cumulative message_delta usage: test_message_delta_usage_is_cumulative
- E22 unknown stop reason: test_an_unknown_stop_reason_finishes_as_other_and_cuts_the_last_call
- E23 JSON body on a stream request: test_a_json_error_body_on_a_stream_request
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.adapters import anthropic as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import (
    ErrorEvent,
    Finish,
    Reasoning,
    ReasoningDelta,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)


def sse(*events: dict[str, Any], names: bool = True) -> bytes:
    """``event: <type>`` + ``data: <json>`` blocks, as the API sends them (§3d)."""
    out = []
    for event in events:
        if names:
            out.append(f"event: {event['type']}\n")
        out.append(f"data: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def message_start(input_tokens: int = 849, output_tokens: int = 1) -> dict[str, Any]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": []}
    usage = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    return {"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def tool_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    return block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def json_delta(index: int, text: str) -> dict[str, Any]:
    return delta(index, "input_json_delta", partial_json=text)


def text_delta(index: int, text: str) -> dict[str, Any]:
    return delta(index, "text_delta", text=text)


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str | None, output_tokens: int = 47, **usage: int) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens, **usage},
    }


PING = {"type": "ping"}
STOP = {"type": "message_stop"}


def events_of(data: bytes, **kw: Any) -> list[StreamEvent]:
    events = list(adapter.stream_from_wire([data], **kw))
    assert lifecycle_problems(events) == []
    return events


def one_call(arguments: list[str], stop_reason: str = "tool_use") -> bytes:
    return sse(
        message_start(),
        tool_start(0, "toolu_1", "get_weather"),
        *[json_delta(0, a) for a in arguments],
        block_stop(0),
        message_delta(stop_reason),
        STOP,
    )


def test_documented_stream_example() -> None:
    # §3d example: empty first partial_json, ping between deltas, E2 mid-token split
    data = sse(
        message_start(),
        tool_start(0, "toolu_1", "get_weather"),
        json_delta(0, ""),
        PING,
        json_delta(0, '{"city": "Par'),
        json_delta(0, 'is"}'),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    )
    events = events_of(data)
    assert [e for e in events if not isinstance(e, UsageEvent)] == [
        ToolCallStart("toolu_1", "get_weather", 0),
        ToolCallChunk("toolu_1", '{"city": "Par'),
        ToolCallChunk("toolu_1", 'is"}'),
        ToolCallEnd("toolu_1", '{"city": "Paris"}', {"city": "Paris"}),
        Finish("tool_calls", "tool_use"),
    ]
    assert isinstance(events[-1], Finish)


def test_the_data_type_decides_even_without_event_lines() -> None:
    # some proxies drop the ``event:`` line; the data JSON names the event (§3d)
    data = one_call(['{"city":', '"Paris"}'])
    assert list(adapter.stream_from_wire([data.replace(b"event: ", b": event ")])) == events_of(data)
    without = b"".join(line + b"\n" for line in data.split(b"\n") if not line.startswith(b"event:"))
    assert list(adapter.stream_from_wire([without])) == events_of(data)


def test_padded_data_json_is_parsed() -> None:
    # real recordings pad the data JSON with spaces before the closing brace
    data = one_call(['{"city": "Paris"}']).replace(b"}\n\n", b"}        \n\n")
    assert events_of(data) == events_of(one_call(['{"city": "Paris"}']))


def test_a_no_argument_tool_streams_only_empty_fragments() -> None:
    # E3 / §9 rule 4: every partial_json "" -> empty buffer -> {}
    end = [e for e in events_of(one_call(["", ""])) if isinstance(e, ToolCallEnd)]
    assert end == [ToolCallEnd("toolu_1", "", {})]


@pytest.mark.parametrize("raw", ['{"city": "Par', '{"a": 1}{"b": 2}', "[1, 2]", '{"a": tru}'])
def test_invalid_or_doubled_arguments_never_become_an_empty_object(raw: str) -> None:
    (end,) = [e for e in events_of(one_call(["", raw])) if isinstance(e, ToolCallEnd)]
    assert end.arguments is None
    assert end.arguments_error
    assert end.tool_call_arguments_complete == raw


def test_parallel_calls_after_text_keep_wire_order_and_running_indexes() -> None:
    data = sse(
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "Let me check."),
        block_stop(0),
        tool_start(1, "toolu_a", "get_weather"),
        json_delta(1, '{"city": "Paris"}'),
        block_stop(1),
        tool_start(2, "toolu_b", "get_time"),
        json_delta(2, ""),
        block_stop(2),
        message_delta("tool_use"),
        STOP,
    )
    events = events_of(data)
    assert [(e.tool_call_id, e.index) for e in events if isinstance(e, ToolCallStart)] == [
        ("toolu_a", 0),
        ("toolu_b", 1),
    ]
    response = fold(events)
    assert response.parts[0] == Text(text="Let me check.")
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]
    assert response.finish_reason == "tool_calls"


def test_the_held_end_leaves_as_soon_as_the_next_block_starts() -> None:
    # incremental: the End of call A is out once call B's content_block_start has arrived
    first = sse(message_start(), tool_start(0, "toolu_a", "t"), json_delta(0, "{}"), block_stop(0))
    second = sse(tool_start(1, "toolu_b", "t"))
    rest = sse(json_delta(1, "{}"), block_stop(1), message_delta("tool_use"), STOP)
    seen: list[StreamEvent] = []

    def chunks() -> Iterator[bytes]:
        yield first
        assert not any(isinstance(e, ToolCallEnd) for e in seen)  # held: the stop reason is not known yet
        yield second
        assert seen[-2:] == [ToolCallEnd("toolu_a", "{}", {}), ToolCallStart("toolu_b", "t", 1)]
        yield rest

    for event in adapter.stream_from_wire(chunks()):
        seen.append(event)
    assert lifecycle_problems(seen) == []
    assert seen[-1] == Finish("tool_calls", "tool_use")


def test_events_leave_before_the_stream_ends() -> None:
    def chunks() -> Iterator[bytes]:
        yield sse(message_start(), block_start(0, {"type": "text", "text": ""}), text_delta(0, "Hi"))
        raise RuntimeError("connection lost")

    stream = adapter.stream_from_wire(chunks())
    assert isinstance(next(stream), UsageEvent)
    assert next(stream) == TextDelta("Hi")
    with pytest.raises(RuntimeError):
        next(stream)


@pytest.mark.parametrize("stop_reason", ["max_tokens", "model_context_window_exceeded"])
def test_max_tokens_right_after_a_tool_use_block_ends_the_call_with_an_error(stop_reason: str) -> None:
    # §3c/§3d: at max_tokens the block's input may be incomplete even if it parses; do not execute
    events = events_of(one_call(['{"city": "Paris"}'], stop_reason))
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments is None and end.arguments_error and stop_reason in end.arguments_error
    assert end.tool_call_arguments_complete == '{"city": "Paris"}'
    assert events[-1] == Finish("length", stop_reason)


def test_max_tokens_inside_an_unclosed_tool_use_block() -> None:
    data = sse(
        message_start(), tool_start(0, "toolu_1", "t"), json_delta(0, '{"a": "tru'), message_delta("max_tokens"), STOP
    )
    events = events_of(data)
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments is None and end.tool_call_arguments_complete == '{"a": "tru'
    assert events[-1] == Finish("length", "max_tokens")


def test_an_unknown_stop_reason_finishes_as_other_and_cuts_the_last_call() -> None:
    # E22: ``terminated`` on very long tool input (anthropic-sdk-python#1317)
    events = events_of(one_call(['{"a": 1}'], "terminated"))
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments is None
    assert events[-1] == Finish("other", "terminated")


@pytest.mark.parametrize(
    ("data", "arguments"),
    [
        (sse(message_start(), tool_start(0, "toolu_1", "t"), json_delta(0, '{"a": 1}')), None),
        (sse(message_start(), tool_start(0, "toolu_1", "t"), json_delta(0, '{"a": 1}'), block_stop(0)), None),
        # message_delta(tool_use) said the call was whole: only the terminator is missing
        (
            sse(
                message_start(),
                tool_start(0, "toolu_1", "t"),
                json_delta(0, "{}"),
                block_stop(0),
                message_delta("tool_use"),
            ),
            {},
        ),
    ],
    ids=["mid-block", "after-block-stop", "after-message-delta"],
)
def test_stream_without_message_stop_is_incomplete(data: bytes, arguments: dict[str, Any] | None) -> None:
    events = events_of(data)
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments == arguments
    assert (end.arguments_error is None) == (arguments is not None)
    assert isinstance(events[-2], ErrorEvent) and events[-2].error.kind == "stream_incomplete"
    assert events[-1] == Finish("error")


def test_stream_cut_mid_block_ends_the_open_call_with_an_error() -> None:
    events = events_of(sse(message_start(), tool_start(0, "toolu_1", "t"), json_delta(0, '{"a": 1}')))
    assert [type(e).__name__ for e in events[-3:]] == ["ToolCallEnd", "ErrorEvent", "Finish"]
    end = events[-3]
    assert isinstance(end, ToolCallEnd) and end.arguments is None and end.tool_call_arguments_complete == '{"a": 1}'


def test_a_mid_stream_error_event() -> None:
    # §3d: ``event: error`` after HTTP 200 (docs example: overloaded_error "Overloaded")
    data = sse(
        message_start(),
        tool_start(0, "toolu_1", "t"),
        json_delta(0, '{"a"'),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    events = events_of(data)
    end, error, finish = events[-3:]
    assert isinstance(end, ToolCallEnd) and end.arguments is None
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.code, error.error.message, error.error.status) == (
        "overloaded",
        "overloaded_error",
        "Overloaded",
        None,
    )
    assert finish == Finish("error")


def test_ping_and_unknown_events_are_ignored() -> None:
    # E9: ping anywhere; the docs say new event types may be added
    plain = one_call(['{"city":', ' "Paris"}'])
    noisy = sse(
        PING,
        message_start(),
        PING,
        tool_start(0, "toolu_1", "get_weather"),
        {"type": "brand_new_event", "index": 0, "payload": [1]},
        json_delta(0, '{"city":'),
        PING,
        delta(0, "brand_new_delta", x=1),
        json_delta(0, ' "Paris"}'),
        block_stop(0),
        PING,
        message_delta("tool_use"),
        STOP,
    )
    assert events_of(noisy) == events_of(plain)


def test_thinking_then_tool_use() -> None:
    # E10: thinking_delta then signature_delta, redacted_thinking whole at content_block_start
    data = sse(
        message_start(),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, "thinking_delta", thinking="The user wants "),
        delta(0, "thinking_delta", thinking="the weather."),
        delta(0, "signature_delta", signature="EqQBCkYIBxgCKkD=="),
        block_stop(0),
        block_start(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
        block_stop(1),
        tool_start(2, "toolu_1", "get_weather"),
        json_delta(2, '{"city": "Paris"}'),
        block_stop(2),
        message_delta("tool_use"),
        STOP,
    )
    events = events_of(data)
    assert [e for e in events if isinstance(e, ReasoningDelta)] == [
        ReasoningDelta("The user wants ", source="anthropic"),
        ReasoningDelta("the weather.", source="anthropic"),
        ReasoningDelta(signature="EqQBCkYIBxgCKkD==", source="anthropic"),
        ReasoningDelta(redacted="EmwKAhgBEgy3va3pzix", source="anthropic"),
    ]
    parts = fold(events).parts
    assert parts[:2] == (
        Reasoning(text="The user wants the weather.", signature="EqQBCkYIBxgCKkD==", source="anthropic"),
        Reasoning(redacted="EmwKAhgBEgy3va3pzix", source="anthropic"),
    )
    assert isinstance(parts[2], ToolCall) and parts[2].arguments == {"city": "Paris"}
    # the same turn non-streamed folds to the same parts
    body = {
        "content": [
            {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCkYIBxgCKkD=="},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
    }
    assert adapter.response_from_wire(body).parts[:2] == parts[:2]


def test_citations_deltas_carry_nothing() -> None:
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0}
    data = sse(
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "Per the doc"),
        delta(0, "citations_delta", citation=citation),
        block_stop(0),
        message_delta("end_turn"),
        STOP,
    )
    assert fold(events_of(data)).parts == (Text(text="Per the doc"),)


def test_message_delta_usage_is_cumulative() -> None:
    # E19: message_delta.usage replaces message_start's counts field by field (SDK accumulate_event)
    data = sse(
        message_start(input_tokens=849, output_tokens=1),
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "Hi"),
        block_stop(0),
        message_delta("end_turn", output_tokens=47),
        STOP,
    )
    usage = fold(events_of(data)).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (849, 47, 896)
    again = sse(
        message_start(input_tokens=10, output_tokens=1),
        message_delta("end_turn", output_tokens=5, input_tokens=12, cache_read_input_tokens=100),
        STOP,
    )
    usage = fold(events_of(again)).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (112, 5, 100)


def test_end_turn_with_a_complete_call_finishes_as_tool_calls() -> None:
    assert events_of(one_call(["{}"], "end_turn"))[-1] == Finish("tool_calls", "end_turn")


def test_a_whole_input_in_content_block_start_is_used_when_no_delta_follows() -> None:
    # the SDK accumulator keeps content_block_start's input unless deltas replace it
    data = sse(
        message_start(),
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {"a": 1}}),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    )
    (end,) = [e for e in events_of(data) if isinstance(e, ToolCallEnd)]
    assert end.arguments == {"a": 1}


def test_names_map_back_with_tools() -> None:
    tool = Tool(name="admin.tools.list")
    wire_name = adapter.tools_to_wire([tool]).tools[0]["name"]
    data = sse(message_start(), tool_start(0, "toolu_1", wire_name), block_stop(0), message_delta("tool_use"), STOP)
    starts = [e for e in events_of(data, tools=[tool]) if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart("toolu_1", "admin.tools.list", 0)]


def test_malformed_json_in_an_event_breaks_the_stream() -> None:
    data = sse(message_start(), tool_start(0, "toolu_1", "t")) + b'event: content_block_delta\ndata: {"type": "con\n\n'
    events = events_of(data)
    assert isinstance(events[-2], ErrorEvent) and events[-2].error.kind == "malformed_response"
    assert isinstance(events[-3], ToolCallEnd) and events[-3].arguments is None


def test_a_json_error_body_on_a_stream_request() -> None:
    # E23: the 401 of REC:dd-trace-py__anthropic_v1_messages_post_a6302ed3 answers a stream request with JSON
    body = (
        b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}'
    )
    for chunks in ([body], [b"  ", body[:1], body[1:]]):
        events = list(adapter.stream_from_wire(chunks))
        assert lifecycle_problems(events) == []
        error, finish = events
        assert isinstance(error, ErrorEvent) and error.error.kind == "auth"
        assert error.error.message == "invalid x-api-key"
        assert finish == Finish("error")
    other = list(adapter.stream_from_wire([b'{"id": "msg_1", "content": []}']))
    assert isinstance(other[-2], ErrorEvent) and other[-2].error.kind == "malformed_response"


def test_an_empty_stream_is_incomplete() -> None:
    for chunks in ([], [b""], [b"\n\n"]):
        events = list(adapter.stream_from_wire(chunks))
        assert [type(e) for e in events] == [ErrorEvent, Finish]
        assert isinstance(events[0], ErrorEvent) and events[0].error.kind == "stream_incomplete"


def test_nothing_is_read_after_message_stop() -> None:
    data = one_call(["{}"]) + b"this is not SSE but it is never looked at"
    assert events_of(data) == events_of(one_call(["{}"]))


def test_utf8_cut_anywhere_gives_the_same_events() -> None:
    # E1: a multi-byte code point split between network chunks
    data = sse(
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "72°F in Zürich 🌤"),
        block_stop(0),
        tool_start(1, "toolu_1", "t"),
        json_delta(1, '{"city": "Zür'),
        json_delta(1, 'ich"}'),
        block_stop(1),
        message_delta("tool_use"),
        STOP,
    )
    whole = events_of(data)
    for cut in range(1, len(data)):
        assert list(adapter.stream_from_wire([data[:cut], data[cut:]])) == whole
    assert list(adapter.stream_from_wire([data[i : i + 1] for i in range(len(data))])) == whole
    assert fold(whole).text == "72°F in Zürich 🌤"


def test_a_tool_use_without_id_gets_the_same_synthetic_id_streamed_or_not() -> None:
    # Anthropic always sends ids; a proxy may not. The made-up id is stable and flagged.
    data = sse(
        message_start(),
        block_start(0, {"type": "tool_use", "name": "t", "input": {}}),
        json_delta(0, "{}"),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    )
    (streamed,) = fold(events_of(data)).tool_calls
    body = {"id": "msg_1", "content": [{"type": "tool_use", "name": "t", "input": {}}], "stop_reason": "tool_use"}
    (whole,) = adapter.response_from_wire(body).tool_calls
    assert streamed.id and streamed.id == whole.id == fold(events_of(data)).tool_calls[0].id
    assert streamed.provider_details == whole.provider_details == {"synthetic_id": True}


def test_message_stop_without_a_stop_reason_does_not_trust_the_last_call() -> None:
    # no message_delta: nothing says the tool_use block was whole
    data = sse(message_start(), tool_start(0, "toolu_1", "t"), json_delta(0, "{}"), block_stop(0), STOP)
    events = events_of(data)
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments is None and end.arguments_error
    assert events[-1] == Finish("other", None)
