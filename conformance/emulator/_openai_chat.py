"""OpenAI Chat Completions as the emulator sends it (``POST /v1/chat/completions``).

Sources: wire-formats.md §1 (openai-python ``types/chat``, ``_streaming.py``), and the recorded
OpenAI streams and bodies in ``tests/realworld/cassettes/openai_chat`` (crewai, pydantic-ai,
otel): field order and types of ``chat.completion`` and ``chat.completion.chunk``.

Stream: the first chunk carries ``role: "assistant"`` (with the first tool-call header when the
reply starts with a call, ``content: null`` and ``refusal: null``, as gpt-4o does since 2025);
text arrives a token per chunk; each call is a header fragment (``index``, ``id``,
``type``, ``function.name``, ``arguments: ""``) then argument fragments cut mid-token carrying
only ``index`` and ``function.arguments``; a chunk with ``delta: {}`` and the finish reason; the
usage chunk (``choices: []``) when ``stream_options.include_usage`` is true (every other chunk
then has ``usage: null``); ``data: [DONE]``. Chunks carry ``obfuscation`` unless
``stream_options.include_obfuscation`` is false (recorded 2026 traffic).

A prompt adapter's request (``ctx.prompt_format``) gets a text-only reply already rendered in its
format (``_prompt_formats``), streamed in token-like pieces that split the format's markers.

Quirks (``Reply.quirks``): ``index_offset`` (tool-call indices start at 1), ``name_repeated``
(``id``/``type``/``name`` repeated on every fragment, E4), ``name_empty_repeated`` and
``name_null_repeated`` (``"name": ""`` or ``"name": null`` on every later fragment, E4),
``id_empty_repeated`` (``"id": ""`` and ``type`` on every later fragment, no name, as Alibaba
DashScope and vLLM send them: anomalyco/opencode#40969, InternLM/lmdeploy#3412),
``id_null_repeated`` (``"id": null``, ``type`` and ``"name": null`` on every later fragment, as
SGLang serializes its unset fields: sgl-project/sglang#35542), ``args_in_first_chunk`` (the whole
argument text in the header fragment, like Mistral, E6), ``empty_args_string`` (``""`` for a
call without arguments, E3), ``finish_reason_null`` (a stream whose last chunk keeps
``finish_reason: null`` before ``[DONE]``, as OpenAI-compatible gateways send it).

Reasoning (issue28-wire-facts.md §4): OpenAI itself sends none on Chat, so a reply's reasoning is
sent only under one of three quirks, in the whole body (``message``) and the stream (``delta``):
``reasoning_content`` (DeepSeek, llama.cpp, vLLM before 0.11), ``reasoning_field`` (``reasoning``:
vLLM >= 0.11, OpenRouter), ``reasoning_details`` (OpenRouter: ``reasoning`` plus ``reasoning_details``
``[{type: "reasoning.text", text, signature, format: "anthropic-claude-v1", index: 0}]``; streamed,
each piece as ``reasoning`` and a ``reasoning.text`` fragment, then a text-less fragment with the
signature, as agno-agi/agno#8794 recorded OpenRouter's stream). The one field holds the reply's
``reasoning`` then each call's ``reasoning``, joined by ``"\n"`` (Chat has one reasoning field per
message). Redacted reasoning (``reasoning_redacted``) has a form only under ``reasoning_details``
(a ``reasoning.encrypted`` entry with ``data``, ``reasoning`` null); the other two quirks send none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance.emulator._deterministic import (
    CREATED,
    base62,
    count_tokens,
    fragments,
    hex_id,
    input_tokens,
    output_tokens,
    pad,
    reasoning_tokens,
    text_fragments,
)
from conformance.emulator._prompt_formats import pieces as prompt_pieces
from conformance.emulator._wire import (
    ErrorAnswer,
    Headers,
    WireContext,
    argument_text,
    dumps_compact,
    retry_after,
    retry_after_header,
    sse,
)
from conformance.scenarios.values import Fault, Reply

__all__ = [
    "KNOWN_QUIRKS",
    "WIRE",
    "dump_body",
    "error_response",
    "invalid_request",
    "malformed_event",
    "openai_error",
    "openai_fault_answer",
    "openai_headers",
    "response_body",
    "response_headers",
    "stream_error_event",
    "stream_error_tail",
    "stream_events",
    "terminal_event_count",
]

WIRE = "openai_chat"
KNOWN_QUIRKS = frozenset(
    {
        "index_offset",
        "name_repeated",
        "name_empty_repeated",
        "name_null_repeated",
        "id_empty_repeated",
        "id_null_repeated",
        "args_in_first_chunk",
        "empty_args_string",
        "reasoning_content",
        "reasoning_field",
        "reasoning_details",
        "finish_reason_null",
    }
)

_DETAILS_FORMAT = "anthropic-claude-v1"
"""``reasoning_details[].format`` of the OpenRouter form (its Anthropic models')."""

_FINISH = {"stop": "stop", "tool_calls": "tool_calls", "length": "length", "content_filter": "content_filter"}


def _response_id(ctx: WireContext) -> str:
    return "chatcmpl-" + base62(29, *ctx.key("chatcmpl"))


def _call_id(ctx: WireContext, index: int) -> str:
    return "call_" + base62(24, *ctx.key("call", index))


def _fingerprint(ctx: WireContext) -> str:
    return "fp_" + hex_id(10, "fingerprint", ctx.model)


def _reasoning_text(reply: Reply) -> str | None:
    """The one reasoning field's text: the reply's reasoning, then each call's, joined by ``"\n"``."""
    pieces = [reply.reasoning] if reply.reasoning else []
    pieces += [call.reasoning for call in reply.tool_calls if call.reasoning]
    return "\n".join(pieces) if pieces else None


def _reasoning_fields(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """The message fields of a whole body's reasoning under the reply's quirk (none without one)."""
    text = _reasoning_text(reply)
    quirks = reply.quirks
    if text is None:
        return {}
    if "reasoning_details" in quirks:
        if reply.reasoning_redacted:
            return {"reasoning": None, "reasoning_details": [_encrypted(ctx)]}
        detail = {"type": "reasoning.text", "text": text, "signature": _signature(ctx), "format": _DETAILS_FORMAT}
        return {"reasoning": text, "reasoning_details": [{**detail, "index": 0}]}
    if reply.reasoning_redacted:
        return {}
    if "reasoning_field" in quirks:
        return {"reasoning": text}
    return {"reasoning_content": text} if "reasoning_content" in quirks else {}


def _reasoning_deltas(reply: Reply, ctx: WireContext) -> list[dict[str, Any]]:
    """``_reasoning_fields`` as stream deltas."""
    text = _reasoning_text(reply)
    quirks = reply.quirks
    if text is None:
        return []
    if "reasoning_details" in quirks:
        if reply.reasoning_redacted:
            return [{"reasoning": None, "reasoning_details": [_encrypted(ctx)]}]
        fragment = {"type": "reasoning.text", "format": _DETAILS_FORMAT, "index": 0}
        deltas = [
            {"reasoning": piece, "reasoning_details": [{"type": "reasoning.text", "text": piece, **fragment}]}
            for piece in fragments(text)
        ]
        return [*deltas, {"reasoning_details": [{**fragment, "signature": _signature(ctx)}]}]
    if reply.reasoning_redacted:
        return []
    key = "reasoning" if "reasoning_field" in quirks else "reasoning_content" if "reasoning_content" in quirks else None
    return [] if key is None else [{key: piece} for piece in fragments(text)]


def _signature(ctx: WireContext) -> str:
    """The signature of a ``reasoning.text`` entry (an Anthropic one, as OpenRouter passes it on)."""
    return "Eq" + base62(86, *ctx.key("reasoning-signature"))


def _encrypted(ctx: WireContext) -> dict[str, Any]:
    data = "Eu" + base62(118, *ctx.key("reasoning-encrypted"))
    return {"type": "reasoning.encrypted", "data": data, "format": _DETAILS_FORMAT, "index": 0}


def _usage(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """Usage as OpenAI reports it (reasoning tokens counted whether or not a quirk sends the text);
    the calls' own reasoning counts as reasoning and completion tokens too."""
    between = sum(count_tokens(call.reasoning) for call in reply.tool_calls if call.reasoning)
    prompt, completion = input_tokens(ctx.turn), output_tokens(reply) + between
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning_tokens(reply) + between,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


# --------------------------------------------------------------------------------------------
# Whole responses
# --------------------------------------------------------------------------------------------


def response_body(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """A ``chat.completion`` object (key order as recorded)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, **_reasoning_fields(reply, ctx)}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(ctx, i),
                "type": "function",
                "function": {"name": call.name, "arguments": argument_text(call, reply)},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    message["refusal"] = None
    message["annotations"] = []
    return {
        "id": _response_id(ctx),
        "object": "chat.completion",
        "created": CREATED,
        "model": ctx.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": _FINISH.get(reply.finish, "stop")}
        ],
        "usage": _usage(reply, ctx),
        "service_tier": "default",
        "system_fingerprint": _fingerprint(ctx),
    }


def dump_body(body: Mapping[str, Any]) -> bytes:
    """Pretty-printed with two spaces, as OpenAI sends whole bodies."""
    return json.dumps(body, ensure_ascii=False, indent=2).encode()


def openai_headers(ctx: WireContext, content_type: str) -> Headers:
    """The headers OpenAI answers with (values fixed: no clock)."""
    return [
        ("content-type", content_type),
        ("openai-version", "2020-10-01"),
        ("openai-processing-ms", str(100 + pad(400, *ctx.key("processing")))),
        ("x-request-id", "req_" + hex_id(32, *ctx.key("request"))),
        ("x-ratelimit-limit-requests", "10000"),
        ("x-ratelimit-limit-tokens", "30000000"),
        ("x-ratelimit-remaining-requests", "9999"),
        ("x-ratelimit-remaining-tokens", "29999000"),
        ("x-ratelimit-reset-requests", "6ms"),
        ("x-ratelimit-reset-tokens", "2ms"),
    ]


def response_headers(ctx: WireContext) -> Headers:
    return openai_headers(ctx, "text/event-stream; charset=utf-8" if ctx.stream else "application/json")


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


def _stream_options(ctx: WireContext) -> Mapping[str, Any]:
    options = ctx.request.get("stream_options")
    return options if isinstance(options, Mapping) else {}


def _deltas(reply: Reply, ctx: WireContext) -> list[dict[str, Any]]:
    """The ``delta`` objects of the content chunks, the first one carrying the role."""
    quirks = reply.quirks
    deltas: list[dict[str, Any]] = []
    deltas.extend(_reasoning_deltas(reply, ctx))
    cut = prompt_pieces if ctx.prompt_format is not None else text_fragments
    deltas.extend({"content": piece} for piece in cut(reply.text or ""))
    offset = 1 if "index_offset" in quirks else 0
    for i, call in enumerate(reply.tool_calls):
        header = {"index": i + offset, "id": _call_id(ctx, i), "type": "function"}
        arguments = argument_text(call, reply)
        whole = "args_in_first_chunk" in quirks
        deltas.append(
            {"tool_calls": [{**header, "function": {"name": call.name, "arguments": arguments if whole else ""}}]}
        )
        if whole:
            continue
        for piece in fragments(arguments):
            fragment: dict[str, Any] = {"index": i + offset, "function": {"arguments": piece}}
            if "name_repeated" in quirks:
                fragment = {**header, "function": {"name": call.name, "arguments": piece}}
            elif "name_empty_repeated" in quirks or "name_null_repeated" in quirks:
                name = "" if "name_empty_repeated" in quirks else None
                fragment = {"index": i + offset, "function": {"name": name, "arguments": piece}}
            elif "id_empty_repeated" in quirks:
                fragment = {"id": "", "type": "function", "index": i + offset, "function": {"arguments": piece}}
            elif "id_null_repeated" in quirks:
                fragment = {
                    "id": None,
                    "index": i + offset,
                    "type": "function",
                    "function": {"name": None, "arguments": piece},
                }
            deltas.append({"tool_calls": [fragment]})
    if deltas and "tool_calls" in deltas[0]:
        deltas[0] = {"role": "assistant", "content": None, **deltas[0], "refusal": None}
    else:
        deltas.insert(0, {"role": "assistant", "content": "", "refusal": None})
    return deltas


def stream_events(reply: Reply, ctx: WireContext) -> list[bytes]:
    """The SSE events of a streamed reply, ending with ``data: [DONE]``."""
    options = _stream_options(ctx)
    include_usage = options.get("include_usage") is True
    obfuscate = options.get("include_obfuscation") is not False
    head = {
        "id": _response_id(ctx),
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": ctx.model,
        "service_tier": "default",
        "system_fingerprint": _fingerprint(ctx),
    }

    def chunk(n: int, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
        body: dict[str, Any] = {**head, "choices": choices}
        if include_usage:
            body["usage"] = usage
        if obfuscate:
            body["obfuscation"] = base62(2 + pad(13, *ctx.key("obfuscation-length", n)), *ctx.key("obfuscation", n))
        return sse(dumps_compact(body))

    events = [
        chunk(n, [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])
        for n, delta in enumerate(_deltas(reply, ctx))
    ]
    finish = None if "finish_reason_null" in reply.quirks else _FINISH.get(reply.finish, "stop")
    events.append(chunk(len(events), [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}]))
    if include_usage:
        events.append(chunk(len(events), [], _usage(reply, ctx)))
    events.append(sse("[DONE]"))
    return events


def terminal_event_count(reply: Reply, ctx: WireContext) -> int:
    """The chunk carrying ``finish_reason``, the usage chunk (``include_usage``) and ``data: [DONE]``
    end the stream. The OpenAI SDK ends a stream without ``[DONE]`` silently (``Stream.__stream__``
    stops at the end of the body), so a stream is really cut short only when its finish chunk is
    missing too: a breaking fault withholds all three."""
    return 3 if _stream_options(ctx).get("include_usage") is True else 2


# --------------------------------------------------------------------------------------------
# Errors (§1e: {"error": {message, type, param, code}})
# --------------------------------------------------------------------------------------------


def openai_error(message: str, etype: str, *, param: str | None = None, code: str | None = None) -> bytes:
    error = {"message": message, "type": etype, "param": param, "code": code}
    return json.dumps({"error": error}, ensure_ascii=False, indent=4).encode() + b"\n"


def openai_fault_answer(fault: Fault, ctx: WireContext, schema_param: str) -> ErrorAnswer:
    """The OpenAI answer to an HTTP fault (Chat and Responses share the envelope, §2e)."""
    headers = openai_headers(ctx, "application/json; charset=utf-8")
    seconds = retry_after(fault)
    if seconds is not None:
        headers.append(("retry-after", retry_after_header(seconds)))
    tool = ctx.tool_names[0] if ctx.tool_names else "tool"
    kind = fault.kind
    if kind == "rate_limit":
        headers = [(k, "0" if k == "x-ratelimit-remaining-requests" else v) for k, v in headers]
        message = (
            f"Rate limit reached for {ctx.model} in organization org-emulator on requests per min (RPM): "
            f"Limit 3, Used 3, Requested 1. Please try again in {retry_after_header(seconds or 1)}s. "
            "Visit https://platform.openai.com/account/rate-limits to learn more."
        )
        return 429, headers, openai_error(message, "requests", code="rate_limit_exceeded")
    if kind == "server_error":
        message = "The server had an error while processing your request. Sorry about that!"
        return 500, headers, openai_error(message, "server_error")
    if kind == "unavailable":
        return 503, headers, openai_error("The server is overloaded or not ready yet.", "server_error")
    if kind == "overloaded":
        message = (
            "That model is currently overloaded with other requests. You can retry your request, or contact us "
            "through our help center at help.openai.com if the error persists."
        )
        return 503, headers, openai_error(message, "server_error")
    if kind == "invalid_tool_schema":
        message = (
            f"Invalid schema for function '{tool}': schema must be a JSON Schema of 'type: \"object\"', "
            "got 'type: \"None\"'."
        )
        body = openai_error(message, "invalid_request_error", param=schema_param, code="invalid_function_parameters")
        return 400, headers, body
    raise ValueError(f"fault {kind!r} is not answered with an HTTP error")


def error_response(fault: Fault, ctx: WireContext) -> ErrorAnswer:
    """The HTTP error answering a fault (rate_limit, server_error, unavailable, overloaded,
    invalid_tool_schema)."""
    return openai_fault_answer(fault, ctx, "tools[0].function.parameters")


def invalid_request(message: str, ctx: WireContext) -> ErrorAnswer:
    """A 400 ``invalid_request_error`` (a request the emulator cannot answer)."""
    headers = openai_headers(ctx, "application/json; charset=utf-8")
    return 400, headers, openai_error(message, "invalid_request_error")


def stream_error_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """``data: {"error": {...}}`` inside a 200 stream (§1d; the SDK raises ``APIError``)."""
    error = {
        "message": "The server had an error while processing your request. Sorry about that!",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    return sse(dumps_compact({"error": error}))


def stream_error_tail(ctx: WireContext, *, position: int = 0) -> list[bytes]:
    return []


def malformed_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """A chunk cut in the middle of its JSON (the event itself is complete SSE)."""
    body = f'{{"id":"{_response_id(ctx)}","object":"chat.completion.chunk","created":{CREATED},"choices":[{{"index":0,'
    return sse(body + '"delta":{"content":"Hel')
