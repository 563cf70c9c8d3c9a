"""Valid scenario data -> the ``conformance.scenarios.values`` values, with the ``expect`` defaults applied.

Pure. The data has passed the schema and the rules (``_rules``); this only maps it. An
absent ``expect`` key defaults from the reply (``docs/scenarios.md``, "Defaults of expect"):

- ``tool_calls``: the reply's calls, arguments exact; a call whose ``arguments_raw`` is not a JSON
  object (``conformance.adapters.base.parse_arguments``) must end with an ``arguments_error``;
- ``text``: the reply's text, exact (none when the reply has no text);
- ``finish_reason``: ``reply.finish``, or none when a call has malformed arguments;
- ``events`` and ``error``: none;
- ``reasoning``: one ``ExpectedReasoning`` per block the reply plays, in order: ``reply.reasoning``
  (without text when ``reasoning_redacted``), then each call's ``reasoning``; none (not checked)
  when the reply plays no reasoning.

``reasoning:`` becomes ``Scenario.reasoning`` (a ``ReasoningSettings``) and ``cache_control:``
``Scenario.cache_control``; each adds the capabilities it needs to ``requires`` (``derived_requires``).
``history:`` becomes ``Scenario.history``, unified messages (a tool result takes the name of the
call it answers, for the wires that key results by name).

``tools: {mcp: ...}`` becomes ``Scenario.mcp`` (with ``Scenario.tools`` empty until the server runs)
and ``tool_results: mcp`` becomes ``Turn.mcp_results``.

A turn whose reply is a fault has no response to compare, so its ``tool_calls``, ``text`` and
``finish_reason`` are only checked when ``expect`` states them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from conformance.adapters.base import dumps_compact, parse_arguments
from conformance.model import (
    Audio,
    ContentItem,
    FinishReason,
    Image,
    Message,
    Part,
    Reasoning,
    ReasoningSettings,
    Resource,
    Text,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from conformance.scenarios.values import (
    DEFAULT_MCP_TIMEOUT,
    MODES,
    CacheTarget,
    Expectation,
    ExpectedCall,
    ExpectedError,
    ExpectedReasoning,
    Fault,
    McpTools,
    Reply,
    Scenario,
    ScriptedCall,
    TextExpectation,
    ToolResultSpec,
    Turn,
    WireExpectation,
)

__all__ = ["build_scenario", "derived_requires", "scenario_fingerprint"]


def build_scenario(data: Mapping[str, Any], *, scenario_id: str, path: Path) -> Scenario:
    """The ``Scenario`` that valid ``data`` describes."""
    modes = data.get("modes")
    tools = data["tools"]
    return Scenario(
        id=scenario_id,
        path=path,
        behavior=data["behavior"],
        source=data["source"],
        requires=frozenset(data.get("requires", ())) | derived_requires(data),
        tags=tuple(data.get("tags", ())),
        modes=MODES if modes is None else tuple(m for m in MODES if m in modes),
        wires=tuple(data.get("wires", ())),
        system=data.get("system"),
        tool_choice=_tool_choice(data.get("tool_choice")),
        parallel_tool_calls=data.get("parallel_tool_calls"),
        max_tokens=data.get("max_tokens"),
        tools=() if isinstance(tools, Mapping) else tuple(_tool(tool) for tool in tools),
        turns=tuple(_turn(i, turn) for i, turn in enumerate(data["turns"])),
        wire=tuple(
            _wire(adapter, expectation)
            for adapter, expectations in data.get("wire", {}).items()
            for expectation in expectations
        ),
        mcp=_mcp(tools["mcp"]) if isinstance(tools, Mapping) else None,
        reasoning=_reasoning_settings(data.get("reasoning")),
        cache_control=tuple(cast(CacheTarget, target) for target in data.get("cache_control", ())),
        history=_history(data.get("history", ())),
        fingerprint=scenario_fingerprint(data),
    )


def derived_requires(data: Mapping[str, Any]) -> frozenset[str]:
    """The capabilities the scenario's settings need beyond its ``requires``: ``reasoning_off``
    (``reasoning.enabled: false``), ``reasoning_effort``, ``reasoning_budget``, ``cache_control``."""
    needed: set[str] = set()
    reasoning = data.get("reasoning")
    if isinstance(reasoning, Mapping):
        if reasoning.get("enabled") is False:
            needed.add("reasoning_off")
        if "effort" in reasoning:
            needed.add("reasoning_effort")
        if "budget_tokens" in reasoning:
            needed.add("reasoning_budget")
    if data.get("cache_control"):
        needed.add("cache_control")
    return frozenset(needed)


def _reasoning_settings(data: Mapping[str, Any] | None) -> ReasoningSettings | None:
    if data is None:
        return None
    return ReasoningSettings(
        enabled=data.get("enabled", True), effort=data.get("effort"), budget_tokens=data.get("budget_tokens")
    )


def _history(data: Any) -> tuple[Message, ...]:
    names = {call["id"]: call["name"] for message in data for call in message.get("tool_calls", ())}
    messages: list[Message] = []
    for message in data:
        role = message["role"]
        parts: list[Part] = []
        if role == "user":
            parts.append(Text(text=message["text"]))
        elif role == "assistant":
            parts.extend(
                Reasoning(
                    text=item.get("text", ""),
                    signature=item.get("signature"),
                    redacted=item.get("redacted"),
                    source=item.get("source"),
                )
                for item in message.get("reasoning", ())
            )
            if "text" in message:
                parts.append(Text(text=message["text"]))
            parts.extend(
                ToolCall(
                    id=call["id"],
                    name=call["name"],
                    arguments=call["arguments"],
                    arguments_raw=dumps_compact(call["arguments"]),
                )
                for call in message.get("tool_calls", ())
            )
        else:
            parts.extend(
                ToolResult(
                    call_id=result["call_id"],
                    content=_content(result["content"]),
                    is_error=result.get("isError", False),
                    name=names.get(result["call_id"]),
                )
                for result in message["results"]
            )
        messages.append(Message(role=role, parts=tuple(parts)))
    return tuple(messages)


def scenario_fingerprint(data: Mapping[str, Any]) -> str:
    """sha256 of a scenario's parsed content dumped as canonical JSON (sorted keys, no spaces):
    comments, key order, quoting and layout of the file do not change it; any value does."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _mcp(data: Mapping[str, Any]) -> McpTools:
    select = data.get("select")
    total = data.get("max_total_timeout")
    return McpTools(
        command=tuple(data.get("command", ())),
        args=tuple(data.get("args", ())),
        env=dict(data.get("env", {})),
        cwd=data.get("cwd"),
        timeout=float(data.get("timeout", DEFAULT_MCP_TIMEOUT)),
        select=None if select is None else tuple(select),
        url=data.get("url"),
        headers=dict(data.get("headers", {})),
        reset_timeout_on_progress=bool(data.get("reset_timeout_on_progress", False)),
        max_total_timeout=None if total is None else float(total),
        list_changes=bool(data.get("list_changes", False)),
    )


def _tool_choice(value: Any) -> ToolChoice | None:
    if isinstance(value, Mapping):
        return str(value["name"])
    return cast(ToolChoice | None, value)


def _tool(data: Mapping[str, Any]) -> Tool:
    return Tool(
        name=data["name"],
        description=data.get("description"),
        input_schema=data.get("inputSchema", {"type": "object"}),
        title=data.get("title"),
        output_schema=data.get("outputSchema"),
        annotations=data.get("annotations"),
    )


def _turn(index: int, data: Mapping[str, Any]) -> Turn:
    reply = _reply(data["reply"])
    results = data.get("tool_results", ())
    mcp_results = results == "mcp"
    return Turn(
        index=index,
        user=_user(data.get("user")),
        reply=reply,
        expect=_expectation(data.get("expect", {}), reply),
        tool_results=tuple(
            ToolResultSpec(
                call=result.get("call", position),
                content=_content(result["content"]),
                is_error=result.get("isError", False),
            )
            for position, result in enumerate(() if mcp_results else results)
        ),
        mcp_results=mcp_results,
    )


def _user(value: Any) -> tuple[Part, ...]:
    if value is None:
        return ()
    parts: list[Part] = []
    for item in _content(value):
        assert isinstance(item, Text | Image), "the schema allows text and image items in user"
        parts.append(item)
    return tuple(parts)


def _content(value: str | list[Mapping[str, Any]]) -> tuple[ContentItem, ...]:
    if isinstance(value, str):
        return (Text(text=value),)
    return tuple(_content_item(item) for item in value)


def _content_item(item: Mapping[str, Any]) -> ContentItem:
    kind = item["type"]
    if kind == "text":
        return Text(text=item["text"])
    if kind == "image":
        return Image(media_type=item["mimeType"], data=item["data"])
    if kind == "audio":
        return Audio(media_type=item["mimeType"], data=item["data"])
    assert kind == "resource", kind
    resource = item["resource"]
    return Resource(
        uri=resource["uri"], media_type=resource.get("mimeType"), text=resource.get("text"), blob=resource.get("blob")
    )


def _reply(data: Mapping[str, Any]) -> Reply:
    calls = tuple(_scripted_call(call) for call in data.get("tool_calls", ()))
    fault = data.get("fault")
    return Reply(
        text=data.get("text"),
        reasoning=data.get("reasoning"),
        reasoning_redacted=data.get("reasoning_redacted", False),
        tool_calls=calls,
        finish=data.get("finish", "tool_calls" if calls else "stop"),
        fault=None
        if fault is None
        else Fault(
            kind=fault["kind"],
            retry_after=None if fault.get("retry_after") is None else float(fault["retry_after"]),
            after=fault.get("after"),
        ),
        quirks=tuple(data.get("quirks", ())),
    )


def _scripted_call(data: Mapping[str, Any]) -> ScriptedCall:
    if "arguments" in data:
        return ScriptedCall(
            name=data["name"],
            arguments=data["arguments"],
            arguments_raw=dumps_compact(data["arguments"]),
            reasoning=data.get("reasoning"),
        )
    return ScriptedCall(
        name=data["name"], arguments=None, arguments_raw=data["arguments_raw"], reasoning=data.get("reasoning")
    )


def _expectation(data: Mapping[str, Any], reply: Reply) -> Expectation:
    defaults = _defaults(reply)
    text = data.get("text")
    error = data.get("error")
    return Expectation(
        tool_calls=tuple(_expected_call(c) for c in data["tool_calls"])
        if "tool_calls" in data
        else defaults.tool_calls,
        text=(
            defaults.text
            if text is None
            else TextExpectation(value=text, mode="exact")
            if isinstance(text, str)
            else TextExpectation(value=text["contains"], mode="contains")
        ),
        finish_reason=data.get("finish_reason", defaults.finish_reason),
        events=tuple(data["events"]) if "events" in data else None,
        error=None
        if error is None
        else ExpectedError(
            kind=error["kind"],
            status=error.get("status"),
            retry_after=None if error.get("retry_after") is None else float(error["retry_after"]),
        ),
        reasoning=tuple(
            ExpectedReasoning(text=item.get("text"), redacted=item.get("redacted", False)) for item in data["reasoning"]
        )
        if "reasoning" in data
        else defaults.reasoning,
    )


def _defaults(reply: Reply) -> Expectation:
    """What ``expect`` means when it leaves a key out."""
    if reply.fault is not None:
        return Expectation()
    calls: list[ExpectedCall] = []
    malformed = False
    for call in reply.tool_calls:
        arguments = call.arguments
        if arguments is None:
            arguments, _ = parse_arguments(call.arguments_raw)
        if arguments is None:
            malformed = True
            calls.append(ExpectedCall(name=call.name, arguments_error=True))
        else:
            calls.append(ExpectedCall(name=call.name, arguments=arguments, match="exact"))
    finish: FinishReason | None = None if malformed else reply.finish
    reasoning: list[ExpectedReasoning] = []
    if reply.reasoning:
        redacted = reply.reasoning_redacted
        reasoning.append(ExpectedReasoning(text=None if redacted else reply.reasoning, redacted=redacted))
    reasoning += [ExpectedReasoning(text=call.reasoning) for call in reply.tool_calls if call.reasoning]
    return Expectation(
        tool_calls=tuple(calls),
        text=None if reply.text is None else TextExpectation(value=reply.text, mode="exact"),
        finish_reason=finish,
        reasoning=tuple(reasoning) or None,
    )


def _expected_call(data: Mapping[str, Any]) -> ExpectedCall:
    return ExpectedCall(
        name=data["name"],
        arguments=data.get("arguments"),
        match=data.get("match", "exact"),
        arguments_error=data.get("arguments_error", False),
    )


def _wire(adapter: str, data: Mapping[str, Any]) -> WireExpectation:
    return WireExpectation(
        adapter=adapter,
        turn=data.get("turn"),
        present=tuple(data.get("present", ())),
        absent=tuple(data.get("absent", ())),
        equal=dict(data.get("equal", {})),
    )
