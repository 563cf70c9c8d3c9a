"""The OpenAI Responses API as the emulator sends it (``POST /v1/responses``).

Sources: wire-formats.md §2 (openai-python ``types/responses``; OAI-SPEC), the recorded streams
and bodies in ``tests/realworld/cassettes/openai_responses`` (pydantic-ai, logfire, crewai) and
vercel/ai ``packages/openai/src/responses/__fixtures__/openai-error.1.chunks.txt`` (the mid-stream
``error`` event, nested, then ``response.failed``).

A response object echoes the request's settings (``instructions``, ``tools``, ``tool_choice``,
``parallel_tool_calls``, ``max_output_tokens``, ``reasoning.effort``). Output items: a ``reasoning`` item
(its text as a ``summary_text`` part; ``encrypted_content`` only when the request's ``include`` asks for
it; a redacted one, ``Reply.reasoning_redacted``, has an empty summary and always its
``encrypted_content``: the payload is all there is to replay), a ``message`` item with one
``output_text`` part, then one ``function_call`` item per call with two ids: item ``id`` (``fc_``) and
``call_id`` (``call_``) (E12), each call's own reasoning (``ScriptedCall.reasoning``) as a ``reasoning``
item right before it (openai-python ``ResponseReasoningItem``; recorded order: reasoning, then the items it
preceded, issue 28 wire facts §3c). ``output_tokens_details.reasoning_tokens`` counts every reasoning text.

Stream: named SSE events (``event:`` = the data's ``type``), each with a ``sequence_number`` from 0:
``response.created``, ``response.in_progress``, per item ``response.output_item.added`` ... (text:
``content_part.added``, ``output_text.delta`` a token each, ``output_text.done``,
``content_part.done``; call: ``function_call_arguments.delta`` cut mid-token, then ``.done``;
reasoning with text: ``reasoning_summary_part.added``, ``reasoning_summary_text.delta`` a token each,
``reasoning_summary_text.done``, ``reasoning_summary_part.done``, with ``summary_index`` 0, as
openai-python's ``ResponseReasoningSummary*Event`` types have them; redacted reasoning has no summary
events, as the recorded reasoning streams (no summary asked) have none) ``response.output_item.done``, and
the terminal ``response.completed`` (or ``response.incomplete`` for ``length``/``content_filter``). No
``[DONE]`` (§2d).

Quirks: ``args_in_first_chunk`` (the whole argument text already in ``output_item.added``, no
deltas), ``empty_args_string`` (``""`` for a call without arguments, E3), ``client_tool_search``
(each call is a ``tool_search_call`` item with ``execution: "client"``, the search a client-executed
``tool_search`` tool asks the client to run: openai-python ``ResponseToolSearchCall``, ``id``
``tsc_``, ``call_id``, ``arguments`` an object, ``status``; streamed as ``output_item.added``
(``in_progress``, ``arguments: {}``) then ``output_item.done``, with no argument deltas, as the
SDK's stream events have none for it).
"""

from __future__ import annotations

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
from conformance.emulator._openai_chat import dump_body, openai_error, openai_fault_answer, openai_headers
from conformance.emulator._wire import ErrorAnswer, Headers, WireContext, argument_text, dumps_compact, sse
from conformance.scenarios.values import Fault, Reply, ScriptedCall

__all__ = [
    "KNOWN_QUIRKS",
    "WIRE",
    "dump_body",
    "error_response",
    "invalid_request",
    "malformed_event",
    "response_body",
    "response_headers",
    "response_id",
    "stream_error_event",
    "stream_error_tail",
    "stream_events",
    "terminal_event_count",
]

WIRE = "openai_responses"
KNOWN_QUIRKS = frozenset({"args_in_first_chunk", "empty_args_string", "client_tool_search"})

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
_SERVER_ERROR = "The server had an error processing your request. Sorry about that! You can retry your request."


def response_id(ctx: WireContext) -> str:
    """The ``resp_`` id of the response answering ``ctx`` (the server maps it back to its turn)."""
    return "resp_" + hex_id(50, *ctx.key("resp"))


def _item_id(ctx: WireContext, prefix: str, index: int = 0) -> str:
    return f"{prefix}_" + hex_id(50, *ctx.key(prefix, index))


def _call_id(ctx: WireContext, index: int) -> str:
    return "call_" + base62(24, *ctx.key("call", index))


def _usage(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """``usage`` as recorded in 2026 (``input_tokens_details.cache_write_tokens`` first; openai-python
    ``ResponseUsage`` requires it); the reasoning before each call counts as reasoning."""
    per_call = sum(count_tokens(call.reasoning or "") for call in reply.tool_calls)
    prompt, completion = input_tokens(ctx.turn), output_tokens(reply) + per_call
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens(reply) + per_call},
        "total_tokens": prompt + completion,
    }


def _response(
    ctx: WireContext, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None, reply: Reply | None
) -> dict[str, Any]:
    """The response object (field order as recorded in 2026)."""
    request = ctx.request

    def echo(key: str, kind: type) -> Any:
        value = request.get(key)
        return None if isinstance(value, bool) or not isinstance(value, kind) else value

    incomplete = _INCOMPLETE.get(reply.finish) if reply is not None and status == "incomplete" else None
    parallel = request.get("parallel_tool_calls")
    asked = request.get("reasoning")
    effort = {k: v for k, v in asked.items() if isinstance(v, str)} if isinstance(asked, Mapping) else {}
    return {
        "id": response_id(ctx),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": False,
        "completed_at": CREATED + 1 if status in ("completed", "incomplete") else None,
        "error": {"code": "server_error", "message": _SERVER_ERROR} if status == "failed" else None,
        "frequency_penalty": 0.0,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": echo("instructions", str),
        "max_output_tokens": echo("max_output_tokens", int),
        "max_tool_calls": None,
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": parallel if isinstance(parallel, bool) else True,
        "presence_penalty": 0.0,
        "previous_response_id": echo("previous_response_id", str),
        "prompt_cache_key": None,
        "reasoning": {"effort": effort.get("effort"), "summary": effort.get("summary")},
        "safety_identifier": None,
        "service_tier": "default",
        "store": request.get("store") is not False,  # echoed: false for a stateless request
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": echo("tools", list) or [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _status(reply: Reply) -> str:
    return "incomplete" if reply.finish in _INCOMPLETE else "completed"


def _wants_encrypted_reasoning(ctx: WireContext) -> bool:
    include = ctx.request.get("include")
    return isinstance(include, list) and "reasoning.encrypted_content" in include


class _Thought:
    """One reasoning item to play: the reply's own (``slot`` 0) or the one before call ``slot - 1``."""

    __slots__ = ("redacted", "slot", "text")

    def __init__(self, text: str, slot: int, *, redacted: bool = False) -> None:
        self.text, self.slot, self.redacted = text, slot, redacted


def _thought(reply: Reply, call: ScriptedCall | None = None, index: int = 0) -> _Thought | None:
    if call is not None:
        return _Thought(call.reasoning, index + 1) if call.reasoning else None
    return _Thought(reply.reasoning, 0, redacted=reply.reasoning_redacted) if reply.reasoning else None


def _reasoning_item(thought: _Thought, ctx: WireContext, *, done: bool) -> dict[str, Any]:
    item: dict[str, Any] = {"id": _item_id(ctx, "rs", thought.slot), "type": "reasoning"}
    if thought.redacted or _wants_encrypted_reasoning(ctx):
        key = ctx.key("encrypted_content", thought.slot) if thought.slot else ctx.key("encrypted_content")
        item["encrypted_content"] = "gAAAAAB" + base62(96, *key)
    show = done and not thought.redacted
    item["summary"] = [{"type": "summary_text", "text": thought.text}] if show else []
    return item


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _message_item(reply: Reply, ctx: WireContext, *, done: bool) -> dict[str, Any]:
    return {
        "id": _item_id(ctx, "msg"),
        "type": "message",
        "status": "completed" if done else "in_progress",
        "content": [_text_part(reply.text or "")] if done else [],
        "role": "assistant",
    }


def _search_item(reply: Reply, ctx: WireContext, index: int, *, done: bool) -> dict[str, Any]:
    """A client-executed ``tool_search_call`` (quirk ``client_tool_search``): its arguments are an
    object (the call's, or ``{}`` when the scenario gave raw text), complete only when done."""
    call = reply.tool_calls[index]
    return {
        "id": _item_id(ctx, "tsc", index),
        "type": "tool_search_call",
        "status": "completed" if done else "in_progress",
        "arguments": dict(call.arguments or {}) if done else {},
        "call_id": _call_id(ctx, index),
        "execution": "client",
    }


def _call_item(reply: Reply, ctx: WireContext, index: int, *, done: bool) -> dict[str, Any]:
    if "client_tool_search" in reply.quirks:
        return _search_item(reply, ctx, index, done=done)
    call = reply.tool_calls[index]
    arguments = argument_text(call, reply)
    early = done or "args_in_first_chunk" in reply.quirks
    return {
        "id": _item_id(ctx, "fc", index),
        "type": "function_call",
        "status": "completed" if done else "in_progress",
        "arguments": arguments if early else "",
        "call_id": _call_id(ctx, index),
        "name": call.name,
    }


def _output(reply: Reply, ctx: WireContext) -> list[dict[str, Any]]:
    output = []
    if (thought := _thought(reply)) is not None:
        output.append(_reasoning_item(thought, ctx, done=True))
    if reply.text:
        output.append(_message_item(reply, ctx, done=True))
    for index, call in enumerate(reply.tool_calls):
        if (thought := _thought(reply, call, index)) is not None:
            output.append(_reasoning_item(thought, ctx, done=True))
        output.append(_call_item(reply, ctx, index, done=True))
    return output


def response_body(reply: Reply, ctx: WireContext) -> dict[str, Any]:
    """A ``response`` object (status ``completed``, or ``incomplete`` when cut)."""
    return _response(ctx, _status(reply), _output(reply, ctx), _usage(reply, ctx), reply)


def response_headers(ctx: WireContext) -> Headers:
    return openai_headers(ctx, "text/event-stream; charset=utf-8" if ctx.stream else "application/json")


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Events:
    """Numbers the events (``sequence_number``) as they are added."""

    def __init__(self, ctx: WireContext) -> None:
        self.ctx = ctx
        self.events: list[bytes] = []

    def add(self, kind: str, **fields: Any) -> None:
        payload = {"type": kind, **fields, "sequence_number": len(self.events)}
        self.events.append(sse(dumps_compact(payload), kind))

    def obfuscation(self) -> str:
        n = len(self.events)
        return base62(3 + pad(12, *self.ctx.key("obfuscation-length", n)), *self.ctx.key("obfuscation", n))


def stream_events(reply: Reply, ctx: WireContext) -> list[bytes]:
    """The named SSE events of a streamed reply, ending with ``response.completed``/``.incomplete``."""
    out = _Events(ctx)
    out.add("response.created", response=_response(ctx, "in_progress", [], None, None))
    out.add("response.in_progress", response=_response(ctx, "in_progress", [], None, None))
    position = 0
    if (thought := _thought(reply)) is not None:
        _stream_reasoning(out, thought, position)
        position += 1
    if reply.text:
        item_id = _item_id(ctx, "msg")
        part = {"content_index": 0, "item_id": item_id, "output_index": position}
        out.add("response.output_item.added", item=_message_item(reply, ctx, done=False), output_index=position)
        out.add("response.content_part.added", **part, part=_text_part(""))
        for piece in text_fragments(reply.text):
            out.add(
                "response.output_text.delta",
                content_index=0,
                delta=piece,
                item_id=item_id,
                logprobs=[],
                obfuscation=out.obfuscation(),
                output_index=position,
            )
        out.add("response.output_text.done", **part, logprobs=[], text=reply.text)
        out.add("response.content_part.done", **part, part=_text_part(reply.text))
        out.add("response.output_item.done", item=_message_item(reply, ctx, done=True), output_index=position)
        position += 1
    for index, call in enumerate(reply.tool_calls):
        if (thought := _thought(reply, call, index)) is not None:
            _stream_reasoning(out, thought, position)
            position += 1
        item_id = _item_id(ctx, "fc", index)
        arguments = argument_text(call, reply)
        out.add("response.output_item.added", item=_call_item(reply, ctx, index, done=False), output_index=position)
        if "client_tool_search" in reply.quirks:  # no argument events for a tool_search_call
            out.add("response.output_item.done", item=_call_item(reply, ctx, index, done=True), output_index=position)
            position += 1
            continue
        if "args_in_first_chunk" not in reply.quirks:
            for piece in fragments(arguments):
                out.add(
                    "response.function_call_arguments.delta",
                    delta=piece,
                    item_id=item_id,
                    obfuscation=out.obfuscation(),
                    output_index=position,
                )
        out.add("response.function_call_arguments.done", arguments=arguments, item_id=item_id, output_index=position)
        out.add("response.output_item.done", item=_call_item(reply, ctx, index, done=True), output_index=position)
        position += 1
    status = _status(reply)
    out.add(f"response.{status}", response=response_body(reply, ctx))
    return out.events


def _stream_reasoning(out: _Events, thought: _Thought, position: int) -> None:
    """One reasoning item's events: added, its summary (part added, a delta a token, text done, part
    done; openai-python ``ResponseReasoningSummary{Part,Text}*Event``) unless redacted, done."""
    ctx = out.ctx
    out.add("response.output_item.added", item=_reasoning_item(thought, ctx, done=False), output_index=position)
    if not thought.redacted:
        item_id = _item_id(ctx, "rs", thought.slot)
        at = {"item_id": item_id, "output_index": position}
        out.add("response.reasoning_summary_part.added", **at, part=_summary_part(""), summary_index=0)
        for piece in text_fragments(thought.text):
            out.add("response.reasoning_summary_text.delta", delta=piece, **at, summary_index=0)
        out.add("response.reasoning_summary_text.done", **at, summary_index=0, text=thought.text)
        out.add("response.reasoning_summary_part.done", **at, part=_summary_part(thought.text), summary_index=0)
    out.add("response.output_item.done", item=_reasoning_item(thought, ctx, done=True), output_index=position)


def _summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def terminal_event_count(reply: Reply, ctx: WireContext) -> int:
    """``response.completed`` (or ``response.incomplete``) ends the stream."""
    return 1


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def error_response(fault: Fault, ctx: WireContext) -> ErrorAnswer:
    """The HTTP error answering a fault (the Chat envelope, §2e; a stream request gets JSON, E23)."""
    return openai_fault_answer(fault, ctx, "tools[0].parameters")


def invalid_request(message: str, ctx: WireContext) -> ErrorAnswer:
    headers = openai_headers(ctx, "application/json; charset=utf-8")
    return 400, headers, openai_error(message, "invalid_request_error")


def stream_error_event(ctx: WireContext, *, position: int = 0) -> bytes:
    """The ``error`` event as recorded (nested ``error`` object; the spec's flat form also exists, E11)."""
    error = {"type": "server_error", "code": "server_error", "message": _SERVER_ERROR, "param": None}
    return sse(dumps_compact({"type": "error", "sequence_number": position, "error": error}), "error")


def stream_error_tail(ctx: WireContext, *, position: int = 0) -> list[bytes]:
    """``response.failed`` follows the error event (recorded)."""
    payload = {
        "type": "response.failed",
        "sequence_number": position + 1,
        "response": _response(ctx, "failed", [], None, None),
    }
    return [sse(dumps_compact(payload), "response.failed")]


def malformed_event(ctx: WireContext, *, position: int = 0) -> bytes:
    data = '{"type":"response.output_text.delta","content_index":0,"delta":"Hel'
    return sse(data, "response.output_text.delta")
