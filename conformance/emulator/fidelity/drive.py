"""Drive the emulator over loopback HTTP to collect its traffic for ``conformance.emulator.fidelity``.

For each adapter, a fixed set of scripts (text only; one call; two parallel calls, one of whose
results is an error; reasoning with a call; each fault kind) is played in non-stream and stream
mode. Requests are made by our
adapters' ``request_to_wire`` from a ``conformance.model.Request``; a turn that ends in tool
calls is answered with tool results, so the next request carries the history. The exchanges
are captured by ``conformance.traffic.transport`` exactly as they went over the wire.

This is an I/O edge (HTTP through ``Transport``); the emulator is imported only when used, so
this module imports without it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.assembly import fold
from conformance.emulator.fidelity.profiles import Profile, RawExchange, profile_exchanges
from conformance.errors import TransportError
from conformance.model import Message, Request, Response, Text, Tool, ToolResult
from conformance.scenarios.values import FAULT_KINDS, STREAM_FAULTS, Fault, Mode, Reply, ScriptedCall
from conformance.traffic.transport import Transport

__all__ = ["MODELS", "DriveScript", "drive", "drive_scripts", "emulator_profile", "load_emulator"]

MODELS: dict[str, str] = {
    "openai_chat": "gpt-4o-mini",
    "openai_responses": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "ollama": "llama3.1",
}
"""The model each adapter's requests name (the emulator echoes it)."""

_TOOLS = (
    Tool(
        name="get_weather",
        description="Current weather for a city.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    Tool(
        name="get_time",
        description="Current time in a time zone.",
        input_schema={"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
    ),
)
_WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
_TIME = ScriptedCall(name="get_time", arguments={"zone": "Europe/Paris"}, arguments_raw='{"zone": "Europe/Paris"}')
_ANSWER = Reply(text="It is 18C and sunny in Paris.")

_STREAM_DETAILS: dict[str, dict[str, Any]] = {
    # every recorded Chat Completions stream request asks for the usage chunk (wire-formats §1d)
    "openai_chat": {"extra": {"stream_options": {"include_usage": True}}},
}
"""Per adapter: ``Request.provider_details`` of stream requests, as the recorded clients send them."""


@dataclass(frozen=True, kw_only=True)
class DriveScript:
    """Replies the emulator plays, and the modes to play them in."""

    name: str
    replies: tuple[Reply, ...]
    modes: tuple[Mode, ...] = ("non_stream", "stream")


def drive_scripts() -> tuple[DriveScript, ...]:
    """The scripts played for every adapter."""
    scripts = [
        DriveScript(name="text", replies=(_ANSWER,)),
        DriveScript(name="one_call", replies=(Reply(tool_calls=(_WEATHER,), finish="tool_calls"), _ANSWER)),
        DriveScript(name="two_calls", replies=(Reply(tool_calls=(_WEATHER, _TIME), finish="tool_calls"), _ANSWER)),
        DriveScript(
            name="reasoning_call",
            replies=(
                Reply(reasoning="The user wants the weather.", tool_calls=(_WEATHER,), finish="tool_calls"),
                _ANSWER,
            ),
        ),
    ]
    for kind in FAULT_KINDS:
        modes: tuple[Mode, ...] = ("stream",) if kind in STREAM_FAULTS else ("non_stream", "stream")
        scripts.append(DriveScript(name=f"fault_{kind}", replies=(Reply(fault=Fault(kind=kind)),), modes=modes))
    return tuple(scripts)


def load_emulator() -> Any:
    """The ``conformance.emulator`` module; ``ImportError`` when it (or its ``Emulator`` and
    ``EmulatorScript``) is not there. Imported here so that this module imports, and is type
    checked, without it."""
    module = importlib.import_module("conformance.emulator")
    for name in ("Emulator", "EmulatorScript"):
        if not hasattr(module, name):
            raise ImportError(f"cannot import name {name!r} from 'conformance.emulator'")
    return module


def drive(emulator: Any, adapter_name: str) -> Iterator[tuple[str, str, bytes, int, bytes, bool]]:
    """Play every script for ``adapter_name`` on a running ``conformance.emulator.Emulator``.

    Requests set no ``max_tokens``: none of the real recorded requests but Anthropic's (where it is
    required and the adapter supplies it) set one, so the comparison of request shapes is not
    about a choice of this driver.

    Yields (label, url, request body, status, response body, streaming) per exchange, labels like
    ``one_call/stream#1`` (script, mode, turn). A stream the emulator breaks on purpose yields
    what arrived before the break.
    """
    script_type = load_emulator().EmulatorScript

    adapter = get_adapter(adapter_name)
    with Transport(emulator.base_url, wire=adapter.wire_format) as transport:
        for script in drive_scripts():
            for mode in script.modes:
                emulator.set_script(script_type(scenario_id=f"fidelity/{script.name}", replies=script.replies))
                messages: list[Message] = [Message(role="user", parts=(Text(text="What is the weather in Paris?"),))]
                for turn in range(len(script.replies)):
                    request = Request(
                        model=MODELS[adapter_name],
                        system="You are a helpful assistant.",
                        messages=tuple(messages),
                        tools=_TOOLS,
                        tool_choice="auto",
                        stream=mode == "stream",
                        provider_details=_STREAM_DETAILS.get(adapter_name, {}) if mode == "stream" else {},
                    )
                    status, body = _exchange(transport, adapter, request)
                    ex = transport.exchanges[-1]
                    yield f"{script.name}/{mode}#{turn}", ex.url, ex.request_body, status, body, mode == "stream"
                    response = _decode(adapter, status, body, mode == "stream", request)
                    if response is None or not response.tool_calls:
                        break
                    messages.append(Message(role="assistant", parts=response.parts))
                    # the last result of several is a failed call, so ``is_error`` travels where a wire has it
                    calls = response.tool_calls
                    results = tuple(
                        ToolResult(
                            call_id=call.id,
                            name=call.name,
                            content=(Text(text="unknown zone" if 0 < n == len(calls) - 1 else "18C"),),
                            is_error=0 < n == len(calls) - 1,
                        )
                        for n, call in enumerate(calls)
                    )
                    messages.append(Message(role="tool", parts=results))
    emulator.set_script(None)


def _exchange(transport: Transport, adapter: Adapter, request: Request) -> tuple[int, bytes]:
    wire = adapter.request_to_wire(request)
    if not request.stream:
        sent = transport.send(wire)
        return sent.status, sent.body
    with transport.stream(wire) as streamed:
        status = streamed.status
        with contextlib.suppress(TransportError):  # a disconnect fault: keep what arrived
            streamed.read()
    return status, transport.exchanges[-1].response_body


def _decode(adapter: Adapter, status: int, body: bytes, stream: bool, request: Request) -> Response | None:
    """The assistant turn, to build the next request from; None when there is none to continue."""
    if status != 200:
        return None
    try:
        if stream:
            return fold(adapter.stream_from_wire([body], tools=request.tools))
        return adapter.response_from_wire(json.loads(body), tools=request.tools)
    except ValueError:  # a malformed-body fault: there is no next turn
        return None


def emulator_profile(emulator: Any, adapter_name: str) -> Profile:
    """The profile of everything ``drive`` sends to and gets from ``emulator`` for one adapter."""
    exchanges = (
        RawExchange(url, request, status, body, streaming, label)
        for label, url, request, status, body, streaming in drive(emulator, adapter_name)
    )
    return profile_exchanges(exchanges, adapter=adapter_name)
