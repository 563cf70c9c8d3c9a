"""OpenAI Responses API wire format (``POST /v1/responses``) and compatible servers (Bedrock "mantle").

Sources: wire-formats.md §2, §8, §9 rule 3 and edge cases E2, E3, E11, E12, E23, E29 (openai-python
``types/responses`` and ``_streaming.py``, openai-openapi, OpenAI docs 2026-03-31); the real recordings
in ``tests/realworld`` (OpenAI and Bedrock "mantle" at ``/openai/v1/responses``).

Quirks handled here:
- tools are flat; ``strict`` is *on* when omitted (OAI-DOCS 2026-03-31; SDK ``FunctionToolParam``:
  "Default `true`"), so ``tools_to_wire`` sends ``"strict": false`` and MCP schemas go out as they
  are, unless the tool's ``provider_details["tool"]`` sets ``strict``; a wire tool without
  ``strict`` keeps that absence (``provider_details["omit_strict"]``);
- two ids per call (E12): the unified ``ToolCall.id`` is ``call_id`` (what ``function_call_output``
  echoes); the item id (``fc_…``) rides in ``provider_details["item_id"]`` and is replayed as ``id``;
- streams are named events; the data JSON ``type`` decides, so ``data:`` before ``event:`` (E29) or
  no ``event:`` line at all is fine; ``sequence_number``/``obfuscation``/unknown events are ignored;
  a ``[DONE]`` is tolerated although Responses never sends one (§2d);
- argument deltas are keyed by ``item_id``; ``…arguments.done`` (or ``output_item.done``) is preferred:
  when it extends the concatenated deltas the rest goes out as one more chunk; when it disagrees
  otherwise the stream is inconsistent and the call ends with an ``arguments_error`` (the deltas stay
  the raw text, so the event lifecycle stays valid) rather than guessing which text to execute;
- mid-stream ``error`` events come flat (SDK ``ResponseErrorEvent``) or nested under ``error`` (E11,
  VFX ``openai-error.1.chunks.txt``); the ``response.failed`` that may follow is not read;
- no finish reason: ``status`` + ``incomplete_details.reason`` decide (§2c); calls make ``tool_calls``;
- tool results have no error flag: ``is_error`` travels as an ``Error: `` prefix on the (first) text
  (and is read back from it); images in tool results go out as ``input_image`` parts;
- reasoning items are kept verbatim (``Reasoning.provider_details["item"]``, ``signature`` =
  ``encrypted_content``, or ``redacted`` = ``encrypted_content`` for an item with no readable text, as
  gpt-5 answers without a summary asked for; ``source`` = ``openai_responses``; taken from ``output_item.done``: "the
  ``encrypted_content`` in ``response.output_item.added`` may be incomplete", openai-python
  ``ResponseReasoningItemParam``); the text is the summaries then any ``reasoning_text`` content, streamed
  from ``response.reasoning_summary_text.delta`` / ``response.reasoning_text.delta``. They are replayed in
  ``input`` in order, right before the item they preceded (``_openai_responses_items`` says what is left
  out: another provider's reasoning, one without its item, one with nothing after it; each with a note);
- reasoning settings (``_reasoning_settings_to_wire``): ``effort`` -> ``reasoning: {"effort"}``, off ->
  ``{"effort": "none"}`` (openai-python ``shared/reasoning_effort.py``: ``none``, ``minimal``, ``low``,
  ``medium``, ``high``, ``xhigh``, ``max``); a token budget has no field (``UnsupportedContentError``).
  A request that asks for reasoning (settings, not off) is stateless: ``store: false`` and
  ``include: ["reasoning.encrypted_content"]`` ("enables reasoning items to be used in multi-turn
  conversations when using the Responses API statelessly (like when the ``store`` parameter is set to
  ``false``...)", ``response_create_params.py``), so the reasoning items carry their payload and are replayed
  whole. The settings are the same on every turn of a conversation, so these two fields are too; without
  settings neither is sent (``store`` defaults to true and replayed items are found by id; a non-reasoning
  model is not sent an ``include`` it has nothing for);
- the system prompt is ``instructions`` ("A system (or developer) message inserted into the model's
  context", ``response_create_params.py``); a body without it whose first input item is a ``system`` or
  ``developer`` message with a string content (the AI SDK's spelling for reasoning models) reads that
  message as the system prompt, its role in ``provider_details["system_role"]`` (and ``system_type``:
  the item said ``"type": "message"``), and is written back the same way;
- refusals (``refusal`` parts, ``response.refusal.delta``) arrive as text; hosted-tool items
  (web search, MCP, custom tools ...) in a response are not function calls and are skipped.

Round trips: ``request_to_wire(request_from_wire(body)).body == body`` keeps every wire field: unknown
top-level fields in ``provider_details["extra"]``, per-item and per-part details (``_openai_responses_items``),
hosted tools by position, and a ``tool_choice`` with no unified form (``allowed_tools``, hosted choices)
raw in ``extra`` with ``Request.tool_choice`` None. Items and parts with no unified form (``item_reference``,
``input_file``, an ``input_image`` by ``file_id``) raise ``UnsupportedContentError``.
Documented normalisations (hand-made bodies only; no recorded body needs one):
- a function tool without ``parameters`` gets an empty object schema (reported as a ``SchemaChange``);
- a reasoning item with nothing after it in its assistant turn is left out (the API refuses it).
Unified -> wire -> unified: ``ReasoningSettings(enabled=True)`` without an effort sends no ``reasoning``
(the model's default) and comes back as None; a ``reasoning`` object's other keys (``summary``,
``context``) stay raw in ``provider_details["extra"]["reasoning"]`` beside the effort read, and one
without an effort, or with an effort outside ``minimal``..``high``, stays raw there whole.
Not a wire difference but worth knowing: tool output text that starts with ``Error: `` reads as
``is_error=True`` with the prefix removed (the prefix comes back on the way out).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from conformance.adapters._openai_errors import error_from_wire, error_info
from conformance.adapters._openai_responses_items import (
    SOURCE,
    items_from_message,
    messages_from_items,
    reasoning_signature,
    reasoning_text,
    without,
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
    object_schema,
    stream_broken,
    synthetic_call_id,
)
from conformance.assembly import fold
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.framing import SSEDecoder, line_pieces
from conformance.model import (
    ErrorEvent,
    Finish,
    FinishReason,
    JSONObject,
    Message,
    ReasoningDelta,
    ReasoningSettings,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    Usage,
    UsageEvent,
)

__all__ = [
    "ADAPTER",
    "TOOL_SEARCH",
    "capabilities",
    "error_from_wire",
    "is_client_tool_search",
    "request_from_wire",
    "request_to_wire",
    "resolve_item_references",
    "response_from_wire",
    "stream_from_wire",
    "tools_to_wire",
]

# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

_FINISH_REASONS: dict[str, FinishReason] = {
    # response.status, or incomplete_details.reason when the status is "incomplete" (§2c)
    "completed": "stop",
    "max_output_tokens": "length",
    "content_filter": "content_filter",
    "failed": "error",
}

_NAME_RULE = NameRule(allowed="a-zA-Z0-9_-", max_len=64)  # §2a (same as Chat), E14

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


def _names(tools: Sequence[Tool]) -> NameMap:
    return _NAME_RULE.map(t.name for t in tools)


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> flat ``{"type": "function", "name", "description", "parameters", "strict"}``."""
    names = _names(tools)
    wire: list[JSONObject] = []
    changes: list[SchemaChange] = []
    for tool in tools:
        schema, changed = object_schema(tool)
        changes.extend(changed)
        entry: JSONObject = {"type": "function", "name": names.wire(tool.name)}
        if tool.description is not None:
            entry["description"] = tool.description
        entry["parameters"] = schema
        if not tool.provider_details.get("omit_strict"):
            entry["strict"] = False  # omitted means strict (OAI-DOCS 2026-03-31): keep MCP schemas as they are
        entry.update(tool.provider_details.get("tool", {}))
        wire.append(entry)
    return WireTools(tools=wire, changes=tuple(changes), names=names)


def _tool_from_wire(item: Mapping[str, Any], names: NameMap) -> Tool:
    extra = without(item, "type", "name", "description", "parameters")
    description = item.get("description")
    if "description" in item and not isinstance(description, str):
        extra["description"] = description  # an explicit null
    parameters = item.get("parameters")
    if "parameters" in item and not isinstance(parameters, Mapping):
        extra["parameters"] = parameters
    if extra.get("strict") is False:
        del extra["strict"]  # what tools_to_wire sends anyway: unified tools round-trip unchanged
    details: JSONObject = {"tool": extra} if extra else {}
    if "strict" not in item:
        details["omit_strict"] = True
    return Tool(
        name=names.original(str(item.get("name", ""))),
        description=description if isinstance(description, str) else None,
        input_schema=parameters if isinstance(parameters, Mapping) else {},
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


_EFFORTS = ("minimal", "low", "medium", "high")
"""The unified efforts, each one of the wire's (``shared/reasoning_effort.py``)."""

_ENCRYPTED_REASONING = "reasoning.encrypted_content"
"""The ``include`` value that returns reasoning items with their payload (``ResponseIncludable``)."""


def _reasoning_settings_to_wire(settings: ReasoningSettings | None) -> JSONObject | None:
    """``Request.reasoning`` -> the ``reasoning`` object (None: send none, the model's default)."""
    if settings is None:
        return None
    if not settings.enabled:
        return {"effort": "none"}  # shared/reasoning_effort.py: "none" turns reasoning off
    if settings.budget_tokens is not None:
        raise UnsupportedContentError(
            "OpenAI Responses has no reasoning token budget (only reasoning.effort): "
            "leave budget_tokens out, or give an effort instead"
        )
    return {"effort": settings.effort} if settings.effort is not None else None


def _reasoning_settings_from_wire(body: Mapping[str, Any]) -> ReasoningSettings | None:
    """The ``reasoning`` object's ``effort`` read back, when it is ``none`` or a unified effort; None
    otherwise (the object stays raw in ``extra``). Its other keys (``summary``: "A summary of the
    reasoning performed by the model", ``shared_params/reasoning.py:54-60``) stay in ``extra``'s
    ``reasoning``: they ask for something beside the effort, not another effort."""
    raw = body.get("reasoning")
    if not isinstance(raw, Mapping) or "effort" not in raw:
        return None
    effort = raw["effort"]
    if effort == "none":
        return ReasoningSettings(enabled=False)
    if effort in _EFFORTS:
        return ReasoningSettings(effort=effort)
    return None


def _asks_for_reasoning(settings: ReasoningSettings | None) -> bool:
    """Reasoning asked for: the request goes stateless (``store: false``, ``include``; module docstring)."""
    return settings is not None and settings.enabled


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> Responses body (``instructions`` + ``input`` items)."""
    request, result_notes = request_view(request, carries=WIRE_CARRIES[SOURCE], wire=SOURCE)  # docs/mcp.md
    details = request.provider_details
    wire_tools = tools_to_wire(request.tools)
    names = wire_tools.names
    reasoning = _reasoning_settings_to_wire(request.reasoning)
    items: list[JSONObject] = []
    notes: list[str] = list(result_notes)
    for message in request.messages:
        items.extend(items_from_message(message, names, notes))
    body: JSONObject = {"model": request.model} if request.model else {}
    if request.system is not None and details.get("system_role") in ("system", "developer"):
        first: JSONObject = {"type": "message"} if details.get("system_type") else {}
        items.insert(0, {**first, "role": details["system_role"], "content": request.system})
    elif request.system is not None:
        body["instructions"] = request.system
    if details.get("input_string") and len(items) == 1 and set(items[0]) == {"role", "content"}:
        body["input"] = items[0]["content"] if isinstance(items[0]["content"], str) else items
    elif items or not details.get("no_input"):
        body["input"] = items
    tools = list(wire_tools.tools)
    for position, hosted in details.get("hosted_tools", ()):
        tools.insert(position, hosted)  # non-function tools kept by position
    if tools:
        body["tools"] = tools
    choice = request.tool_choice
    if choice in ("auto", "none", "required"):
        body["tool_choice"] = choice
    elif choice is not None:
        body["tool_choice"] = {"type": "function", "name": names.wire(choice)}  # flat (§2a)
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.stream:
        body["stream"] = True
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if reasoning is not None:
        body["reasoning"] = reasoning
    if _asks_for_reasoning(request.reasoning):
        if not details.get("no_include"):
            body["include"] = [_ENCRYPTED_REASONING]
        if not details.get("no_store"):
            body["store"] = False
    wire_extra = dict(details.get("extra", {}))
    if reasoning is not None and isinstance(wire_extra.get("reasoning"), Mapping):
        wire_extra["reasoning"] = {**reasoning, **wire_extra["reasoning"]}  # summary ... beside the effort
    body.update(wire_extra)
    return WireRequest(
        path="/v1/responses",
        body=body,
        stream=request.stream,
        schema_changes=wire_tools.changes,
        notes=tuple(notes),
    )


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Responses body -> unified request (``tools`` maps wire names back)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("a Responses request body must be a JSON object")
    names = _names(tools) if tools else NameMap()
    details: JSONObject = {}
    extra = without(body, "model", "input", "tools", "tool_choice")
    system = extra.pop("instructions", None) if isinstance(body.get("instructions"), str) else None
    if body.get("stream") is True:
        del extra["stream"]
    parallel = extra.pop("parallel_tool_calls", None) if isinstance(body.get("parallel_tool_calls"), bool) else None
    max_tokens = extra.pop("max_output_tokens", None) if isinstance(body.get("max_output_tokens"), int) else None
    reasoning = _reasoning_settings_from_wire(body)
    if reasoning is not None:
        rest = without(body["reasoning"], "effort")
        if rest:
            extra["reasoning"] = rest  # summary ...: written back beside the effort
        else:
            del extra["reasoning"]
    if _asks_for_reasoning(reasoning):  # what request_to_wire adds, unless the body left it out
        details.update({f"no_{key}": True for key in ("include", "store") if key not in body})
    wire_tools: list[Tool] = []
    for position, tool in enumerate(body.get("tools") or []):
        if tool.get("type") == "function":
            wire_tools.append(_tool_from_wire(tool, names))
        else:  # hosted tools (web_search, mcp, custom ...) have no unified form: keep them in place
            details.setdefault("hosted_tools", []).append([position, tool])
    if "tools" in body and not body["tools"]:
        extra["tools"] = body["tools"]
    tool_choice = _tool_choice_from_wire(body.get("tool_choice"), names)
    if tool_choice is None and body.get("tool_choice") is not None:
        extra["tool_choice"] = body["tool_choice"]  # allowed_tools / hosted choices, kept raw
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        details["input_string"] = True
        messages = [Message(role="user", parts=(Text(text=raw_input),))]
    else:
        if raw_input is None:
            details["no_input"] = True
        items = list(raw_input or [])
        if system is None and "instructions" not in body and items and _is_system_item(items[0]):
            system, first = items[0]["content"], items.pop(0)
            details["system_role"] = first["role"]
            if "type" in first:
                details["system_type"] = True
        messages = messages_from_items(items, names)
    if extra:
        details["extra"] = extra
    return Request(
        model=str(body.get("model", "")),
        system=system,
        messages=tuple(messages),
        tools=tuple(wire_tools),
        tool_choice=tool_choice,
        parallel_tool_calls=parallel,
        stream=body.get("stream") is True,
        max_tokens=max_tokens,
        reasoning=reasoning,
        provider_details=details,
    )


def _is_system_item(item: Any) -> bool:
    """A first input item that is the system prompt in all but place: a ``system`` or ``developer``
    message with a string content and nothing else. ``instructions`` is "A system (or developer)
    message inserted into the model's context" (``response_create_params.py:112-118``); the AI SDK
    sends the system prompt as such a message (``developer`` for the models it knows as reasoning
    models, ``@ai-sdk/openai/dist/index.js:716,5996-6003``, 4.0.118), as the Chat reader reads a first
    ``system``/``developer`` message (``openai_chat.request_from_wire``)."""
    return (
        isinstance(item, Mapping)
        and item.get("role") in ("system", "developer")
        and isinstance(item.get("content"), str)
        and set(item) <= {"role", "content", "type"}
        and item.get("type", "message") == "message"
    )


def resolve_item_references(body: Mapping[str, Any], served: Iterable[bytes]) -> Mapping[str, Any]:
    """``body`` with each ``{"type": "item_reference", "id": ...}`` input item replaced by the output item
    of that id among the answers ``served`` (whole Responses bodies or their streams), as OpenAI resolves
    a reference to a stored item (``ResponseInputItemParam.ItemReference``: "An internal identifier for an
    item to reference"; ``store`` defaults to true, ``response_create_params.py``); the AI SDK sends its
    history's items so unless told ``store: false`` (@ai-sdk/openai dist/index.js:6089-6101, 6414-6430,
    4.0.118). A reference to an id no answer gave stays: the reader says so, as OpenAI answers
    ``invalid_request_error`` "Item with id 'rs_...' not found" (router-for-me/CLIProxyAPI#2381).
    ``body`` itself when it holds no reference."""
    items = body.get("input")
    if not isinstance(items, list) or not any(_is_reference(item) for item in items):
        return body
    stored: dict[str, Any] = {}
    for answer in served:
        for item in _output_items(answer):
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                stored[item["id"]] = dict(item)
    resolved = [stored.get(item["id"], item) if _is_reference(item) else item for item in items]
    return {**body, "input": resolved}


def _is_reference(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type") == "item_reference" and isinstance(item.get("id"), str)


def _output_items(answer: bytes) -> list[Any]:
    """The output items of one answer: a body's ``output``, or a stream's ``response.output_item.done``
    items and its final response's ``output``; none when it is neither."""
    try:
        whole = orjson.loads(answer)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, Mapping):
        output = whole.get("output")
        return list(output) if isinstance(output, list) else []
    found: list[Any] = []
    decoder = SSEDecoder()
    for chunk in line_pieces([answer], sse=True):
        for event in decoder.decode(chunk):
            try:
                data = orjson.loads(event.data)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(data, Mapping):
                continue
            if data.get("type") == "response.output_item.done" and isinstance(data.get("item"), Mapping):
                found.append(data["item"])
            response = data.get("response")
            if isinstance(response, Mapping) and isinstance(response.get("output"), list):
                found += response["output"]
    return found


def _tool_choice_from_wire(choice: Any, names: NameMap) -> str | None:
    if choice in ("auto", "none", "required"):
        return str(choice)
    if isinstance(choice, Mapping) and choice.get("type") == "function" and choice.get("name"):
        return names.original(str(choice["name"]))
    return None


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object; otherwise (absent, null, or not an object) an empty one."""
    return value if isinstance(value, Mapping) else {}


def _usage(raw: Mapping[str, Any]) -> Usage:
    input_details = _mapping(raw.get("input_tokens_details"))  # detail keys are optional in practice (§2c)
    output_details = _mapping(raw.get("output_tokens_details"))
    return Usage(
        input_tokens=raw.get("input_tokens"),
        output_tokens=raw.get("output_tokens"),
        total_tokens=raw.get("total_tokens"),
        cache_read_tokens=input_details.get("cached_tokens"),
        cache_write_tokens=input_details.get("cache_write_tokens"),
        reasoning_tokens=output_details.get("reasoning_tokens"),
    )


def _finish(response: Mapping[str, Any], tracker: CallTracker) -> list[StreamEvent]:
    """Usage, then end open calls and say why the response ended (calls + completed -> tool_calls)."""
    events: list[StreamEvent] = []
    if isinstance(response.get("usage"), Mapping):
        events.append(UsageEvent(_usage(response["usage"])))
    status = str(response.get("status") or "completed")
    raw = status
    if status == "incomplete":
        raw = str((response.get("incomplete_details") or {}).get("reason") or status)
    reason = _FINISH_REASONS.get(raw, "other")
    if status == "completed":
        events.extend(tracker.end_all())
        if tracker.count and reason == "stop":
            reason = "tool_calls"
    elif status == "failed":
        info = error_info(response.get("error") or {"message": "the response failed"}, None, {})
        events.extend(tracker.end_all(error=f"the response failed: {info.message}"))
        events.append(ErrorEvent(info))
    else:  # incomplete (cut by length or a filter), cancelled, ...: an open call is not usable
        events.extend(tracker.end_all(error=f"the response ended ({raw}) before the call was complete"))
    return [*events, Finish(reason, raw)]


def _item_events(item: Mapping[str, Any], tracker: CallTracker, response_id: str, position: int) -> list[StreamEvent]:
    """One complete output item as events; a call whose item is not ``completed`` stays open."""
    if not isinstance(item, Mapping):
        raise WireFormatError(f"output[{position}] is not an item object: {item!r:.80}")
    kind = item.get("type")
    if kind == "message":
        texts: list[StreamEvent] = []
        for n, part in enumerate(item.get("content") or []):
            slot = "refusal" if isinstance(part, Mapping) and part.get("type") == "refusal" else "text"
            text = part.get(slot) if isinstance(part, Mapping) else None
            if not isinstance(part, Mapping) or (text and not isinstance(text, str)):
                raise WireFormatError(f"output[{position}].content[{n}] is not a text or refusal part: {part!r:.80}")
            if text:
                texts.append(TextDelta(text))
        return texts
    if kind == "reasoning":
        return [_reasoning_event(item, position, with_text=True)]
    client_search = is_client_tool_search(item)
    if kind != "function_call" and not client_search:
        return []  # hosted-tool items (web_search_call, mcp_call, server tool_search ...) ran on the server
    key = _text_or(item.get("id"), position)
    call_id = _text_or(item.get("call_id"), synthetic_call_id("openai_responses", response_id, position))
    name = TOOL_SEARCH if client_search else str(item.get("name", ""))
    details = _call_details(item)
    if client_search:
        details = {**details, "item_type": kind, "execution": "client"}
    events: list[StreamEvent] = [tracker.start(key, call_id, name, details)]
    arguments = item.get("arguments")
    text = arguments if isinstance(arguments, str) else dumps_compact(arguments) if arguments is not None else ""
    if (chunk := tracker.chunk(key, text)) is not None:
        events.append(chunk)
    status = item.get("status", "completed")
    if status in ("completed", "incomplete"):
        error = "the call item is incomplete" if status == "incomplete" else None
        if (end := tracker.end(key, error=error)) is not None:
            events.append(end)
    return events


def _reasoning_event(item: Mapping[str, Any], position: int, *, with_text: bool) -> ReasoningDelta:
    """The delta that closes a reasoning block and carries its item for replay (``signature`` =
    ``encrypted_content``); an item whose only content is its payload (no summary or reasoning text, and
    no text streamed: ``with_text``) is redacted reasoning (``redacted`` = ``encrypted_content``). A
    payload or summary of the wrong JSON type raises ``WireFormatError``."""
    where = f"output[{position}]"
    text = reasoning_text(item, where)
    signature = reasoning_signature(item, where)
    details = {"item": dict(item)}
    if signature is not None and not text and with_text:
        return ReasoningDelta(redacted=signature, provider_details=details, source=SOURCE)
    return ReasoningDelta(text if with_text else "", signature, provider_details=details, source=SOURCE)


def _index_or(value: Any, default: int) -> int:
    """An ``output_index`` as the wire sent it when it is a whole number, else ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text_or(value: Any, default: Any) -> Any:
    """An id as the wire sent it when it is text, else ``default`` (an id of another JSON type, as a
    broken body may hold, names nothing)."""
    return value if isinstance(value, str) and value else default


TOOL_SEARCH = "tool_search"
"""The unified name of a ``tool_search_call`` the client must execute."""


def is_client_tool_search(item: Mapping[str, Any]) -> bool:
    """A ``tool_search_call`` item with ``execution: "client"`` (openai-python
    ``ResponseToolSearchCall``: ``id``, ``call_id``, ``arguments`` object, ``execution``, ``status``):
    the client runs the search, so it is surfaced as a call, not dropped like server-run items."""
    return item.get("type") == "tool_search_call" and item.get("execution") == "client"


def _call_details(item: Mapping[str, Any]) -> JSONObject:
    return {"item_id": item["id"]} if item.get("id") else {}  # E12: the fc_ id, replayed as the item id


def _events_from_body(body: Mapping[str, Any], names: NameMap) -> Iterator[StreamEvent]:
    """A non-streamed ``response`` object as the events its stream would give."""
    output = body.get("output")
    if not isinstance(output, list):
        raise WireFormatError("a Responses body without an output list")
    tracker = CallTracker(names)
    response_id = str(body.get("id", ""))
    for position, item in enumerate(output):
        yield from _item_events(item, tracker, response_id, position)
    yield from _finish(body, tracker)


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``response`` object -> unified response (the same fold streams use)."""
    details = {k: body[k] for k in ("id", "model") if k in body}
    return fold(_events_from_body(body, _names(tools)), provider_details=details)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Stream:
    """State of one Responses event stream (§2d, §9 rule 3)."""

    __slots__ = ("arguments", "done", "reasoning_at", "response_id", "saw_items", "started", "texted", "tracker")

    def __init__(self, names: NameMap) -> None:
        self.tracker = CallTracker(names)
        self.response_id = ""
        self.done = False
        self.saw_items = False
        self.arguments: dict[Any, list[str]] = {}  # item id -> argument deltas so far
        self.started: set[Any] = set()  # item ids of calls that started
        self.texted: set[Any] = set()  # message item ids that got text deltas
        self.reasoning_at: dict[Any, tuple[str, int]] = {}  # reasoning item id -> (event, part index) last seen

    def feed(self, name: str, data: str) -> list[StreamEvent]:
        if not data:
            return []
        if data == "[DONE]":  # Responses sends none (§2d); tolerate one
            return self.close()
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.done = True
            return stream_broken(self.tracker, "malformed_response", f"invalid JSON in a stream event: {data[:80]!r}")
        if not isinstance(event, dict):
            return []
        # E29: the data's type decides, wherever the event: line is; a bare {"error": ...} is an error event
        kind = event.get("type") or name or ("error" if event.get("error") else "")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            self.texted.add(event.get("item_id"))
            delta = event.get("delta")
            return [TextDelta(delta)] if delta else []
        if kind == "response.function_call_arguments.delta":
            key = event.get("item_id")
            delta = event.get("delta")
            if delta and isinstance(delta, str) and (chunk := self.tracker.chunk(key, delta)) is not None:
                self.arguments.setdefault(key, []).append(delta)
                return [chunk]
            return []
        if kind == "response.reasoning_summary_text.delta" or kind == "response.reasoning_text.delta":
            return self._reasoning(kind, event)
        if kind == "response.output_item.added":
            return self._item_added(event)
        if kind == "response.function_call_arguments.done":
            return self._call_done(event.get("item_id"), event.get("arguments"), "completed")
        if kind == "response.output_item.done":
            return self._item_done(event)
        if kind in _TERMINAL:
            self.done = True
            response = event.get("response")
            response = response if isinstance(response, Mapping) else {"status": kind.rpartition(".")[2]}
            events: list[StreamEvent] = []
            if not self.saw_items:  # a server that sends the output only in the terminal event
                for position, item in enumerate(response.get("output") or []):
                    events.extend(_item_events(item, self.tracker, self.response_id, position))
            return events + _finish(response, self.tracker)
        if kind == "error":  # E11: flat (SDK ResponseErrorEvent) or nested under "error" (recorded)
            self.done = True
            error = event.get("error")
            info = error_info(error if isinstance(error, Mapping) else without(event, "type", "sequence_number"))
            return [
                *self.tracker.end_all(error=f"the stream failed: {info.message}"),
                ErrorEvent(info),
                Finish("error", "error"),
            ]
        if kind == "response.created" and isinstance(event.get("response"), Mapping):
            self.response_id = str(event["response"].get("id", ""))
        return []  # response.in_progress, content_part.*, *.done texts, unknown events

    def _reasoning(self, kind: str, event: Mapping[str, Any]) -> list[StreamEvent]:
        key = event.get("item_id")
        at = (kind, event.get("summary_index", event.get("content_index", 0)))
        delta = event.get("delta")
        last = self.reasoning_at.get(key)
        self.reasoning_at[key] = at
        if not delta or not isinstance(delta, str):
            return []
        # parts of one item are joined with a blank line, as _reasoning_text joins a whole item
        return [ReasoningDelta("\n\n" + delta if last is not None and last != at else delta, source=SOURCE)]

    def _item_added(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        self.saw_items = True
        item = event.get("item")
        if not isinstance(item, Mapping) or item.get("type") != "function_call":
            return []
        position = _index_or(event.get("output_index"), self.tracker.count)
        key = _text_or(item.get("id"), position)
        if key in self.started:
            return []
        self.started.add(key)
        call_id = _text_or(item.get("call_id"), synthetic_call_id("openai_responses", self.response_id, position))
        events: list[StreamEvent] = [self.tracker.start(key, call_id, str(item.get("name", "")), _call_details(item))]
        self.arguments[key] = []
        text = item.get("arguments")
        if text and isinstance(text, str) and (chunk := self.tracker.chunk(key, text)) is not None:
            self.arguments[key].append(text)
            events.append(chunk)
        return events

    def _call_done(self, key: Any, full: Any, status: Any) -> list[StreamEvent]:
        """Close a call with its final argument text (preferred over the deltas, §9 rule 3)."""
        tracker = self.tracker
        if not tracker.is_open(key):
            return []
        so_far = "".join(self.arguments.pop(key, ()))
        events: list[StreamEvent] = []
        error: str | None = None
        if isinstance(full, str) and full != so_far:
            if full.startswith(so_far):
                if (chunk := tracker.chunk(key, full[len(so_far) :])) is not None:
                    events.append(chunk)
            else:
                error = f"the final arguments disagree with the streamed deltas (final: {full[:80]!r})"
        if status == "incomplete" and error is None:
            error = "the call item is incomplete"
        if (end := tracker.end(key, error=error)) is not None:
            events.append(end)
        return events

    def _item_done(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        self.saw_items = True
        item = event.get("item")
        if not isinstance(item, Mapping):
            return []
        kind = item.get("type")
        key = item.get("id")
        position = _index_or(event.get("output_index"), self.tracker.count)
        if kind == "function_call" or is_client_tool_search(item):
            key = key or position
            if key in self.started:
                return self._call_done(key, item.get("arguments"), item.get("status", "completed"))
            self.started.add(key)  # a call that arrives whole, without output_item.added
            return _item_events(item, self.tracker, self.response_id, position)
        if kind == "message":
            return [] if key in self.texted else _item_events(item, self.tracker, self.response_id, position)
        if kind == "reasoning":
            # the item of output_item.done holds the final encrypted_content (SDK ResponseReasoningItemParam);
            # its text already went out as deltas when there were any
            return [_reasoning_event(item, position, with_text=key not in self.reasoning_at)]
        return []

    def close(self) -> list[StreamEvent]:
        """End of input (or a ``[DONE]``) without a terminal event."""
        self.done = True
        return stream_broken(
            self.tracker, "stream_incomplete", "the stream ended without response.completed/incomplete/failed"
        )


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """SSE bytes of a ``stream: true`` request -> normalized events, as the bytes arrive."""
    decoder = SSEDecoder()
    state = _Stream(_names(tools))
    for chunk in line_pieces(chunks, sse=True):
        for event in decoder.decode(chunk):
            yield from state.feed(event.event, event.data)
            if state.done:
                return
    for event in decoder.flush():
        yield from state.feed(event.event, event.data)
        if state.done:
            return
    yield from state.close()


# --------------------------------------------------------------------------------------------
# Errors: ``error_from_wire`` (imported above) is the one OpenAI mapping that Chat and Responses
# share, ``conformance.adapters._openai_errors`` (§1e, §2e).
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset(
    "streaming parallel_tool_calls disable_parallel_tool_calls system_prompt call_ids images_in_tool_results"
    " reasoning_replay reasoning_effort reasoning_off"
    " tool_choice_auto tool_choice_none tool_choice_required tool_choice_named".split()
)

ADAPTER = Adapter(
    name="openai_responses",
    wire_format="openai_responses",
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
