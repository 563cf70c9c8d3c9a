"""The ``messages`` list of the Anthropic Messages wire format to and from unified messages, and
a request's tools, system text and tool choice. Private helper of ``conformance.adapters.anthropic``
(see its docstring for sources, quirks and the documented normalisations).

Tool results: a unified ``role="tool"`` message becomes a *user* message whose tool_result blocks
come first, all results of a turn in one message, and a unified user message right after them
joins that message behind the results (E17); the reverse splits such a user message into a tool
message and a user message. Call ids are made valid with ``wire_id`` (E13).

Reasoning (thinking / redacted_thinking blocks) goes back in its place among the assistant's blocks,
byte for byte (``ThinkingBlockParam``: "passed back unmodified and in their original order"); a part
another wire produced (``Reasoning.source``), or one with no signature (``ThinkingBlockParam.signature``
is required: Anthropic verifies it), is left out and the reason added to the caller's ``notes``. Read
back, a block becomes a part with ``source="anthropic"``. ``cache_control`` markers (Anthropic
``CacheControlEphemeralParam``) on text, tool_result and tool blocks map to the unified
``cache_control`` fields; thinking blocks cannot carry one (absent from ``ThinkingBlockParam``).

Every wire field the unified model does not cover is kept in ``provider_details`` so that a wire body
round-trips: per message ``extra``, ``content_str`` (an assistant string), ``content_list`` (a user
list), ``own_message`` (a separate wire message after results) and ``block_extra`` (``{position:
fields}`` of blocks whose part has no ``provider_details``, i.e. images); per part ``extra``; per
result ``content_list``, ``is_error_key`` (an explicit ``false``), ``block_extra``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.adapters.base import NameMap, dumps_compact, reasoning_note
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    ContentItem,
    Image,
    JSONObject,
    Message,
    Part,
    Reasoning,
    Request,
    Resource,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)

__all__ = [
    "SYSTEM_JOIN",
    "UNSIGNED_NOTE",
    "WIRE",
    "messages_from_wire",
    "messages_to_wire",
    "system_text",
    "tool_choice_to_wire",
    "tool_from_wire",
    "wire_id",
]

WIRE = "anthropic"
"""The wire this module speaks: the ``source`` of the reasoning it reads, the only one it replays."""

SYSTEM_JOIN = "\n\n"
"""How a system prompt given as text blocks reads as one text."""

_ID_RULE = re.compile(r"[a-zA-Z0-9_-]+")  # §3b, E13
_ID_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def wire_id(call_id: str) -> str:
    """A call id valid on this wire: unchanged when valid, else a deterministic rewrite (E13)."""
    if _ID_RULE.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_ID_INVALID.sub('_', call_id)}_{digest}"


UNSIGNED_NOTE = (
    "reasoning without an Anthropic signature left out: a thinking block needs the signature Anthropic made"
    " (ThinkingBlockParam.signature is required and verified)"
)
"""The note for a reasoning part Anthropic cannot take back (no signature, not redacted)."""


def messages_to_wire(messages: Sequence[Message], names: NameMap, notes: list[str] | None = None) -> list[JSONObject]:
    """Unified messages -> wire ``messages`` (tool messages become user messages, results first).

    ``notes`` receives one line per reasoning part left out (another wire's, or unsigned)."""
    notes = [] if notes is None else notes
    out: list[JSONObject] = []
    results_open = False  # the last wire message holds tool results only: more may join it
    for message in messages:
        extra = message.provider_details.get("extra", {})
        if message.role == "tool":
            blocks = [_result_to_wire(p) for p in message.parts]
            if results_open and not message.provider_details.get("own_message"):
                out[-1]["content"].extend(blocks)  # E17: all results of a turn in one message
            else:
                out.append({"role": "user", "content": blocks, **extra})
            results_open = True
        elif message.role == "user":
            if results_open and not message.provider_details.get("own_message"):
                out[-1]["content"].extend(_blocks_to_wire(message, notes))  # behind the results (E17)
            else:
                out.append({"role": "user", "content": _content_to_wire(message, notes), **extra})
            results_open = False
        else:
            out.append({"role": "assistant", "content": _content_to_wire(message, notes, names), **extra})
            results_open = False
    return out


def _content_to_wire(message: Message, notes: list[str], names: NameMap | None = None) -> str | list[JSONObject]:
    parts = message.parts
    if (
        message.provider_details.get("content_str")
        and all(isinstance(p, Text) and p.cache_control is None for p in parts)
    ) or (
        message.role == "user"
        and len(parts) == 1
        and isinstance(parts[0], Text)
        and not parts[0].provider_details
        and parts[0].cache_control is None
        and not message.provider_details.get("content_list")
    ):
        return "".join(p.text for p in parts if isinstance(p, Text))
    return _blocks_to_wire(message, notes, names)


def _blocks_to_wire(message: Message, notes: list[str], names: NameMap | None = None) -> list[JSONObject]:
    block_extra = message.provider_details.get("block_extra", {})
    blocks: list[JSONObject] = []
    for position, part in enumerate(message.parts):
        if isinstance(part, Text | Image):
            blocks.append(_item_to_wire(part, block_extra.get(str(position))))
        elif message.role != "assistant" or names is None:
            raise UnsupportedContentError(f"a user message cannot carry {part.kind} parts on Anthropic")
        elif isinstance(part, ToolCall):
            blocks.append(_call_to_wire(part, names))
        elif isinstance(part, Reasoning):
            block = _reasoning_to_wire(part, notes)
            if block is not None:
                blocks.append(block)
        else:
            raise UnsupportedContentError(f"an assistant message cannot carry {part.kind} parts on Anthropic")
    return blocks


def _reasoning_to_wire(part: Reasoning, notes: list[str]) -> JSONObject | None:
    """A thinking / redacted_thinking block sent back as received (ANT-SDK ``thinking_block_param.py``:
    "Thinking blocks must be passed back unmodified and in their original order";
    ``redacted_thinking_block_param.py``: "pass it back unchanged"); None, with a note, when Anthropic
    cannot take it (another wire's reasoning: ``base.reasoning_note``; no signature: ``UNSIGNED_NOTE``)."""
    if (note := reasoning_note(part, WIRE)) is not None:
        notes.append(note)
        return None
    extra = part.provider_details.get("extra", {})
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted, **extra}
    if part.signature is None:
        notes.append(UNSIGNED_NOTE)
        return None
    return {"type": "thinking", "thinking": part.text, "signature": part.signature, **extra}


def _call_to_wire(call: ToolCall, names: NameMap) -> JSONObject:
    if call.arguments is None:
        raise UnsupportedContentError(
            f"tool call {call.id!r} has unusable arguments ({call.arguments_error}); Anthropic needs an"
            " input object: replace its arguments before replaying it"
        )
    block = {"type": "tool_use", "id": wire_id(call.id), "name": names.wire(call.name), "input": call.arguments}
    return {**block, **call.provider_details.get("extra", {})}


def _item_to_wire(item: Part | ContentItem, extra: Mapping[str, Any] | None = None) -> JSONObject:
    if isinstance(item, Text):
        return _with_marker({"type": "text", "text": item.text, **item.provider_details.get("extra", {})}, item)
    if isinstance(item, Image):
        source: JSONObject
        if item.url is not None:
            source = {"type": "url", "url": item.url}  # URLImageSourceParam
        else:
            source = {"type": "base64", "media_type": item.media_type, "data": item.data or ""}
        return {"type": "image", "source": source, **(extra or {})}
    if isinstance(item, Resource) and item.text is not None:  # an MCP embedded text resource
        return {"type": "text", "text": item.text}
    raise UnsupportedContentError(f"Anthropic cannot carry {item.kind} content here")


def _result_to_wire(part: Part) -> JSONObject:
    if not isinstance(part, ToolResult):
        raise UnsupportedContentError(f"a tool message holds only tool results, not {part.kind}")
    details = part.provider_details
    block: JSONObject = {"type": "tool_result", "tool_use_id": wire_id(part.call_id)}
    items = part.content
    block_extra = details.get("block_extra", {})
    if (
        details.get("content_list")
        or len(items) > 1
        or any(not isinstance(i, Text) or i.provider_details or i.cache_control is not None for i in items)
    ):
        block["content"] = [_item_to_wire(item, block_extra.get(str(i))) for i, item in enumerate(items)]
    elif items:
        block["content"] = items[0].text  # type: ignore[union-attr]
    if part.is_error or details.get("is_error_key"):
        block["is_error"] = part.is_error
    block.update(details.get("extra", {}))
    return _with_marker(block, part)


def _with_marker(block: JSONObject, item: Text | ToolResult | Tool) -> JSONObject:
    """The block with the caller's cache breakpoint (``CacheControlEphemeralParam``), when it has one."""
    if item.cache_control is not None:
        block["cache_control"] = dict(item.cache_control)
    return block


def _split_marker(fields: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, JSONObject]:
    """(the block's ``cache_control`` when it is an object, the other fields): a marker of another
    type stays with the other fields, so the body goes back as it came and the API judges it."""
    marker = fields.get("cache_control")
    if isinstance(marker, Mapping):
        return marker, {k: v for k, v in fields.items() if k != "cache_control"}
    return None, dict(fields)


def messages_from_wire(raw_messages: Sequence[Any], names: NameMap) -> list[Message]:
    """Wire ``messages`` -> unified messages (a user message with results splits in two)."""
    messages: list[Message] = []
    for index, raw in enumerate(raw_messages):
        messages.extend(_message_from_wire(raw, index, names, messages))
    return messages


def _message_from_wire(raw: Any, index: int, names: NameMap, previous: Sequence[Message]) -> list[Message]:
    if not isinstance(raw, Mapping) or raw.get("role") not in ("user", "assistant"):
        raise WireFormatError(f"messages[{index}]: not a user or assistant message: {raw!r:.80}")
    role = raw["role"]
    content = raw.get("content")
    extra = {k: v for k, v in raw.items() if k not in ("role", "content")}
    details: JSONObject = {"extra": extra} if extra else {}
    if role == "user" and previous and previous[-1].role == "tool":
        details["own_message"] = True  # a separate wire message after results stays separate
    if isinstance(content, str):
        if role == "assistant":
            details["content_str"] = True
        return [Message(role=role, parts=(Text(text=content),), provider_details=details)]
    if not isinstance(content, list):
        raise WireFormatError(f"messages[{index}].content must be a string or a list of blocks")
    results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    blocks = [
        (at, b) for at, b in enumerate(content) if not (isinstance(b, Mapping) and b.get("type") == "tool_result")
    ]
    out: list[Message] = []
    if results and role == "user":
        out.append(Message(role="tool", parts=tuple(_result_from_wire(b) for b in results), provider_details=details))
        details = {}
        if not blocks:
            return out
    parts: list[Part] = []
    block_extra: JSONObject = {}
    for position, (at, block) in enumerate(blocks):
        part, part_extra = _block_from_wire(block, role, names, f"messages[{index}].content[{at}]")
        if part is not None:
            parts.append(part)
        if part_extra:
            block_extra[str(position)] = part_extra
    if block_extra:
        details["block_extra"] = block_extra
    if role == "user" and not (results and out) and _plain_text(parts):
        details["content_list"] = True  # one plain text block, not the string it would go as
    out.append(Message(role=role, parts=tuple(parts), provider_details=details))
    return out


def _plain_text(items: Sequence[Part | ContentItem]) -> bool:
    """One text with nothing but its text: the string form of a content (user message, tool result)."""
    return (
        len(items) == 1
        and isinstance(items[0], Text)
        and not items[0].provider_details
        and items[0].cache_control is None
    )


def _block_from_wire(block: Any, role: str, names: NameMap, where: str) -> tuple[Part | None, JSONObject]:
    """One content block -> (unified part, wire fields only a container can keep)."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    if kind == "text":
        marker, extra = _split_marker({k: v for k, v in block.items() if k not in ("type", "text")})
        details = {"extra": extra} if extra else {}
        return Text(text=str(block.get("text", "")), cache_control=marker, provider_details=details), {}
    if kind == "image":
        return _image_from_wire(block, where), {k: v for k, v in block.items() if k not in ("type", "source")}
    if role == "assistant" and kind in ("tool_use", "thinking", "redacted_thinking"):
        handled = {"tool_use": ("type", "id", "name", "input"), "thinking": ("type", "thinking", "signature")}
        extra = {k: v for k, v in block.items() if k not in handled.get(kind, ("type", "data"))}
        details = {"extra": extra} if extra else {}
        if kind == "thinking":
            text = _opaque(block, "thinking", where, "")
            signature = _opaque(block, "signature", where, None)
            return Reasoning(text=text or "", signature=signature, source=WIRE, provider_details=details), {}
        if kind == "redacted_thinking":
            data = _opaque(block, "data", where, "")
            return Reasoning(redacted=data, source=WIRE, provider_details=details), {}
        arguments = block.get("input")
        error = None if isinstance(arguments, dict) else "tool_use input is not an object"
        call = ToolCall(
            id=str(block.get("id", "")),
            name=names.original(str(block.get("name", ""))),
            arguments=arguments if error is None else None,
            arguments_raw=dumps_compact(arguments),
            arguments_error=error,
            provider_details=details,
        )
        return call, {}
    raise UnsupportedContentError(f"{where}: unsupported {role} content block {kind!r}")


def _opaque(block: Mapping[str, Any], key: str, where: str, default: str | None) -> str | None:
    """A thinking block's text, signature or data: a string (ANT-SDK ``thinking_block_param.py``,
    ``redacted_thinking_block_param.py``: ``Required[str]``); anything else is not the wire format."""
    value = block.get(key, default)
    if value is None or isinstance(value, str):
        return value
    raise WireFormatError(
        f"{where}: a {block.get('type')} block's {key} must be a string as Anthropic returned it,"
        f" not {type(value).__name__}: send the block back exactly as received"
    )


def _image_from_wire(block: Mapping[str, Any], where: str) -> Image:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return Image(media_type=str(source.get("media_type", "")), data=str(source.get("data", "")))
    if source.get("type") == "url":
        return Image(url=str(source.get("url", "")))
    raise UnsupportedContentError(f"{where}: unsupported image source {source.get('type')!r}")


def _result_from_wire(block: Mapping[str, Any]) -> ToolResult:
    marker, extra = _split_marker(
        {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content", "is_error")}
    )
    details: JSONObject = {"extra": extra} if extra else {}
    if "is_error" in block and not block["is_error"]:
        details["is_error_key"] = True  # an explicit ``false`` goes back out
    content = block.get("content")
    items: list[ContentItem] = []
    if isinstance(content, str):
        items.append(Text(text=content))
    elif isinstance(content, list):
        block_extra: JSONObject = {}
        for position, item in enumerate(content):
            part, part_extra = _block_from_wire(item, "tool_result", NameMap(), "tool_result.content")
            items.append(part)  # type: ignore[arg-type]  # text or image only
            if part_extra:
                block_extra[str(position)] = part_extra
        if block_extra:
            details["block_extra"] = block_extra
        if not items or _plain_text(items):
            details["content_list"] = True  # a list, not the string or absence it would go as
    return ToolResult(
        call_id=str(block.get("tool_use_id", "")),
        content=tuple(items),
        is_error=bool(block.get("is_error", False)),
        cache_control=marker,
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Tools, system text, tool choice
# --------------------------------------------------------------------------------------------


def tool_from_wire(item: Mapping[str, Any], names: NameMap) -> Tool:
    if not isinstance(item, Mapping):
        raise WireFormatError(f"a tool must be an object, not {item!r}")
    marker, extra = _split_marker({k: v for k, v in item.items() if k not in ("name", "description", "input_schema")})
    details: JSONObject = {"tool": extra} if extra else {}
    if "input_schema" not in item:
        details["no_input_schema"] = True
    return Tool(
        name=names.original(str(item.get("name", ""))),
        description=item.get("description"),
        input_schema=item.get("input_schema") or {},
        cache_control=marker,
        provider_details=details,
    )


def system_text(blocks: Sequence[Any]) -> str:
    return SYSTEM_JOIN.join(str(b.get("text", "")) for b in blocks if isinstance(b, Mapping))


def tool_choice_to_wire(request: Request, names: NameMap) -> JSONObject | None:
    choice, parallel = request.tool_choice, request.parallel_tool_calls
    if choice is None and parallel is None:
        return None
    if choice is None or choice == "auto":
        wire: JSONObject = {"type": "auto"}
    elif choice == "required":
        wire = {"type": "any"}
    elif choice == "none":
        return {"type": "none", **request.provider_details.get("tool_choice_extra", {})}
    else:
        wire = {"type": "tool", "name": names.wire(choice)}
    if parallel is not None:
        wire["disable_parallel_tool_use"] = not parallel
    wire.update(request.provider_details.get("tool_choice_extra", {}))
    return wire
