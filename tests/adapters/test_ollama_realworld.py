"""``conformance.adapters.ollama`` against real recorded traffic, and chunk invariance of its streams.

Expected values come from ``shared/realworld/MANIFEST.md`` (ollama section) and the recorded bytes
themselves, read here with a naive line parser independent of the adapter; never from our output.
The cassettes are read from ``../shared/realworld`` next to the repository and skipped when absent.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import detect_adapter
from conformance.adapters import ollama as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import Message, Reasoning, Request, StreamEvent, Text, ToolCall, ToolResult
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

REPO_ROOT = Path(__file__).resolve().parents[2]
CASSETTES = REPO_ROOT.parent / "shared" / "realworld" / "cassettes"

pytestmark = pytest.mark.realworld


def _files() -> list[Path]:
    if not CASSETTES.is_dir():
        return []
    own = sorted((CASSETTES / "ollama").glob("*.yaml"))
    # other/ holds OpenAI-compatible traffic; take whatever the registry routes to this adapter
    other = [
        p
        for p in sorted((CASSETTES / "other").glob("*.yaml"))
        if any(detect_adapter(i.request.uri, i.request.json) == "ollama" for i in load_cassette(p).interactions)
    ]
    return own + other


FILES = _files()


def _cassette(name: str) -> list[Interaction]:
    path = CASSETTES / "ollama" / name
    if not path.is_file():
        pytest.skip(f"real cassettes not found at {CASSETTES} (clone shared/realworld next to the repo)")
    return list(load_cassette(path).interactions)


def _interactions() -> list[Any]:
    if not FILES:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"real cassettes not found at {CASSETTES}"))]
    return [
        pytest.param(i, id=f"{p.name}#{i.index}")
        for p in FILES
        for i in load_cassette(p).interactions
        if detect_adapter(i.request.uri, i.request.json) == "ollama"
    ]


def _events(body: bytes, chunks: list[bytes] | None = None, **kw: Any) -> list[StreamEvent]:
    return list(adapter.stream_from_wire(chunks if chunks is not None else [body], **kw))


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("interaction", _interactions())
def test_every_interaction_decodes_and_the_request_round_trips(interaction: Interaction) -> None:
    assert interaction.response is not None
    body = interaction.request.json
    request = adapter.request_from_wire(body)
    wire = adapter.request_to_wire(request)
    assert wire.path == "/api/chat"
    # no normalisation applies to any recorded body: the documented set is empty here
    assert DeepDiff(body, wire.body) == {}
    response = interaction.response
    if response.status >= 400:
        error = adapter.error_from_wire(response.status, response.headers, response.body)
        assert error.status == response.status
    elif is_streaming(interaction):
        events = _events(response.body)
        assert lifecycle_problems(events) == []
    else:
        assert adapter.response_from_wire(response.json).finish_reason is not None


# --------------------------------------------------------------------------------------------
# One file each (MANIFEST.md, ollama section)
# --------------------------------------------------------------------------------------------


def test_non_stream_tool_call_with_object_arguments_id_and_thinking() -> None:
    (interaction,) = _cassette("openinference__test_chat_with_tool_call.yaml")
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
    (interaction,) = _cassette("openinference__test_chat_with_tool_call.yaml")
    assert interaction.response is not None
    response = adapter.response_from_wire(interaction.response.json)
    (call,) = response.tool_calls
    history = Request(model="m", messages=(Message(role="assistant", parts=(call,)),))
    (message,) = adapter.request_to_wire(history).body["messages"]
    sent = interaction.response.json["message"]["tool_calls"]
    assert message["tool_calls"] == sent  # id, function.index, name, arguments as received


def test_404_model_not_found_with_stripped_headers() -> None:
    (interaction,) = _cassette("openinference__test_chat_error_records_model_name.yaml")
    assert interaction.response is not None
    assert interaction.response.headers == {}  # MANIFEST dialect 7
    error = adapter.error_from_wire(interaction.response.status, {}, interaction.response.body)
    assert (error.status, error.kind) == (404, "not_found")
    assert error.message == "model 'nonexistent-model:latest' not found"
    assert error.retry_after is None


def test_legacy_round_trip_without_ids_and_with_empty_tools() -> None:
    (interaction,) = _cassette("openllmetry__test_ollama_chat_tool_calls_legacy.yaml")
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


def _naive_lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.decode().split("\n") if line.strip()]


def test_ndjson_stream_of_50_lines() -> None:
    (interaction,) = _cassette("openllmetry__test_ollama_streaming_chat_legacy.yaml")
    assert interaction.response is not None
    body = interaction.response.body
    lines = _naive_lines(body)
    assert len(lines) == 50  # MANIFEST: 50 NDJSON lines
    events = _events(body)
    assert lifecycle_problems(events) == []
    folded = fold(events)
    assert folded.text == "".join(line["message"]["content"] for line in lines)
    assert folded.finish_reason == "stop" and folded.provider_details["finish_reason"] == "stop"
    assert folded.usage is not None
    last = lines[-1]
    assert (folded.usage.input_tokens, folded.usage.output_tokens) == (last["prompt_eval_count"], last["eval_count"])
    # the same stream as one body (the non-stream shape) folds to the same response
    one_piece = dict(last, message={"role": "assistant", "content": folded.text})
    assert adapter.response_from_wire(one_piece).parts == folded.parts


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1)
# --------------------------------------------------------------------------------------------


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


def _streams() -> list[Any]:
    params = [pytest.param(HAND_MADE, id="hand-made")]
    path = CASSETTES / "ollama" / "openllmetry__test_ollama_streaming_chat_legacy.yaml"
    if path.is_file():
        response = load_cassette(path).interactions[0].response
        assert response is not None
        params.append(pytest.param(response.body, id="recorded"))
    return params


def _cut(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("body", _streams())
def test_random_cuts_give_the_one_piece_events(body: bytes) -> None:
    expected = _events(body)
    assert lifecycle_problems(expected) == []

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=30))
    def check(cuts: list[int]) -> None:
        assert _events(body, _cut(body, cuts)) == expected

    check()


@pytest.mark.parametrize("body", _streams())
def test_single_byte_chunks_give_the_one_piece_events(body: bytes) -> None:
    assert _events(body, [body[i : i + 1] for i in range(len(body))]) == _events(body)


def test_cuts_inside_utf8_code_points_give_the_one_piece_events() -> None:
    expected = _events(HAND_MADE)
    inside = [i for i in range(1, len(HAND_MADE)) if HAND_MADE[i] & 0xC0 == 0x80]  # continuation bytes
    assert len(inside) > 10
    for i in inside:
        assert _events(HAND_MADE, [HAND_MADE[:i], HAND_MADE[i:]]) == expected
    assert _events(HAND_MADE, _cut(HAND_MADE, inside)) == expected
    folded = fold(expected)
    assert folded.text == "Météo à 東京 ✅"
    assert [c.arguments for c in folded.tool_calls] == [{"city": "Zürich"}, {"tz": "Asia/東京 🌏"}]
