"""OpenAI Chat Completions wire format (``POST /v1/chat/completions``) and compatible servers.

Sources: wire-formats.md §1 (openai-python ``types/chat``, ``_streaming.py``,
``lib/streaming/_deltas.py``; openai-openapi), §9 rule 2 and edge cases E3-E8, E24, E25, E27, E35;
the real recordings in ``tests/realworld`` (OpenAI, Azure, Mistral, Gemini's OpenAI endpoint).
The ``messages`` list is translated by the private helper ``_openai_chat_messages``; long runs of
streamed argument fragments are read by the framing layer's ``framing.runs.RunReader``.

Quirks handled here:
- arguments are a JSON *string*; fragments are keyed by ``tool_calls[].index`` (position when a
  server omits it, E25 Mistral); ``id``/``name`` are set once, later repeats, ``""`` or ``null``
  are ignored, never concatenated (E4); a *different* id at an index already in use starts a new
  call (Ollama sends ``index: 0`` for every parallel call, ollama/ollama#15457, vercel/ai#14277);
- a forced tool choice ends with ``stop`` while calls are present (E7) -> ``tool_calls``;
- ``choices: []`` chunks carry usage (``include_usage``) or Azure filter results (E24);
- an empty call ``id`` (E27) or none at all (legacy ``function_call``, E35) gets a synthetic id;
- tool results have no error flag: ``is_error`` travels as an ``Error: `` prefix on the text
  (and is read back from it); images cannot travel in tool results (UnsupportedContentError);
- legacy requests (``functions``/``function_call``, ``role: "function"`` results, E35) round-trip.

Round trips: ``request_to_wire(request_from_wire(body)).body == body`` (unknown fields ride in
``provider_details``) but for one documented normalisation: a tool without ``parameters`` (or with
``{}``) goes out with ``{"type": "object", "properties": {}}`` ("Omitting `parameters` defines a
function with an empty parameter list", SDK ``function_definition.py``; reported as a
``SchemaChange``). Unified -> wire -> unified loses reasoning parts that name no Chat field (see
Reasoning), ``ReasoningSettings()`` with nothing set (the wire's default), tool
``title``/``output_schema``/``annotations``, and ``is_error=False`` on a text starting ``Error: ``.

Reasoning (issue28-wire-facts.md "Headline" and §4). OpenAI's own Chat API sends none (no field in
openai-python ``chat_completion_message.py``); compatible servers put it on the message / delta:
``reasoning_content`` (DeepSeek, llama.cpp, vLLM before 0.11), ``reasoning`` (vLLM >= 0.11,
OpenRouter), and OpenRouter's ``reasoning_details`` list (``reasoning.text {text, signature}``,
``reasoning.summary {summary}``, ``reasoning.encrypted {data}``, each with ``format`` and ``index``).
- Decoding, streamed and not: one ``Reasoning`` part per run of reasoning (it ends at the first
  text, call or finish), ``source="openai_chat"``, ``provider_details`` naming the field(s) the text
  came in (``field``, and ``also`` when a server sends both) and ``reasoning_details`` verbatim
  (streamed: fragments merged by type and index, ``_openai_chat_messages.merge_detail``). A streamed
  ``""``/null field is no reasoning (servers send such markers on content chunks); in a whole body a
  string field, even ``""``, is kept so it goes back as it came. A field of the wrong JSON type
  (``reasoning_content`` not a string, ``reasoning_details`` not a list of objects) is a
  ``malformed_response`` error naming it; the text is read in linear time whatever its size.
- Replay: a part this wire produced goes back on its assistant message, in every later request, in
  the fields it came in (text joined, ``reasoning_details`` unmodified). DeepSeek's current rule
  (V4 thinking mode, https://api-docs.deepseek.com/zh-cn/guides/thinking_mode/): the
  ``reasoning_content`` of an assistant message that made tool calls must be sent back in all later
  requests, new user turns included (else 400), and that of a message without calls "may be left
  out; if sent it is ignored". This adapter always sends it back, calls or not, so every request's
  messages are the earlier request's extended (the cache prefix only grows) and a history body
  round-trips. Reasoning another wire produced (``base.reasoning_note``) or naming no Chat field
  (OpenAI itself has none, so a caller's own reasoning cannot go there) is left out and said in
  ``WireRequest.notes``.
- Settings (``_reasoning_settings_to_wire``): ``effort`` -> ``reasoning_effort`` and
  ``enabled=False`` -> ``reasoning_effort: "none"`` (openai-python ``completion_create_params.py``
  ``reasoning_effort: none|minimal|low|medium|high|xhigh|max``; ``shared/reasoning_effort.py``);
  a token budget has no Chat field in the OpenAI SDK: ``UnsupportedContentError``. Read back, an
  effort the model has no word for (``xhigh``, ``max``) stays in ``provider_details``.

Usage (``_usage``; ``checks/usage.py`` reads the same): ``prompt_tokens``/``completion_tokens``/
``total_tokens``; ``reasoning_tokens`` = ``completion_tokens_details.reasoning_tokens``;
``cache_read_tokens`` = ``prompt_tokens_details.cached_tokens``, else DeepSeek's top-level
``prompt_cache_hit_tokens`` (docs.stigg.io DeepSeek; third-party, partly verified);
``cache_write_tokens`` = ``prompt_tokens_details.cache_write_tokens`` (openai-python
``completion_usage.py``; OpenRouter usage accounting). DeepSeek's ``prompt_cache_miss_tokens`` is not
a write count and is not read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import chain
from typing import Any

import orjson

from conformance.adapters._openai_chat_messages import (
    REASONING_FIELDS,
    WIRE,
    arguments_text,
    check_details,
    check_reasoning_text,
    finish_details,
    merge_detail,
    message_from_wire,
    message_to_wire,
    reasoning_part,
)
from conformance.adapters._openai_errors import error_from_wire, error_info
from conformance.adapters._tool_output import WIRE_CARRIES, request_view
from conformance.adapters.base import (
    Adapter,
    CallTracker,
    NameMap,
    NameRule,
    SchemaChange,
    WireRequest,
    WireTools,
    object_schema,
    stream_broken,
    synthetic_call_id,
)
from conformance.assembly import fold
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.framing import Run, SSEDecoder, line_pieces
from conformance.framing.runs import FAST, RunPolicy, RunReader
from conformance.model import (
    ErrorEvent,
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
    ToolCallChunk,
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
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # legacy functions API (E35)
    "length": "length",
    "content_filter": "content_filter",
}

_NAME_RULE = NameRule(allowed="a-zA-Z0-9_-", max_len=64)  # §1a, E14

_HANDLED_KEYS = frozenset(
    "model messages tools tool_choice parallel_tool_calls stream max_tokens"
    " max_completion_tokens functions function_call".split()
)


_EFFORTS: frozenset[ReasoningEffort] = frozenset({"minimal", "low", "medium", "high"})
"""The efforts ``ReasoningSettings`` has, each a ``reasoning_effort`` value of openai-python."""


def _names(tools: Sequence[Tool]) -> NameMap:
    return _NAME_RULE.map(t.name for t in tools)


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> ``tools: [{"type": "function", "function": {...}}]``; ``inputSchema`` passes
    through as ``parameters`` (Chat takes JSON Schema)."""
    names = _names(tools)
    wire: list[JSONObject] = []
    changes: list[SchemaChange] = []
    for tool in tools:
        schema, changed = object_schema(tool)
        changes.extend(changed)
        function: JSONObject = {"name": names.wire(tool.name)}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = schema
        function.update(tool.provider_details.get("function", {}))
        wire.append({"type": "function", "function": function, **tool.provider_details.get("tool", {})})
    return WireTools(tools=wire, changes=tuple(changes), names=names)


def _tool_from_wire(item: Mapping[str, Any], legacy: bool) -> Tool:
    function = item if legacy else item.get("function", {})
    extra_fn = {k: v for k, v in function.items() if k not in ("name", "description", "parameters")}
    extra_tool = {} if legacy else {k: v for k, v in item.items() if k not in ("type", "function")}
    details = {key: extra for key, extra in (("function", extra_fn), ("tool", extra_tool)) if extra}
    return Tool(
        name=str(function.get("name", "")),
        description=function.get("description"),
        input_schema=function.get("parameters") or {},
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> Chat Completions body."""
    request, result_notes = request_view(request, carries=WIRE_CARRIES[WIRE], wire=WIRE)  # docs/mcp.md
    details = request.provider_details
    wire_tools = tools_to_wire(request.tools)
    names = wire_tools.names
    messages: list[JSONObject] = []
    notes: list[str] = list(result_notes)
    if request.system is not None:
        messages.append({"role": details.get("system_role", "system"), "content": request.system})
    for message in request.messages:
        messages.extend(message_to_wire(message, names, notes))
    body: JSONObject = {"model": request.model, "messages": messages} if request.model else {"messages": messages}
    legacy = bool(details.get("legacy_functions"))
    if request.tools:
        if legacy:
            body["functions"] = [t["function"] for t in wire_tools.tools]
        else:
            body["tools"] = wire_tools.tools
    if request.tool_choice is not None:
        choice = request.tool_choice
        if legacy:  # E35: function_call is "none" | "auto" | {"name"}; there is no "required"
            if choice == "required":
                raise UnsupportedContentError("the legacy functions API has no 'required' function_call")
            body["function_call"] = choice if choice in ("auto", "none") else {"name": names.wire(choice)}
        elif choice in ("auto", "none", "required"):
            body["tool_choice"] = details.get("tool_choice_raw", choice)
        else:
            body["tool_choice"] = {"type": "function", "function": {"name": names.wire(choice)}}
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.stream:
        body["stream"] = True
    if request.max_tokens is not None:
        body[details.get("max_tokens_key", "max_tokens")] = request.max_tokens
    if request.reasoning is not None:
        body.update(_reasoning_settings_to_wire(request.reasoning))
    body.update(details.get("extra", {}))
    return WireRequest(
        path="/v1/chat/completions",
        body=body,
        stream=request.stream,
        schema_changes=wire_tools.changes,
        notes=tuple(notes),
    )


def _reasoning_settings_to_wire(settings: ReasoningSettings) -> JSONObject:
    """The caller's reasoning settings as Chat fields: ``reasoning_effort`` (openai-python
    ``completion_create_params.py``: ``none`` turns reasoning off); a token budget has no field on
    this wire and is refused, never dropped; so is an effort or budget with reasoning off."""
    if settings.budget_tokens is not None:
        raise UnsupportedContentError(
            "reasoning budget_tokens: OpenAI Chat Completions has no token budget for reasoning (only"
            " reasoning_effort); give an effort instead"
        )
    if not settings.enabled:
        if settings.effort is not None:
            raise UnsupportedContentError(f"reasoning off with effort {settings.effort!r}: give one or the other")
        return {"reasoning_effort": "none"}
    return {} if settings.effort is None else {"reasoning_effort": settings.effort}


def _reasoning_settings_from_wire(body: Mapping[str, Any]) -> ReasoningSettings | None:
    """``reasoning_effort`` read back (``_reasoning_settings_to_wire`` reversed); None when absent or
    a value the model has no word for (``xhigh``, ``max``, another type: kept as sent)."""
    effort = body.get("reasoning_effort")
    if effort == "none":
        return ReasoningSettings(enabled=False)
    if effort in _EFFORTS:
        return ReasoningSettings(effort=effort)
    return None


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Chat Completions body -> unified request (``tools`` maps wire names back)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("a Chat Completions request body must be a JSON object")
    legacy = "functions" in body and "tools" not in body
    wire_tools = [_tool_from_wire(t, legacy) for t in body.get("functions" if legacy else "tools") or []]
    names = _names(tools) if tools else NameMap()
    details: JSONObject = {}
    reasoning = _reasoning_settings_from_wire(body)
    handled = _HANDLED_KEYS | {"reasoning_effort"} if reasoning is not None else _HANDLED_KEYS
    extra = {k: v for k, v in body.items() if k not in handled}
    if body.get("stream") is False:
        extra["stream"] = False
    if "tools" in body and not body["tools"]:
        extra["tools"] = body["tools"]
    if legacy:
        details["legacy_functions"] = True
    if "max_completion_tokens" in body:
        details["max_tokens_key"] = "max_completion_tokens"
        if "max_tokens" in body:
            extra["max_tokens"] = body["max_tokens"]
    system: str | None = None
    messages: list[Message] = []
    raw_messages = list(body.get("messages") or [])
    first = raw_messages[0] if raw_messages else {}
    if first.get("role") in ("system", "developer") and isinstance(first.get("content"), str):
        system, raw_messages = first["content"], raw_messages[1:]
        if first["role"] == "developer":
            details["system_role"] = "developer"
    legacy_id = ""  # E35: a role "function" result answers the latest function_call
    for index, raw in enumerate(raw_messages):
        message = message_from_wire(raw, index, names, legacy_id)
        if message.provider_details.get("legacy_function_call"):
            legacy_id = next(p.id for p in message.parts if isinstance(p, ToolCall))
        if message.role == "tool" and messages and messages[-1].role == "tool":
            messages[-1] = Message(role="tool", parts=messages[-1].parts + message.parts)
        else:
            messages.append(message)
    choice_key = "function_call" if legacy else "tool_choice"
    raw_choice = body.get(choice_key)
    if raw_choice == "any":  # E25: Mistral's spelling of "required"
        details["tool_choice_raw"], raw_choice = raw_choice, "required"
    tool_choice = _tool_choice_from_wire(raw_choice, names)
    if tool_choice is None and raw_choice is not None:  # allowed_tools, custom, ...: kept as sent
        extra[choice_key] = raw_choice
    if extra:
        details["extra"] = extra
    return Request(
        model=str(body.get("model", "")),
        system=system,
        messages=tuple(messages),
        tools=tuple(replace(t, name=names.original(t.name)) for t in wire_tools),
        tool_choice=tool_choice,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        stream=bool(body.get("stream", False)),
        max_tokens=body.get("max_completion_tokens", body.get("max_tokens")),
        reasoning=reasoning,
        provider_details=details,
    )


def _tool_choice_from_wire(choice: Any, names: NameMap) -> str | None:
    """``auto``/``none``/``required`` or a tool name; None for shapes the model has no word for."""
    if choice in ("auto", "none", "required"):
        return choice  # type: ignore[no-any-return]
    if isinstance(choice, Mapping) and choice.get("type", "function") == "function":
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return names.original(str(name))
    return None


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def _usage(raw: Mapping[str, Any]) -> Usage:
    """The usage object (the rule is in the module docstring: ``checks/usage.py`` reads the same)."""
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    cached = prompt_details.get("cached_tokens")
    return Usage(
        input_tokens=raw.get("prompt_tokens"),
        output_tokens=raw.get("completion_tokens"),
        total_tokens=raw.get("total_tokens"),
        cache_read_tokens=cached if cached is not None else raw.get("prompt_cache_hit_tokens"),
        cache_write_tokens=prompt_details.get("cache_write_tokens"),
        reasoning_tokens=completion_details.get("reasoning_tokens"),
    )


def _finish(raw_reason: str, tracker: CallTracker, produced_calls: bool) -> list[StreamEvent]:
    """End open calls and say why the response ended (E7: calls + ``stop`` -> ``tool_calls``)."""
    reason = _FINISH_REASONS.get(raw_reason, "other")
    events: list[StreamEvent] = []
    if reason == "length":
        events.extend(tracker.end_all(error="the response was cut by the length limit"))
    else:
        events.extend(tracker.end_all())
        if produced_calls and reason == "stop":
            reason = "tool_calls"
    return [*events, Finish(reason, raw_reason)]


def _events_from_body(body: Mapping[str, Any], names: NameMap) -> Iterator[StreamEvent]:
    """A non-streamed ``chat.completion`` as the events its stream would give: its message is
    fed to the stream state as one delta, so both modes share every rule."""
    choices = body.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], Mapping):
        raise WireFormatError("a chat.completion body without choices")
    choice = choices[0]
    state = _Stream(names, whole=True)
    delta = {"delta": choice.get("message") or {}, "finish_reason": choice.get("finish_reason") or "stop"}
    yield from state.chunk({"id": body.get("id"), "choices": [delta], "usage": body.get("usage")})
    yield from state.close()


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``chat.completion`` body -> unified response (the same fold streams use)."""
    details = {k: body[k] for k in ("id", "model") if k in body}
    return fold(_events_from_body(body, _names(tools)), provider_details=details)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Stream:
    """State of one ``chat.completion.chunk`` stream (§1d, §9 rule 2).

    Given a ``runs`` reader, it teaches it the stream's argument-fragment events and the reader
    reads runs of them (``run_chunks``); every other event, and every piece the reader cannot
    vouch for, goes through ``feed`` and ``chunk``: the general path."""

    __slots__ = (
        "details",
        "done",
        "finish_reason",
        "ids",
        "keys",
        "learning",
        "pending",
        "policy",
        "produced_calls",
        "reasoning",
        "response_id",
        "runs",
        "tracker",
        "where",
        "whole",
    )

    def __init__(self, names: NameMap, policy: RunPolicy | None = None, *, whole: bool = False) -> None:
        self.tracker = CallTracker(names)
        self.finish_reason: str | None = None
        self.produced_calls = False
        self.response_id = ""
        self.done = False
        # calls whose name has not arrived yet: key -> (id, buffered argument text)
        self.pending: dict[Any, tuple[str | None, list[str]]] = {}
        self.keys: dict[Any, Any] = {}  # wire index -> tracker key, when an index was reused
        self.ids: dict[str, Any] = {}  # call ids the wire sent -> tracker key
        self.policy = policy
        self.runs: RunReader | None = None  # made by ``start_runs`` once the stream is past the warm-up
        self.learning = False  # the reader is made and still learns (one test per event either way)
        # the open run of reasoning: text pieces per field (the first field's are events too) and
        # the merged reasoning_details; None when no run is open
        self.reasoning: dict[str, list[str]] | None = None
        self.details: list[dict[str, Any]] | None = None
        self.whole = whole  # a whole chat.completion body fed as one delta
        self.where = "choices[0].message" if whole else "choices[0].delta"

    def feed(self, data: bytes, event: str = "") -> list[StreamEvent]:
        """One SSE ``data`` payload (``event``: its SSE event name, which only the run reader keeps)."""
        if data.startswith(b"[DONE]"):  # as openai-python's _streaming.py tests it
            return self.terminate()
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            try:  # invalid UTF-8: the text with replacement characters, as a text decoder gives it
                chunk = orjson.loads(data.decode("utf-8", "replace"))
            except orjson.JSONDecodeError:
                text = data.decode("utf-8", "replace")
                return self._broken("malformed_response", f"invalid JSON in a stream event: {text[:80]!r}")
        if not isinstance(chunk, dict):
            text = data.decode("utf-8", "replace")
            return self._broken("malformed_response", f"a stream event that is not a JSON object: {text[:80]!r}")
        events = self.chunk(chunk)
        if self.learning and len(events) == 1 and events[0].__class__ is ToolCallChunk and _fragment_only(chunk):
            runs = self.runs
            assert runs is not None  # learning: the reader is made
            runs.learn(event, data, chunk)
            self.learning = runs.learning
        return events

    def start_runs(self) -> RunReader:
        """The stream's run reader (``framing.RunStart``: the decoder asks once past the warm-up)."""
        assert self.policy is not None  # the decoder is given this state only with a policy
        self.runs = RunReader(self.policy, _INDEX_PATH, _TEXT_PATH, _KEYS, per_index=False)
        self.learning = True
        return self.runs

    def run_general(self, event: str, data: bytes) -> list[StreamEvent]:
        return self.feed(data, event)

    def run_chunks(self, wires: int | list[int], texts: list[str]) -> list[ToolCallChunk] | None:
        """Fragments of the open calls at wire indexes (``_fragment``: an index reused by a later
        call maps to that call)."""
        keys = self.keys
        if isinstance(wires, int):
            return self.tracker.chunks(keys.get(wires, wires), texts)
        return self.tracker.chunks_of(list(map(keys.get, wires, wires)), texts)

    def chunk(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """One parsed ``chat.completion.chunk``."""
        events: list[StreamEvent] = []
        if chunk.get("error"):  # §1d: an error payload inside a 200 stream
            info = error_info(chunk["error"], None, {})
            self.done = True
            events = []
            self._close_reasoning(events)
            ends = self.tracker.end_all(error=f"the stream failed: {info.message}")
            return [*events, *self._flush_pending(), *ends, ErrorEvent(info), Finish("error")]
        try:
            self._chunk(chunk, events)
        except (AttributeError, TypeError) as exc:  # a field of the wrong JSON type
            events.extend(self._broken("malformed_response", f"unexpected chunk shape: {exc}"))
        return events

    def _chunk(self, chunk: Mapping[str, Any], events: list[StreamEvent]) -> None:
        if not self.response_id and chunk.get("id"):
            self.response_id = str(chunk["id"])
        choices = chunk.get("choices")
        if choices:  # E24: [] on the usage chunk and on Azure's prompt-filter chunk
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                self._reasoning(delta, events)
                content = delta.get("content")  # refusal and obfuscation are not content
                if (content and isinstance(content, str)) or delta.get("tool_calls") or delta.get("function_call"):
                    self._close_reasoning(events)  # a run of reasoning ends where the answer starts
                if content and isinstance(content, str):
                    events.append(TextDelta(content))
                for position, fragment in enumerate(delta.get("tool_calls") or ()):
                    self._fragment(fragment, position, events)
                if delta.get("function_call"):  # E35
                    self._fragment({"index": 0, "function": delta["function_call"]}, 0, events)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
                self._close_reasoning(events)
                events.extend(self._flush_pending())
                finish = _finish(self.finish_reason, self.tracker, self.produced_calls)
                events.extend(finish[:-1])  # the Finish itself waits for usage and [DONE]
        usage = chunk.get("usage")
        if usage:
            events.append(UsageEvent(_usage(usage)))

    def _reasoning(self, delta: Mapping[str, Any], events: list[StreamEvent]) -> None:
        """The reasoning fields of one delta (the module docstring's rules); a field of the wrong
        JSON type raises ``TypeError`` naming it (``chunk`` makes it a ``malformed_response``)."""
        whole = self.whole
        for key in REASONING_FIELDS:
            value = delta.get(key)
            if value is None:
                continue
            try:
                check_reasoning_text(value, self.where, key)
            except WireFormatError as exc:
                raise TypeError(str(exc)) from None
            if not value and not whole:
                continue  # "" on a content chunk: a marker, no reasoning
            texts = self.reasoning
            if texts is None:
                texts = self.reasoning = {}
            if not texts or key == next(iter(texts)):
                events.append(ReasoningDelta(value, source=WIRE))
            texts.setdefault(key, []).append(value)
        details = delta.get("reasoning_details")
        if details is None:
            return
        try:
            check_details(details, self.where)
        except WireFormatError as exc:
            raise TypeError(str(exc)) from None
        if not details and not (whole and self.reasoning is not None):
            return  # [] on a content chunk
        if self.details is None:
            self.details = []
        if whole:
            self.details.extend(details)
        else:
            for fragment in details:
                merge_detail(self.details, fragment)

    def _close_reasoning(self, events: list[StreamEvent]) -> None:
        """End the open run of reasoning: one delta carrying the fields it came in, which closes the
        folded ``Reasoning`` part (its text when only ``reasoning_details`` held any)."""
        texts, details = self.reasoning, self.details
        if texts is None and details is None:
            return
        self.reasoning = self.details = None
        part = reasoning_part(
            {key: "".join(pieces) for key, pieces in (texts or {}).items()},
            None if details is None else finish_details(details),
        )
        text = "" if texts else part.text
        redacted = part.redacted if not texts else None
        events.append(ReasoningDelta(text, part.signature, redacted, part.provider_details, source=WIRE))

    def _fragment(self, fragment: Mapping[str, Any], position: int, events: list[StreamEvent]) -> None:
        index = fragment.get("index")
        wire_key = position if index is None else index  # E25: no index -> position in the list
        key = self.keys.get(wire_key, wire_key)
        function = fragment.get("function") or fragment.get("custom") or {}  # custom: {name, input}
        text = arguments_text(function.get("arguments", function.get("input")))
        call_id = fragment.get("id") or None
        tracker = self.tracker
        owner = self.ids.get(call_id) if call_id else None
        if owner is not None and tracker.is_open(owner):
            key = owner  # one call's id under another index continues it (mudler/LocalAI#9722)
        if tracker.is_open(key):
            if call_id is None or call_id == tracker.call_id(key) or tracker.call_id(key) not in self.ids:
                if (chunk := tracker.chunk(key, text)) is not None:
                    events.append(chunk)
                return  # E4: repeated id/name are ignored, never concatenated
            # another id at an index in use: a new call (ollama/ollama#15457)
            if (end := tracker.end(key)) is not None:
                events.append(end)
            key = self.keys[wire_key] = (wire_key, tracker.count)
        name = function.get("name") or None
        buffered = [text]
        if key in self.pending:  # read in place: held calls start in the order they first came
            pending_id, buffered = self.pending[key]
            buffered.append(text)
            call_id = pending_id or call_id
        if name is None:  # the name comes in a later chunk: hold the call until it does
            self.pending[key] = (call_id, buffered)
            return
        self.pending.pop(key, None)
        text = "".join(buffered)
        if call_id is None:
            call_id = synthetic_call_id("openai_chat", self.response_id, key)
        else:
            self.ids[call_id] = key
        self.produced_calls = True
        events.append(tracker.start(key, call_id, name))
        if (chunk := tracker.chunk(key, text)) is not None:
            events.append(chunk)

    def _flush_pending(self) -> list[StreamEvent]:
        """Calls that never got a name end as unusable calls named ``""``."""
        events: list[StreamEvent] = []
        for key, (call_id, buffered) in self.pending.items():
            events.append(
                self.tracker.start(key, call_id or synthetic_call_id("openai_chat", self.response_id, key), "")
            )
            if (chunk := self.tracker.chunk(key, "".join(buffered))) is not None:
                events.append(chunk)
            if (end := self.tracker.end(key, error="the call never received a tool name")) is not None:
                events.append(end)
        self.pending.clear()
        return events

    def _broken(self, kind: ErrorKind, message: str) -> list[StreamEvent]:
        self.done = True
        events: list[StreamEvent] = []
        self._close_reasoning(events)
        return events + self._flush_pending() + stream_broken(self.tracker, kind, message)

    def terminate(self) -> list[StreamEvent]:
        """The ``[DONE]`` terminator. A stream that reaches it without a non-null ``finish_reason``
        (OpenAI-compatible gateways send none) is complete, as openai-python's raw stream reads it:
        its calls end and the reason is inferred (``tool_calls`` after calls, else ``stop``); the
        provider's own value stays None. Only a stream cut before ``[DONE]`` is incomplete (E8)."""
        if self.done or self.finish_reason is not None:
            return self.close()
        self.done = True
        events: list[StreamEvent] = []
        self._close_reasoning(events)
        events += self._flush_pending()
        events += self.tracker.end_all()
        return [*events, Finish("tool_calls" if self.produced_calls else "stop", None)]

    def close(self) -> list[StreamEvent]:
        """End of input (or ``[DONE]`` after a finish reason)."""
        if self.done:
            return []
        if self.finish_reason is None:  # E8
            return self._broken("stream_incomplete", "the stream ended without a finish reason")
        self.done = True
        return self._flush_pending() + _finish(self.finish_reason, self.tracker, self.produced_calls)


def stream_from_wire(
    chunks: Iterable[bytes], *, tools: Sequence[Tool] = (), runs: RunPolicy | None = FAST
) -> Iterator[StreamEvent]:
    """SSE bytes of a ``stream: true`` request -> normalized events, as the bytes arrive.

    ``runs``: when long runs of argument fragments are read fast (``conformance.framing.runs``); None reads
    every event the general way (the same events)."""
    return chain.from_iterable(_event_lists(chunks, tools, runs))  # C-level iteration over each list


def _event_lists(
    chunks: Iterable[bytes], tools: Sequence[Tool], policy: RunPolicy | None
) -> Iterator[list[StreamEvent]]:
    state = _Stream(_names(tools), policy)
    decoder = SSEDecoder(start=state if policy is not None else None, after=policy.warmup if policy is not None else 0)
    for chunk in line_pieces(chunks, sse=True):
        for item in decoder.decode_raw(chunk):
            if isinstance(item, Run):
                assert state.runs is not None  # runs come from a reader only
                yield state.runs.read_run(state, item)
            else:
                yield state.feed(item[1], item[0])
            if state.done:
                return
    for event in decoder.flush_raw():
        yield state.feed(event[1], event[0])
        if state.done:
            return
    yield state.close()


_INDEX_PATH = ("choices", 0, "delta", "tool_calls", 0, "index")
_TEXT_PATH = ("choices", 0, "delta", "tool_calls", 0, "function", "arguments")
_KEYS = (b'"index":', b'"arguments":')


def _fragment_only(chunk: Mapping[str, Any]) -> bool:
    """A chunk whose only effect is one argument fragment for the call at an integer wire index
    (``_chunk`` reads nothing else from it): the shape a run reader may learn."""
    choices = chunk.get("choices")
    if type(choices) is not list or not choices or chunk.get("usage"):
        return False
    choice = choices[0]
    delta = choice.get("delta") if type(choice) is dict else None
    if type(delta) is not dict or choice.get("finish_reason"):
        return False
    calls = delta.get("tool_calls")
    if type(calls) is not list or len(calls) != 1 or any(v for k, v in delta.items() if k != "tool_calls"):
        return False
    fragment = calls[0]
    if type(fragment) is not dict or type(fragment.get("index")) is not int or fragment.get("id"):
        return False
    function = fragment.get("function")
    return type(function) is dict and type(function.get("arguments")) is str


# --------------------------------------------------------------------------------------------
# Errors: ``error_from_wire`` (imported above) is the one OpenAI mapping that Chat and Responses
# share, ``conformance.adapters._openai_errors`` (§1e, §2e).
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset(
    "streaming parallel_tool_calls disable_parallel_tool_calls system_prompt call_ids"
    " tool_choice_auto tool_choice_none tool_choice_required tool_choice_named"
    " reasoning_replay reasoning_effort reasoning_off".split()
)

ADAPTER = Adapter(
    name="openai_chat",
    wire_format="openai_chat",
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
