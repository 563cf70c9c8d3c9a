"""The emulator's OpenAI Chat wire, checked against wire facts (wire-formats.md §1, openai-python
types, the recorded OpenAI streams) and decoded with the reference ``openai_chat`` adapter."""

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
    play_fault,
    real_body_paths,
    request_for,
    sse_blocks,
)
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from conformance.adapters import get_adapter
from conformance.assembly import lifecycle_problems
from conformance.emulator import Emulator, EmulatorScript
from conformance.scenarios.values import Reply, ScriptedCall

WIRE = "openai_chat"
WEATHER = ScriptedCall(name="get_weather", arguments={"city": "New York, NY"}, arguments_raw='{"city": "New York, NY"}')
TIME = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}")
TWO_CALLS = Reply(tool_calls=(WEATHER, TIME), finish="tool_calls")


def _play(emu: Emulator, client: httpx.Client, reply: Reply, *, stream: bool, **body: Any) -> tuple[Any, list[Any]]:
    """The outcome and, for streams, the parsed ``data:`` payloads (``[DONE]`` kept as a string)."""
    emu.set_script(EmulatorScript(scenario_id=f"chat/{reply.finish}", replies=(reply,)))
    if body:
        sent = get_adapter(WIRE).request_to_wire(request_for(WIRE, stream=stream))
        answer = client.post(sent.path, json={**sent.body, **body})
        blocks = sse_blocks(answer.content)
        return answer, [_data(block) for block in blocks]
    outcome = exchange(client, WIRE, request_for(WIRE, stream=stream))
    return outcome, [_data(block) for block in sse_blocks(outcome.body)] if stream else []


def _data(block: bytes) -> Any:
    assert block.startswith(b"data: ") and block.endswith(b"\n\n"), block
    text = block[6:-2].decode()
    return text if text == "[DONE]" else json.loads(text)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_parallel_calls_decode_with_ids_names_and_arguments(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    outcome, _ = _play(emu, client, TWO_CALLS, stream=stream)
    response = outcome.response
    assert response.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "New York, NY"}),
        ("get_time", {}),
    ]
    ids = [c.id for c in response.tool_calls]
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", i) for i in ids) and len(set(ids)) == 2
    if stream:
        assert lifecycle_problems(outcome.events) == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_text_then_a_call(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    reply = Reply(text="Let me check the weather in New York.", tool_calls=(WEATHER,), finish="tool_calls")
    outcome, _ = _play(emu, client, reply, stream=stream)
    assert outcome.response.text == reply.text
    assert [c.name for c in outcome.response.tool_calls] == ["get_weather"]


def test_the_stream_follows_the_recorded_chunk_sequence(emu: Emulator, client: httpx.Client) -> None:
    _, payloads = _play(emu, client, TWO_CALLS, stream=True)
    assert payloads[-1] == "[DONE]"
    chunks = payloads[:-1]
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        assert re.fullmatch(r"chatcmpl-[A-Za-z0-9]{29}", chunk["id"]) and chunk["id"] == chunks[0]["id"]
        assert isinstance(chunk["created"], int) and chunk["model"] == "gpt-4o-mini"
        assert chunk["system_fingerprint"].startswith("fp_")
        assert "usage" not in chunk  # no include_usage: no usage key at all (§1d)
        (choice,) = chunk["choices"]
        assert set(choice) == {"index", "delta", "logprobs", "finish_reason"}
    first = chunks[0]["choices"][0]["delta"]
    assert first["role"] == "assistant" and first["content"] is None
    header = first["tool_calls"][0]
    assert header == {
        "index": 0,
        "id": header["id"],
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    fragments = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-1]]
    weather = [f for f in fragments if f["index"] == 0]
    assert len(weather) > 3  # cut mid-token, like the recorded streams
    assert all(set(f) == {"index", "function"} and set(f["function"]) == {"arguments"} for f in weather)
    assert "".join(f["function"]["arguments"] for f in weather) == WEATHER.arguments_raw
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}


def test_include_usage_adds_the_usage_chunk_and_null_usage_elsewhere(emu: Emulator, client: httpx.Client) -> None:
    _, payloads = _play(emu, client, TWO_CALLS, stream=True, stream_options={"include_usage": True})
    usage_chunk = payloads[-2]
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert all(chunk["usage"] is None for chunk in payloads[:-2])


def test_obfuscation_can_be_switched_off(emu: Emulator, client: httpx.Client) -> None:
    _, on = _play(emu, client, TWO_CALLS, stream=True, stream_options={"include_obfuscation": True})
    _, off = _play(emu, client, TWO_CALLS, stream=True, stream_options={"include_obfuscation": False})
    assert all("obfuscation" in chunk for chunk in on[:-1])
    assert not any("obfuscation" in chunk for chunk in off[:-1])


def test_the_whole_body_has_the_recorded_fields(emu: Emulator, client: httpx.Client) -> None:
    outcome, _ = _play(emu, client, TWO_CALLS, stream=False)
    body = json.loads(outcome.body)
    assert body["object"] == "chat.completion"
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["logprobs"] is None
    message = choice["message"]
    assert message["role"] == "assistant" and message["content"] is None and message["refusal"] is None
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == [WEATHER.arguments_raw, "{}"]
    assert all(c["type"] == "function" for c in message["tool_calls"])


def test_the_whole_body_uses_only_field_paths_real_openai_bodies_have(
    emu: Emulator, client: httpx.Client, realworld_dir: Path
) -> None:
    real = real_body_paths(realworld_dir, "openai_chat")
    for reply in (TWO_CALLS, Reply(text="Plain answer.")):
        outcome, _ = _play(emu, client, reply, stream=False)
        assert json_paths(json.loads(outcome.body)) - real == set()


def test_malformed_arguments_are_sent_verbatim(emu: Emulator, client: httpx.Client) -> None:
    broken = ScriptedCall(name="get_weather", arguments_raw='{"city": "Par')
    for stream in (False, True):
        outcome, _ = _play(emu, client, Reply(tool_calls=(broken,), finish="tool_calls"), stream=stream)
        (call,) = outcome.response.tool_calls
        assert call.arguments_raw == '{"city": "Par'
        assert call.arguments is None and call.arguments_error


@pytest.mark.parametrize("finish", ["length", "content_filter", "stop"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_finish_reasons(emu: Emulator, client: httpx.Client, finish: str, stream: bool) -> None:
    outcome, _ = _play(emu, client, Reply(text="Cut sho", finish=finish), stream=stream)  # type: ignore[arg-type]
    assert outcome.response.finish_reason == finish


def test_a_forced_call_may_end_with_stop(emu: Emulator, client: httpx.Client) -> None:
    outcome, _ = _play(emu, client, Reply(tool_calls=(WEATHER,), finish="stop"), stream=False)
    assert json.loads(outcome.body)["choices"][0]["finish_reason"] == "stop"  # E7
    assert outcome.response.finish_reason == "tool_calls"


# --------------------------------------------------------------------------------------------
# Quirks
# --------------------------------------------------------------------------------------------


def test_index_offset_starts_the_indices_at_one(emu: Emulator, client: httpx.Client) -> None:
    outcome, payloads = _play(emu, client, Reply(tool_calls=(WEATHER, TIME), quirks=("index_offset",)), stream=True)
    indices = {f["index"] for p in payloads[:-1] for f in p["choices"][0]["delta"].get("tool_calls", [])}
    assert indices == {1, 2}
    assert [c.name for c in outcome.response.tool_calls] == ["get_weather", "get_time"]


def test_name_repeated_repeats_id_and_name_and_the_adapter_keeps_them_once(emu: Emulator, client: httpx.Client) -> None:
    outcome, payloads = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=("name_repeated",)), stream=True)
    fragments = [f for p in payloads[:-1] for f in p["choices"][0]["delta"].get("tool_calls", [])]
    assert len(fragments) > 2 and all(f["function"]["name"] == "get_weather" and "id" in f for f in fragments)
    (call,) = outcome.response.tool_calls
    assert call.name == "get_weather" and re.fullmatch(r"call_[A-Za-z0-9]{24}", call.id)  # E4: not doubled
    assert call.arguments == WEATHER.arguments


@pytest.mark.parametrize(("quirk", "later_name"), [("name_empty_repeated", ""), ("name_null_repeated", None)])
def test_a_blank_name_on_later_fragments_does_not_overwrite_the_first(
    emu: Emulator, client: httpx.Client, quirk: str, later_name: str | None
) -> None:
    outcome, payloads = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=(quirk,)), stream=True)
    fragments = [f for p in payloads[:-1] for f in p["choices"][0]["delta"].get("tool_calls", [])]
    assert fragments[0]["function"]["name"] == "get_weather" and "id" in fragments[0]
    assert len(fragments) > 2 and all(f["function"]["name"] == later_name and "id" not in f for f in fragments[1:])
    (call,) = outcome.response.tool_calls
    assert call.name == "get_weather" and call.arguments == WEATHER.arguments


@pytest.mark.parametrize(
    ("quirk", "later"),
    [
        # DashScope, vLLM (anomalyco/opencode#40969, InternLM/lmdeploy#3412): id "", type, no name
        ("id_empty_repeated", {"id": "", "type": "function", "index": 0}),
        # SGLang (sgl-project/sglang#35542): id and name null, type
        ("id_null_repeated", {"id": None, "index": 0, "type": "function"}),
    ],
)
def test_an_empty_or_null_id_on_later_fragments_keeps_the_first_id(
    emu: Emulator, client: httpx.Client, quirk: str, later: dict[str, Any]
) -> None:
    # the openai SDK's chunk type reads them (ChoiceDeltaToolCall: id Optional[str], function.name Optional)
    from openai.types.chat import ChatCompletionChunk

    outcome, payloads = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=(quirk,)), stream=True)
    for payload in payloads[:-1]:
        ChatCompletionChunk.model_validate(payload)
    fragments = [f for p in payloads[:-1] for f in p["choices"][0]["delta"].get("tool_calls", [])]
    first_id = fragments[0]["id"]
    assert fragments[0]["function"]["name"] == "get_weather" and first_id.startswith("call_")
    assert len(fragments) > 2
    for fragment in fragments[1:]:
        assert {k: v for k, v in fragment.items() if k != "function"} == later
        assert set(fragment["function"]) == ({"arguments"} if quirk == "id_empty_repeated" else {"name", "arguments"})
    (call,) = outcome.response.tool_calls
    assert (call.id, call.name, call.arguments) == (first_id, "get_weather", WEATHER.arguments)


def test_args_in_first_chunk_sends_each_call_whole(emu: Emulator, client: httpx.Client) -> None:
    outcome, payloads = _play(
        emu, client, Reply(tool_calls=(WEATHER, TIME), quirks=("args_in_first_chunk",)), stream=True
    )
    fragments = [f for p in payloads[:-1] for f in p["choices"][0]["delta"].get("tool_calls", [])]
    assert [f["function"]["arguments"] for f in fragments] == [WEATHER.arguments_raw, "{}"]
    assert [c.arguments for c in outcome.response.tool_calls] == [WEATHER.arguments, {}]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_empty_args_string_sends_an_empty_string_for_no_arguments(
    emu: Emulator, client: httpx.Client, stream: bool
) -> None:
    outcome, _ = _play(emu, client, Reply(tool_calls=(TIME,), quirks=("empty_args_string",)), stream=stream)
    if not stream:
        assert json.loads(outcome.body)["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == ""
    (call,) = outcome.response.tool_calls
    assert call.arguments == {} and call.arguments_error is None  # E3


def test_reasoning_content_carries_the_reasoning(emu: Emulator, client: httpx.Client) -> None:
    reply = Reply(reasoning="The user wants the weather.", text="Checking.", quirks=("reasoning_content",))
    for stream in (False, True):
        outcome, _ = _play(emu, client, reply, stream=stream)
        reasoning = [p for p in outcome.response.parts if p.kind == "reasoning"]
        assert [p.text for p in reasoning] == ["The user wants the weather."]


def test_without_the_quirk_reasoning_is_not_sent(emu: Emulator, client: httpx.Client) -> None:
    outcome, _ = _play(emu, client, Reply(reasoning="secret", text="Checking."), stream=False)
    assert b"secret" not in outcome.body


# Reasoning quirks (issue28-wire-facts.md §4): each shape parses with openai-python's own types
# (extra fields kept in ``model_extra``) and decodes as the reasoning the reply played.

THINK = "The user wants the weather."
CALL_THINK = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}", reasoning="And the time.")


def _sdk_messages(outcome: Any, payloads: list[Any], stream: bool) -> list[dict[str, Any]]:
    """The message (whole) or the deltas (stream) as openai-python parses them, extras included."""
    if not stream:
        body = ChatCompletion.model_validate(json.loads(outcome.body))
        return [body.choices[0].message.model_dump(exclude_none=False)]
    chunks = [ChatCompletionChunk.model_validate(p) for p in payloads[:-1]]
    return [c.choices[0].delta.model_dump(exclude_none=False) for c in chunks if c.choices]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("quirk", ["reasoning_content", "reasoning_field"])
def test_reasoning_fields_are_the_servers_own(emu: Emulator, client: httpx.Client, quirk: str, stream: bool) -> None:
    reply = Reply(reasoning=THINK, tool_calls=(WEATHER, CALL_THINK), finish="tool_calls", quirks=(quirk,))
    outcome, payloads = _play(emu, client, reply, stream=stream)
    field = "reasoning_content" if quirk == "reasoning_content" else "reasoning"
    messages = _sdk_messages(outcome, payloads, stream)
    sent = "".join(m[field] for m in messages if isinstance(m.get(field), str))
    assert sent == THINK + "\n" + "And the time."  # one field per message: the call's reasoning joined in order
    other = "reasoning" if field == "reasoning_content" else "reasoning_content"
    assert not any(other in m for m in messages)
    (part,) = (p for p in outcome.response.parts if p.kind == "reasoning")
    assert (part.text, part.source, part.provider_details) == (sent, WIRE, {"field": field})
    assert outcome.response.parts[0] is part  # before the calls


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_reasoning_details_in_openrouters_form(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    reply = Reply(reasoning=THINK, tool_calls=(WEATHER,), finish="tool_calls", quirks=("reasoning_details",))
    outcome, payloads = _play(emu, client, reply, stream=stream)
    messages = _sdk_messages(outcome, payloads, stream)
    details = [d for m in messages for d in m.get("reasoning_details") or []]
    assert {d["type"] for d in details} == {"reasoning.text"} and {d["index"] for d in details} == {0}
    assert {d["format"] for d in details} == {"anthropic-claude-v1"}
    signatures = [d["signature"] for d in details if "signature" in d]
    assert len(signatures) == 1 and signatures[0]
    if stream:  # agno-agi/agno#8794: pieces of text, then a text-less fragment with the signature
        assert len(details) > 2 and "text" not in details[-1] and details[-1]["signature"] == signatures[0]
    assert "".join(d.get("text", "") for d in details) == THINK
    assert "".join(m["reasoning"] for m in messages if isinstance(m.get("reasoning"), str)) == THINK
    (part,) = (p for p in outcome.response.parts if p.kind == "reasoning")
    merged = {"type": "reasoning.text", "text": THINK, "signature": signatures[0], "format": "anthropic-claude-v1"}
    assert part.provider_details["reasoning_details"] == [{**merged, "index": 0}]
    assert (part.text, part.signature, part.source) == (THINK, signatures[0], WIRE)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_redacted_reasoning_is_an_encrypted_detail(emu: Emulator, client: httpx.Client, stream: bool) -> None:
    reply = Reply(reasoning=THINK, reasoning_redacted=True, text="Checking.", quirks=("reasoning_details",))
    outcome, payloads = _play(emu, client, reply, stream=stream)
    assert THINK.encode() not in outcome.body
    details = [d for m in _sdk_messages(outcome, payloads, stream) for d in m.get("reasoning_details") or []]
    assert [d["type"] for d in details] == ["reasoning.encrypted"] and details[0]["data"]
    (part,) = (p for p in outcome.response.parts if p.kind == "reasoning")
    assert (part.text, part.redacted) == ("", details[0]["data"])
    for quirk in ("reasoning_content", "reasoning_field"):  # no redacted form on those servers
        plain, _ = _play(emu, client, Reply(reasoning=THINK, reasoning_redacted=True, quirks=(quirk,)), stream=stream)
        assert THINK.encode() not in plain.body and not [p for p in plain.response.parts if p.kind == "reasoning"]


def test_reasoning_usage_is_counted(emu: Emulator, client: httpx.Client) -> None:
    counted = []
    for reply in (
        Reply(reasoning=THINK, text="Hi.", quirks=("reasoning_content",)),
        Reply(reasoning=THINK, tool_calls=(CALL_THINK,), finish="tool_calls", quirks=("reasoning_content",)),
    ):
        outcome, _ = _play(emu, client, reply, stream=False)
        usage = ChatCompletion.model_validate(json.loads(outcome.body)).usage
        assert usage is not None and usage.completion_tokens_details is not None
        reasoning = usage.completion_tokens_details.reasoning_tokens
        assert reasoning is not None and 0 < reasoning < usage.completion_tokens
        assert outcome.response.usage.reasoning_tokens == reasoning
        counted.append(reasoning)
    assert counted[1] > counted[0]  # the call's own reasoning counts too


# --------------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "stream"), fault_cases(WIRE))
def test_each_fault_decodes_to_the_kind_of_the_table(
    emu: Emulator, client: httpx.Client, kind: str, stream: bool
) -> None:
    check_fault(play_fault(emu, client, WIRE, kind, stream), WIRE, kind)


def test_the_rate_limit_answer_has_openai_headers_and_body(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "rate_limit", False)
    assert outcome.headers["x-ratelimit-remaining-requests"] == "0"
    assert outcome.headers["x-request-id"].startswith("req_")
    error = json.loads(outcome.body)["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == "rate_limit_exceeded"


def test_the_schema_error_names_the_tool_and_its_parameters(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "invalid_tool_schema", False)
    error = json.loads(outcome.body)["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "tools[0].function.parameters"
    assert "get_weather" in error["message"]


def test_disconnect_sends_after_events_then_drops_the_connection(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "disconnect", True, after=3)
    assert len(outcome.chunks) == 3 and outcome.broken is not None
    assert outcome.error is not None and outcome.error.kind == "stream_incomplete"


def test_no_terminator_withholds_the_finish_chunk_and_done(emu: Emulator, client: httpx.Client) -> None:
    # The OpenAI SDK ends a stream without [DONE] silently, so only a stream missing its
    # finish_reason chunk as well is really cut short (the fault table: stream_incomplete).
    outcome = play_fault(emu, client, WIRE, "no_terminator", True)
    blocks = sse_blocks(outcome.body)
    assert blocks and b"[DONE]" not in outcome.body
    assert all(c["finish_reason"] is None for b in blocks for c in json.loads(b[6:])["choices"])
    assert outcome.error is not None and outcome.error.kind == "stream_incomplete"


def test_error_event_is_an_error_payload_after_the_first_events(emu: Emulator, client: httpx.Client) -> None:
    outcome = play_fault(emu, client, WIRE, "error_event", True)
    blocks = sse_blocks(outcome.body)
    assert len(blocks) == 3  # after defaults to 2
    error = json.loads(blocks[-1][6:])["error"]
    assert error["type"] == "server_error" and error["message"]


def test_finish_reason_null_ends_with_done_and_no_reason(emu: Emulator, client: httpx.Client) -> None:
    outcome, payloads = _play(emu, client, Reply(tool_calls=(WEATHER,), quirks=("finish_reason_null",)), stream=True)
    assert payloads[-1] == "[DONE]"
    assert all(p["choices"][0]["finish_reason"] is None for p in payloads[:-1] if p["choices"])
    (call,) = outcome.response.tool_calls  # a complete stream: the call is valid, the reason inferred
    assert call.arguments == WEATHER.arguments and call.arguments_error is None
    assert outcome.response.finish_reason == "tool_calls"
