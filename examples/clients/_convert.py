"""Helpers the client drivers share: argument text, tool-result text, finish reasons, error kinds, stream calls.

Stdlib and ``conformance.model`` only (never ``conformance.adapters``: a driver must judge the
library's translation, not ours). Each driver keeps its own wire conversion; what lives here is
what every user of these libraries writes the same way: ``json.loads`` of the argument text, the
text of an MCP tool result, the ``retry-after`` headers, the lookup of a finish reason or an error
class in the driver's own table (and the OpenAI Chat finish reasons, which three libraries pass on),
and the bookkeeping that turns a library's streamed call fragments into
``ToolCallStart``/``ToolCallChunk``/``ToolCallEnd`` events.

Nothing here reads an exception's cause or context, or second-guesses a kind the library's exception
class already gives (docs/clients.md, "Drivers do what a user does").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from conformance.model import (
    ErrorKind,
    FinishReason,
    Image,
    Reasoning,
    Resource,
    StreamEvent,
    Text,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)

__all__ = [
    "ANTHROPIC_FINISH",
    "CHAT_FINISH",
    "GEMINI_FINISH",
    "StreamCalls",
    "closing_events",
    "dumps",
    "finish_call",
    "finish_reason",
    "kind_for_class",
    "kind_for_code",
    "kind_for_status",
    "own_reasoning",
    "parse_arguments",
    "parsed",
    "result_images",
    "result_text",
    "retry_after",
    "tool_call",
]


def closing_events(client: Any, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """``events``, then the client closed (its pooled sockets with it) once the stream is drained or dropped."""
    try:
        yield from events
    finally:
        client.close()


def finish_call(client: Any, send: Any) -> Any:
    """``send(client)``; the client closed unless the answer is a stream (which closes it when done)."""
    try:
        answer = send(client)
    except BaseException:
        client.close()
        raise
    if isinstance(answer, Iterator):
        return closing_events(client, answer)
    client.close()
    return answer


def dumps(value: Any) -> str:
    """Compact JSON, as the drivers send argument objects and report object-valued arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def own_reasoning(part: Reasoning, wire: str) -> bool:
    """Is ``part`` reasoning that ``wire`` can take back: produced by that wire, or of unknown origin (a
    caller's own history)?

    For the official SDKs the caller writes the wire's messages, so reasoning another provider produced is
    left out as a user of the SDK must: its proof means nothing to this provider (Anthropic's ``signature``,
    "opaque ... pass them back exactly as received", anthropic/types/thinking_block_param.py; Gemini's
    ``thoughtSignature``, https://ai.google.dev/gemini-api/docs/thought-signatures; Responses'
    ``encrypted_content``; wire-formats.md §2b, §3b, §4b; docs/adapters.md, "Reasoning"). A framework's
    driver hands every part to the framework in its own form instead, and the framework decides.
    """
    return part.source is None or part.source == wire


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments a caller gets from ``json.loads`` of the text, or why it cannot use them.

    An empty text is a call without arguments (``{}``), as every SDK's own helpers read it.
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, None


def parsed(text: str, loads: Callable[[str], Any] = json.loads) -> tuple[bool, Any]:
    """``(True, loads(text))``, or ``(False, None)`` where ``loads`` refuses the text with a ``ValueError``: for a
    library that parses a text only when it is JSON (pydantic-ai's MCP toolset, ``pydantic_core.from_json``)."""
    try:
        return True, loads(text)
    except ValueError:
        return False, None


def tool_call(call_id: str, name: str, raw: str, *, details: Mapping[str, Any] | None = None) -> ToolCall:
    """A ``ToolCall`` from argument text (parsed as ``parse_arguments`` does)."""
    arguments, error = parse_arguments(raw)
    return ToolCall(
        id=call_id,
        name=name,
        arguments=arguments,
        arguments_raw=raw,
        arguments_error=error,
        provider_details=dict(details or {}),
    )


def result_text(result: ToolResult) -> str:
    """The text of an MCP tool result (text items and embedded text resources, joined by newlines)."""
    texts: list[str] = []
    for item in result.content:
        if isinstance(item, Text):
            texts.append(item.text)
        elif isinstance(item, Resource) and item.text is not None:
            texts.append(item.text)
    return "\n".join(texts)


def result_images(result: ToolResult) -> list[Image]:
    """The inline images of an MCP tool result."""
    return [item for item in result.content if isinstance(item, Image) and item.data]


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    if (ms := lower.get("retry-after-ms")) is not None:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


CHAT_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
"""OpenAI Chat Completions ``finish_reason`` values (what LiteLLM and LangChain's ``ChatOpenAI`` pass on too)."""

ANTHROPIC_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Anthropic's ``stop_reason`` values (anthropic/types/stop_reason.py; what LangChain's ``ChatAnthropic`` and
LiteLLM hand on raw too)."""

GEMINI_FINISH: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "MALFORMED_FUNCTION_CALL": "malformed_tool_call",
}
"""Gemini's ``finishReason`` values (google-genai's ``FinishReason``)."""


def finish_reason(table: Mapping[str, FinishReason], raw: str | None, *, has_calls: bool = False) -> FinishReason:
    """The unified reason for a provider's ``raw`` one (``other`` outside ``table``).

    With ``has_calls``, ``tool_calls`` whenever complete calls came back (a forced call says ``stop``).
    """
    reason = table.get(raw or "", "other")
    return "tool_calls" if has_calls and reason == "stop" else reason


def kind_for_class(exc: BaseException, table: Iterable[tuple[type[BaseException], ErrorKind]]) -> ErrorKind | None:
    """The error kind of the first exception class in ``table`` that ``exc`` is an instance of."""
    return next((kind for cls, kind in table if isinstance(exc, cls)), None)


def kind_for_status(status: int | None) -> ErrorKind:
    """The error kind an HTTP status means, for a library that types its errors by status rather than by
    class (google-genai's ``APIError.code``, ollama's ``ResponseError.status_code``)."""
    if status is None:
        return "unknown"
    table: dict[int, ErrorKind] = {
        400: "invalid_request",
        401: "auth",
        403: "permission",
        404: "not_found",
        413: "context_length",
        422: "invalid_request",
        429: "rate_limit",
        503: "overloaded",
        529: "overloaded",
    }
    if status in table:
        return table[status]
    if 500 <= status < 600:
        return "server"
    if 400 <= status < 500:
        return "invalid_request"
    return "unknown"


_CODES: dict[str, ErrorKind] = {
    # Anthropic error types
    "invalid_request_error": "invalid_request",
    "authentication_error": "auth",
    "permission_error": "permission",
    "not_found_error": "not_found",
    "request_too_large": "context_length",
    "rate_limit_error": "rate_limit",
    "api_error": "server",
    "overloaded_error": "overloaded",
    # OpenAI error types / codes
    "server_error": "server",
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "context_length_exceeded": "context_length",
    "invalid_api_key": "auth",
    # Google RPC statuses
    "INVALID_ARGUMENT": "invalid_request",
    "FAILED_PRECONDITION": "invalid_request",
    "UNAUTHENTICATED": "auth",
    "PERMISSION_DENIED": "permission",
    "NOT_FOUND": "not_found",
    "RESOURCE_EXHAUSTED": "rate_limit",
    "INTERNAL": "server",
    "UNAVAILABLE": "overloaded",
    "DEADLINE_EXCEEDED": "server",
}


def kind_for_code(*codes: object) -> ErrorKind | None:
    """The error kind of the first provider error type/code string that names one (the category field a
    library's generic error class documents: anthropic's ``APIStatusError.type``, openai's ``APIError.code``
    and ``.type``, google-genai's ``APIError.status``)."""
    for code in codes:
        if isinstance(code, str) and code in _CODES:
            return _CODES[code]
    return None


@dataclass
class _Call:
    id: str
    name: str
    position: int
    raw: list[str] = field(default_factory=list)
    ended: bool = False


@dataclass
class StreamCalls:
    """Turns a library's streamed call pieces (keyed by its own index, item id or block) into events.

    ``start`` opens a call once (a repeated id/name on a later piece is not a new call), ``chunk``
    adds argument text, ``piece`` does both for a fragment that may carry either, ``end``/``end_all``
    close them with the text parsed (``json.loads``, for a library that gives only the pieces), and
    ``end_parsed`` with the arguments the library parsed itself (for a library that gives them).
    ``positions`` count the calls of this response from 0, whatever key the wire used.
    """

    calls: dict[object, _Call] = field(default_factory=dict)

    def start(self, key: object, call_id: str, name: str) -> Iterator[StreamEvent]:
        if key in self.calls:
            return
        call = _Call(id=call_id, name=name, position=len(self.calls))
        self.calls[key] = call
        yield ToolCallStart(tool_call_id=call_id, tool_call_name=name, index=call.position)

    def chunk(self, key: object, text: str) -> Iterator[StreamEvent]:
        call = self.calls.get(key)
        if call is None or not text:
            return
        call.raw.append(text)
        yield ToolCallChunk(call.id, text)

    def piece(self, key: object, call_id: str, name: str, text: str) -> Iterator[StreamEvent]:
        """A fragment of the OpenAI Chat shape (id and name on the first, argument text on any)."""
        yield from self.start(key, call_id, name)
        yield from self.chunk(key, text)

    def end(self, key: object, complete: str | None = None) -> Iterator[StreamEvent]:
        call = self.calls.get(key)
        if call is None or call.ended:
            return
        call.ended = True
        raw = "".join(call.raw) if complete is None else complete
        arguments, error = parse_arguments(raw)
        yield ToolCallEnd(
            tool_call_id=call.id, tool_call_arguments_complete=raw, arguments=arguments, arguments_error=error
        )

    def end_parsed(self, key: object, arguments: object, error: str | None = None) -> Iterator[StreamEvent]:
        """Close the call with the arguments the library parsed from its text itself (the library's verdict
        on the text, not ``json.loads``'s): an object is a call's arguments; anything else is not, for
        ``error`` (or the reason the library gave none)."""
        call = self.calls.get(key)
        if call is None or call.ended:
            return
        call.ended = True
        parsed = arguments if isinstance(arguments, dict) else None
        if parsed is None and error is None:
            error = f"the library gave a {type(arguments).__name__}, not an object"
        yield ToolCallEnd(
            tool_call_id=call.id,
            tool_call_arguments_complete="".join(call.raw),
            arguments=parsed,
            arguments_error=None if parsed is not None else error,
        )

    def end_all(self) -> Iterator[StreamEvent]:
        for key in list(self.calls):
            yield from self.end(key)

    @property
    def any(self) -> bool:
        return bool(self.calls)
