"""The request body of the Gemini wire format, piece by piece: ``contents`` (the conversation)
to and from unified messages, ``systemInstruction``, ``toolConfig``, ``generationConfig``'s token
limit and the endpoint path. Private helper of ``conformance.adapters.gemini`` (see its docstring
for sources and quirks).

Every wire field the unified model does not cover is kept in ``provider_details`` so that
``request_to_wire(request_from_wire(body)).body == body``: per content ``extra``, ``role``,
``no_role``, ``no_parts``, ``raw_parts`` (``[position, part]`` for parts without a unified type) and
``merge_with_previous`` (a user content holding text and ``functionResponse`` parts becomes a user
and a tool message); per part ``part_extra``, ``call_extra``, ``thoughtSignature``, ``synthetic_id``
and ``spelling`` (snake_case keys as sent, E32); per result ``response_key``, ``result_json``,
``response_object``, ``no_response``, ``response_name`` (a ``response`` repeating the function's name
beside its one key, ``_names_its_tool``) and ``parts`` (the shape of ``functionResponse``).

Reasoning (issue 28): a ``thoughtSignature`` is an opaque base64 string (google-genai ``types.py``
``Part.thought_signature: Optional[bytes]``), kept on the part that carried it and sent back on
that part ("pass it back exactly as received", ai.google.dev/gemini-api/docs/thought-signatures);
parts read from a request are reasoning of the ``gemini`` wire. Reasoning another wire produced is
left out (``base.reasoning_note``: Gemini answers a foreign signature with 400 "Base64 decoding
failed", openclaw c4e8b60), and so is reasoning of unknown source whose signature is not base64.
A call left unsigned in the current turn's tool loop is not given the placeholder
``skip_thought_signature_validator``: its official wording is not verified and the one recording
of it is gemini-2.0-flash, which validates nothing (issue28-wire-facts §2d); the request says so in
its notes instead (Gemini 3 answers 400 for such a call, §2c).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson

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
    Text,
    ToolCall,
    ToolResult,
)

__all__ = [
    "PATH_PREFIX",
    "WIRE",
    "contents_from_wire",
    "contents_to_wire",
    "max_tokens_from_wire",
    "path_from_wire",
    "pick",
    "spelled",
    "system_from_wire",
    "system_to_wire",
    "tool_choice_from_wire",
    "tool_config_to_wire",
    "without",
]

PATH_PREFIX = "/v1beta/models/"
WIRE = "gemini"
"""The wire name reasoning decoded here carries (``Reasoning.source``)."""
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")
"""Base64, standard or URL-safe (google-genai re-encodes request bytes URL-safe, ``_common.py:710``)."""
_SNAKE = re.compile(r"(?<!^)([A-Z])")
"""E32: the API accepts snake_case request fields (``function_call``); they go back as they came."""


def pick(obj: Mapping[str, Any], camel: str, spelling: dict[str, str]) -> Any:
    """``obj[camel]`` or its snake_case twin (E32), noting the spelling that was used."""
    if camel in obj:
        return obj[camel]
    snake = _SNAKE.sub(r"_\1", camel).lower()
    if snake in obj:
        spelling[camel] = snake
        return obj[snake]
    return None


def spelled(camel: str, details: Mapping[str, Any]) -> str:
    return str(details.get("spelling", {}).get(camel, camel))


def without(obj: Mapping[str, Any], *keys: str) -> JSONObject:
    return {k: v for k, v in obj.items() if k not in keys}


def _system_text(raw: Any) -> str:
    parts = raw.get("parts") if isinstance(raw, Mapping) else None
    return "".join(str(p.get("text", "")) for p in parts or () if isinstance(p, Mapping))


def system_to_wire(system: str, details: Mapping[str, Any]) -> JSONObject:
    raw = details.get("system_raw")
    if isinstance(raw, Mapping) and _system_text(raw) == system:
        return dict(raw)  # several parts (or extra fields) as they came, while their text is unchanged
    return {"parts": [{"text": system}], **details.get("system_extra", {})}


def system_from_wire(raw: Any, details: JSONObject) -> str | None:
    """``systemInstruction`` (a Content) -> the system prompt text."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise WireFormatError(f"systemInstruction must be a Content object, not {raw!r}")
    parts = raw.get("parts")
    if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], Mapping) and set(parts[0]) == {"text"}:
        if extra := without(raw, "parts"):
            details["system_extra"] = extra
        return str(parts[0]["text"])
    details["system_raw"] = raw
    return _system_text(raw)


def max_tokens_from_wire(body: Mapping[str, Any], extra: JSONObject, spelling: dict[str, str]) -> Any:
    """``generationConfig.maxOutputTokens``; the rest of ``generationConfig`` stays in ``extra``."""
    config = pick(body, "generationConfig", spelling)
    if not isinstance(config, Mapping):
        return None
    config_spelling: dict[str, str] = {}
    max_tokens = pick(config, "maxOutputTokens", config_spelling)
    if max_tokens is not None:
        spelling.update(config_spelling)
        key = spelled("generationConfig", {"spelling": spelling})
        if rest := without(config, spelled("maxOutputTokens", {"spelling": spelling})):
            extra[key] = rest
        else:
            del extra[key]
    return max_tokens


def tool_config_to_wire(choice: str | None, names: NameMap, details: Mapping[str, Any]) -> JSONObject | None:
    calling: JSONObject = {}
    if choice is not None:
        calling["mode"] = {"auto": "AUTO", "none": "NONE", "required": "ANY"}.get(choice, "ANY")
        if choice not in ("auto", "none", "required"):
            calling[spelled("allowedFunctionNames", details)] = [names.wire(choice)]
        elif choice == "required" and "allowed_function_names" in details:
            calling[spelled("allowedFunctionNames", details)] = details["allowed_function_names"]
    elif "function_calling_mode" in details:
        calling["mode"] = details["function_calling_mode"]
    calling.update(details.get("function_calling_extra", {}))
    if not calling and "tool_config_extra" not in details and not details.get("has_function_calling_config"):
        return None
    config = dict(details.get("tool_config_extra", {}))
    if calling or details.get("has_function_calling_config"):
        config[spelled("functionCallingConfig", details)] = calling
    return config


def path_from_wire(path: str, details: JSONObject) -> tuple[str, bool]:
    if not path:
        return "", False
    split = urlsplit(path)
    prefix, _, last = split.path.rpartition("/")
    model, _, method = last.partition(":")
    if method not in ("generateContent", "streamGenerateContent"):
        raise WireFormatError(f"not a Gemini generateContent path: {path!r}")
    stream = method == "streamGenerateContent"
    if prefix + "/" != PATH_PREFIX:
        details["path_prefix"] = prefix + "/"
    if split.query != ("alt=sse" if stream else ""):
        details["query"] = split.query
    return model, stream


def tool_choice_from_wire(config: Any, names: NameMap, details: JSONObject, spelling: dict[str, str]) -> str | None:
    if not isinstance(config, Mapping):
        return None
    calling = pick(config, "functionCallingConfig", spelling)
    extra = without(config, "functionCallingConfig", "function_calling_config")
    if extra or not isinstance(calling, Mapping):
        details["tool_config_extra"] = extra
    if not isinstance(calling, Mapping):
        return None
    if not calling:
        details["has_function_calling_config"] = True
    allowed_key = "allowed_function_names" if "allowed_function_names" in calling else "allowedFunctionNames"
    allowed = pick(calling, "allowedFunctionNames", spelling)
    rest = without(calling, "mode", allowed_key)
    mode = calling.get("mode")
    choice: str | None = {"AUTO": "auto", "NONE": "none", "ANY": "required"}.get(str(mode))
    if choice == "required" and isinstance(allowed, list) and len(allowed) == 1:
        choice = names.original(str(allowed[0]))  # named choice: ANY + one allowed name (§8)
    elif choice == "required" and allowed is not None:
        details["allowed_function_names"] = allowed
    elif allowed is not None:
        rest[allowed_key] = allowed
    if choice is None and mode is not None:
        details["function_calling_mode"] = mode  # VALIDATED, MODE_UNSPECIFIED, ...: kept as sent
    if rest:
        details["function_calling_extra"] = rest
    return choice


def contents_to_wire(messages: Sequence[Message], names: NameMap, notes: list[str] | None = None) -> list[JSONObject]:
    """Unified messages -> ``contents``; what is left out (reasoning Gemini cannot verify) is said
    in ``notes``, one line each."""
    notes = [] if notes is None else notes
    contents: list[JSONObject] = []
    synthetic: set[str] = set()
    call_names: dict[str, str] = {}
    loop = _current_loop(messages)
    for position, message in enumerate(messages):
        details = message.provider_details
        if message.role == "assistant":
            kept, left_out = _replayable(message.parts, notes)
            parts = [_model_part_to_wire(p, names) for p in kept]
            for p in kept:
                if isinstance(p, ToolCall):
                    call_names[p.id] = p.name
                    if p.provider_details.get("synthetic_id"):
                        synthetic.add(p.id)
            if left_out is not None and position >= loop:
                _note_unsigned(kept, left_out, notes)
        elif message.role == "tool":
            parts = [_result_to_wire(p, names, synthetic, call_names) for p in message.parts]
        else:
            parts = [_user_part_to_wire(p) for p in message.parts]
        for index, raw in details.get("raw_parts", ()):
            parts.insert(index, raw)
        if details.get("merge_with_previous") and contents:
            contents[-1]["parts"].extend(parts)
            continue
        content: JSONObject = {} if details.get("no_role") else {"role": _default_role(message, details)}
        if parts or not details.get("no_parts"):
            content["parts"] = parts
        content.update(details.get("extra", {}))
        contents.append(content)
    return contents


def _current_loop(messages: Sequence[Message]) -> int:
    """Where the current turn begins: the last user message that is not only tool results (a
    "turn" of the thought-signatures page; its function-calling steps are the ones validated)."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "user" and any(not isinstance(p, ToolResult) for p in message.parts):
            return position
    return 0


def _replayable(parts: Sequence[Part], notes: list[str]) -> tuple[list[Part], str | None]:
    """The parts of a model turn Gemini can be sent, and the wire of reasoning left out (if any)."""
    kept: list[Part] = []
    left_out: str | None = None
    for part in parts:
        if isinstance(part, Reasoning):
            note = reasoning_note(part, WIRE)
            unverifiable = part.source is None and part.signature is not None
            if note is None and unverifiable and not _BASE64.fullmatch(part.signature or ""):
                note = (
                    "reasoning of unknown source left out: its signature is not base64, which Gemini "
                    "answers with 400 (Base64 decoding failed)"
                )
            if note is not None:
                if note not in notes:
                    notes.append(note)
                left_out = part.source or "an unknown source"
                continue
        kept.append(part)
    return kept, left_out


def _note_unsigned(parts: Sequence[Part], source: str, notes: list[str]) -> None:
    """A model turn of the current tool loop whose reasoning came from another wire: its calls go out
    unsigned (said once per call batch)."""
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if calls and not any("thoughtSignature" in c.provider_details for c in calls):
        notes.append(
            f"call {calls[0].id!r} ({calls[0].name}) goes out without a thoughtSignature: its turn came from "
            f"{source}; Gemini 3 answers 400 for an unsigned call of the current turn, and the placeholder "
            "skip_thought_signature_validator is not sent (its official wording is unverified)"
        )


def _default_role(message: Message, details: Mapping[str, Any]) -> str:
    return str(details.get("role", "model" if message.role == "assistant" else "user"))


def _text_to_wire(text: str, details: Mapping[str, Any]) -> JSONObject:
    part: JSONObject = {"text": text}
    if "thoughtSignature" in details:
        part[spelled("thoughtSignature", details)] = details["thoughtSignature"]
    part.update(details.get("part_extra", {}))
    return part


def _user_part_to_wire(part: Part) -> JSONObject:
    if isinstance(part, Text):
        return _text_to_wire(part.text, part.provider_details)
    if isinstance(part, Image):
        return _image_to_wire(part, allow_url=True)
    raise UnsupportedContentError(f"a Gemini user turn cannot carry {part.kind} parts (E18)")


def _image_to_wire(image: Image, *, allow_url: bool) -> JSONObject:
    if image.data is not None:
        return {"inlineData": {"mimeType": image.media_type, "data": image.data}}
    if image.url is not None and allow_url:
        return {
            "fileData": {"mimeType": image.media_type, "fileUri": image.url}
            if image.media_type
            else {"fileUri": image.url}
        }
    raise UnsupportedContentError("an image by URL cannot travel in a functionResponse (fileData is Vertex-only, §4b)")


def _model_part_to_wire(part: Part, names: NameMap) -> JSONObject:
    details = part.provider_details if not isinstance(part, Image) else {}
    if isinstance(part, Text):
        return _text_to_wire(part.text, details)
    if isinstance(part, Reasoning):
        if part.redacted is not None:
            raise UnsupportedContentError(
                "Gemini has no redacted reasoning (only thought text and thoughtSignature): leave the redacted "
                "part out of a Gemini request"
            )
        wire: JSONObject = {"text": part.text}
        if details.get("thought") is not False:  # False: a signed empty text part (E10) stays one
            wire["thought"] = True
        if part.signature is not None:
            wire[spelled("thoughtSignature", details)] = part.signature
        wire.update(details.get("part_extra", {}))
        return wire
    if isinstance(part, ToolCall):
        if part.arguments is None:
            raise UnsupportedContentError(f"call {part.id!r} has unusable arguments; Gemini args must be an object")
        call: JSONObject = {"name": names.wire(part.name)}
        if part.arguments or part.arguments_raw:  # args absent on the wire stays absent (§4c)
            call["args"] = part.arguments
        if not details.get("synthetic_id"):
            call["id"] = part.id
        call.update(details.get("call_extra", {}))
        wire = {spelled("functionCall", details): call}
        if "thoughtSignature" in details:  # replayed byte for byte (E10)
            wire[spelled("thoughtSignature", details)] = details["thoughtSignature"]
        wire.update(details.get("part_extra", {}))
        return wire
    if isinstance(part, Image):
        return _image_to_wire(part, allow_url=True)
    raise UnsupportedContentError(f"a Gemini model turn cannot carry {part.kind} parts (E18)")


def _result_to_wire(part: Part, names: NameMap, synthetic: set[str], call_names: Mapping[str, str]) -> JSONObject:
    if not isinstance(part, ToolResult):
        raise UnsupportedContentError(f"a tool message holds only tool results, not {part.kind}")
    details = part.provider_details
    name = part.name or call_names.get(part.call_id)
    if name is None:
        raise UnsupportedContentError(f"functionResponse needs the tool name; result {part.call_id!r} has none")
    texts: list[str] = []
    media: list[JSONObject] = []
    for item in part.content:
        if isinstance(item, Text):
            texts.append(item.text)
        elif isinstance(item, Resource) and item.text is not None:
            texts.append(item.text)
        elif isinstance(item, Image) and details.get("parts_spelling") == "snake" and item.data is not None:
            media.append({"inline_data": {"mime_type": item.media_type, "data": item.data}})
        elif isinstance(item, Image):
            media.append(_image_to_wire(item, allow_url=False))
        else:
            raise UnsupportedContentError(f"a Gemini functionResponse cannot carry {item.kind} content")
    text = "".join(texts)
    response: Any
    if details.get("response_object") and not part.is_error:
        response = _json(text)  # the whole object was the output (FunctionResponse.response docs)
    elif details.get("no_response"):
        response = None
    else:
        value = _json(text) if details.get("result_json") else text
        response = {"error" if part.is_error else details.get("response_key", "result"): value}  # E16
    if details.get("response_name") and isinstance(response, Mapping):
        response = {"name": names.wire(name), **response}  # the tool's name repeated (the AI SDK's spelling)
    function: JSONObject = {"name": names.wire(name)}
    if not details.get("synthetic_id") and part.call_id not in synthetic:
        function["id"] = part.call_id
    if response is not None:
        function["response"] = response
    if media or "parts" in details:
        function["parts"] = details.get("parts", media)
    function.update(details.get("extra", {}))
    return {spelled("functionResponse", details): function, **details.get("part_extra", {})}


def _names_its_tool(response: Any, name: str) -> bool:
    """A ``functionResponse.response`` that is ``{"name": <the function's name>, <one key>: ...}``: the
    AI SDK's spelling (``{name, content}``, ``{name, error}`` for a failed tool: @ai-sdk/google
    dist/index.js:658-666, 920-931, 4.0.121). The ``name`` key only repeats ``functionResponse.name``;
    the rest reads as a response of its own: ``error`` is the documented error key ("Use 'output' key
    to specify function output and 'error' key to specify error details (if any)",
    https://ai.google.dev/api/caching#FunctionResponse) and any other one key the output's text
    (``client.recorded_request`` reads a text under one key as that text, ``unwrapped_results``).
    Written back with the name (``response_name``)."""
    return isinstance(response, Mapping) and len(response) == 2 and bool(name) and response.get("name") == name


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            return json.loads(text)  # integers beyond 64 bits
        except ValueError:
            return text  # the text was edited into something that is not JSON: send it as a string


def contents_from_wire(contents: list[Any], names: NameMap) -> list[Message]:
    messages: list[Message] = []
    calls: list[tuple[str, str]] = []  # (id, wire name) of the latest model turn, for id-less results
    for ci, content in enumerate(contents):
        if not isinstance(content, Mapping):
            raise WireFormatError(f"contents[{ci}] is not a Content object")
        role = content.get("role")
        details: JSONObject = {}
        if extra := without(content, "role", "parts"):
            details["extra"] = extra
        if "role" not in content:
            details["no_role"] = True
        elif role not in ("user", "model"):
            details["role"] = role  # kept as sent (a Vertex 400 recording sends "invalid_role")
        if "parts" not in content:
            details["no_parts"] = True
        parts = content.get("parts") or []
        if not isinstance(parts, list):
            raise WireFormatError(f"contents[{ci}].parts is not a list of Part objects")
        if role == "model":
            message = _model_from_wire(parts, ci, names, details)
            calls = [(p.id, names.wire(p.name)) for p in message.parts if isinstance(p, ToolCall)]
            messages.append(message)
        else:
            messages.extend(_user_from_wire(parts, ci, names, details, calls))
    return messages


def _signature(part: Mapping[str, Any], spelling: dict[str, str], where: str) -> str | None:
    """The part's ``thoughtSignature`` (bytes as a base64 string, google-genai ``Part.thought_signature``)."""
    signature = pick(part, "thoughtSignature", spelling)
    if signature is not None and not isinstance(signature, str):
        raise WireFormatError(
            f"{where}.thoughtSignature must be a base64 string, not {type(signature).__name__}: "
            "send back the signature exactly as the response gave it"
        )
    return signature


def _text_details(part: Mapping[str, Any], where: str, *skip: str) -> JSONObject:
    spelling: dict[str, str] = {}
    details: JSONObject = {}
    signature = _signature(part, spelling, where)
    if signature is not None:
        details["thoughtSignature"] = signature
    if extra := without(part, "text", "thoughtSignature", "thought_signature", *skip):
        details["part_extra"] = extra
    if spelling:
        details["spelling"] = spelling
    return details


def _model_from_wire(parts: list[Any], ci: int, names: NameMap, details: JSONObject) -> Message:
    out: list[Part] = []
    raw_parts: list[list[Any]] = []
    for pi, part in enumerate(parts):
        spelling: dict[str, str] = {}
        call = pick(part, "functionCall", spelling) if isinstance(part, Mapping) else None
        if isinstance(call, Mapping):
            out.append(_call_from_wire(part, call, spelling, ci, pi, names))
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            thought = part.get("thought") is True
            text_details = _text_details(part, f"contents[{ci}].parts[{pi}]", *(("thought",) if thought else ()))
            if thought or (not part["text"] and "thoughtSignature" in text_details):
                # thought text, or a signed empty text part (E10): reasoning to replay, as the stream folds it
                signature = text_details.pop("thoughtSignature", None)
                if not thought:
                    text_details["thought"] = False
                out.append(
                    Reasoning(text=part["text"], signature=signature, source=WIRE, provider_details=text_details)
                )
            else:
                out.append(Text(text=part["text"], provider_details=text_details))
        else:
            raw_parts.append([pi, part])  # executableCode, inlineData from the model, ...: kept verbatim
    if raw_parts:
        details["raw_parts"] = raw_parts
    return Message(role="assistant", parts=tuple(out), provider_details=details)


def _call_from_wire(
    part: Mapping[str, Any], call: Mapping[str, Any], spelling: dict[str, str], ci: int, pi: int, names: NameMap
) -> ToolCall:
    details: JSONObject = {}
    signature = _signature(part, spelling, f"contents[{ci}].parts[{pi}]")
    if signature is not None:
        details["thoughtSignature"] = signature
    name = str(call.get("name", ""))
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = synthetic_call_id("gemini", "history", ci, pi, name)
        details["synthetic_id"] = True
    if call_extra := without(call, "name", "args", *(() if details.get("synthetic_id") else ("id",))):
        details["call_extra"] = call_extra
    if part_extra := without(part, "functionCall", "function_call", "thoughtSignature", "thought_signature"):
        details["part_extra"] = part_extra
    if spelling:
        details["spelling"] = spelling
    args = call.get("args")
    raw = "" if "args" not in call else args if isinstance(args, str) else dumps_compact(args)
    arguments, error = (args, None) if isinstance(args, dict) else parse_arguments(raw)
    return ToolCall(
        id=call_id,
        name=names.original(name),
        arguments=arguments,
        arguments_raw=raw,
        arguments_error=error,
        provider_details=details,
    )


def _user_from_wire(
    parts: list[Any], ci: int, names: NameMap, details: JSONObject, calls: list[tuple[str, str]]
) -> list[Message]:
    """One user content -> a user message and/or a tool message per run of functionResponse parts;
    the later ones are marked to merge back into the same content."""
    messages: list[Message] = []
    current: list[Part] = []
    raw_parts: list[list[Any]] = []
    role: str | None = None
    used: set[str] = set()

    def flush() -> None:
        nonlocal current, raw_parts
        message_details = details if not messages else {"merge_with_previous": True}
        if raw_parts:
            message_details = {**message_details, "raw_parts": raw_parts}
        messages.append(
            Message(role="tool" if role == "tool" else "user", parts=tuple(current), provider_details=message_details)
        )
        current, raw_parts = [], []

    for pi, part in enumerate(parts):
        spelling: dict[str, str] = {}
        response = pick(part, "functionResponse", spelling) if isinstance(part, Mapping) else None
        kind = "tool" if isinstance(response, Mapping) else "user"
        if role is not None and kind != role:
            flush()
        role = kind
        if isinstance(response, Mapping):
            current.append(_result_from_wire(part, response, spelling, ci, pi, names, calls, used))
            continue
        unified = _user_part_from_wire(part, f"contents[{ci}].parts[{pi}]")
        if unified is None:
            raw_parts.append([len(current) + len(raw_parts), part])
        else:
            current.append(unified)
    flush()
    return messages


def _user_part_from_wire(part: Any, where: str) -> Part | None:
    if isinstance(part, Mapping) and isinstance(part.get("text"), str) and "thought" not in part:
        return Text(text=part["text"], provider_details=_text_details(part, where))
    return _image_part(part, by_url=True)  # None: video/audio/PDF data, ...: kept verbatim as a raw part


def _image_part(part: Any, *, by_url: bool, snake: bool = False) -> Image | None:
    """An ``inlineData`` (or, ``by_url``, ``fileData``) image part with exactly the fields ``Image`` keeps;
    ``snake``: spelled ``inline_data`` / ``mime_type`` instead (E32: the API accepts both)."""
    if not isinstance(part, Mapping) or len(part) != 1:
        return None
    ((key, ref),) = part.items()
    mime = "mime_type" if snake else "mimeType"
    if not isinstance(ref, Mapping) or not str(ref.get(mime, "")).startswith("image/"):
        return None
    if key == ("inline_data" if snake else "inlineData") and set(ref) == {mime, "data"}:
        return Image(media_type=str(ref[mime]), data=str(ref["data"]))
    if not snake and key == "fileData" and by_url and set(ref) == {"mimeType", "fileUri"}:
        return Image(media_type=str(ref["mimeType"]), url=str(ref["fileUri"]))
    return None


def _result_from_wire(
    part: Mapping[str, Any],
    function: Mapping[str, Any],
    spelling: dict[str, str],
    ci: int,
    pi: int,
    names: NameMap,
    calls: list[tuple[str, str]],
    used: set[str],
) -> ToolResult:
    details: JSONObject = {}
    name = str(function.get("name", ""))
    wire_id = function.get("id")
    has_id = isinstance(wire_id, str) and bool(wire_id)
    if has_id:
        call_id = str(wire_id)
    else:
        # no id on the wire: the first unanswered call of the previous model turn with this name (§4b)
        found = next((c for c, n in calls if n == name and c not in used), None)
        call_id = found or synthetic_call_id("gemini", "history", ci, pi, name)
        details["synthetic_id"] = True
    used.add(call_id)
    content: tuple[ContentItem, ...] = ()
    is_error = False
    response = function.get("response")
    if isinstance(response, Mapping) and _names_its_tool(response, name):
        response = without(response, "name")
        details["response_name"] = True
    if "response" not in function:
        details["no_response"] = True
    elif isinstance(response, Mapping) and len(response) == 1 and next(iter(response)) in ("result", "output", "error"):
        key, value = next(iter(response.items()))
        is_error = key == "error"
        if key == "output":  # FunctionResponse.response docs: "output" for output, "error" for errors
            details["response_key"] = key
        if not isinstance(value, str):
            value, details["result_json"] = dumps_compact(value), True
        content = (Text(text=value),)
    else:
        content = (Text(text=dumps_compact(response)),)  # otherwise the whole object is the output
        details["response_object"] = True
    media = function.get("parts")
    images = [_image_part(m, by_url=False) for m in media] if isinstance(media, list) else []
    if isinstance(media, list) and not (images and all(images)):
        images = [_image_part(m, by_url=False, snake=True) for m in media]  # E32's snake_case spelling
        if images and all(images):
            details["parts_spelling"] = "snake"
    if images and all(images):
        content += tuple(i for i in images if i is not None)
    elif media is not None:
        details["parts"] = media
    if extra := without(function, "name", "response", "parts", *(("id",) if has_id else ())):
        details["extra"] = extra
    if part_extra := without(part, "functionResponse", "function_response"):
        details["part_extra"] = part_extra
    if spelling:
        details["spelling"] = spelling
    return ToolResult(
        call_id=call_id, content=content, is_error=is_error, name=names.original(name), provider_details=details
    )
