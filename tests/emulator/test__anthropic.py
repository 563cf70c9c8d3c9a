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
