"""A request's meaning, its spelling left out: what ``client.recorded_request`` compares, and what
``translation.wire_paths`` consults for a client's wire detail beside the same meaning.

``canonical_schema`` is a tool schema in one spelling; ``meaning`` a read-back request as plain JSON
(``SPELLING_DETAILS`` left out, and a Responses content's ``parts`` when they say only that it was a
list; made-up call ids named as such, result text without its whitespace,
a system prompt spelled as a first message read as the system prompt, and a Gemini signature that
came on a part of its own after the calls kept for ``signed_first_call`` to place on the turn's first call).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from conformance.checks._common import unwrapped_results
from conformance.model import Image, Message, Reasoning, Request, Resource, Text, ToolCall, ToolResult

__all__ = ["OWN_SIGNATURE", "SPELLING_DETAILS", "canonical_schema", "input_schema", "meaning", "signed_first_call"]

SPELLING_DETAILS = frozenset(
    {
        "content_list",  # a content given as a list of blocks rather than a string
        "content_str",  # ... or as a string rather than one block
        "no_content_key",  # an assistant message without "content" rather than "content": null
        "parts_spelling",  # Gemini parts in snake_case or camelCase
        "spelling",  # the same, on other Gemini values
        "path_prefix",  # Gemini's /v1/ or /v1beta/
        "query",  # the query string (Gemini's ?alt=sse)
        "synthetic_id",  # the reader made the call id up (the wire had none)
        "no_tool_call_id",  # a result without its call's id (the wire has none)
        "item_id",  # a Responses item's own id (fc_...), optional when sent back
        "own_message",  # a tool result in a message of its own rather than with its siblings
        "system_blocks",  # a system prompt as text blocks rather than a string
        "stream_omitted",  # "stream": false rather than no "stream"
        "max_tokens_key",  # max_tokens or max_completion_tokens
        "input_string",  # a Responses input given as a string rather than one message
        "merge_with_previous",  # two same-role messages the wire keeps as one
        "response_object",  # a Gemini result as the whole functionResponse.response object ...
        "response_key",  # ... or under "output" rather than "result" ...
        "result_json",  # ... or as JSON rather than a string (its text is compared)
        "schema_field",  # Gemini's parameters or parametersJsonSchema
        "system_type",  # a Responses system message item with "type": "message" said out loud
        "is_error_key",  # "is_error": false said out loud (the flag itself is compared)
    }
)
"""``provider_details`` keys that say how a body was spelled, not what it asks: left out."""


_ANNOTATIONS = frozenset({"title", "$schema", "$comment"})
"""JSON Schema keywords that constrain nothing (2020-12 core and meta-data vocabularies)."""
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "additionalItems"}
)


def input_schema(schema: Mapping[str, Any] | None) -> Any:
    """An empty schema and ``{"type": "object"}`` mean the same for a tool's input (MCP default)."""
    if not schema or dict(schema) == {"type": "object", "properties": {}}:
        return {"type": "object"}
    return schema


def canonical_schema(schema: Mapping[str, Any] | None) -> Any:
    """A black-box client's schema in one spelling, so that only a change of meaning is a finding:
    JSON numbers (``1.0`` is ``1``), type names in lower case (Gemini's ``Schema.type`` is the
    ``Type`` enum, ``OBJECT``: the same types, ai.google.dev/api/caching#Type), no annotation
    keywords (``title``, ``$schema``, ``$comment``, which libraries strip or add), and no empty
    ``properties`` (the same as none)."""

    def number(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, list):
            return [number(v) for v in value]
        if isinstance(value, Mapping):
            return {k: number(v) for k, v in value.items()}
        return value

    def canon(node: Any) -> Any:
        if not isinstance(node, Mapping):
            return number(node)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _ANNOTATIONS:
                continue
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                if value or key != "properties":
                    out[key] = {name: canon(sub) for name, sub in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [canon(sub) for sub in value]
            elif key in _SCHEMA_VALUES:
                out[key] = [canon(sub) for sub in value] if isinstance(value, list) else canon(value)
            elif key == "type":
                out[key] = [t.lower() for t in value] if isinstance(value, list) else str(value).lower()
            else:
                out[key] = number(value)
        return out

    return canon(input_schema(schema))


def meaning(request: Request, served: bytes = b"", rewritten: Collection[str] = ()) -> dict[str, Any]:
    """A read-back request as plain JSON with its spelling left out (see the module docstring):
    ``served`` is every answer the provider gave so far (call ids not in it are made up),
    ``rewritten`` the tools whose schema is not compared."""
    request = unwrapped_results(request)
    made_up: dict[str, str] = {}

    def call_id(value: str) -> str:
        if not value or value.encode() in served:
            return value
        return made_up.setdefault(value, f"<made-up id #{len(made_up)}>")

    out: dict[str, Any] = _plain(request)
    out["provider_details"].setdefault("extra", {})  # a field one side adds is named by its own path
    for message, plain in zip(request.messages, out["messages"], strict=True):
        for part, shown in zip(message.parts, plain["parts"], strict=True):
            if isinstance(part, ToolCall):
                shown["id"] = call_id(part.id)
            elif isinstance(part, ToolResult):
                shown["call_id"] = call_id(part.call_id)
                text = "".join(c.text or "" for c in part.content if isinstance(c, Text | Resource))
                shown["content"] = [c for c in shown["content"] if c.get("kind") not in ("text", "resource")]
                shown["text"] = "".join(text.split())
    for message, plain in zip(request.messages, out["messages"], strict=True):
        if (signature := _own_signature(message)) is not None:
            plain["provider_details"][OWN_SIGNATURE] = signature  # placed by signed_first_call
        # reasoning: judged by roundtrip.reasoning_replay, with each wire's rule
        plain["parts"] = [shown for shown in plain["parts"] if shown.get("kind") != "reasoning"]
    for tool, plain in zip(request.tools, out["tools"], strict=True):
        if tool.name in rewritten:  # a declared rewrite: the schema and its strict flag are the client's
            plain.pop("input_schema", None)
            _drop_strict(plain["provider_details"])
        else:
            plain["input_schema"] = canonical_schema(tool.input_schema)
    _system_first(out)
    return out


OWN_SIGNATURE = "own_part_signature"
"""Where ``meaning`` keeps a Gemini signature that came on a signed empty part of its own after a turn's
calls (the reader's ``Reasoning`` with ``thought: False`` and no text): the message's detail, until
``signed_first_call`` places it."""


def _own_signature(message: Message) -> str | None:
    """The signature of the one signed empty part after ``message``'s first call, if it has one."""
    calls = [p for p in message.parts if isinstance(p, ToolCall)]
    if message.role != "assistant" or not calls:
        return None
    first = message.parts.index(calls[0])
    own = [
        p
        for p in message.parts[first + 1 :]
        if isinstance(p, Reasoning) and p.signature and not p.text and p.provider_details.get("thought") is False
    ]
    return own[0].signature if len(own) == 1 else None


def signed_first_call(plain: dict[str, Any]) -> dict[str, Any]:
    """``meaning``'s output, its equivalents left out, with each message's own-part signature placed on
    the turn's first call when that call carries none. Where such a signature goes back is not
    documented: Gemini validates that "the first functionCall part in each step of the current turn"
    carries its signature, and asks for a signature back "in the exact part where it was received"
    (https://ai.google.dev/gemini-api/docs/thought-signatures), so a client sending it on the turn's first
    call and one sending the part as it came mean the same (the scenario reasoning/signature_own_part
    accepts both; ``roundtrip.reasoning_replay`` judges every other place). Run after the equivalences,
    so that a call carrying the documented placeholder signature counts as carrying none."""
    for message in plain.get("messages", []):
        details = message.get("provider_details", {})
        signature = details.get(OWN_SIGNATURE)
        calls = [p for p in message.get("parts", []) if p.get("kind") == "tool_call"]
        if signature is None or not calls or "thoughtSignature" in calls[0].get("provider_details", {}):
            continue
        calls[0].setdefault("provider_details", {})["thoughtSignature"] = signature
        del details[OWN_SIGNATURE]
    return plain


def _drop_strict(details: dict[str, Any]) -> None:
    """A tool's ``strict`` flag (OpenAI Chat ``function.strict``, Responses ``strict``) left out."""
    for holder in (details.get("function"), details.get("extra"), details):
        if isinstance(holder, dict):
            holder.pop("strict", None)
    for key in ("function", "extra"):
        if details.get(key) == {}:
            del details[key]


def _system_first(plain: dict[str, Any]) -> None:
    """A first message that is the system prompt in all but spelling (the reader kept it as a
    message for a field it does not write again, such as Ollama's ``"images": []``, now dropped as
    empty) is the system prompt."""
    messages = plain["messages"]
    if plain["system"] is not None or not messages:
        return
    first = messages[0]
    parts = first["parts"]
    alone = len(parts) == 1 and parts[0]["kind"] == "text" and parts[0]["provider_details"] == {}
    if first["provider_details"] == {"role": "system"} and alone:
        plain["system"] = parts[0]["text"]
        del messages[0]


def _plain(value: Any, *, details: bool = False) -> Any:
    """A model value as plain JSON: spelling details and argument text left out, empty wire values
    (inside ``provider_details``) dropped, image bytes in standard base64."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {
            f.name: _plain(getattr(value, f.name), details=f.name == "provider_details")
            for f in dataclasses.fields(value)
        }
        out.pop("arguments_raw", None)
        if isinstance(value, Image | Resource):
            for key in ("data", "blob"):
                if isinstance(out.get(key), str):
                    out[key] = _base64(out[key])
        if details_of := out.get("provider_details"):
            out["provider_details"] = {
                k: v for k, v in details_of.items() if k not in SPELLING_DETAILS and not _bare_parts(k, v)
            }
        return out
    if isinstance(value, Mapping):
        items = {str(k): _plain(v, details=details) for k, v in value.items()}
        return {k: v for k, v in items.items() if not (details and v in (None, {}, []))}
    if isinstance(value, list | tuple):
        return [_plain(v, details=details) for v in value]
    return value


def _bare_parts(key: str, value: Any) -> bool:
    """A Responses ``parts`` list (``_openai_responses_items``: each content part's keys beside its type
    and text) that holds nothing but empty entries: it says only that the content was a list of
    ``input_text`` blocks rather than a string, which is spelling (``EasyInputMessageParam.content``
    and ``FunctionCallOutput.output`` take either, openai/types/responses/easy_input_message_param.py:22,
    response_input_item_param.py:171, openai 3.57.0); a part's ``detail`` or other key is kept and compared."""
    return key == "parts" and isinstance(value, list) and all(v == {} for v in value)


def _base64(text: str) -> str:
    """Base64 or base64url text as standard base64 (the same bytes); the text itself when it is neither."""
    try:
        raw = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return text
    return base64.b64encode(raw).decode()
