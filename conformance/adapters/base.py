"""The adapter contract and the pure helpers every adapter module shares.

An adapter is a value (``Adapter``) bundling pure functions over JSON-shaped wire data. Every
provider module in this package has the same sections, in this order, and the same names:

1. module docstring: the wire format, endpoint, and the sources its facts come from;
2. ``__all__`` and wire shapes (``TypedDict``) where the structure is known;
3. tables: ``_FINISH_REASONS``, ``_ERROR_KINDS`` (closed vocabularies as dicts);
4. tools: ``tools_to_wire``;
5. requests: ``request_to_wire``, ``request_from_wire``;
6. responses: ``_events_from_body`` (a non-streamed body as stream events) and
   ``response_from_wire`` (= ``assembly.fold`` of those events);
7. streams: ``stream_from_wire`` (incremental: an event leaves as soon as its bytes arrived);
8. errors: ``error_from_wire``;
9. ``capabilities`` and ``ADAPTER``.

No adapter does I/O or imports vcrpy, httpx, an SDK or the MCP SDK.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from itertools import repeat
from operator import itemgetter
from typing import Any, Protocol

import orjson

from conformance.errors import AdapterContractError, ProviderError, UnsupportedContentError
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Finish,
    JSONObject,
    Reasoning,
    Request,
    Resource,
    Response,
    StreamEvent,
    Text,
    Tool,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)

__all__ = [
    "CAPABILITIES",
    "CONTRACT_FUNCTIONS",
    "PROMPT_FORMATS",
    "WIRE_FORMATS",
    "Adapter",
    "CallTracker",
    "NameMap",
    "NameRule",
    "SchemaChange",
    "WireRequest",
    "WireTools",
    "compact_text",
    "contract_problems",
    "dumps_compact",
    "error_kind_from_status",
    "header",
    "load_json_body",
    "name_map",
    "object_schema",
    "parse_arguments",
    "reasoning_note",
    "result_texts",
    "retry_after_from_headers",
    "stream_broken",
    "synthetic_call_id",
]

CAPABILITIES = frozenset(
    {
        "streaming",
        "parallel_tool_calls",
        "disable_parallel_tool_calls",
        "tool_choice_auto",
        "tool_choice_none",
        "tool_choice_required",
        "tool_choice_named",
        "images_in_tool_results",
        "is_error_in_tool_results",
        "reasoning_replay",
        "reasoning_effort",
        "reasoning_budget",
        "reasoning_off",
        "cache_control",
        "system_prompt",
        "call_ids",
    }
)
"""Every capability an adapter may declare (scenarios ``require`` them)."""

WIRE_FORMATS = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
"""The HTTP wire formats an adapter may serve: request schemas, name rules, cassettes."""

PROMPT_FORMATS = ("qwen", "hermes", "function_call")
"""The prompt formats a prompt-based adapter may write (tools in the prompt, calls parsed from the
text, over the ``openai_chat`` wire): Qwen's ``✿FUNCTION✿``, Hermes ``<tool_call>``, and
``<function_call>``. Their cassettes hold replies in that format."""


# --------------------------------------------------------------------------------------------
# Values of the contract
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SchemaChange:
    """One lossy change made to a tool's input schema on its way to the wire."""

    tool: str
    """The tool's (MCP) name."""
    pointer: str
    """JSON pointer into the original ``input_schema``."""
    action: str
    """``dropped`` or ``changed``."""
    detail: str
    """What was done and why (cite the rule)."""


@dataclass(frozen=True, kw_only=True)
class NameMap:
    """The reversible mapping between MCP tool names and valid wire names."""

    to_wire: Mapping[str, str] = field(default_factory=dict)
    from_wire: Mapping[str, str] = field(default_factory=dict)

    def wire(self, name: str) -> str:
        return self.to_wire.get(name, name)

    def original(self, wire_name: str) -> str:
        return self.from_wire.get(wire_name, wire_name)


@dataclass(frozen=True, kw_only=True)
class WireTools:
    """``tools_to_wire`` output: the wire tool list plus what the translation changed."""

    tools: list[JSONObject]
    changes: tuple[SchemaChange, ...] = ()
    names: NameMap = field(default_factory=NameMap)


@dataclass(frozen=True, kw_only=True)
class WireRequest:
    """An HTTP request to send, without host or secrets."""

    method: str = "POST"
    path: str
    """Path and query, e.g. ``/v1/chat/completions`` or ``/v1beta/models/m:streamGenerateContent?alt=sse``."""
    body: JSONObject
    headers: Mapping[str, str] = field(default_factory=dict)
    """Non-secret headers the wire needs (``anthropic-version``); never keys."""
    stream: bool = False
    schema_changes: tuple[SchemaChange, ...] = ()
    notes: tuple[str, ...] = ()
    """What the adapter left out of the request and why, in one line each (reasoning another
    provider produced, which this one cannot verify); shown with the case."""


class _ToolsToWire(Protocol):
    def __call__(self, tools: Sequence[Tool], /) -> WireTools: ...


class _RequestFromWire(Protocol):
    def __call__(self, body: Mapping[str, Any], /, *, path: str = "", tools: Sequence[Tool] = ()) -> Request: ...


class _ResponseFromWire(Protocol):
    def __call__(self, body: Mapping[str, Any], /, *, tools: Sequence[Tool] = ()) -> Response: ...


class _StreamFromWire(Protocol):
    def __call__(self, chunks: Iterable[bytes], /, *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]: ...


class _ErrorFromWire(Protocol):
    def __call__(
        self, status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None, /
    ) -> ProviderError: ...


@dataclass(frozen=True, kw_only=True)
class Adapter:
    """A translator: pure functions between the unified model and one wire format.

    ``tools`` arguments give the unified tools of the conversation so wire names map back to
    the MCP names (``NameMap``); without them wire names come back unchanged.

    Building one checks the declarations (``AdapterContractError`` names the field and lists the
    valid values): ``wire_format`` is one of ``WIRE_FORMATS``, every capability one of
    ``CAPABILITIES``, a prompt-based adapter (``tools_in_prompt``) names its ``prompt_format``
    (one of ``PROMPT_FORMATS``), and every known gap has a reason.
    """

    name: str
    wire_format: str
    """The HTTP wire format served (one of ``WIRE_FORMATS``); prompt adapters ride ``openai_chat``."""
    capabilities: frozenset[str]
    tools_to_wire: _ToolsToWire
    request_to_wire: Callable[[Request], WireRequest]
    request_from_wire: _RequestFromWire
    response_from_wire: _ResponseFromWire
    stream_from_wire: _StreamFromWire
    error_from_wire: _ErrorFromWire
    tools_in_prompt: bool = False
    """True for a prompt-based adapter: the tools are written into the prompt and calls parsed out of
    the reply text, so the wire format's tool fields, tool-name rule and ``wire:`` expectations keyed
    by the wire format do not apply (those keyed by its ``prompt_format`` do)."""
    prompt_format: str | None = None
    """For a prompt-based adapter, the format of its prompt and replies (one of ``PROMPT_FORMATS``):
    the cassettes it is certified against."""
    known_gaps: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Check id, or ``check-id@scenario-glob``, to the reason: failing there is XFAIL, passing STALE."""
    request_differences: Mapping[str, str] = field(default_factory=dict, hash=False)
    """JSON path glob of the request body (``$.messages[*].content``, ``*`` any run of characters) to
    the reason it intentionally differs from the recorded traffic: ``translation.recorded_request``
    does not compare it."""

    def __post_init__(self) -> None:
        problems = contract_problems(self)
        if problems:
            raise AdapterContractError(f"adapter {self.name!r}: " + "; ".join(problems))
        object.__setattr__(self, "known_gaps", dict(self.known_gaps))  # a copy: the caller's dict may change later
        object.__setattr__(self, "request_differences", dict(self.request_differences))

    @property
    def traffic_format(self) -> str:
        """The format of the traffic this adapter is certified against: its prompt format when it
        is prompt-based, else its wire format. Cassettes live under ``<cassette-dir>/<traffic_format>/``."""
        return self.prompt_format if self.tools_in_prompt and self.prompt_format else self.wire_format


def contract_problems(adapter: Any) -> list[str]:
    """What an adapter-like object declares wrong (empty when it keeps the contract): used when an
    ``Adapter`` is built and when ``conformance run --adapter pkg.module:object`` loads any object."""
    problems: list[str] = []
    if not isinstance(getattr(adapter, "name", None), str) or not adapter.name:
        problems.append("name must be a non-empty string")
    wire = getattr(adapter, "wire_format", None)
    if wire not in WIRE_FORMATS:
        problems.append(f"unknown wire_format {wire!r} (valid: {', '.join(WIRE_FORMATS)})")
    capabilities = getattr(adapter, "capabilities", None)
    if not isinstance(capabilities, frozenset | set):
        problems.append(f"capabilities must be a set of capability names (valid: {', '.join(sorted(CAPABILITIES))})")
    elif unknown := sorted(str(c) for c in capabilities if c not in CAPABILITIES):
        problems.append(
            f"unknown capabilit{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)} "
            f"(valid: {', '.join(sorted(CAPABILITIES))})"
        )
    for function in CONTRACT_FUNCTIONS:
        if not callable(getattr(adapter, function, None)):
            problems.append(f"lacks {function} (a function of the contract)")
    in_prompt = getattr(adapter, "tools_in_prompt", False)
    prompt = getattr(adapter, "prompt_format", None)
    if not isinstance(in_prompt, bool):
        problems.append(f"tools_in_prompt must be True or False, not {in_prompt!r}")
    elif in_prompt and prompt not in PROMPT_FORMATS:
        problems.append(
            f"a prompt-based adapter (tools_in_prompt=True) names its prompt_format, one of "
            f"{', '.join(PROMPT_FORMATS)}, not {prompt!r}"
        )
    elif not in_prompt and prompt is not None:
        problems.append(f"prompt_format {prompt!r} is for a prompt-based adapter: set tools_in_prompt=True")
    gaps = getattr(adapter, "known_gaps", {})
    if not isinstance(gaps, Mapping):
        problems.append("known_gaps must be a mapping of check id (or check-id@scenario-glob) to its reason")
    else:
        for key, reason in gaps.items():
            if not isinstance(key, str) or not key.partition("@")[0]:
                problems.append(f"known_gaps key {key!r} is not a check id (or check-id@scenario-glob)")
            if not isinstance(reason, str) or not reason.strip():
                problems.append(f"known gap {key!r} needs a reason (a non-empty string)")
    differences = getattr(adapter, "request_differences", {})
    if not isinstance(differences, Mapping):
        problems.append("request_differences must be a mapping of JSON path glob ($.field...) to its reason")
    else:
        for key, reason in differences.items():
            if not isinstance(key, str) or not key.startswith("$"):
                problems.append(f"request_differences key {key!r} is not a JSON path glob starting with $")
            if not isinstance(reason, str) or not reason.strip():
                problems.append(f"request difference {key!r} needs a reason (a non-empty string)")
    return problems


CONTRACT_FUNCTIONS = (
    "tools_to_wire",
    "request_to_wire",
    "request_from_wire",
    "response_from_wire",
    "stream_from_wire",
    "error_from_wire",
)
"""The functions every adapter carries (docs/adapters.md)."""


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NameRule:
    """The tool names a wire accepts (wire-formats.md §8): every character in the regex character
    class ``allowed``, the first in ``first`` when that differs, at most ``max_len`` characters."""

    allowed: str
    max_len: int
    first: str = ""

    def map(self, names: Iterable[str]) -> NameMap:
        """``name_map`` under this rule."""
        return name_map(names, allowed=self.allowed, max_len=self.max_len, first=self.first)


def name_map(names: Iterable[str], *, allowed: str, max_len: int, first: str = "") -> NameMap:
    """A deterministic, collision-free, reversible map from MCP names to names valid on a wire.

    ``allowed`` is a regex character class body (``a-zA-Z0-9_-``) and ``first`` one the first
    character must match (``a-zA-Z_`` for Gemini). A valid name stays as it is. Otherwise each
    invalid character becomes ``_`` (``_`` is prefixed when the first character is not allowed
    there) and, when that is too long or collides, the name is cut and given an 8-hex suffix
    from its SHA-256 (E14). Reverse with ``NameMap.original``.
    """
    head = f"[{first}]" if first else f"[{allowed}]"
    valid = re.compile(f"{head}[{allowed}]{{0,{max_len - 1}}}")
    char_ok = re.compile(f"[{allowed}]")
    originals = list(dict.fromkeys(names))
    to_wire: dict[str, str] = {}
    taken = {n for n in originals if valid.fullmatch(n)}
    for name in originals:
        if valid.fullmatch(name):
            to_wire[name] = name
            continue
        cleaned = "".join(ch if char_ok.fullmatch(ch) else "_" for ch in name) or "_"
        if first and not re.match(f"[{first}]", cleaned):
            cleaned = "_" + cleaned
        if len(cleaned) > max_len or cleaned in taken:
            cleaned = _hashed_name(name, cleaned[: max_len - 9], taken)
        taken.add(cleaned)
        to_wire[name] = cleaned
    return NameMap(to_wire=to_wire, from_wire={w: n for n, w in to_wire.items()})


def _hashed_name(name: str, stem: str, taken: set[str]) -> str:
    """``stem`` + ``_`` + 8 hex digits of the name's SHA-256, re-salted in the (unlikely, but
    constructible) case that this too is taken, so the map stays collision-free."""
    salt = ""
    for attempt in range(1, 1_000_000):
        digest = hashlib.sha256((name + salt).encode("utf-8", "surrogatepass")).hexdigest()[:8]
        if (candidate := f"{stem}_{digest}") not in taken:
            return candidate
        salt = f"\x00{attempt}"
    raise AssertionError("unreachable: a million SHA-256 collisions")


def object_schema(tool: Tool) -> tuple[JSONObject, tuple[SchemaChange, ...]]:
    """The tool's input schema as an object schema: an empty or non-object schema becomes
    ``{"type": "object", "properties": {}}`` and the change is reported, never silent."""
    schema = dict(tool.input_schema)
    if schema.get("type") == "object":
        return schema, ()
    if not schema:
        why = "an empty schema became an empty object schema"
    elif "type" not in schema and "properties" in schema:
        schema["type"] = "object"
        return schema, (SchemaChange(tool=tool.name, pointer="/type", action="changed", detail="added type object"),)
    else:
        why = f"a non-object schema (type {schema.get('type')!r}) became an empty object schema"
    change = SchemaChange(tool=tool.name, pointer="", action="changed", detail=why)
    return {"type": "object", "properties": {}}, (change,)


# --------------------------------------------------------------------------------------------
# Tool results
# --------------------------------------------------------------------------------------------


def result_texts(result: ToolResult, refusal: str) -> list[str]:
    """The texts of a result on a wire whose tool results are text only (an MCP embedded text
    resource counts as text); any other item raises ``UnsupportedContentError(refusal)``, where
    ``{kind}`` stands for the item's kind."""
    texts: list[str] = []
    for item in result.content:
        if isinstance(item, Text):
            texts.append(item.text)
        elif isinstance(item, Resource) and item.text is not None:
            texts.append(item.text)
        else:
            raise UnsupportedContentError(refusal.format(kind=item.kind))
    return texts


# --------------------------------------------------------------------------------------------
# Ids and arguments
# --------------------------------------------------------------------------------------------


def reasoning_note(part: Reasoning, wire: str) -> str | None:
    """Why ``part`` is not sent on ``wire`` (None: it may be): reasoning another provider produced
    carries a signature or payload only that provider can verify (Gemini answers a foreign
    ``thought_signature`` with 400 "Base64 decoding failed", Anthropic checks ``signature``), so it is
    left out, and the adapter says so in ``WireRequest.notes``. A part with no ``source`` (a caller's
    own history) is the adapter's to judge by what its wire needs."""
    if part.source is None or part.source == wire:
        return None
    return f"reasoning produced by {part.source} left out: {wire} cannot verify another provider's reasoning"


def synthetic_call_id(*keys: object) -> str:
    """A deterministic id for a call the wire gave none: the same inputs give the same id."""
    digest = hashlib.sha256("\x1f".join(map(str, keys)).encode("utf-8", "surrogatepass")).hexdigest()
    return f"call_{digest[:24]}"


def dumps_compact(value: Any, *, parsed: bool = False) -> str:
    """Compact JSON text (used as ``arguments_raw`` for wires that send argument objects).

    ``parsed``: the value came from a JSON parser here (finite floats, string keys), so orjson may
    write it (see ``compact_text``). Other values (NaN, tuples, non-string keys ...) take ``json``."""
    if parsed:
        try:
            text = orjson.dumps(value)
        except TypeError:  # orjson.JSONEncodeError: integers beyond 64 bits, lone surrogates
            pass
        else:
            return compact_text(text, value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compact_text(text: bytes, value: Any) -> str:
    """``dumps_compact(value, parsed=True)`` given ``text = orjson.dumps(value)``. orjson's text is
    ``json.dumps``'s but for floats of magnitude 1e-9 to 1e-4 (orjson writes ``1e-7`` and
    ``0.00001``, ``json`` ``1e-07`` and ``1e-05``): the stdlib writes any text holding ``e-`` or
    ``0.0000``."""
    if b"e-" not in text and b"0.0000" not in text:
        return text.decode()
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_arguments(raw: str) -> tuple[JSONObject | None, str | None]:
    """Parse complete argument text: ``({...}, None)`` or ``(None, why)``; never raises.

    Empty or blank text means no arguments (``{}``, E3). Several JSON values under one call (E5)
    and non-object JSON are errors, as is invalid JSON (``NaN``/``Infinity`` included, RFC 8259
    §6); integers keep every digit. The raw text stays with the caller.
    """
    if not raw or raw.isspace():
        return {}, None
    try:
        value = _loads(raw)
    except ValueError:
        try:  # the stdlib also accepts what orjson refuses but JSON allows (lone surrogate escapes)
            value = _EXACT_JSON.decode(raw)
        except ValueError as exc:
            return None, _why_invalid(raw, exc)
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {_JSON_TYPE_NAMES.get(type(value), type(value).__name__)}, not an object"
    return value, None


_JSON_TYPE_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _why_invalid(raw: str, exc: ValueError) -> str:
    if not isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON in arguments: {exc}"
    if exc.msg == "Extra data":  # a complete value, then more: several values (E5) or trailing garbage
        try:
            _EXACT_JSON.raw_decode(raw, exc.pos)
        except ValueError:
            pass
        else:
            return "several JSON values in one call's arguments"
    return f"invalid JSON in arguments: {exc.msg} at position {exc.pos}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a JSON number")
    return value


_EXACT_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_LONG_DIGITS_BYTES = re.compile(rb"[0-9]{19}")


def _loads(data: bytes | str) -> Any:
    """orjson, except where an integer may lie beyond 64 bits: orjson turns those into floats
    silently (``123456789012345678901234567890`` -> ``1.2345678901234568e+29``, orjson 3.x) while
    the stdlib keeps every digit. Raises ``ValueError`` on anything that is not JSON.

    orjson parses first; only when that fails, or its result holds a float it would write with an
    exponent ``e+`` (which every float from such an integer is), does the older rule decide: any
    run of 19 digits sends the text to the stdlib. Elsewhere both parsers agree, so the result is
    the same as that rule's, without its regex over the whole text."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads_by_digits(data)
    try:
        exponent = isinstance(value, (dict, list, float)) and b"+" in orjson.dumps(value)
    except TypeError:  # nested deeper than orjson writes (it reads deeper than it writes)
        exponent = True
    return _loads_by_digits(data) if exponent else value


def _loads_by_digits(data: bytes | str) -> Any:
    if isinstance(data, str):
        if _LONG_DIGITS.search(data) is None:
            return orjson.loads(data)
        return _EXACT_JSON.decode(data)
    if _LONG_DIGITS_BYTES.search(data) is None:
        return orjson.loads(data)
    return _EXACT_JSON.decode(data.decode("utf-8"))


def load_json_body(body: bytes | str | Mapping[str, Any] | None) -> Any:
    """A body as parsed JSON (integers keep every digit); None when empty or not JSON."""
    if body is None or isinstance(body, Mapping):
        return body
    try:
        return _loads(body) if body else None
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the stdlib parser goes
        return None


# --------------------------------------------------------------------------------------------
# Stream state for tool calls
# --------------------------------------------------------------------------------------------


class CallTracker:
    """Per-stream tool-call state, keyed by whatever the wire keys fragments by (index, item id).

    It guarantees the event lifecycle: one start per call with a stable id and a running
    ``index``, chunks only while open, and an end whose complete text is the chunks joined.
    """

    __slots__ = ("_count", "_open", "names")

    def __init__(self, names: NameMap | None = None) -> None:
        self.names = names or NameMap()
        self._open: dict[Hashable, tuple[str, list[str]]] = {}
        self._count = 0

    @property
    def count(self) -> int:
        """How many calls have started."""
        return self._count

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def call_id(self, key: Hashable) -> str | None:
        entry = self._open.get(key)
        return entry[0] if entry is not None else None

    def start(
        self, key: Hashable, call_id: str, wire_name: str, provider_details: Mapping[str, Any] | None = None
    ) -> ToolCallStart:
        self._open[key] = (call_id, [])
        index = self._count
        self._count += 1
        return ToolCallStart(call_id, self.names.original(wire_name), index, provider_details or {})

    def chunk(self, key: Hashable, text: str) -> ToolCallChunk | None:
        entry = self._open.get(key)
        if entry is None or not text:
            return None
        entry[1].append(text)
        return ToolCallChunk(entry[0], text)

    def chunks(self, key: Hashable, texts: list[str]) -> list[ToolCallChunk] | None:
        """``chunk`` of each of ``texts`` (all non-empty) for one call, at once; None, with nothing
        recorded, when the call is not open."""
        entry = self._open.get(key)
        if entry is None:
            return None
        call_id, buffer = entry
        buffer += texts
        return list(map(ToolCallChunk, repeat(call_id, len(texts)), texts))

    def chunks_of(self, keys: list[Hashable], texts: list[str]) -> list[ToolCallChunk] | None:
        """``chunks`` with one call per text (``keys[i]`` for ``texts[i]``: interleaved calls); None,
        with nothing recorded, when one of those calls is not open."""
        open_calls = self._open
        if not all(map(open_calls.__contains__, set(keys))):
            return None
        entries = list(map(open_calls.__getitem__, keys))
        for (_, buffer), text in zip(entries, texts, strict=True):
            buffer.append(text)
        return list(map(ToolCallChunk, map(itemgetter(0), entries), texts))

    def end(
        self, key: Hashable, *, error: str | None = None, arguments: JSONObject | None = None
    ) -> ToolCallEnd | None:
        """Close the call. ``arguments`` gives an already-parsed object (object-valued wires);
        ``error`` forces an arguments error (cut by length, stream ended ...)."""
        entry = self._open.pop(key, None)
        if entry is None:
            return None
        call_id, chunks = entry
        raw = "".join(chunks)
        if error is not None:
            return ToolCallEnd(call_id, raw, None, error)
        if arguments is not None:
            return ToolCallEnd(call_id, raw, arguments, None)
        parsed, why = parse_arguments(raw)
        return ToolCallEnd(call_id, raw, parsed, why)

    def end_all(self, *, error: str | None = None) -> list[ToolCallEnd]:
        return [e for key in list(self._open) if (e := self.end(key, error=error)) is not None]


def stream_broken(tracker: CallTracker, kind: ErrorKind, message: str) -> list[StreamEvent]:
    """The tail of a stream that broke: open calls end with an arguments error, then an error
    event and ``finish(error)``."""
    events: list[StreamEvent] = list(tracker.end_all(error=message))
    events.append(ErrorEvent(ErrorInfo(kind=kind, message=message)))
    events.append(Finish("error"))
    return events


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

_STATUS_KINDS: dict[int, ErrorKind] = {
    400: "invalid_request",
    401: "auth",
    403: "permission",
    404: "not_found",
    408: "server",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit",
    500: "server",
    502: "server",
    503: "overloaded",
    504: "server",
    529: "overloaded",
}


def error_kind_from_status(status: int) -> ErrorKind:
    """The error kind an HTTP status implies when the body says nothing more specific."""
    if status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    if status >= 500:
        return "server"
    if status >= 400:
        return "invalid_request"
    return "unknown"


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup."""
    name = name.lower()
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def retry_after_from_headers(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` (preferred, as the OpenAI and Anthropic SDKs do) or
    ``retry-after`` (seconds or an HTTP date, measured from the ``date`` header: no clock here).
    Values that are not a finite, non-negative number of seconds are ignored."""
    ms = header(headers, "retry-after-ms")
    if ms is not None and (seconds := _seconds(ms, 1000.0)) is not None:
        return seconds
    value = header(headers, "retry-after")
    if value is None:
        return None
    if (seconds := _seconds(value)) is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    date = header(headers, "date")
    if date is not None:
        try:
            return max(0.0, (when - parsedate_to_datetime(date)).total_seconds())
        except (TypeError, ValueError):
            return None
    return None


def _seconds(text: str, per_second: float = 1.0) -> float | None:
    try:
        value = float(text) / per_second
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
