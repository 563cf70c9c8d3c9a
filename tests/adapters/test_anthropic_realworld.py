"""``conformance.adapters.anthropic`` against real recorded traffic: its MANIFEST tables (``SPEC``,
run by the generic tests of ``test_realworld.py``) and the tests that are its own.

Expected values come from ``tests/realworld/MANIFEST.md`` (anthropic section: tool names, argument
previews, stop reasons, SSE event and delta counts, error payloads), from the recorded bytes read
with a naive parser independent of the adapter, and from the clients' own next requests (which
replay the calls they received); never from our output. The cassettes are read from
``tests/realworld``. No ``other/`` file routes to this adapter today (``SPEC.files``); the discovery
picks one up if it ever does.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from conformance.adapters import anthropic as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import ErrorEvent, Finish, Response, Text, ToolCall, ToolResult
from conformance.traffic.cassettes import Interaction
from tests.adapters._realworld import Error, NaiveCall, NaiveReading, RealWorld, Stream

pytestmark = pytest.mark.realworld

CREWAI_PARALLEL = (
    "crewai__TestAnthropicNativeToolCalling.test_anthropic_parallel_native_tool_calling_test_agent_kickoff.yaml"
)
CREWAI_STREAM = "crewai__TestAnthropicToolCallStreaming.test_anthropic_streaming_emits_tool_call_events.yaml"
DD_400 = "dd-trace-py__anthropic_completion_error.yaml"
DD_401 = "dd-trace-py__anthropic_v1_messages_post_a6302ed3.yaml"
OLL_HISTORY = "openllmetry__test_anthropic_tools_history_legacy.yaml"
OLL_TOOLS = "openllmetry__test_anthropic_tools_legacy.yaml"
OLL_STREAM = "openllmetry__test_anthropic_tools_streaming_legacy.yaml"
OTEL_404 = "otel-python-contrib__test_sync_messages_create_api_error.yaml"
PYDANTIC = "pydantic-ai__test_multiple_parallel_tool_calls.yaml"

# MANIFEST.md, anthropic section: per interaction, ([(tool, argument preview)], stop reason)
NON_STREAM_CALLS: dict[str, list[tuple[list[tuple[str, str]], str]]] = {
    CREWAI_PARALLEL: [
        (
            [
                ("parallel_local_search_one", '{"query": "latest OpenAI model release n'),
                ("parallel_local_search_two", '{"query": "latest Anthropic model releas'),
                ("parallel_local_search_three", '{"query": "latest Gemini model release n'),
            ],
            "tool_use",
        ),
        ([], "end_turn"),
    ],
    OLL_HISTORY: [([("get_time", '{"timezone": "America/Los_Angeles"}')], "tool_use")],
    OLL_TOOLS: [
        (
            [
                ("get_weather", '{"location": "New York, NY", "unit": "fa'),
                ("get_time", '{"timezone": "America/New_York"}'),
            ],
            "tool_use",
        )
    ],
    PYDANTIC: [
        (
            [("retrieve_entity_info", f'{{"name": "{n}"}}') for n in ("Alice", "Bob", "Charlie", "Daisy")],
            "tool_use",
        ),
        ([], "end_turn"),
    ],
}

# (tool names, SSE events, input_json_delta events, stop reason)
STREAMS = {
    CREWAI_STREAM: [Stream(["get_current_temperature"], 26, 5, "tool_use"), Stream([], 19, 0, "end_turn")],
    OLL_STREAM: [Stream(["get_weather", "get_time"], 35, 15, "tool_use")],
}

# (status, kind, error.type, error.message)
ERRORS = {
    DD_400: Error(
        400, "invalid_request", "invalid_request_error", "messages.0: Input does not match the expected shape."
    ),
    DD_401: Error(401, "auth", "authentication_error", "invalid x-api-key"),
    OTEL_404: Error(404, "not_found", "not_found_error", "model: invalid-model-name"),
}


def _naive_reading(events: list[dict[str, Any]]) -> NaiveReading:
    """Calls from ``content_block_start`` (tool_use) and their ``input_json_delta`` fragments by
    block index; text from ``text_delta``; usage from ``message_delta``."""
    deltas = [e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]
    calls = []
    for start in events:
        if start["type"] == "content_block_start" and start["content_block"]["type"] == "tool_use":
            raw = "".join(d["delta"]["partial_json"] for d in deltas if d["index"] == start["index"])
            block = start["content_block"]
            calls.append(NaiveCall(block["name"], json.loads(raw), raw, block["id"]))
    texts = [
        e["delta"]["text"] for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    ]
    (last_delta,) = [e for e in events if e["type"] == "message_delta"]
    usage = {"output_tokens": last_delta["usage"]["output_tokens"]}
    return NaiveReading(calls, "".join(texts), usage, len(deltas))


def _wire_path(interaction: Interaction) -> str:
    uri = urlsplit(interaction.request.uri)
    return uri.path + (f"?{uri.query}" if uri.query else "")  # /v1/messages, ?beta=true kept


def _check_call(call: ToolCall) -> None:
    assert call.id.startswith("toolu_")


def _check_utf8_fold(folded: Response) -> None:
    assert "72°F" in folded.text


def _utf8_stream() -> bytes:
    # the crewai answer holds "72°F" (a 2-byte code point) in a text delta
    _, interaction = SPEC.cassette(CREWAI_STREAM)
    assert interaction.response is not None
    return interaction.response.body


SPEC = RealWorld(
    name="anthropic",
    adapter=adapter,
    files=(9, 0),  # MANIFEST: anthropic (9 files)
    wire_path=_wire_path,
    wire_headers={"anthropic-version": "2023-06-01"},
    pass_path=True,
    # the one recorded body the API rejected as malformed (400 "messages.0: Input does not match the
    # expected shape."): documented to raise rather than round-trip
    rejects=lambda body: body["messages"] == ["Invalid content"],
    finish={"tool_use": "tool_calls", "end_turn": "stop"},
    non_stream_calls=NON_STREAM_CALLS,
    check_call=_check_call,
    streams=STREAMS,
    naive_reading=_naive_reading,
    errors=ERRORS,
    utf8_stream=_utf8_stream,
    check_utf8_fold=_check_utf8_fold,
)


# --------------------------------------------------------------------------------------------
# Round trips the clients made
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [CREWAI_PARALLEL, PYDANTIC])
def test_calls_received_are_the_calls_the_client_replayed_and_answered(name: str) -> None:
    # the client's next request replays the assistant turn and answers every id, results first (E17)
    first, second = SPEC.cassette(name)
    assert first.response is not None
    calls = adapter.response_from_wire(first.response.json).tool_calls
    request = adapter.request_from_wire(second.request.json)
    assistant, results = request.messages[-2:]
    replayed = [p for p in assistant.parts if isinstance(p, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in replayed] == [(c.id, c.name, c.arguments) for c in calls]
    assert results.role == "tool"
    assert [r.call_id for r in results.parts if isinstance(r, ToolResult)] == [c.id for c in calls]


def test_a_history_with_a_client_made_id() -> None:
    (interaction,) = SPEC.cassette(OLL_HISTORY)
    request = adapter.request_from_wire(interaction.request.json)
    _, assistant, results = request.messages
    assert assistant.parts[0] == Text(text="I'll help you get the weather and current time in San Francisco.")
    call = assistant.parts[1]
    assert isinstance(call, ToolCall)
    assert (call.id, call.name, call.arguments) == ("call_1", "get_weather", {"location": "San Francisco, CA"})
    assert results.parts == (ToolResult(call_id="call_1", content=(Text(text="Sunny and 65 degrees Fahrenheit"),)),)


def test_explicit_is_error_false_and_beta_query_survive() -> None:
    _, second = SPEC.cassette(PYDANTIC)
    request = adapter.request_from_wire(second.request.json, path=second.request.uri)
    results = request.messages[-1].parts
    assert all(isinstance(r, ToolResult) and r.is_error is False for r in results)
    wire = adapter.request_to_wire(request)
    assert wire.path == "/v1/messages?beta=true"
    assert [b["is_error"] for b in wire.body["messages"][-1]["content"]] == [False] * 4


def test_the_streamed_call_is_what_the_client_replayed() -> None:
    first, second = SPEC.cassette(CREWAI_STREAM)
    assert first.response is not None
    folded = fold(SPEC.events(first.response.body))
    replayed = adapter.request_from_wire(second.request.json).messages[1]
    assert replayed.parts[0] == Text(text=folded.text)
    call = replayed.parts[1]
    assert isinstance(call, ToolCall)
    (streamed,) = folded.tool_calls
    assert (call.id, call.name, call.arguments) == (streamed.id, streamed.name, streamed.arguments)
    assert streamed.arguments == {"city": "San Francisco"}


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def test_the_401_on_a_stream_request_is_json_and_maps_the_same() -> None:
    # E23: the 401 answers ``stream: true`` with a JSON body, not SSE
    (interaction,) = SPEC.cassette(DD_401)
    assert interaction.request.json["stream"] is True and interaction.response is not None
    events = SPEC.events(interaction.response.body)
    assert lifecycle_problems(events) == []
    error, finish = events
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.code) == ("auth", "authentication_error")
    assert error.error.provider_details == {"request_id": "req_011CVa2kcigwBtMFroktdQ2q"}
    assert finish == Finish("error")
