"""Shapes of JSON bodies and stream events: the pure half of ``conformance.emulator.fidelity``.

A *shape* is the set of (JSON path pattern, JSON value type) pairs of one body or event. Array
indices become ``[]``; an array element that is an object with a string ``type`` becomes
``[type=VALUE]`` so that, say, Anthropic ``text`` and ``tool_use`` content blocks keep their own
fields apart. Subtrees that hold user data rather than wire structure (tool parameter schemas,
call arguments, metadata maps) are *opaque*: their own type is recorded, their keys are not.

Each body or event gets a *kind* (``request``, ``response``, ``error:<status>``,
``stream_event:<name>``, ``chunk:<features>``) so that only like is compared with like.
No I/O here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, TypeAlias

from conformance.framing import JSONArrayDecoder, NDJSONDecoder, SSEDecoder

__all__ = [
    "ADAPTERS",
    "OPAQUE",
    "SIDES",
    "TYPES",
    "JSONType",
    "Segment",
    "Shape",
    "Side",
    "glob_match",
    "json_type",
    "parent_path",
    "split_path",
    "stream_kinds",
    "walk",
]

ADAPTERS: tuple[str, ...] = ("anthropic", "gemini", "ollama", "openai_chat", "openai_responses")
"""The wire adapters the emulator serves (prompt-based adapters ride on one of these wires)."""

Side: TypeAlias = Literal["real_only", "emulator_only"]
"""Which traffic has what the other lacks."""
SIDES: tuple[Side, ...] = ("real_only", "emulator_only")

JSONType: TypeAlias = Literal["object", "array", "string", "number", "integer", "boolean", "null", "text"]
"""A JSON value type; ``text`` stands for a body or event payload that is not JSON at all."""

TYPES: frozenset[str] = frozenset(("object", "array", "string", "number", "integer", "boolean", "null", "text"))

Shape: TypeAlias = frozenset[tuple[str, JSONType]]
"""(path, type) pairs of one body or event."""

Segment: TypeAlias = str


def json_type(value: Any) -> JSONType:
    """The JSON type of a parsed value (``bool`` before ``int``: it is a subclass)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "text"


# --------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_$@][A-Za-z0-9_$@-]*\Z")
_DISCRIMINATOR = re.compile(r"[A-Za-z0-9_.-]+\Z")
_SEGMENT = re.compile(r'\.[A-Za-z_$@][A-Za-z0-9_$@-]*|\[\]|\[type=[A-Za-z0-9_.-]+\]|\["(?:[^"\\]|\\.)*"\]')


def _key(name: str) -> str:
    if _IDENT.match(name):
        return f".{name}"
    # JSON-quoted; spaces escaped so a difference key stays one token per field
    return "[" + json.dumps(name).replace(" ", "\\u0020") + "]"


def _element(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and _DISCRIMINATOR.match(kind):
            return f"[type={kind}]"
    return "[]"


def split_path(path: str) -> list[Segment]:
    """``$.a[].b`` -> ``[".a", "[]", ".b"]``; raises ``ValueError`` for what is not a path."""
    if not path.startswith("$"):
        raise ValueError(f"a path starts with `$`: {path!r}")
    segments: list[Segment] = []
    pos = 1
    while pos < len(path):
        match = _SEGMENT.match(path, pos)
        if match is None:
            raise ValueError(f"not a path segment at {path[pos:]!r} in {path!r}")
        segments.append(match.group())
        pos = match.end()
    return segments


def parent_path(path: str) -> str | None:
    """The path of the enclosing value (``$.a[].b`` -> ``$.a[]``); None for ``$``."""
    segments = split_path(path)
    if not segments:
        return None
    return "$" + "".join(segments[:-1])


def glob_match(pattern: str, text: str) -> bool:
    """Whole-string match where ``*`` stands for any run of characters; all else is literal."""
    return _glob(pattern).fullmatch(text) is not None


_GLOBS: dict[str, re.Pattern[str]] = {}


def _glob(pattern: str) -> re.Pattern[str]:
    compiled = _GLOBS.get(pattern)
    if compiled is None:
        compiled = _GLOBS[pattern] = re.compile(".*".join(re.escape(p) for p in pattern.split("*")), re.DOTALL)
    return compiled


# --------------------------------------------------------------------------------------------
# Opaque subtrees: user data, not wire structure
# --------------------------------------------------------------------------------------------

_GEMINI_SCHEMAS = (
    "*.parameters",
    "*.parametersJsonSchema",
    "*.parameters_json_schema",
    "*.responseSchema",
    "*.response_schema",
    "*.responseJsonSchema",
    "*.response_json_schema",
)
OPAQUE: Mapping[str, tuple[str, ...]] = {
    # tool parameter schemas, structured-output schemas, metadata maps, token bias maps
    "openai_chat": (
        "$.tools[*].function.parameters",
        "$.functions[*].parameters",
        "*.json_schema.schema",
        "$.metadata",
        "$.logit_bias",
    ),
    # a Responses body echoes the request's tools, text format and metadata, also inside stream events
    "openai_responses": ("*.tools[*].parameters", "*.text.format.schema", "*.metadata", "*.response_format.schema"),
    # tool_use ``input`` holds the call's arguments (an object)
    "anthropic": ("$.tools[*].input_schema", "*.input", "$.metadata"),
    # functionCall args / functionResponse response are free JSON objects (camelCase or snake_case)
    "gemini": (*_GEMINI_SCHEMAS, "*.args", "*.functionResponse.response", "*.function_response.response", "$.labels"),
    # Ollama call arguments are objects; ``format`` may be a JSON schema
    "ollama": ("$.tools[*].function.parameters", "*.tool_calls[*].function.arguments", "$.format"),
}
"""Per adapter: path globs whose value is recorded by type only, never descended into."""


def walk(value: Any, opaque: Iterable[str] = ()) -> Shape:
    """The (path, type) pairs of ``value``; paths matching a glob in ``opaque`` are not descended."""
    patterns = [_glob(p) for p in opaque]
    out: set[tuple[str, JSONType]] = set()
    _walk(value, "$", patterns, out)
    return frozenset(out)


def _walk(value: Any, path: str, opaque: list[re.Pattern[str]], out: set[tuple[str, JSONType]]) -> None:
    kind = json_type(value)
    out.add((path, kind))
    if kind not in ("object", "array") or (path != "$" and any(p.fullmatch(path) for p in opaque)):
        return
    if kind == "object":
        for name, item in value.items():
            _walk(item, path + _key(str(name)), opaque, out)
    else:
        for item in value:
            _walk(item, path + _element(item), opaque, out)


# --------------------------------------------------------------------------------------------
# Streams: split a body into (kind, payload) pairs
# --------------------------------------------------------------------------------------------

_SUBKIND: Mapping[tuple[str, str], str] = {
    ("anthropic", "content_block_start"): "content_block",
    ("anthropic", "content_block_delta"): "delta",
    ("openai_responses", "response.output_item.added"): "item",
    ("openai_responses", "response.output_item.done"): "item",
    ("openai_responses", "response.content_part.added"): "part",
    ("openai_responses", "response.content_part.done"): "part",
}
"""Events whose payload nests a typed object: the kind is ``<event>/<that object's type>``."""

_SSE_START = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*(?:data|event|id|retry|:)").match
NOT_JSON = object()
"""Payload marker for event data that is not JSON."""


def stream_kinds(adapter: str, body: bytes) -> Iterator[tuple[str, Any]]:
    """Split a stream body into (kind, parsed payload) pairs, in order.

    SSE for every wire that sends it (Gemini with ``alt=sse`` too), Gemini's streamed JSON array,
    and NDJSON (Ollama). A payload that is not JSON is ``NOT_JSON``; its kind is its SSE event
    name, ``[DONE]`` for OpenAI's terminator, or ``<not-json>``.
    """
    if _SSE_START(body):
        decoder = SSEDecoder()
        for event in [*decoder.decode(body), *decoder.flush()]:
            payload = _loads(event.data)
            yield _event_kind(adapter, event.event, event.data, payload), payload
        return
    frames: list[bytes]
    if body.lstrip()[:1] == b"[":
        array = JSONArrayDecoder()
        frames = [*array.decode(body), *array.flush()]
    else:
        lines = NDJSONDecoder()
        frames = [*lines.decode(body), *lines.flush()]
    for frame in frames:
        payload = _loads(frame)
        yield _event_kind(adapter, "", frame.decode("utf-8", "replace").strip(), payload), payload


def _loads(data: str | bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return NOT_JSON


def _event_kind(adapter: str, name: str, data: str, payload: Any) -> str:
    name = "_".join(name.split())  # a kind is one token of a difference key
    if payload is NOT_JSON or not isinstance(payload, dict):
        if name:
            return f"stream_event:{name}"
        return "stream_event:[DONE]" if data == "[DONE]" else "stream_event:<not-json>"
    if adapter in ("gemini", "ollama") and "error" not in payload:
        return _chunk_kind(adapter, payload)
    if not name:
        for key in ("type", "object"):
            if isinstance(payload.get(key), str) and payload[key]:
                name = payload[key]
                break
        else:
            name = "error" if "error" in payload else "<untyped>"
    sub = _SUBKIND.get((adapter, name))
    if sub is not None:
        inner = payload.get(sub)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return f"stream_event:{name}/{inner['type']}"
    return f"stream_event:{name}"


def _chunk_kind(adapter: str, payload: Mapping[str, Any]) -> str:
    """``chunk:`` + the features of a Gemini/Ollama chunk, in a fixed order, joined by ``+``."""
    features: list[str] = []
    if adapter == "gemini":
        candidates = payload.get("candidates")
        parts: list[Any] = []
        final = False
        for candidate in candidates if isinstance(candidates, list) else ():
            if isinstance(candidate, dict):
                final = final or candidate.get("finishReason") is not None
                content = candidate.get("content")
                if isinstance(content, dict) and isinstance(content.get("parts"), list):
                    parts.extend(p for p in content["parts"] if isinstance(p, dict))
        if any(p.get("thought") is True for p in parts):
            features.append("thought")
        if any(isinstance(p.get("text"), str) and p.get("thought") is not True for p in parts):
            features.append("text")
        if any("functionCall" in p or "function_call" in p for p in parts):
            features.append("function_call")
        if final:
            features.append("final")
    else:
        message = payload.get("message")
        message = message if isinstance(message, dict) else {}
        if message.get("thinking"):
            features.append("thinking")
        if message.get("content"):
            features.append("text")
        if message.get("tool_calls"):
            features.append("tool_calls")
        if payload.get("done") is True:
            features.append("final")
    return "chunk:" + ("+".join(features) or "empty")
