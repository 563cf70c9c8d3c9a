"""The emulator as a server under test (``Emulator.play_scenarios``): what ``conformance certify
--server`` judges of an answer holds for the first turn of every bundled scenario a server is asked,
on every wire, streamed and not, over real HTTP. Judged with the installed official SDKs' own types
(openai, anthropic, google-genai, ollama) and the wire facts of wire-formats.md:

- every whole body and every stream event validates with the SDK's type for it;
- OpenAI Chat: a stream ends with ``data: [DONE]`` (§1d); under ``stream_options.include_usage`` the
  usage comes once, in the last chunk, with ``choices: []``; one ``id`` on every chunk;
- OpenAI Responses: ``event:`` is the data's ``type``, ``sequence_number`` counts up from 0 by one,
  the stream ends with the terminal ``response.completed``/``response.incomplete`` (§2d);
- Anthropic: ``event:`` is the data's ``type``, ``message_start`` first, ``message_stop`` last (§3d);
- Gemini: the last chunk holds the ``finishReason`` (§4d); Ollama: the last line ``done: true`` (§5d);
- every call has an id where the wire gives one, one id per call however many fragments carry it,
  and its argument text parses as a JSON object; the finish reason says ``tool_calls``/``tool_use``
  when calls came (OpenAI and Anthropic; a forced call may say ``stop`` on Chat, §1c);
- usage adds up (``total = input + output`` where the wire sends a total).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from conformance.adapters import get_adapter
from conformance.emulator import Emulator
from conformance.emulator._scenario_book import server_playable
from conformance.errors import UnsupportedContentError
from conformance.model import Message
from conformance.run.conversation import build_request
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Emulator, list[Scenario]]]:
    scenarios = [s for s in load_scenarios().scenarios if server_playable(s)]
    with Emulator(port=0) as emu:
        emu.play_scenarios(scenarios)
        yield emu, scenarios


def _sse(body: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) of each SSE event."""
    out = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        if not block.strip():
            continue
        name = None
        data = []
        for line in block.decode().split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        out.append((name, "\n".join(data)))
    return out


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _chat(body: bytes, stream: bool, forced: bool) -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    if not stream:
        whole = ChatCompletion.model_validate_json(body)
        message = whole.choices[0].message
        calls = message.tool_calls or []
        assert all(c.id and _json_object(c.function.arguments) for c in calls if c.type == "function")
        if calls:
            assert whole.choices[0].finish_reason in (("tool_calls", "stop") if forced else ("tool_calls",))
        assert whole.usage is not None
        assert whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens
        return
    events = _sse(body)
    assert events[-1] == (None, "[DONE]")
    chunks = [ChatCompletionChunk.model_validate_json(data) for _, data in events[:-1]]
    assert len({c.id for c in chunks}) == 1
    usage = [i for i, c in enumerate(chunks) if c.usage is not None]
    assert usage == [len(chunks) - 1] and chunks[-1].choices == []
    ids: dict[int, str] = {}
    args: dict[int, str] = {}
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    for chunk in chunks:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                if call.id:
                    assert ids.setdefault(call.index, call.id) == call.id
                if call.function is not None and call.function.arguments:
                    args[call.index] = args.get(call.index, "") + call.function.arguments
    assert set(ids) == set(args) or all(a in ("", "{}") for a in args.values())
    assert all(_json_object(a) for a in args.values())
    assert len(finish) == 1
    if ids:
        assert finish[0] in (("tool_calls", "stop") if forced else ("tool_calls",))


def _responses(body: bytes, stream: bool) -> None:
    from openai.types.responses import Response, ResponseStreamEvent

    if not stream:
        whole = Response.model_validate_json(body)
        calls = [item for item in whole.output if item.type == "function_call"]
        assert all(c.call_id and _json_object(c.arguments or "{}") for c in calls)
        assert whole.usage is not None
        assert whole.usage.total_tokens == whole.usage.input_tokens + whole.usage.output_tokens
        return
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    events = _sse(body)
    parsed = [adapter.validate_json(data) for _, data in events]
    assert [name for name, _ in events] == [p.type for p in parsed]
    assert [p.sequence_number for p in parsed] == list(range(len(parsed)))
    assert parsed[0].type == "response.created"
    assert parsed[-1].type in ("response.completed", "response.incomplete")
    done = [p.item for p in parsed if p.type == "response.output_item.done" and p.item.type == "function_call"]
    assert all(item.call_id and _json_object(item.arguments or "{}") for item in done)


def _anthropic(body: bytes, stream: bool) -> None:
    from anthropic.types import Message as AnthropicMessage
    from anthropic.types import RawMessageStreamEvent

    if not stream:
        whole = AnthropicMessage.model_validate_json(body)
        uses = [b for b in whole.content if b.type == "tool_use"]
        assert all(u.id for u in uses)
        if uses:
            assert whole.stop_reason == "tool_use"
        return
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    events = _sse(body)
    assert all(name == json.loads(data)["type"] for name, data in events)
    parsed = [adapter.validate_json(data) for name, data in events if name != "ping"]
    assert parsed[0].type == "message_start" and parsed[-1].type == "message_stop"
    partial: dict[int, str] = {}
    starts: dict[int, str] = {}
    for event in parsed:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            starts[event.index] = event.content_block.id
        if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            partial[event.index] = partial.get(event.index, "") + event.delta.partial_json
    assert all(starts.values())
    assert all(_json_object(text or "{}") for text in partial.values())
    stop = [e.delta.stop_reason for e in parsed if e.type == "message_delta"]
    assert len(stop) == 1 and (stop[0] == "tool_use" or not starts)


def _gemini(body: bytes, stream: bool) -> None:
    from google.genai.types import GenerateContentResponse

    def read(text: str | bytes) -> GenerateContentResponse:
        data = json.loads(text)
        data.get("usageMetadata", {}).pop("serviceTier", None)  # real traffic has it, google-genai drops it
        return GenerateContentResponse.model_validate(data)  # (test_usage_shapes.GEMINI_REAL_ONLY)

    chunks = [read(data) for _, data in _sse(body)] if stream else [read(body)]
    assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason is not None
    assert all(c.candidates[0].finish_reason is None for c in chunks[:-1] if c.candidates)
    usage = chunks[-1].usage_metadata
    assert usage is not None and usage.total_token_count == (usage.prompt_token_count or 0) + (
        usage.candidates_token_count or 0
    ) + (usage.thoughts_token_count or 0)


def _ollama(body: bytes, stream: bool) -> None:
    from ollama import ChatResponse

    lines = [ChatResponse.model_validate_json(line) for line in body.splitlines() if line.strip()] if stream else []
    if not stream:
        lines = [ChatResponse.model_validate_json(body)]
    assert lines[-1].done is True and all(not line.done for line in lines[:-1])
    for line in lines:
        for call in line.message.tool_calls or []:
            assert isinstance(call.function.arguments, dict)


def _request(scenario: Scenario, wire: str, stream: bool) -> tuple[str, dict[str, Any]]:
    adapter = get_adapter(wire)
    first = scenario.turns[0]
    sent = adapter.request_to_wire(
        build_request(scenario, (Message(role="user", parts=first.user),), model="m", stream=stream)
    )
    body = dict(sent.body)
    if wire == "openai_chat" and stream:
        body["stream_options"] = {"include_usage": True}
    return sent.path, body


@pytest.mark.parametrize("wire", WIRES)
def test_the_first_answer_of_every_server_scenario_has_the_shape_a_server_check_requires(
    served: tuple[Emulator, list[Scenario]], wire: str
) -> None:
    emu, scenarios = served
    judged = 0
    failures: list[str] = []
    with httpx.Client(base_url=emu.base_url, timeout=30) as client:
        for scenario in scenarios:
            if scenario.wire_excluded(wire, wire) is not None:
                continue
            for stream in (False, True):
                try:
                    path, body = _request(scenario, wire, stream)
                except UnsupportedContentError:
                    continue  # the wire cannot carry it (Ollama's tool_choice): a server is not asked
                answer = client.post(path, json=body)
                where = f"{scenario.id} on {wire} ({'stream' if stream else 'whole'})"
                assert answer.status_code == 200, f"{where}: {answer.text[:300]}"
                forced = scenario.tool_choice not in (None, "auto", "none")
                try:
                    if wire == "openai_chat":
                        _chat(answer.content, stream, forced)
                    elif wire == "openai_responses":
                        _responses(answer.content, stream)
                    elif wire == "anthropic":
                        _anthropic(answer.content, stream)
                    elif wire == "gemini":
                        _gemini(answer.content, stream)
                    else:
                        _ollama(answer.content, stream)
                except Exception as exc:
                    failures.append(f"{where}: {str(exc)[:300]!r}")
                judged += 1
    assert failures == []
    assert judged >= 100
