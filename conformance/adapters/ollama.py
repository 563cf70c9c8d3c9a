"""Ollama native chat wire format (``POST /api/chat``; NDJSON streams).

Sources: wire-formats.md §5, §8, §9 rule 6 and edge cases E3, E6, E8, E15 (OLLAMA ``api/types.go``
``Message``/``ToolCall``/``ToolFunctionParameters``/``ToolProperty``, ``server/routes.go``
``ChatHandler``/``toolCallId``/``streamResponse``, ``llm/server.go`` ``DoneReason``, ``docs/api.md``,
``docs/api/errors.mdx``, ``docs/api/streaming.mdx``, ``docs/capabilities/tool-calling.mdx``); the real
recordings in ``tests/realworld/cassettes/ollama``. The ``messages`` list is translated by the
private helper ``_ollama_messages`` (the message history, its own concern).

Quirks handled here:
- arguments are JSON *objects* (``arguments_raw`` is their compact JSON); a string is parsed as text;
- tool calls arrive whole, on a ``done: false`` line of the stream or in the body (E6); they stay open
  until the ``done: true`` line so a ``length`` finish ends them with an error (E8);
- call ids are optional (older servers send none): a missing id becomes a deterministic synthetic id
  (same bytes, same id; ``provider_details["synthetic_id"]``); the synthetic id of a call in the history
  is never put on the wire, neither as the call's ``id`` nor as its result's ``tool_call_id`` (Ollama
  pairs results by ``tool_name`` and order); a real id is echoed as ``tool_call_id`` (the server accepts
  it, ``api.Message.ToolCallID``); results read from the wire pair by ``tool_call_id``, then
  ``tool_name``, then order;
- ``done_reason`` is only ``stop``/``length`` (``load``/``unload`` for empty requests -> ``other``);
  ``stop`` with calls -> ``tool_calls``; a ``done: true`` without ``done_reason`` (pre-2024 servers) is
  ``stop``; no ``done: true`` line -> ``stream_incomplete``;
- a stream line ``{"error": ...}`` is an in-stream error (status stays 200, ``docs/api/errors.mdx``);
  error bodies carry only a message, so kinds come from the HTTP status (messages only mid-stream);
- the server keeps only some schema keywords (§5a, E15): the schema is sent unchanged and every keyword
  Ollama will ignore is reported as a ``SchemaChange`` (``dropped``);
- Ollama streams when ``stream`` is absent: ``request_to_wire`` always sends it, except for a body read
  from the wire without it (``provider_details["stream_omitted"]``);
- tool names: the server enforces no pattern (UNVERIFIED), but names go out under the OpenAI rule
  (``a-zA-Z0-9_-``, <= 64) because chat templates are trained on such names and it keeps tool lists
  portable; valid names are unchanged and ``tools=`` maps them back;
- no ``tool_choice`` and no parallel flag: ``none`` omits the tools (§8), ``required``/named and
  ``parallel_tool_calls=False`` raise ``UnsupportedContentError``;
- tool results have no error flag: ``is_error`` travels as an ``Error: `` prefix (read back from it);
  images in tool results are not sent (template-dependent, UNVERIFIED): ``UnsupportedContentError``;
- ``max_tokens`` travels as ``options.num_predict`` (``docs/api.md``, ``api.Options.NumPredict``);
- reasoning is ``message.thinking`` (``source="ollama"``; streamed in pieces before the content, §5d) and
  goes back on the assistant message (``_ollama_messages``; capability ``reasoning_replay``: the wire's
  only form, no signature to keep); a ``thinking`` that is not a string is
  malformed (``WireFormatError`` in a body or history, a ``malformed_response`` error in a stream);
- reasoning settings travel as ``think`` (ollama-python ``_types.py``: ``think: Optional[Union[bool, str]]``,
  "low"/"medium"/"high" for models with levels; issue 28 wire facts §5e): off -> ``false``, an effort ->
  that level (``minimal`` has none: ``UnsupportedContentError``), enabled alone -> ``true``; a token budget
  has no field (``UnsupportedContentError``). No reasoning or cache token counts exist on this wire (§5f).

Round-trip normalisations (wire -> unified -> wire is JSON-equal for every recorded body):
- a call's ``arguments`` sent as a JSON string comes back as an object;
- a present but non-object ``parameters`` schema comes back as an empty object schema (reported);
- images on a ``tool`` message ride opaquely in ``provider_details`` (not as result content).
Unified -> wire -> unified:
- ``tool_choice`` ``auto`` comes back as None; ``none`` as None without tools; ``parallel_tool_calls``
  True as None;
- several text parts of a message come back as one; a user message's images follow its text;
  ``Image.media_type`` is lost (Ollama takes bare base64 and sniffs the type);
- reasoning parts become the one ``thinking`` field; signatures are not carried (no field); a ``think``
  this adapter does not write (another level) stays raw in ``provider_details["extra"]``;
- ``is_error`` comes back from the ``Error: `` prefix; ``Tool.title``/``output_schema``/``annotations``
  are not carried (no field).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from conformance.adapters._ollama_messages import (
    SOURCE,
    message_from_wire,
    message_to_wire,
    result_from_wire,
    wire_call,
)
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
    object_schema,
    retry_after_from_headers,
    stream_broken,
    synthetic_call_id,
)
from conformance.assembly import fold
from conformance.errors import ProviderError, UnsupportedContentError, WireFormatError
from conformance.framing import NDJSONDecoder, line_pieces
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    JSONObject,
    Message,
    ReasoningDelta,
    ReasoningEffort,
    ReasoningSettings,
    Request,
    Response,
    StreamEvent,
    TextDelta,
    Tool,
    ToolCall,
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
    # llm/server.go DoneReason.String(); "load"/"unload" (empty requests) fall to "other"
    "stop": "stop",
    "length": "length",
}

_ERROR_KINDS: dict[str, ErrorKind] = {
    # message fragments, used only without an HTTP status (in-stream errors): Ollama errors carry no
    # type or code (docs/api/errors.mdx); HTTP errors take their kind from the status (§5e)
    "not found": "not_found",
    "does not support": "invalid_request",
    "exceeds the context length": "context_length",
    "unauthorized": "auth",
    "too many requests": "rate_limit",
    "rate limit": "rate_limit",
    "server busy": "overloaded",
}


_NAME_RULE = NameRule(allowed="a-zA-Z0-9_-", max_len=64)  # no server rule (UNVERIFIED): OpenAI's, E14

_PARAMETER_KEYS = frozenset({"type", "$defs", "items", "required", "properties"})
"""Keywords ``api.ToolFunctionParameters`` decodes; Go's decoder ignores every other key (§5a, E15)."""

_PROPERTY_KEYS = frozenset({"anyOf", "type", "items", "description", "enum", "properties", "required"})
"""Keywords ``api.ToolProperty`` decodes (``items`` and ``$defs`` are ``any``: kept verbatim)."""

_HANDLED_KEYS = frozenset({"model", "messages", "tools", "stream", "options"})


def _names(tools: Sequence[Tool]) -> NameMap:
    return _NAME_RULE.map(t.name for t in tools)


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> ``tools: [{"type": "function", "function": {...}}]``. The schema goes out as it
    is; every keyword the server will ignore is reported in ``changes`` (E15)."""
    names = _names(tools)
    wire: list[JSONObject] = []
    changes: list[SchemaChange] = []
    for tool in tools:
        function: JSONObject = {"name": names.wire(tool.name)}
        if tool.description is not None:
            function["description"] = tool.description
        if not (tool.provider_details.get("no_parameters") and not tool.input_schema):
            schema, changed = object_schema(tool)
            changes.extend(changed)
            changes.extend(_dropped_keywords(tool.name, schema))
            function["parameters"] = schema
        function.update(tool.provider_details.get("function", {}))
        wire.append({"type": "function", "function": function, **tool.provider_details.get("tool", {})})
    return WireTools(tools=wire, changes=tuple(changes), names=names)


def _pointer(base: str, key: object) -> str:
    return f"{base}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _dropped(tool: str, pointer: str, key: str, where: str) -> SchemaChange:
    detail = f"Ollama decodes parameters into fixed Go structs (api/types.go {where}) and ignores {key!r}"
    if key == "$ref":
        detail += "; the reference breaks although $defs is kept"
    return SchemaChange(tool=tool, pointer=pointer, action="dropped", detail=detail)


def _dropped_keywords(tool: str, schema: Mapping[str, Any]) -> list[SchemaChange]:
    changes = [
        _dropped(tool, _pointer("", key), key, "ToolFunctionParameters") for key in schema if key not in _PARAMETER_KEYS
    ]
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            _property_drops(tool, _pointer("/properties", name), prop, changes)
    return changes


def _property_drops(tool: str, pointer: str, prop: Any, changes: list[SchemaChange]) -> None:
    if not isinstance(prop, Mapping):
        return
    changes.extend(_dropped(tool, _pointer(pointer, k), k, "ToolProperty") for k in prop if k not in _PROPERTY_KEYS)
    members = prop.get("anyOf")
    if isinstance(members, list):  # anyOf members are ToolProperty values too
        for i, member in enumerate(members):
            _property_drops(tool, _pointer(f"{pointer}/anyOf", i), member, changes)
    nested = prop.get("properties")
    if isinstance(nested, Mapping):
        for name, sub in nested.items():
            _property_drops(tool, _pointer(f"{pointer}/properties", name), sub, changes)


def _tool_from_wire(item: Mapping[str, Any], names: NameMap) -> Tool:
    function = item.get("function") or {}
    details: JSONObject = {}
    extra_fn = {k: v for k, v in function.items() if k not in ("name", "description", "parameters")}
    extra_tool = {k: v for k, v in item.items() if k not in ("type", "function")}
    if extra_fn:
        details["function"] = extra_fn
    if extra_tool:
        details["tool"] = extra_tool
    if "parameters" not in function:
        details["no_parameters"] = True
    return Tool(
        name=names.original(str(function.get("name", ""))),
        description=function.get("description"),
        input_schema=function.get("parameters") or {},
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


_THINK_LEVELS: dict[str, ReasoningEffort] = {"low": "low", "medium": "medium", "high": "high"}
"""The ``think`` levels (ollama-python ``_types.py``; issue 28 wire facts §5e), each a unified effort."""


def _reasoning_settings_to_wire(settings: ReasoningSettings | None) -> bool | str | None:
    """``Request.reasoning`` -> ``think`` (None: send none, the model's default)."""
    if settings is None:
        return None
    if not settings.enabled:
        return False
    if settings.budget_tokens is not None:
        raise UnsupportedContentError(
            "Ollama has no reasoning token budget (think is on, off or a level): leave budget_tokens out"
        )
    if settings.effort is None:
        return True
    if settings.effort not in _THINK_LEVELS:
        raise UnsupportedContentError(
            f"Ollama think has no level {settings.effort!r} (only {', '.join(_THINK_LEVELS)}): use one of those"
        )
    return settings.effort


def _reasoning_settings_from_wire(body: Mapping[str, Any]) -> ReasoningSettings | None:
    """``think`` read back when it is one ``_reasoning_settings_to_wire`` writes; None otherwise."""
    think = body.get("think")
    if think is True:
        return ReasoningSettings()
    if think is False:
        return ReasoningSettings(enabled=False)
    if isinstance(think, str) and think in _THINK_LEVELS:
        return ReasoningSettings(effort=_THINK_LEVELS[think])
    return None


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> ``/api/chat`` body (``stream`` always explicit: Ollama streams by default)."""
    request, result_notes = request_view(request, carries=WIRE_CARRIES["ollama"], wire="ollama")  # docs/mcp.md
    details = request.provider_details
    choice = request.tool_choice
    if choice not in (None, "auto", "none"):
        why = "only 'auto' (the default) and 'none' (tools omitted) can be expressed"
        raise UnsupportedContentError(f"Ollama /api/chat has no tool_choice: {why}, not {choice!r}")
    if request.parallel_tool_calls is False:
        raise UnsupportedContentError("Ollama /api/chat cannot disable parallel tool calls (no such field)")
    wire_tools = tools_to_wire(request.tools if choice != "none" else ())
    names = _names(request.tools)
    calls = [p for m in request.messages if m.role == "assistant" for p in m.parts if isinstance(p, ToolCall)]
    history = {c.id: c for c in calls}
    think = _reasoning_settings_to_wire(request.reasoning)
    messages: list[JSONObject] = []
    notes: list[str] = list(result_notes)
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(message_to_wire(message, names, history, notes))
    body: JSONObject = {"model": request.model, "messages": messages} if request.model else {"messages": messages}
    if wire_tools.tools:
        body["tools"] = wire_tools.tools
    if not details.get("stream_omitted"):
        body["stream"] = request.stream
    if think is not None:
        body["think"] = think
    extra = dict(details.get("extra", {}))
    options = extra.pop("options", None)
    if request.max_tokens is not None:
        options = {**(options or {}), "num_predict": request.max_tokens}
    if options is not None:
        body["options"] = options
    body.update(extra)
    return WireRequest(
        path="/api/chat", body=body, stream=request.stream, schema_changes=wire_tools.changes, notes=tuple(notes)
    )


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """``/api/chat`` body -> unified request (``tools`` maps wire names back)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("an Ollama /api/chat request body must be a JSON object")
    names = _names(tools) if tools else NameMap()
    details: JSONObject = {}
    extra = {k: v for k, v in body.items() if k not in _HANDLED_KEYS}
    reasoning = _reasoning_settings_from_wire(body)
    if reasoning is not None:
        del extra["think"]
    if "tools" in body and not body["tools"]:
        extra["tools"] = body["tools"]
    stream = True  # api.ChatRequest.Stream: "true by default"
    if "stream" not in body:
        details["stream_omitted"] = True
    elif isinstance(body["stream"], bool):
        stream = body["stream"]
    else:
        extra["stream"] = body["stream"]
    max_tokens = None
    options = body.get("options")
    if isinstance(options, Mapping) and "num_predict" in options:
        max_tokens = options["num_predict"]
        rest = {k: v for k, v in options.items() if k != "num_predict"}
        if rest:
            extra["options"] = rest
    elif "options" in body:
        extra["options"] = options
    if extra:
        details["extra"] = extra
    raw_messages = list(body.get("messages") or [])
    system: str | None = None
    if raw_messages and raw_messages[0].get("role") == "system" and set(raw_messages[0]) <= {"role", "content"}:
        system = str(raw_messages[0].get("content", ""))
        raw_messages = raw_messages[1:]
    messages: list[Message] = []
    pending: list[ToolCall] = []  # calls of the last assistant message not yet answered
    for index, raw in enumerate(raw_messages):
        if not isinstance(raw, Mapping):
            raise WireFormatError(f"messages[{index}] is not a JSON object")
        if raw.get("role") == "tool":
            result = result_from_wire(raw, index, names, pending)
            if messages and messages[-1].role == "tool":
                messages[-1] = Message(role="tool", parts=(*messages[-1].parts, result))
            else:
                messages.append(Message(role="tool", parts=(result,)))
            continue
        message = message_from_wire(raw, index, names)
        if message.role == "assistant":
            pending = [p for p in message.parts if isinstance(p, ToolCall)]
        messages.append(message)
    return Request(
        model=str(body.get("model", "")),
        system=system,
        messages=tuple(messages),
        tools=tuple(_tool_from_wire(t, names) for t in body.get("tools") or []),
        stream=stream,
        max_tokens=max_tokens,
        reasoning=reasoning,
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def _usage(raw: Mapping[str, Any]) -> Usage | None:
    # api.Metrics: both counters are omitempty (a fully cached prompt has no prompt_eval_count)
    if "prompt_eval_count" not in raw and "eval_count" not in raw:
        return None
    return Usage(input_tokens=raw.get("prompt_eval_count"), output_tokens=raw.get("eval_count"))


def _events_from_body(body: Mapping[str, Any], names: NameMap) -> Iterator[StreamEvent]:
    """A non-streamed ``/api/chat`` body as the events its stream would give (the body has the shape
    of a stream's last line, with everything in it)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("an Ollama /api/chat response body must be a JSON object")
    state = _Stream(names)
    yield from state.feed_object(body)
    if not state.done:
        yield from stream_broken(state.tracker, "stream_incomplete", "the response body has no done: true")


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """An ``/api/chat`` body (``stream: false``) -> unified response (the same fold streams use)."""
    details = {k: body[k] for k in ("model", "created_at") if isinstance(body, Mapping) and k in body}
    return fold(_events_from_body(body, _names(tools)), provider_details=details)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Stream:
    """State of one NDJSON ``/api/chat`` stream (§5d, §9 rule 6)."""

    __slots__ = ("done", "ids", "parsed", "tracker")

    def __init__(self, names: NameMap) -> None:
        self.tracker = CallTracker(names)
        self.done = False
        self.ids: set[str] = set()
        # open calls (keyed by their position) -> parsed arguments or why they are unusable
        self.parsed: dict[int, tuple[JSONObject | None, str | None]] = {}

    def feed(self, line: bytes) -> list[StreamEvent]:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            obj = None
        if not isinstance(obj, dict):
            self.done = True
            return stream_broken(self.tracker, "malformed_response", f"not a JSON object in the stream: {line[:80]!r}")
        return self.feed_object(obj)

    def feed_object(self, obj: Mapping[str, Any]) -> list[StreamEvent]:
        if obj.get("error") is not None:  # docs/api/errors.mdx: an error line, status stays 200
            self.done = True
            status = obj.get("status")
            info = _error_info(obj["error"], status if isinstance(status, int) else None, {}, in_stream=True)
            return [
                *self.tracker.end_all(error=f"the stream failed: {info.message}"),
                ErrorEvent(info),
                Finish("error"),
            ]
        events: list[StreamEvent] = []
        message = obj.get("message")
        if message and not isinstance(message, Mapping):
            self.done = True
            return stream_broken(self.tracker, "malformed_response", f"message is not a JSON object: {message!r:.80}")
        if message:
            thinking = message.get("thinking")
            if thinking is not None and not isinstance(thinking, str):
                self.done = True
                why = f"message.thinking is a {type(thinking).__name__}, not a string"
                return stream_broken(self.tracker, "malformed_response", why)
            if thinking:
                events.append(ReasoningDelta(thinking, source=SOURCE))
            content = message.get("content")
            if content and isinstance(content, str):
                events.append(TextDelta(content))
            tool_calls = message.get("tool_calls")
            if tool_calls:
                created_at = obj.get("created_at", "")
                for call in tool_calls:
                    self._call(call, created_at, events)
        if obj.get("done"):
            self.done = True
            finish = self._finish(obj.get("done_reason"))
            if (usage := _usage(obj)) is not None:  # counters come on the last line only (E19)
                finish.insert(-1, UsageEvent(usage))
            events.extend(finish)
        return events

    def _call(self, call: Mapping[str, Any], created_at: Any, events: list[StreamEvent]) -> None:
        """A whole call (E6): start and its one chunk now; the end waits for ``done`` (E8)."""
        call_id, name, raw, parsed, error, details = wire_call(call)
        if not name and error is None:
            parsed, error = None, "the call has no tool name"
        key = self.tracker.count
        if call_id is None or call_id in self.ids:  # same bytes, same id
            call_id = synthetic_call_id("ollama", created_at, key, name, raw)
            details["synthetic_id"] = True
        self.ids.add(call_id)
        events.append(self.tracker.start(key, call_id, name, details))
        if (chunk := self.tracker.chunk(key, raw)) is not None:
            events.append(chunk)
        self.parsed[key] = (parsed, error)

    def _finish(self, done_reason: Any) -> list[StreamEvent]:
        raw = done_reason if isinstance(done_reason, str) and done_reason else None
        reason: FinishReason = _FINISH_REASONS.get(raw, "other") if raw is not None else "stop"
        events: list[StreamEvent] = []
        for key, (parsed, error) in self.parsed.items():
            if reason == "length":
                error = "the response was cut by the length limit"
            end = self.tracker.end(key, error=error, arguments=parsed)
            if end is not None:
                events.append(end)
        self.parsed.clear()
        if self.tracker.count and reason == "stop":
            reason = "tool_calls"
        events.append(Finish(reason, raw))
        return events

    def close(self) -> list[StreamEvent]:
        """End of input without a ``done: true`` line."""
        self.done = True
        return stream_broken(self.tracker, "stream_incomplete", "the stream ended without a done: true line")


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """NDJSON bytes of a streamed ``/api/chat`` request -> normalized events, as the bytes arrive."""
    decoder = NDJSONDecoder()
    state = _Stream(_names(tools))
    for chunk in line_pieces(chunks):
        for line in decoder.decode(chunk):
            yield from state.feed(line)
            if state.done:
                return
    for line in decoder.flush():
        yield from state.feed(line)
        if state.done:
            return
    yield from state.close()


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _error_info(error: Any, status: int | None, headers: Mapping[str, str], *, in_stream: bool = False) -> ErrorInfo:
    # a mapping is not Ollama's shape, but tolerated (OpenAI-style proxies)
    message = str(error.get("message") or dumps_compact(error)) if isinstance(error, Mapping) else str(error)
    kind: ErrorKind | None = error_kind_from_status(status) if status is not None and status >= 400 else None
    if kind is None:
        lowered = message.lower()
        kind = next((k for fragment, k in _ERROR_KINDS.items() if fragment in lowered), None)
    if kind is None:
        kind = "server" if in_stream else "unknown"  # an in-stream error is a failed generation
    return ErrorInfo(
        kind=kind,
        message=message,
        status=None if in_stream else status,
        retry_after=retry_after_from_headers(headers),
    )


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """An HTTP error response -> typed provider error (§5e: ``{"error": "<message>"}``)."""
    parsed = load_json_body(body)
    if isinstance(parsed, Mapping) and "error" in parsed:
        info = _error_info(parsed["error"], status, headers)
        others = {k: v for k, v in parsed.items() if k != "error"}  # e.g. signin_url on a 401
        if others:
            info = ErrorInfo(**{**info.__dict__, "provider_details": others})
        return ProviderError(info)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    return ProviderError(_error_info(text.strip() or f"HTTP {status}", status, headers))


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset(
    "streaming parallel_tool_calls system_prompt tool_choice_auto tool_choice_none"
    " reasoning_replay reasoning_effort reasoning_off".split()
)

ADAPTER = Adapter(
    name="ollama",
    wire_format="ollama",
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
