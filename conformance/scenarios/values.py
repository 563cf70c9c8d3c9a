"""The scenario model: one provider-neutral tool-calling behaviour, as frozen values.

A scenario (``docs/scenarios.md``; read from YAML by ``conformance.scenarios.loader``) holds the tools in
MCP form, and turns. Each turn has the user input, the ``Reply`` the emulator plays as the
assistant (text, tool calls, or a fault), the ``Expectation`` an adapter's decoding of that reply
must meet, and the tool results fed back before the next turn. ``wire`` expectations name JSON
paths that must be present, absent or equal in an adapter's request body.

Pure values and pure helpers only: no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from conformance.model import (
    ContentItem,
    ErrorKind,
    FinishReason,
    JSONObject,
    Message,
    Part,
    ReasoningSettings,
    Tool,
    ToolChoice,
)

__all__ = [
    "CACHE_TARGETS",
    "DEFAULT_MCP_TIMEOUT",
    "FAULT_KINDS",
    "HTTP_FAULTS",
    "MODES",
    "PYTHON_PLACEHOLDER",
    "STREAM_FAULTS",
    "CacheTarget",
    "Expectation",
    "ExpectedCall",
    "ExpectedError",
    "ExpectedReasoning",
    "Fault",
    "FaultKind",
    "McpTools",
    "Mode",
    "Reply",
    "Scenario",
    "ScriptedCall",
    "TextExpectation",
    "ToolResultSpec",
    "Turn",
    "WireExpectation",
    "copy_json",
    "json_path_get",
    "json_path_set",
    "parse_json_path",
]

FaultKind: TypeAlias = Literal[
    "rate_limit",
    "server_error",
    "unavailable",
    "overloaded",
    "invalid_tool_schema",
    "malformed_body",
    "disconnect",
    "no_terminator",
    "error_event",
]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "rate_limit",
    "server_error",
    "unavailable",
    "overloaded",
    "invalid_tool_schema",
    "malformed_body",
    "disconnect",
    "no_terminator",
    "error_event",
)
HTTP_FAULTS: frozenset[FaultKind] = frozenset(
    {"rate_limit", "server_error", "unavailable", "overloaded", "invalid_tool_schema", "malformed_body"}
)
"""Faults answered instead of a response (an HTTP error status, or a 200 whose body is not JSON)."""
STREAM_FAULTS: frozenset[FaultKind] = frozenset({"disconnect", "no_terminator", "error_event"})
"""Faults that break a stream part-way; a scenario using one runs in ``stream`` mode only."""

Mode: TypeAlias = Literal["non_stream", "stream"]
MODES: tuple[Mode, ...] = ("non_stream", "stream")

CacheTarget: TypeAlias = Literal["tools", "system", "messages"]
CACHE_TARGETS: tuple[CacheTarget, ...] = ("tools", "system", "messages")
"""Where ``cache_control:`` puts a prompt-cache breakpoint on every request: after the last tool, after
the system prompt, after the last block of the last message (``run.conversation.build_request``)."""

DEFAULT_MCP_TIMEOUT = 120.0
"""Seconds an MCP ``tools/call`` may take before its result becomes a timeout error."""
PYTHON_PLACEHOLDER = "{python}"
"""In ``tools.mcp.command``/``args``: replaced by the running interpreter (``sys.executable``)."""


@dataclass(frozen=True, kw_only=True)
class ScriptedCall:
    """One tool call the emulator plays."""

    name: str
    arguments: JSONObject | None = None
    """The arguments, when the scenario gave an object."""
    arguments_raw: str = "{}"
    """The argument text sent on the wire (compact JSON of ``arguments``, or the scenario's raw text)."""
    reasoning: str | None = None
    """Thinking played right before this call (interleaved thinking): Anthropic a ``thinking`` block
    between the ``tool_use`` blocks, Gemini a thought part before the ``functionCall``, Responses a
    ``reasoning`` item before the ``function_call``; Chat and Ollama, which have one reasoning field
    per message, join it into that field in order."""


@dataclass(frozen=True, kw_only=True)
class Fault:
    """A fault the emulator injects instead of (or part-way through) a reply."""

    kind: FaultKind
    retry_after: float | None = None
    """Seconds, sent as ``retry-after`` (rate_limit, overloaded, unavailable)."""
    after: int | None = None
    """Stream events sent before a stream fault takes effect (default: the emulator's choice)."""


@dataclass(frozen=True, kw_only=True)
class Reply:
    """What the emulator plays as one assistant turn."""

    text: str | None = None
    reasoning: str | None = None
    """Reasoning played before everything else of the turn, where the wire format has it."""
    reasoning_redacted: bool = False
    """``reasoning`` is played redacted: Anthropic a ``redacted_thinking`` block, Responses a
    ``reasoning`` item with ``encrypted_content`` and an empty summary (no text reaches the client)."""
    tool_calls: tuple[ScriptedCall, ...] = ()
    finish: FinishReason = "stop"
    fault: Fault | None = None
    quirks: tuple[str, ...] = ()
    """Provider stream quirks to exhibit (``docs/emulator.md`` lists the known ones per wire)."""


@dataclass(frozen=True, kw_only=True)
class ExpectedCall:
    """One tool call an adapter must decode."""

    name: str
    arguments: JSONObject | None = None
    """The expected arguments (``match`` exact/subset) or a JSON Schema for them (``match`` schema)."""
    match: Literal["exact", "subset", "schema"] = "exact"
    arguments_error: bool = False
    """The call must end with an ``arguments_error`` (its raw text kept), not as a valid call."""


@dataclass(frozen=True, kw_only=True)
class ExpectedReasoning:
    """One reasoning part an adapter must decode (``Reasoning``), in order."""

    text: str | None = None
    """Its text; None: not compared (a redacted block has none)."""
    redacted: bool = False
    """The part must be redacted (Anthropic ``redacted_thinking``; Responses encrypted, no summary)."""


@dataclass(frozen=True, kw_only=True)
class TextExpectation:
    value: str
    mode: Literal["exact", "contains"] = "exact"


@dataclass(frozen=True, kw_only=True)
class ExpectedError:
    kind: ErrorKind
    status: int | None = None
    retry_after: float | None = None


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """What an adapter's decoding of a turn must show (``None``: not checked)."""

    tool_calls: tuple[ExpectedCall, ...] | None = None
    text: TextExpectation | None = None
    finish_reason: FinishReason | None = None
    events: tuple[str, ...] | None = None
    """Stream mode: event types that must appear in this order (a subsequence of the events)."""
    error: ExpectedError | None = None
    reasoning: tuple[ExpectedReasoning, ...] | None = None
    """The reasoning parts, in order (judged by ``roundtrip.reasoning``); None: not checked."""


@dataclass(frozen=True, kw_only=True)
class ToolResultSpec:
    """A tool result fed back after a turn, answering the turn's call number ``call``."""

    call: int
    content: tuple[ContentItem, ...] = ()
    is_error: bool = False


@dataclass(frozen=True, kw_only=True)
class Turn:
    index: int
    user: tuple[Part, ...] = ()
    """The user's message parts (empty: the turn continues after tool results)."""
    reply: Reply
    expect: Expectation
    tool_results: tuple[ToolResultSpec, ...] = ()
    mcp_results: bool = False
    """``tool_results: mcp``: the reply's calls are executed through the scenario's MCP server and
    its real results fed back (``tool_results`` is then empty)."""


@dataclass(frozen=True, kw_only=True)
class McpTools:
    """``tools: {mcp: ...}``: the tools come from an MCP server (``docs/mcp.md``), over stdio
    (``command``) or Streamable HTTP (``url``; with ``command`` too, the command starts the server that
    listens there).

    Kept as written: ``{python}`` in ``command``/``args``, ``{port}`` in ``command``/``args``/``url``
    (a free loopback port), ``${VAR}`` in ``headers`` (from the environment, never written to a report)
    and a relative ``cwd`` (relative to the scenario file's folder) are resolved when the server starts
    (``conformance.mcp_bridge.scenario_tools``).
    """

    command: tuple[str, ...] = ()
    """The program and its leading arguments (empty: connect to ``url`` only)."""
    args: tuple[str, ...] = ()
    """More arguments, appended to ``command``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the server's environment (which is otherwise a safe subset of ours)."""
    cwd: str | None = None
    """The server's working directory (None: ours)."""
    timeout: float = DEFAULT_MCP_TIMEOUT
    """Seconds per ``tools/call``; a call that takes longer is fed back as an error result."""
    select: tuple[str, ...] | None = None
    """Offer only these tools, in this order (None: every tool the server lists, in its order)."""
    url: str | None = None
    """The server's Streamable HTTP endpoint (None: stdio, the ``command``'s stdin/stdout)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent to ``url``; ``${VAR}`` in a value is taken from the environment when the
    session opens (the template, never the value, is what a report shows)."""
    reset_timeout_on_progress: bool = False
    """A ``notifications/progress`` for a call restarts its ``timeout`` (the spec's
    ``resetTimeoutOnProgress``); ``max_total_timeout`` still bounds the call."""
    max_total_timeout: float | None = None
    """Seconds a call may take in all, progress or not (None: the bridge's own bound)."""
    list_changes: bool = False
    """The scenario's calls change the server's tool list (``notifications/tools/list_changed``): each
    conversation gets a session of its own (never the run's shared one), and after a turn's calls the
    next request offers the server's new list (``docs/mcp.md``, "Tool lists that change")."""


@dataclass(frozen=True, kw_only=True)
class WireExpectation:
    """JSON paths an adapter's request body must hold (``turn`` None: every request)."""

    adapter: str
    turn: int | None = None
    present: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    equal: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Scenario:
    id: str
    path: Path
    behavior: str
    source: str
    requires: frozenset[str] = frozenset()
    tags: tuple[str, ...] = ()
    modes: tuple[Mode, ...] = MODES
    wires: tuple[str, ...] = ()
    """The wire formats the scenario runs on (``wires:``; empty: every wire)."""
    system: str | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    tools: tuple[Tool, ...] = ()
    """The tools offered. With ``mcp`` set: empty as loaded, filled from the server at run time."""
    turns: tuple[Turn, ...] = ()
    wire: tuple[WireExpectation, ...] = ()
    mcp: McpTools | None = None
    """Where the tools come from when they come from an MCP server (``tools: {mcp: ...}``)."""
    reasoning: ReasoningSettings | None = None
    """``reasoning:``: the caller's reasoning settings, sent on every request (``Request.reasoning``)."""
    cache_control: tuple[CacheTarget, ...] = ()
    """``cache_control:``: where every request carries a prompt-cache breakpoint (``CACHE_TARGETS``)."""
    history: tuple[Message, ...] = ()
    """``history:``: messages before turn 0 (an earlier conversation, possibly with another provider),
    sent first in every request."""
    fingerprint: str = ""
    """sha256 of the file's content as parsed (``scenario_fingerprint``; empty for a scenario not
    read from a file): the recorder writes it into a cassette's provenance, and a run finds the
    cassettes recorded from an older version of the scenario by it."""

    def wire_excluded(self, adapter: str, wire_format: str) -> str | None:
        """Why ``adapter`` (speaking ``wire_format``) does not run this scenario because of its
        ``wires:`` list (the case is UNSUPPORTED with this message), or None when it runs it."""
        if not self.wires or wire_format in self.wires:
            return None
        where = f"the {self.wires[0]} wire" if len(self.wires) == 1 else "the wires " + ", ".join(self.wires)
        return (
            f"the scenario runs only on {where} (wires:), where its provider shape exists; "
            f"{adapter} speaks {wire_format}"
        )


_STEP = re.compile(r"""\.([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*"|'[^']*')\]""")


def parse_json_path(path: str) -> tuple[str | int, ...]:
    """``$.a[0]["b.c"]`` -> ``("a", 0, "b.c")``; raises ``ValueError`` naming the bad position."""
    if not path.startswith("$"):
        raise ValueError(f"JSON path {path!r} must start with '$'")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            raise ValueError(f"JSON path {path!r}: cannot read a step at character {pos} ({path[pos:]!r})")
        name, index, quoted = match.groups()
        if name is not None:
            steps.append(name)
        elif index is not None:
            steps.append(int(index))
        else:
            inner = quoted[1:-1]
            steps.append(re.sub(r"\\(.)", r"\1", inner) if quoted.startswith('"') else inner)
        pos = match.end()
    return tuple(steps)


def json_path_set(body: Any, path: str, value: Any) -> Any | None:
    """A copy of ``body`` with ``value`` at ``path`` (which must exist up to its last step), or None
    when the path does not lead there."""
    steps = parse_json_path(path)
    if not steps:
        return None
    copy = copy_json(body)
    node = copy
    for step in steps[:-1]:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return None
        elif not isinstance(node, dict) or step not in node:
            return None
        node = node[step]
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            return None
    elif not isinstance(node, dict):
        return None
    node[last] = value
    return copy


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts and lists; anything else is shared)."""
    if isinstance(value, Mapping):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [copy_json(v) for v in value]
    return value


def json_path_get(body: Any, path: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``path`` exists in ``body``, else ``(False, None)``."""
    node = body
    for step in parse_json_path(path):
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return False, None
            node = node[step]
        else:
            if not isinstance(node, Mapping) or step not in node:
                return False, None
            node = node[step]
    return True, node
