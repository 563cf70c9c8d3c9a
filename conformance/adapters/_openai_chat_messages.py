"""The ``messages`` list of the OpenAI Chat Completions wire format to and from unified messages.
Private helper of ``conformance.adapters.openai_chat`` (see its docstring for sources, quirks and the
documented normalisations). The message history is its own concern: the adapter module holds the
wire's tables, tools, request envelope, responses, streams and errors.

Tool results carry no error flag on this wire: ``is_error`` travels as an ``Error: `` prefix on the
text and is read back from it. Legacy ``function_call`` messages and ``role: "function"`` results
(E35) round-trip; an assistant call without an id gets a synthetic one.

Reasoning (the rule is stated in ``openai_chat``'s docstring): an assistant message's
``reasoning_content`` / ``reasoning`` / ``reasoning_details`` are one ``Reasoning`` part (first in
the message, ``source="openai_chat"``, ``provider_details`` naming the fields it came in), and such a
part goes back in those same fields (``reasoning_to_wire``); the stream's ``reasoning_details``
fragments are merged by ``merge_detail``.
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

__all__ = [
    "ERROR_PREFIX",
    "REASONING_FIELDS",
    "WIRE",
    "arguments_text",
    "check_details",
    "check_reasoning_text",
    "finish_details",
    "json_kind",
    "merge_detail",
    "message_from_wire",
    "message_to_wire",
    "reasoning_part",
    "reasoning_to_wire",
]

WIRE = "openai_chat"
"""The wire name a decoded ``Reasoning`` carries as its ``source``."""

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""The message fields that carry reasoning text, the first one primary when a server sends both:
``reasoning_content`` (DeepSeek, llama.cpp, vLLM before 0.11), ``reasoning`` (vLLM >= 0.11,
OpenRouter); mlx-vlm and vLLM's compatibility layer send both with the same text
(Blaizzy/mlx-vlm#1411, vllm-project/vllm#34030). issue28-wire-facts.md §4."""

ERROR_PREFIX = "Error: "
"""Chat has no is_error flag (§1b); a failed tool's text carries this prefix on the wire."""


def message_to_wire(message: Message, names: NameMap, notes: list[str] | None = None) -> list[JSONObject]:
    """One unified message as the wire messages it becomes (a tool message: one per result);
    what is left out of it (reasoning this wire cannot carry) is said in ``notes``."""
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
            for position, raw in message.provider_details.get("raw_parts", ()):  # in their places again
                content.insert(int(position), dict(raw))
        return [{"role": role, "content": content, **extra}]
    if any(isinstance(p, (Image, ToolResult)) for p in message.parts):
        raise UnsupportedContentError("OpenAI Chat assistant messages carry only text and tool calls")
    text = "".join(p.text for p in message.parts if isinstance(p, Text))
    calls = [p for p in message.parts if isinstance(p, ToolCall)]
    wire: JSONObject = {"role": "assistant", "content": text if text or not calls else None}
    if message.provider_details.get("no_content_key") and not text:
        del wire["content"]
    wire.update(reasoning_to_wire([p for p in message.parts if isinstance(p, Reasoning)], notes))
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
    raw_parts: list[list[Any]] = []
    for p in content or []:
        if p.get("type") == "text":
            parts.append(Text(text=str(p.get("text", ""))))
        elif p.get("type") == "image_url":
            parts.append(_image_from_url(str((p.get("image_url") or {}).get("url", ""))))
        elif p.get("type") in _USER_RAW_PARTS:  # §1b: audio and files, no unified part: kept verbatim
            raw_parts.append([len(parts) + len(raw_parts), p])
        else:
            raise UnsupportedContentError(f"messages[{index}]: unsupported content part {p.get('type')!r}")
    details["content_list"] = True
    if raw_parts:
        details["raw_parts"] = raw_parts
    return Message(role="user", parts=tuple(parts), provider_details=details)


_USER_RAW_PARTS = ("input_audio", "file")
"""User content parts OpenAI Chat takes that no unified part holds (wire-formats.md §1b; OAI-SDK
``chat_completion_content_part_input_audio_param.py``, ``chat_completion_content_part_param.py`` ``File``):
read and written back verbatim (``raw_parts``), as the Gemini reader keeps its other parts."""


def _image_from_url(url: str) -> Image:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Image(media_type=head, data=data)
    return Image(url=url)


def _assistant_from_wire(raw: Mapping[str, Any], index: int, names: NameMap) -> Message:
    parts: list[Part] = []
    details: JSONObject = {}
    reasoning = _reasoning_from_message(raw, f"messages[{index}]")
    if reasoning is not None:
        parts.append(reasoning)
    taken = ("role", "content", "tool_calls", "function_call")
    extra = {k: v for k, v in raw.items() if k not in taken and not (reasoning and _reasoning_key(k, v))}
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


# --------------------------------------------------------------------------------------------
# Reasoning
# --------------------------------------------------------------------------------------------


def json_kind(value: Any) -> str:
    """The JSON type of a parsed value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _reasoning_key(key: str, value: Any) -> bool:
    """A message key read into the ``Reasoning`` part (a null field stays where it was, as sent)."""
    return value is not None and (key in REASONING_FIELDS or key == "reasoning_details")


def check_reasoning_text(value: Any, where: str, key: str) -> str:
    """A ``reasoning_content`` / ``reasoning`` value as the text those servers send; anything else
    raises ``WireFormatError`` naming ``where.key``."""
    if not isinstance(value, str):
        raise WireFormatError(
            f"{where}.{key} is a JSON {json_kind(value)}, not a string: DeepSeek, vLLM, llama.cpp"
            " and OpenRouter send the reasoning as text"
        )
    return value


def check_details(value: Any, where: str) -> list[Any]:
    """``reasoning_details`` as the list OpenRouter sends (``ReasoningDetail`` objects with a string
    ``type``); anything else raises ``WireFormatError`` naming ``where``."""
    if not isinstance(value, list):
        raise WireFormatError(
            f"{where}.reasoning_details is a JSON {json_kind(value)}: OpenRouter sends a list of"
            " {type, ...} objects (reasoning.text, reasoning.summary, reasoning.encrypted)"
        )
    for position, item in enumerate(value):
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            raise WireFormatError(
                f"{where}.reasoning_details[{position}] is not an object with a string type"
                f" (a JSON {json_kind(item)}): each entry is a {{type, ...}} object"
            )
    return value


def _reasoning_from_message(raw: Mapping[str, Any], where: str) -> Reasoning | None:
    """The reasoning fields of a whole assistant message (request history or a ``chat.completion``
    body) as one ``Reasoning`` part; None without any. A field present with a string, even ``""``,
    counts: it goes back as it came. A field of another JSON type raises ``WireFormatError``."""
    texts: dict[str, str] = {}
    for key in REASONING_FIELDS:
        value = raw.get(key)
        if value is not None:
            texts[key] = check_reasoning_text(value, where, key)
    details = raw.get("reasoning_details")
    if details is not None:
        details = check_details(details, where)
    if not texts and details is None:
        return None
    return reasoning_part(texts, details)


def reasoning_part(texts: Mapping[str, str], details: list[Any] | None) -> Reasoning:
    """The ``Reasoning`` part of a message whose reasoning fields held ``texts`` (field -> text, in
    the order they came) and ``details`` (``reasoning_details``, kept verbatim).

    ``provider_details``: ``field`` (the first field), ``also`` (the other field's text, when a
    server sent both), ``reasoning_details``. The part's text is the first field's, else the text of
    the details' ``reasoning.text``/``reasoning.summary`` entries; ``signature`` the last
    ``reasoning.text`` signature; ``redacted`` the first ``reasoning.encrypted`` data when there is
    no text at all (OpenRouter's form of Anthropic ``redacted_thinking``)."""
    provider: JSONObject = {}
    text = ""
    if texts:
        field, text = next(iter(texts.items()))
        provider["field"] = field
        if len(texts) > 1:
            provider["also"] = {k: v for k, v in texts.items() if k != field}
    signature: str | None = None
    redacted: str | None = None
    if details is not None:
        provider["reasoning_details"] = details
        pieces: list[str] = []
        for item in details:
            if item.get("type") == "reasoning.text":
                pieces.append(item["text"] if isinstance(item.get("text"), str) else "")
                if isinstance(item.get("signature"), str):
                    signature = item["signature"]
            elif item.get("type") == "reasoning.summary" and isinstance(item.get("summary"), str):
                pieces.append(item["summary"])
        if not texts:
            text = "".join(pieces)
        if not text and not any(pieces):
            encrypted = [i.get("data") for i in details if i.get("type") == "reasoning.encrypted"]
            redacted = next((d for d in encrypted if isinstance(d, str)), None)
    return Reasoning(text=text, signature=signature, redacted=redacted, source=WIRE, provider_details=provider)


def reasoning_to_wire(parts: list[Reasoning], notes: list[str] | None) -> JSONObject:
    """The reasoning fields of an assistant message holding ``parts``.

    A part this wire produced goes back in the fields it came in (``provider_details`` ``field``,
    ``also``, ``reasoning_details``; several parts: texts joined, details lists concatenated, in
    order). Any other part is left out and said in ``notes``: another wire's (``reasoning_note``), or
    one naming no field: OpenAI's own Chat API has no reasoning field (openai-python
    ``ChatCompletionAssistantMessageParam``), so reasoning goes back only to a server that sent it."""
    fields: dict[str, list[str]] = {}
    details: list[Any] = []
    has_details = False
    for part in parts:
        note = reasoning_note(part, WIRE)
        provider = part.provider_details
        field = provider.get("field")
        also = provider.get("also")
        raw_details = provider.get("reasoning_details")
        if note is None and field not in REASONING_FIELDS and not isinstance(raw_details, list):
            note = (
                "reasoning left out: it names no Chat reasoning field (reasoning_content, reasoning or"
                " reasoning_details), and OpenAI's Chat API has none; it goes back only to a server that sent it"
            )
        if note is not None:
            if notes is not None and note not in notes:
                notes.append(note)
            continue
        if field in REASONING_FIELDS:
            fields.setdefault(str(field), []).append(part.text)
        if isinstance(also, Mapping):
            for key, value in also.items():
                if key in REASONING_FIELDS and isinstance(value, str):
                    fields.setdefault(key, []).append(value)
        if isinstance(raw_details, list):
            details.extend(raw_details)
            has_details = True
    wire: JSONObject = {key: "".join(texts) for key, texts in fields.items()}
    if has_details:
        wire["reasoning_details"] = details
    return wire


_MERGED_TEXT = {"reasoning.text": "text", "reasoning.summary": "summary"}


def merge_detail(entries: list[dict[str, Any]], fragment: Mapping[str, Any]) -> None:
    """Add one streamed ``reasoning_details`` fragment to ``entries`` (the message's list so far).

    OpenRouter streams one block as fragments of the same ``type`` and ``index``: the text in
    pieces, the signature in a final text-less fragment (agno-agi/agno#8794, recorded); replayed
    unmerged, Anthropic answers 400 "Invalid signature" and OpenRouter "reasoning_details count"
    (langchain-ai/langchain#36400). A ``reasoning.text`` or ``reasoning.summary`` fragment continuing
    the last entry (same type and index) is merged into it: its ``text``/``summary`` appended, a
    non-null ``signature`` replacing the earlier one, other keys kept from their first non-null value.
    Every other fragment (``reasoning.encrypted``, no ``index``) is an entry of its own, as
    OpenRouter's own AI SDK provider keeps them (OpenRouterTeam/ai-sdk-provider#520). Text pieces are
    kept as lists while the stream runs (``finish_details`` joins them), so a long block costs linear
    time."""
    kind = fragment.get("type")
    last = entries[-1] if entries else None
    key = _MERGED_TEXT.get(kind) if isinstance(kind, str) else None
    if (
        key is not None
        and last is not None
        and last.get("type") == kind
        and fragment.get("index") is not None
        and last.get("index") == fragment.get("index")
    ):
        for name, value in fragment.items():
            if name == key and isinstance(value, str):
                pieces = last.get(key)
                if isinstance(pieces, _Pieces):
                    pieces.append(value)
                else:
                    last[key] = _Pieces([pieces, value] if isinstance(pieces, str) else [value])
            elif name == "signature" and value is not None:
                last[name] = value
            elif last.get(name) is None:
                last[name] = value
        return
    entry = dict(fragment)
    if key is not None and isinstance(entry.get(key), str):
        entry[key] = _Pieces([entry[key]])
    entries.append(entry)


class _Pieces(list[str]):
    """The text of a merged ``reasoning_details`` entry while its stream runs."""


def finish_details(entries: list[dict[str, Any]]) -> list[JSONObject]:
    """``merge_detail``'s entries with their text pieces joined."""
    return [{k: "".join(v) if isinstance(v, _Pieces) else v for k, v in entry.items()} for entry in entries]
