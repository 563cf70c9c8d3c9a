"""The ``messages`` list of the Ollama native chat wire format to and from unified messages.
Private helper of ``conformance.adapters.ollama`` (see its docstring for sources, quirks and the
documented normalisations). The message history is its own concern: the adapter module holds the
wire's tables, tools, request envelope, responses, streams and errors.

Calls carry their arguments as JSON objects and optional ids (a missing one becomes a synthetic id
that never goes back on the wire); results pair with calls by ``tool_call_id``, then ``tool_name``,
then order; ``is_error`` travels as an ``Error: `` prefix on the result's text.

Reasoning is the assistant message's ``thinking`` text (ollama-python ``_types.py`` ``Message.thinking``),
read back with ``source="ollama"`` and sent back on the assistant message, as the official tool examples
do (``examples/gpt-oss-tools-stream.py``: ``{'role': 'assistant', 'thinking': ..., 'content': ...,
'tool_calls': ...}``; issue 28 wire facts §5c). Reasoning another provider produced is left out and said
in the request's notes (``base.reasoning_note``); a caller's own (no ``source``) goes as text (a
signature it carries is left out, with a note: no field), but redacted reasoning has no field here
(``UnsupportedContentError``). A ``thinking`` that is not a string
is a ``WireFormatError`` naming the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.base import (
    NameMap,
    dumps_compact,
    parse_arguments,
    reasoning_note,
    result_texts,
    synthetic_call_id,
)
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import Image, JSONObject, Message, Part, Reasoning, Text, ToolCall, ToolResult

__all__ = ["ERROR_PREFIX", "SOURCE", "message_from_wire", "message_to_wire", "result_from_wire", "wire_call"]

SOURCE = "ollama"
"""``Reasoning.source`` of the reasoning this wire produces."""

ERROR_PREFIX = "Error: "
"""Ollama has no is_error flag (§5b); a failed tool's text carries this prefix on the wire."""


def message_to_wire(
    message: Message, names: NameMap, history: Mapping[str, ToolCall], notes: list[str] | None = None
) -> list[JSONObject]:
    """One unified message -> its wire messages; what is left out (another provider's reasoning) is
    said in ``notes`` when given."""
    details = message.provider_details
    if message.role == "tool":
        if bad := [p.kind for p in message.parts if not isinstance(p, ToolResult)]:
            raise UnsupportedContentError(f"a tool message holds only tool results, not {bad[0]}")
        return [_result_to_wire(p, names, history) for p in message.parts if isinstance(p, ToolResult)]
    wire: JSONObject = {"role": details.get("role", message.role)}
    text = "".join(p.text for p in message.parts if isinstance(p, Text))
    if text or not details.get("no_content_key"):
        wire["content"] = text
    images: list[str] = []
    thinking: list[str] = []
    calls: list[JSONObject] = []
    assistant = message.role == "assistant"
    for part in message.parts:
        if isinstance(part, Text):
            continue
        if isinstance(part, Image) and not assistant:
            if part.data is None:  # api.Message.Images: base64 only
                raise UnsupportedContentError("Ollama takes base64 images only, not image URLs")
            images.append(part.data)
        elif isinstance(part, Reasoning) and assistant:
            if (note := reasoning_note(part, SOURCE)) is not None:
                if notes is not None:
                    notes.append(note)
                continue
            if part.redacted is not None:
                raise UnsupportedContentError("Ollama cannot replay redacted reasoning (only thinking text)")
            thinking.append(part.text)
            if part.signature is not None and notes is not None:  # no field for it (documented): say so
                notes.append("a reasoning signature left out: Ollama's thinking carries text only")
        elif isinstance(part, ToolCall) and assistant:
            calls.append(_call_to_wire(part, names))
        else:
            raise UnsupportedContentError(f"Ollama {message.role} messages cannot carry {part.kind} parts")
    if images:
        wire["images"] = images
    if thinking:
        wire["thinking"] = "".join(thinking)
    if calls:
        wire["tool_calls"] = calls
    return [{**wire, **details.get("extra", {})}]


def _call_to_wire(call: ToolCall, names: NameMap) -> JSONObject:
    arguments = call.arguments
    if arguments is None:
        arguments, why = parse_arguments(call.arguments_raw)
        if arguments is None:  # api.ToolCallFunctionArguments must be an object
            raise UnsupportedContentError(f"call {call.id!r} has unusable arguments ({why}); Ollama needs an object")
    details = call.provider_details
    function: JSONObject = {"name": names.wire(call.name), "arguments": arguments, **details.get("function", {})}
    wire: JSONObject = {} if details.get("synthetic_id") else {"id": call.id}
    wire["function"] = function
    wire.update(details.get("extra", {}))
    return wire


def _result_to_wire(result: ToolResult, names: NameMap, history: Mapping[str, ToolCall]) -> JSONObject:
    # images on a tool message are template-dependent (UNVERIFIED, §5b): not sent
    text = "".join(result_texts(result, "Ollama tool results cannot carry {kind} content"))
    if result.is_error and not text.startswith(ERROR_PREFIX):
        text = ERROR_PREFIX + text
    details = result.provider_details
    wire: JSONObject = {"role": "tool", "content": text}
    call = history.get(result.call_id)
    name = result.name or (call.name if call is not None else None)
    if name and not details.get("no_tool_name"):
        wire["tool_name"] = names.wire(name)
    synthetic = call is not None and bool(call.provider_details.get("synthetic_id"))
    if not synthetic and not details.get("no_tool_call_id"):
        wire["tool_call_id"] = result.call_id
    wire.update(details.get("extra", {}))
    return wire


def result_from_wire(raw: Mapping[str, Any], index: int, names: NameMap, pending: list[ToolCall]) -> ToolResult:
    """A ``role: tool`` message: paired by ``tool_call_id``, else by ``tool_name``, else by order (§5b)."""
    details: JSONObject = {}
    extra = {k: v for k, v in raw.items() if k not in ("role", "content", "tool_name", "tool_call_id")}
    if extra:
        details["extra"] = extra  # incl. images: not sent back as content (see module docstring)
    wire_id, wire_name = raw.get("tool_call_id"), raw.get("tool_name")
    if wire_id is None:
        details["no_tool_call_id"] = True
    if wire_name is None:
        details["no_tool_name"] = True
    name = names.original(str(wire_name)) if wire_name is not None else None
    match = next((c for c in pending if c.id == wire_id), None) if wire_id is not None else None
    if match is None and wire_id is None:
        match = next((c for c in pending if name is None or c.name == name), None)
    if match is not None:
        pending.remove(match)
    call_id = str(wire_id) if wire_id is not None else match.id if match else synthetic_call_id("ollama", index)
    text = str(raw.get("content") or "")
    is_error = text.startswith(ERROR_PREFIX)
    if is_error:
        text = text[len(ERROR_PREFIX) :]
    return ToolResult(
        call_id=call_id,
        content=(Text(text=text),),
        is_error=is_error,
        name=name or (match.name if match else None),
        provider_details=details,
    )


def message_from_wire(raw: Mapping[str, Any], index: int, names: NameMap) -> Message:
    role = str(raw.get("role", ""))
    content = raw.get("content")
    if content is not None and not isinstance(content, str):
        raise WireFormatError(f"messages[{index}]: Ollama message content is a string, not {type(content).__name__}")
    details: JSONObject = {}
    if "content" not in raw:
        details["no_content_key"] = True
    parts: list[Part] = []
    if role == "assistant":
        handled: tuple[str, ...] = ("role", "content", "thinking", "tool_calls")
        thinking = raw.get("thinking")
        if thinking is not None and not isinstance(thinking, str):
            raise WireFormatError(f"messages[{index}]: Ollama thinking is a string, not {type(thinking).__name__}")
        if thinking is not None:
            parts.append(Reasoning(text=thinking, source=SOURCE))
        if content:
            parts.append(Text(text=content))
        for position, call in enumerate(raw.get("tool_calls") or []):
            parts.append(_call_from_wire(call, index, position, names))
    else:
        handled = ("role", "content", "images")
        if role != "user":
            details["role"] = role  # "system" later in the conversation, or a template's own role
        if content or "images" not in raw:
            parts.append(Text(text=content or ""))
        parts.extend(Image(data=str(data)) for data in raw.get("images") or [])
    extra = {k: v for k, v in raw.items() if k not in handled}
    if extra:
        details["extra"] = extra
    return Message(role="assistant" if role == "assistant" else "user", parts=tuple(parts), provider_details=details)


def _call_from_wire(call: Mapping[str, Any], index: int, position: int, names: NameMap) -> ToolCall:
    call_id, name, raw, parsed, error, details = wire_call(call)
    if call_id is None:
        call_id = synthetic_call_id("ollama", "history", index, position)
        details["synthetic_id"] = True
    return ToolCall(
        id=call_id,
        name=names.original(name),
        arguments=parsed,
        arguments_raw=raw,
        arguments_error=error,
        provider_details=details,
    )


def wire_call(call: Mapping[str, Any]) -> tuple[str | None, str, str, JSONObject | None, str | None, JSONObject]:
    """One ``tool_calls`` item -> (id or None, wire name, raw arguments, parsed, error, details); keys
    the model does not cover (``function.index``, ``type``) ride in the details for a faithful replay."""
    function = call.get("function") or {}
    raw, parsed, error = _arguments(function.get("arguments"))
    details: JSONObject = {}
    extra_fn = {k: v for k, v in function.items() if k not in ("name", "arguments")}
    extra_call = {k: v for k, v in call.items() if k not in ("id", "function")}
    if extra_fn:
        details["function"] = extra_fn
    if extra_call:
        details["extra"] = extra_call
    call_id = call.get("id")
    return str(call_id) if call_id else None, str(function.get("name") or ""), raw, parsed, error, details


def _arguments(value: Any) -> tuple[str, JSONObject | None, str | None]:
    """Wire arguments -> (raw text, parsed object, error). Objects are the norm (§5c); a string is
    parsed as JSON text; absent means no arguments (E3)."""
    if value is None:
        return "", {}, None
    if isinstance(value, str):
        parsed, error = parse_arguments(value)
        return value, parsed, error
    raw = dumps_compact(value)
    if isinstance(value, dict):
        return raw, value, None
    return raw, None, f"arguments are a JSON {type(value).__name__}, not an object"
