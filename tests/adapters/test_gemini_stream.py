"""``conformance.adapters.gemini`` streams: ``:streamGenerateContent?alt=sse`` and the JSON array.

Hand-made streams built from the documented wire shapes (wire-formats.md §4d: CRLF SSE
``data: <GenerateContentResponse>`` blocks, no ``[DONE]``, no event names; the JSON array without
``alt=sse``; whole ``functionCall`` parts; usage on every chunk; ``{"error": ...}`` payloads), never
from the adapter's own output.

Edge cases of wire-formats.md §10 covered here:
- E1  chunks cut anywhere (inside CRLF, inside UTF-8 code points): test_any_chunking_gives_the_same_events,
      test_cuts_inside_crlf_and_code_points
- E3  ``args`` absent -> ``{}``: test_calls_arrive_whole_and_parallel_calls_share_a_chunk
- E6  whole call in one chunk (start, chunk and end together): test_calls_arrive_whole_*
- E8  no terminator: a stream ending before any finishReason is ``stream_incomplete``; a cut JSON
      element or SSE event too; ``MAX_TOKENS``: test_a_stream_without_a_finish_reason_*,
      test_a_stream_cut_inside_*, test_max_tokens_*
- E9  comments, unknown events and unknown fields are ignored: test_pings_and_unknown_fields_are_ignored
- E10 signatures kept, signed trailing empty text part: test_signatures_*
- E19 usage on every chunk, the last wins: test_usage_on_every_chunk_the_last_wins
- E23 a plain JSON error body on a stream request: test_a_plain_json_error_body_is_an_error_event
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import gemini as adapter
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
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)


def _chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "responseId": "resp-1", **extra}


def _sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\r\n\r\n" for c in chunks)


def _array(*chunks: dict[str, Any]) -> bytes:
    # the shape recorded without alt=sse: pretty-printed elements joined by "\n,\r\n" (§4d)
    return b"[" + b"\n,\r\n".join(json.dumps(c, indent=2).encode() for c in chunks) + b"\n]"


def _events(body: bytes, chunks: list[bytes] | None = None, tools: tuple[Tool, ...] = ()) -> list[StreamEvent]:
    events = list(adapter.stream_from_wire(chunks if chunks is not None else [body], tools=tools))
    assert lifecycle_problems(events) == []
    return events


USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 4, "totalTokenCount": 14}
CALLS = _sse(
    _chunk({"text": "Checking."}, usageMetadata=USAGE),
    _chunk(
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "SIG"},
        {"functionCall": {"name": "get_time"}},
        usageMetadata=USAGE,
    ),
    _chunk({"text": ""}, finish="STOP", usageMetadata={**USAGE, "candidatesTokenCount": 9, "totalTokenCount": 19}),
)


def test_calls_arrive_whole_and_parallel_calls_share_a_chunk() -> None:
    events = _events(CALLS)
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "TextDelta",
        "UsageEvent",
        "ToolCallStart",
        "ToolCallChunk",
        "ToolCallEnd",
        "ToolCallStart",
        "ToolCallEnd",  # args absent: no chunk (E3)
        "UsageEvent",
        "UsageEvent",
        "Finish",
    ]
    start_a, chunk_a, end_a, start_b, end_b = events[2:7]
    assert isinstance(start_a, ToolCallStart) and isinstance(start_b, ToolCallStart)
    assert (start_a.tool_call_name, start_a.index, start_b.tool_call_name, start_b.index) == (
        "get_weather",
        0,
        "get_time",
        1,
    )
    assert start_a.provider_details == {"synthetic_id": True, "thoughtSignature": "SIG"}
    assert chunk_a == ToolCallChunk(start_a.tool_call_id, '{"city":"Paris"}')
    assert end_a == ToolCallEnd(start_a.tool_call_id, '{"city":"Paris"}', {"city": "Paris"})
    assert end_b == ToolCallEnd(start_b.tool_call_id, "", {})
    assert events[-1] == Finish("tool_calls", "STOP")


def test_the_stream_folds_to_the_non_streamed_response_of_the_same_turn() -> None:
    whole = _chunk(
        {"text": "Checking."},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "SIG"},
        {"functionCall": {"name": "get_time"}},
        {"text": ""},
        finish="STOP",
        usageMetadata={**USAGE, "candidatesTokenCount": 9, "totalTokenCount": 19},
    )
    assert fold(_events(CALLS)) == fold(adapter._events_from_body(whole, adapter._names([])))


def test_the_json_array_stream_gives_the_same_events_as_sse() -> None:
    chunks = [json.loads(block[6:]) for block in CALLS.decode().split("\r\n\r\n") if block]
    assert _events(_array(*chunks)) == _events(CALLS)


def test_stream_ids_are_used_when_sent_and_synthetic_ids_are_stable() -> None:
    body = _sse(_chunk({"functionCall": {"name": "t", "args": {}, "id": "j80tal12"}}, finish="STOP"))
    (start,) = [e for e in _events(body) if isinstance(e, ToolCallStart)]
    assert start.tool_call_id == "j80tal12" and start.provider_details == {}
    ids = [e.tool_call_id for e in _events(CALLS) if isinstance(e, ToolCallStart)]
    assert ids == [e.tool_call_id for e in _events(CALLS) if isinstance(e, ToolCallStart)] and len(set(ids)) == 2


def test_wire_names_map_back_via_tools() -> None:
    tool = Tool(name="fs/read")
    body = _sse(_chunk({"functionCall": {"name": "fs_read", "args": {}}}, finish="STOP"))
    (start,) = [e for e in _events(body, tools=(tool,)) if isinstance(e, ToolCallStart)]
    assert start.tool_call_name == "fs/read"


def test_invalid_arguments_never_crash_and_never_become_empty() -> None:
    body = _sse(_chunk({"functionCall": {"name": "t", "args": '{"city": "Pa'}}, finish="STOP"))
    (end,) = [e for e in _events(body) if isinstance(e, ToolCallEnd)]
    assert end.arguments is None and end.arguments_error and end.tool_call_arguments_complete == '{"city": "Pa'


def test_a_stream_without_a_finish_reason_is_incomplete() -> None:
    # §4d: there is no terminator; the finishReason chunk is the end
    body = _sse(_chunk({"functionCall": {"name": "t", "args": {"a": 1}}}), _chunk({"text": "and"}))
    events = _events(body)
    # calls arrive whole, so none is open at the cut: the complete call stays complete
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments == {"a": 1}
    *_, error, finish = events
    assert isinstance(error, ErrorEvent) and error.error.kind == "stream_incomplete"
    assert finish == Finish("error")
    assert _events(b"")[-2:] == [error, finish]  # nothing at all


@pytest.mark.parametrize(
    "body",
    [
        _array(_chunk({"text": "a"}), _chunk({"text": "b"}, finish="STOP"))[:-40],  # inside an element
        _sse(_chunk({"text": "a"}), _chunk({"text": "b"}, finish="STOP"))[:-30],  # inside the last data line
    ],
)
def test_a_stream_cut_inside_a_chunk_is_incomplete(body: bytes) -> None:
    events = _events(body)
    assert events[0] == TextDelta("a")
    error, finish = events[-2:]
    assert isinstance(error, ErrorEvent) and error.error.kind == "stream_incomplete" and finish == Finish("error")


def test_a_last_event_without_its_blank_line_is_still_read() -> None:
    body = _sse(_chunk({"text": "a"}, finish="STOP"))[:-4]  # the CRLF CRLF is missing
    assert _events(body) == [TextDelta("a"), Finish("stop", "STOP")]


def test_max_tokens_finishes_with_length() -> None:
    # a functionCall part is whole when present (§4d); MAX_TOKENS mid-call gives no call part (§4c)
    body = _sse(_chunk({"text": "Let me"}), _chunk({"text": " call"}, finish="MAX_TOKENS"))
    assert _events(body) == [TextDelta("Let me"), TextDelta(" call"), Finish("length", "MAX_TOKENS")]


def test_a_mid_stream_error_is_an_error_event() -> None:
    # §4d: a data payload {"error": {...}} in a 200 stream; the SDK raises on it
    error = {
        "code": 429,
        "message": "Resource exhausted.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}],
    }
    body = _sse(_chunk({"text": "a"}), {"error": error}, _chunk({"text": "never"}, finish="STOP"))
    events = _events(body)
    assert events[0] == TextDelta("a")
    event, finish = events[1:]
    assert isinstance(event, ErrorEvent)
    assert (event.error.kind, event.error.code, event.error.retry_after, event.error.status) == (
        "rate_limit",
        "RESOURCE_EXHAUSTED",
        3.0,
        None,
    )
    assert finish == Finish("error")


def test_a_plain_json_error_body_is_an_error_event() -> None:
    # E23: a pre-stream error is plain JSON even on alt=sse
    body = json.dumps(
        {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}, indent=2
    )
    error, finish = _events(body.encode() + b"\n")
    assert isinstance(error, ErrorEvent) and error.error.kind == "overloaded" and finish == Finish("error")


def test_malformed_json_is_a_malformed_response() -> None:
    body = b"data: {not json}\r\n\r\n" + _sse(_chunk({"text": "a"}, finish="STOP"))
    error, finish = _events(body)
    assert isinstance(error, ErrorEvent) and error.error.kind == "malformed_response" and finish == Finish("error")


def test_vertex_partial_args_are_reported_not_misread() -> None:
    # §4d: Vertex-only streamFunctionCallArguments; not the v1beta wire this adapter serves
    part = {"functionCall": {"name": "t", "willContinue": True}}
    error, finish = _events(_sse(_chunk(part)))
    assert isinstance(error, ErrorEvent) and error.error.kind == "malformed_response" and finish == Finish("error")


def test_pings_and_unknown_fields_are_ignored() -> None:
    body = (
        b": keep-alive\r\n\r\n"
        + b"event: ping\r\ndata: {}\r\n\r\n"
        + _sse(_chunk({"text": "a", "futureField": 1}, finish="STOP", somethingNew={"x": 1}))
    )
    assert _events(body) == [TextDelta("a"), Finish("stop", "STOP")]


def test_usage_on_every_chunk_the_last_wins() -> None:
    events = _events(CALLS)
    usages = [e for e in events if isinstance(e, UsageEvent)]
    assert len(usages) == 3
    usage = fold(events).usage
    assert usage is not None and (usage.output_tokens, usage.total_tokens) == (9, 19)


def test_signatures_on_thoughts_and_on_the_trailing_empty_text_part() -> None:
    # E10: thought summaries are reasoning; a signed empty text part keeps its signature apart
    body = _sse(
        _chunk({"text": "**Plan**", "thought": True}),
        _chunk({"text": " more", "thought": True}),
        _chunk({"text": "", "thoughtSignature": "S"}, finish="STOP"),
    )
    events = _events(body)
    assert events[:2] == [ReasoningDelta("**Plan**", source="gemini"), ReasoningDelta(" more", source="gemini")]
    assert fold(events).parts == (
        Reasoning(text="**Plan** more", source="gemini", provider_details={"thought": True}),
        Reasoning(text="", signature="S", source="gemini", provider_details={"thought": False}),
    )
    body = _sse(_chunk({"text": "Hello"}, {"text": "", "thoughtSignature": "S"}, finish="STOP"))
    assert fold(_events(body)).parts == (
        Text(text="Hello"),
        Reasoning(text="", signature="S", source="gemini", provider_details={"thought": False}),
    )


def test_a_blocked_prompt_finishes_with_content_filter() -> None:
    body = _sse({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": USAGE})
    assert _events(body)[-1] == Finish("content_filter", "PROHIBITED_CONTENT")


def _cut(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


UNICODE = _sse(
    _chunk({"text": "Zürich, 18°C 🌦"}),
    _chunk({"functionCall": {"name": "t", "args": {"city": "Zürich"}}}, finish="STOP"),
)


@pytest.mark.parametrize("body", [CALLS, _array(_chunk({"text": "é"}), _chunk({"text": "x"}, finish="STOP")), UNICODE])
def test_any_chunking_gives_the_same_events(body: bytes) -> None:
    expected = _events(body)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=30))
    def check(cuts: list[int]) -> None:
        assert _events(body, _cut(body, cuts)) == expected

    check()
    assert _events(body, [body[i : i + 1] for i in range(len(body))]) == expected


def test_cuts_inside_crlf_and_code_points() -> None:
    expected = _events(UNICODE)
    crlf = [i + 1 for i in range(len(UNICODE) - 1) if UNICODE[i : i + 2] == b"\r\n"]
    inside = [i for i in range(1, len(UNICODE)) if UNICODE[i] & 0xC0 == 0x80]
    assert crlf and inside
    for i in crlf + inside:
        assert _events(UNICODE, [UNICODE[:i], UNICODE[i:]]) == expected
    assert fold(expected).text == "Zürich, 18°C 🌦"


def test_leading_blank_chunks_do_not_decide_the_framing() -> None:
    body = _array(_chunk({"text": "a"}, finish="STOP"))
    assert _events(body, [b"", b"  \r\n", body]) == _events(body)


_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=3),
    lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=2), c, max_size=2),
    max_leaves=4,
)
_WIRE_PART = st.dictionaries(
    st.sampled_from(["text", "thought", "thoughtSignature", "functionCall", "inlineData"]),
    _VALUE | st.fixed_dictionaries({}, optional={"name": _VALUE, "args": _VALUE, "id": _VALUE}),
    max_size=3,
)
_WIRE_CHUNK = st.fixed_dictionaries(
    {},
    optional={
        "candidates": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "content": st.fixed_dictionaries({}, optional={"parts": st.lists(_WIRE_PART, max_size=3)}),
                    "finishReason": st.sampled_from(["STOP", "MAX_TOKENS", 1, 9]) | _VALUE,
                    "index": st.integers(0, 1),
                },
            ),
            max_size=2,
        ),
        "usageMetadata": st.dictionaries(st.sampled_from(["promptTokenCount", "totalTokenCount"]), _VALUE),
        "promptFeedback": st.fixed_dictionaries({}, optional={"blockReason": _VALUE}),
        "error": _VALUE,
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_WIRE_CHUNK, max_size=4), st.booleans())
def test_any_chunks_of_the_documented_shapes_give_a_valid_event_lifecycle(
    chunks: list[dict[str, Any]], as_array: bool
) -> None:
    # never crash, never break the lifecycle: calls with unusable arguments end with an error
    events = _events(_array(*chunks) if as_array and chunks else _sse(*chunks))
    assert isinstance(events[-1], Finish)


# --------------------------------------------------------------------------------------------
# Exact numbers and raw text (the SSE bytes are parsed by orjson where that is exact)
# --------------------------------------------------------------------------------------------


def test_integers_beyond_64_bits_keep_every_digit_in_arguments_and_usage() -> None:
    # JSON numbers have no size limit (RFC 8259 §6); orjson alone would give 1.2345678901234568e+29.
    big = 123456789012345678901234567890
    usage = {"promptTokenCount": 2**70, "totalTokenCount": 3}
    body = _sse(
        _chunk({"functionCall": {"name": "f", "args": {"n": big, "m": [-(2**64)]}}}, usageMetadata=usage),
        _chunk({"text": ""}, finish="STOP"),
    )
    for chunks in ([body], [body[i : i + 5] for i in range(0, len(body), 5)]):
        events = _events(body, chunks)
        end = next(e for e in events if isinstance(e, ToolCallEnd))
        assert end.arguments == {"n": big, "m": [-(2**64)]}
        assert end.tool_call_arguments_complete == f'{{"n":{big},"m":[{-(2**64)}]}}'
        counts = [e.usage for e in events if isinstance(e, UsageEvent)][-1]
        assert counts.input_tokens == 2**70 and counts.total_tokens == 3


def test_argument_text_is_the_compact_stdlib_text_of_the_arguments() -> None:
    # tool_call_arguments_complete of an object-valued wire: its compact JSON (json.dumps spelling:
    # 2.5e-07 and 1e-05, where orjson writes 2.5e-7 and 0.00001)
    args = {"small": 2.5e-07, "tiny": 1e-05, "big": 1e16, "s": 'é"\\\n', "e": "e-mail", "z": []}
    end = next(
        e
        for e in _events(_sse(_chunk({"functionCall": {"name": "f", "args": args}}, finish="STOP")))
        if isinstance(e, ToolCallEnd)
    )
    assert end.arguments == args
    assert end.tool_call_arguments_complete == json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def test_invalid_utf8_in_a_chunk_reads_as_replacement_characters() -> None:
    # SSE is UTF-8 text: invalid bytes decode to U+FFFD (WHATWG), the JSON stays readable
    body = _sse(_chunk({"text": "a"}, finish="STOP")).replace(b'"a"', b'"a\xffb"')
    assert [e for e in _events(body) if isinstance(e, TextDelta)] == [TextDelta("a\ufffdb")]


def test_a_long_crlf_chunk_in_pieces() -> None:
    args = {"body": "x" * 200_000, "rows": list(range(1000))}
    body = _sse(_chunk({"functionCall": {"name": "f", "args": args}}, finish="STOP"))
    pieces = [body[i : i + 16384] for i in range(0, len(body), 16384)]
    ends = [e for e in _events(body, pieces) if isinstance(e, ToolCallEnd)]
    assert [e.arguments for e in ends] == [args]
