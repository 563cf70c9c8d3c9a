"""What every per-wire encoder of the emulator shares (pure): the request context, the encoder
interface, SSE/JSON framing and the fault defaults.

Each encoder module (``_openai_chat``, ``_openai_responses``, ``_anthropic``, ``_gemini``,
``_ollama``) has the same names, in this order: ``WIRE``, ``KNOWN_QUIRKS``, ``response_body``,
``dump_body``, ``response_headers``, ``stream_events``, ``terminal_event_count``,
``error_response``, ``invalid_request``, ``stream_error_event``, ``stream_error_tail``,
``malformed_event``. ``WireEncoder`` states them as a protocol the modules satisfy.
``position`` is the number of stream events sent before an injected one (Responses numbers its
events; Gemini's JSON-array stream opens with ``[``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from conformance.scenarios.values import Fault, Reply, ScriptedCall

__all__ = [
    "DEFAULT_AFTER",
    "ErrorAnswer",
    "Headers",
    "WireContext",
    "WireEncoder",
    "argument_text",
    "dumps_compact",
    "dumps_spaced",
    "retry_after",
    "retry_after_header",
    "sends_no_arguments",
    "sse",
]

Headers: TypeAlias = list[tuple[str, str]]
ErrorAnswer: TypeAlias = tuple[int, Headers, bytes]
"""An HTTP answer without a stream: status, headers (content-type included) and body bytes."""

DEFAULT_AFTER = {"disconnect": 2, "error_event": 2, "malformed_body": 1}
"""Stream events sent before a stream fault when the scenario gives no ``after``."""


@dataclass(frozen=True, kw_only=True)
class WireContext:
    """What an encoder knows about the request it answers."""

    wire: str
    """The wire format (an adapter name: ``openai_chat``, ``anthropic`` ...)."""
    scenario_id: str
    turn: int
    """The turn index (assistant messages in the request)."""
    model: str
    """The model the request named (echoed)."""
    stream: bool
    request: Mapping[str, Any] = field(default_factory=dict)
    """The request body (parsed JSON), for fields a response echoes (Responses ``tools``)."""
    tool_names: tuple[str, ...] = ()
    """The wire names of the request's tools (errors name them)."""
    sse: bool = True
    """Gemini only: ``alt=sse`` (else the stream is one JSON array)."""
    prompt_format: str | None = None
    """OpenAI Chat only: the prompt format the request speaks (``qwen``, ``hermes``,
    ``function_call``; ``_prompt_formats``), whose reply text streams in token-like pieces."""

    def key(self, *more: object) -> tuple[object, ...]:
        """The keys an id is derived from: scenario, turn, then ``more``."""
        return (self.scenario_id, self.turn, *more)


class WireEncoder(Protocol):
    """The functions each encoder module defines (a module satisfies this protocol)."""

    WIRE: str
    KNOWN_QUIRKS: frozenset[str]

    def response_body(self, reply: Reply, ctx: WireContext) -> dict[str, Any]: ...

    def dump_body(self, body: Mapping[str, Any]) -> bytes: ...

    def response_headers(self, ctx: WireContext) -> Headers: ...

    def stream_events(self, reply: Reply, ctx: WireContext) -> list[bytes]: ...

    def terminal_event_count(self, reply: Reply, ctx: WireContext) -> int: ...

    def error_response(self, fault: Fault, ctx: WireContext) -> ErrorAnswer: ...

    def invalid_request(self, message: str, ctx: WireContext) -> ErrorAnswer: ...

    def stream_error_event(self, ctx: WireContext, *, position: int = 0) -> bytes: ...

    def stream_error_tail(self, ctx: WireContext, *, position: int = 0) -> list[bytes]: ...

    def malformed_event(self, ctx: WireContext, *, position: int = 0) -> bytes: ...


def dumps_compact(value: Any) -> str:
    """JSON without spaces (OpenAI and Anthropic stream events, Ollama lines)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps_spaced(value: Any) -> str:
    """JSON with ``": "`` after keys and bare ``,`` between items (Gemini's SSE chunks)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ": "))


def sse(data: str, event: str | None = None, *, crlf: bool = False) -> bytes:
    """One SSE event: an optional ``event:`` line, one ``data:`` line and the blank line."""
    end = "\r\n" if crlf else "\n"
    head = f"event: {event}{end}" if event is not None else ""
    return f"{head}data: {data}{end}{end}".encode()


def retry_after(fault: Fault) -> float | None:
    """Seconds announced by a fault: ``retry_after`` as given; a rate limit always has one (1 s
    by default), as ``retry-after: N`` on a 429 is the contract (docs/emulator.md)."""
    if fault.retry_after is not None:
        return fault.retry_after
    return 1.0 if fault.kind == "rate_limit" else None


def retry_after_header(seconds: float) -> str:
    """``2`` for 2.0 seconds, ``2.5`` otherwise (the SDKs parse a float)."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


def sends_no_arguments(call: ScriptedCall, reply: Reply) -> bool:
    """The ``empty_args_string`` quirk applies to this call: it has no arguments and the wire sends
    none (``""`` where arguments are text, no ``args`` or no fragments where they are an object; E3)."""
    return "empty_args_string" in reply.quirks and call.arguments == {}


def argument_text(call: ScriptedCall, reply: Reply) -> str:
    """A call's argument text on wires that carry it as a string (OpenAI Chat and Responses)."""
    return "" if sends_no_arguments(call, reply) else call.arguments_raw
