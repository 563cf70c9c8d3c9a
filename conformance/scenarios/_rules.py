"""The rules of a scenario that JSON Schema cannot say (``docs/scenarios.md``, "Rules").

Run on data that already satisfies the schema, so the shapes are known. Each rule returns its
problems placed on the node at fault: unique tool names, tool results that answer the calls of
their turn (``tool_results: mcp`` answers them all, and needs ``tools: {mcp: ...}``), turns that
follow on from the previous one, known capability and adapter names, known wire names in
``wires:`` (and ``wire:`` expectations only for the wires listed there), JSON path syntax, the fault
rules (an expected error, stream faults in stream mode only), valid base64 and valid JSON Schemas
for ``match: schema``, and tool input schemas that stay within ``schema_nodes`` of
``conformance.limits`` once their ``$ref`` are inlined (an adapter for Gemini inlines them). Tool
names of an MCP server are known only at run time: ``tool_choice: {name: X}`` is not checked
against them here.

Reasoning and caching (``_reasoning``, ``_history``): ``reasoning:`` settings that say something
(effort or budget when on, nothing more when off), ``cache_control:`` targets that exist (a system
prompt, a tool), ``reasoning_redacted`` only with ``reasoning``, and a ``history:`` that is a
conversation a provider accepts: it starts with a user message and ends with an assistant one, each
tool message answers every call of the assistant message before it exactly once, call ids are
unique, and each reasoning part holds something, is not both text and redacted, and names a known
wire as its ``source``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from conformance.adapters.base import CAPABILITIES, PROMPT_FORMATS, WIRE_FORMATS
from conformance.limits import current, expanded_schema_size, how_to_raise
from conformance.scenarios.problems import DocPath, Locator, ScenarioProblem, closest
from conformance.scenarios.values import HTTP_FAULTS, STREAM_FAULTS, parse_json_path

__all__ = ["FAULT_ERROR_KINDS", "semantic_problems"]

FAULT_ERROR_KINDS: Mapping[str, str] = {
    "rate_limit": "rate_limit",
    "server_error": "server",
    "unavailable": "overloaded",
    "overloaded": "overloaded",
    "invalid_tool_schema": "invalid_request",
    "malformed_body": "malformed_response",
    "disconnect": "stream_incomplete",
    "no_terminator": "stream_incomplete",
    "error_event": "server",
}
"""The error kind an adapter reports for each emulator fault (the emulator contract's table)."""

_RETRY_AFTER_FAULTS = frozenset({"rate_limit", "overloaded", "unavailable"})
_MCP_RESULTS = "mcp"
"""``tool_results: mcp``: the turn's calls are answered by the MCP server (every one of them)."""

_TRAFFIC_FORMATS = tuple(sorted((*WIRE_FORMATS, *PROMPT_FORMATS)))
"""What ``wire:`` is keyed by: the traffic an adapter declares (``Adapter.traffic_format``)."""


def semantic_problems(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> list[ScenarioProblem]:
    """Every rule broken by schema-valid scenario ``data`` whose id is ``scenario_id``."""
    problems: list[ScenarioProblem] = []
    for rule in (_identity, _tools, _mcp_server, _turns, _faults, _wire, _content, _reasoning, _history):
        problems.extend(rule(data, locator, scenario_id))
    return problems


def _identity(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    given = data.get("id")
    if given is not None and given != scenario_id:
        yield locator.problem(
            ("id",),
            f"id {given!r} does not match the file's place ({scenario_id!r})",
            expected=scenario_id,
            hint="remove the id key (the path is the id), or move the file",
        )
    for i, name in enumerate(data.get("requires", ())):
        if name not in CAPABILITIES:
            yield locator.problem(
                ("requires", i),
                f"unknown capability {name!r}",
                expected="one of: " + ", ".join(sorted(CAPABILITIES)),
                hint=closest(name, CAPABILITIES) or "capabilities are listed in conformance.adapters.base.CAPABILITIES",
            )
    events_given = any("events" in turn.get("expect", {}) for turn in data["turns"])
    if events_given and "stream" not in data.get("modes", ("stream",)):
        yield locator.problem(
            ("modes",),
            "expect.events is checked in stream mode only, but the scenario never runs in stream mode",
            expected="modes that include stream",
            hint="add stream to modes, or remove expect.events",
        )


def _tools(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    if isinstance(data["tools"], Mapping):
        # tools: {mcp: ...}: the names are known only once the server runs, so tool_choice
        # {name: X} (like reply tool names) is checked then, not here.
        return
    first: dict[str, int] = {}
    for i, tool in enumerate(data["tools"]):
        name = tool["name"]
        if name in first:
            yield locator.problem(
                ("tools", i, "name"),
                f"tool name {name!r} is used twice (also tools[{first[name]}])",
                expected="unique tool names",
                hint="rename or remove one of the two tools",
            )
        first.setdefault(name, i)
        limit = current().schema_nodes
        if expanded_schema_size(tool.get("inputSchema"), stop=limit) > limit:
            yield locator.problem(
                ("tools", i, "inputSchema"),
                f"the input schema of tool {name!r} expands past the limit schema_nodes={limit} once its $refs "
                "are inlined (as adapters for wires without references do)",
                expected="a schema whose references do not multiply it",
                hint="define the shared part once instead of referring to it twice per level; "
                + how_to_raise("schema_nodes"),
            )
    choice = data.get("tool_choice")
    if isinstance(choice, Mapping) and choice["name"] not in first:
        yield locator.problem(
            ("tool_choice", "name"),
            f"tool_choice names {choice['name']!r}, which is not in tools",
            expected="one of: " + (", ".join(first) or "(no tools)"),
            hint=closest(choice["name"], first) or "add the tool to tools, or name one that is there",
        )


def _mcp_server(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    """``tools.mcp`` starts a server (``command``), reaches one (``url``), or both."""
    tools = data["tools"]
    if isinstance(tools, Mapping) and isinstance(tools.get("mcp"), Mapping):
        mcp = tools["mcp"]
        if "command" not in mcp and "url" not in mcp:
            yield locator.problem(
                ("tools", "mcp"),
                "missing required key 'command' (or 'url'): the MCP server must be started or reached",
                expected="command: [program, args...] (stdio), url: http://127.0.0.1:{port}/mcp (HTTP), or both",
                hint="add command: or url: (docs/mcp.md)",
            )


def _turns(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    turns = data["turns"]
    from_mcp = isinstance(data["tools"], Mapping)
    for t, turn in enumerate(turns):
        calls = turn["reply"].get("tool_calls", ())
        results = turn.get("tool_results", ())
        if results and not calls:
            yield locator.problem(
                ("turns", t, "tool_results"),
                "tool_results on a turn whose reply makes no tool calls",
                expected="reply.tool_calls to answer",
                hint="move the results to the turn whose reply calls the tools",
            )
        if results == _MCP_RESULTS:
            if not from_mcp:
                yield locator.problem(
                    ("turns", t, "tool_results"),
                    "tool_results: mcp executes the calls through the scenario's MCP server, but tools is a list",
                    expected="tools: {mcp: {command: [...]}}",
                    hint="take the tools from an MCP server (docs/mcp.md), or list the results",
                )
            results = ()  # answers every call of the turn
        answered: dict[int, int] = {}
        for r, result in enumerate(results):
            call = result.get("call", r)
            if calls and call >= len(calls):
                yield locator.problem(
                    ("turns", t, "tool_results", r) + (("call",) if "call" in result else ()),
                    f"tool result {r} answers call {call}, but the reply has {len(calls)} tool call(s)",
                    expected=f"a call index from 0 to {len(calls) - 1}",
                    hint="call is an index into this turn's reply.tool_calls (default: the result's position)",
                )
            elif call in answered:
                yield locator.problem(
                    ("turns", t, "tool_results", r),
                    f"call {call} is answered twice (also tool_results[{answered[call]}])",
                    expected="one result per call",
                    hint="set call: N on each result to say which call it answers",
                )
            answered.setdefault(call, r)
        if t == 0:
            if "user" not in turn:
                yield locator.problem(
                    ("turns", 0),
                    "the first turn has no user message",
                    expected="user: a string or a list of content items",
                    hint="add user: to the first turn",
                )
            continue
        previous = turns[t - 1]
        previous_calls = previous["reply"].get("tool_calls", ())
        previous_results = previous.get("tool_results", ())
        if previous_calls:
            if previous_results == _MCP_RESULTS:
                continue  # the MCP server answers every call
            done = {result.get("call", r) for r, result in enumerate(previous_results)}
            missing = [str(c) for c in range(len(previous_calls)) if c not in done]
            if missing:
                where: DocPath = ("turns", t - 1, "tool_results" if previous_results else "reply")
                yield locator.problem(
                    where,
                    f"turn {t} follows the tool calls of turn {t - 1}, but call(s) {', '.join(missing)} have no "
                    "tool result",
                    expected="a tool result for every call of the previous turn",
                    hint=f"add tool_results to turn {t - 1} (one per call; call: N says which)",
                )
        elif "user" not in turn:
            yield locator.problem(
                ("turns", t),
                f"turn {t} has no user message and the turn before it fed back no tool results",
                expected="user: ..., or tool_results on the previous turn",
                hint=f"add user: to turn {t}",
            )


def _faults(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    modes = tuple(data.get("modes", ("non_stream", "stream")))
    for t, turn in enumerate(data["turns"]):
        fault = turn["reply"].get("fault")
        if fault is None:
            continue
        kind = fault["kind"]
        at: DocPath = ("turns", t, "reply", "fault")
        if "error" not in turn.get("expect", {}):
            error_kind = FAULT_ERROR_KINDS[kind]
            yield locator.problem(
                at,
                f"a {kind} fault needs expect.error (the error the adapter must report)",
                expected=f"expect: {{error: {{kind: {error_kind}}}}}",
                hint=f"the emulator's {kind} fault maps to error kind {error_kind}",
            )
        if kind in STREAM_FAULTS and modes != ("stream",):
            yield locator.problem(
                ("modes",) if "modes" in data else at,
                f"the {kind} fault breaks a stream, so the scenario runs in stream mode only",
                expected="modes: [stream]",
                hint="add modes: [stream] to the scenario",
            )
        if "retry_after" in fault and kind not in _RETRY_AFTER_FAULTS:
            yield locator.problem(
                (*at, "retry_after"),
                f"retry_after does not apply to a {kind} fault",
                expected="retry_after only with " + ", ".join(sorted(_RETRY_AFTER_FAULTS)),
                hint="remove retry_after",
            )
        if "after" in fault and kind not in STREAM_FAULTS:
            yield locator.problem(
                (*at, "after"),
                f"after does not apply to a {kind} fault",
                expected="after only with " + ", ".join(sorted(STREAM_FAULTS)),
                hint="remove after" + (" (HTTP faults answer before any event)" if kind in HTTP_FAULTS else ""),
            )


def _wires(data: Mapping[str, Any], locator: Locator) -> Iterator[ScenarioProblem]:
    """``wires:`` names wire formats (a prompt format is spoken over openai_chat)."""
    for i, wire in enumerate(data.get("wires", ())):
        if wire in WIRE_FORMATS:
            continue
        if wire in PROMPT_FORMATS:
            hint = f"{wire} is a prompt format, spoken over openai_chat: list openai_chat"
        else:
            hint = closest(wire, WIRE_FORMATS) or "wires lists the wire formats the scenario runs on"
        yield locator.problem(
            ("wires", i),
            f"unknown wire format {wire!r}",
            expected="one of: " + ", ".join(WIRE_FORMATS),
            hint=hint,
        )


def _wire(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    yield from _wires(data, locator)
    turn_count = len(data["turns"])
    runs_on = data.get("wires")
    for adapter, expectations in data.get("wire", {}).items():
        if adapter not in _TRAFFIC_FORMATS:
            yield locator.problem(
                ("wire", adapter),
                f"unknown wire or prompt format {adapter!r}",
                expected="one of: " + ", ".join(_TRAFFIC_FORMATS),
                hint=closest(adapter, _TRAFFIC_FORMATS) or "wire is keyed by wire format or prompt format",
                on_key=True,
            )
        elif runs_on is not None and ("openai_chat" if adapter in PROMPT_FORMATS else adapter) not in runs_on:
            yield locator.problem(
                ("wire", adapter),
                f"wire expectations for {adapter!r}, a wire the scenario does not run on (wires: {', '.join(runs_on)})",
                expected="a wire listed in wires",
                hint=f"add {adapter} to wires, or remove its expectations",
                on_key=True,
            )
        for e, expectation in enumerate(expectations):
            at: DocPath = ("wire", adapter, e)
            turn = expectation.get("turn")
            if turn is not None and turn >= turn_count:
                yield locator.problem(
                    (*at, "turn"),
                    f"turn {turn} does not exist (the scenario has {turn_count} turn(s))",
                    expected=f"a turn index from 0 to {turn_count - 1}",
                )
            for key in ("present", "absent"):
                for p, path in enumerate(expectation.get(key, ())):
                    yield from _json_path(path, (*at, key, p), locator, on_key=False)
            for path in expectation.get("equal", {}):
                yield from _json_path(path, (*at, "equal", path), locator, on_key=True)


def _json_path(path: str, at: DocPath, locator: Locator, *, on_key: bool) -> Iterator[ScenarioProblem]:
    try:
        parse_json_path(path)
    except ValueError as exc:
        yield locator.problem(
            at,
            str(exc),
            expected='a JSON path: $ then .key, [N] or ["key"] steps, e.g. $.tools[0].function.name',
            hint='quote keys that hold dots or spaces: $.headers["x-api-key"]',
            on_key=on_key,
        )


def _content(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    for t, turn in enumerate(data["turns"]):
        user = turn.get("user")
        if isinstance(user, list):
            for i, item in enumerate(user):
                yield from _base64(item, ("turns", t, "user", i), locator)
        results = turn.get("tool_results", ())
        for r, result in enumerate(() if results == _MCP_RESULTS else results):
            content = result["content"]
            if isinstance(content, list):
                for i, item in enumerate(content):
                    yield from _base64(item, ("turns", t, "tool_results", r, "content", i), locator)
        for c, call in enumerate(turn.get("expect", {}).get("tool_calls", ())):
            at: DocPath = ("turns", t, "expect", "tool_calls", c)
            if "match" in call and "arguments" not in call:
                yield locator.problem(
                    (*at, "match"),
                    f"match: {call['match']} compares arguments, but the call gives none",
                    expected="arguments: ...",
                    hint="add arguments, or remove match",
                )
            elif call.get("match") == "schema":
                try:
                    Draft202012Validator.check_schema(call["arguments"])
                except SchemaError as exc:
                    yield locator.problem(
                        (*at, "arguments", *exc.absolute_path),
                        f"with match: schema, arguments is a JSON Schema, and this one is not valid: {exc.message}",
                        expected="a JSON Schema (draft 2020-12)",
                        hint="or use match: exact / subset to compare values",
                    )


def _base64(item: Mapping[str, Any], at: DocPath, locator: Locator) -> Iterator[ScenarioProblem]:
    places: list[tuple[DocPath, Any]] = [((*at, "data"), item.get("data"))]
    resource = item.get("resource")
    if isinstance(resource, Mapping):
        places.append(((*at, "resource", "blob"), resource.get("blob")))
    for where, value in places:
        if not isinstance(value, str):
            continue
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            yield locator.problem(
                where,
                "not valid base64",
                expected="standard base64 (A-Z, a-z, 0-9, +, / and = padding)",
                hint="encode the bytes with `base64 -w0 FILE`",
            )


def _reasoning(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    settings = data.get("reasoning")
    if isinstance(settings, Mapping):
        if settings.get("enabled") is False:
            for key in ("effort", "budget_tokens"):
                if key in settings:
                    yield locator.problem(
                        ("reasoning", key),
                        f"reasoning.enabled: false turns reasoning off, so {key} has no meaning",
                        expected="enabled: false alone, or enabled: true with effort and/or budget_tokens",
                        hint=f"remove {key}, or remove enabled: false",
                        on_key=True,
                    )
        elif "effort" not in settings and "budget_tokens" not in settings:
            yield locator.problem(
                ("reasoning",),
                "reasoning settings that turn reasoning on say neither effort nor budget_tokens",
                expected="effort: minimal|low|medium|high and/or budget_tokens: N, or enabled: false",
                hint="leave reasoning: out to keep the provider's default",
            )
    targets = data.get("cache_control", ())
    for i, target in enumerate(targets):
        if target == "system" and "system" not in data:
            yield locator.problem(
                ("cache_control", i),
                "cache_control marks the system prompt, but the scenario has no system:",
                expected="a system: prompt, or no system in cache_control",
                hint="add system:, or remove system from cache_control",
            )
        if target == "tools" and isinstance(data["tools"], list) and not data["tools"]:
            yield locator.problem(
                ("cache_control", i),
                "cache_control marks the last tool, but tools is empty",
                expected="at least one tool, or no tools in cache_control",
                hint="remove tools from cache_control",
            )
    for t, turn in enumerate(data["turns"]):
        reply = turn["reply"]
        if reply.get("reasoning_redacted") and not reply.get("reasoning"):
            yield locator.problem(
                ("turns", t, "reply", "reasoning_redacted"),
                "reasoning_redacted plays the reply's reasoning redacted, but the reply has no reasoning",
                expected="reasoning: TEXT beside reasoning_redacted: true",
                hint="add reasoning: (the text the provider keeps to itself), or remove reasoning_redacted",
                on_key=True,
            )


def _history(data: Mapping[str, Any], locator: Locator, scenario_id: str) -> Iterator[ScenarioProblem]:
    history = data.get("history", ())
    if not history:
        return
    if history[0]["role"] != "user":
        yield locator.problem(
            ("history", 0, "role"),
            f"the history starts with a {history[0]['role']} message",
            expected="role: user (providers refuse a conversation that does not start with the user)",
            hint="add a user message first",
        )
    if history[-1]["role"] != "assistant":
        yield locator.problem(
            ("history", len(history) - 1, "role"),
            f"the history ends with a {history[-1]['role']} message, and turn 0's user message follows it",
            expected="the history's last message is the assistant's",
            hint="end the history with an assistant answer, or move this message into turn 0",
        )
    first_call: dict[str, DocPath] = {}
    open_calls: dict[str, DocPath] = {}
    previous = ""
    for m, message in enumerate(history):
        role = message["role"]
        at: DocPath = ("history", m)
        if role == previous and role != "tool":
            yield locator.problem(
                (*at, "role"),
                f"two {role} messages in a row (history[{m - 1}] and history[{m}])",
                expected="user and assistant messages in turn",
                hint="join the two messages into one",
            )
        if role == "tool":
            yield from _history_results(message, at, open_calls, first_call, locator)
            open_calls = {}
        else:
            for call_id, where in open_calls.items():
                yield locator.problem(
                    where,
                    f"tool call {call_id!r} has no result before history[{m}]",
                    expected="a tool message answering it right after the assistant message",
                    hint="add {role: tool, results: [{call_id: ..., content: ...}]}",
                )
            open_calls = {}
        if role == "assistant":
            yield from _history_assistant(message, at, first_call, open_calls, locator)
        previous = role
    for call_id, where in open_calls.items():
        yield locator.problem(
            where,
            f"tool call {call_id!r} has no result in the history",
            expected="a tool message answering it right after the assistant message",
            hint="add {role: tool, results: [{call_id: ..., content: ...}]}",
        )


def _history_assistant(
    message: Mapping[str, Any],
    at: DocPath,
    first_call: dict[str, DocPath],
    open_calls: dict[str, DocPath],
    locator: Locator,
) -> Iterator[ScenarioProblem]:
    if not any(key in message for key in ("reasoning", "text", "tool_calls")):
        yield locator.problem(
            at,
            "the assistant message is empty",
            expected="text, reasoning and/or tool_calls",
            hint="add text: (what the assistant answered)",
        )
    for r, part in enumerate(message.get("reasoning", ())):
        where: DocPath = (*at, "reasoning", r)
        if not any(part.get(key) for key in ("text", "signature", "redacted")):
            yield locator.problem(
                where,
                "the reasoning part holds nothing",
                expected="text, signature and/or redacted",
                hint="remove the part, or give its text or the provider's signature",
            )
        for key in ("text", "signature"):
            if "redacted" in part and key in part:
                yield locator.problem(
                    (*where, key),
                    f"a redacted reasoning part has no {key} (Anthropic redacted_thinking is only its data)",
                    expected="redacted alone, or text and signature without redacted",
                    hint=f"remove {key}, or remove redacted",
                    on_key=True,
                )
        source = part.get("source")
        if source is not None and source not in WIRE_FORMATS:
            hint = (
                f"{source} is a prompt format, spoken over openai_chat: write openai_chat"
                if source in PROMPT_FORMATS
                else closest(source, WIRE_FORMATS) or "source names the wire format that produced the reasoning"
            )
            yield locator.problem(
                (*where, "source"),
                f"unknown source {source!r}",
                expected="one of: " + ", ".join(WIRE_FORMATS),
                hint=hint,
            )
    for c, call in enumerate(message.get("tool_calls", ())):
        where = (*at, "tool_calls", c, "id")
        call_id = call["id"]
        if call_id in first_call:
            yield locator.problem(
                where,
                f"tool call id {call_id!r} is used twice in the history (also {_pointer(first_call[call_id])})",
                expected="a unique id per call",
                hint="give each call its own id",
            )
            continue
        first_call[call_id] = where
        open_calls[call_id] = where


def _pointer(at: DocPath) -> str:
    return "/" + "/".join(map(str, at))


def _history_results(
    message: Mapping[str, Any],
    at: DocPath,
    open_calls: Mapping[str, DocPath],
    first_call: Mapping[str, DocPath],
    locator: Locator,
) -> Iterator[ScenarioProblem]:
    answered: dict[str, int] = {}
    for r, result in enumerate(message["results"]):
        where: DocPath = (*at, "results", r)
        call_id = result["call_id"]
        if call_id in answered:
            yield locator.problem(
                (*where, "call_id"),
                f"tool call {call_id!r} is answered twice (also results[{answered[call_id]}])",
                expected="one result per call",
                hint="remove one of the two results",
            )
        elif call_id not in open_calls:
            calls = ", ".join(open_calls) or "none"
            yield locator.problem(
                (*where, "call_id"),
                f"call_id {call_id!r} is not a call of the assistant message before this tool message"
                + (" (it was answered earlier)" if call_id in first_call else ""),
                expected=f"one of its calls' ids ({calls})",
                hint=closest(call_id, list(open_calls))
                or "a tool message follows the assistant message whose calls it answers",
            )
        answered.setdefault(call_id, r)
        content = result["content"]
        if isinstance(content, list):
            for i, item in enumerate(content):
                yield from _base64(item, (*where, "content", i), locator)
    for call_id, where_call in open_calls.items():
        if call_id not in answered:
            yield locator.problem(
                where_call,
                f"tool call {call_id!r} has no result in the tool message after it",
                expected="one result per call",
                hint=f"add {{call_id: {call_id}, content: ...}} to the results",
            )
