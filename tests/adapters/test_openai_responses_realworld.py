"""``conformance.adapters.openai_responses`` against real recorded traffic, and chunk invariance of its streams.

Expected values come from ``shared/realworld/MANIFEST.md`` (openai_responses section and the Bedrock
"mantle" file in ``other/``) and from the recorded bytes themselves, read here with a naive parser
independent of the adapter; never from our own output. The cassettes are read from
``../shared/realworld`` next to the repository and skipped when absent.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import detect_adapter
from conformance.adapters import openai_responses as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import (
    Message,
    Reasoning,
    Request,
    StreamEvent,
    ToolCall,
    ToolCallChunk,
    ToolResult,
)
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

REPO_ROOT = Path(__file__).resolve().parents[2]
CASSETTES = REPO_ROOT.parent / "shared" / "realworld" / "cassettes"
MISSING = f"real cassettes not found at {CASSETTES} (clone shared/realworld next to the repo)"
NAME = "openai_responses"

pytestmark = pytest.mark.realworld


def _files() -> list[Path]:
    if not CASSETTES.is_dir():
        return []
    candidates = sorted((CASSETTES / NAME).glob("*.yaml")) + sorted((CASSETTES / "other").glob("*.yaml"))
    return [p for p in candidates if any(_ours(i) for i in load_cassette(p).interactions)]


def _ours(interaction: Interaction) -> bool:
    return detect_adapter(interaction.request.uri, interaction.request.json) == NAME


FILES = _files()


def _interactions(streams_only: bool = False) -> list[Any]:
    found = [
        pytest.param(p, i, id=f"{p.parent.name}/{p.name}#{i.index}")
        for p in FILES
        for i in load_cassette(p).interactions
        if _ours(i) and (not streams_only or (is_streaming(i) and i.response is not None and i.response.status == 200))
    ]
    return found or [pytest.param(None, None, marks=pytest.mark.skip(reason=MISSING))]


def _cassette(relative: str) -> list[Interaction]:
    path = CASSETTES / relative
    if not path.is_file():
        pytest.skip(MISSING)
    return list(load_cassette(path).interactions)


def _events(body: bytes, chunks: list[bytes] | None = None) -> list[StreamEvent]:
    return list(adapter.stream_from_wire(chunks if chunks is not None else [body]))


def _naive_sse(body: bytes) -> list[dict[str, Any]]:
    """Every ``data:`` payload of a recorded stream, by a line split independent of the adapter."""
    return [json.loads(line[len("data: ") :]) for line in body.decode().splitlines() if line.startswith("data: ")]


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


def test_the_recordings_are_all_found() -> None:
    if not CASSETTES.is_dir():
        pytest.skip(MISSING)
    # MANIFEST: 6 openai_responses files (one holds only an error, one /v1/conversations calls too)
    # plus the Bedrock "mantle" file in other/
    assert len(FILES) == 7
    conversations = _cassette(f"{NAME}/pydantic-ai__test_openai_conversation_id_tool_call_continuation.yaml")
    assert [_ours(i) for i in conversations] == [False, True, True, False]  # /v1/conversations is not ours


@pytest.mark.parametrize(("path", "interaction"), _interactions())
def test_every_interaction_decodes_and_the_request_round_trips(path: Path, interaction: Interaction) -> None:
    body = interaction.request.json
    request = adapter.request_from_wire(body)
    wire = adapter.request_to_wire(request)
    assert wire.path == "/v1/responses" and wire.stream is (body.get("stream") is True)
    # no documented normalisation applies to a recorded body: the expected diff is empty
    assert DeepDiff(body, wire.body) == {}
    response = interaction.response
    assert response is not None
    if response.status >= 400:
        error = adapter.error_from_wire(response.status, response.headers, response.body)
        assert error.status == response.status
    elif is_streaming(interaction):
        events = _events(response.body)
        assert lifecycle_problems(events) == []
        assert fold(events).error is None
    else:
        assert adapter.response_from_wire(response.json).finish_reason in ("stop", "tool_calls")


@pytest.mark.parametrize(("path", "interaction"), _interactions())
def test_calls_and_results_are_the_ones_the_manifest_lists(
    path: Path, interaction: Interaction, realworld_manifest: dict[str, Any]
) -> None:
    line = realworld_manifest[f"{path.parent.name}/{path.name}"].interactions[interaction.index]
    response = interaction.response
    assert response is not None and response.status == line.status
    request = adapter.request_from_wire(interaction.request.json)
    results = [p for m in request.messages for p in m.parts if isinstance(p, ToolResult)]
    assert len(results) == line.tool_results
    assert len(request.tools) == len(interaction.request.json.get("tools") or [])
    if line.error is not None:
        code = re.search(r'"code": "([^"]+)"', line.error)
        assert code is not None
        assert adapter.error_from_wire(response.status, response.headers, response.body).info.code == code.group(1)
        return
    if line.stream:
        events = _events(response.body)
        folded = fold(events)
        assert [c.name for c in folded.tool_calls] == (line.streamed_tool_calls or [])
        if line.arg_deltas is not None:  # …arguments.done equals the deltas here: no extra chunk
            assert sum(isinstance(e, ToolCallChunk) for e in events) == line.arg_deltas
    else:
        folded = adapter.response_from_wire(response.json)
        calls = line.tool_calls or []
        assert [c.name for c in folded.tool_calls] == [name for name, _ in calls]
        for call, (_, preview) in zip(folded.tool_calls, calls, strict=True):
            assert call.arguments_raw.startswith(preview) and call.arguments_error is None
    assert folded.provider_details["finish_reason"] == line.stop == "completed"
    assert folded.finish_reason == ("tool_calls" if folded.tool_calls else "stop")
    for call in folded.tool_calls:
        assert call.id.startswith("call_") and call.provider_details["item_id"].startswith("fc_")  # E12


@pytest.mark.parametrize(("path", "interaction"), _interactions(streams_only=True))
def test_a_stream_folds_like_the_response_in_its_completed_event(path: Path, interaction: Interaction) -> None:
    assert interaction.response is not None
    payloads = _naive_sse(interaction.response.body)
    assert payloads[-1]["type"] == "response.completed"  # §2d: no [DONE] follows
    one_piece = adapter.response_from_wire(payloads[-1]["response"])
    streamed = fold(_events(interaction.response.body))
    assert streamed.tool_calls == one_piece.tool_calls
    assert streamed.text == one_piece.text
    assert streamed.usage == one_piece.usage
    assert streamed.finish_reason == one_piece.finish_reason
    reasoning = [p for p in streamed.parts if isinstance(p, Reasoning)]
    assert [r.provider_details["item"]["id"] for r in reasoning] == [
        item["id"] for item in payloads[-1]["response"]["output"] if item["type"] == "reasoning"
    ]


# --------------------------------------------------------------------------------------------
# One file each
# --------------------------------------------------------------------------------------------


def test_streamed_turn_replays_as_pydantic_ai_sent_it_in_the_next_request() -> None:
    first, second = _cassette(f"{NAME}/pydantic-ai__test_openai_responses_phase_streamed_on_part_start.yaml")
    assert first.response is not None
    folded = fold(_events(first.response.body))
    reasoning, _text, call = folded.parts
    assert isinstance(reasoning, Reasoning) and isinstance(call, ToolCall)
    sent = second.request.json["input"]
    sent_reasoning, sent_call = sent[1], sent[3]
    # the encrypted_content replayed is the one of output_item.done, not of output_item.added
    assert reasoning.signature == sent_reasoning["encrypted_content"]
    history = Request(model="gpt-5.5", messages=(Message(role="assistant", parts=(reasoning, call)),))
    items = adapter.request_to_wire(history).body["input"]
    assert (
        items[0]["id"] == sent_reasoning["id"] and items[0]["encrypted_content"] == sent_reasoning["encrypted_content"]
    )
    assert items[1] == sent_call  # call_id, item id (E12), name and arguments as the client sent them
    assert adapter.request_from_wire(second.request.json).messages[1].parts[2] == ToolCall(
        id=call.id,
        name=call.name,
        arguments=call.arguments,
        arguments_raw=call.arguments_raw,
        provider_details=call.provider_details,
    )


def test_bedrock_mantle_data_before_event_and_reused_call_ids() -> None:
    turns = _cassette("other/pydantic-ai__test_reused_tool_call_ids[stream].yaml")
    assert all(t.request.uri.endswith("/openai/v1/responses") for t in turns)
    assert turns[0].response is not None
    assert turns[0].response.body.startswith(b"data: ")  # E29: data: before event:
    ids = []
    for turn in turns:
        assert turn.response is not None
        events = _events(turn.response.body)
        assert lifecycle_problems(events) == []
        ids += [c.id for c in fold(events).tool_calls]
    assert ids == ["call_0", "call_1"]  # E29: Bedrock call ids


def test_cached_and_reasoning_tokens_from_usage_details() -> None:
    _, second = _cassette(f"{NAME}/crewai__test_openai_responses_api_cached_prompt_tokens_with_tools.yaml")
    assert second.response is not None
    usage = second.response.json["usage"]
    folded = adapter.response_from_wire(second.response.json)
    assert folded.usage is not None
    assert folded.usage.cache_read_tokens == usage["input_tokens_details"]["cached_tokens"] > 0
    assert "cache_write_tokens" not in usage["input_tokens_details"]  # §2c: detail keys are optional
    assert folded.usage.cache_write_tokens is None
    assert (folded.usage.input_tokens, folded.usage.output_tokens, folded.usage.total_tokens) == (
        usage["input_tokens"],
        usage["output_tokens"],
        usage["total_tokens"],
    )


def test_400_on_a_stream_request_is_a_json_body() -> None:
    (interaction,) = _cassette(f"{NAME}/pydantic-ai__test_openai_responses_model_http_error.yaml")
    assert interaction.request.json["stream"] is True
    assert interaction.response is not None and interaction.response.json is not None  # E23
    error = adapter.error_from_wire(
        interaction.response.status, interaction.response.headers, interaction.response.body
    )
    assert (error.status, error.kind) == (400, "invalid_request")
    assert error.message == interaction.response.json["error"]["message"]


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1)
# --------------------------------------------------------------------------------------------


def _cut(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize(("path", "interaction"), _interactions(streams_only=True))
def test_random_cuts_give_the_one_piece_events(path: Path, interaction: Interaction) -> None:
    assert interaction.response is not None
    body = interaction.response.body
    expected = _events(body)

    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    def check(cuts: list[int]) -> None:
        assert _events(body, _cut(body, cuts)) == expected

    check()


@pytest.mark.parametrize(("path", "interaction"), _interactions(streams_only=True))
def test_single_byte_chunks_give_the_one_piece_events(path: Path, interaction: Interaction) -> None:
    assert interaction.response is not None
    body = interaction.response.body
    assert _events(body, [body[i : i + 1] for i in range(len(body))]) == _events(body)


def test_cuts_inside_utf8_code_points_give_the_one_piece_events() -> None:
    first, _ = _cassette(f"{NAME}/pydantic-ai__test_openai_responses_phase_streamed_on_part_start.yaml")
    assert first.response is not None
    body = first.response.body
    expected = _events(body)
    inside = [i for i in range(1, len(body)) if body[i] & 0xC0 == 0x80]  # continuation bytes of ’ “ ”
    assert len(inside) >= 8
    for i in inside:
        assert _events(body, [body[:i], body[i:]]) == expected
    assert _events(body, _cut(body, inside)) == expected
    assert fold(expected).text == "I’ll check the capital lookup tool for “PotatoLand.”"
