"""The emulator's Gemini wire, checked against wire facts (wire-formats.md §4, google-genai types,
the recorded Gemini bodies and streams) and decoded with the reference ``gemini`` adapter."""

from __future__ import annotations

import base64
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
    play_fault,
    real_body_paths,
    request_for,
    sse_blocks,
)

from conformance.adapters import get_adapter
from conformance.assembly import lifecycle_problems
from conformance.emulator import Emulator, EmulatorScript
from conformance.emulator._deterministic import count_tokens
from conformance.model import Message, Text, ToolResult
from conformance.scenarios.values import Reply, ScriptedCall

WIRE = "gemini"
WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
LONDON = ScriptedCall(name="get_weather", arguments={"city": "London"}, arguments_raw='{"city": "London"}')
TIME = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}")
CALLS = Reply(tool_calls=(WEATHER, LONDON), finish="tool_calls")


def _play(emu: Emulator, client: httpx.Client, reply: Reply, *, stream: bool) -> Any:
    emu.set_script(EmulatorScript(scenario_id="gemini/x", replies=(reply,)))
    return exchange(client, WIRE, request_for(WIRE, stream=stream))


def _chunks(body: bytes) -> list[dict[str, Any]]:
    out = []
    for block in sse_blocks(body):
        assert block.startswith(b"data: ") and block.endswith(b"\r\n\r\n"), block  # CRLF, no event: lines
        out.append(json.loads(block[6:]))
    return out


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_parallel_calls_are_whole_function_call_parts(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, CALLS, stream=stream)
    response = outcome.response
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "London"}),
    ]
    assert response.finish_reason == "tool_calls"
    assert all(c.provider_details.get("synthetic_id") for c in response.tool_calls)  # no ids by default (§4b)
    if stream:
        assert lifecycle_problems(outcome.events) == []


def test_the_stream_puts_parallel_calls_in_one_chunk_with_finish_reason_stop(
    emu: Emulator, client: httpx.Client
) -> None:
    reply = Reply(text="Let me check the weather in both cities for you.", tool_calls=(WEATHER, LONDON))
    chunks = _chunks(_play(emu, client, reply, stream=True).body)
    assert len(chunks) >= 2
    last = chunks[-1]["candidates"][0]
    assert last["finishReason"] == "STOP"  # no tool-call finish reason (§4c)
    assert [p["functionCall"]["name"] for p in last["content"]["parts"]] == ["get_weather", "get_weather"]
    assert last["content"]["role"] == "model"
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
    for chunk in chunks:
        assert chunk["modelVersion"] == "gemini-2.5-flash" and chunk["responseId"] == chunks[0]["responseId"]
        usage = chunk["usageMetadata"]  # on every chunk (E19)
        assert usage["totalTokenCount"] >= usage["promptTokenCount"]


def test_sse_data_uses_googles_json_spacing(emu: Emulator, client: httpx.Client) -> None:
    body = _play(emu, client, CALLS, stream=True).body
    assert body.startswith(b'data: {"candidates": [{"content": {"parts": [')


def test_the_whole_body_has_the_recorded_fields(emu: Emulator, client: httpx.Client) -> None:
    body = json.loads(_play(emu, client, Reply(text="Sunny.", tool_calls=(WEATHER,)), stream=False).body)
    (candidate,) = body["candidates"]
    assert candidate["finishReason"] == "STOP" and candidate["content"]["role"] == "model"
    assert candidate["content"]["parts"] == [
        {"text": "Sunny."},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
    ]
    usage = body["usageMetadata"]
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
    assert re.fullmatch(r"[A-Za-z0-9]{23}", body["responseId"])


def test_the_whole_body_uses_only_field_paths_real_gemini_bodies_have(
    emu: Emulator, client: httpx.Client, realworld_dir: Path
) -> None:
    real = real_body_paths(realworld_dir, "gemini")
    for reply in (CALLS, Reply(text="Plain answer.")):
        body = json.loads(_play(emu, client, reply, stream=False).body)
        assert json_paths(body) - real == set()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_reasoning_is_a_thought_part(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome = _play(emu, client, Reply(reasoning="Look it up.", text="Sunny."), stream=stream)
    assert [p.text for p in outcome.response.parts if p.kind == "reasoning"] == ["Look it up."]
    assert outcome.response.text == "Sunny."


@pytest.mark.parametrize(("finish", "raw"), [("length", "MAX_TOKENS"), ("content_filter", "SAFETY"), ("stop", "STOP")])
def test_finish_reasons(emu: Emulator, client: httpx.Client, finish: str, raw: str) -> None:
    outcome = _play(emu, client, Reply(text="Cut sho", finish=finish), stream=True)  # type: ignore[arg-type]
    assert _chunks(outcome.body)[-1]["candidates"][0]["finishReason"] == raw
    assert outcome.response.finish_reason == finish


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_blocked_candidate_has_no_content_and_names_the_blocking_rating(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # ai.google.dev Candidate: content unset when the response is blocked; SafetyRating.blocked; the
    # SDK reads such a body (google-genai GenerateContentResponse, as _from_response does)
    from google.genai import types

    outcome = _play(emu, client, Reply(text="Step one is", finish="content_filter"), stream=stream)
    payloads = _chunks(outcome.body) if stream else [json.loads(outcome.body)]
    last = payloads[-1]["candidates"][0]
    assert "content" not in last and last["finishReason"] == "SAFETY"
    assert [r["category"] for r in last["safetyRatings"] if r.get("blocked")] == ["HARM_CATEGORY_DANGEROUS_CONTENT"]
    parsed = types.GenerateContentResponse._from_response(response=json.loads(json.dumps(payloads[-1])), kwargs={})
    (candidate,) = parsed.candidates or []
    assert candidate.content is None and candidate.finish_reason == types.FinishReason.SAFETY
    assert outcome.response.finish_reason == "content_filter"
    # the text streamed before the block is kept; a whole body has none left
    assert outcome.response.text == ("Step one is" if stream else "")


def test_recitation_ends_a_blocked_candidate_with_its_citation_sources(emu: Emulator, client: httpx.Client) -> None:
    # gbaptista/gemini-ai#21: finishReason RECITATION, no content, safetyRatings none blocked
    from google.genai import types

    reply = Reply(finish="content_filter", quirks=("recitation",))
    for stream in (False, True):
        outcome = _play(emu, client, reply, stream=stream)
        payload = _chunks(outcome.body)[-1] if stream else json.loads(outcome.body)
        (candidate,) = payload["candidates"]
        assert candidate["finishReason"] == "RECITATION" and "content" not in candidate
        assert not any(r.get("blocked") for r in candidate["safetyRatings"])
        assert candidate["citationMetadata"]["citationSources"][0]["uri"].startswith("https://")
        parsed = types.GenerateContentResponse._from_response(response=json.loads(json.dumps(payload)), kwargs={})
        assert (parsed.candidates or [])[0].finish_reason == types.FinishReason.RECITATION
        assert outcome.response.finish_reason == "content_filter" and outcome.response.text == ""


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_finish_other_ends_with_a_contentless_candidate_the_sdk_reads(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # google-genai types.FinishReason.OTHER; a candidate without parts for OTHER (neuron-core/neuron-ai#447)
    from google.genai import types

    outcome = _play(emu, client, Reply(quirks=("finish_other",)), stream=stream)
    payload = _chunks(outcome.body)[-1] if stream else json.loads(outcome.body)
    (candidate,) = payload["candidates"]
    assert candidate["finishReason"] == "OTHER" and "content" not in candidate
    assert "candidatesTokenCount" not in payload["usageMetadata"]
    parsed = types.GenerateContentResponse._from_response(response=json.loads(json.dumps(payload)), kwargs={})
    assert (parsed.candidates or [])[0].finish_reason == types.FinishReason.OTHER
    assert (outcome.response.finish_reason, outcome.response.text, outcome.response.tool_calls) == ("other", "", ())
    cut = _play(emu, client, Reply(text="Cut", finish="length", quirks=("finish_other",)), stream=stream)
    assert cut.response.finish_reason == "length"  # the quirk changes only a stop


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_malformed_function_call_ends_without_the_call(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    # vercel/ai#5039 (content: {}), langchain-ai/langchain-google#725 (finishMessage), pydantic/pydantic-ai#3095
    # (a stream chunk with no content); google-genai reads it
    from google.genai import types

    reply = Reply(tool_calls=(WEATHER,), quirks=("malformed_function_call",))
    outcome = _play(emu, client, reply, stream=stream)
    (payload,) = _chunks(outcome.body) if stream else [json.loads(outcome.body)]
    (candidate,) = payload["candidates"]
    assert candidate["finishReason"] == "MALFORMED_FUNCTION_CALL"
    assert candidate["finishMessage"] == 'Malformed function call: print(default_api.get_weather(city="Paris"))'
    assert candidate.get("content", {}) == {} and "candidatesTokenCount" not in payload["usageMetadata"]
    parsed = types.GenerateContentResponse._from_response(response=json.loads(json.dumps(payload)), kwargs={})
    assert (parsed.candidates or [])[0].finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL
    assert outcome.response.tool_calls == () and outcome.response.finish_reason == "malformed_tool_call"


def test_an_empty_reply_still_ends_with_a_finish_chunk(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(), stream=True)
    (chunk,) = _chunks(outcome.body)
    assert chunk["candidates"][0]["content"]["parts"] == [{"text": ""}]
    assert outcome.response.finish_reason == "stop" and outcome.error is None


def test_malformed_arguments_reach_the_client_as_text(emu: Emulator, client: httpx.Client) -> None:
    broken = ScriptedCall(name="get_weather", arguments_raw='{"city": "Par')
    outcome = _play(emu, client, Reply(tool_calls=(broken,)), stream=False)
    assert json.loads(outcome.body)["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == '{"city": "Par'
    (call,) = outcome.response.tool_calls
    assert call.arguments_raw == '{"city": "Par' and call.arguments_error


# --------------------------------------------------------------------------------------------
# Quirks
# --------------------------------------------------------------------------------------------


def test_call_ids_are_used_by_the_adapter(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(WEATHER, LONDON), quirks=("call_ids",)), stream=True)
    parts = _chunks(outcome.body)[-1]["candidates"][0]["content"]["parts"]
    ids = [p["functionCall"]["id"] for p in parts]
    assert all(re.fullmatch(r"[a-z0-9]{8}", i) for i in ids)  # gemini-3.5-flash shape (E31)
    assert [c.id for c in outcome.response.tool_calls] == ids


def test_thought_signature_sits_on_the_first_call_part(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(WEATHER, LONDON), quirks=("thought_signature",)), stream=False)
    parts = json.loads(outcome.body)["candidates"][0]["content"]["parts"]
    assert "thoughtSignature" in parts[0] and "thoughtSignature" not in parts[1]
    assert outcome.response.tool_calls[0].provider_details["thoughtSignature"] == parts[0]["thoughtSignature"]


def test_trailing_empty_text_ends_with_its_own_chunk(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=("trailing_empty_text",)), stream=True)
    chunks = _chunks(outcome.body)
    assert chunks[-1]["candidates"][0]["content"]["parts"] == [{"text": ""}]
    assert "finishReason" not in chunks[-2]["candidates"][0]
    assert outcome.response.text == "" and outcome.response.finish_reason == "tool_calls"


def test_empty_args_string_omits_args(emu: Emulator, client: httpx.Client) -> None:
    outcome = _play(emu, client, Reply(tool_calls=(TIME,), quirks=("empty_args_string",)), stream=False)
    assert json.loads(outcome.body)["candidates"][0]["content"]["parts"][0] == {"functionCall": {"name": "get_time"}}
    assert outcome.response.tool_calls[0].arguments == {}


# --------------------------------------------------------------------------------------------
# Reasoning (issue 28)
# --------------------------------------------------------------------------------------------


def _payloads(outcome: Any, stream: bool) -> list[dict[str, Any]]:
    return _chunks(outcome.body) if stream else [json.loads(outcome.body)]


def _sdk(payload: dict[str, Any]) -> Any:
    # google-genai reads the body as it reads any response (types.GenerateContentResponse._from_response)
    from google.genai import types

    return types.GenerateContentResponse._from_response(response=json.loads(json.dumps(payload)), kwargs={})


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_signature_own_part_comes_after_the_calls_and_goes_back_in_its_place(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # issue28-wire-facts §2b: {"text": "", "thoughtSignature"} on a part of its own, streamed in a
    # later chunk (modfin/bellman#35, WF §4d); the SDK reads its bytes, the adapter keeps it apart
    reply = Reply(tool_calls=(WEATHER, LONDON), quirks=("signature_own_part", "thought_signature"))
    outcome = _play(emu, client, reply, stream=stream)
    payloads = _payloads(outcome, stream)
    parts = [p for payload in payloads for p in payload["candidates"][0]["content"]["parts"]]
    assert [sorted(p) for p in parts] == [["functionCall"], ["functionCall"], ["text", "thoughtSignature"]]
    own = parts[-1]
    assert own["text"] == "" and len(own["thoughtSignature"]) % 4 == 0
    if stream:  # the signature's chunk is a later one, and it ends the stream
        assert payloads[-1]["candidates"][0]["content"]["parts"] == [own]
        assert payloads[-1]["candidates"][0]["finishReason"] == "STOP"
        assert "finishReason" not in payloads[-2]["candidates"][0]
    sdk_parts = [p for payload in payloads for p in _sdk(payload).candidates[0].content.parts]
    assert sdk_parts[-1].thought_signature == base64.b64decode(own["thoughtSignature"])
    response = outcome.response
    assert [p.kind for p in response.parts] == ["tool_call", "tool_call", "reasoning"]
    assert response.parts[2].signature == own["thoughtSignature"]  # type: ignore[union-attr]
    assert response.parts[2].source == "gemini"  # type: ignore[union-attr]
    results = Message(
        role="tool",
        parts=tuple(ToolResult(call_id=c.id, name=c.name, content=(Text(text="sun"),)) for c in response.tool_calls),
    )
    history = (*request_for(WIRE, stream=stream).messages, Message(role="assistant", parts=response.parts), results)
    replayed = get_adapter(WIRE).request_to_wire(request_for(WIRE, history, stream=stream)).body["contents"][1]
    assert replayed["parts"] == parts  # the same parts, the signature in the same place


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_calls_own_reasoning_is_a_thought_part_right_before_it(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    # interleaved thinking: thought parts in order among the functionCall parts (google-genai Part.thought)
    second = ScriptedCall(
        name="get_time", arguments={}, arguments_raw="{}", reasoning="Early mornings matter: check the time."
    )
    reply = Reply(reasoning="Rain first: the weather.", tool_calls=(WEATHER, second), quirks=("thought_signature",))
    outcome = _play(emu, client, reply, stream=stream)
    payloads = _payloads(outcome, stream)
    parts = [p for payload in payloads for p in payload["candidates"][0]["content"]["parts"]]
    assert parts[0] == {"text": "Rain first: the weather.", "thought": True}
    assert parts[1]["functionCall"]["name"] == "get_weather" and "thoughtSignature" in parts[1]
    assert parts[2] == {"text": "Early mornings matter: check the time.", "thought": True}
    assert parts[3]["functionCall"]["name"] == "get_time" and "thoughtSignature" not in parts[3]
    sdk_parts = [p for payload in payloads for p in _sdk(payload).candidates[0].content.parts]
    assert [bool(p.thought) for p in sdk_parts[:4]] == [True, False, True, False]
    response = outcome.response
    assert [(p.kind, getattr(p, "source", None)) for p in response.parts] == [
        ("reasoning", "gemini"),
        ("tool_call", None),
        ("reasoning", "gemini"),
        ("tool_call", None),
    ]
    # thoughtsTokenCount counts both thoughts; totalTokenCount includes it (E19)
    usage = payloads[-1]["usageMetadata"]
    thoughts = count_tokens("Rain first: the weather.") + count_tokens("Early mornings matter: check the time.")
    assert usage["thoughtsTokenCount"] == thoughts
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"] + thoughts
    assert response.usage is not None and response.usage.reasoning_tokens == thoughts


# --------------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "stream"), fault_cases(WIRE))
def test_each_fault_decodes_to_the_kind_of_the_table(
    emu: Emulator, client: httpx.Client, kind: str, stream: bool
) -> None:
    check_fault(play_fault(emu, client, WIRE, kind, stream), WIRE, kind)


def test_the_rate_limit_carries_retry_info_in_the_body(emu: Emulator, client: httpx.Client) -> None:
    error = json.loads(play_fault(emu, client, WIRE, "rate_limit", False).body)["error"]
    assert error["code"] == 429 and error["status"] == "RESOURCE_EXHAUSTED"
    retry = next(d for d in error["details"] if d["@type"].endswith("google.rpc.RetryInfo"))
    assert retry["retryDelay"] == "7s"


def test_the_schema_error_is_invalid_argument_on_the_declaration(emu: Emulator, client: httpx.Client) -> None:
    error = json.loads(play_fault(emu, client, WIRE, "invalid_tool_schema", False).body)["error"]
    assert error["status"] == "INVALID_ARGUMENT" and error["code"] == 400
    assert "function_declarations[0].parameters" in error["message"]


def test_error_event_is_an_error_chunk(emu: Emulator, client: httpx.Client) -> None:
    chunks = _chunks(play_fault(emu, client, WIRE, "error_event", True, after=1).body)
    assert len(chunks) == 2 and chunks[-1]["error"]["status"] == "INTERNAL"


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("error_event", "server"), ("malformed_body", "malformed_response"), ("disconnect", "stream_incomplete")],
)
def test_faults_in_the_json_array_stream(emu: Emulator, client: httpx.Client, kind: str, expected: str) -> None:
    from conformance.adapters import get_adapter
    from conformance.scenarios.values import Fault

    reply = Reply(text="one two three four five six seven eight nine ten", fault=Fault(kind=kind))  # type: ignore[arg-type]
    emu.set_script(EmulatorScript(scenario_id="gemini/array", replies=(reply,)))
    body = get_adapter(WIRE).request_to_wire(request_for(WIRE, stream=True)).body
    chunks: list[bytes] = []
    with client.stream("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", json=body) as answer:
        try:
            chunks.extend(answer.iter_raw())
        except httpx.TransportError:
            assert kind == "disconnect"
    assert chunks[0].startswith(b"[")
    events = list(get_adapter(WIRE).stream_from_wire(chunks))
    error = next(e.error for e in events if e.type == "error")
    assert error.kind == expected
