"""``conformance.adapters.ollama`` against real recorded traffic: its MANIFEST tables (``SPEC``, run
by the generic tests of ``test_realworld.py``) and the tests that are its own.

Expected values come from ``tests/realworld/MANIFEST.md`` (ollama section) and the recorded bytes
themselves, read with a naive line parser independent of the adapter; never from our output. The
cassettes are read from ``tests/realworld``. Chunk invariance runs over the recorded stream and
``HAND_MADE`` below (thinking, text and calls with multi-byte code points, which no recording holds).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from conformance.adapters import ollama as adapter
from conformance.assembly import fold
from conformance.model import Message, Reasoning, Request, Response, Text, ToolCall, ToolResult
from tests.adapters._realworld import Error, NaiveCall, NaiveReading, RealWorld, Stream, naive_ndjson

pytestmark = pytest.mark.realworld

OPENINFERENCE_404 = "openinference__test_chat_error_records_model_name.yaml"
OPENINFERENCE_CALL = "openinference__test_chat_with_tool_call.yaml"
OPENLLMETRY_LEGACY = "openllmetry__test_ollama_chat_tool_calls_legacy.yaml"
OPENLLMETRY_STREAM = "openllmetry__test_ollama_streaming_chat_legacy.yaml"

# MANIFEST.md, ollama section: per interaction, ([(tool, argument preview)], stop reason)
NON_STREAM_CALLS: dict[str, list[tuple[list[tuple[str, str]], str]]] = {
    OPENINFERENCE_CALL: [([("get_current_weather", '{"city": "Paris"}')], "stop")],
    OPENLLMETRY_LEGACY: [([], "stop")],
}

# (tool names, NDJSON lines, no delta events in this format, stop reason)
STREAMS = {OPENLLMETRY_STREAM: [Stream([], 50, None, "stop")]}

# (status, kind, no code on the wire: {"error": "..."}, message)
ERRORS = {OPENINFERENCE_404: Error(404, "not_found", None, "model 'nonexistent-model:latest' not found")}


def _naive_reading(lines: list[dict[str, Any]]) -> NaiveReading:
    """Text and calls from each line's ``message``; usage from the last line's counters."""
    calls = [
        NaiveCall(c["function"]["name"], c["function"]["arguments"], id=c.get("id"))
        for line in lines
        for c in line["message"].get("tool_calls") or []
    ]
    text = "".join(line["message"]["content"] for line in lines)
    last = lines[-1]
    return NaiveReading(calls, text, {"input_tokens": last["prompt_eval_count"], "output_tokens": last["eval_count"]})


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _msg(created_at: str, **message: Any) -> dict[str, Any]:
    return {"model": "m", "created_at": created_at, "message": {"role": "assistant", "content": "", **message}}


WEATHER = {"id": "call_a1b2c3d4", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Zürich"}}}
TIME = {"function": {"index": 1, "name": "get_time", "arguments": {"tz": "Asia/東京 🌏"}}}
HAND_MADE = b"".join(
    [
        _line({**_msg("t0", thinking="Pensé 🤔"), "done": False}),
        _line({**_msg("t1", content="Météo à 東京 ✅"), "done": False}),
        _line({**_msg("t2", tool_calls=[WEATHER, TIME]), "done": False}),
        _line({**_msg("t3"), "done": True, "done_reason": "stop", "prompt_eval_count": 12, "eval_count": 34}),
    ]
)


def _check_utf8_fold(folded: Response) -> None:
    assert folded.text == "Météo à 東京 ✅"
    assert [c.arguments for c in folded.tool_calls] == [{"city": "Zürich"}, {"tz": "Asia/東京 🌏"}]


SPEC = RealWorld(
    name="ollama",
    adapter=adapter,
    files=(4, 0),  # MANIFEST: ollama (4 files); other/ holds OpenAI-compatible traffic only
    wire_path=lambda interaction: "/api/chat",
    finish={"stop": "stop"},
    calls_finish=True,  # done_reason "stop" with calls (§5c)
    non_stream_calls=NON_STREAM_CALLS,
    streams=STREAMS,
    naive_chunks=naive_ndjson,
    naive_reading=_naive_reading,
    errors=ERRORS,
    extra_streams={"hand-made": HAND_MADE},
    utf8_stream=lambda: HAND_MADE,
    utf8_min=11,
    check_utf8_fold=_check_utf8_fold,
)


# --------------------------------------------------------------------------------------------
# One file each (MANIFEST.md, ollama section)
# --------------------------------------------------------------------------------------------


def test_non_stream_tool_call_with_object_arguments_id_and_thinking() -> None:
    (interaction,) = SPEC.cassette(OPENINFERENCE_CALL)
    assert interaction.response is not None
    raw = interaction.response.json
    response = adapter.response_from_wire(raw)
    # MANIFEST: 1 tool call get_current_weather({"city": "Paris"}); stop=stop; a call id and `thinking`
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_gsiiy8py", "get_current_weather", {"city": "Paris"})
    assert call.arguments == json.loads('{"city": "Paris"}')
    assert call.arguments_raw == '{"city":"Paris"}'  # object arguments: their compact JSON
    assert call.arguments_error is None and "synthetic_id" not in call.provider_details
    assert response.finish_reason == "tool_calls"  # done_reason "stop" + calls (§5c)
    assert response.provider_details["finish_reason"] == "stop"
    assert isinstance(response.parts[0], Reasoning)
    assert response.parts[0].text == raw["message"]["thinking"]
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (292, 143)
    request = adapter.request_from_wire(interaction.request.json)
    assert [t.name for t in request.tools] == ["get_current_weather"]
    assert request.stream is False


def test_the_tool_call_replays_into_the_next_request_as_ollama_sent_it() -> None:
    (interaction,) = SPEC.cassette(OPENINFERENCE_CALL)
    assert interaction.response is not None
    response = adapter.response_from_wire(interaction.response.json)
    (call,) = response.tool_calls
    history = Request(model="m", messages=(Message(role="assistant", parts=(call,)),))
    (message,) = adapter.request_to_wire(history).body["messages"]
    sent = interaction.response.json["message"]["tool_calls"]
    assert message["tool_calls"] == sent  # id, function.index, name, arguments as received


def test_the_recorded_thinking_decodes_as_ollama_python_reads_it_and_goes_back_on_its_message() -> None:
    # issue 28 wire facts §5 and §7 (qwen3.6 thinking with empty content before the call); the replay
    # form is the one of ollama-python examples/gpt-oss-tools-stream.py (thinking on the assistant message)
    from ollama import ChatResponse

    (interaction,) = SPEC.cassette(OPENINFERENCE_CALL)
    assert interaction.response is not None
    sdk = ChatResponse.model_validate(interaction.response.json)
    response = adapter.response_from_wire(interaction.response.json)
    reasoning, _call = response.parts
    assert isinstance(reasoning, Reasoning) and sdk.message.thinking
    assert (reasoning.text, reasoning.signature, reasoning.source) == (sdk.message.thinking, None, "ollama")
    history = Request(model="m", messages=(Message(role="assistant", parts=response.parts),))
    wire = adapter.request_to_wire(history)
    (message,) = wire.body["messages"]
    assert message["thinking"] == sdk.message.thinking and message["content"] == sdk.message.content == ""
    assert wire.notes == ()


def test_the_404_has_stripped_headers() -> None:
    # its kind, code and message: ERRORS (test_realworld.py)
    (interaction,) = SPEC.cassette(OPENINFERENCE_404)
    assert interaction.response is not None
    assert interaction.response.headers == {}  # MANIFEST dialect 7
    error = adapter.error_from_wire(interaction.response.status, {}, interaction.response.body)
    assert (error.status, error.kind) == (404, "not_found")


def test_legacy_round_trip_without_ids_and_with_empty_tools() -> None:
    (interaction,) = SPEC.cassette(OPENLLMETRY_LEGACY)
    body = interaction.request.json
    request = adapter.request_from_wire(body)
    assistant, tool = request.messages
    (call,) = assistant.parts
    assert isinstance(call, ToolCall)
    assert (call.name, call.arguments) == ("get_current_weather", {"location": "San Francisco"})
    assert call.provider_details["synthetic_id"] is True  # no id on the wire (pre-v0.12.10)
    (result,) = tool.parts
    assert isinstance(result, ToolResult)
    assert result.call_id == call.id  # paired by order: neither tool_call_id nor tool_name was sent
    assert result.content == (Text(text="The weather in San Francisco is 70 degrees and sunny."),)
    assert not result.is_error
    assert request.tools == () and request.stream is False
    wire = adapter.request_to_wire(request).body
    assert "id" not in wire["messages"][0]["tool_calls"][0]
    assert set(wire["messages"][1]) == {"role", "content"}
    assert interaction.response is not None
    response = adapter.response_from_wire(interaction.response.json)
    assert response.finish_reason == "stop" and response.tool_calls == ()
    assert response.text == interaction.response.json["message"]["content"]


def test_the_ndjson_stream_folds_like_its_one_piece_reply() -> None:
    # its 50 lines, text, stop and usage: STREAMS (test_realworld.py)
    (interaction,) = SPEC.cassette(OPENLLMETRY_STREAM)
    assert interaction.response is not None
    lines = naive_ndjson(interaction.response.body)
    folded = fold(SPEC.events(interaction.response.body))
    # the same stream as one body (the non-stream shape) folds to the same response
    one_piece = dict(lines[-1], message={"role": "assistant", "content": folded.text})
    assert adapter.response_from_wire(one_piece).parts == folded.parts
