"""``conformance.adapters.anthropic`` against real recorded traffic, and chunk invariance of its streams.

Expected values come from ``shared/realworld/MANIFEST.md`` (anthropic section: tool names, argument
previews, stop reasons, SSE event and delta counts, error payloads), from the recorded bytes read here
with a naive parser independent of the adapter, and from the clients' own next requests (which replay
the calls they received); never from our output. The cassettes are read from ``../shared/realworld``
next to the repository and skipped when absent. No ``other/`` file routes to this adapter today; the
discovery below picks one up if it ever does.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import anthropic as adapter
from conformance.adapters import detect_adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import WireFormatError
from conformance.model import ErrorEvent, Finish, StreamEvent, Text, ToolCall, ToolResult
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

REPO_ROOT = Path(__file__).resolve().parents[2]
CASSETTES = REPO_ROOT.parent / "shared" / "realworld" / "cassettes"

pytestmark = pytest.mark.realworld

# MANIFEST.md, anthropic section: per interaction, (status, [(tool, argument preview)], stop reason)
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
STREAMS: dict[str, list[tuple[list[str], int, int, str]]] = {
    CREWAI_STREAM: [(["get_current_temperature"], 26, 5, "tool_use"), ([], 19, 0, "end_turn")],
    OLL_STREAM: [(["get_weather", "get_time"], 35, 15, "tool_use")],
}

# (status, error.type, error.message, kind)
ERRORS = {
    DD_400: (400, "invalid_request_error", "messages.0: Input does not match the expected shape.", "invalid_request"),
    DD_401: (401, "authentication_error", "invalid x-api-key", "auth"),
    OTEL_404: (404, "not_found_error", "model: invalid-model-name", "not_found"),
}

FINISH = {"tool_use": "tool_calls", "end_turn": "stop"}


def _files() -> list[Path]:
    if not CASSETTES.is_dir():
        return []
    own = sorted((CASSETTES / "anthropic").glob("*.yaml"))
    other = [
        p
        for p in sorted((CASSETTES / "other").glob("*.yaml"))
        if any(detect_adapter(i.request.uri, i.request.json) == "anthropic" for i in load_cassette(p).interactions)
    ]
    return own + other


FILES = _files()


def _cassette(name: str) -> list[Interaction]:
    path = CASSETTES / "anthropic" / name
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
        if detect_adapter(i.request.uri, i.request.json) == "anthropic"
    ]


def _events(body: bytes, chunks: list[bytes] | None = None) -> list[StreamEvent]:
    return list(adapter.stream_from_wire(chunks if chunks is not None else [body]))


def _naive_sse(body: bytes) -> list[dict[str, Any]]:
    """The data JSON of each SSE event: blank-line separated blocks, the ``data:`` line parsed."""
    out = []
    for block in body.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data:"):
                out.append(json.loads(line[5:]))
    return out


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


def test_all_nine_files_are_found() -> None:
    if not FILES:
        pytest.skip(f"real cassettes not found at {CASSETTES}")
    assert len([p for p in FILES if p.parent.name == "anthropic"]) == 9  # MANIFEST: anthropic (9 files)


@pytest.mark.parametrize("interaction", _interactions())
def test_every_interaction_decodes_and_the_request_round_trips(interaction: Interaction) -> None:
    response = interaction.response
    assert response is not None
    body = interaction.request.json
    if body["messages"] == ["Invalid content"]:
        # the one recorded body the API rejected as malformed (400 "messages.0: Input does not match the
        # expected shape."): documented to raise rather than round-trip
        with pytest.raises(WireFormatError):
            adapter.request_from_wire(body, path=interaction.request.uri)
    else:
        wire = adapter.request_to_wire(adapter.request_from_wire(body, path=interaction.request.uri))
        # no documented normalisation applies to a recorded body: the diff is empty
        assert DeepDiff(body, wire.body) == {}
        assert wire.path.split("?")[0] == "/v1/messages"
        assert wire.headers == {"anthropic-version": "2023-06-01"}
    if response.status >= 400:
        error = adapter.error_from_wire(response.status, response.headers, response.body)
        assert error.status == response.status
    elif is_streaming(interaction):
        assert lifecycle_problems(_events(response.body)) == []
    else:
        assert adapter.response_from_wire(response.json).finish_reason is not None


# --------------------------------------------------------------------------------------------
# Non-streamed replies (MANIFEST names and argument previews)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NON_STREAM_CALLS))
def test_non_streamed_calls_match_the_manifest(name: str) -> None:
    interactions = _cassette(name)
    assert len(interactions) == len(NON_STREAM_CALLS[name])
    for interaction, (calls, stop) in zip(interactions, NON_STREAM_CALLS[name], strict=True):
        assert interaction.response is not None and interaction.response.status == 200
        response = adapter.response_from_wire(interaction.response.json)
        assert [c.name for c in response.tool_calls] == [n for n, _ in calls]
        for call, (_, preview) in zip(response.tool_calls, calls, strict=True):
            assert call.arguments_error is None
            assert json.dumps(call.arguments).startswith(preview)  # the preview is a prefix
            assert call.id.startswith("toolu_")
        assert response.provider_details["finish_reason"] == stop
        assert response.finish_reason == FINISH[stop]


@pytest.mark.parametrize("name", [CREWAI_PARALLEL, PYDANTIC])
def test_calls_received_are_the_calls_the_client_replayed_and_answered(name: str) -> None:
    # the client's next request replays the assistant turn and answers every id, results first (E17)
    first, second = _cassette(name)
    assert first.response is not None
    calls = adapter.response_from_wire(first.response.json).tool_calls
    request = adapter.request_from_wire(second.request.json)
    assistant, results = request.messages[-2:]
    replayed = [p for p in assistant.parts if isinstance(p, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in replayed] == [(c.id, c.name, c.arguments) for c in calls]
    assert results.role == "tool"
    assert [r.call_id for r in results.parts if isinstance(r, ToolResult)] == [c.id for c in calls]


def test_a_history_with_a_client_made_id() -> None:
    (interaction,) = _cassette(OLL_HISTORY)
    request = adapter.request_from_wire(interaction.request.json)
    _, assistant, results = request.messages
    assert assistant.parts[0] == Text(text="I'll help you get the weather and current time in San Francisco.")
    call = assistant.parts[1]
    assert isinstance(call, ToolCall)
    assert (call.id, call.name, call.arguments) == ("call_1", "get_weather", {"location": "San Francisco, CA"})
    assert results.parts == (ToolResult(call_id="call_1", content=(Text(text="Sunny and 65 degrees Fahrenheit"),)),)


def test_explicit_is_error_false_and_beta_query_survive() -> None:
    _, second = _cassette(PYDANTIC)
    request = adapter.request_from_wire(second.request.json, path=second.request.uri)
    results = request.messages[-1].parts
    assert all(isinstance(r, ToolResult) and r.is_error is False for r in results)
    wire = adapter.request_to_wire(request)
    assert wire.path == "/v1/messages?beta=true"
    assert [b["is_error"] for b in wire.body["messages"][-1]["content"]] == [False] * 4


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_streams_match_the_manifest_and_the_naive_parse(name: str) -> None:
    for interaction, (names, n_events, n_deltas, stop) in zip(_cassette(name), STREAMS[name], strict=True):
        assert interaction.response is not None
        body = interaction.response.body
        naive = _naive_sse(body)
        assert len(naive) == n_events
        deltas = [e for e in naive if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]
        assert len(deltas) == n_deltas
        events = _events(body)
        assert lifecycle_problems(events) == []
        folded = fold(events)
        assert [c.name for c in folded.tool_calls] == names
        for call in folded.tool_calls:
            (start,) = [
                e for e in naive if e["type"] == "content_block_start" and e["content_block"].get("id") == call.id
            ]
            raw = "".join(d["delta"]["partial_json"] for d in deltas if d["index"] == start["index"])
            assert call.arguments_raw == raw
            assert call.arguments == json.loads(raw)
        texts = [
            e["delta"]["text"]
            for e in naive
            if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
        ]
        assert folded.text == "".join(texts)
        assert events[-1] == Finish(FINISH[stop], stop)
        (last_delta,) = [e for e in naive if e["type"] == "message_delta"]
        assert folded.usage is not None and folded.usage.output_tokens == last_delta["usage"]["output_tokens"]


def test_the_streamed_call_is_what_the_client_replayed() -> None:
    first, second = _cassette(CREWAI_STREAM)
    assert first.response is not None
    folded = fold(_events(first.response.body))
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


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_map_to_the_right_kind(name: str) -> None:
    status, etype, message, kind = ERRORS[name]
    (interaction,) = _cassette(name)
    response = interaction.response
    assert response is not None and response.status == status
    error = adapter.error_from_wire(response.status, response.headers, response.body)
    assert (error.kind, error.info.code, error.message) == (kind, etype, message)


def test_the_401_on_a_stream_request_is_json_and_maps_the_same() -> None:
    # E23: the 401 answers ``stream: true`` with a JSON body, not SSE
    (interaction,) = _cassette(DD_401)
    assert interaction.request.json["stream"] is True and interaction.response is not None
    events = _events(interaction.response.body)
    assert lifecycle_problems(events) == []
    error, finish = events
    assert isinstance(error, ErrorEvent)
    assert (error.error.kind, error.error.code) == ("auth", "authentication_error")
    assert error.error.provider_details == {"request_id": "req_011CVa2kcigwBtMFroktdQ2q"}
    assert finish == Finish("error")


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1)
# --------------------------------------------------------------------------------------------


def _stream_bodies() -> list[Any]:
    params = []
    for name, index in [(CREWAI_STREAM, 0), (CREWAI_STREAM, 1), (OLL_STREAM, 0), (DD_401, 0)]:
        path = CASSETTES / "anthropic" / name
        if path.is_file():
            response = load_cassette(path).interactions[index].response
            assert response is not None
            params.append(pytest.param(response.body, id=f"{name.split('__')[0]}-{name[-20:-5]}#{index}"))
    return params or [pytest.param(b"", marks=pytest.mark.skip(reason=f"real cassettes not found at {CASSETTES}"))]


def _cut(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("body", _stream_bodies())
def test_random_cuts_give_the_one_piece_events(body: bytes) -> None:
    expected = _events(body)

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    def check(cuts: list[int]) -> None:
        assert _events(body, _cut(body, cuts)) == expected

    check()


@pytest.mark.parametrize("body", _stream_bodies())
def test_single_byte_chunks_give_the_one_piece_events(body: bytes) -> None:
    assert _events(body, [body[i : i + 1] for i in range(len(body))]) == _events(body)


def test_cuts_inside_utf8_code_points_give_the_one_piece_events() -> None:
    # the crewai answer holds "72°F" (a 2-byte code point) in a text delta
    _, interaction = _cassette(CREWAI_STREAM)
    assert interaction.response is not None
    body = interaction.response.body
    inside = [i for i in range(1, len(body)) if body[i] & 0xC0 == 0x80]  # UTF-8 continuation bytes
    assert inside
    expected = _events(body)
    for i in inside:
        assert _events(body, [body[:i], body[i:]]) == expected
    assert "72°F" in fold(expected).text
