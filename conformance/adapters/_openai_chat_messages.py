"""The ``messages`` list of the OpenAI Chat Completions wire format to and from unified messages.
Private helper of ``conformance.adapters.openai_chat`` (see its docstring for sources, quirks and the
documented normalisations). The message history is its own concern: the adapter module holds the
wire's tables, tools, request envelope, responses, streams and errors.

Tool results carry no error flag on this wire: ``is_error`` travels as an ``Error: `` prefix on the
text and is read back from it. Legacy ``function_call`` messages and ``role: "function"`` results
(E35) round-trip; an assistant call without an id gets a synthetic one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.base import NameMap, dumps_compact, parse_arguments, result_texts, synthetic_call_id
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import Image, JSONObject, Message, Part, Text, ToolCall, ToolResult

__all__ = ["ERROR_PREFIX", "arguments_text", "message_from_wire", "message_to_wire"]

ERROR_PREFIX = "Error: "
"""Chat has no is_error flag (§1b); a failed tool's text carries this prefix on the wire."""


def message_to_wire(message: Message, names: NameMap) -> list[JSONObject]:
    extra = dict(message.provider_details.get("extra", {}))
    if message.role == "tool":
        out: list[JSONObject] = []
        for part in message.parts:
            if not isinstance(part, ToolResult):
                raise UnsupportedContentError(f"a tool message holds only tool results, not {part.kind}")
            if part.provider_details.get("role") == "function":  # E35: legacy result, keyed by name
                head: JSONObject = {"role": "function", "name": names.wire(part.name or "")}
            else:
                head = {"role": "tool", "tool_call_id": part.call_id}
            out.append({**head, "content": _result_content(part), **part.provider_details.get("extra", {})})
        return out
    if message.role == "user":
        role = message.provider_details.get("role", "user")
        texts = [p for p in message.parts if isinstance(p, Text)]
        content: Any
        if len(texts) == len(message.parts) == 1 and not message.provider_details.get("content_list"):
            content = texts[0].text
        else:
            content = [_user_part(p) for p in message.parts]
        return [{"role": role, "content": content, **extra}]
    if any(isinstance(p, (Image, ToolResult)) for p in message.parts):
        raise UnsupportedContentError("OpenAI Chat assistant messages carry only text and tool calls")
    text = "".join(p.text for p in message.parts if isinstance(p, Text))
    calls = [p for p in message.parts if isinstance(p, ToolCall)]
    wire: JSONObject = {"role": "assistant", "content": text if text or not calls else None}
    if message.provider_details.get("no_content_key") and not text:
        del wire["content"]
    if calls:
        if message.provider_details.get("legacy_function_call"):
            if len(calls) > 1:
                raise UnsupportedContentError("a legacy function_call message holds one call (E35)")
            wire["function_call"] = _function(calls[0], names)
        else:
            wire["tool_calls"] = [{"id": c.id, "type": "function", "function": _function(c, names)} for c in calls]
    wire.update(extra)
    return [wire]


def _function(call: ToolCall, names: NameMap) -> JSONObject:
    # replay the argument text the model sent, byte for byte, when we have it
    arguments = call.arguments_raw or dumps_compact(call.arguments if call.arguments is not None else {})
    return {"name": names.wire(call.name), "arguments": arguments}


def _user_part(part: Part) -> JSONObject:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Image):
        url = part.url or f"data:{part.media_type};base64,{part.data}"
        return {"type": "image_url", "image_url": {"url": url}}
    raise UnsupportedContentError(f"OpenAI Chat user messages cannot carry {part.kind} parts")


def _result_content(result: ToolResult) -> str | list[JSONObject]:
    texts = result_texts(result, "OpenAI Chat tool results cannot carry {kind} content")  # §1b: text parts only
    if result.is_error:  # always prefixed, so a text that already starts with it survives the trip
        texts[:1] = [ERROR_PREFIX + (texts[0] if texts else "")]
    if len(texts) > 1 or result.provider_details.get("content_list"):  # several items: text parts (§1b)
        return [{"type": "text", "text": t} for t in texts]
    return texts[0] if texts else ""


def message_from_wire(raw: Mapping[str, Any], index: int, names: NameMap, legacy_id: str) -> Message:
    role = raw.get("role")
    content = raw.get("content")
    if role in ("tool", "function"):
        key = "tool_call_id" if role == "tool" else "name"
        extra = {k: v for k, v in raw.items() if k not in ("role", key, "content")}
        result_details: JSONObject = {"extra": extra} if extra else {}
        if role == "function":
            result_details["role"] = "function"
        texts: list[str]
        if isinstance(content, list):
            if any(p.get("type") != "text" for p in content):
                raise UnsupportedContentError(f"messages[{index}]: a tool message takes text parts only")
            texts = [str(p.get("text", "")) for p in content]
            result_details["content_list"] = True
        else:
            texts = [str(content)] if content else []
        is_error = bool(texts) and texts[0].startswith(ERROR_PREFIX)
        if is_error:
            texts[0] = texts[0][len(ERROR_PREFIX) :]
            if texts == [""] and "content_list" not in result_details:
                texts = []  # "Error: " alone: an error result without content
        result = ToolResult(
            call_id=str(raw.get("tool_call_id", "")) if role == "tool" else legacy_id,
            content=tuple(Text(text=t) for t in texts),
            is_error=is_error,
            name=names.original(str(raw["name"])) if role == "function" and raw.get("name") else None,
            provider_details=result_details,
        )
        return Message(role="tool", parts=(result,))
    if role == "assistant":
        return _assistant_from_wire(raw, index, names)
    if role not in ("user", "system", "developer"):
        raise WireFormatError(f"messages[{index}]: unknown role {role!r}")
    extra = {k: v for k, v in raw.items() if k not in ("role", "content")}
    details: JSONObject = {"extra": extra} if extra else {}
    if role != "user":
        details["role"] = role
    if isinstance(content, str):
        return Message(role="user", parts=(Text(text=content),), provider_details=details)
    parts: list[Part] = []
    for p in content or []:
        if p.get("type") == "text":
            parts.append(Text(text=str(p.get("text", ""))))
        elif p.get("type") == "image_url":
            parts.append(_image_from_url(str((p.get("image_url") or {}).get("url", ""))))
        else:
            raise UnsupportedContentError(f"messages[{index}]: unsupported content part {p.get('type')!r}")
    details["content_list"] = True
    return Message(role="user", parts=tuple(parts), provider_details=details)


def _image_from_url(url: str) -> Image:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Image(media_type=head, data=data)
    return Image(url=url)


def _assistant_from_wire(raw: Mapping[str, Any], index: int, names: NameMap) -> Message:
    parts: list[Part] = []
    details: JSONObject = {}
    extra = {k: v for k, v in raw.items() if k not in ("role", "content", "tool_calls", "function_call")}
    content = raw.get("content")
    if isinstance(content, str) and content:
        parts.append(Text(text=content))
    elif "content" not in raw:
        details["no_content_key"] = True
    elif content is not None or not (raw.get("tool_calls") or raw.get("function_call")):
        extra["content"] = content  # "", content parts, or null without calls: kept as sent
    calls = list(raw.get("tool_calls") or [])
    if raw.get("function_call"):  # E35: legacy, one call without an id
        details["legacy_function_call"] = True
        calls.append({"function": raw["function_call"]})
    for position, call in enumerate(calls):
        function = call.get("function") or {}
        arguments = arguments_text(function.get("arguments"))
        parsed, error = parse_arguments(arguments)
        call_id = call.get("id") or synthetic_call_id("openai_chat", "history", index, position)
        name = names.original(str(function.get("name", "")))
        parts.append(ToolCall(id=call_id, name=name, arguments=parsed, arguments_raw=arguments, arguments_error=error))
    if extra:
        details["extra"] = extra
    return Message(role="assistant", parts=tuple(parts), provider_details=details)


def arguments_text(arguments: Any) -> str:
    """Argument text as sent; an object (some compatible servers) as compact JSON; absent -> ``""``."""
    if isinstance(arguments, str):
        return arguments
    return "" if arguments is None else dumps_compact(arguments)
