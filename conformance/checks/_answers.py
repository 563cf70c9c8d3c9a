"""What the provider answered each turn, read straight from the recorded bodies, per wire.

The replay and prefix checks judge what a request sends back against what the provider produced.
That is read here from the response bytes, as ``checks.usage`` reads usage: independently of the
adapter under test (a mutant, or a black-box client's own decoding, must not decide what the
provider said). Each reader gives the wire's own objects (an Anthropic content block, a Gemini
part, a Responses output item, a Chat message, an Ollama message) so a check can compare them with
what a later request sends, byte for byte after JSON parsing. Every reader is total: a body that is
not the wire's shape gives nothing, never an exception.

- ``anthropic``: ``content`` blocks; streamed, ``content_block_start`` blocks updated by
  ``content_block_delta``: ``thinking_delta`` appends, ``signature_delta`` assigns (anthropic-sdk-python
  ``lib/streaming/_messages.py:489-493``), ``text_delta`` appends, ``input_json_delta`` appends to the
  arguments text.
- ``gemini``: the first candidate's ``content.parts``; streamed, every chunk's parts in order.
- ``openai_responses``: ``output`` items; streamed, each ``response.output_item.done`` item (the one to
  replay: openai-python ``response_reasoning_item.py:51-60``; a recorded gpt-5.5 stream's
  ``response.completed`` carries another ``encrypted_content`` than its ``output_item.done``, and the
  client replayed the latter: ``tests/realworld/cassettes/openai_responses/``
  ``pydantic-ai__test_openai_responses_phase_streamed_on_part_start.yaml``), else the
  ``response.completed`` event's output.
- ``openai_chat``: the first choice's ``message``; streamed, the deltas joined: ``reasoning_content``,
  ``reasoning`` and ``content`` appended, ``tool_calls`` by index, OpenRouter's ``reasoning_details``
  merged by ``type`` and ``index`` (langchain #36400: fragments are merged by both first).
- ``ollama``: ``message``; streamed, the NDJSON lines' ``thinking`` and ``content`` appended and their
  ``tool_calls`` collected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.checks._common import CaseContext, json_dicts
from conformance.checks.usage import stream_payloads

__all__ = ["answer_bodies", "answer_content"]


def answer_bodies(ctx: CaseContext) -> dict[int, tuple[bytes, bool]]:
    """Turn -> (the body of the answer that turn got, streamed?), for each turn that got one.

    An adapter's turns pair with the exchanges in order (one each; when a turn took several, the
    answers below 400 pair with the turns that got one). A black-box client's turn pairs with the
    last of its own requests answered below 400."""
    answered = [t for t in ctx.outcome.turns if t.response is not None and t.error is None]
    out: dict[int, tuple[bytes, bool]] = {}
    if ctx.client is not None:
        for client_turn in ctx.client:
            ok = [s for s in client_turn.sent if s.status is not None and s.status < 400]
            if ok:
                out[client_turn.turn] = (ok[-1].response_body, ok[-1].stream)
        return out
    if len(ctx.exchanges) == len(ctx.outcome.turns):
        for turn, exchange in zip(ctx.outcome.turns, ctx.exchanges, strict=True):
            if turn.response is not None and turn.error is None:
                out[turn.turn] = (exchange.response_body, exchange.stream)
        return out
    good = [e for e in ctx.exchanges if e.status is not None and e.status < 400]
    if len(good) == len(answered):
        for turn, exchange in zip(answered, good, strict=True):
            out[turn.turn] = (exchange.response_body, exchange.stream)
    return out


def answer_content(wire: str, body: bytes, *, stream: bool) -> list[dict[str, Any]]:
    """The wire objects of one answer, in order (see the module docstring): Anthropic content
    blocks, Gemini parts, Responses output items, or one Chat/Ollama message (a list of one)."""
    if stream:
        payloads = [p for p in stream_payloads(body) if isinstance(p, dict)]
    else:
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            return []
        payloads = [value] if isinstance(value, dict) else []
    if wire == "anthropic":
        return _anthropic(payloads, stream=stream)
    if wire == "gemini":
        return _gemini(payloads)
    if wire == "openai_responses":
        return _responses(payloads, stream=stream)
    if wire == "openai_chat":
        return _chat(payloads, stream=stream)
    if wire == "ollama":
        return _ollama(payloads, stream=stream)
    return []


def _anthropic(payloads: Sequence[Mapping[str, Any]], *, stream: bool) -> list[dict[str, Any]]:
    if not stream:
        return [dict(b) for b in json_dicts(payloads[0].get("content"))] if payloads else []
    blocks: dict[int, dict[str, Any]] = {}
    for p in payloads:
        index = p.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            continue
        if p.get("type") == "content_block_start" and isinstance(p.get("content_block"), dict):
            blocks[index] = dict(p["content_block"])
        elif p.get("type") == "content_block_delta" and isinstance(p.get("delta"), dict) and index in blocks:
            delta, block = p["delta"], blocks[index]
            for kind, key, append in (
                ("thinking_delta", "thinking", True),
                ("signature_delta", "signature", False),
                ("text_delta", "text", True),
                ("input_json_delta", "partial_json", True),
            ):
                if delta.get("type") == kind and isinstance(delta.get(key), str):
                    old = block.get(key)
                    block[key] = (old if isinstance(old, str) and append else "") + delta[key]
    return [blocks[i] for i in sorted(blocks)]


def _gemini(payloads: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for p in payloads:
        candidates = json_dicts(p.get("candidates"))
        content = candidates[0].get("content") if candidates else None
        if isinstance(content, dict):
            parts += [dict(part) for part in json_dicts(content.get("parts"))]
    return parts


def _responses(payloads: Sequence[Mapping[str, Any]], *, stream: bool) -> list[dict[str, Any]]:
    if not stream:
        return [dict(i) for i in json_dicts(payloads[0].get("output"))] if payloads else []
    done = [p.get("item") for p in payloads if p.get("type") == "response.output_item.done"]
    if any(isinstance(i, dict) for i in done):
        return [dict(i) for i in done if isinstance(i, dict)]
    for p in payloads:
        response = p.get("response")
        if p.get("type") == "response.completed" and isinstance(response, dict):
            return [dict(i) for i in json_dicts(response.get("output"))]
    return []


def _chat(payloads: Sequence[Mapping[str, Any]], *, stream: bool) -> list[dict[str, Any]]:
    if not stream:
        choices = json_dicts(payloads[0].get("choices")) if payloads else []
        whole = choices[0].get("message") if choices else None
        return [dict(whole)] if isinstance(whole, dict) else []
    message: dict[str, Any] = {}
    calls: dict[int, dict[str, Any]] = {}
    details: dict[tuple[str, int], dict[str, Any]] = {}
    for p in payloads:
        choices = json_dicts(p.get("choices"))
        delta = choices[0].get("delta") if choices else None
        if not isinstance(delta, dict):
            continue
        for key in ("reasoning_content", "reasoning", "content"):
            if isinstance(delta.get(key), str):
                message[key] = message.get(key, "") + delta[key]
        for fragment in json_dicts(delta.get("tool_calls")):
            index = fragment.get("index", len(calls))
            call = calls.setdefault(index if isinstance(index, int) else len(calls), {})
            if isinstance(fragment.get("id"), str) and fragment["id"]:
                call["id"] = fragment["id"]
        for detail in json_dicts(delta.get("reasoning_details")):
            at = detail.get("index")
            merged = details.setdefault((str(detail.get("type")), at if isinstance(at, int) else 0), {})
            for name, value in detail.items():
                if name in ("text", "summary", "data") and isinstance(value, str):
                    merged[name] = merged.get(name, "") + value
                else:
                    merged[name] = value
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    if details:
        message["reasoning_details"] = list(details.values())
    return [message] if message else []


def _ollama(payloads: Sequence[Mapping[str, Any]], *, stream: bool) -> list[dict[str, Any]]:
    if not stream:
        whole = payloads[0].get("message") if payloads else None
        return [dict(whole)] if isinstance(whole, dict) else []
    message: dict[str, Any] = {}
    calls: list[dict[str, Any]] = []
    for p in payloads:
        piece = p.get("message")
        if not isinstance(piece, dict):
            continue
        for key in ("thinking", "content"):
            if isinstance(piece.get(key), str):
                message[key] = message.get(key, "") + piece[key]
        calls += json_dicts(piece.get("tool_calls"))
    if calls:
        message["tool_calls"] = calls
    return [message] if message else []
