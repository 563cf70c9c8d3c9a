"""Gemini Developer API wire format (``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse``); Vertex AI ``generateContent`` bodies are read too.

Sources: wire-formats.md §4, §8, §9 rule 5, E10, E14-E19, E23, E31, E32 (google-genai ``types.py``,
``_transformers.py``, ``_api_client.py``, ``_extra_utils.py``); the real recordings in
``tests/realworld/cassettes/gemini``; Vertex ``Candidate.FinishReason`` numbers from the generated
``aiplatform_v1/types/content.py``. Request pieces live in ``_gemini_request``, the schema
conversion in ``_gemini_schema``.

Quirks handled here:
- tools go out as ``parameters`` in the OpenAPI-3.0 Schema subset (``$ref`` inlined, nullable
  types, rejected keywords dropped, every change a ``SchemaChange``, E15); a tool read from
  ``parametersJsonSchema`` goes back out there untouched;
- calls arrive whole, ``args`` may be absent (= ``{}``); ``functionCall.id`` is used when sent (E31),
  otherwise the id is synthetic, deterministic, marked ``provider_details["synthetic_id"]`` and never
  sent; a ``functionResponse`` without id answers the previous turn's call by order and name;
- ``thoughtSignature`` rides in ``provider_details`` (calls) or ``Reasoning.signature`` and is
  replayed byte for byte on the part that carried it (E10; issue28-wire-facts §2a-c); ``thought:
  true`` text is reasoning (``source="gemini"``); a signed non-thought text part folds to its text
  plus a signature-only ``Reasoning`` (``provider_details["thought"] = False``), replayed as a signed
  empty text part, so a signature streamed on a part of its own (``{"text": "", "thoughtSignature"}``
  in a later chunk, §2b) stays one and goes back in the same place: which call it belongs to is not
  documented. Reasoning from another wire is left out (``WireRequest.notes``, ``_gemini_request``);
  a ``thoughtSignature`` that is not a string is a ``malformed_response``;
- reasoning settings: ``generationConfig.thinkingConfig`` (google-genai ``ThinkingConfig``:
  ``includeThoughts``, ``thinkingBudget`` (0 = off), ``thinkingLevel`` MINIMAL/LOW/MEDIUM/HIGH;
  issue28-wire-facts §2e), read back in camelCase or snake_case (REC openinference
  ``..._multiple_tool_calls``); a ``thinkingConfig`` the settings cannot say exactly (``-1``
  automatic budget, unknown keys) stays in ``provider_details`` as sent;
- usage: ``thoughtsTokenCount`` -> ``reasoning_tokens``, ``cachedContentTokenCount`` ->
  ``cache_read_tokens`` (google-genai ``GenerateContentResponseUsageMetadata``); the wire has no
  cache-write count (§2f);
- results: one user content of ``functionResponse`` parts whose ``response`` is an object,
  ``{"result": ...}`` or ``{"error": ...}`` for ``is_error`` (E16, E18); images in
  ``functionResponse.parts[].inlineData``; ``STOP`` with calls -> ``tool_calls``; Vertex
  ``enum-encoding=int`` finish reasons are numbers;
- streams: SSE with CRLF, or a JSON array without ``alt=sse``; no terminator exists, so a stream
  that ends before a ``finishReason`` is ``stream_incomplete``; usage on every chunk (last wins, E19).

Round-trip normalisations (``request_to_wire(request_from_wire(body))``): several
``functionDeclarations`` entries are merged into one, and ``parameters`` are re-run through the
schema conversion (the identity for schemas already in the subset). Response parts with no unified
type (model ``inlineData``, ``executableCode``, ...) are skipped; request parts of that kind are kept
verbatim in ``Message.provider_details["raw_parts"]``. Vertex ``partialArgs`` streaming is not
supported (``malformed_response``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import chain
from typing import Any

import orjson

from conformance.adapters._gemini_json import args_texts, parse_chunk, read_usage, retry_delay
from conformance.adapters._gemini_request import (
    PATH_PREFIX,
    WIRE,
    contents_from_wire,
    contents_to_wire,
    max_tokens_from_wire,
    path_from_wire,
    pick,
    spelled,
    system_from_wire,
    system_to_wire,
    tool_choice_from_wire,
    tool_config_to_wire,
    without,
)
from conformance.adapters._gemini_schema import gemini_parameters
from conformance.adapters._tool_output import WIRE_CARRIES, request_view
from conformance.adapters.base import (
    Adapter,
    CallTracker,
    NameMap,
    NameRule,
    SchemaChange,
    WireRequest,
    WireTools,
    dumps_compact,
    error_kind_from_status,
    load_json_body,
    retry_after_from_headers,
    stream_broken,
    synthetic_call_id,
)
from conformance.assembly import fold
from conformance.errors import ProviderError, UnsupportedContentError, WireFormatError
from conformance.framing import JSONArrayDecoder, Run, SSEDecoder, line_pieces
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    JSONObject,
    ReasoningDelta,
    ReasoningEffort,
    ReasoningSettings,
    Request,
    Response,
    StreamEvent,
    TextDelta,
    Tool,
    Usage,
    UsageEvent,
)

__all__ = [
    "ADAPTER",
    "capabilities",
    "error_from_wire",
    "request_from_wire",
    "request_to_wire",
    "response_from_wire",
    "stream_from_wire",
    "tools_to_wire",
]

# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

_FINISH_REASONS: dict[str, FinishReason] = {
    # google-genai FinishReason; STOP with calls becomes tool_calls (§4c)
    "STOP": "stop",
    "MAX_TOKENS": "length",
    **dict.fromkeys(
        "SAFETY RECITATION BLOCKLIST PROHIBITED_CONTENT SPII MODEL_ARMOR IMAGE_SAFETY IMAGE_PROHIBITED_CONTENT"
        " IMAGE_RECITATION".split(),
        "content_filter",
    ),
    "MALFORMED_FUNCTION_CALL": "malformed_tool_call",  # kept distinct from other
    **dict.fromkeys("UNEXPECTED_TOOL_CALL TOO_MANY_TOOL_CALLS LANGUAGE OTHER".split(), "other"),
}

_VERTEX_FINISH_REASONS: tuple[str, ...] = tuple(
    # Vertex ``?$alt=json;enum-encoding=int`` sends the proto numbers of aiplatform.v1 Candidate.FinishReason:
    # index = number (generated aiplatform_v1/types/content.py). google-genai's FinishReason lists the same
    # names in another order (with the Gemini-API-only LANGUAGE, without MODEL_ARMOR): not the numbers.
    "FINISH_REASON_UNSPECIFIED STOP MAX_TOKENS SAFETY RECITATION OTHER BLOCKLIST PROHIBITED_CONTENT SPII"
    " MALFORMED_FUNCTION_CALL MODEL_ARMOR IMAGE_SAFETY IMAGE_PROHIBITED_CONTENT IMAGE_RECITATION IMAGE_OTHER"
    " UNEXPECTED_TOOL_CALL NO_IMAGE".split()
)

_ERROR_KINDS: dict[str, ErrorKind] = {
    # error.status (google.rpc.Code names, §4e), and ErrorInfo reasons in error.details
    "API_KEY_INVALID": "auth",
    "INVALID_ARGUMENT": "invalid_request",
    "FAILED_PRECONDITION": "invalid_request",
    "OUT_OF_RANGE": "invalid_request",
    "UNAUTHENTICATED": "auth",
    "PERMISSION_DENIED": "permission",
    "NOT_FOUND": "not_found",
    "RESOURCE_EXHAUSTED": "rate_limit",
    "UNAVAILABLE": "overloaded",
    "INTERNAL": "server",
    "DEADLINE_EXCEEDED": "server",
}

_CONTEXT_LENGTH = "exceeds the maximum number of tokens"
"""400 INVALID_ARGUMENT "The input token count (N) exceeds the maximum number of tokens allowed (M)."
(google-gemini/gemini-cli#4231, #6678)."""

_NAME_RULE = NameRule(allowed="a-zA-Z0-9_.:-", max_len=128, first="a-zA-Z_")  # §4a, E14

_SCHEMA_FIELDS = ("parameters", "parametersJsonSchema", "parameters_json_schema")


def _names(tools: Sequence[Tool]) -> NameMap:
    return _NAME_RULE.map(t.name for t in tools)


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> ``tools: [{"functionDeclarations": [...]}]`` with ``parameters`` converted to the
    Gemini Schema subset (every change reported); a tool read from ``parametersJsonSchema`` keeps it."""
    names = _names(tools)
    declarations: list[JSONObject] = []
    changes: list[SchemaChange] = []
    for tool in tools:
        field = tool.provider_details.get("schema_field", "parameters")
        declaration: JSONObject = {"name": names.wire(tool.name)}
        if tool.description is not None:
            declaration["description"] = tool.description
        if field == "parameters":
            schema, changed = gemini_parameters(tool)
            declaration["parameters"] = schema
            changes.extend(changed)
        elif field is not None:
            declaration[str(field)] = dict(tool.input_schema)  # raw JSON Schema, forwarded as is (§4a)
        declaration.update(tool.provider_details.get("extra", {}))
        declarations.append(declaration)
    wire: list[JSONObject] = [{"functionDeclarations": declarations}] if declarations else []
    return WireTools(tools=wire, changes=tuple(changes), names=names)


def _tool_from_wire(declaration: Mapping[str, Any]) -> Tool:
    field = next((f for f in _SCHEMA_FIELDS if f in declaration), None)
    extra = without(declaration, "name", "description", *((field,) if field else ()))
    description = declaration.get("description")
    if "description" in declaration and not isinstance(description, str):
        extra["description"], description = description, None
    details: JSONObject = {}
    if field != "parameters":
        details["schema_field"] = field
    if extra:
        details["extra"] = extra
    return Tool(
        name=str(declaration.get("name", "")),
        description=description,
        input_schema=declaration.get(field) or {} if field else {},
        provider_details=details,
    )


def _tools_from_wire(raw: Any, details: JSONObject, extra: JSONObject, spelling: dict[str, str]) -> list[Tool]:
    if raw is None:
        return []
    tools: list[Tool] = []
    others: list[list[Any]] = []
    for index, entry in enumerate(raw if isinstance(raw, list) else ()):
        declarations = pick(entry, "functionDeclarations", spelling) if isinstance(entry, Mapping) else None
        if not isinstance(declarations, list):
            others.append([index, entry])
            continue
        if entry_extra := without(entry, "functionDeclarations", "function_declarations"):
            details["function_tool_extra"] = entry_extra
        tools.extend(_tool_from_wire(d) for d in declarations)
    if not tools:
        extra["tools"] = raw
    elif others:
        details["tool_entries"] = others
    return tools


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> ``generateContent`` body; the path carries the model and the stream mode."""
    request, result_notes = request_view(request, carries=WIRE_CARRIES["gemini"], wire="gemini")  # docs/mcp.md
    details = request.provider_details
    if request.parallel_tool_calls is False:
        raise UnsupportedContentError("Gemini has no switch to turn parallel function calls off (§4a)")
    wire_tools = tools_to_wire(request.tools)
    names = wire_tools.names
    notes: list[str] = list(result_notes)
    body: JSONObject = {}
    if not details.get("no_contents"):
        body["contents"] = contents_to_wire(request.messages, names, notes)
    if request.system is not None:
        body[spelled("systemInstruction", details)] = system_to_wire(request.system, details)
    if request.tools:
        entries = [{spelled("functionDeclarations", details): wire_tools.tools[0]["functionDeclarations"]}]
        entries[0].update(details.get("function_tool_extra", {}))
        for index, entry in details.get("tool_entries", ()):
            entries.insert(index, entry)
        body["tools"] = entries
    tool_config = tool_config_to_wire(request.tool_choice, names, details)
    if tool_config is not None:
        body[spelled("toolConfig", details)] = tool_config
    body.update(details.get("extra", {}))
    config_key = spelled("generationConfig", details)
    if request.max_tokens is not None:
        body[config_key] = {**body.get(config_key, {}), spelled("maxOutputTokens", details): request.max_tokens}
    if request.reasoning is not None:
        thinking = _reasoning_settings_to_wire(request.reasoning, details)
        body[config_key] = {**body.get(config_key, {}), spelled("thinkingConfig", details): thinking}
    method = "streamGenerateContent" if request.stream else "generateContent"
    query = details.get("query", "alt=sse" if request.stream else "")
    path = f"{details.get('path_prefix', PATH_PREFIX)}{request.model}:{method}" + (f"?{query}" if query else "")
    return WireRequest(
        path=path, body=body, stream=request.stream, schema_changes=wire_tools.changes, notes=tuple(notes)
    )


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """``generateContent`` body (and its path or URL, which hold model and stream mode) -> unified request."""
    if not isinstance(body, Mapping):
        raise WireFormatError("a Gemini request body must be a JSON object")
    names = _names(tools) if tools else NameMap()
    spelling: dict[str, str] = {}
    details: JSONObject = {}
    model, stream = path_from_wire(path, details)
    handled = {"contents", "tools", "systemInstruction", "system_instruction", "toolConfig", "tool_config"}
    extra = {k: v for k, v in body.items() if k not in handled}
    max_tokens = max_tokens_from_wire(body, extra, spelling)
    reasoning = _settings_from_config(extra, details, spelling)
    wire_tools = _tools_from_wire(body.get("tools"), details, extra, spelling)
    system = system_from_wire(pick(body, "systemInstruction", spelling), details)
    tool_choice = tool_choice_from_wire(pick(body, "toolConfig", spelling), names, details, spelling)
    contents = body.get("contents", [])
    if not isinstance(contents, list):
        raise WireFormatError("contents must be a list of Content objects")
    if "contents" not in body:
        details["no_contents"] = True
    if extra:
        details["extra"] = extra
    if spelling:
        details["spelling"] = spelling
    return Request(
        model=model,
        system=system,
        messages=tuple(contents_from_wire(contents, names)),
        tools=tuple(replace(t, name=names.original(t.name)) for t in wire_tools),
        tool_choice=tool_choice,
        stream=stream,
        max_tokens=max_tokens,
        reasoning=reasoning,
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Reasoning settings (generationConfig.thinkingConfig)
# --------------------------------------------------------------------------------------------

_LEVELS: dict[str, str] = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}
"""``ReasoningSettings.effort`` -> ``thinkingLevel`` (google-genai ``ThinkingLevel``)."""
_THINKING_KEYS = frozenset(
    {"includeThoughts", "include_thoughts", "thinkingBudget", "thinking_budget", "thinkingLevel", "thinking_level"}
)


def _reasoning_settings_to_wire(settings: ReasoningSettings, details: Mapping[str, Any] | None = None) -> JSONObject:
    """The caller's reasoning settings -> ``generationConfig.thinkingConfig`` (issue28-wire-facts §2e):
    off is ``thinkingBudget: 0``; otherwise ``includeThoughts: true`` (so thought text comes back,
    as REC llm-gemini ``test_tools`` asks) with ``thinkingLevel`` for an effort and ``thinkingBudget``
    for a budget. ``details`` (from ``request_from_wire``) keep a level's spelling, the snake_case
    keys and an ``includeThoughts`` the client left out or set false."""
    details = details or {}
    config: JSONObject = {}
    include = details.get("thinking_include", None if not settings.enabled else True)
    if include is not None:
        config[spelled("includeThoughts", details)] = include
    if not settings.enabled:
        if settings.effort is not None or settings.budget_tokens is not None:
            raise UnsupportedContentError(
                "reasoning is off yet has an effort or a budget: Gemini turns thinking off with thinkingBudget 0; "
                "give one or the other"
            )
        config[spelled("thinkingBudget", details)] = 0
        return config
    if settings.effort is not None:
        level = details.get("thinking_level")
        config[spelled("thinkingLevel", details)] = (
            level if isinstance(level, str) and level.lower() == settings.effort else _LEVELS[settings.effort]
        )
    if settings.budget_tokens is not None:
        config[spelled("thinkingBudget", details)] = settings.budget_tokens
    return config


def _reasoning_settings_from_wire(config: Any) -> tuple[ReasoningSettings | None, JSONObject]:
    """A ``thinkingConfig`` -> the settings it says and the details that give it back exactly, or
    ``(None, {})`` when the settings cannot say it (``-1`` automatic budget, a level or key not in
    google-genai's ``ThinkingConfig``)."""
    if not isinstance(config, Mapping) or not config or not set(config) <= _THINKING_KEYS:
        return None, {}
    spelling: dict[str, str] = {}
    include = pick(config, "includeThoughts", spelling)
    budget = pick(config, "thinkingBudget", spelling)
    level = pick(config, "thinkingLevel", spelling)
    details: JSONObject = {}
    if spelling:
        details["spelling"] = spelling
    if budget is not None and (type(budget) is not int or budget < 0):
        return None, {}
    effort: ReasoningEffort | None = None
    if level is not None:
        if not isinstance(level, str) or level.lower() not in _LEVELS:
            return None, {}
        effort = next(e for e in ("minimal", "low", "medium", "high") if e == level.lower())
        if level != _LEVELS[level.lower()]:
            details["thinking_level"] = level  # spelled otherwise (litellm: "low"): given back as sent
    off = budget == 0 and level is None
    settings = ReasoningSettings(enabled=False) if off else ReasoningSettings(effort=effort, budget_tokens=budget)
    if include is not (None if off else True):
        details["thinking_include"] = include  # None: left out by the client
    try:
        again = _reasoning_settings_to_wire(settings, details)
    except UnsupportedContentError:
        return None, {}
    return (settings, details) if again == dict(config) else (None, {})


def _settings_from_config(extra: JSONObject, details: JSONObject, spelling: dict[str, str]) -> ReasoningSettings | None:
    """``generationConfig.thinkingConfig`` (still in ``extra``) -> ``Request.reasoning`` when the
    settings say it exactly; the config then leaves ``extra`` and its details join ``details``."""
    config_spelling: dict[str, str] = {}
    config = pick(extra, "generationConfig", config_spelling)
    if not isinstance(config, Mapping):
        return None
    thinking_spelling: dict[str, str] = {}
    settings, found = _reasoning_settings_from_wire(pick(config, "thinkingConfig", thinking_spelling))
    if settings is None:
        return None
    config_key = config_spelling.get("generationConfig", "generationConfig")
    rest = without(config, thinking_spelling.get("thinkingConfig", "thinkingConfig"))
    if rest:
        extra[config_key] = rest
    else:
        del extra[config_key]
    spelling.update(config_spelling, **thinking_spelling, **found.pop("spelling", {}))
    details.update(found)
    return settings


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def _events_from_body(body: Mapping[str, Any], names: NameMap) -> Iterator[StreamEvent]:
    """A non-streamed ``GenerateContentResponse`` as the events its stream would give."""
    state = _Stream(names)
    yield from state.feed(body if isinstance(body, dict) else dict(body))
    yield from state.close(whole=True)


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``GenerateContentResponse`` body -> unified response (the same fold streams use)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("a GenerateContentResponse must be a JSON object")
    details = {k: body[k] for k in ("responseId", "modelVersion") if k in body}
    candidates = body.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    if isinstance(first, Mapping) and "finishMessage" in first:
        details["finishMessage"] = first["finishMessage"]  # e.g. the text of a MALFORMED_FUNCTION_CALL
    return fold(_events_from_body(body, _names(tools)), provider_details=details)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


_THOUGHT: Mapping[str, Any] = {"thought": True}
_NOT_THOUGHT: Mapping[str, Any] = {"thought": False}


class _Stream:
    """State of one ``GenerateContentResponse`` stream (§4d, §9 rule 5)."""

    __slots__ = (
        "args_texts",
        "blocked",
        "done",
        "finish_reason",
        "parsed",
        "produced_calls",
        "response_id",
        "thinking",
        "tracker",
        "usage",
        "usage_raw",
    )

    def __init__(self, names: NameMap) -> None:
        self.tracker = CallTracker(names)
        self.finish_reason: str | None = None
        self.blocked: str | None = None
        self.produced_calls = False
        self.response_id = ""
        self.thinking = False  # an unsigned thought block is open (fold would join what follows)
        self.usage_raw: dict[str, Any] | None = None
        self.usage = Usage()
        self.done = False
        self.parsed = False  # every value came from parsing stream bytes here (see dumps_compact)
        self.args_texts: dict[int, str] = {}  # compact texts of this chunk's call arguments, by id

    def feed_sse(self, data: bytes, *, last: bool = False) -> list[StreamEvent]:
        """One SSE ``data`` payload as bytes: read as ``feed_data`` reads its text (invalid UTF-8
        replaced), parsing the bytes directly when that gives the same value (``base._loads``)."""
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            return self.feed_data(data.decode("utf-8", "replace"), last=last)
        if b"functionCall" in data and isinstance(chunk, dict):
            texts = args_texts(chunk)
            if texts is None:  # maybe an integer beyond 64 bits, which orjson made a float
                return self.feed_data(data.decode("utf-8", "replace"), last=last)
            self.args_texts = texts
            try:
                return self.feed(chunk)
            finally:
                self.args_texts = {}
        return self.feed(chunk)

    def feed_data(self, data: str | bytes, *, last: bool = False) -> list[StreamEvent]:
        """One SSE ``data`` payload or JSON-array element; ``last`` when it came from the decoder's flush."""
        if not data:
            return []
        chunk = parse_chunk(data)
        if chunk is None:
            self.done = True
            kind: ErrorKind = "stream_incomplete" if last else "malformed_response"
            text = data if isinstance(data, str) else data.decode("utf-8", "replace")
            return stream_broken(self.tracker, kind, f"invalid JSON in a stream chunk: {text[:80]!r}")
        return self.feed(chunk)

    def feed(self, chunk: Any) -> list[StreamEvent]:
        # parsed JSON: objects are dicts (isinstance against the Mapping ABC costs more per event)
        if not isinstance(chunk, dict):
            self.done = True
            return stream_broken(self.tracker, "malformed_response", "a stream chunk is not a JSON object")
        if chunk.get("error"):  # §4d: an error payload inside a 200 stream
            self.done = True
            info = _error_info(chunk["error"], None, {})
            return [
                *self.tracker.end_all(error=f"the stream failed: {info.message}"),
                ErrorEvent(info),
                Finish("error"),
            ]
        if not self.response_id and chunk.get("responseId"):
            self.response_id = str(chunk["responseId"])
        events: list[StreamEvent] = []
        candidates = chunk.get("candidates")
        if isinstance(candidates, list) and candidates:
            candidate = candidates[0]
            if isinstance(candidate, dict) and not candidate.get("index"):  # candidate 0 only
                content = candidate.get("content")
                parts = content.get("parts") if isinstance(content, dict) else None
                if isinstance(parts, list):
                    for part in parts:
                        if isinstance(part, dict) and not self._part(part, events):
                            self.done = True
                            return events
                reason = candidate.get("finishReason")
                if reason is not None:
                    self.finish_reason = _finish_name(reason)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            self.blocked = str(feedback["blockReason"])  # the prompt was blocked: no candidates
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict) and usage:
            if usage != self.usage_raw:  # usually repeated on every chunk (E19): one Usage per new value
                self.usage_raw, self.usage = usage, read_usage(usage)
            events.append(UsageEvent(self.usage))
        return events

    def _part(self, part: dict[str, Any], events: list[StreamEvent]) -> bool:
        text = part.get("text")
        signature = part.get("thoughtSignature")
        if signature is not None and type(signature) is not str:  # bytes as base64 (google-genai Part)
            message = f"a thoughtSignature that is not a base64 string but {type(signature).__name__}"
            events.extend(stream_broken(self.tracker, "malformed_response", message))
            return False
        if isinstance(text, str) or (signature is not None and "functionCall" not in part):
            text = text if isinstance(text, str) else ""
            if part.get("thought"):
                if text or signature is not None:
                    events.append(ReasoningDelta(text, signature=signature, source=WIRE))
                    self.thinking = signature is None
                return True
            if text:
                events.append(TextDelta(text))
                self.thinking = False
            if signature is not None:  # E10: a signed (often empty, trailing) text part; replayed as one
                if self.thinking:  # keep the open thought block apart from this signature
                    events.append(ReasoningDelta("", provider_details=_THOUGHT, source=WIRE))
                events.append(ReasoningDelta("", signature=signature, provider_details=_NOT_THOUGHT, source=WIRE))
                self.thinking = False
            return True
        call = part.get("functionCall")
        if call is None:
            return True  # parts the unified model has no type for (see the module docstring)
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(call, dict) or "partialArgs" in call or call.get("willContinue") or not name:
            message = "a functionCall that is not an object with a name"
            if isinstance(call, dict) and ("partialArgs" in call or call.get("willContinue")):
                message = "Vertex streamed function-call arguments (partialArgs) are not supported"
            events.extend(stream_broken(self.tracker, "malformed_response", message))
            return False
        tracker = self.tracker
        key = tracker.count
        name = str(name)
        args = call.get("args")
        if args is None or isinstance(args, str):
            raw = args or ""
        elif (text := self.args_texts.get(id(args))) is not None:
            raw = text
        else:
            raw = dumps_compact(args, parsed=self.parsed)
        details: JSONObject = {}
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = synthetic_call_id("gemini", self.response_id, key, name, raw)  # E31: usually no id
            details["synthetic_id"] = True
        if signature is not None:
            details["thoughtSignature"] = signature
        self.thinking = False
        events.append(tracker.start(key, call_id, name, details))
        if (fragment := tracker.chunk(key, raw)) is not None:
            events.append(fragment)
        # args absent = no arguments (§4c, E3); args that are not an object: parse_arguments reports it
        whole = args is None or isinstance(args, dict)
        end = tracker.end(key, arguments=args or {}) if whole else tracker.end(key)
        if end is not None:
            events.append(end)
        self.produced_calls = True
        return True

    def close(self, *, whole: bool = False) -> list[StreamEvent]:
        """End of input. ``whole`` for a non-streamed body, which cannot be cut short."""
        if self.done:
            return []
        self.done = True
        raw = self.blocked or self.finish_reason
        if raw is None:
            if not whole:  # no terminator exists: without a finishReason the stream was cut (§4d)
                return stream_broken(self.tracker, "stream_incomplete", "the stream ended without a finishReason")
            return [Finish("tool_calls" if self.produced_calls else "other")]
        reason = "content_filter" if self.blocked else _FINISH_REASONS.get(raw, "other")
        if self.produced_calls and reason == "stop":
            reason = "tool_calls"
        return [Finish(reason, raw)]


def _finish_name(raw: Any) -> str:
    if isinstance(raw, int) and 0 <= raw < len(_VERTEX_FINISH_REASONS):
        return _VERTEX_FINISH_REASONS[raw]
    return str(raw)


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """Bytes of a ``:streamGenerateContent`` response -> normalized events, as the bytes arrive.

    SSE (``alt=sse``, CRLF) or, when the first non-blank byte is ``[``, the JSON array sent without
    ``alt=sse`` (§4d); a plain ``{...}`` body (E23) is read as a one-element array."""
    state = _Stream(_names(tools) if tools else NameMap())
    state.parsed = True
    rest = iter(chunks)
    head = b""
    for chunk in rest:  # the first non-blank byte tells the framing
        head += chunk
        if head.lstrip()[:1]:
            break
    first = head.lstrip()[:1]
    if first in (b"[", b"{"):
        array = JSONArrayDecoder()
        if first == b"{":
            array.decode(b"[")
        for chunk in chain((head,), rest):
            for item in array.decode(chunk):
                yield from state.feed_data(item)
                if state.done:
                    return
        for item in array.flush():  # an element that never closed
            yield from state.feed_data(item, last=True)
            if state.done:
                return
    elif first:
        decoder = SSEDecoder()
        for chunk in line_pieces(chain((head,), rest), sse=True):
            for event in decoder.decode_raw(chunk):
                assert not isinstance(event, Run)  # no template, no runs
                yield from state.feed_sse(event[1])
                if state.done:
                    return
        for event in decoder.flush_raw():  # a last event without its blank line
            yield from state.feed_sse(event[1], last=True)
            if state.done:
                return
    yield from state.close()


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _error_info(error: Any, status: int | None, headers: Mapping[str, str]) -> ErrorInfo:
    if not isinstance(error, Mapping):
        error = {"message": str(error)}
    code = error.get("status") if isinstance(error.get("status"), str) else None
    message = str(error.get("message") or "")
    details = error.get("details")
    reasons = [str(d.get("reason")) for d in details if isinstance(d, Mapping)] if isinstance(details, list) else []
    kind: ErrorKind | None = next((_ERROR_KINDS[r] for r in reasons if r in _ERROR_KINDS), None)
    if kind is None and code == "INVALID_ARGUMENT" and _CONTEXT_LENGTH in message:
        kind = "context_length"
    if kind is None and code in _ERROR_KINDS:
        kind = _ERROR_KINDS[code]
    http = status if status is not None else error.get("code")
    if kind is None:
        kind = error_kind_from_status(http) if isinstance(http, int) and not isinstance(http, bool) else "unknown"
    retry_after = retry_after_from_headers(headers)
    if retry_after is None:
        retry_after = retry_delay(details)
    return ErrorInfo(
        kind=kind,
        message=message,
        status=status,
        retry_after=retry_after,
        code=code or None,
        provider_details={"details": details} if details else {},
    )


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """An HTTP error response -> typed provider error (§4e); the body may be a one-element JSON array
    (``:streamGenerateContent`` without ``alt=sse``, google-gemini/gemini-cli#6678)."""
    parsed = load_json_body(body)
    if isinstance(parsed, list) and parsed:
        parsed = parsed[0]
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    if error is None:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        error = {"message": text.strip() or f"HTTP {status}"}
    return ProviderError(_error_info(error, status, headers))


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset(
    "streaming parallel_tool_calls system_prompt reasoning_replay is_error_in_tool_results images_in_tool_results"
    " tool_choice_auto tool_choice_none tool_choice_required tool_choice_named"
    " reasoning_effort reasoning_budget reasoning_off".split()
)

ADAPTER = Adapter(
    name="gemini",
    wire_format="gemini",
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
