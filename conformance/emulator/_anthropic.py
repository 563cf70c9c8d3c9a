"""Anthropic Messages as the emulator sends it (``POST /v1/messages``).

Sources: wire-formats.md §3 (anthropic-sdk-python ``types``, ``lib/streaming/_messages.py``; the
API errors page), the recorded bodies and streams in ``tests/realworld/cassettes/anthropic``
(crewai 2026, openllmetry 2025, pydantic-ai): field order, ``caller`` on tool_use blocks, usage
fields, the space-padded event JSON.

Body: ``content`` blocks (``thinking`` with a ``signature``, or ``redacted_thinking`` with opaque
``data`` when ``Reply.reasoning_redacted``; ``text``; a ``thinking`` block right before each
``tool_use`` whose ``ScriptedCall.reasoning`` is set (interleaved thinking, Anthropic's docs quoted in
spring-projects/spring-ai#3513); ``tool_use`` with an ``input`` object), ``stop_reason``
(``end_turn``/``tool_use``/``max_tokens``/``refusal``). Each thinking block has its own deterministic
signature (opaque: ANT-SDK ``thinking_block.py``); a reply that played reasoning reports
``usage.output_tokens_details.thinking_tokens`` (ANT-SDK ``output_tokens_details.py``: part of
``output_tokens``), in the body and the cumulative ``message_delta``, never in ``message_start``
(whose ``output_tokens`` is the count so far). ``cache_control`` breakpoints leave the cache counts at
0, as Anthropic answers a prompt below its minimum cacheable length (1,024 tokens on most models, as
write-ups of its prompt-caching page quote it); the emulator's prompts count 40 + 30 per turn.

Stream (``event:`` + ``data:``): ``message_start``; per block ``content_block_start``, deltas,
``content_block_stop``; a ``ping`` right after the first block starts (as recorded); a thinking
block starts with ``{"thinking": "", "signature": ""}``, then ``thinking_delta`` pieces and one
``signature_delta`` just before its ``content_block_stop`` (ANT-SDK ``signature_delta.py``); a
``redacted_thinking`` block arrives whole in its ``content_block_start``; a tool_use
block starts with ``input: {}`` and its first ``input_json_delta`` is ``""``, then fragments of the
argument text; ``message_delta`` (stop reason, cumulative usage) and ``message_stop``. Event JSON
is padded with spaces before its closing brace like real traffic; ``ping`` is ``{"type": "ping"}``.

Quirks: ``ping`` (a ping after every argument fragment too, E9), ``empty_args_string`` (a call
without arguments streams only the empty ``partial_json``, E3), ``context_window_exceeded`` (a reply
cut by ``length`` ends with ``stop_reason: "model_context_window_exceeded"``, not ``max_tokens``: the
context window filled before ``max_tokens`` was reached, as Claude Sonnet 4.5 and later stop;
anthropic-sdk-python ``types/stop_reason.py``, platform.claude.com "Stop reasons and fallback"),
``stop_sequence`` (a ``stop`` reply ended because a custom stop sequence was generated:
``stop_reason: "stop_sequence"`` and ``stop_sequence`` holding the matched string, in the message and
in ``message_delta.delta``; the text stops before the sequence, which it does not include;
anthropic-sdk-python ``types/message.py``, ``types/raw_message_delta_event.py``). The matched string
is the request's first ``stop_sequences`` entry, or ``DEFAULT_STOP_SEQUENCE`` when it names none;
``pause_turn`` (a ``stop`` reply is a long-running server-tool turn the API paused: after its text
come a ``server_tool_use`` block (``web_search``, id ``srvtoolu_01…``, streamed like ``tool_use``) and
its whole ``web_search_tool_result``, ``stop_reason: "pause_turn"`` and ``usage.server_tool_use``;
the client is to send the response back as-is to continue; anthropic-sdk-python
``types/message.py``, ``server_tool_use_block.py``, ``web_search_tool_result_block.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance.emulator._deterministic import (
    base62,
    call_object,
    count_tokens,
    fragments,
    input_tokens,
    output_tokens,
    pad,
    reasoning_tokens,
    text_fragments,
)
from conformance.emulator._wire import (
    ErrorAnswer,
    Headers,
    WireContext,
    dumps_compact,
    retry_after,
    retry_after_header,
    sends_no_arguments,
    sse,
)
from conformance.scenarios.values import Fault, Reply, ScriptedCall

__all__ = [
    "DEFAULT_STOP_SEQUENCE",
    "KNOWN_QUIRKS",
    "WIRE",
    "dump_body",
    "error_response",
    "invalid_request",
    "malformed_event",
    "response_body",
    "response_headers",
    "stream_error_event",
    "stream_error_tail",
    "stream_events",
    "terminal_event_count",
]

WIRE = "anthropic"
KNOWN_QUIRKS = frozenset({"ping", "empty_args_string", "context_window_exceeded", "stop_sequence", "pause_turn"})

DEFAULT_STOP_SEQUENCE = "</answer>"
"""The stop sequence a ``stop_sequence`` reply matched when the request lists none."""

_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}


def _message_id(ctx: WireContext) -> str:
    return "msg_01" + base62(22, *ctx.key("msg"))


def _tool_use_id(ctx: WireContext, index: int) -> str:
    return "toolu_01" + base62(22, *ctx.key("toolu", index))


def _request_id(ctx: WireContext) -> str:
    return "req_011C" + base62(20, *ctx.key("request"))


def _signature(ctx: WireContext, slot: int = 0) -> str:
    """The opaque signature of a thinking block (slot 0: the reply's own; n: before call n - 1)."""
    return "Eq" + base62(86, *(ctx.key("signature", slot) if slot else ctx.key("signature")))


def _redacted_data(ctx: WireContext) -> str:
    """The opaque, encrypted-looking ``data`` of a ``redacted_thinking`` block (deterministic)."""
    return "EmwK" + base62(120, *ctx.key("redacted_thinking"))


def _thinking_block(text: str, ctx: WireContext, slot: int) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": _signature(ctx, slot)}


def _reply_thinking(reply: Reply, ctx: WireContext) -> dict[str, Any] | None:
    """The block of ``Reply.reasoning``: ``thinking``, or ``redacted_thinking`` when the reply says so."""
    if not reply.reasoning:
        return None
    if reply.reasoning_redacted:
        return {"type": "redacted_thinking", "data": _redacted_data(ctx)}
    return _thinking_block(reply.reasoning, ctx, 0)


def _call_thinking(call: ScriptedCall, ctx: WireContext, number: int) -> dict[str, Any] | None:
    """The thinking block played right before call ``number`` (``ScriptedCall.reasoning``)."""
    return _thinking_block(call.reasoning, ctx, number + 1) if call.reasoning else None


def _call_thinking_tokens(reply: Reply) -> int:
    """The tokens of the thinking played before the reply's calls (``output_tokens`` leaves them out)."""
    return sum(count_tokens(call.reasoning or "") for call in reply.tool_calls)


def _stop_reason(reply: Reply) -> str:
    if reply.finish == "length" and "context_window_exceeded" in reply.quirks:
        return "model_context_window_exceeded"
    if reply.finish == "stop" and "pause_turn" in reply.quirks:
        return "pause_turn"
    if reply.finish == "stop" and "stop_sequence" in reply.quirks:
        return "stop_sequence"
    return _STOP_REASONS.get(reply.finish, "end_turn")


def _stop_sequence(reply: Reply, ctx: WireContext) -> str | None:
    """The custom stop sequence the reply matched (``None`` unless it ended with ``stop_sequence``)."""
    if _stop_reason(reply) != "stop_sequence":
        return None
    sequences = ctx.request.get("stop_sequences")
    if isinstance(sequences, list) and sequences and isinstance(sequences[0], str):
        return sequences[0]
    return DEFAULT_STOP_SEQUENCE


def _paused(reply: Reply) -> bool:
    return _stop_reason(reply) == "pause_turn"


def _server_tool_blocks(reply: Reply, ctx: WireContext) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``server_tool_use`` block of a paused turn (its ``web_search`` query: the request's last
    user text) and the ``web_search_tool_result`` answering it."""
    query = "latest news"
    for message in reversed(ctx.request.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user" and isinstance(message.get("content"), str):
            query = message["content"]
            break
    use_id = "srvtoolu_01" + base62(22, *ctx.key("srvtoolu"))
    use = {"type": "server_tool_use", "id": use_id, "name": "web_search", "input": {"query": query}}
    found = {
        "type": "web_search_result",
        "title": "Search result",
        "url": "https://www.example.com/search-result",
        "encrypted_content": "Ev" + base62(86, *ctx.key("encrypted_content")),
        "page_age": "1 day ago",
    }
    return use, {"type": "web_search_tool_result", "tool_use_id": use_id, "content": [found]}


def _usage(reply: Reply, ctx: WireContext, *, output: int | None = None) -> dict[str, Any]:
    """Usage as recorded in 2026; ``output`` replaces the count (``message_start``: the count so far,
    with no ``output_tokens_details``, which must not exceed it)."""
    before_calls = _call_thinking_tokens(reply)
    thinking = reasoning_tokens(reply) + before_calls
    whole = output_tokens(reply) + before_calls
    usage: dict[str, Any] = {
        "input_tokens": input_tokens(ctx.turn),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": whole if output is None else output,
    }
    if thinking and output is None:
        usage["output_tokens_details"] = {"thinking_tokens": thinking}
    if _paused(reply):
        usage["server_tool_use"] = {"web_search_requests": 1, "web_fetch_requests": 0}
    usage["service_tier"] = "standard"
    return usage


# --------------------------------------------------------------------------------------------
# Whole responses
# --------------------------------------------------------------------------------------------


def response_body(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """A ``message`` object (key order as recorded in 2026)."""
    content: list[dict[str, Any]] = []
    if (thinking := _reply_thinking(reply, ctx)) is not None:
        content.append(thinking)
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    if _paused(reply):
        content.extend(_server_tool_blocks(reply, ctx))
    for index, call in enumerate(reply.tool_calls):
        if (before := _call_thinking(call, ctx, index)) is not None:
            content.append(before)
        content.append(
            {
                "type": "tool_use",
                "id": _tool_use_id(ctx, index),
                "name": call.name,
                "input": call_object(call),
                "caller": {"type": "direct"},
            }
        )
    return {
        "model": ctx.model,
        "id": _message_id(ctx),
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": _stop_sequence(reply, ctx),
        "usage": {**_usage(reply, ctx), "inference_geo": "global"},
    }


def dump_body(body: Mapping[str, Any]) -> bytes:
    return dumps_compact(body).encode()


def _headers(ctx: WireContext, content_type: str) -> Headers:
    return [
        ("content-type", content_type),
        ("request-id", _request_id(ctx)),
        ("anthropic-ratelimit-requests-limit", "4000"),
        ("anthropic-ratelimit-requests-remaining", "3999"),
        ("anthropic-ratelimit-requests-reset", "2025-01-01T00:00:01Z"),
    ]


def response_headers(ctx: WireContext) -> Headers:
    if ctx.stream:
        return [*_headers(ctx, "text/event-stream; charset=utf-8"), ("cache-control", "no-cache")]
    return _headers(ctx, "application/json")


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Events:
    def __init__(self, ctx: WireContext) -> None:
        self.ctx = ctx
        self.events: list[bytes] = []

    def add(self, kind: str, **fields: Any) -> None:
        """An event whose JSON is padded before its last brace, as Anthropic's often is."""
        data = dumps_compact({"type": kind, **fields})
        spaces = " " * pad(15, *self.ctx.key("padding", len(self.events)))
        self.events.append(sse(data[:-1] + spaces + "}", kind))

    def ping(self) -> None:
        self.events.append(sse(json.dumps({"type": "ping"}), "ping"))


def stream_events(reply: Reply, ctx: WireContext) -> list[bytes]:
    """The SSE events of a streamed reply, ending with ``message_stop``."""
    out = _Events(ctx)
    message = {**response_body(reply, ctx), "content": [], "stop_reason": None, "stop_sequence": None}
    message["usage"] = {k: v for k, v in _usage(reply, ctx, output=1).items() if k != "server_tool_use"}
    out.add("message_start", message=message)
    index = 0
    pinged = False

    def start(block: dict[str, Any]) -> None:
        nonlocal pinged
        out.add("content_block_start", index=index, content_block=block)
        if not pinged:
            out.ping()
            pinged = True

    def delta(payload: dict[str, Any]) -> None:
        out.add("content_block_delta", index=index, delta=payload)

    def think(block: dict[str, Any] | None) -> None:
        nonlocal index
        if block is None:
            return
        if block["type"] == "redacted_thinking":  # arrives whole (wire-formats §3d)
            start(block)
        else:
            start({"type": "thinking", "thinking": "", "signature": ""})
            for piece in text_fragments(block["thinking"], per=3):
                delta({"type": "thinking_delta", "thinking": piece})
            delta({"type": "signature_delta", "signature": block["signature"]})
        out.add("content_block_stop", index=index)
        index += 1

    think(_reply_thinking(reply, ctx))
    if reply.text:
        start({"type": "text", "text": ""})
        for piece in text_fragments(reply.text, per=3):
            delta({"type": "text_delta", "text": piece})
        out.add("content_block_stop", index=index)
        index += 1
    if _paused(reply):
        use, result = _server_tool_blocks(reply, ctx)
        start({**use, "input": {}})
        delta({"type": "input_json_delta", "partial_json": ""})
        for piece in fragments(json.dumps(use["input"], ensure_ascii=False), per=3):
            delta({"type": "input_json_delta", "partial_json": piece})
        out.add("content_block_stop", index=index)
        index += 1
        start(result)
        out.add("content_block_stop", index=index)
        index += 1
    for number, call in enumerate(reply.tool_calls):
        think(_call_thinking(call, ctx, number))
        start({"type": "tool_use", "id": _tool_use_id(ctx, number), "name": call.name, "input": {}})
        delta({"type": "input_json_delta", "partial_json": ""})
        for piece in [] if sends_no_arguments(call, reply) else fragments(call.arguments_raw, per=3):
            delta({"type": "input_json_delta", "partial_json": piece})
            if "ping" in reply.quirks:
                out.ping()
        out.add("content_block_stop", index=index)
        index += 1
    if not pinged:
        out.ping()
    usage = {key: value for key, value in _usage(reply, ctx).items() if key not in ("cache_creation", "service_tier")}
    stop = {"stop_reason": _stop_reason(reply), "stop_sequence": _stop_sequence(reply, ctx)}
    out.add("message_delta", delta=stop, usage=usage)
    out.add("message_stop")
    return out.events


def terminal_event_count(reply: Reply, ctx: WireContext) -> int:
    """``message_stop`` ends the stream."""
    return 1


# --------------------------------------------------------------------------------------------
# Errors (§3e: {"type": "error", "error": {type, message}, "request_id"})
# --------------------------------------------------------------------------------------------


def _error(ctx: WireContext, status: int, etype: str, message: str, headers: Headers | None = None) -> ErrorAnswer:
    body = {"type": "error", "error": {"type": etype, "message": message}, "request_id": _request_id(ctx)}
    retry = "true" if status == 429 or status >= 500 else "false"
    head = [("content-type", "application/json"), ("request-id", _request_id(ctx)), ("x-should-retry", retry)]
    return status, head + (headers or []), dumps_compact(body).encode()


def error_response(fault: Fault, ctx: WireContext) -> ErrorAnswer:
    """The HTTP error answering a fault: 429 ``rate_limit_error``, 500 ``api_error``, 503 and 529
    ``overloaded_error``, 400 ``invalid_request_error`` naming the tool's schema."""
    extra: Headers = []
    seconds = retry_after(fault)
    if seconds is not None:
        extra.append(("retry-after", retry_after_header(seconds)))
    kind = fault.kind
    if kind == "rate_limit":
        extra += [
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2025-01-01T00:01:00Z"),
        ]
        message = (
            "This request would exceed the rate limit for your organization of 50 requests per minute. "
            "For details, refer to: https://docs.claude.com/en/api/rate-limits."
        )
        return _error(ctx, 429, "rate_limit_error", message, extra)
    if kind == "server_error":
        return _error(ctx, 500, "api_error", "Internal server error", extra)
    if kind == "unavailable":  # UNVERIFIED: Anthropic documents 529 for overload, not 503
        return _error(ctx, 503, "overloaded_error", "Service unavailable", extra)
    if kind == "overloaded":
        return _error(ctx, 529, "overloaded_error", "Overloaded", extra)
    if kind == "invalid_tool_schema":
        message = (
            "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 "
            "(https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.claude.com/en/docs/tool-use."
        )
        return _error(ctx, 400, "invalid_request_error", message, extra)
    raise ValueError(f"fault {kind!r} is not answered with an HTTP error")


def invalid_request(message: str, ctx: WireContext) -> ErrorAnswer:
    return _error(ctx, 400, "invalid_request_error", message)


def stream_error_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """``event: error`` inside a 200 stream (§3d); ``api_error`` is a server error."""
    payload = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    return sse(dumps_compact(payload), "error")


def stream_error_tail(ctx: WireContext, *, position: int = 0) -> list[bytes]:
    return []


def malformed_event(ctx: WireContext, *, position: int = 0) -> bytes:
    return sse(
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel', "content_block_delta"
    )
