"""The Client contract: how the suite drives a black box that does its own HTTP (public API).

A **client** is what users ship: LiteLLM, pydantic-ai, LangChain, an official SDK or their own
httpx code, wrapped in a 15-40 line driver (``docs/clients.md``). The suite serves each scenario's
recorded answers over loopback HTTP and hands the driver one ``Call`` per turn; the driver points
its library at ``call.base_url``, sends what the call asks for in the library's own terms, and
returns what the library decoded in the unified model:

- a ``Response`` (a library that only exposes an accumulated result), or
- its stream events (``conformance.model.StreamEvent``), as a sync or an async iterator;

``complete`` may be a coroutine function (``async def``): every coroutine of a run runs on one
long-lived event loop, so pooled connections survive from turn to turn. When the library raises,
``error_info(exc)`` maps the exception to an ``ErrorInfo`` (kind, status, ``retry_after``), most
specific class first; ``None`` says the exception is not typed (itself a finding).

This module is pure and stdlib-only (with ``conformance.model``), so a driver running in another
interpreter (``conformance certify --python``) needs nothing the suite pins.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from conformance.model import (
    ErrorInfo,
    Message,
    ReasoningSettings,
    Request,
    Response,
    StreamEvent,
    Tool,
    ToolChoice,
)

__all__ = [
    "CLIENT_WIRES",
    "DUTIES",
    "Call",
    "Client",
    "Completion",
    "SimpleClient",
    "client_duties",
    "client_problems",
    "duties_from_json",
    "duties_to_json",
]

CLIENT_WIRES: tuple[str, ...] = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
"""The wires a client can be certified on (the native wire formats)."""

DUTIES: Mapping[str, str] = {
    "transport": "sends what the caller gave and decodes what the provider sent: messages, tool results, call ids,"
    " the stream mode asked for, typed errors, usage",
    "tool_names": "maps tool names to what the provider accepts, and the calls back to the caller's names",
    "tool_schemas": "maps tool input schemas to what the provider accepts",
    "tool_results": "maps a tool's MCP result (text, structured content, images, audio, embedded resources, resource"
    ' links) to what the wire\'s tool-result slot carries, by the rule of docs/mcp.md ("What the model receives"),'
    " and says what the slot cannot carry",
    "quirks": "reads what providers and gateways are known to send outside the wire's rules (a stream without"
    " a finish reason, repeated call names, an unterminated last event: the scenarios tagged deviation) as the"
    " provider meant it",
}
"""The duties a client may take on (docs/clients.md, "Duties"). Every client transports; an official SDK
takes on nothing more, a framework that promises to adapt the caller's tools also maps names and
schemas, one that converts tool results itself (its own MCP client or content blocks: pydantic-ai, LangChain,
the AI SDK) maps MCP results, and one that promises to smooth over providers' deviations reads their quirks.
A check of a duty the client does not declare is reported as left to the caller."""

Completion: TypeAlias = Response | Iterable[StreamEvent] | AsyncIterator[StreamEvent]
"""What ``Client.complete`` returns (or its coroutine returns)."""


@dataclass(frozen=True, kw_only=True)
class Call:
    """One turn the suite asks a client to send: everything a caller of the library would pass.

    ``messages`` is the history in the unified model, carrying the ids the client itself decoded
    on earlier turns (its tool calls' ids, and the tool results answering them).
    """

    wire: str
    """One of ``CLIENT_WIRES``: the provider API the client must speak."""
    base_url: str
    """The server root, ``http://127.0.0.1:PORT`` (no path): OpenAI SDKs want ``base_url + "/v1"``,
    Anthropic, Gemini (``HttpOptions(base_url=...)``) and Ollama take it as it is."""
    api_key: str
    """A fake key, never a real one; the suite checks it never reaches a report."""
    model: str
    system: str | None = None
    system_cache_control: Mapping[str, Any] | None = None
    """A prompt-cache breakpoint after the system prompt (``Request.system_cache_control``)."""
    messages: tuple[Message, ...] = ()
    tools: tuple[Tool, ...] = ()
    """In MCP form (``Tool.input_schema`` is MCP ``inputSchema``)."""
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    reasoning: ReasoningSettings | None = None
    """The caller's reasoning settings (effort, budget, off; None: the provider's default), for the
    driver to pass as the library's own option (``docs/clients.md``)."""
    stream: bool = False
    """Stream the answer (return its events) or not (return a ``Response``)."""
    timeout: float = 30.0
    """Seconds the turn may take; a driver may pass it to the library as its own timeout."""
    turn: int = 0
    scenario: str = ""
    """For the driver's logs only: answers never depend on it."""

    @classmethod
    def of(cls, request: Request, *, wire: str, base_url: str, api_key: str, **extra: Any) -> Call:
        """The call asking a client to send ``request`` (its model, system, history, tools, choices)."""
        return cls(
            wire=wire,
            base_url=base_url,
            api_key=api_key,
            model=request.model,
            system=request.system,
            system_cache_control=request.system_cache_control,
            messages=request.messages,
            tools=request.tools,
            tool_choice=request.tool_choice,
            parallel_tool_calls=request.parallel_tool_calls,
            max_tokens=request.max_tokens,
            reasoning=request.reasoning,
            stream=request.stream,
            **extra,
        )

    def request(self) -> Request:
        """The unified request this call asks for (what a translator writes to the wire)."""
        return Request(
            model=self.model,
            system=self.system,
            system_cache_control=self.system_cache_control,
            messages=self.messages,
            tools=self.tools,
            tool_choice=self.tool_choice,
            parallel_tool_calls=self.parallel_tool_calls,
            stream=self.stream,
            max_tokens=self.max_tokens,
            reasoning=self.reasoning,
        )


@runtime_checkable
class Client(Protocol):
    """A black-box client under certification (a driver around a library)."""

    name: str
    wires: Mapping[str, frozenset[str]]
    """The wires it speaks, each with its declared capabilities (``conformance.adapters.base.CAPABILITIES``):
    a scenario requiring one it does not declare is UNSUPPORTED."""
    known_gaps: Mapping[str, str]
    """Check id, or ``check-id@scenario-glob``, or ``wire:check-id[@glob]`` -> reason: failing there is
    XFAIL, passing STALE."""

    def complete(self, call: Call) -> Completion | Awaitable[Completion]: ...

    # Optional: ``schema_rewrites: Mapping[str, str]``, wire -> what the client does to tool schemas
    # on that wire (pydantic-ai's OpenAI strict mode): declared rewrites are data, and
    # ``translation.tool_definitions`` then compares those tools by name and description only.
    # Optional: ``duties: Mapping[str, frozenset[str]] | frozenset[str]``, wire -> the duties the client
    # takes on there (``DUTIES``), or one set for every wire; without it, every duty on every wire.
    # Optional: ``request_differences: Mapping[str, str]``, a JSON path glob of the read-back request
    # (``$.max_tokens``; ``wire:$.max_tokens`` on one wire) -> why the client sends it differently from
    # the recorded request on purpose: ``client.recorded_request`` does not compare those paths.
    # Optional: ``caller_request(call) -> Request``, what the caller's request is as the client could
    # know it (a gateway: as its downstream wire carries it); the request checks compare with that.

    def error_info(self, exc: BaseException) -> ErrorInfo | None: ...


def client_problems(client: Any) -> list[str]:
    """What a client-like object declares wrong (empty when it keeps the contract)."""
    from conformance.adapters.base import CAPABILITIES

    problems: list[str] = []
    if not isinstance(getattr(client, "name", None), str) or not client.name:
        problems.append("name must be a non-empty string")
    wires = getattr(client, "wires", None)
    if not isinstance(wires, Mapping) or not wires:
        problems.append(f"wires must map at least one wire ({', '.join(CLIENT_WIRES)}) to its capabilities")
    else:
        for wire, capabilities in wires.items():
            if wire not in CLIENT_WIRES:
                problems.append(f"unknown wire {wire!r} (valid: {', '.join(CLIENT_WIRES)})")
            elif not isinstance(capabilities, frozenset | set):
                problems.append(f"wires[{wire!r}] must be a set of capability names")
            elif unknown := sorted(str(c) for c in capabilities if c not in CAPABILITIES):
                problems.append(
                    f"unknown capability {', '.join(unknown)} for {wire} (valid: {', '.join(sorted(CAPABILITIES))})"
                )
    gaps = getattr(client, "known_gaps", {})
    if not isinstance(gaps, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in gaps.items()):
        problems.append("known_gaps must map check ids (or check@scenario-glob) to reasons")
    rewrites = getattr(client, "schema_rewrites", {})
    if not isinstance(rewrites, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in rewrites.items()
    ):
        problems.append("schema_rewrites must map wires to a description of the rewrite")
    problems += _difference_problems(getattr(client, "request_differences", {}), wires)
    problems += _duty_problems(getattr(client, "duties", None), wires)
    for method in ("complete", "error_info"):
        if not callable(getattr(client, method, None)):
            problems.append(f"{method} must be a method")
    return problems


def _difference_problems(differences: Any, wires: Any) -> list[str]:
    """What is wrong with a client's ``request_differences`` (read-back path glob, or ``wire:glob``,
    -> the reason it differs on purpose from the recorded request)."""
    if not isinstance(differences, Mapping):
        return ["request_differences must map JSON path globs ($.field, or wire:$.field) to reasons"]
    problems: list[str] = []
    for key, reason in differences.items():
        prefix, colon, rest = str(key).partition(":") if isinstance(key, str) else ("", "", "")
        glob = rest if colon and not prefix.startswith("$") else key
        if not isinstance(key, str) or not isinstance(glob, str) or not glob.startswith("$"):
            problems.append(
                f"request_differences key {key!r} is not a JSON path glob of the read-back request"
                " ($.tools[*].description, or wire:$.max_tokens for one wire)"
            )
        elif glob is rest and isinstance(wires, Mapping) and prefix not in wires:
            problems.append(
                f"request_differences key {key!r} names the wire {prefix!r}, which the client does not declare"
                f" (it declares {', '.join(map(str, wires))})"
            )
        if not isinstance(reason, str) or not reason.strip():
            problems.append(f"request difference {key!r} needs a reason (a non-empty string)")
    return problems


def client_duties(client: Any, wire: str) -> frozenset[str]:
    """The duties ``client`` takes on on ``wire`` (every duty when it declares none)."""
    declared = getattr(client, "duties", None)
    if declared is None:
        return frozenset(DUTIES)
    if isinstance(declared, Mapping):
        return frozenset(declared.get(wire, DUTIES))
    return frozenset(declared)


def duties_to_json(duties: Any) -> Any:
    """A client's ``duties`` as JSON (for a ``--python`` child): sets as sorted lists, one set for
    every wire under ``"*"``; anything else as its ``repr``, which ``client_problems`` then refuses."""

    def one(names: Any) -> Any:
        return sorted(map(str, names)) if isinstance(names, frozenset | set) else repr(names)

    if duties is None:
        return None
    if isinstance(duties, Mapping):
        return {str(wire): one(names) for wire, names in duties.items()}
    return {"*": one(duties)}


def duties_from_json(data: Any) -> Any:
    """``duties_to_json``'s inverse, and a hello's ``duties`` (docs/protocol.md): None, one list for
    every wire, or wire -> list, as sets (a value that was not a list stays as it came, for
    ``client_problems`` to name)."""
    if isinstance(data, list):
        return frozenset(data)
    if not isinstance(data, Mapping):
        return None if data is None else data
    sets = {wire: frozenset(names) if isinstance(names, list) else names for wire, names in data.items()}
    return sets["*"] if set(sets) == {"*"} else sets


def _duty_problems(duties: Any, wires: Any) -> list[str]:
    """What is wrong with a client's ``duties`` (None, one set for every wire, or wire -> set)."""
    if duties is None:
        return []
    valid = ", ".join(DUTIES)
    if isinstance(duties, Mapping):
        sets = list(duties.items())
    elif isinstance(duties, frozenset | set):
        sets = [("every wire", duties)]
    else:
        return [f"duties must be a set of duty names ({valid}) or map wires to such sets"]
    problems: list[str] = []
    for wire, names in sets:
        if wire != "every wire" and isinstance(wires, Mapping) and wire not in wires:
            declared = ", ".join(map(str, wires))
            problems.append(
                f"duties names the wire {wire!r}, which the client does not declare (it declares {declared})"
            )
        if not isinstance(names, frozenset | set):
            problems.append(f"duties[{wire!r}] must be a set of duty names ({valid})")
            continue
        if unknown := sorted(str(n) for n in names if n not in DUTIES):
            problems.append(f"unknown duty {', '.join(map(repr, unknown))} for {wire} (valid: {valid})")
        if "transport" not in names:
            problems.append(
                f"duties for {wire} must include 'transport' (every client transports; add {valid[11:]} on top)"
            )
    return problems


@dataclass(frozen=True, kw_only=True)
class SimpleClient:
    """A client built from functions (what most drivers are): ``SimpleClient(name=..., wires=...,
    complete=fn, error_info=fn)``."""

    name: str
    wires: Mapping[str, frozenset[str]]
    complete: Any
    error_info: Any
    known_gaps: Mapping[str, str] = field(default_factory=dict)
    schema_rewrites: Mapping[str, str] = field(default_factory=dict)
    """Wire -> what the library does to tool schemas there (see ``Client``)."""
    request_differences: Mapping[str, str] = field(default_factory=dict)
    """Read-back path glob (or ``wire:glob``) -> why the client sends it differently from the
    recorded request on purpose (see ``Client``)."""
    duties: Mapping[str, frozenset[str]] | frozenset[str] | None = None
    """The duties it takes on (``DUTIES``), per wire or for every wire; None: every duty."""
