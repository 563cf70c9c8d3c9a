"""Anthropic Messages wire format (``POST /v1/messages``).

Sources: wire-formats.md §3 (anthropic-sdk-python ``types/*_param.py``, ``types/stop_reason.py``,
``types/raw_message_delta_event.py``, ``_streaming.py``, ``lib/streaming/_messages.py``,
``_client.py``; the API errors page), §8, §9 rule 4 and edge cases E9, E10, E13, E17, E19, E22, E23;
the real recordings in ``tests/realworld/cassettes/anthropic``. The ``messages`` list, tools and
tool choice are translated by the private helper ``_anthropic_messages`` (the message history, its
own concern); stop reasons, usage, tool_use ids and error kinds are read here (tables and wire
values); long runs of streamed argument fragments are read by the framing layer's
``framing.runs.RunReader``.

Quirks handled here:
- tool input is a JSON *object* (``tool_use.input``); streams send it as raw text fragments
  (``input_json_delta.partial_json``, the first one ``""``) keyed by the content block ``index``,
  parsed at ``content_block_stop``; an empty buffer means ``{}`` (§9 rule 4, E3);
- the event kind is the data JSON's ``type`` (proxies may drop the ``event:`` line); ``ping`` and
  unknown events are ignored (E9); data JSON is parsed, never string-matched (it comes padded);
- a stop that can cut output (``max_tokens``, ``model_context_window_exceeded``, ``refusal``, or
  an unknown reason such as ``terminated``, E22) right after a ``tool_use`` block means its input
  may be incomplete: the End of the most recent tool_use block is *held* until the next event says
  why the turn ended, and ends with ``arguments_error`` unless that reason is ``end_turn``,
  ``tool_use``, ``stop_sequence`` or ``pause_turn``; a non-streamed body applies the same rule to
  a tool_use that is its last block;
- ``message_delta.usage`` is cumulative and replaces ``message_start``'s fields one by one, as the
  SDK's accumulator does (E19); ``input_tokens`` here is the total input (input + cache creation +
  cache read, the SDK's ``RawMessageDeltaEvent.usage`` docstring);
- ``event: error`` inside a 200 stream -> error event with the kind of ``error.type``; a JSON body
  where SSE was expected (E23) -> its error, or ``malformed_response``;
- thinking / redacted_thinking blocks <-> ``Reasoning`` parts with ``source="anthropic"``, in their
  place among text and tool_use blocks (interleaved thinking between calls included), replayed
  verbatim and in order (E10; ANT-SDK ``thinking_block_param.py``); streamed, the text is the
  ``thinking_delta`` pieces and the signature the one ``signature_delta`` just before the block's
  ``content_block_stop``, assigned, not appended (``signature_delta.py``,
  ``lib/streaming/_messages.py``); a text, thinking, signature or data that is not a string is a
  ``WireFormatError`` (whole body) or a ``malformed_response`` error (stream);
- reasoning another wire produced, or without a signature, is left out of a request and said in
  ``WireRequest.notes`` (``_anthropic_messages``);
- ``Request.reasoning`` <-> ``thinking`` (+ ``output_config.effort``): off ``{"type": "disabled"}``,
  a budget ``{"type": "enabled", "budget_tokens": N}`` (N ≥ 1024 and < ``max_tokens``; only tool
  choice auto/none then: platform.claude.com build-with-claude/thinking-tool-workflows), otherwise
  ``{"type": "adaptive"}``; an effort low/medium/high is ``output_config.effort`` (there is no
  ``minimal``); what the wire cannot say is ``UnsupportedContentError``
  (``_reasoning_settings_to_wire``);
- ``usage.output_tokens_details.thinking_tokens`` is ``Usage.reasoning_tokens`` (ANT-SDK ``usage.py``);
- ``cache_control`` breakpoints: ``Tool.cache_control`` on the tool, ``Request.system_cache_control``
  on the system prompt sent as one text block, ``Text`` / ``ToolResult.cache_control`` on their block
  (ANT-SDK ``cache_control_ephemeral_param.py``; the ``cache_control`` fields of ``tool_param.py``,
  ``text_block_param.py``, ``tool_result_block_param.py``);
- unified ``role="tool"`` messages become the next *user* message with the tool_result blocks
  first and all results of a turn together; a unified user message right after them joins that
  message behind the results (E17, roles alternate);
- call ids must match ``^[a-zA-Z0-9_-]+$`` (E13): another provider's id is rewritten to
  ``<id with invalid chars as _>_<8 hex of its sha256>``, the same in ``tool_use.id`` and
  ``tool_result.tool_use_id``; valid ids pass unchanged;
- ``is_error`` and images (base64 or URL) travel natively in tool results.

Documented normalisations. Wire -> unified -> wire is JSON-equal except:
- tool_result blocks that follow other blocks of a user message move in front (E17: the API
  rejects the other order);
- a body the API itself rejects as malformed (a message that is not an object, an unknown role or
  block type) raises ``WireFormatError`` / ``UnsupportedContentError`` instead of round-tripping.
Reasoning fields the unified settings do not cover (``display``, effort ``xhigh``/``max``,
``between_tools``, ``output_config.format``) round-trip as read, and a body's own ``thinking`` /
``output_config`` are resent unchanged (unchecked: the API judges them) while the settings they give
are the request's.
Unified -> wire -> unified is the identity except:
- ``max_tokens`` is required on the wire: 1024 is sent when the request has none, plus the thinking
  budget when there is one (thinking tokens count toward ``max_tokens``, ``thinking_config_param.py``);
- reasoning comes back with ``source="anthropic"`` (it is on this wire);
- invalid call ids come back rewritten (above); an MCP text ``Resource`` in a tool result is sent
  as a text block and comes back as ``Text``;
- ``Reasoning`` another wire produced, or without a signature, is not sent (a thinking block needs
  the signature Anthropic made: ``ThinkingBlockParam.signature`` is required) and a note says so;
- ``parallel_tool_calls=False`` without a tool choice is sent as ``{"type": "auto",
  "disable_parallel_tool_use": true}`` and comes back with ``tool_choice="auto"``; under
  ``tool_choice="none"`` it is not sent (``ToolChoiceNoneParam`` has only ``type``);
- a system prompt given as text blocks comes back as their text joined with ``"\\n\\n"`` and the
  last block's ``cache_control`` (the blocks themselves are kept in ``provider_details`` and resent
  while that text and marker are unchanged).
A tool call whose arguments could not be parsed cannot be replayed (``input`` must be an object):
``UnsupportedContentError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any
from urllib.parse import urlsplit

import orjson

from conformance.adapters._anthropic_messages import (
    WIRE,
    messages_from_wire,
    messages_to_wire,
    system_text,
    tool_choice_to_wire,
    tool_from_wire,
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
    header,
    load_json_body,
    object_schema,
    retry_after_from_headers,
    stream_broken,
    synthetic_call_id,
)
from conformance.assembly import fold
from conformance.errors import ProviderError, UnsupportedContentError, WireFormatError
from conformance.framing import Run, SSEDecoder, line_pieces
from conformance.framing.runs import FAST, RunPolicy, RunReader
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    JSONObject,
    ReasoningDelta,
    ReasoningSettings,
    Request,
    Response,
    StreamEvent,
    TextDelta,
    Tool,
    ToolCallChunk,
    ToolCallEnd,
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

# §3a, E14: the API answers 400 "tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
# (home-assistant/core#147760, netclaw-dev/netclaw#1133; {1,64} until early 2025, apify/tester-mcp-client#11)
_NAME_RULE = NameRule(allowed="a-zA-Z0-9_-", max_len=128)
_DEFAULT_MAX_TOKENS = 1024
_VERSION_HEADERS = {"anthropic-version": "2023-06-01"}  # ANT-SDK _client.py default_headers
_HANDLED_KEYS = frozenset("model system messages tools tool_choice stream max_tokens".split())
_REASONING_KEYS = ("thinking", "output_config")
"""Top-level fields that carry reasoning settings (ANT-SDK ``message_create_params.py``)."""

_MIN_BUDGET = 1024
"""``thinking.budget_tokens`` "Must be ≥1024 and less than ``max_tokens``" (ANT-SDK
``thinking_config_enabled_param.py``)."""

_EFFORTS = frozenset({"low", "medium", "high"})
"""Unified effort levels Anthropic has (``OutputConfigParam.effort``: low, medium, high, xhigh, max;
no ``minimal``)."""


_FINISH_REASONS: dict[str, FinishReason] = {
    # ANT-SDK types/stop_reason.py; anything else (``terminated``, E22) is "other"
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
    "pause_turn": "other",  # a server-tool turn paused; the client resends to continue
    "model_context_window_exceeded": "length",
}

_COMPLETE_STOPS = frozenset({"end_turn", "tool_use", "stop_sequence", "pause_turn"})
"""Stop reasons after which the last tool_use block is known to be whole."""

_ERROR_KINDS: dict[str, ErrorKind] = {
    # error.type (API errors page; wire-formats.md §3e)
    "invalid_request_error": "invalid_request",
    "authentication_error": "auth",
    "billing_error": "permission",  # 402: the key may not use the API until billing is fixed; not retryable
    "permission_error": "permission",
    "not_found_error": "not_found",
    "request_too_large": "invalid_request",  # 413, from Cloudflare before the API
    "rate_limit_error": "rate_limit",
    "api_error": "server",
    "timeout_error": "server",  # 504
    "overloaded_error": "overloaded",  # 529
}

_CONTEXT_LENGTH = "prompt is too long"
"""``invalid_request_error`` message prefix for an over-long prompt ("prompt is too long: 203284
tokens > 200000 maximum", anthropics/claude-code#59696)."""


def _names(tools: Sequence[Tool]) -> NameMap:
    return _NAME_RULE.map(t.name for t in tools)


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> ``tools: [{"name", "description", "input_schema", ...}]``; ``inputSchema``
    passes through (its type must be ``object``); ``Tool.cache_control`` is the tool's
    ``cache_control`` (``ToolParam``, ANT-SDK ``tool_param.py``); other wire-only fields ride in
    ``provider_details["tool"]`` (``strict``, ``type``, ...)."""
    names = _names(tools)
    wire: list[JSONObject] = []
    changes: list[SchemaChange] = []
    for tool in tools:
        item: JSONObject = {"name": names.wire(tool.name)}
        if tool.description is not None:
            item["description"] = tool.description
        if not tool.provider_details.get("no_input_schema"):  # server tools (web_search ...) have none
            schema, changed = object_schema(tool)
            changes.extend(changed)
            item["input_schema"] = schema
        item.update(tool.provider_details.get("tool", {}))
        if tool.cache_control is not None:
            item["cache_control"] = dict(tool.cache_control)
        wire.append(item)
    return WireTools(tools=wire, changes=tuple(changes), names=names)


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> Messages body (``max_tokens`` defaults to 1024, plus the thinking budget
    when there is one: the wire requires it, and thinking tokens count toward it)."""
    request, result_notes = request_view(request, carries=WIRE_CARRIES["anthropic"], wire="anthropic")  # docs/mcp.md
    details = request.provider_details
    wire_tools = tools_to_wire(request.tools)
    names = wire_tools.names
    body: JSONObject = {"model": request.model} if request.model else {}
    if request.max_tokens is not None or not details.get("no_max_tokens"):
        body["max_tokens"] = request.max_tokens if request.max_tokens is not None else _default_max_tokens(request)
    if request.system is not None:
        body["system"] = _system_to_wire(request)
    elif request.system_cache_control is not None:
        raise UnsupportedContentError(
            "a cache breakpoint after the system prompt needs a system prompt: give one or drop the breakpoint"
        )
    notes: list[str] = list(result_notes)
    body["messages"] = messages_to_wire(request.messages, names, notes)
    if request.tools:
        body["tools"] = wire_tools.tools
    choice = tool_choice_to_wire(request, names)
    if choice is not None:
        body["tool_choice"] = choice
    if request.stream:
        body["stream"] = True
    body.update(_reasoning_fields(request, body.get("max_tokens")))
    body.update(details.get("extra", {}))
    query = details.get("query")
    return WireRequest(
        path="/v1/messages" + (f"?{query}" if query else ""),
        body=body,
        headers=dict(_VERSION_HEADERS),
        stream=request.stream,
        schema_changes=wire_tools.changes,
        notes=tuple(dict.fromkeys(notes)),
    )


def _default_max_tokens(request: Request) -> int:
    budget = request.reasoning.budget_tokens if request.reasoning is not None else None
    return _DEFAULT_MAX_TOKENS + (budget or 0)


def _system_to_wire(request: Request) -> str | list[JSONObject]:
    """The system prompt: its text blocks as read while text and breakpoint are unchanged; one text
    block with the caller's ``cache_control`` (``TextBlockParam``) when there is one; else a string."""
    blocks = request.provider_details.get("system_blocks")
    marker = request.system_cache_control
    if blocks and system_text(blocks) == request.system and _last_marker(blocks) == marker:
        return list(blocks)
    if marker is not None:
        return [{"type": "text", "text": request.system or "", "cache_control": dict(marker)}]
    return request.system or ""


def _last_marker(blocks: Sequence[Any]) -> Mapping[str, Any] | None:
    """The ``cache_control`` object of the last system block (the breakpoint after the system prompt)."""
    last = blocks[-1] if blocks else None
    marker = last.get("cache_control") if isinstance(last, Mapping) else None
    return marker if isinstance(marker, Mapping) else None


def _reasoning_settings_to_wire(settings: ReasoningSettings) -> JSONObject:
    """Reasoning settings -> ``thinking`` (and ``output_config.effort``), ANT-SDK ``types/``:
    off -> ``{"type": "disabled"}`` (``thinking_config_disabled_param.py``); a budget -> ``{"type":
    "enabled", "budget_tokens": N}`` (``thinking_config_enabled_param.py``: N ≥ 1024); otherwise
    ``{"type": "adaptive"}`` (``thinking_config_adaptive_param.py``: "Claude decides when and how
    much to think"); an effort -> ``output_config: {"effort": level}`` (``output_config_param.py``),
    which also applies without thinking. Raises ``UnsupportedContentError`` for what the wire has no
    form for: the ``minimal`` effort, a budget under 1024, a budget with reasoning off."""
    fields: JSONObject = {}
    budget, effort = settings.budget_tokens, settings.effort
    if effort is not None:
        if effort not in _EFFORTS:
            raise UnsupportedContentError(
                f"Anthropic has no {effort!r} reasoning effort (output_config.effort is low, medium, high, xhigh"
                " or max): ask for 'low'"
            )
        fields["output_config"] = {"effort": effort}
    if not settings.enabled:
        if budget is not None:
            raise UnsupportedContentError(
                "a thinking budget with reasoning off: Anthropic's disabled thinking has no budget"
                " (ThinkingConfigDisabledParam has only type); drop one of them"
            )
        return {"thinking": {"type": "disabled"}, **fields}
    if budget is None:
        return {"thinking": {"type": "adaptive"}, **fields}
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < _MIN_BUDGET:
        raise UnsupportedContentError(
            f"a thinking budget of {budget!r} tokens: Anthropic's budget_tokens must be at least {_MIN_BUDGET}"
            " (and less than max_tokens): raise it"
        )
    return {"thinking": {"type": "enabled", "budget_tokens": budget}, **fields}


def _reasoning_settings_from_wire(body: Mapping[str, Any]) -> ReasoningSettings | None:
    """``thinking`` / ``output_config.effort`` -> reasoning settings; None when the body has none or
    a form the unified settings do not cover (an unknown thinking type, ``xhigh``/``max`` effort
    alone, a budget that is not an integer): those fields then travel as they are."""
    thinking = body.get("thinking")
    config = body.get("output_config")
    effort = config.get("effort") if isinstance(config, Mapping) else None
    level = effort if effort in _EFFORTS else None
    if thinking is None:
        return ReasoningSettings(effort=level) if level is not None else None
    if not isinstance(thinking, Mapping) or (effort is not None and level is None):
        return None
    kind = thinking.get("type")
    if kind == "disabled":
        return ReasoningSettings(enabled=False, effort=level)
    if kind == "adaptive":
        return ReasoningSettings(effort=level)
    budget = thinking.get("budget_tokens")
    if kind == "enabled" and isinstance(budget, int) and not isinstance(budget, bool):
        return ReasoningSettings(budget_tokens=budget, effort=level)
    return None


def _reasoning_fields(request: Request, max_tokens: Any) -> JSONObject:
    """The body's reasoning fields: as read from a body while the settings they give are unchanged
    (the caller's own form, ``display`` and ``output_config.format`` included), else the settings'
    wire form checked against ``max_tokens`` and the tool choice; ``output_config`` fields other
    than ``effort`` are kept either way."""
    read = request.provider_details.get("reasoning_wire")
    if read is not None and _reasoning_settings_from_wire(read) == request.reasoning:
        return dict(read)
    config = read.get("output_config") if isinstance(read, Mapping) else None
    kept = {k: v for k, v in config.items() if k != "effort"} if isinstance(config, Mapping) else {}
    fields = _reasoning_settings_to_wire(request.reasoning) if request.reasoning is not None else {}
    if kept:
        fields["output_config"] = {**kept, **fields.get("output_config", {})}
    thinking = fields.get("thinking", {})
    if thinking.get("type") == "enabled":
        budget = thinking["budget_tokens"]
        if isinstance(max_tokens, int) and budget >= max_tokens:
            raise UnsupportedContentError(
                f"a thinking budget of {budget} tokens with max_tokens {max_tokens}: Anthropic's budget_tokens"
                " must be less than max_tokens (thinking tokens count toward it): raise max_tokens"
            )
        if request.tool_choice not in (None, "auto", "none"):
            raise UnsupportedContentError(
                f"tool_choice {request.tool_choice!r} with a thinking budget: Anthropic's manual extended thinking"
                " allows only tool_choice auto or none (platform.claude.com thinking-tool-workflows); ask for"
                " an effort instead (adaptive thinking allows forcing a tool) or drop the forced choice"
            )
    return fields


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Messages body -> unified request (``tools`` maps wire names back)."""
    if not isinstance(body, Mapping):
        raise WireFormatError("a Messages request body must be a JSON object")
    names = _names(tools) if tools else NameMap()
    details: JSONObject = {}
    settings = _reasoning_settings_from_wire(body)
    handled = _HANDLED_KEYS if settings is None else _HANDLED_KEYS | set(_REASONING_KEYS)
    if settings is not None:
        details["reasoning_wire"] = {k: body[k] for k in _REASONING_KEYS if k in body}
    extra = {k: v for k, v in body.items() if k not in handled}
    if "stream" in body and body["stream"] is not True:
        extra["stream"] = body["stream"]
    if "tools" in body and not body["tools"]:
        extra["tools"] = body["tools"]
    if extra:
        details["extra"] = extra
    if "max_tokens" not in body:
        details["no_max_tokens"] = True  # an invalid body stays as it was
    if query := urlsplit(path).query:
        details["query"] = query
    system = body.get("system")
    system_marker = None
    if isinstance(system, list):
        details["system_blocks"] = system
        system_marker = _last_marker(system)
        system = system_text(system)
    messages = messages_from_wire(body.get("messages") or [], names)
    choice = body.get("tool_choice")
    tool_choice: str | None = None
    parallel: bool | None = None
    if isinstance(choice, Mapping):
        kind = choice.get("type")
        tool_choice = {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))
        if kind == "tool":
            tool_choice = names.original(str(choice.get("name", "")))
        elif tool_choice is None:
            raise WireFormatError(f"unsupported tool_choice {choice!r}")
        if "disable_parallel_tool_use" in choice:
            parallel = not choice["disable_parallel_tool_use"]
        choice_extra = {k: v for k, v in choice.items() if k not in ("type", "name", "disable_parallel_tool_use")}
        if choice_extra:
            details["tool_choice_extra"] = choice_extra
    elif choice is not None:
        raise WireFormatError(f"unsupported tool_choice {choice!r}")
    return Request(
        model=str(body.get("model", "")),
        system=system,
        system_cache_control=system_marker,
        messages=tuple(messages),
        tools=tuple(tool_from_wire(t, names) for t in body.get("tools") or []),
        tool_choice=tool_choice,
        parallel_tool_calls=parallel,
        stream=body.get("stream") is True,
        max_tokens=body.get("max_tokens"),
        reasoning=settings,
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def _usage_from_wire(raw: Mapping[str, Any]) -> Usage:
    """Usage with ``input_tokens`` = input + cache creation + cache read (SDK docstring, E19);
    ``output_tokens_details.thinking_tokens`` (ANT-SDK ``types/output_tokens_details.py``: part of
    ``output_tokens``) is the reasoning count."""
    details = raw.get("output_tokens_details")
    reasoning = _tokens(details.get("thinking_tokens")) if isinstance(details, Mapping) else None
    base = _tokens(raw.get("input_tokens"))
    write = _tokens(raw.get("cache_creation_input_tokens"))
    read = _tokens(raw.get("cache_read_input_tokens"))
    output = _tokens(raw.get("output_tokens"))
    total_input = None if base is None else base + (write or 0) + (read or 0)
    return Usage(
        input_tokens=total_input,
        output_tokens=output,
        total_tokens=None if total_input is None or output is None else total_input + output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=reasoning,
    )


def _tokens(value: Any) -> int | None:
    """A token count as the wire gives it; anything but an integer (a string, a float, a bool) is none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _finish_event(raw_reason: str | None, completed_calls: bool) -> Finish:
    reason = _FINISH_REASONS.get(raw_reason or "", "other")
    if completed_calls and reason == "stop":
        reason = "tool_calls"  # complete calls under end_turn (like E7)
    return Finish(reason, raw_reason)


def _cut_message(raw_reason: str | None) -> str | None:
    """None when the stop reason says the last tool_use block is whole, else why it is not."""
    if raw_reason in _COMPLETE_STOPS:
        return None
    return f"the response stopped ({raw_reason or 'no stop reason'}) while the call's input may be incomplete"


def _call_id_of(block: Mapping[str, Any], message_id: Any, index: Any) -> tuple[str, JSONObject | None]:
    """The tool_use id; a deterministic one, flagged ``synthetic_id``, when a proxy sent none."""
    if block.get("id"):
        return str(block["id"]), None
    return synthetic_call_id("anthropic", message_id, index), {"synthetic_id": True}


def _events_from_body(body: Mapping[str, Any], names: NameMap) -> Iterator[StreamEvent]:
    """A non-streamed ``message`` as the events its stream would give."""
    content = body.get("content")
    if not isinstance(content, list):
        raise WireFormatError("a Messages response body without a content list")
    tracker = CallTracker(names)
    raw_reason = body.get("stop_reason")
    completed = False
    last = len(content) - 1
    for position, block in enumerate(content):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text" and block.get("text"):
            yield TextDelta(_string(block, "text", f"content[{position}]"))
        elif kind == "thinking":
            text = _string(block, "thinking", f"content[{position}]")
            signature = block.get("signature")
            if signature is not None:
                signature = _string(block, "signature", f"content[{position}]")
            yield ReasoningDelta(text, signature=signature, source=WIRE)
        elif kind == "redacted_thinking":
            yield ReasoningDelta(redacted=_string(block, "data", f"content[{position}]"), source=WIRE)
        elif kind == "tool_use":
            call_id, made_up = _call_id_of(block, body.get("id", ""), position)
            yield tracker.start(position, call_id, str(block.get("name", "")), made_up)
            arguments = block.get("input")
            if (chunk := tracker.chunk(position, dumps_compact(arguments))) is not None:
                yield chunk
            cut = _cut_message(raw_reason) if position == last else None
            if cut is None and not isinstance(arguments, dict):
                cut = "tool_use input is not an object"
            end = tracker.end(position, error=cut, arguments=arguments if cut is None else None)
            if end is not None:
                completed = completed or end.arguments_error is None
                yield end
        # other blocks (server_tool_use, web_search_tool_result ...) are not client tool calls
    if isinstance(body.get("usage"), Mapping):
        yield UsageEvent(_usage_from_wire(body["usage"]))
    yield _finish_event(raw_reason, completed)


def _string(block: Mapping[str, Any], key: str, where: str) -> str:
    """A block's text, thinking, signature or data: a string on the wire (ANT-SDK ``types/``); a
    missing one is empty, any other value is not the wire format."""
    value = block.get(key, "")
    if isinstance(value, str):
        return value
    raise WireFormatError(f"{where}: a {block.get('type')} block's {key} is {type(value).__name__}, not a string")


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``message`` body -> unified response (the same fold streams use)."""
    details = {k: body[k] for k in ("id", "model") if k in body}
    return fold(_events_from_body(body, _names(tools)), provider_details=details)


# --------------------------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------------------------


class _Stream:
    """State of one Messages SSE stream (§3d, §9 rule 4).

    Given a ``runs`` reader, it teaches it the stream's ``input_json_delta`` events and the reader
    reads runs of them (``run_chunks``); every other event, and every piece the reader cannot
    vouch for, goes through ``feed``: the general path."""

    __slots__ = (
        "completed",
        "done",
        "held",
        "learning",
        "message_id",
        "policy",
        "runs",
        "signatures",
        "start_inputs",
        "stop_reason",
        "tracker",
        "usage",
    )

    def __init__(self, names: NameMap, policy: RunPolicy | None = None) -> None:
        self.tracker = CallTracker(names)
        self.message_id = ""
        self.held: int | None = None  # tool_use block stopped, its End waiting for the next event
        self.start_inputs: dict[int, Any] = {}  # non-empty ``input`` sent at content_block_start
        self.signatures: dict[int, str] = {}
        self.stop_reason: str | None = None
        self.usage: JSONObject = {}
        self.completed = False
        self.done = False
        self.policy = policy
        self.runs: RunReader | None = None  # made by ``start_runs`` once the stream is past the warm-up
        self.learning = False  # the reader is made and still learns (one test per event either way)

    def feed(self, name: str, data: bytes) -> list[StreamEvent]:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            try:  # invalid UTF-8: the text with replacement characters, as a text decoder gives it
                event = orjson.loads(data.decode("utf-8", "replace"))
            except orjson.JSONDecodeError:
                self.done = True
                text = data.decode("utf-8", "replace")
                return stream_broken(
                    self.tracker, "malformed_response", f"invalid JSON in a stream event: {text[:80]!r}"
                )
        if not isinstance(event, dict):
            return []
        kind = event.get("type") or name  # the data JSON decides (§3d); the event line is a fallback
        if kind == "content_block_delta":  # the hot path
            deltas = self._delta(event.get("index", 0), event.get("delta") or {})
            if (
                self.learning
                and len(deltas) == 1
                and deltas[0].__class__ is ToolCallChunk
                and event.get("type") == "content_block_delta"  # not the SSE name: the reader keeps it
            ):
                runs = self.runs
                assert runs is not None  # learning: the reader is made
                runs.learn(name, data, event)
                self.learning = runs.learning
            return deltas
        events: list[StreamEvent] = []
        if kind == "content_block_start":
            self._release(None, events)
            self._start(event.get("index", 0), event.get("content_block") or {}, events)
        elif kind == "content_block_stop":
            self._stop(event.get("index", 0), events)
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.stop_reason = str(delta["stop_reason"])
            cut = _cut_message(self.stop_reason)
            self._release(cut, events)
            for end in self.tracker.end_all(error=cut):
                self._ended(end, events)
            self._add_usage(event.get("usage"), events)
        elif kind == "message_start":
            message = event.get("message") or {}
            self.message_id = str(message.get("id", ""))
            self._add_usage(message.get("usage"), events)
        elif kind == "message_stop":
            cut = _cut_message(self.stop_reason)
            self._release(cut, events)
            for end in self.tracker.end_all(error=cut):
                self._ended(end, events)
            events.append(_finish_event(self.stop_reason, self.completed))
            self.done = True
        elif kind == "error":  # a provider error inside a 200 stream (§3d)
            error = event.get("error")
            info = _error_info(error if isinstance(error, Mapping) else {"message": str(error)}, None, {})
            events.extend(self.tracker.end_all(error=f"the stream failed: {info.message}"))
            events.extend((ErrorEvent(info), Finish("error")))
            self.done = True
        # "ping" and unknown event types are ignored (E9)
        return events

    def _start(self, index: int, block: Mapping[str, Any], events: list[StreamEvent]) -> None:
        kind = block.get("type")
        if kind == "tool_use":
            call_id, made_up = _call_id_of(block, self.message_id, index)
            events.append(self.tracker.start(index, call_id, str(block.get("name", "")), made_up))
            if block.get("input"):  # some proxies send the whole input here and no deltas
                self.start_inputs[index] = block["input"]
        elif kind == "text":
            text = block.get("text")
            if text is not None and not isinstance(text, str):
                events.extend(self._not_a_string("content_block_start", block))
            elif text:
                events.append(TextDelta(text))
        elif kind == "thinking":
            text, signature = block.get("thinking"), block.get("signature")
            if any(v is not None and not isinstance(v, str) for v in (text, signature)):
                events.extend(self._not_a_string("content_block_start", block))
            elif text:
                events.append(ReasoningDelta(text, source=WIRE))
            if isinstance(signature, str) and signature:
                self.signatures[index] = signature
        elif kind == "redacted_thinking":  # arrives whole (§3d)
            data = block.get("data", "")
            if isinstance(data, str):
                events.append(ReasoningDelta(redacted=data, source=WIRE))
            else:
                events.extend(self._not_a_string("content_block_start", block))

    def _not_a_string(self, where: str, item: Mapping[str, Any]) -> list[StreamEvent]:
        """A thinking block's text, signature or data that is not a string (ANT-SDK ``types/``: all are
        ``str``): the stream is not the wire format."""
        self.done = True
        return stream_broken(
            self.tracker, "malformed_response", f"a {item.get('type')} in {where} holds a value that is not a string"
        )

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        kind = delta.get("type")
        if kind == "input_json_delta":
            text = delta.get("partial_json")
            if text:
                if self.start_inputs:
                    self.start_inputs.pop(index, None)  # deltas replace the start input (SDK accumulator)
                chunk = self.tracker.chunk(index, text)
                return [chunk] if chunk is not None else []
        elif kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str):
                return [TextDelta(text)] if text else []
            return self._not_a_string("content_block_delta", delta) if text is not None else []
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if isinstance(text, str):
                return [ReasoningDelta(text, source=WIRE)] if text else []
            return self._not_a_string("content_block_delta", delta) if text is not None else []
        elif kind == "signature_delta":  # one, just before content_block_stop: assigned, not appended (SDK)
            signature = delta.get("signature", "")
            if not isinstance(signature, str):
                return self._not_a_string("content_block_delta", delta)
            self.signatures[index] = signature
        # citations_delta and unknown deltas carry nothing for the unified model
        return []

    def _stop(self, index: int, events: list[StreamEvent]) -> None:
        if self.tracker.is_open(index):
            self._release(None, events)
            start_input = self.start_inputs.pop(index, None)
            if start_input is not None and (chunk := self.tracker.chunk(index, dumps_compact(start_input))):
                events.append(chunk)
            self.held = index  # its End waits until the next event tells whether it was cut
        elif index in self.signatures:
            events.append(ReasoningDelta(signature=self.signatures.pop(index), source=WIRE))

    def _release(self, cut: str | None, events: list[StreamEvent]) -> None:
        if self.held is not None:
            end = self.tracker.end(self.held, error=cut)
            self.held = None
            if end is not None:
                self._ended(end, events)

    def _ended(self, end: ToolCallEnd, events: list[StreamEvent]) -> None:
        self.completed = self.completed or end.arguments_error is None
        events.append(end)

    def _add_usage(self, raw: Any, events: list[StreamEvent]) -> None:
        if isinstance(raw, Mapping):
            # cumulative: each field present replaces the one before (ANT-SDK accumulate_event, E19)
            self.usage.update((k, v) for k, v in raw.items() if v is not None)
            events.append(UsageEvent(_usage_from_wire(self.usage)))

    def start_runs(self) -> RunReader:
        """The stream's run reader (``framing.RunStart``: the decoder asks once past the warm-up)."""
        assert self.policy is not None  # the decoder is given this state only with a policy
        self.runs = RunReader(self.policy, ("index",), _TEXT_PATH, _KEYS, per_index=True)
        self.learning = True
        return self.runs

    def run_general(self, event: str, data: bytes) -> list[StreamEvent]:
        return self.feed(event, data)

    def run_chunks(self, wires: int | list[int], texts: list[str]) -> list[ToolCallChunk] | None:
        """Fragments of the open calls of content blocks, when a fragment is only a chunk (``_delta``)."""
        if self.start_inputs:
            return None
        if isinstance(wires, int):
            return self.tracker.chunks(wires, texts)
        return self.tracker.chunks_of(list(wires), texts)

    def close(self) -> list[StreamEvent]:
        """End of input without ``message_stop``."""
        self.done = True
        return stream_broken(self.tracker, "stream_incomplete", "the stream ended without message_stop")


def stream_from_wire(
    chunks: Iterable[bytes], *, tools: Sequence[Tool] = (), runs: RunPolicy | None = FAST
) -> Iterator[StreamEvent]:
    """SSE bytes of a ``stream: true`` request -> normalized events, as the bytes arrive.

    ``runs``: when long runs of ``input_json_delta`` events are read fast (``conformance.framing.runs``); None
    reads every event the general way (the same events)."""
    return chain.from_iterable(_event_lists(chunks, tools, runs))  # C-level iteration over each list


def _event_lists(
    chunks: Iterable[bytes], tools: Sequence[Tool], policy: RunPolicy | None
) -> Iterator[list[StreamEvent]]:
    state = _Stream(_names(tools), policy)
    decoder = SSEDecoder(start=state if policy is not None else None, after=policy.warmup if policy is not None else 0)
    head: list[bytes] = []  # bytes before the first non-blank one, or a whole JSON body (E23)
    is_sse: bool | None = None
    for chunk in line_pieces(chunks, sse=True):
        if is_sse is not True:
            head.append(chunk)
            if is_sse is None:
                first = chunk.lstrip()[:1]
                if not first:
                    continue
                is_sse = first != b"{"
            if not is_sse:
                continue
            chunk = b"".join(head)
            head.clear()
        for item in decoder.decode_raw(chunk):
            if isinstance(item, Run):
                assert state.runs is not None  # runs come from a reader only
                yield state.runs.read_run(state, item)
            else:
                yield state.feed(item[0], item[1])
            if state.done:
                return
    if is_sse is False:
        yield _json_instead_of_stream(b"".join(head), state.tracker)
        return
    for item in [*decoder.decode_raw(b"".join(head)), *decoder.flush_raw()]:
        if isinstance(item, Run):
            assert state.runs is not None  # runs come from a reader only
            yield state.runs.read_run(state, item)
        else:
            yield state.feed(item[0], item[1])
        if state.done:
            return
    yield state.close()


_TEXT_PATH = ("delta", "partial_json")
_KEYS = (b'"index":', b'"partial_json":')


def _json_instead_of_stream(body: bytes, tracker: CallTracker) -> list[StreamEvent]:
    """E23: a JSON body on a stream request (a 401 envelope labelled as a stream, a proxy error)."""
    parsed = load_json_body(body)
    if isinstance(parsed, Mapping) and isinstance(parsed.get("error"), Mapping):
        return [ErrorEvent(_error_info(parsed["error"], None, {}, parsed.get("request_id"))), Finish("error")]
    return stream_broken(tracker, "malformed_response", "a JSON body where an SSE stream was expected (E23)")


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _error_info(
    error: Mapping[str, Any], status: int | None, headers: Mapping[str, str], request_id: Any = None
) -> ErrorInfo:
    etype = error.get("type")
    message = str(error.get("message") or "")
    kind: ErrorKind | None = _ERROR_KINDS.get(str(etype)) if etype else None
    if kind == "invalid_request" and message.startswith(_CONTEXT_LENGTH):
        kind = "context_length"
    if kind is None:
        kind = error_kind_from_status(status) if status is not None and status >= 400 else "unknown"
    return ErrorInfo(
        kind=kind,
        message=message,
        status=status,
        retry_after=retry_after_from_headers(headers),
        code=str(etype) if etype else None,
        provider_details={"request_id": request_id} if request_id else {},
    )


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """An HTTP error response -> typed provider error (§3e; ``retry-after-ms`` / ``retry-after``)."""
    parsed = load_json_body(body)
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    if not isinstance(error, Mapping):  # not the envelope: a proxy page, Cloudflare's 413 ...
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        error = {"message": text.strip() or f"HTTP {status}"}
    request_id = parsed.get("request_id") if isinstance(parsed, Mapping) else None
    return ProviderError(_error_info(error, status, headers, request_id or header(headers, "request-id")))


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset(
    "streaming parallel_tool_calls disable_parallel_tool_calls system_prompt call_ids reasoning_replay"
    " reasoning_effort reasoning_budget reasoning_off cache_control"
    " tool_choice_auto tool_choice_none tool_choice_required tool_choice_named"
    " images_in_tool_results is_error_in_tool_results".split()
)

ADAPTER = Adapter(
    name="anthropic",
    wire_format="anthropic",
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
)
