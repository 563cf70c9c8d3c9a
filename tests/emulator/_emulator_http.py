"""Helpers for the emulator tests: send an adapter's request over real HTTP (httpx, 127.0.0.1)
and decode the answer with the same adapter, the way ``conformance.run.conversation`` does.

Imported as ``_emulator_http`` (pytest puts this folder on ``sys.path``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.adapters import get_adapter
from conformance.adapters.base import load_json_body
from conformance.assembly import fold
from conformance.model import ErrorEvent, ErrorInfo, Message, Request, Response, StreamEvent, Text, Tool

__all__ = [
    "EXPECTED_KIND",
    "EXPECTED_STATUS",
    "KNOWN_MISDECODES",
    "MODELS",
    "TOOLS",
    "WIRES",
    "Outcome",
    "check_fault",
    "exchange",
    "fault_cases",
    "json_paths",
    "named_sse_events",
    "play_fault",
    "real_body_paths",
    "request_for",
    "sse_blocks",
]

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
MODELS = {
    "openai_chat": "gpt-4o-mini",
    "openai_responses": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "ollama": "llama3.1",
}
TOOLS = (
    Tool(
        name="get_weather",
        description="Current weather for a city.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    Tool(name="get_time", description="The time now.", input_schema={"type": "object", "properties": {}}),
)


@dataclass
class Outcome:
    """What one exchange gave: the raw HTTP side and the adapter's decoding."""

    status: int
    headers: Mapping[str, str]
    chunks: list[bytes] = field(default_factory=list)
    """Stream mode: the HTTP chunks as ``iter_raw`` yielded them."""
    body: bytes = b""
    broken: str | None = None
    """The transport error that ended a stream early (a dropped connection)."""
    events: list[StreamEvent] = field(default_factory=list)
    response: Response | None = None
    error: ErrorInfo | None = None
    malformed: bool = False
    """A 200 whole body that is not a JSON object."""


def request_for(wire: str, messages: Sequence[Message] = (), *, stream: bool, tools: Sequence[Tool] = TOOLS) -> Request:
    messages = tuple(messages) or (Message(role="user", parts=(Text(text="What is the weather in Paris?"),)),)
    return Request(model=MODELS[wire], messages=messages, tools=tuple(tools), stream=stream, max_tokens=256)


def exchange(client: httpx.Client, wire: str, request: Request) -> Outcome:
    """Send ``request`` with ``wire``'s adapter and decode the answer."""
    adapter = get_adapter(wire)
    sent = adapter.request_to_wire(request)
    headers = dict(sent.headers)
    if not sent.stream:
        answer = client.post(sent.path, json=sent.body, headers=headers)
        outcome = Outcome(status=answer.status_code, headers=answer.headers, body=answer.content)
        if answer.status_code >= 400:
            outcome.error = adapter.error_from_wire(answer.status_code, answer.headers, answer.content).info
            return outcome
        body = load_json_body(answer.content)
        if not isinstance(body, Mapping):
            outcome.malformed = True
            return outcome
        outcome.response = adapter.response_from_wire(body, tools=request.tools)
        outcome.error = outcome.response.error
        return outcome
    with client.stream("POST", sent.path, json=sent.body, headers=headers) as answer:
        outcome = Outcome(status=answer.status_code, headers=answer.headers)
        if answer.status_code >= 400:
            outcome.body = answer.read()
            outcome.error = adapter.error_from_wire(answer.status_code, answer.headers, outcome.body).info
            return outcome
        try:
            for chunk in answer.iter_raw():
                outcome.chunks.append(chunk)
        except httpx.TransportError as exc:
            outcome.broken = f"{type(exc).__name__}: {exc}"
    outcome.body = b"".join(outcome.chunks)
    outcome.events = list(adapter.stream_from_wire(outcome.chunks, tools=request.tools))
    outcome.response = fold(outcome.events)
    stream_error = next((e.error for e in outcome.events if isinstance(e, ErrorEvent)), None)
    outcome.error = stream_error or outcome.response.error
    return outcome


def sse_blocks(body: bytes) -> list[bytes]:
    """The SSE events of a body, each with its terminating blank line (LF or CRLF)."""
    blocks: list[bytes] = []
    rest = body
    while rest:
        ends = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n") if (i := rest.find(sep)) >= 0]
        if not ends:
            blocks.append(rest)
            break
        i, size = min(ends)
        blocks.append(rest[: i + size])
        rest = rest[i + size :]
    return blocks


def named_sse_events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of each SSE event of a body whose events are ``event:`` then ``data:``."""
    out = []
    for block in sse_blocks(body):
        lines = block.decode().strip("\n").split("\n")
        assert lines[0].startswith("event: ") and lines[1].startswith("data: "), block
        out.append((lines[0][7:], json.loads(lines[1][6:])))
    return out


# --------------------------------------------------------------------------------------------
# Faults: the table of docs/emulator-contract (expected kinds) and a check per (wire, fault, mode)
# --------------------------------------------------------------------------------------------

EXPECTED_KIND = {
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
"""The unified error kind each fault must decode to (the emulator contract's fault table)."""

EXPECTED_STATUS = {
    "rate_limit": 429,
    "server_error": 500,
    "unavailable": 503,
    "overloaded": 503,
    "invalid_tool_schema": 400,
}

KNOWN_MISDECODES: dict[tuple[str, str], str] = {}
"""Reference-adapter decodings that disagree with the fault table (reported, not fixed here)."""


def fault_cases(wire: str) -> list[Any]:
    """``pytest.param(kind, stream)`` for every fault in the modes it applies to."""
    import pytest

    from conformance.scenarios.values import FAULT_KINDS, STREAM_FAULTS

    cases = []
    for kind in FAULT_KINDS:
        for stream in (True,) if kind in STREAM_FAULTS else (False, True):
            why = KNOWN_MISDECODES.get((wire, kind))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            cases.append(pytest.param(kind, stream, id=f"{kind}-{'stream' if stream else 'whole'}", marks=marks))
    return cases


def play_fault(
    emu: Any, client: httpx.Client, wire: str, kind: str, stream: bool, *, after: int | None = None
) -> Outcome:
    """Play a reply with text and a call under fault ``kind``; the outcome of one exchange."""
    from conformance.emulator import EmulatorScript
    from conformance.scenarios.values import Fault, Reply, ScriptedCall

    call = ScriptedCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
    retry = 7 if kind == "rate_limit" else None
    reply = Reply(
        text="Let me look that up for you.",
        tool_calls=(call,),
        finish="tool_calls",
        fault=Fault(kind=kind, retry_after=retry, after=after),  # type: ignore[arg-type]
    )
    emu.set_script(EmulatorScript(scenario_id=f"faults/{kind}", replies=(reply,)))
    return exchange(client, wire, request_for(wire, stream=stream))


def check_fault(outcome: Outcome, wire: str, kind: str) -> None:
    """The outcome shows the error the fault table expects."""
    if kind == "malformed_body" and outcome.malformed:
        assert outcome.status == 200
        return
    assert outcome.error is not None, f"{wire} {kind}: no error decoded"
    assert outcome.error.kind == EXPECTED_KIND[kind], outcome.error
    if kind in EXPECTED_STATUS:
        expected = 529 if (wire, kind) == ("anthropic", "overloaded") else EXPECTED_STATUS[kind]
        assert outcome.status == expected == outcome.error.status
    if kind == "rate_limit":
        assert outcome.error.retry_after == 7.0
        assert outcome.headers["retry-after"] == "7"
    if kind == "disconnect":
        assert outcome.broken is not None  # the chunked body really broke
    if kind in ("no_terminator", "error_event", "malformed_body"):
        assert outcome.broken is None  # a clean close


# --------------------------------------------------------------------------------------------
# Shapes of real traffic
# --------------------------------------------------------------------------------------------


_OPAQUE = frozenset({"input", "args", "arguments", "parameters", "tools", "metadata"})
"""Keys whose values are call arguments, schemas or user data: their inner keys are not the wire's."""


def json_paths(value: Any, prefix: str = "$") -> set[str]:
    """Every key path of a JSON value, arrays as ``[]`` (``$.choices[].message.content``); argument
    objects and schemas count as one path."""
    paths = {prefix}
    if isinstance(value, Mapping):
        for key, item in value.items():
            paths |= {f"{prefix}.{key}"} if key in _OPAQUE else json_paths(item, f"{prefix}.{key}")
    elif isinstance(value, list):
        for item in value:
            paths |= json_paths(item, f"{prefix}[]")
    return paths


def real_streamed_response_paths(realworld: Any) -> set[str]:
    """The key paths of the ``response`` object of every recorded Responses stream's terminal event
    (``response.completed``/``.incomplete``): the same object a whole body is, recorded more recently."""
    from conformance.traffic.cassettes import is_streaming, iter_cassette_files, load_cassette

    found: set[str] = set()
    for path in iter_cassette_files([realworld / "cassettes" / "openai_responses"]):
        for interaction in load_cassette(path).interactions:
            response = interaction.response
            if response is None or response.status != 200 or not is_streaming(interaction):
                continue
            for line in response.body.decode("utf-8", "replace").splitlines():
                if not line.startswith("data:"):
                    continue
                try:
                    event = json.loads(line[5:])
                except ValueError:
                    continue
                if isinstance(event, Mapping) and event.get("type") in ("response.completed", "response.incomplete"):
                    found |= json_paths(event["response"])
    return found


def real_body_paths(realworld: Any, provider: str) -> set[str]:
    """The key paths of every non-streamed 200 JSON body recorded for ``provider``."""
    from conformance.traffic.cassettes import is_streaming, iter_cassette_files, load_cassette

    found: set[str] = set()
    for path in iter_cassette_files([realworld / "cassettes" / provider]):
        for interaction in load_cassette(path).interactions:
            response = interaction.response
            if response is None or response.status != 200 or is_streaming(interaction):
                continue
            if isinstance(response.json, Mapping):
                found |= json_paths(response.json)
    return found
