"""The emulator's Anthropic Messages wire, checked against wire facts (wire-formats.md §3, the
anthropic SDK types, the recorded Anthropic streams) and decoded with the reference adapter."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from _emulator_http import (
    check_fault,
    exchange,
    fault_cases,
    json_paths,
    named_sse_events,
    play_fault,
    real_body_paths,
    request_for,
    sse_blocks,
)

from conformance.assembly import lifecycle_problems
from conformance.emulator import Emulator, EmulatorScript
from conformance.emulator._anthropic import DEFAULT_STOP_SEQUENCE
from conformance.scenarios.values import Reply, ScriptedCall

WIRE = "anthropic"
WEATHER = ScriptedCall(
    name="get_weather", arguments={"city": "San Francisco"}, arguments_raw='{"city": "San Francisco"}'
)
TIME = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}")
CALLS = Reply(text="I'll check both.", tool_calls=(WEATHER, TIME), finish="tool_calls")


def _play(emu: Emulator, client: httpx.Client, reply: Reply, *, stream: bool) -> Any:
    emu.set_script(EmulatorScript(scenario_id="anthropic/x", replies=(reply,)))
    return exchange(client, WIRE, request_for(WIRE, stream=stream))


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_text_and_parallel_calls_decode(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, CALLS, stream=stream)
    response = outcome.response
    assert response.text == "I'll check both."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "San Francisco"}),
        ("get_time", {}),
    ]
    assert all(re.fullmatch(r"toolu_01[A-Za-z0-9]{22}", c.id) for c in response.tool_calls)
    assert response.finish_reason == "tool_calls"
    if stream:
        assert lifecycle_problems(outcome.events) == []


def test_the_stream_follows_the_recorded_event_sequence(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, CALLS, stream=True)
    events = named_sse_events(outcome.body)
    names = [name for name, _ in events]
    assert all(name == data["type"] for name, data in events)
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("ping") == 1 and names.index("ping") == 2  # right after the first block starts
    assert b'data: {"type": "ping"}' in outcome.body  # ping is spaced; other events are padded
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["role"] == "assistant"
    assert re.fullmatch(r"msg_01[A-Za-z0-9]{22}", start["id"]) and start["model"] == "claude-sonnet-4-5"
    blocks = [d for n, d in events if n == "content_block_start"]
    assert [b["index"] for b in blocks] == [0, 1, 2]
    tool = blocks[1]["content_block"]
    assert tool["type"] == "tool_use" and tool["input"] == {} and tool["name"] == "get_weather"
    deltas = [d["delta"] for n, d in events if n == "content_block_delta" and d["index"] == 1]
    assert deltas[0] == {"type": "input_json_delta", "partial_json": ""}  # always first (recorded)
    assert "".join(d["partial_json"] for d in deltas) == WEATHER.arguments_raw and len(deltas) > 2
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"]["output_tokens"] > 1


def test_event_json_is_padded_like_real_traffic(emu: Emulator, client: httpx.Client) -> None:
    blocks = sse_blocks(_play(emu, client, CALLS, stream=True).body)
    assert any(b" }\n\n" in block for block in blocks)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_thinking_comes_first_with_a_signature(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, Reply(reasoning="Weather needs a tool.", tool_calls=(WEATHER,)), stream=stream)
    reasoning = outcome.response.parts[0]
    assert reasoning.kind == "reasoning" and reasoning.text == "Weather needs a tool."
    assert reasoning.signature and reasoning.signature.startswith("Eq")


def test_the_whole_body_has_the_recorded_fields(emu: Emulator, client: httpx.Client) -> None:
    body = json.loads(_play(emu, client, CALLS, stream=False).body)
    assert body["type"] == "message" and body["role"] == "assistant" and body["stop_reason"] == "tool_use"
    assert [b["type"] for b in body["content"]] == ["text", "tool_use", "tool_use"]
    assert body["content"][1]["input"] == {"city": "San Francisco"}  # an object, not a string
    assert body["content"][1]["caller"] == {"type": "direct"}


def test_the_whole_body_uses_only_field_paths_real_anthropic_bodies_have(
    emu: Emulator, client: httpx.Client, realworld_dir: Path
) -> None:
    real = real_body_paths(realworld_dir, "anthropic")
    for reply in (CALLS, Reply(text="Plain answer.")):
        body = json.loads(_play(emu, client, reply, stream=False).body)
        assert json_paths(body) - real == set()


@pytest.mark.parametrize(
    ("finish", "stop_reason"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "refusal")],
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_stop_reasons(emu: Emulator, client: httpx.Client, finish: str, stop_reason: str, stream: bool) -> None:
    outcome = _play(emu, client, Reply(text="Cut sho", finish=finish), stream=stream)  # type: ignore[arg-type]
    if stream:
        raw = named_sse_events(outcome.body)[-2][1]["delta"]["stop_reason"]
    else:
        raw = json.loads(outcome.body)["stop_reason"]
    assert raw == stop_reason
    assert outcome.response.finish_reason == finish


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_context_window_exceeded_is_a_length_cut_the_sdk_reads(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # anthropic-sdk-python types/stop_reason.py lists model_context_window_exceeded
    from anthropic.types import Message, RawMessageDeltaEvent

    reply = Reply(text="Chapter one, and chapter", finish="length", quirks=("context_window_exceeded",))
    outcome = _play(emu, client, reply, stream=stream)
    if stream:
        stop = RawMessageDeltaEvent.model_validate(named_sse_events(outcome.body)[-2][1]).delta.stop_reason
    else:
        stop = Message.model_validate(json.loads(outcome.body)).stop_reason
    assert stop == "model_context_window_exceeded"
    assert (outcome.response.finish_reason, outcome.response.text) == ("length", "Chapter one, and chapter")
    plain = _play(emu, client, Reply(text="Done.", quirks=("context_window_exceeded",)), stream=stream)
    assert plain.response.finish_reason == "stop"  # the quirk changes only a length cut


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_stop_sequence_names_the_matched_sequence_the_sdk_reads(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # anthropic-sdk-python types/message.py: stop_reason "stop_sequence" and stop_sequence the matched
    # string (one of the request's stop_sequences); streamed in message_delta.delta (raw_message_delta_event.py)
    from anthropic.types import Message, RawMessageDeltaEvent

    reply = Reply(text="The answer is 42.", quirks=("stop_sequence",))
    asked = dataclasses.replace(
        request_for(WIRE, stream=stream), provider_details={"extra": {"stop_sequences": ["FINAL", "END"]}}
    )
    for request, matched in ((asked, "FINAL"), (request_for(WIRE, stream=stream), DEFAULT_STOP_SEQUENCE)):
        emu.set_script(EmulatorScript(scenario_id="anthropic/x", replies=(reply,)))
        outcome = exchange(client, WIRE, request)
        if stream:
            events = named_sse_events(outcome.body)
            assert Message.model_validate(events[0][1]["message"]).stop_sequence is None
            delta = RawMessageDeltaEvent.model_validate(events[-2][1]).delta
            stop = (delta.stop_reason, delta.stop_sequence)
        else:
            message = Message.model_validate(json.loads(outcome.body))
            stop = (message.stop_reason, message.stop_sequence)
        assert stop == ("stop_sequence", matched)
        assert (outcome.response.finish_reason, outcome.response.text) == ("stop", "The answer is 42.")
    plain = _play(emu, client, Reply(text="Cut", finish="length", quirks=("stop_sequence",)), stream=stream)
    assert plain.response.finish_reason == "length"  # the quirk changes only a stop


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_pause_turn_ends_a_server_tool_turn_the_sdk_reads(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    # anthropic-sdk-python types/message.py: pause_turn, "provide the response back as-is ... to continue";
    # server_tool_use_block.py, web_search_tool_result_block.py, server_tool_usage.py
    from anthropic.types import Message, RawMessageDeltaEvent, ServerToolUseBlock, WebSearchToolResultBlock

    reply = Reply(text="Let me look that up.", quirks=("pause_turn",))
    outcome = _play(emu, client, reply, stream=stream)
    if stream:
        events = named_sse_events(outcome.body)
        blocks = [data["content_block"] for name, data in events if name == "content_block_start"]
        partial = "".join(
            data["delta"]["partial_json"]
            for name, data in events
            if name == "content_block_delta" and data["index"] == 1
        )
        assert json.loads(partial) == {"query": "What is the weather in Paris?"}
        final = RawMessageDeltaEvent.model_validate(events[-2][1])
        stop, server = final.delta.stop_reason, final.usage.server_tool_use
    else:
        message = Message.model_validate(json.loads(outcome.body))
        blocks = [block.model_dump() for block in message.content]
        stop, server = message.stop_reason, message.usage.server_tool_use
    assert [b["type"] for b in blocks] == ["text", "server_tool_use", "web_search_tool_result"]
    use = ServerToolUseBlock.model_validate(blocks[1])
    result = WebSearchToolResultBlock.model_validate(blocks[2])
    assert use.name == "web_search" and use.id.startswith("srvtoolu_01") and result.tool_use_id == use.id
    assert stop == "pause_turn" and server is not None and server.web_search_requests == 1
    response = outcome.response
    assert (response.finish_reason, response.text, response.tool_calls) == ("other", "Let me look that up.", ())


def test_malformed_arguments_reach_the_client(emu: Emulator, client: httpx.Client) -> None:
    broken = ScriptedCall(name="get_weather", arguments_raw='{"city": "Par')
    streamed = _play(emu, client, Reply(tool_calls=(broken,)), stream=True).response.tool_calls[0]
    assert streamed.arguments_raw == '{"city": "Par' and streamed.arguments_error
    whole = _play(emu, client, Reply(tool_calls=(broken,)), stream=False)
    assert json.loads(whole.body)["content"][0]["input"] == '{"city": "Par'  # the text itself, as a JSON string
    assert whole.response.tool_calls[0].arguments_error


def test_the_ping_quirk_interleaves_pings_with_argument_deltas(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=("ping",)), stream=True)
    names = [name for name, _ in named_sse_events(outcome.body)]
    assert names.count("ping") > 3
    assert outcome.response.tool_calls[0].arguments == WEATHER.arguments


def test_empty_args_string_streams_only_the_empty_partial_json(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(TIME,), quirks=("empty_args_string",)), stream=True)
    deltas = [d["delta"]["partial_json"] for n, d in named_sse_events(outcome.body) if n == "content_block_delta"]
    assert deltas == [""]
    assert outcome.response.tool_calls[0].arguments == {}  # E3: an empty buffer is {}


@pytest.mark.parametrize(("kind", "stream"), fault_cases(WIRE))
def test_each_fault_decodes_to_the_kind_of_the_table(
    emu: Emulator, client: httpx.Client, kind: str, stream: bool
) -> None:
    check_fault(play_fault(emu, client, WIRE, kind, stream), WIRE, kind)


def test_overloaded_is_a_529_overloaded_error(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "overloaded", False)
    body = json.loads(outcome.body)
    assert outcome.status == 529
    assert body["type"] == "error" and body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert body["request_id"].startswith("req_") and outcome.headers["x-should-retry"] == "true"


def test_the_rate_limit_answer_has_anthropic_headers(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "rate_limit", True)
    assert outcome.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert json.loads(outcome.body)["error"]["type"] == "rate_limit_error"


def test_error_event_is_an_event_error(emu: Emulator, client: httpx.Client) -> None:
    events = named_sse_events(play_fault(emu, client, WIRE, "error_event", True).body)
    assert events[-1] == (
        "error",
        {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
    )


# --------------------------------------------------------------------------------------------
# Reasoning (issue 28): interleaved and redacted thinking, thinking tokens
# --------------------------------------------------------------------------------------------

THOUGHTFUL = Reply(
    reasoning="Two things to look up.",
    text="Checking.",
    tool_calls=(
        dataclasses.replace(WEATHER, reasoning="Weather first."),
        dataclasses.replace(TIME, reasoning="Then the clock."),
    ),
    finish="tool_calls",
)


def _accumulated(body: bytes) -> list[dict[str, Any]]:
    """The stream's content as the anthropic SDK's MessageStream accumulates it (``accumulate_event``)."""
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    events = TypeAdapter(RawMessageStreamEvent)
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for name, data in named_sse_events(body):
        if name != "ping":
            snapshot = accumulate_event(
                event=events.validate_python(data), current_snapshot=snapshot, json_bufs=json_bufs
            )
    assert snapshot is not None
    return [block.model_dump(exclude_none=True) for block in snapshot.content]


def test_thinking_before_each_call_is_its_own_signed_block_as_the_sdk_reads_it(
    emu: Emulator, client: httpx.Client
) -> None:
    # ANT-SDK thinking_block.py (thinking + opaque signature); interleaved thinking between tool_use blocks
    from anthropic.types import Message

    whole = _play(emu, client, THOUGHTFUL, stream=False)
    message = Message.model_validate(json.loads(whole.body))
    blocks = [block.model_dump(exclude_none=True) for block in message.content]
    assert [b["type"] for b in blocks] == ["thinking", "text", "thinking", "tool_use", "thinking", "tool_use"]
    thoughts = [b for b in blocks if b["type"] == "thinking"]
    assert [b["thinking"] for b in thoughts] == ["Two things to look up.", "Weather first.", "Then the clock."]
    assert len({b["signature"] for b in thoughts}) == 3  # one signature per block
    streamed = _play(emu, client, THOUGHTFUL, stream=True)
    # the stream accumulates to the same blocks (recorded streams start tool_use without ``caller``)
    assert _accumulated(streamed.body) == [{k: v for k, v in b.items() if k != "caller"} for b in blocks]
    assert lifecycle_problems(streamed.events) == []
    for outcome in (whole, streamed):
        parts = outcome.response.parts
        assert [p.kind for p in parts] == ["reasoning", "text", "reasoning", "tool_call", "reasoning", "tool_call"]
        reasoning = [p for p in parts if p.kind == "reasoning"]
        assert [(p.text, p.signature, p.source) for p in reasoning] == [
            (b["thinking"], b["signature"], "anthropic") for b in thoughts
        ]


def test_each_signature_delta_comes_once_just_before_its_blocks_stop(emu: Emulator, client: httpx.Client) -> None:
    # ANT-SDK signature_delta.py: "delivered ... just before the block's content_block_stop"
    events = named_sse_events(_play(emu, client, THOUGHTFUL, stream=True).body)
    thinking = [
        d["index"] for n, d in events if n == "content_block_start" and d["content_block"]["type"] == "thinking"
    ]
    assert len(thinking) == 3
    for index in thinking:
        own = [d for n, d in events if d.get("index") == index and n != "ping"]
        assert own[0]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
        kinds = [d["delta"]["type"] for d in own[1:-1]]
        assert kinds[-1] == "signature_delta" and kinds.count("signature_delta") == 1
        assert set(kinds[:-1]) == {"thinking_delta"} and own[-1]["type"] == "content_block_stop"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_redacted_reasoning_is_a_redacted_thinking_block_with_opaque_data(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # ANT-SDK redacted_thinking_block.py {type, data}; streamed whole in content_block_start (wire-formats §3d)
    from anthropic.types import RedactedThinkingBlock

    reply = Reply(reasoning="The secret plan.", reasoning_redacted=True, tool_calls=(WEATHER,), finish="tool_calls")
    outcome = _play(emu, client, reply, stream=stream)
    assert b"secret plan" not in outcome.body  # no text of redacted reasoning reaches the client
    if stream:
        events = named_sse_events(outcome.body)
        first = next(d["content_block"] for n, d in events if n == "content_block_start")
        assert not [d for n, d in events if n == "content_block_delta" and d["index"] == 0]
    else:
        first = json.loads(outcome.body)["content"][0]
    block = RedactedThinkingBlock.model_validate(first)
    assert block.type == "redacted_thinking" and len(block.data) > 40
    assert _play(emu, client, reply, stream=stream).body == outcome.body  # deterministic
    reasoning = outcome.response.parts[0]
    assert (reasoning.kind, reasoning.redacted, reasoning.text, reasoning.source) == (
        "reasoning",
        block.data,
        "",
        "anthropic",
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_thinking_tokens_count_every_thinking_block_within_output_tokens(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # ANT-SDK output_tokens_details.py: thinking_tokens "Always <= output_tokens"; cumulative on message_delta
    from anthropic.types import Message, RawMessageDeltaEvent, RawMessageStartEvent

    outcome = _play(emu, client, THOUGHTFUL, stream=stream)
    if stream:
        events = named_sse_events(outcome.body)
        start = RawMessageStartEvent.model_validate(events[0][1]).message.usage
        assert start.output_tokens_details is None  # message_start's count is the count so far
        usage = RawMessageDeltaEvent.model_validate(events[-2][1]).usage
    else:
        usage = Message.model_validate(json.loads(outcome.body)).usage  # type: ignore[assignment]
    assert usage.output_tokens_details is not None
    thinking = usage.output_tokens_details.thinking_tokens
    assert 0 < thinking <= usage.output_tokens
    texts = ("Two things to look up.", "Weather first.", "Then the clock.")
    assert thinking == sum((len(t) + 3) // 4 for t in texts)  # each block's text counted (a token per 4 characters)
    decoded = outcome.response.usage
    assert decoded is not None and decoded.reasoning_tokens == thinking
    plain = _play(emu, client, CALLS, stream=stream)
    assert b"output_tokens_details" not in plain.body  # no reasoning, no breakdown (as recorded)


def test_breakpoints_on_a_prompt_below_the_minimum_cacheable_length_cache_nothing(
    emu: Emulator, client: httpx.Client
) -> None:
    # the emulator's prompts are tens of tokens; Anthropic caches nothing below its minimum (docs/emulator.md)
    from anthropic.types import Message

    marked = dataclasses.replace(
        request_for(WIRE, stream=False),
        system="Be brief.",
        system_cache_control={"type": "ephemeral"},
    )
    emu.set_script(EmulatorScript(scenario_id="anthropic/x", replies=(Reply(text="Sunny."),)))
    outcome = exchange(client, WIRE, marked)
    assert json.loads(outcome.body)["usage"]["input_tokens"] < 1024
    usage = Message.model_validate(json.loads(outcome.body)).usage
    assert (usage.cache_creation_input_tokens, usage.cache_read_input_tokens) == (0, 0)
    decoded = outcome.response.usage
    assert decoded is not None and (decoded.cache_read_tokens, decoded.cache_write_tokens) == (0, 0)
