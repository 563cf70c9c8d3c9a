"""Input items of the OpenAI Responses wire <-> unified messages. Private helper of
``conformance.adapters.openai_responses`` (the request side: the ``input`` list).

Sources: wire-formats.md §2b (openai-python ``types/responses``: ``EasyInputMessageParam``,
``ResponseOutputMessageParam``, ``ResponseFunctionToolCallParam``, ``ResponseReasoningItemParam``,
``ResponseInputImageParam`` (``detail`` required in messages), ``ResponseFunctionCallOutputItemListParam``
(``input_text`` / ``input_image`` / ``input_file`` parts)).

Grouping: a run of assistant-side items (assistant ``message``, ``reasoning``, ``function_call``) is
one unified assistant message and a run of ``function_call_output`` items one tool message; each
user, system or developer message item is its own message (system/developer keep their role in
``provider_details["role"]``). What unified parts cannot hold rides in ``provider_details`` so a
body comes back as it was:

- assistant ``Text``: ``item`` (the message item's other keys; its presence starts a new item),
  ``content_string`` (the content was a string), ``empty`` (the content was ``[]``), ``part`` (the
  content part's other keys: ``annotations``, or ``type: "refusal"``); fresh text goes out in the
  "easy" form ``{"role": "assistant", "content": "..."}``;
- ``ToolCall``: ``item_id`` (the ``fc_`` id, E12) and ``extra`` (``status`` ...);
- ``Reasoning``: ``item`` (the reasoning item, replayed verbatim; ``signature`` = ``encrypted_content``, or
  ``redacted`` = ``encrypted_content`` when the item has no readable text; ``source`` = ``openai_responses``).
  Reasoning another provider produced is left out and said in the request's notes (``base.reasoning_note``);
  one of ours without its item has no id to replay and is left out too (``ResponseReasoningItemParam.id`` is
  required). A reasoning item goes out only right before the item it preceded (a call or an assistant
  message): sent without its following item the API answers 400 "Item rs_* of type reasoning was provided
  without its required following item" (coder/mux#59, issue 28 wire facts §3c), so reasoning that ends an
  assistant turn is left out, with a note;
- user messages and ``ToolResult``: ``extra`` (other keys) and ``parts`` (each content part's other
  keys, e.g. ``detail``; present when the content was a list).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.adapters.base import NameMap, dumps_compact, parse_arguments, reasoning_note, synthetic_call_id
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    ContentItem,
    Image,
    JSONObject,
    Message,
    Part,
    Reasoning,
    Resource,
    Role,
    Text,
    ToolCall,
    ToolResult,
)

__all__ = [
    "ERROR_PREFIX",
    "SOURCE",
    "items_from_message",
    "messages_from_items",
    "reasoning_signature",
    "reasoning_text",
    "without",
]

SOURCE = "openai_responses"
"""``Reasoning.source`` of the reasoning this wire produces."""

ERROR_PREFIX = "Error: "
"""Responses has no is_error flag (§2b); a failed tool's first text carries this prefix on the wire."""


def without(raw: Mapping[str, Any], *keys: str) -> JSONObject:
    """``raw`` without ``keys``: the fields a unified value does not hold."""
    return {k: v for k, v in raw.items() if k not in keys}


def reasoning_text(item: Mapping[str, Any], where: str = "the reasoning item") -> str:
    """The readable text of a reasoning item: its summaries, then any reasoning text, one blank line apart.

    ``summary`` and ``content`` are lists of ``{"type", "text"}`` parts (openai-python
    ``ResponseReasoningItem``); any other shape raises ``WireFormatError`` naming ``where``."""
    texts: list[str] = []
    for key in ("summary", "content"):
        parts = item.get(key)
        if parts is None:
            continue
        if not isinstance(parts, list):
            raise WireFormatError(f"{where}: {key} is a {type(parts).__name__}, not a list of text parts")
        for n, part in enumerate(parts):
            text = part.get("text") if isinstance(part, Mapping) else None
            if not isinstance(part, Mapping) or (text is not None and not isinstance(text, str)):
                raise WireFormatError(f"{where}: {key}[{n}] is not a text part: {part!r:.80}")
            if text:
                texts.append(text)
    return "\n\n".join(texts)


def reasoning_signature(item: Mapping[str, Any], where: str = "the reasoning item") -> str | None:
    """A reasoning item's ``encrypted_content`` (None when absent or null); any other type raises
    ``WireFormatError`` naming ``where`` (openai-python ``ResponseReasoningItem.encrypted_content:
    Optional[str]``)."""
    signature = item.get("encrypted_content")
    if signature is not None and not isinstance(signature, str):
        raise WireFormatError(f"{where}: encrypted_content is a {type(signature).__name__}, not a string")
    return signature


# --------------------------------------------------------------------------------------------
# Messages -> items
# --------------------------------------------------------------------------------------------


def items_from_message(message: Message, names: NameMap, notes: list[str] | None = None) -> list[JSONObject]:
    """One unified message -> its ``input`` items; what is left out (reasoning, module docstring) is said
    in ``notes`` when given."""
    details = message.provider_details
    if message.role == "tool":
        out: list[JSONObject] = []
        for part in message.parts:
            if not isinstance(part, ToolResult):
                raise UnsupportedContentError(f"a tool message holds only tool results, not {part.kind}")
            item: JSONObject = {"type": "function_call_output", "call_id": part.call_id, "output": _output(part)}
            out.append({**item, **part.provider_details.get("extra", {})})
        return out
    if message.role == "user":
        content: Any
        texts = [p for p in message.parts if isinstance(p, Text)]
        if len(texts) == len(message.parts) == 1 and "parts" not in details:
            content = texts[0].text
        else:
            extras = details.get("parts")
            if extras is None or len(extras) != len(message.parts):
                extras = [{"detail": "auto"} if isinstance(p, Image) else {} for p in message.parts]
            content = [_input_part(p, x, "user messages") for p, x in zip(message.parts, extras, strict=True)]
        return [{"role": details.get("role", "user"), "content": content, **details.get("extra", {})}]
    return _assistant_items(message, names, [] if notes is None else notes)


def _assistant_items(message: Message, names: NameMap, notes: list[str]) -> list[JSONObject]:
    out: list[JSONObject] = []
    current: JSONObject | None = None  # the message item that following text parts join
    reasoning: list[JSONObject] = []  # reasoning items waiting for the item they precede

    def emit(item: JSONObject) -> None:
        out.extend(reasoning)
        reasoning.clear()
        out.append(item)

    for part in message.parts:
        if isinstance(part, Text):
            pd = part.provider_details
            if "item" in pd:  # the start of a message item as received
                content: Any = (
                    part.text if pd.get("content_string") else [] if pd.get("empty") else [_output_part(part)]
                )
                current = {"role": "assistant", "content": content, **pd["item"]}
                emit(current)
            elif not part.text:
                continue
            elif current is None:
                current = {"role": "assistant", "content": part.text}
                emit(current)
            elif isinstance(current["content"], str):
                current["content"] += part.text
            else:
                current["content"].append(_output_part(part))
            continue
        current = None
        if isinstance(part, ToolCall):
            pd = part.provider_details
            call: JSONObject = {
                "type": "function_call",
                "call_id": part.id,
                "name": names.wire(part.name),
                "arguments": _arguments_text(part),
            }
            if pd.get("item_id"):
                call["id"] = pd["item_id"]
            emit({**call, **pd.get("extra", {})})
        elif isinstance(part, Reasoning):
            if (note := reasoning_note(part, SOURCE)) is not None:
                notes.append(note)
            elif not isinstance(part.provider_details.get("item"), Mapping):
                notes.append(f"reasoning without its {SOURCE} reasoning item left out: it has no item id to replay")
            else:
                item = dict(part.provider_details["item"])
                payload = part.signature if part.signature is not None else part.redacted
                if payload is not None:
                    item["encrypted_content"] = payload
                reasoning.append(item)
        else:
            raise UnsupportedContentError(f"OpenAI Responses assistant turns cannot carry {part.kind} parts")
    if reasoning:
        ids = ", ".join(str(item.get("id", "?")) for item in reasoning)
        notes.append(
            f"reasoning item(s) {ids} left out: nothing follows them in the assistant turn "
            "(OpenAI answers 400 to a reasoning item without its required following item)"
        )
    return out


def _output_part(text: Text) -> JSONObject:
    part = dict(text.provider_details.get("part") or {"type": "output_text", "annotations": []})
    part["refusal" if part.get("type") == "refusal" else "text"] = text.text
    return part


def _arguments_text(call: ToolCall) -> str:
    # replay what the model sent, byte for byte, when we have it
    if call.arguments_raw:
        return call.arguments_raw
    return dumps_compact(call.arguments if call.arguments is not None else {})


def _input_part(item: ContentItem | Part, extra: Mapping[str, Any], where: str) -> JSONObject:
    if isinstance(item, Text):
        return {"type": "input_text", "text": item.text, **extra}
    if isinstance(item, Resource) and item.text is not None:  # MCP embedded text resource
        return {"type": "input_text", "text": item.text, **extra}
    if isinstance(item, Image) and (item.url or item.data):
        url = item.url or f"data:{item.media_type};base64,{item.data}"
        return {"type": "input_image", "image_url": url, **extra}
    raise UnsupportedContentError(f"OpenAI Responses {where} cannot carry {item.kind} content")


def _output(result: ToolResult) -> str | list[JSONObject]:
    """``function_call_output.output``: a string, or input_text/input_image parts (§2b)."""
    extras = result.provider_details.get("parts")
    if extras is None and all(isinstance(c, Text | Resource) for c in result.content):
        text = "".join(_input_part(c, {}, "tool results")["text"] for c in result.content)
        return ERROR_PREFIX + text if result.is_error and not text.startswith(ERROR_PREFIX) else text
    if extras is None or len(extras) != len(result.content):
        extras = [{}] * len(result.content)
    parts = [_input_part(c, x, "tool results") for c, x in zip(result.content, extras, strict=True)]
    if result.is_error:
        if parts and parts[0]["type"] == "input_text":
            if not parts[0]["text"].startswith(ERROR_PREFIX):
                parts[0] = {**parts[0], "text": ERROR_PREFIX + parts[0]["text"]}
        else:
            parts.insert(0, {"type": "input_text", "text": ERROR_PREFIX})
    return parts


# --------------------------------------------------------------------------------------------
# Items -> messages
# --------------------------------------------------------------------------------------------


def messages_from_items(items: Iterable[Mapping[str, Any]], names: NameMap) -> list[Message]:
    """``input`` items -> unified messages (grouped as the module docstring says)."""
    messages: list[Message] = []
    run: list[Part] = []
    run_role: Role = "assistant"
    for index, item in enumerate(items):
        kind = item.get("type", "message")  # "easy" input messages have no type
        role: Role = "assistant"
        parts: list[Part]
        if kind == "function_call_output":
            role, parts = "tool", [_result_from_item(item, index)]
        elif kind == "function_call":
            parts = [_call_from_item(item, index, names)]
        elif kind == "reasoning":
            parts = [_reasoning_from_item(item, index)]
        elif kind == "message" and item.get("role") == "assistant":
            parts = _assistant_texts(item)
        elif kind == "message":
            role, parts = "user", []
        elif kind == "item_reference":  # openai_responses.resolve_item_references found no such item
            raise UnsupportedContentError(
                f"input[{index}]: item_reference {item.get('id')!r} names no item an earlier answer gave "
                '(OpenAI answers invalid_request_error "Item with id ... not found")'
            )
        else:
            raise UnsupportedContentError(f"input[{index}]: item type {kind!r} has no unified form")
        if run and (role != run_role or role == "user"):
            messages.append(Message(role=run_role, parts=tuple(run)))
            run = []
        if role == "user":
            messages.append(_user_from_item(item, index))
            continue
        run_role = role
        run.extend(parts)
    if run:
        messages.append(Message(role=run_role, parts=tuple(run)))
    return messages


def _user_from_item(item: Mapping[str, Any], index: int) -> Message:
    role = item.get("role")
    if role not in ("user", "system", "developer"):
        raise WireFormatError(f"input[{index}]: unknown role {role!r}")
    details: JSONObject = {}
    extra = without(item, "role", "content")
    if extra:
        details["extra"] = extra
    if role != "user":
        details["role"] = role
    content = item.get("content")
    if isinstance(content, str):
        return Message(role="user", parts=(Text(text=content),), provider_details=details)
    parsed = [_content_from_wire(p, f"input[{index}]") for p in content or []]
    details["parts"] = [x for _, x in parsed]
    return Message(role="user", parts=tuple(c for c, _ in parsed), provider_details=details)


def _content_from_wire(part: Mapping[str, Any], where: str) -> tuple[Text | Image, JSONObject]:
    kind = part.get("type")
    if kind in ("input_text", "output_text"):
        return Text(text=str(part.get("text", ""))), without(part, "type", "text")
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        url = part["image_url"]
        extra = without(part, "type", "image_url")
        if url.startswith("data:") and ";base64," in url:
            head, data = url[5:].split(";base64,", 1)
            return Image(media_type=head, data=data), extra
        return Image(url=url), extra
    raise UnsupportedContentError(f"{where}: content part {kind!r} has no unified form (input_image by file_id?)")


def _assistant_texts(item: Mapping[str, Any]) -> list[Part]:
    head: JSONObject = {"item": without(item, "role", "content")}
    content = item.get("content")
    if isinstance(content, str):
        return [Text(text=content, provider_details={**head, "content_string": True})]
    if not content:
        return [Text(text="", provider_details={**head, "empty": True})]
    texts: list[Part] = []
    for position, p in enumerate(content):
        key = "refusal" if p.get("type") == "refusal" else "text"
        pd: JSONObject = {"part": without(p, key), **(head if position == 0 else {})}
        texts.append(Text(text=str(p.get(key, "")), provider_details=pd))
    return texts


def _call_from_item(item: Mapping[str, Any], index: int, names: NameMap) -> ToolCall:
    arguments = item.get("arguments")
    raw = arguments if isinstance(arguments, str) else dumps_compact(arguments) if arguments is not None else ""
    parsed, error = parse_arguments(raw)
    details: JSONObject = {"item_id": item["id"]} if item.get("id") else {}
    extra = without(item, "type", "call_id", "name", "arguments", "id")
    if extra:
        details["extra"] = extra
    return ToolCall(
        id=str(item.get("call_id") or synthetic_call_id("openai_responses", "history", index)),
        name=names.original(str(item.get("name", ""))),
        arguments=parsed,
        arguments_raw=raw,
        arguments_error=error,
        provider_details=details,
    )


def _reasoning_from_item(item: Mapping[str, Any], index: int) -> Reasoning:
    where = f"input[{index}]"
    text = reasoning_text(item, where)
    signature = reasoning_signature(item, where)
    details = {"item": dict(item)}
    if signature is not None and not text:  # only the payload: redacted, as the response side decodes it
        return Reasoning(redacted=signature, source=SOURCE, provider_details=details)
    return Reasoning(text=text, signature=signature, source=SOURCE, provider_details=details)


def _result_from_item(item: Mapping[str, Any], index: int) -> ToolResult:
    output = item.get("output")
    details: JSONObject = {}
    extra = without(item, "type", "call_id", "output")
    if extra:
        details["extra"] = extra
    content: list[ContentItem]
    if isinstance(output, list):
        parsed = [_content_from_wire(p, f"input[{index}].output") for p in output]
        content, details["parts"] = [c for c, _ in parsed], [x for _, x in parsed]
    else:
        content = [Text(text="" if output is None else str(output))]
    first = content[0] if content else None
    is_error = isinstance(first, Text) and first.text.startswith(ERROR_PREFIX)
    if isinstance(first, Text) and is_error:
        rest = first.text[len(ERROR_PREFIX) :]
        if rest or len(content) == 1:
            content[0] = Text(text=rest)
        else:  # the prefix alone, added in front of non-text parts
            del content[0]
            details["parts"] = details["parts"][1:]
    return ToolResult(
        call_id=str(item.get("call_id", "")), content=tuple(content), is_error=is_error, provider_details=details
    )
