"""Every usage field the emulator sends, per wire, against the installed official SDKs' own types
(openai, anthropic, google-genai, ollama): the body or stream event that carries usage validates
with the SDK's model, no usage key is one the SDK does not know (except Gemini's ``serviceTier``,
which real Gemini traffic carries and google-genai drops; the test finds it in the real cassettes),
and usage arrives where each provider sends it in a stream: OpenAI Chat in a last chunk with
``choices: []`` under ``stream_options.include_usage`` (``usage: null`` on the others); Responses in
the terminal ``response.completed``; Anthropic in ``message_start`` and the cumulative
``message_delta``; Gemini ``usageMetadata`` on every chunk, cumulative; Ollama in the ``done`` line
(wire-formats.md §1c-d, §2c-d, §3c-d, §4c-d, §5c-d).

The bodies are the encoders' own (no HTTP): the encoders are what the emulator sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from conformance.emulator import ENCODERS
from conformance.emulator._wire import WireContext
from conformance.scenarios.values import Reply, ScriptedCall

WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Oslo"}, arguments_raw='{"city":"Oslo"}')
REPLIES = {
    "text": Reply(text="It is sunny in Oslo today."),
    "reasoning_and_call": Reply(
        text="Checking.", reasoning="The user wants the weather.", tool_calls=(WEATHER,), finish="tool_calls"
    ),
}
GEMINI_REAL_ONLY = {"serviceTier"}
"""usageMetadata keys real Gemini traffic carries that google-genai's model leaves out."""


def _ctx(wire: str, *, stream: bool, include_usage: bool = True) -> WireContext:
    request: dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}
    return WireContext(wire=wire, scenario_id="usage/shapes", turn=1, model="m", stream=stream, request=request)


def _body(wire: str, reply: Reply, **kw: Any) -> dict[str, Any]:
    return ENCODERS[wire].response_body(reply, _ctx(wire, stream=False, **kw))


def _sse_data(wire: str, reply: Reply, **kw: Any) -> list[dict[str, Any]]:
    """The JSON ``data:`` payloads of the stream, in order (``[DONE]`` left out)."""
    out = []
    for event in ENCODERS[wire].stream_events(reply, _ctx(wire, stream=True, **kw)):
        for line in event.decode().splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


def _unknown(model: Any, path: str = "$") -> list[str]:
    """The keys a pydantic model (extra allowed) kept as extras, recursively: keys its SDK does not know."""
    found: list[str] = []
    if isinstance(model, BaseModel):
        found += [f"{path}.{key}" for key in model.model_extra or {}]
        for name in type(model).model_fields:
            found += _unknown(getattr(model, name), f"{path}.{name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            found += _unknown(item, f"{path}[{i}]")
    return found


@pytest.mark.parametrize("reply", list(REPLIES.values()), ids=list(REPLIES))
def test_openai_chat_usage_is_the_sdks_and_arrives_in_a_last_chunk_without_choices(reply: Reply) -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    whole = ChatCompletion.model_validate(_body("openai_chat", reply))
    assert whole.usage is not None and _unknown(whole.usage) == []
    assert whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens
    assert whole.usage.prompt_tokens_details is not None and whole.usage.completion_tokens_details is not None
    payloads = _sse_data("openai_chat", reply)
    chunks = [ChatCompletionChunk.model_validate(p) for p in payloads]
    assert all("usage" in p for p in payloads)  # null on every chunk but the last (include_usage)
    assert [i for i, c in enumerate(chunks) if c.usage is not None] == [len(chunks) - 1]
    assert chunks[-1].choices == [] and chunks[-1].usage == whole.usage
    assert not any("usage" in p for p in _sse_data("openai_chat", reply, include_usage=False))


@pytest.mark.parametrize("reply", list(REPLIES.values()), ids=list(REPLIES))
def test_openai_responses_usage_is_the_sdks_and_arrives_in_response_completed(reply: Reply) -> None:
    from openai.types.responses import Response, ResponseStreamEvent

    whole = Response.model_validate(_body("openai_responses", reply))
    usage = whole.usage
    assert usage is not None and _unknown(usage) == []
    assert usage.input_tokens_details.cached_tokens >= 0 and usage.output_tokens_details.reasoning_tokens >= 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    events = [TypeAdapter(ResponseStreamEvent).validate_python(p) for p in _sse_data("openai_responses", reply)]
    carrying = [(e.type, e.response.usage) for e in events if getattr(e, "response", None) is not None]
    assert carrying[:2] == [("response.created", None), ("response.in_progress", None)]
    assert carrying[2:] == [("response.completed", usage)]


@pytest.mark.parametrize("reply", list(REPLIES.values()), ids=list(REPLIES))
def test_anthropic_usage_is_the_sdks_in_message_start_and_the_cumulative_message_delta(reply: Reply) -> None:
    from anthropic.types import Message, RawMessageDeltaEvent, RawMessageStartEvent, RawMessageStreamEvent

    whole = Message.model_validate(_body("anthropic", reply))
    assert _unknown(whole.usage) == []
    payloads = [p for p in _sse_data("anthropic", reply) if p["type"] != "ping"]  # the SDK's Stream skips pings
    events = [TypeAdapter(RawMessageStreamEvent).validate_python(p) for p in payloads]
    start = [e for e in events if isinstance(e, RawMessageStartEvent)]
    delta = [e for e in events if isinstance(e, RawMessageDeltaEvent)]
    assert len(start) == 1 and len(delta) == 1
    assert _unknown(start[0].message.usage) == [] and _unknown(delta[0].usage) == []
    assert start[0].message.usage.input_tokens == whole.usage.input_tokens
    assert start[0].message.usage.output_tokens < whole.usage.output_tokens  # the count so far
    # message_delta's counts are cumulative: the whole reply's, not what came since message_start
    assert delta[0].usage.output_tokens == whole.usage.output_tokens
    assert delta[0].usage.input_tokens == whole.usage.input_tokens
    assert delta[0].usage.cache_read_input_tokens == whole.usage.cache_read_input_tokens


@pytest.mark.parametrize("reply", list(REPLIES.values()), ids=list(REPLIES))
def test_gemini_usage_metadata_is_the_sdks_on_every_chunk_and_cumulative(reply: Reply, realworld_dir: Path) -> None:
    from google.genai import types

    def checked(payload: dict[str, Any]) -> types.GenerateContentResponseUsageMetadata:
        usage = payload["usageMetadata"]
        # the model forbids extra keys: validating the usage without the real-only keys finds unknown ones
        known = types.GenerateContentResponseUsageMetadata.model_validate(
            {k: v for k, v in usage.items() if k not in GEMINI_REAL_ONLY}
        )
        parsed = types.GenerateContentResponse._from_response(response=json.loads(json.dumps(payload)), kwargs={})
        assert parsed.usage_metadata == known  # what the SDK reads is all of it
        return known

    whole = checked(_body("gemini", reply))
    chunks = [checked(p) for p in _sse_data("gemini", reply)]
    fields = ("prompt_token_count", "candidates_token_count", "total_token_count", "thoughts_token_count")
    assert [getattr(chunks[-1], f) for f in fields] == [getattr(whole, f) for f in fields]
    assert (whole.thoughts_token_count is not None) == (reply.reasoning is not None)
    assert whole.total_token_count == (
        (whole.prompt_token_count or 0) + (whole.candidates_token_count or 0) + (whole.thoughts_token_count or 0)
    )
    recorded = (realworld_dir / "cassettes" / "gemini").rglob("*.yaml")
    real = "".join(p.read_text(encoding="utf-8", errors="replace") for p in recorded)
    assert all(key in real for key in GEMINI_REAL_ONLY)


@pytest.mark.parametrize("reply", list(REPLIES.values()), ids=list(REPLIES))
def test_ollama_counts_are_the_sdks_and_arrive_in_the_done_line(reply: Reply) -> None:
    import ollama

    counts = ("prompt_eval_count", "eval_count", "prompt_eval_duration", "eval_duration", "total_duration")
    body = _body("ollama", reply)
    assert set(body) <= set(ollama.ChatResponse.model_fields)  # the model ignores extras: compare the keys
    whole = ollama.ChatResponse.model_validate(body)
    assert all(isinstance(getattr(whole, c), int) for c in counts)
    lines = [json.loads(line) for line in ENCODERS["ollama"].stream_events(reply, _ctx("ollama", stream=True))]
    assert [any(c in line for c in counts) for line in lines] == [line["done"] for line in lines]
    last = ollama.ChatResponse.model_validate(lines[-1])
    assert (last.prompt_eval_count, last.eval_count) == (whole.prompt_eval_count, whole.eval_count)
