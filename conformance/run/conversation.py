"""Drive one scenario's conversation through one adapter over a ``Transport``, turn by turn.

The same code path serves recording (a ``Transport`` to the emulator or a live provider) and
checking (a ``Transport`` replaying a cassette): for each turn, the unified ``Request`` (system,
the scenario's ``history``, the conversation so far, tools, tool choice, reasoning settings, cache
breakpoints: ``build_request``) goes through the adapter's ``request_to_wire``, the transport sends
it, and the adapter decodes the answer (``response_from_wire``, or ``stream_from_wire`` folded by
``conformance.assembly.fold``; an HTTP error through ``error_from_wire``). The assistant message
joins the history, then the scenario's tool results answering that turn's calls (by position,
with the ids the adapter decoded), and the next turn follows. A turn with ``tool_results: mcp``
is answered by an executor instead: each decoded call (its id, MCP name and arguments) goes to a
real MCP server's ``tools/call`` and the real result is fed back (``conformance.mcp_bridge.scenario_tools``).

The tools a request offers are the scenario's, unless its MCP server's list changes: an executor
that follows list changes (``tools.mcp.list_changes``, ``FollowsToolList``) holds a session of its own
for the conversation (``conversation``), and after a turn's calls the next request offers the list
the server announced with ``notifications/tools/list_changed`` (``changed_tools``). Each request's
``Request.tools`` is the list the bridge held at that turn, and ``ConversationOutcome.tool_changes``
says after which turn the list changed and how (``translation.tool_list`` and
``roundtrip.cache_prefix`` read them).

A provider error, a broken transport, a turn whose calls cannot be answered, or an MCP
executor that is missing or fails ends the conversation early: ``ConversationOutcome.stopped``
says why. Exceptions from the adapter are not caught here (the runner turns them into an ERROR
verdict).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from conformance.adapters.base import Adapter, WireRequest, load_json_body
from conformance.assembly import fold
from conformance.errors import ConformanceError, ProviderError, StreamInterruptedError, TransportError
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    Message,
    Part,
    Request,
    Response,
    StreamEvent,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)
from conformance.scenarios.values import Mode, Scenario, Turn
from conformance.traffic.transport import Transport

__all__ = [
    "DEFAULT_MODELS",
    "EPHEMERAL",
    "MODEL_CHOICES",
    "ConversationOutcome",
    "DefaultModel",
    "FollowsToolList",
    "ToolListChange",
    "TurnOutcome",
    "answer_calls",
    "build_request",
    "conversation_tools",
    "follow_turn",
    "mcp_result_message",
    "next_tools",
    "run_conversation",
    "tool_list_change",
    "tool_result_message",
]


@dataclass(frozen=True, kw_only=True)
class DefaultModel:
    """A model the suite asks for by default: one the provider serves on the date it was checked."""

    name: str
    family: str
    """The provider's current default family it belongs to (what a library keyed on model names sees)."""
    source: str
    """The provider page that lists it as served."""
    checked: str
    """When ``source`` was read (YYYY-MM-DD)."""
    retires: str | None = None
    """The retirement date the provider announced (YYYY-MM-DD), if any: the suite must move before it."""


MODEL_CHOICES: Mapping[str, DefaultModel] = {
    "openai_chat": DefaultModel(
        name="gpt-5.4-mini",
        family="GPT-5",
        source="https://developers.openai.com/docs/models (gpt-5.4-mini: 'for lower-latency, lower-cost workloads')",
        checked="2026-11-28",
    ),
    "openai_responses": DefaultModel(
        name="gpt-5.4-mini",
        family="GPT-5",
        source="https://developers.openai.com/docs/models",
        checked="2026-11-28",
    ),
    "anthropic": DefaultModel(
        name="claude-sonnet-5",
        family="Claude Sonnet 5",
        source="https://platform.claude.com/docs/en/about-claude/models/overview (Claude Sonnet 5: 'the best"
        " combination of speed and intelligence')",
        checked="2026-11-28",
    ),
    "gemini": DefaultModel(
        name="gemini-3.5-flash",
        family="Gemini 3",
        source="https://ai.google.dev/gemini-api/docs/models (Gemini 3: gemini-3.5-flash, stable)",
        checked="2026-11-28",
    ),
    "ollama": DefaultModel(
        name="qwen3:8b",
        family="Qwen3",
        source="https://ollama.com/library/qwen3 (a local model: served as long as it is pulled)",
        checked="2026-11-28",
    ),
}
"""The default model of each wire, with the provider page that shows it is served. Until
2026-11-28 the suite asked for ``gpt-4.1-mini`` (shut down on 2027-01-14), ``claude-sonnet-4-5``
(retired on 2026-11-30) and ``gemini-2.5-flash`` (not the current default family: a library that
keys behaviour on the family, litellm forwarding Gemini call ids only for Gemini 3, was judged on
the older one). ``tests/run/test_conversation.py`` fails once a retirement date listed here has
passed."""

DEFAULT_MODELS: Mapping[str, str] = {wire: choice.name for wire, choice in MODEL_CHOICES.items()}
"""The model each wire format asks for when none is given (the emulator echoes it)."""


@dataclass(frozen=True, kw_only=True)
class TurnOutcome:
    """What one turn sent and what came back."""

    turn: int
    request: Request
    wire: WireRequest
    status: int | None = None
    """The HTTP status (None when no response arrived)."""
    response: Response | None = None
    """The decoded response (stream mode: the fold of ``events``); None after an HTTP error."""
    events: tuple[StreamEvent, ...] = ()
    error: ErrorInfo | None = None
    """A provider error (HTTP status, error event in a stream) or a transport failure."""
    transport_error: str | None = None
    """What broke the exchange at the transport level (a dropped connection)."""


@dataclass(frozen=True, kw_only=True)
class ToolListChange:
    """The MCP server's tool list changed after a turn's calls (``notifications/tools/list_changed``)."""

    after_turn: int
    """The turn whose calls changed it: requests from turn ``after_turn + 1`` on offer ``tools``."""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    """Tools listed before and after under the same name, with another definition (its input schema...)."""
    tools: tuple[Tool, ...] = ()
    """The new list, as offered."""

    def describe(self) -> str:
        """``added refund_order; removed legacy_search`` (what changed, for a report)."""
        parts = [
            f"{what} {', '.join(names)}"
            for what, names in (("added", self.added), ("removed", self.removed), ("changed", self.changed))
            if names
        ]
        return "; ".join(parts) or "the same tools listed again"


@dataclass(frozen=True, kw_only=True)
class ConversationOutcome:
    scenario: str
    adapter: str
    mode: Mode
    turns: tuple[TurnOutcome, ...] = ()
    stopped: str | None = None
    """Why the conversation ended before its last turn (None: every turn ran)."""
    history: tuple[Message, ...] = field(default=(), repr=False)
    tool_changes: tuple[ToolListChange, ...] = ()
    """Each time the MCP server's tool list changed between turns, in order (empty: it never did)."""


@runtime_checkable
class FollowsToolList(Protocol):
    """An executor whose server's tool list may change (``conformance.mcp_bridge.scenario_tools.McpExecutor``)."""

    def conversation(self) -> AbstractContextManager[tuple[Tool, ...] | None]:
        """The conversation's session: yields the tools it starts with (None: the scenario's)."""
        ...

    def changed_tools(self) -> tuple[Tool, ...] | None:
        """After a turn's calls: the server's new list when it announced one, else None."""
        ...


def _definition(tool: Tool) -> tuple[Any, ...]:
    return (tool.description, tool.input_schema, tool.title, tool.output_schema, tool.annotations)


def tool_list_change(before: Iterable[Tool], after: Iterable[Tool], *, after_turn: int) -> ToolListChange:
    """What changed from ``before`` to ``after`` (names added, removed, redefined), ``after`` kept whole."""
    old = {tool.name: tool for tool in before}
    new = tuple(after)
    names = {tool.name for tool in new}
    return ToolListChange(
        after_turn=after_turn,
        added=tuple(t.name for t in new if t.name not in old),
        removed=tuple(name for name in old if name not in names),
        changed=tuple(t.name for t in new if t.name in old and _definition(old[t.name]) != _definition(t)),
        tools=new,
    )


@contextlib.contextmanager
def conversation_tools(scenario: Scenario, executor: object) -> Iterator[Scenario]:
    """The scenario as the conversation starts: with the tools the executor's own session lists when
    it follows list changes (its session closed when the block ends), else as it is."""
    if not isinstance(executor, FollowsToolList):
        yield scenario
        return
    with executor.conversation() as tools:
        yield scenario if tools is None else replace(scenario, tools=tools)


def next_tools(scenario: Scenario, turn: Turn, executor: object) -> ToolListChange | None:
    """After ``turn``'s MCP calls: the change of tool list the server announced, if it did."""
    if not turn.mcp_results or not isinstance(executor, FollowsToolList):
        return None
    tools = executor.changed_tools()
    if tools is None:
        return None
    return tool_list_change(scenario.tools, tools, after_turn=turn.index)


EPHEMERAL: Mapping[str, Any] = {"type": "ephemeral"}
"""The prompt-cache breakpoint ``cache_control:`` sets: Anthropic's ``{"type": "ephemeral"}`` (default
5-minute lifetime; anthropic-sdk-python ``types/cache_control_ephemeral_param.py``)."""


def build_request(scenario: Scenario, messages: Iterable[Message], *, model: str, stream: bool) -> Request:
    """The unified request of a turn: the scenario's settings, its ``history`` (messages before turn 0),
    then the conversation so far.

    ``Scenario.reasoning`` goes on every request. ``Scenario.cache_control`` sets a breakpoint
    (``EPHEMERAL``) on every request after the last tool (``tools``), after the system prompt
    (``system``), and after the last text or tool-result block of the last message (``messages``): the
    incremental pattern of Anthropic's prompt-caching docs (each request marks its newest block, so the
    next request reads the whole conversation so far from the cache;
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching). Only the request's own copy
    of the last message carries the marker: ``messages`` is left as it is.
    """
    targets = scenario.cache_control
    tools = scenario.tools
    if "tools" in targets and tools:
        tools = (*tools[:-1], replace(tools[-1], cache_control=EPHEMERAL))
    history = (*scenario.history, *messages)
    if "messages" in targets and history:
        history = (*history[:-1], _mark_last_block(history[-1]))
    return Request(
        model=model,
        system=scenario.system,
        system_cache_control=EPHEMERAL if "system" in targets and scenario.system is not None else None,
        messages=history,
        tools=tools,
        tool_choice=scenario.tool_choice,
        parallel_tool_calls=scenario.parallel_tool_calls,
        stream=stream,
        max_tokens=scenario.max_tokens,
        reasoning=scenario.reasoning,
    )


def _mark_last_block(message: Message) -> Message:
    """``message`` with a cache breakpoint on its last text or tool-result part (the blocks that carry
    ``cache_control``); unchanged when it has neither."""
    parts = list(message.parts)
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        if isinstance(part, Text | ToolResult):
            parts[index] = replace(part, cache_control=EPHEMERAL)
            return replace(message, parts=tuple(parts))
    return message


def tool_result_message(turn: Turn, calls: tuple[ToolCall, ...]) -> tuple[Message | None, str | None]:
    """The ``tool`` message answering ``calls`` with the turn's results, or a reason it cannot."""
    results: list[Part] = []
    for spec in turn.tool_results:
        if spec.call >= len(calls):
            return None, (
                f"turn {turn.index}: the scenario answers call #{spec.call} but the adapter decoded "
                f"{len(calls)} tool call(s)"
            )
        call = calls[spec.call]
        results.append(ToolResult(call_id=call.id, content=spec.content, is_error=spec.is_error, name=call.name))
    return Message(role="tool", parts=tuple(results)), None


def follow_turn(
    scenario: Scenario,
    turn: Turn,
    outcome: TurnOutcome,
    history: list[Message],
    executor: Callable[[ToolCall], ToolResult] | None,
) -> tuple[bool, str | None]:
    """After a turn: append the assistant's message and the results answering its calls to
    ``history``; whether the conversation goes on, and why it stopped before its last turn."""
    if outcome.error is not None or outcome.response is None:
        return False, f"turn {turn.index}: {_why(outcome)}" if turn.index < len(scenario.turns) - 1 else None
    history.append(Message(role="assistant", parts=outcome.response.parts))
    if turn.tool_results or turn.mcp_results:
        message, problem = answer_calls(turn, outcome.response, executor)
        if message is None:
            return False, problem
        history.append(message)
    return True, None


def answer_calls(
    turn: Turn, response: Response, executor: Callable[[ToolCall], ToolResult] | None
) -> tuple[Message | None, str | None]:
    """The ``tool`` message answering the calls ``response`` holds: the turn's scripted results, or
    (``tool_results: mcp``) the executor's; or a reason it cannot."""
    calls = tuple(part for part in response.parts if isinstance(part, ToolCall))
    if turn.mcp_results:
        return mcp_result_message(turn, calls, executor)
    return tool_result_message(turn, calls)


def mcp_result_message(
    turn: Turn, calls: tuple[ToolCall, ...], executor: Callable[[ToolCall], ToolResult] | None
) -> tuple[Message | None, str | None]:
    """The ``tool`` message answering ``calls`` with ``executor(call)`` each, or a reason it cannot.

    Each result answers its call by the id and name the adapter decoded, whatever the executor
    put there. An executor that raises a ``ConformanceError`` (the MCP server died) ends the
    conversation; a tool that failed is a result (``is_error``), not a raise.
    """
    if executor is None:
        return None, (
            f"turn {turn.index}: the scenario feeds back MCP results (tool_results: mcp) but no MCP executor was "
            "given (run it through conformance.mcp_bridge.scenario_tools.open_scenario_tools)"
        )
    if not calls:
        return None, f"turn {turn.index}: the scenario feeds back MCP results, but the adapter decoded no tool call"
    results: list[Part] = []
    for number, call in enumerate(calls):
        try:
            result = executor(call)
        except ConformanceError as exc:
            return None, f"turn {turn.index}: MCP tools/call {call.name} (call #{number}) failed: {exc}"
        results.append(replace(result, call_id=call.id, name=call.name))
    return Message(role="tool", parts=tuple(results)), None


def run_conversation(
    scenario: Scenario,
    adapter: Adapter,
    transport: Transport,
    *,
    mode: Mode,
    model: str | None = None,
    executor: Callable[[ToolCall], ToolResult] | None = None,
) -> ConversationOutcome:
    """Run every turn of ``scenario`` through ``adapter`` and ``transport`` in ``mode``.

    ``executor`` answers the calls of a turn with ``tool_results: mcp`` (``Turn.mcp_results``):
    one ``ToolResult`` per decoded call, in order (``conformance.mcp_bridge.scenario_tools`` makes one).
    """
    model = model or DEFAULT_MODELS.get(adapter.wire_format, "model")
    history: list[Message] = []
    outcomes: list[TurnOutcome] = []
    changes: list[ToolListChange] = []
    stopped: str | None = None
    with conversation_tools(scenario, executor) as current:
        for turn in scenario.turns:
            if turn.user:
                history.append(Message(role="user", parts=turn.user))
            request = build_request(current, history, model=model, stream=mode == "stream")
            outcome = _exchange(turn, request, adapter, transport, current)
            outcomes.append(outcome)
            goes_on, stopped = follow_turn(current, turn, outcome, history, executor)
            if not goes_on:
                break
            change = next_tools(current, turn, executor)
            if change is not None:  # the next request offers the server's new list
                changes.append(change)
                current = replace(current, tools=change.tools)
    return ConversationOutcome(
        scenario=scenario.id,
        adapter=adapter.name,
        mode=mode,
        turns=tuple(outcomes),
        stopped=stopped,
        history=tuple(history),
        tool_changes=tuple(changes),
    )


def _why(outcome: TurnOutcome) -> str:
    if outcome.error is not None:
        return f"provider error {outcome.error.kind}: {outcome.error.message}"
    return outcome.transport_error or "no response"


def _exchange(turn: Turn, request: Request, adapter: Adapter, transport: Transport, scenario: Scenario) -> TurnOutcome:
    wire = adapter.request_to_wire(request)
    base: dict[str, Any] = {"turn": turn.index, "request": request, "wire": wire}
    if not wire.stream:
        try:
            answer = transport.send(wire)
        except TransportError as exc:
            return TurnOutcome(**base, error=_transport_error(exc), transport_error=str(exc))
        if answer.status >= 400:
            return TurnOutcome(
                **base,
                status=answer.status,
                error=_error_info(adapter.error_from_wire(answer.status, answer.headers, answer.body)),
            )
        body = load_json_body(answer.body)
        if not isinstance(body, Mapping):
            info = ErrorInfo(
                kind="malformed_response", message="the response body is not a JSON object", status=answer.status
            )
            return TurnOutcome(**base, status=answer.status, error=info)
        response = adapter.response_from_wire(body, tools=scenario.tools)
        return TurnOutcome(**base, status=answer.status, response=response, error=response.error)
    try:
        streamed = transport.stream(wire)
    except TransportError as exc:
        return TurnOutcome(**base, error=_transport_error(exc), transport_error=str(exc))
    with streamed:
        if streamed.status >= 400:
            try:
                body_bytes = streamed.read()
            except TransportError as exc:
                body_bytes = b""
                base["transport_error"] = str(exc)
            error = _error_info(adapter.error_from_wire(streamed.status, streamed.headers, body_bytes))
            return TurnOutcome(**base, status=streamed.status, error=error)
        broken: list[str] = []
        events = tuple(adapter.stream_from_wire(_guarded(streamed.chunks(), broken), tools=scenario.tools))
    response = fold(events)
    stream_error: ErrorInfo | None = next((event.error for event in events if isinstance(event, ErrorEvent)), None)
    return TurnOutcome(
        **base,
        status=streamed.status,
        response=response,
        events=events,
        error=stream_error or response.error,
        transport_error=broken[0] if broken else None,
    )


def _guarded(chunks: Iterator[bytes], broken: list[str]) -> Iterator[bytes]:
    """The chunks until the transport breaks; the adapter then sees the stream end early."""
    try:
        yield from chunks
    except (StreamInterruptedError, TransportError) as exc:
        broken.append(f"{type(exc).__name__}: {exc}")


def _transport_error(exc: TransportError) -> ErrorInfo:
    return ErrorInfo(kind="unknown", message=f"{type(exc).__name__}: {exc}")


def _error_info(error: ProviderError) -> ErrorInfo:
    return error.info
