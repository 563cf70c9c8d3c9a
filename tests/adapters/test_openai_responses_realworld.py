"""``conformance.adapters.openai_responses`` against real recorded traffic: its MANIFEST tables
(``SPEC``, run by the generic tests of ``test_realworld.py``) and the tests that are its own.

Expected values come from ``tests/realworld/MANIFEST.md`` (openai_responses section and the Bedrock
"mantle" file in ``other/``) and from the recorded bytes themselves, read with a naive parser
independent of the adapter; never from our own output. The cassettes are read from
``tests/realworld``.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import openai_responses as adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.model import Message, Reasoning, Request, Response, ToolCall, ToolCallChunk, ToolResult
from conformance.traffic.cassettes import Interaction, is_streaming
from tests.adapters._realworld import Error, RealWorld, naive_sse

pytestmark = pytest.mark.realworld

HTTP_400 = "pydantic-ai__test_openai_responses_model_http_error.yaml"
PHASE_STREAM = "pydantic-ai__test_openai_responses_phase_streamed_on_part_start.yaml"

# MANIFEST.md, openai_responses section: (status, kind, error.code, message preview)
ERRORS = {
    HTTP_400: Error(
        400,
        "invalid_request",
        "decimal_below_min_value",
        "Invalid 'temperature': decimal below minimum value. Expected a",
    )
}


def _utf8_stream() -> bytes:
    first, _ = SPEC.cassette(PHASE_STREAM)
    assert first.response is not None
    return first.response.body  # the continuation bytes of ’ “ ”


def _check_utf8_fold(folded: Response) -> None:
    assert folded.text == "I’ll check the capital lookup tool for “PotatoLand.”"


SPEC = RealWorld(
    name="openai_responses",
    adapter=adapter,
    # MANIFEST: 6 openai_responses files (one holds only an error, one /v1/conversations calls too)
    # plus the Bedrock "mantle" file in other/
    files=(6, 1),
    wire_path=lambda interaction: "/v1/responses",
    errors=ERRORS,
    error_message_is_prefix=True,
    utf8_stream=_utf8_stream,
    utf8_min=8,
    check_utf8_fold=_check_utf8_fold,
)


def _params(streams_only: bool = False) -> list[Any]:
    """``(path, interaction)`` for every interaction routed here (only the 200 streams with
    ``streams_only``)."""
    return [
        pytest.param(p, i, id=f"{p.parent.name}/{p.name}#{i.index}")
        for p, i in SPEC.interactions()
        if not streams_only or (is_streaming(i) and i.response is not None and i.response.status == 200)
    ]


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


def test_the_conversations_calls_are_not_ours() -> None:
    conversations = SPEC.cassette("pydantic-ai__test_openai_conversation_id_tool_call_continuation.yaml")
    assert [SPEC.owns(i) for i in conversations] == [False, True, True, False]  # /v1/conversations is not ours


@pytest.mark.parametrize(("path", "interaction"), _params())
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
        events = SPEC.events(response.body)
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


@pytest.mark.parametrize(("path", "interaction"), _params(streams_only=True))
def test_a_stream_folds_like_the_response_in_its_completed_event(path: Path, interaction: Interaction) -> None:
    assert interaction.response is not None
    payloads = naive_sse(interaction.response.body)
    assert payloads[-1]["type"] == "response.completed"  # §2d: no [DONE] follows
    one_piece = adapter.response_from_wire(payloads[-1]["response"])
    streamed = fold(SPEC.events(interaction.response.body))
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
    first, second = SPEC.cassette(PHASE_STREAM)
    assert first.response is not None
    folded = fold(SPEC.events(first.response.body))
    reasoning, _text, call = folded.parts
    assert isinstance(reasoning, Reasoning) and isinstance(call, ToolCall)
    sent = second.request.json["input"]
    sent_reasoning, sent_call = sent[1], sent[3]
    # the encrypted_content replayed is the one of output_item.done, not of output_item.added; with no
    # summary asked for, the item holds nothing readable: redacted reasoning
    assert reasoning.redacted == sent_reasoning["encrypted_content"] and reasoning.signature is None
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
    turns = SPEC.cassette("other/pydantic-ai__test_reused_tool_call_ids[stream].yaml")
    assert all(t.request.uri.endswith("/openai/v1/responses") for t in turns)
    assert turns[0].response is not None
    assert turns[0].response.body.startswith(b"data: ")  # E29: data: before event:
    ids = []
    for turn in turns:
        assert turn.response is not None
        events = SPEC.events(turn.response.body)
        assert lifecycle_problems(events) == []
        ids += [c.id for c in fold(events).tool_calls]
    assert ids == ["call_0", "call_1"]  # E29: Bedrock call ids


def test_cached_and_reasoning_tokens_from_usage_details() -> None:
    _, second = SPEC.cassette("crewai__test_openai_responses_api_cached_prompt_tokens_with_tools.yaml")
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
    (interaction,) = SPEC.cassette(HTTP_400)
    assert interaction.request.json["stream"] is True
    assert interaction.response is not None and interaction.response.json is not None  # E23
    error = adapter.error_from_wire(
        interaction.response.status, interaction.response.headers, interaction.response.body
    )
    assert (error.status, error.kind) == (400, "invalid_request")
    assert error.message == interaction.response.json["error"]["message"]


# --------------------------------------------------------------------------------------------
# Issue 28: the recorded reasoning items decode as openai-python reads them, and replay in the
# order the recording client sent them (issue 28 wire facts §7)
# --------------------------------------------------------------------------------------------


def _kind_and_id(item: dict[str, Any]) -> tuple[str, str | None]:
    kind = item.get("type", "message")
    return kind, item.get("id") if kind in ("reasoning", "function_call") else None


REASONING_CONVERSATIONS = (PHASE_STREAM, "other/pydantic-ai__test_reused_tool_call_ids[stream].yaml")


@pytest.mark.parametrize("name", REASONING_CONVERSATIONS)
def test_recorded_reasoning_decodes_as_the_sdk_reads_it_and_replays_in_the_recorded_order(name: str) -> None:
    from openai.types.responses import ResponseOutputItemDoneEvent, ResponseReasoningItem

    turns = SPEC.cassette(name)
    replayed = 0
    for before, after in itertools.pairwise(turns):
        assert before.response is not None
        folded = fold(SPEC.events(before.response.body))
        # the item of output_item.done, as the SDK says to replay it (its encrypted_content differs from
        # output_item.added's, and here from response.completed's too)
        events = naive_sse(before.response.body)
        done = [ResponseOutputItemDoneEvent.model_validate(e).item for e in events if e["type"].endswith("item.done")]
        sdk = [item for item in done if isinstance(item, ResponseReasoningItem)]
        ours = [p for p in folded.parts if isinstance(p, Reasoning)]
        # the payload is the signature, or the redacted data of an item with no readable text (these: summary [])
        assert [(r.signature or r.redacted, r.text, r.source) for r in ours] == [
            (item.encrypted_content, "\n\n".join(s.text for s in item.summary), "openai_responses") for item in sdk
        ]
        assert all(bool(r.redacted) == (not r.text) for r in ours)
        # the next request as our adapter writes it: the recorded history, with this turn's output as we decoded it
        recorded = adapter.request_from_wire(after.request.json)
        earlier = len(adapter.request_from_wire(before.request.json).messages)
        messages = list(recorded.messages)
        assert messages[earlier].role == "assistant"
        messages[earlier] = Message(role="assistant", parts=folded.parts)
        wire = adapter.request_to_wire(Request(model=recorded.model, messages=tuple(messages)))
        sent = after.request.json["input"]
        # the order of the items, and the ids of the reasoning and call items (an assistant message item
        # goes back in the easy form, without the id pydantic-ai kept: not a reasoning matter)
        assert [_kind_and_id(i) for i in wire.body["input"]] == [_kind_and_id(i) for i in sent]
        ours_items = [i for i in wire.body["input"] if i.get("type") == "reasoning"]
        assert [i["encrypted_content"] for i in ours_items] == [
            i["encrypted_content"] for i in sent if i.get("type") == "reasoning"
        ]
        assert wire.notes == ()
        replayed += len(sdk)
    assert replayed >= 1
