"""Ollama's native chat API as the emulator sends it (``POST /api/chat``).

Sources: wire-formats.md §5 (ollama ``api/types.go``, ``server/routes.go``, ``docs/api.md``,
``docs/api/errors.mdx``), the recorded bodies and stream in ``tests/realworld/cassettes/ollama``
(openinference 2026, openllmetry): key order, ``created_at`` with microseconds, the counters.

The request streams unless ``"stream": false``. Body: ``message`` (``content``, ``thinking``,
``tool_calls`` whose ``function.arguments`` is an *object*, with a server ``id`` ``call_`` + 8
characters and ``function.index``), ``done: true``, ``done_reason`` (``stop`` or ``length`` only:
a tool call ends with ``stop``), durations in nanoseconds and token counters.

Stream (NDJSON, one object per line, each line its own HTTP chunk): ``thinking`` lines, ``content``
lines a token each, one line with every tool call whole (§5d), then the ``done: true`` line with
``done_reason`` and the counters. Errors are ``{"error": "<message>"}``, in a stream too (status
stays 200).

Reasoning: a message has one ``thinking`` field (ollama-python ``Message.thinking: Optional[str]``), so
the reply's ``reasoning`` and then each call's (``ScriptedCall.reasoning``) are joined by ``"\n"`` into it,
in order (as the Chat emulator joins them into its one field). Redacted reasoning has no form here (no
field carries a payload without text): the reply's own is not sent when ``reasoning_redacted``. No
reasoning token count exists on this wire (``eval_count`` counts everything; issue 28 wire facts §5f).

Quirks: ``no_call_ids`` (calls without ``id`` and ``function.index``, as before Ollama 0.12.10),
``empty_args_string`` (no ``arguments`` key for a call without arguments).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.emulator._deterministic import (
    call_object,
    input_tokens,
    iso_time,
    lower_alnum,
    output_tokens,
    text_fragments,
)
from conformance.emulator._wire import ErrorAnswer, Headers, WireContext, dumps_compact, retry_after, retry_after_header
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

WIRE = "ollama"
KNOWN_QUIRKS = frozenset({"no_call_ids", "empty_args_string"})

_DONE_REASONS = {"length": "length"}  # llm/server.go: only "stop" and "length"; everything else is "stop"
_LINE_MS = 32
"""Milliseconds between the ``created_at`` stamps of consecutive stream lines (as recorded)."""


def _tool_calls(reply: Reply, ctx: WireContext) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(reply.tool_calls):
        function: dict[str, Any] = {} if "no_call_ids" in reply.quirks else {"index": index}
        function["name"] = call.name
        if not ("empty_args_string" in reply.quirks and call.arguments == {}):
            function["arguments"] = call_object(call)
        item: dict[str, Any] = (
            {} if "no_call_ids" in reply.quirks else {"id": "call_" + lower_alnum(8, *ctx.key("call", index))}
        )
        item["function"] = function
        calls.append(item)
    return calls


def _done(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """``done``, ``done_reason`` and the counters of the last line (durations in nanoseconds)."""
    prompt, evals = input_tokens(ctx.turn), output_tokens(reply)
    load, prompt_ns, eval_ns = 52_113_000, prompt * 1_217_000, evals * 19_871_000
    return {
        "done": True,
        "done_reason": _DONE_REASONS.get(reply.finish, "stop"),
        "total_duration": load + prompt_ns + eval_ns + 3_406_000,
        "load_duration": load,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": prompt_ns,
        "eval_count": evals,
        "eval_duration": eval_ns,
    }


def _thinking(reply: Reply) -> str:
    """The one ``thinking`` text: the reply's reasoning (unless redacted), then each call's, joined by ``"\n"``."""
    pieces = [reply.reasoning] if reply.reasoning and not reply.reasoning_redacted else []
    pieces += [call.reasoning for call in reply.tool_calls if call.reasoning]
    return "\n".join(pieces)


def response_body(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """The ``stream: false`` body: the stream's last line with everything in it."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
    if thinking := _thinking(reply):
        message["thinking"] = thinking
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply, ctx)
    return {"model": ctx.model, "created_at": iso_time(0), "message": message, **_done(reply, ctx)}


def dump_body(body: Mapping[str, Any]) -> bytes:
    return dumps_compact(body).encode()


def response_headers(ctx: WireContext) -> Headers:
    return [("content-type", "application/x-ndjson" if ctx.stream else "application/json; charset=utf-8")]


def _line(payload: Mapping[str, Any]) -> bytes:
    return dumps_compact(payload).encode() + b"\n"


def stream_events(reply: Reply, ctx: WireContext) -> list[bytes]:
    """The NDJSON lines of a streamed reply, ending with the ``done: true`` line."""
    messages: list[dict[str, Any]] = []
    for piece in text_fragments(_thinking(reply)):
        messages.append({"role": "assistant", "content": "", "thinking": piece})
    for piece in text_fragments(reply.text or ""):
        messages.append({"role": "assistant", "content": piece})
    if reply.tool_calls:
        messages.append({"role": "assistant", "content": "", "tool_calls": _tool_calls(reply, ctx)})
    lines = [
        _line({"model": ctx.model, "created_at": iso_time(n * _LINE_MS), "message": message, "done": False})
        for n, message in enumerate(messages)
    ]
    last = {"role": "assistant", "content": ""}
    stamp = iso_time(len(messages) * _LINE_MS)
    lines.append(_line({"model": ctx.model, "created_at": stamp, "message": last, **_done(reply, ctx)}))
    return lines


def terminal_event_count(reply: Reply, ctx: WireContext) -> int:
    """The ``done: true`` line ends the stream."""
    return 1


# --------------------------------------------------------------------------------------------
# Errors (§5e: {"error": "<message>"}; no type or code, the status says what it is)
# --------------------------------------------------------------------------------------------


def _error(status: int, message: str, extra: Headers | None = None) -> ErrorAnswer:
    return status, [("content-type", "application/json; charset=utf-8"), *(extra or [])], _line({"error": message})


def error_response(fault: Fault, ctx: WireContext) -> ErrorAnswer:
    """The HTTP error answering a fault: 429, 500, 503 ``server busy`` (unavailable and
    overloaded: Ollama's queue-full answer), 400 naming the tool's parameters."""
    extra: Headers = []
    seconds = retry_after(fault)
    if seconds is not None:
        extra.append(("retry-after", retry_after_header(seconds)))
    kind = fault.kind
    if kind == "rate_limit":
        return _error(429, "you have reached your hourly usage limit, please wait or upgrade to continue", extra)
    if kind == "server_error":
        return _error(500, "llama runner process has terminated: exit status 2", extra)
    if kind in ("unavailable", "overloaded"):
        return _error(503, "server busy, please try again.  maximum pending requests exceeded", extra)
    if kind == "invalid_tool_schema":
        tool = ctx.tool_names[0] if ctx.tool_names else "tool"
        message = (
            f"json: cannot unmarshal string into Go struct field ToolFunction.tools.function.parameters "
            f"of type api.ToolFunctionParameters (tool {tool!r})"
        )
        return _error(400, message, extra)
    raise ValueError(f"fault {kind!r} is not answered with an HTTP error")


def invalid_request(message: str, ctx: WireContext) -> ErrorAnswer:
    return _error(400, message)


def stream_error_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """An ``{"error": ...}`` line inside a 200 stream (docs/api/errors.mdx): a failed generation."""
    return _line({"error": "an error was encountered while running the model: unexpected EOF"})


def stream_error_tail(ctx: WireContext, *, position: int = 0) -> list[bytes]:
    return []


def malformed_event(ctx: WireContext, *, position: int = 0) -> bytes:
    return (
        f'{{"model":"{ctx.model}","created_at":"{iso_time(0)}","message":{{"role":"assistant","content":"Hel\n'.encode()
    )
