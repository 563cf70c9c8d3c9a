"""Gemini (v1beta ``generateContent``) as the emulator sends it.

Paths: ``POST /v1beta/models/{model}:generateContent`` (one body) and
``:streamGenerateContent?alt=sse`` (SSE, CRLF line ends, no terminator, no ``event:`` names);
without ``alt=sse`` the stream is one JSON array of pretty-printed responses (``[{...}\\n,\\r\\n{...}\\n]``,
as llm-gemini records it).

Sources: wire-formats.md §4 (google-genai ``types.py``, ``_api_client.py``, ``errors.py``), the
recorded bodies and streams in ``tests/realworld/cassettes/gemini`` (crewai, openinference,
logfire, pydantic-ai, llm-gemini): ``candidates[].content.parts[]``, ``role: "model"``,
``finishReason``, ``usageMetadata`` on every chunk, ``modelVersion``, ``responseId``; SSE JSON with
``": "`` after keys.

A call is a whole ``functionCall`` part (``name``, ``args`` object); parallel calls are several
parts of one chunk (the last, with ``finishReason: "STOP"``, as gemini-2.0-flash streams them);
there is no tool-call finish reason (§4c). Reasoning is a ``thought: true`` text part. A reply cut by
the safety filters (``content_filter``) ends with a candidate whose ``content`` is unset,
``finishReason: "SAFETY"`` and the ``safetyRatings`` that name the blocking category (``blocked:
true``), as the Gemini API clears a blocked candidate's content (ai.google.dev ``Candidate``,
``SafetyRating``; Google Cloud "Process blocked responses"); a stream keeps the text chunks sent
before the block.

Reasoning: ``Reply.reasoning`` is a ``thought: true`` text part before everything else, and a
call's own ``ScriptedCall.reasoning`` a thought part right before its ``functionCall`` (interleaved
thinking; the parts of one content in order, google-genai ``Part.thought``); ``thoughtsTokenCount``
counts both (``GenerateContentResponseUsageMetadata``; ``totalTokenCount`` includes it, E19). The
request's ``thinkingConfig`` is not followed (thought text is sent whether or not
``includeThoughts`` asks for it).

Quirks: ``call_ids`` (``functionCall.id``, 8 characters, as gemini-3.5-flash sends, E31),
``thought_signature`` (a ``thoughtSignature`` on the first call part only, as for parallel calls,
E10, issue28-wire-facts §2a), ``signature_own_part`` (the first call's signature instead on a part of
its own after the calls, ``{"text": "", "thoughtSignature": ...}``; streamed, in a later chunk that
ends the stream: WF §4d, modfin/bellman#35, issue28-wire-facts §2b), ``trailing_empty_text``
(the finish reason in a last chunk of its own holding ``{"text": ""}``, gemini-3 style),
``empty_args_string`` (no ``args`` at all for a call without arguments, E3),
``malformed_function_call`` (the reply's calls never arrive: the candidate ends with
``finishReason: "MALFORMED_FUNCTION_CALL"`` and a ``finishMessage`` holding the call the model wrote
as Python, ``content: {}`` in a whole body and no ``content`` in a stream, and no candidate tokens,
as vercel/ai#5039, langchain-ai/langchain-google#725 and pydantic/pydantic-ai#3095 recorded it),
``recitation`` (a ``content_filter`` reply is stopped by the recitation check instead:
``finishReason: "RECITATION"``, no ``content``, ``safetyRatings`` none of which is blocked, and the
``citationMetadata.citationSources`` the text recited, as gbaptista/gemini-ai#21 and
epam/ai-dial-adapter-vertexai#85 show it), ``finish_other`` (a ``stop`` reply ends for a reason
the API leaves unspecified: the candidate holds only ``finishReason: "OTHER"``, no ``content`` and
no candidate tokens, the reply's text and calls never arriving; google-genai ``types.FinishReason``
``OTHER``, "stopped generating for a reason not otherwise specified"; a candidate without
``parts`` for ``OTHER`` as neuron-core/neuron-ai#447 and BerriAI/litellm#40477 met it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance.emulator._deterministic import (
    base62,
    call_object,
    count_tokens,
    input_tokens,
    lower_alnum,
    output_tokens,
    pad,
    reasoning_tokens,
    text_fragments,
)
from conformance.emulator._wire import (
    ErrorAnswer,
    Headers,
    WireContext,
    dumps_spaced,
    retry_after,
    retry_after_header,
    sends_no_arguments,
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
    "response_body",
    "response_headers",
    "stream_error_event",
    "stream_error_tail",
    "stream_events",
    "terminal_event_count",
]

WIRE = "gemini"
KNOWN_QUIRKS = frozenset(
    {
        "call_ids",
        "thought_signature",
        "signature_own_part",
        "trailing_empty_text",
        "empty_args_string",
        "malformed_function_call",
        "recitation",
        "finish_other",
    }
)

_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_ARRAY_SEPARATOR = b"\n,\r\n"
_BLOCKED = "SAFETY"
_SAFETY_RATINGS = (
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
)
"""The ``safetyRatings`` of a blocked candidate: one category per harm the API rates, the blocking
one with ``blocked: true``."""


_MALFORMED = "MALFORMED_FUNCTION_CALL"


def _malformed_message(reply: Reply) -> str:
    """``finishMessage`` of a malformed call: the calls as the Python the model wrote instead of JSON."""
    calls = []
    for call in reply.tool_calls:
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in (call.arguments or {}).items())
        calls.append(f"print(default_api.{call.name}({args}))")
    return "Malformed function call: " + "\n".join(calls)


_OTHER = "OTHER"


def _contentless(reply: Reply) -> bool:
    """Whether the reply's answer is a candidate with no content (``malformed_function_call``, or a
    ``stop`` reply with ``finish_other``)."""
    return "malformed_function_call" in reply.quirks or (reply.finish == "stop" and "finish_other" in reply.quirks)


def _malformed_body(reply: Reply, ctx: WireContext, *, stream: bool) -> dict[str, Any]:
    """The answer of quirk ``malformed_function_call`` (no calls, no candidate tokens), or of
    ``finish_other`` (only ``finishReason: "OTHER"``)."""
    candidate: dict[str, Any]
    if "malformed_function_call" in reply.quirks:
        candidate = {} if stream else {"content": {}}
        candidate["finishReason"] = _MALFORMED
        candidate["finishMessage"] = _malformed_message(reply)
    else:
        candidate = {"finishReason": _OTHER}
    if stream:
        candidate["index"] = 0
    prompt = input_tokens(ctx.turn)
    usage = {
        "promptTokenCount": prompt,
        "totalTokenCount": prompt,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "serviceTier": "standard",
    }
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": ctx.model,
        "responseId": _response_id(ctx),
    }


_RECITED = {
    "citationSources": [
        {"startIndex": 0, "endIndex": 148, "uri": "https://www.example.com/books/the-sea", "license": ""}
    ]
}
"""The ``citationMetadata`` of a candidate the recitation check stopped."""


def _blocked_candidate(candidate: dict[str, Any], *, recitation: bool = False) -> dict[str, Any]:
    """``candidate`` as the API sends it when the safety filters (or, with ``recitation``, the
    recitation check) block it: no ``content``, the ratings after the finish reason."""
    out = {k: v for k, v in candidate.items() if k not in ("content", "finishMessage")}
    if recitation:
        out["finishReason"] = "RECITATION"
        out["safetyRatings"] = [{k: v for k, v in r.items() if k != "blocked"} for r in _SAFETY_RATINGS]
        out["safetyRatings"][1]["probability"] = "NEGLIGIBLE"
        out["citationMetadata"] = json.loads(json.dumps(_RECITED))
        return out
    out["safetyRatings"] = [dict(rating) for rating in _SAFETY_RATINGS]
    return out


def _response_id(ctx: WireContext) -> str:
    return base62(23, *ctx.key("responseId"))


def _signature(ctx: WireContext) -> str:
    return base62(120, *ctx.key("thoughtSignature"))  # valid base64 (bytes)


def _call_parts(reply: Reply, ctx: WireContext) -> list[dict[str, Any]]:
    """The calls as ``functionCall`` parts, each after the thought part of its own reasoning."""
    parts = []
    for index, call in enumerate(reply.tool_calls):
        if call.reasoning:
            parts.append({"text": call.reasoning, "thought": True})
        function: dict[str, Any] = {"name": call.name}
        if not sends_no_arguments(call, reply):
            function["args"] = call_object(call)
        if "call_ids" in reply.quirks:
            function["id"] = lower_alnum(8, *ctx.key("functionCall.id", index))
        part: dict[str, Any] = {"functionCall": function}
        if index == 0 and "thought_signature" in reply.quirks and "signature_own_part" not in reply.quirks:
            part["thoughtSignature"] = _signature(ctx)
        parts.append(part)
    return parts


def _own_signature_part(reply: Reply, ctx: WireContext) -> dict[str, Any] | None:
    """Quirk ``signature_own_part``: the first call's signature on an empty text part of its own."""
    if "signature_own_part" not in reply.quirks or not reply.tool_calls:
        return None
    return {"text": "", "thoughtSignature": _signature(ctx)}


def _candidates(reply: Reply) -> int:
    return max(1, output_tokens(reply) - reasoning_tokens(reply))


def _thoughts(reply: Reply) -> int:
    """``thoughtsTokenCount``: the reply's reasoning and its calls' own."""
    return reasoning_tokens(reply) + sum(count_tokens(call.reasoning or "") for call in reply.tool_calls)


def _usage(reply: Reply, ctx: WireContext, candidates: int | None, *, whole: bool = False) -> dict[str, Any]:
    """``usageMetadata``; a chunk holding only a thought has no candidate count yet (recorded), and
    only whole bodies break the candidates down by modality."""
    prompt = input_tokens(ctx.turn)
    thoughts = _thoughts(reply)
    usage: dict[str, Any] = {"promptTokenCount": prompt}
    if candidates is not None:
        usage["candidatesTokenCount"] = candidates
    usage["totalTokenCount"] = prompt + (candidates or 0) + thoughts
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if whole and candidates is not None:
        usage["candidatesTokensDetails"] = [{"modality": "TEXT", "tokenCount": candidates}]
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    usage["serviceTier"] = "standard"
    return usage


def _chunk(
    reply: Reply, ctx: WireContext, parts: list[dict[str, Any]], finish: str | None, candidates: int | None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    if finish is not None and any("functionCall" in part for part in parts):
        candidate["finishMessage"] = "Model generated function call(s)."  # gemini-2.5 (recorded)
    if finish == _BLOCKED:
        candidate = _blocked_candidate(candidate, recitation="recitation" in reply.quirks)
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(reply, ctx, candidates),
        "modelVersion": ctx.model,
        "responseId": _response_id(ctx),
    }


# --------------------------------------------------------------------------------------------
# Whole responses
# --------------------------------------------------------------------------------------------


def response_body(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """A ``GenerateContentResponse`` (gemini-2.0 shape: ``avgLogprobs``, no candidate ``index``)."""
    if _contentless(reply):
        return _malformed_body(reply, ctx, stream=False)
    parts: list[dict[str, Any]] = []
    if reply.reasoning:
        parts.append({"text": reply.reasoning, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    parts.extend(_call_parts(reply, ctx))
    if (own := _own_signature_part(reply, ctx)) is not None:
        parts.append(own)
    candidate = {
        "content": {"parts": parts, "role": "model"},
        "finishReason": _FINISH.get(reply.finish, "STOP"),
        "avgLogprobs": -(1 + pad(250, *ctx.key("avgLogprobs"))) / 10000,
    }
    if candidate["finishReason"] == _BLOCKED:
        candidate = _blocked_candidate(candidate, recitation="recitation" in reply.quirks)
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(reply, ctx, _candidates(reply), whole=True),
        "modelVersion": ctx.model,
        "responseId": _response_id(ctx),
    }


def dump_body(body: Mapping[str, Any]) -> bytes:
    """Pretty-printed with two spaces and a final newline, as Google sends whole bodies."""
    return json.dumps(body, ensure_ascii=False, indent=2).encode() + b"\n"


def _google_headers(content_type: str, ctx: WireContext) -> Headers:
    return [
        ("content-type", content_type),
        ("vary", "Origin, X-Origin, Referer"),
        ("server", "scaffolding on HTTPServer2"),
        ("server-timing", f"gfet4t7; dur={200 + pad(800, *ctx.key('server-timing'))}"),
    ]


def response_headers(ctx: WireContext) -> Headers:
    if ctx.stream and ctx.sse:
        return [*_google_headers("text/event-stream", ctx), ("content-disposition", "attachment")]
    return _google_headers("application/json; charset=UTF-8", ctx)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


def _frame(payload: Mapping[str, Any], ctx: WireContext, *, position: int, last: bool = False) -> bytes:
    """One chunk: an SSE event (CRLF), or an element of the JSON array stream."""
    if ctx.sse:
        return sse(dumps_spaced(payload), crlf=True)
    head = b"[" if position == 0 else _ARRAY_SEPARATOR
    return head + json.dumps(payload, ensure_ascii=False, indent=2).encode() + (b"\n]" if last else b"")


def stream_events(reply: Reply, ctx: WireContext) -> list[bytes]:
    """The chunks of a streamed reply; the last one holds the finish reason."""
    if _contentless(reply):
        return [_frame(_malformed_body(reply, ctx, stream=True), ctx, position=0, last=True)]
    finish = _FINISH.get(reply.finish, "STOP")
    total = _candidates(reply)
    payloads: list[tuple[list[dict[str, Any]], str | None, int | None]] = []
    if reply.reasoning:
        payloads.append(([{"text": reply.reasoning, "thought": True}], None, None))
    spoken = 0
    for piece in text_fragments(reply.text or "", per=4):
        spoken += count_tokens(piece)
        payloads.append(([{"text": piece}], None, min(total, max(1, spoken))))
    calls = _call_parts(reply, ctx)
    if calls:
        payloads.append((calls, None, total))
    own = _own_signature_part(reply, ctx)
    if finish == _BLOCKED:  # the blocked candidate comes in a chunk of its own, without content
        payloads.append(([], finish, total))
    elif own is not None:  # the signature in a later chunk of its own, which ends the stream
        payloads.append(([own], finish, total))
    elif "trailing_empty_text" in reply.quirks or not payloads or (reply.reasoning and len(payloads) == 1):
        payloads.append(([{"text": ""}], finish, total))
    else:
        parts, _, _ = payloads[-1]
        payloads[-1] = (parts, finish, total)
    return [
        _frame(_chunk(reply, ctx, parts, reason, count), ctx, position=n, last=n == len(payloads) - 1)
        for n, (parts, reason, count) in enumerate(payloads)
    ]


def terminal_event_count(reply: Reply, ctx: WireContext) -> int:
    """The chunk with ``finishReason`` ends the stream (there is no other terminator)."""
    return 1


# --------------------------------------------------------------------------------------------
# Errors (§4e: {"error": {code, message, status, details?}})
# --------------------------------------------------------------------------------------------


def _error_payload(status: int, code: str, message: str, details: list[Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": status, "message": message, "status": code}
    if details is not None:
        error["details"] = details
    return {"error": error}


def _error(ctx: WireContext, status: int, payload: dict[str, Any], extra: Headers | None = None) -> ErrorAnswer:
    # a stream without alt=sse answers errors as a one-element array (google-gemini/gemini-cli#6678)
    value: Any = [payload] if ctx.stream and not ctx.sse else payload
    body = json.dumps(value, ensure_ascii=False, indent=2).encode() + b"\n"
    return status, _google_headers("application/json; charset=UTF-8", ctx) + (extra or []), body


def error_response(fault: Fault, ctx: WireContext) -> ErrorAnswer:
    """The HTTP error answering a fault: 429 ``RESOURCE_EXHAUSTED`` (with ``RetryInfo``), 500
    ``INTERNAL``, 503 ``UNAVAILABLE`` (unavailable and overloaded), 400 ``INVALID_ARGUMENT`` naming
    the function declaration's parameters."""
    extra: Headers = []
    seconds = retry_after(fault)
    if seconds is not None:
        extra.append(("retry-after", retry_after_header(seconds)))
    kind = fault.kind
    if kind == "rate_limit":
        details = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": ctx.model},
                        "quotaValue": "10",
                    }
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after_header(seconds or 1)}s"},
        ]
        message = (
            "You exceeded your current quota, please check your plan and billing details. For more information "
            "on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
        )
        return _error(ctx, 429, _error_payload(429, "RESOURCE_EXHAUSTED", message, details), extra)
    if kind == "server_error":
        message = (
            "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting"
        )
        return _error(ctx, 500, _error_payload(500, "INTERNAL", message), extra)
    if kind == "unavailable":
        return _error(ctx, 503, _error_payload(503, "UNAVAILABLE", "The service is currently unavailable."), extra)
    if kind == "overloaded":
        message = "The model is overloaded. Please try again later."
        return _error(ctx, 503, _error_payload(503, "UNAVAILABLE", message), extra)
    if kind == "invalid_tool_schema":
        field = "tools[0].function_declarations[0].parameters"
        message = (
            f"Invalid JSON payload received. Unknown name \"additionalProperties\" at '{field}': Cannot find field."
        )
        details = [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": field, "description": message}],
            }
        ]
        return _error(ctx, 400, _error_payload(400, "INVALID_ARGUMENT", message, details), extra)
    raise ValueError(f"fault {kind!r} is not answered with an HTTP error")


def invalid_request(message: str, ctx: WireContext) -> ErrorAnswer:
    return _error(ctx, 400, _error_payload(400, "INVALID_ARGUMENT", message))


def stream_error_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """``{"error": {...}}`` as a stream chunk (§4d: the SDK raises on it); ``INTERNAL`` is a server error."""
    message = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
    return _frame(_error_payload(500, "INTERNAL", message), ctx, position=position, last=True)


def stream_error_tail(ctx: WireContext, *, position: int = 0) -> list[bytes]:
    return []


def malformed_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """SSE: a chunk cut in the middle of its JSON. JSON array: an element whose brackets and quotes
    balance (so a reader can tell where it ends) but which is not JSON."""
    if ctx.sse:
        return sse('{"candidates": [{"content": {"parts": [{"text": "Hel', crlf=True)
    element = b'{"candidates": [{"content": {"parts": [{"text": Hel}], "role": "model"}}]}'
    return (b"[" if position == 0 else _ARRAY_SEPARATOR) + element
