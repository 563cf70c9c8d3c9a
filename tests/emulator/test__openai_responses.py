"""The emulator's OpenAI Responses wire, checked against wire facts (wire-formats.md §2, the
recorded Responses streams, vercel/ai's recorded error stream) and decoded with the reference
``openai_responses`` adapter."""

from __future__ import annotations

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
    real_streamed_response_paths,
    request_for,
)

from conformance.assembly import lifecycle_problems
from conformance.emulator import Emulator, EmulatorScript
from conformance.scenarios.values import Reply, ScriptedCall

WIRE = "openai_responses"
WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}')
TIME = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}")
CALLS = Reply(text="Checking both.", tool_calls=(WEATHER, TIME), finish="tool_calls")


def _play(emu: Emulator, client: httpx.Client, reply: Reply, *, stream: bool) -> Any:
    emu.set_script(EmulatorScript(scenario_id="responses/x", replies=(reply,)))
    return exchange(client, WIRE, request_for(WIRE, stream=stream))


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_text_and_parallel_calls_decode(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, CALLS, stream=stream)
    response = outcome.response
    assert response.text == "Checking both."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]
    assert response.finish_reason == "tool_calls"
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", c.id) for c in response.tool_calls)  # call_id, not the fc_ id
    assert all(c.provider_details["item_id"].startswith("fc_") for c in response.tool_calls)
    if stream:
        assert lifecycle_problems(outcome.events) == []


def test_the_stream_is_named_numbered_and_ends_with_response_completed(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, CALLS, stream=True)
    events = named_sse_events(outcome.body)
    assert all(name == data["type"] for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    names = [name for name, _ in events]
    assert names[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert names[-1] == "response.completed" and b"[DONE]" not in outcome.body
    created = events[0][1]["response"]
    assert created["status"] == "in_progress" and created["output"] == [] and created["usage"] is None
    final = events[-1][1]["response"]
    assert final["status"] == "completed" and final["id"] == created["id"]
    assert re.fullmatch(r"resp_[0-9a-f]{50}", final["id"])
    assert [item["type"] for item in final["output"]] == ["message", "function_call", "function_call"]
    usage = final["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_a_call_streams_added_deltas_done_and_item_done(emu: Emulator, client: httpx.Client) -> None:
    events = named_sse_events(_play(emu, client, Reply(tool_calls=(WEATHER,)), stream=True).body)
    calls = [
        (name, data) for name, data in events if "function_call" in name or name.startswith("response.output_item")
    ]
    added = calls[0][1]["item"]
    assert calls[0][0] == "response.output_item.added"
    assert added["type"] == "function_call" and added["status"] == "in_progress" and added["arguments"] == ""
    assert added["name"] == "get_weather" and added["id"].startswith("fc_") and added["call_id"].startswith("call_")
    deltas = [data for name, data in calls if name == "response.function_call_arguments.delta"]
    assert len(deltas) > 2 and all(d["item_id"] == added["id"] for d in deltas)
    assert "".join(d["delta"] for d in deltas) == WEATHER.arguments_raw
    done = next(data for name, data in calls if name == "response.function_call_arguments.done")
    assert done["arguments"] == WEATHER.arguments_raw and "name" not in done  # §2d: .done has no name
    item_done = calls[-1][1]["item"]
    assert calls[-1][0] == "response.output_item.done" and item_done["status"] == "completed"


def test_the_response_echoes_the_request_settings(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="responses/echo", replies=(Reply(text="ok"),)))
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": False}]
    body = {
        "model": "gpt-4.1-mini",
        "input": "hi",
        "instructions": "Be brief.",
        "tools": tools,
        "tool_choice": "required",
    }
    answer = client.post("/v1/responses", json={**body, "max_output_tokens": 64, "parallel_tool_calls": False}).json()
    assert answer["instructions"] == "Be brief." and answer["tools"] == tools and answer["tool_choice"] == "required"
    assert answer["max_output_tokens"] == 64 and answer["parallel_tool_calls"] is False
    assert answer["model"] == "gpt-4.1-mini" and answer["object"] == "response"


def test_reasoning_is_a_reasoning_item_before_the_message(emu: Emulator, client: httpx.Client) -> None:
    reply = Reply(reasoning="Think about Paris.", text="Sunny.")
    for stream in (False, True):
        outcome = _play(emu, client, reply, stream=stream)
        reasoning = [p for p in outcome.response.parts if p.kind == "reasoning"]
        assert [p.text for p in reasoning] == ["Think about Paris."]
        assert outcome.response.text == "Sunny."


def test_encrypted_reasoning_only_when_the_request_includes_it(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="responses/enc", replies=(Reply(reasoning="hmm", text="x"),)))
    plain = client.post("/v1/responses", json={"model": "m", "input": "hi"}).json()
    asked = client.post("/v1/responses", json={"model": "m", "input": "hi", "include": ["reasoning.encrypted_content"]})
    assert "encrypted_content" not in plain["output"][0]
    assert asked.json()["output"][0]["encrypted_content"].startswith("gAAAAAB")


def test_the_whole_body_uses_only_field_paths_real_responses_bodies_have(
    emu: Emulator, client: httpx.Client, realworld_dir: Path
) -> None:
    # the recorded whole bodies (2024-2025) and the response objects of the recorded streams (2026:
    # usage.input_tokens_details.cache_write_tokens, which openai-python's ResponseUsage requires)
    real = real_body_paths(realworld_dir, "openai_responses") | real_streamed_response_paths(realworld_dir)
    for reply in (CALLS, Reply(text="Plain answer.")):
        emu.set_script(EmulatorScript(scenario_id="responses/shape", replies=(reply,)))
        body = client.post("/v1/responses", json={"model": "m", "input": "hi"}).json()
        assert json_paths(body) - real == set()


@pytest.mark.parametrize(("finish", "reason"), [("length", "max_output_tokens"), ("content_filter", "content_filter")])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_cut_reply_is_incomplete(emu: Emulator, client: httpx.Client, finish: str, reason: str, stream: bool) -> None:
    outcome = _play(emu, client, Reply(text="Cut sho", finish=finish), stream=stream)  # type: ignore[arg-type]
    body = named_sse_events(outcome.body)[-1][1]["response"] if stream else json.loads(outcome.body)
    assert body["status"] == "incomplete" and body["incomplete_details"] == {"reason": reason}
    if stream:
        assert named_sse_events(outcome.body)[-1][0] == "response.incomplete"
    assert outcome.response.finish_reason == finish


def test_malformed_arguments_are_sent_verbatim(emu: Emulator, client: httpx.Client) -> None:
    broken = ScriptedCall(name="get_weather", arguments_raw='{"city": "Par')
    for stream in (False, True):
        (call,) = _play(emu, client, Reply(tool_calls=(broken,)), stream=stream).response.tool_calls
        assert call.arguments_raw == '{"city": "Par' and call.arguments_error


def test_args_in_first_chunk_puts_the_arguments_in_output_item_added(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=("args_in_first_chunk",)), stream=True)
    events = named_sse_events(outcome.body)
    assert not any(name == "response.function_call_arguments.delta" for name, _ in events)
    added = next(d["item"] for n, d in events if n == "response.output_item.added")
    assert added["arguments"] == WEATHER.arguments_raw
    assert outcome.response.tool_calls[0].arguments == WEATHER.arguments


def test_empty_args_string(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(TIME,), quirks=("empty_args_string",)), stream=False)
    assert json.loads(outcome.body)["output"][0]["arguments"] == ""
    assert outcome.response.tool_calls[0].arguments == {}


SEARCH = ScriptedCall(
    name="tool_search", arguments={"query": "book a flight"}, arguments_raw='{"query":"book a flight"}'
)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_client_tool_search_is_a_tool_search_call_item_the_sdk_reads(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # openai-python types/responses/response_tool_search_call.py: id, arguments (an object), call_id,
    # execution server|client, status, type; the stream events hold no argument deltas for it
    from openai.types.responses import ResponseOutputItem, ResponseOutputItemAddedEvent, ResponseOutputItemDoneEvent
    from openai.types.responses.response_tool_search_call import ResponseToolSearchCall
    from pydantic import TypeAdapter

    outcome = _play(emu, client, Reply(tool_calls=(SEARCH,), quirks=("client_tool_search",)), stream=stream)
    if stream:
        events = named_sse_events(outcome.body)
        items = [(n, d) for n, d in events if n.startswith("response.output_item")]
        assert [n for n, _ in items] == ["response.output_item.added", "response.output_item.done"]
        assert not any("arguments" in n for n, _ in events)
        added = ResponseOutputItemAddedEvent.model_validate(items[0][1]).item
        done = ResponseOutputItemDoneEvent.model_validate(items[1][1]).item
        assert isinstance(added, ResponseToolSearchCall) and added.status == "in_progress"
        body = events[-1][1]["response"]
    else:
        body = json.loads(outcome.body)
    (item,) = body["output"]
    done = TypeAdapter(ResponseOutputItem).validate_python(item)
    assert isinstance(done, ResponseToolSearchCall)
    assert (done.execution, done.status, done.arguments) == ("client", "completed", SEARCH.arguments)
    assert done.id.startswith("tsc_") and done.call_id is not None and done.call_id.startswith("call_")
    (call,) = outcome.response.tool_calls
    assert (call.id, call.name, call.arguments) == (done.call_id, "tool_search", SEARCH.arguments)


@pytest.mark.parametrize(("kind", "stream"), fault_cases(WIRE))
def test_each_fault_decodes_to_the_kind_of_the_table(
    emu: Emulator, client: httpx.Client, kind: str, stream: bool
) -> None:
    check_fault(play_fault(emu, client, WIRE, kind, stream), WIRE, kind)


def test_a_fault_on_a_stream_request_answers_plain_json(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "invalid_tool_schema", True)  # E23: a 400 on stream: true is JSON
    assert outcome.headers["content-type"].startswith("application/json")
    assert json.loads(outcome.body)["error"]["param"] == "tools[0].parameters"


def test_error_event_is_followed_by_response_failed(emu: Emulator, client: httpx.Client) -> None:
    events = named_sse_events(play_fault(emu, client, WIRE, "error_event", True).body)
    assert [name for name, _ in events][-2:] == ["error", "response.failed"]
    error = events[-2][1]
    assert error["error"]["type"] == "server_error" and error["sequence_number"] == len(events) - 2
    failed = events[-1][1]
    assert failed["sequence_number"] == len(events) - 1
    assert failed["response"]["status"] == "failed" and failed["response"]["error"]["code"] == "server_error"


# --------------------------------------------------------------------------------------------
# Issue 28: reasoning before each call, redacted reasoning, summary events, usage; checked with
# openai-python's own types (responses/response_reasoning_item.py, response_reasoning_summary_*_event.py)
# --------------------------------------------------------------------------------------------

THINKING = Reply(
    reasoning="The user wants two things.",
    tool_calls=(
        ScriptedCall(
            name="get_weather",
            arguments={"city": "Paris"},
            arguments_raw='{"city":"Paris"}',
            reasoning="Weather first.",
        ),
        ScriptedCall(name="get_time", arguments={}, arguments_raw="{}", reasoning="Then the time."),
    ),
    finish="tool_calls",
)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_each_calls_reasoning_is_an_item_right_before_it(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    from openai.types.responses import Response as SDKResponse
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    outcome = _play(emu, client, THINKING, stream=stream)
    if stream:
        events = [TypeAdapter(ResponseStreamEvent).validate_python(data) for _, data in named_sse_events(outcome.body)]
        body = events[-1].response.model_dump(mode="json", exclude_unset=True)
    else:
        body = json.loads(outcome.body)
    sdk = SDKResponse.model_validate(body)
    assert [item.type for item in sdk.output] == [
        "reasoning",
        "reasoning",
        "function_call",
        "reasoning",
        "function_call",
    ]
    summaries = [item.summary[0].text for item in sdk.output if item.type == "reasoning"]
    assert summaries == ["The user wants two things.", "Weather first.", "Then the time."]
    assert len({item.id for item in sdk.output}) == 5
    decoded = outcome.response
    assert [p.kind for p in decoded.parts] == ["reasoning", "reasoning", "tool_call", "reasoning", "tool_call"]
    assert [(p.text, p.source) for p in decoded.parts if p.kind == "reasoning"] == [
        (text, "openai_responses") for text in summaries
    ]
    assert sdk.usage is not None
    assert sdk.usage.output_tokens_details.reasoning_tokens == sum((len(t) + 3) // 4 for t in summaries)


def test_streamed_summary_events_carry_the_reasoning_text(emu: Emulator, client: httpx.Client) -> None:
    from openai.types.responses import (
        ResponseReasoningSummaryPartAddedEvent,
        ResponseReasoningSummaryPartDoneEvent,
        ResponseReasoningSummaryTextDeltaEvent,
        ResponseReasoningSummaryTextDoneEvent,
    )

    outcome = _play(emu, client, Reply(reasoning="Think about Paris now.", text="Sunny."), stream=True)
    events = named_sse_events(outcome.body)
    names = [name for name, _ in events]
    start = names.index("response.output_item.added")
    kinds = {
        "response.reasoning_summary_part.added": ResponseReasoningSummaryPartAddedEvent,
        "response.reasoning_summary_text.delta": ResponseReasoningSummaryTextDeltaEvent,
        "response.reasoning_summary_text.done": ResponseReasoningSummaryTextDoneEvent,
        "response.reasoning_summary_part.done": ResponseReasoningSummaryPartDoneEvent,
    }
    summary = [kinds[name].model_validate(data) for name, data in events if name in kinds]
    deltas = [e.delta for e in summary if isinstance(e, ResponseReasoningSummaryTextDeltaEvent)]
    assert len(deltas) > 1 and "".join(deltas) == "Think about Paris now."
    assert names[start + 1] == "response.reasoning_summary_part.added"
    assert names[start + 2 + len(deltas) : start + 5 + len(deltas)] == [
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
    ]
    item_id = events[start][1]["item"]["id"]
    assert all(e.item_id == item_id and e.summary_index == 0 and e.output_index == 0 for e in summary)
    assert [p.text for p in outcome.response.parts if p.kind == "reasoning"] == ["Think about Paris now."]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_redacted_reasoning_is_an_encrypted_item_with_an_empty_summary(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    from openai.types.responses import ResponseReasoningItem

    reply = Reply(reasoning="hidden", reasoning_redacted=True, tool_calls=(WEATHER,), finish="tool_calls")
    outcome = _play(emu, client, reply, stream=stream)  # no include: the payload is sent all the same
    if stream:
        events = named_sse_events(outcome.body)
        assert not any(name.startswith("response.reasoning_summary") for name, _ in events)
        output = events[-1][1]["response"]["output"]
    else:
        output = json.loads(outcome.body)["output"]
    item = ResponseReasoningItem.model_validate(output[0])
    assert item.summary == [] and item.encrypted_content is not None and item.encrypted_content.startswith("gAAAAAB")
    (reasoning, call) = outcome.response.parts
    assert reasoning.kind == "reasoning" and call.kind == "tool_call"
    assert (reasoning.text, reasoning.redacted, reasoning.source) == ("", item.encrypted_content, "openai_responses")


def test_a_stateless_request_gets_the_payload_and_store_false_echoed(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="responses/stateless", replies=(THINKING,)))
    body = {"model": "m", "input": "hi", "store": False, "include": ["reasoning.encrypted_content"]}
    answer = client.post("/v1/responses", json=body).json()
    assert answer["store"] is False
    payloads = [item["encrypted_content"] for item in answer["output"] if item["type"] == "reasoning"]
    assert len(payloads) == len(set(payloads)) == 3
    assert client.post("/v1/responses", json={"model": "m", "input": "hi"}).json()["store"] is True
