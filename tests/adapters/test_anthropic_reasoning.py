"""``conformance.adapters.anthropic`` for issue 28: reasoning decoded and replayed, reasoning settings,
reasoning and cache usage, ``cache_control`` breakpoints, and bad reasoning input.

Expected values come from the anthropic-sdk-python types (``thinking_block_param.py``,
``redacted_thinking_block_param.py``, ``thinking_config_*_param.py``, ``output_config_param.py``,
``cache_control_ephemeral_param.py``, ``usage.py``, ``output_tokens_details.py``,
``message_delta_usage.py``, ``signature_delta.py``, ``lib/streaming/_messages.py``) and Anthropic's
thinking-tool-workflows and prompt-caching pages (platform.claude.com); every request body the
adapter makes is validated with the SDK's own ``MessageCreateParams`` TypedDicts (nothing dropped:
the validated body equals the body).
"""

from __future__ import annotations

import contextlib
import json
import resource
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from conformance.adapters import anthropic as adapter
from conformance.adapters._anthropic_messages import UNSIGNED_NOTE
from conformance.adapters.base import reasoning_note
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    ErrorEvent,
    Message,
    Reasoning,
    ReasoningSettings,
    Request,
    StreamEvent,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool(name="get_weather", description="Weather of a city", input_schema=SCHEMA)
TIME = Tool(name="get_time", description="Time in a zone", input_schema={"type": "object", "properties": {}})
EPHEMERAL = {"type": "ephemeral"}  # CacheControlEphemeralParam
SIG_1 = "EqQBCkYIBxgCKkD+first/sig=="
SIG_2 = "EqQBCkYIBxgCKkD+second/sig=="


def _sdk_body(body: dict[str, Any]) -> dict[str, Any]:
    """The body as the SDK's ``MessageCreateParams`` validates it (unknown keys would be dropped)."""
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    checker = TypeAdapter(MessageCreateParamsNonStreaming)  # alive while its lazy iterators are walked
    validated = _materialize(checker.validate_python(body))
    assert isinstance(validated, dict)
    return validated


def _materialize(value: Any) -> Any:
    """Pydantic validates the SDK's ``Iterable[...]`` fields lazily: walk them so every item is checked."""
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return [_materialize(item) for item in value]


def _wire(request: Request) -> dict[str, Any]:
    body = adapter.request_to_wire(request).body
    assert _sdk_body(body) == body
    return body


def _user(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


def _sse(*events: dict[str, Any]) -> bytes:
    """``event: <type>`` + ``data: <json>`` blocks, as the API sends them (wire-formats §3d)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 20, "output_tokens": 1},
    },
}
MESSAGE_STOP = {"type": "message_stop"}


def _message_delta(stop_reason: str, **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 40, **usage},
    }


def _thinking_stream(index: int, pieces: list[str], signature: str) -> list[dict[str, Any]]:
    """A thinking block as streamed: an empty start, thinking_delta pieces, one signature_delta just
    before content_block_stop (``signature_delta.py``)."""
    return [
        _start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        *[_delta(index, "thinking_delta", thinking=p) for p in pieces],
        _delta(index, "signature_delta", signature=signature),
        _stop(index),
    ]


def _tool_stream(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    return [
        _start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        _delta(index, "input_json_delta", partial_json=""),
        _delta(index, "input_json_delta", partial_json=arguments),
        _stop(index),
    ]


def _events(data: bytes) -> list[StreamEvent]:
    events = list(adapter.stream_from_wire([data], tools=(WEATHER, TIME)))
    assert lifecycle_problems(events) == []
    return events


# interleaved thinking: a thinking block between tool_use blocks (beta interleaved-thinking-2025-05-14 on
# Claude 4, quoted from Anthropic's docs in spring-projects/spring-ai#3513)
INTERLEAVED_BODY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [
        {"type": "thinking", "thinking": "Weather first.", "signature": SIG_1},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
        {"type": "thinking", "thinking": "Now the time.", "signature": SIG_2},
        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 20, "output_tokens": 40},
}
INTERLEAVED_PARTS = (
    Reasoning(text="Weather first.", signature=SIG_1, source="anthropic"),
    ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Oslo"}, arguments_raw='{"city":"Oslo"}'),
    Reasoning(text="Now the time.", signature=SIG_2, source="anthropic"),
    ToolCall(id="toolu_2", name="get_time", arguments={}, arguments_raw="{}"),
)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def test_interleaved_thinking_keeps_its_place_between_calls_whole_and_streamed() -> None:
    from anthropic.types import Message as SDKMessage

    assert [b.type for b in SDKMessage.model_validate(INTERLEAVED_BODY).content] == [
        "thinking",
        "tool_use",
        "thinking",
        "tool_use",
    ]
    assert adapter.response_from_wire(INTERLEAVED_BODY, tools=(WEATHER, TIME)).parts == INTERLEAVED_PARTS
    stream = _sse(
        MESSAGE_START,
        *_thinking_stream(0, ["Weather ", "first."], SIG_1),
        *_tool_stream(1, "toolu_1", "get_weather", '{"city":"Oslo"}'),
        *_thinking_stream(2, ["Now the ", "time."], SIG_2),
        *_tool_stream(3, "toolu_2", "get_time", "{}"),
        _message_delta("tool_use"),
        MESSAGE_STOP,
    )
    assert fold(_events(stream)).parts == INTERLEAVED_PARTS


def test_a_thinking_block_with_omitted_text_keeps_its_signature() -> None:
    # display "omitted": "thinking content is redacted but a signature is returned for multi-turn
    # continuity" (thinking_config_enabled_param.py); streamed, the block has no thinking_delta at all
    whole = {**INTERLEAVED_BODY, "content": [{"type": "thinking", "thinking": "", "signature": SIG_1}]}
    expected = (Reasoning(text="", signature=SIG_1, source="anthropic"),)
    assert adapter.response_from_wire(whole).parts == expected
    stream = _sse(MESSAGE_START, *_thinking_stream(0, [], SIG_1), _message_delta("end_turn"), MESSAGE_STOP)
    assert fold(_events(stream)).parts == expected


def test_the_signature_delta_is_assigned_not_appended() -> None:
    # lib/streaming/_messages.py: ``current_content_block.signature = event.delta.signature``
    stream = _sse(
        MESSAGE_START,
        _start(0, {"type": "thinking", "thinking": "", "signature": "stale"}),
        _delta(0, "thinking_delta", thinking="plan"),
        _delta(0, "signature_delta", signature=SIG_1),
        _stop(0),
        _message_delta("end_turn"),
        MESSAGE_STOP,
    )
    assert fold(_events(stream)).parts == (Reasoning(text="plan", signature=SIG_1, source="anthropic"),)


def test_redacted_thinking_decodes_with_its_source_whole_and_streamed() -> None:
    data = "EmwKAhgBEgy3va3pzix/LafPsn4a"
    whole = {
        **INTERLEAVED_BODY,
        "content": [{"type": "redacted_thinking", "data": data}, {"type": "text", "text": "Hi"}],
    }
    expected = (Reasoning(redacted=data, source="anthropic"), Text(text="Hi"))
    assert adapter.response_from_wire(whole).parts == expected
    stream = _sse(
        MESSAGE_START,
        _start(0, {"type": "redacted_thinking", "data": data}),
        _stop(0),
        _start(1, {"type": "text", "text": ""}),
        _delta(1, "text_delta", text="Hi"),
        _stop(1),
        _message_delta("end_turn"),
        MESSAGE_STOP,
    )
    assert fold(_events(stream)).parts == expected


def test_thinking_tokens_are_the_reasoning_count_whole_and_streamed() -> None:
    # usage.py / output_tokens_details.py: output_tokens_details.thinking_tokens (<= output_tokens);
    # message_delta_usage.py: the same field, cumulative, on message_delta
    from anthropic.types import Message as SDKMessage
    from anthropic.types import RawMessageDeltaEvent

    usage = {
        "input_tokens": 20,
        "cache_creation_input_tokens": 7,
        "cache_read_input_tokens": 100,
        "output_tokens": 40,
        "output_tokens_details": {"thinking_tokens": 31},
    }
    body = {**INTERLEAVED_BODY, "usage": usage}
    sdk_usage = SDKMessage.model_validate(body).usage
    assert sdk_usage.output_tokens_details is not None and sdk_usage.output_tokens_details.thinking_tokens == 31
    got = adapter.response_from_wire(body).usage
    assert got is not None
    assert (got.reasoning_tokens, got.cache_read_tokens, got.cache_write_tokens) == (31, 100, 7)
    assert (got.input_tokens, got.output_tokens) == (127, 40)
    last = _message_delta("end_turn", output_tokens_details={"thinking_tokens": 31})
    last["usage"]["output_tokens"] = 40
    assert RawMessageDeltaEvent.model_validate(last).usage.output_tokens_details is not None
    stream = _sse(MESSAGE_START, *_thinking_stream(0, ["x"], SIG_1), last, MESSAGE_STOP)
    streamed = fold(_events(stream)).usage
    assert streamed is not None and (streamed.reasoning_tokens, streamed.output_tokens) == (31, 40)


# --------------------------------------------------------------------------------------------
# Replay
# --------------------------------------------------------------------------------------------


def _loop(assistant_parts: tuple[Any, ...]) -> Request:
    results = Message(
        role="tool",
        parts=(
            ToolResult(call_id="toolu_1", content=(Text(text="-3C"),)),
            ToolResult(call_id="toolu_2", content=(Text(text="09:00"),)),
        ),
    )
    messages = (_user("Weather and time in Oslo?"), Message(role="assistant", parts=assistant_parts), results)
    return Request(model="claude-x", tools=(WEATHER, TIME), messages=messages, max_tokens=4096)


def test_the_assistant_turn_goes_back_whole_with_thinking_before_the_calls_it_preceded() -> None:
    # thinking_block_param.py: "passed back unmodified and in their original order"
    wire = adapter.request_to_wire(_loop(INTERLEAVED_PARTS))
    assert wire.notes == ()
    assert _sdk_body(wire.body) == wire.body
    assert wire.body["messages"][1] == {"role": "assistant", "content": INTERLEAVED_BODY["content"]}
    back = adapter.request_from_wire(wire.body, tools=(WEATHER, TIME))
    assert back.messages[1].parts == INTERLEAVED_PARTS


def test_reasoning_another_wire_produced_is_left_out_and_said() -> None:
    gemini = Reasoning(text="Checking the weather.", signature="c2lnbmF0dXJl", source="gemini")
    responses = Reasoning(text="", signature="gAAAAAB...", source="openai_responses")
    call = INTERLEAVED_PARTS[1]
    wire = adapter.request_to_wire(_loop((gemini, responses, call)))
    assert wire.body["messages"][1]["content"] == [INTERLEAVED_BODY["content"][1]]
    assert wire.notes == (reasoning_note(gemini, "anthropic"), reasoning_note(responses, "anthropic"))
    assert all(note and "left out" in note for note in wire.notes)


def test_unsigned_reasoning_is_left_out_and_said_and_redacted_reasoning_of_no_known_wire_goes_back() -> None:
    # ThinkingBlockParam.signature is Required; RedactedThinkingBlockParam.data is the whole block
    parts = (Reasoning(text="my own notes"), Reasoning(redacted="opaque=="), INTERLEAVED_PARTS[1])
    wire = adapter.request_to_wire(_loop(parts))
    assert wire.body["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "opaque=="},
        INTERLEAVED_BODY["content"][1],
    ]
    assert wire.notes == (UNSIGNED_NOTE,)


def test_the_same_reason_is_noted_once() -> None:
    parts = (Reasoning(text="a", source="ollama"), Reasoning(text="b", source="ollama"), INTERLEAVED_PARTS[1])
    assert len(adapter.request_to_wire(_loop(parts)).notes) == 1


def test_a_thinking_block_after_the_tool_use_it_should_precede_is_read_as_sent() -> None:
    # a client's body in the wrong order decodes in that order (the replay check finds it), no crash
    content = [INTERLEAVED_BODY["content"][1], INTERLEAVED_BODY["content"][0]]
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": content}]}
    read = adapter.request_from_wire(body)
    assert [p.kind for p in read.messages[0].parts] == ["tool_call", "reasoning"]
    assert adapter.request_to_wire(read).body == body


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ({"type": "thinking", "thinking": "x", "signature": 12345}, "signature"),
        ({"type": "thinking", "thinking": ["x"], "signature": SIG_1}, "thinking"),
        ({"type": "redacted_thinking", "data": {"k": 1}}, "data"),
    ],
)
def test_a_reasoning_payload_that_is_not_a_string_is_a_wire_format_error_naming_the_block(
    block: dict[str, Any], key: str
) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [block]}]}
    with pytest.raises(WireFormatError, match=rf"messages\[1\]\.content\[0\].*{key}"):
        adapter.request_from_wire(body)
    response = {**INTERLEAVED_BODY, "content": [block]}
    with pytest.raises(WireFormatError, match=rf"content\[0\].*{key}"):
        adapter.response_from_wire(response)


@pytest.mark.parametrize(
    "events",
    [
        [_start(0, {"type": "thinking", "thinking": 7, "signature": ""})],
        [_start(0, {"type": "thinking", "thinking": "", "signature": ""}), _delta(0, "thinking_delta", thinking=[1])],
        [
            _start(0, {"type": "thinking", "thinking": "", "signature": ""}),
            _delta(0, "signature_delta", signature={"a": 1}),
        ],
        [_start(0, {"type": "redacted_thinking", "data": 3})],
        [_start(0, {"type": "text", "text": ""}), _delta(0, "text_delta", text=5)],
    ],
    ids=["start_thinking", "thinking_delta", "signature_delta", "redacted", "text_delta"],
)
def test_a_streamed_payload_that_is_not_a_string_breaks_the_stream_with_a_clear_error(
    events: list[dict[str, Any]],
) -> None:
    stream = _sse(MESSAGE_START, *events, _stop(0), _message_delta("end_turn"), MESSAGE_STOP)
    got = _events(stream)
    errors = [e.error for e in got if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and errors[0].kind == "malformed_response"
    assert "not a string" in errors[0].message


def test_a_megabyte_of_thinking_decodes_whole_and_streamed_in_bounded_cpu_time() -> None:
    text = "reasoning " * 104_858  # 1 MiB and a little
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    whole = {**INTERLEAVED_BODY, "content": [{"type": "thinking", "thinking": text, "signature": SIG_1}]}
    assert adapter.response_from_wire(whole).parts == (Reasoning(text=text, signature=SIG_1, source="anthropic"),)
    pieces = [text[i : i + 256] for i in range(0, len(text), 256)]  # 4,097 thinking_delta events
    stream = _sse(MESSAGE_START, *_thinking_stream(0, pieces, SIG_1), _message_delta("end_turn"), MESSAGE_STOP)
    assert fold(_events(stream)).parts == (Reasoning(text=text, signature=SIG_1, source="anthropic"),)
    request = _loop((Reasoning(text=text, signature=SIG_1, source="anthropic"), INTERLEAVED_PARTS[1]))
    assert adapter.request_to_wire(request).body["messages"][1]["content"][0]["thinking"] == text
    used = resource.getrusage(resource.RUSAGE_SELF).ru_utime - before
    assert used < 60  # a generous safety net: linear work is a few seconds of CPU


# --------------------------------------------------------------------------------------------
# Reasoning settings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "max_tokens", "fields"),
    [
        (ReasoningSettings(enabled=False), None, {"thinking": {"type": "disabled"}}),
        (
            ReasoningSettings(budget_tokens=2048),
            4096,
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        ),
        (
            ReasoningSettings(effort="medium"),
            None,
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "medium"}},
        ),
        (
            ReasoningSettings(effort="low", budget_tokens=1024),
            2000,
            {"thinking": {"type": "enabled", "budget_tokens": 1024}, "output_config": {"effort": "low"}},
        ),
        (ReasoningSettings(), None, {"thinking": {"type": "adaptive"}}),
        (
            ReasoningSettings(enabled=False, effort="high"),
            None,
            {"thinking": {"type": "disabled"}, "output_config": {"effort": "high"}},
        ),
    ],
    ids=["off", "budget", "effort", "effort_and_budget", "on", "off_with_effort"],
)
def test_reasoning_settings_go_on_the_wire_and_come_back(
    settings: ReasoningSettings, max_tokens: int | None, fields: dict[str, Any]
) -> None:
    request = Request(model="m", messages=(_user("hi"),), max_tokens=max_tokens, reasoning=settings)
    body = _wire(request)
    assert {k: body[k] for k in ("thinking", "output_config") if k in body} == fields
    back = adapter.request_from_wire(body)
    assert back.reasoning == settings
    assert "extra" not in back.provider_details
    assert adapter.request_to_wire(back).body == body


def test_a_budget_without_max_tokens_gets_room_for_the_answer() -> None:
    # budget_tokens "less than max_tokens"; "Thinking tokens count toward your max_tokens limit"
    body = _wire(Request(model="m", messages=(_user("hi"),), reasoning=ReasoningSettings(budget_tokens=4000)))
    assert body["max_tokens"] == 4000 + 1024


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (Request(reasoning=ReasoningSettings(effort="minimal")), "no 'minimal' reasoning effort"),
        (Request(reasoning=ReasoningSettings(budget_tokens=512), max_tokens=4096), "at least 1024"),
        (Request(reasoning=ReasoningSettings(budget_tokens=4096), max_tokens=4096), "less than max_tokens"),
        (Request(reasoning=ReasoningSettings(enabled=False, budget_tokens=2048)), "with reasoning off"),
        (
            Request(
                tools=(WEATHER,),
                tool_choice="required",
                max_tokens=4096,
                reasoning=ReasoningSettings(budget_tokens=2048),
            ),
            "only tool_choice auto or none",
        ),
        (
            Request(
                tools=(WEATHER,),
                tool_choice="get_weather",
                max_tokens=4096,
                reasoning=ReasoningSettings(budget_tokens=2048),
            ),
            "only tool_choice auto or none",
        ),
    ],
    ids=["minimal", "small_budget", "budget_at_max_tokens", "budget_when_off", "forced_any", "forced_named"],
)
def test_settings_the_wire_has_no_form_for_are_refused_naming_the_rule(request_: Request, words: str) -> None:
    with pytest.raises(UnsupportedContentError, match=words):
        adapter.request_to_wire(request_)


def test_adaptive_thinking_may_force_a_tool() -> None:
    # platform.claude.com thinking-tool-workflows: manual ``enabled`` allows only auto/none; adaptive
    # allows forced tool use
    request = Request(tools=(WEATHER,), tool_choice="required", reasoning=ReasoningSettings(effort="high"))
    assert _wire(Request(model="m", messages=(_user("hi"),), **_fields(request)))["tool_choice"] == {"type": "any"}


def _fields(request: Request) -> dict[str, Any]:
    return {"tools": request.tools, "tool_choice": request.tool_choice, "reasoning": request.reasoning}


@pytest.mark.parametrize(
    "fields",
    [
        {"thinking": {"type": "enabled", "budget_tokens": 2048, "display": "omitted"}},
        {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "low"}},
        {"thinking": {"type": "adaptive"}, "output_config": {"effort": "xhigh"}},
        {"output_config": {"effort": "max"}},
        {"thinking": {"type": "between_tools"}},
        {"output_config": {"effort": "medium", "format": {"type": "json_schema", "schema": {"type": "object"}}}},
    ],
    ids=["display", "adaptive_display", "xhigh", "max_alone", "between_tools", "format"],
)
def test_reasoning_fields_the_settings_do_not_cover_round_trip(fields: dict[str, Any]) -> None:
    body = {"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}], **fields}
    assert _sdk_body(body) == body
    assert adapter.request_to_wire(adapter.request_from_wire(body)).body == body


def test_changed_settings_replace_the_read_ones_and_keep_the_other_output_config_fields() -> None:
    output_format = {"type": "json_schema", "schema": {"type": "object"}}
    body = {
        "model": "m",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "hi"}],
        "thinking": {"type": "adaptive", "display": "omitted"},
        "output_config": {"effort": "medium", "format": output_format},
    }
    read = adapter.request_from_wire(body)
    assert read.reasoning == ReasoningSettings(effort="medium")
    changed = Request(
        model="m",
        messages=read.messages,
        max_tokens=4096,
        reasoning=ReasoningSettings(effort="high"),
        provider_details=read.provider_details,
    )
    sent = _wire(changed)
    assert sent["thinking"] == {"type": "adaptive"}
    assert sent["output_config"] == {"format": output_format, "effort": "high"}
    cleared = Request(model="m", messages=read.messages, max_tokens=4096, provider_details=read.provider_details)
    sent = _wire(cleared)
    assert "thinking" not in sent and sent["output_config"] == {"format": output_format}


def test_the_capabilities_name_the_settings_and_cache_control() -> None:
    assert {"reasoning_effort", "reasoning_budget", "reasoning_off", "cache_control"} <= adapter.capabilities


# --------------------------------------------------------------------------------------------
# cache_control breakpoints
# --------------------------------------------------------------------------------------------


def _cached_request() -> Request:
    """Breakpoints on the last tool, the system prompt and the last part of the last message, the
    incremental pattern of Anthropic's prompt-caching docs."""
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    return Request(
        model="claude-x",
        system="You check the weather.",
        system_cache_control=one_hour,
        tools=(WEATHER, Tool(name="get_time", input_schema=TIME.input_schema, cache_control=one_hour)),
        max_tokens=4096,
        messages=(
            Message(role="user", parts=(Text(text="Oslo?", cache_control=EPHEMERAL),)),
            Message(role="assistant", parts=INTERLEAVED_PARTS[:2]),
            Message(
                role="tool",
                parts=(ToolResult(call_id="toolu_1", content=(Text(text="-3C"),), cache_control=EPHEMERAL),),
            ),
        ),
    )


def test_breakpoints_go_on_the_blocks_the_caller_marked_and_come_back_on_the_same_fields() -> None:
    request = _cached_request()
    body = _wire(request)
    assert body["system"] == [
        {"type": "text", "text": "You check the weather.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Oslo?", "cache_control": EPHEMERAL}]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "-3C", "cache_control": EPHEMERAL}
    ]
    back = adapter.request_from_wire(body)
    assert back.system == request.system and back.system_cache_control == request.system_cache_control
    assert back.tools == request.tools
    assert back.messages[0] == request.messages[0]
    assert back.messages[2] == request.messages[2]
    assert adapter.request_to_wire(back).body == body


def test_a_marker_on_text_inside_a_tool_result_stays_on_that_block() -> None:
    result = ToolResult(call_id="toolu_1", content=(Text(text="-3C", cache_control=EPHEMERAL),))
    body = _wire(Request(model="m", messages=(Message(role="tool", parts=(result,)),)))
    assert body["messages"][0]["content"][0]["content"] == [{"type": "text", "text": "-3C", "cache_control": EPHEMERAL}]
    assert adapter.request_from_wire(body).messages[0].parts == (result,)


def test_system_blocks_with_a_marker_are_resent_while_text_and_marker_are_unchanged() -> None:
    blocks = [{"type": "text", "text": "A"}, {"type": "text", "text": "B", "cache_control": EPHEMERAL}]
    read = adapter.request_from_wire({"model": "m", "max_tokens": 5, "system": blocks, "messages": []})
    assert (read.system, read.system_cache_control) == ("A\n\nB", EPHEMERAL)
    assert adapter.request_to_wire(read).body["system"] == blocks
    moved = Request(model="m", system="A\n\nB", provider_details=read.provider_details)  # the marker removed
    assert adapter.request_to_wire(moved).body["system"] == "A\n\nB"


def test_a_system_breakpoint_without_a_system_prompt_is_refused() -> None:
    with pytest.raises(UnsupportedContentError, match="needs a system prompt"):
        adapter.request_to_wire(Request(system_cache_control=EPHEMERAL))


def test_a_marker_that_is_not_an_object_travels_as_it_came() -> None:
    # the API judges it; the adapter neither drops nor crashes on it
    block = {"type": "text", "text": "hi", "cache_control": "ephemeral"}
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [block]}]}
    read = adapter.request_from_wire(body)
    (text,) = read.messages[0].parts
    assert isinstance(text, Text) and text.cache_control is None
    assert adapter.request_to_wire(read).body == body


# --------------------------------------------------------------------------------------------
# The request schema (conformance/schemas/requests/anthropic.schema.json, translation.request_shape)
# --------------------------------------------------------------------------------------------


def _schema_errors(body: dict[str, Any]) -> list[str]:
    from conformance.checks.translation import request_schema

    validator = request_schema("anthropic")
    assert validator is not None
    return [e.message for e in validator.iter_errors(body)]


def test_the_adapters_reasoning_and_cache_bodies_fit_the_request_schema() -> None:
    assert _schema_errors(_wire(_cached_request())) == []
    assert _schema_errors(_wire(_loop(INTERLEAVED_PARTS))) == []
    for asked in (
        ReasoningSettings(enabled=False),
        ReasoningSettings(effort="low"),
        ReasoningSettings(budget_tokens=2048, effort="high"),
    ):
        assert _schema_errors(_wire(Request(model="m", messages=(_user("hi"),), reasoning=asked))) == []


@pytest.mark.parametrize(
    "change",
    [
        {"thinking": {"type": "enabled", "budget_tokens": 512}},  # >= 1024 (thinking_config_enabled_param.py)
        {"thinking": {"type": "enabled"}},  # budget_tokens is Required
        {"thinking": {"type": "disabled", "budget_tokens": 2048}},  # ThinkingConfigDisabledParam: type only
        {"output_config": {"effort": "minimal"}},  # OutputConfigParam.effort has no minimal
        {"cache_control": {"type": "persistent"}},  # CacheControlEphemeralParam.type is "ephemeral"
        {
            "tools": [
                {"name": "t", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral", "ttl": "2h"}}
            ]
        },
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "x", "signature": "s", "cache_control": EPHEMERAL}],
                },
            ]
        },  # ThinkingBlockParam has no cache_control
        {"messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}]},  # no signature
        {"messages": [{"role": "assistant", "content": [{"type": "redacted_thinking", "data": 5}]}]},
    ],
    ids=[
        "small_budget",
        "no_budget",
        "budget_when_disabled",
        "minimal",
        "top_level_marker_type",
        "tool_marker_ttl",
        "marker_on_thinking",
        "unsigned_thinking",
        "redacted_not_string",
    ],
)
def test_the_request_schema_rejects_what_the_sdk_types_rule_out(change: dict[str, Any]) -> None:
    body = {"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}], **change}
    assert _schema_errors(body) != []


# --------------------------------------------------------------------------------------------
# Hostile reasoning blocks: a clear error or a decoding, never a crash
# --------------------------------------------------------------------------------------------

_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
_BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["thinking", "redacted_thinking", "text", "tool_use"])},
    optional={
        "thinking": _ANY_JSON,
        "signature": _ANY_JSON,
        "data": _ANY_JSON,
        "text": _ANY_JSON,
        "cache_control": _ANY_JSON,
        "id": st.text(max_size=5),
        "name": st.text(max_size=5),
        "input": _ANY_JSON,
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_BLOCK, max_size=4))
def test_any_thinking_block_is_decoded_or_refused_with_a_wire_format_error(blocks: list[dict[str, Any]]) -> None:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": blocks}]}
    with contextlib.suppress(WireFormatError):  # UnsupportedContentError is one too
        # a tool_use whose input is not an object cannot be replayed: UnsupportedContentError
        adapter.request_to_wire(adapter.request_from_wire(body))
    with contextlib.suppress(WireFormatError):
        adapter.response_from_wire({**INTERLEAVED_BODY, "content": blocks})
    stream = [MESSAGE_START]
    for index, block in enumerate(blocks):
        stream.append(_start(index, block))
        for key, kind in (("thinking", "thinking_delta"), ("signature", "signature_delta"), ("text", "text_delta")):
            if key in block:
                stream.append(_delta(index, kind, **{key: block[key]}))
        stream.append(_stop(index))
    fold(adapter.stream_from_wire([_sse(*stream, _message_delta("end_turn"), MESSAGE_STOP)]))  # no exception
