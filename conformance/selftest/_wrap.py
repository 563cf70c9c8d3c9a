"""The tools a mutant is built with: wrappers around one reference adapter function that rewrite
what goes in (wire bytes, a body) or what comes out (events, a wire body, an error).

Every helper returns the ``dataclasses.replace`` keyword arguments of the wrapped field(s), so a
mutant reads ``replace(ADAPTER, name=..., **helper(ADAPTER, ...))``. A wrapper changes nothing but
what it says: the rest of the reference adapter still runs unchanged. All of this is pure (no I/O).

Decoding helpers patch both decoders (``response_from_wire`` and ``stream_from_wire``) with the
same rewrite, as one bug in a shared table or accumulator shows in both modes.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from conformance.adapters.base import Adapter, WireRequest
from conformance.assembly import fold
from conformance.errors import ProviderError
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    Finish,
    JSONObject,
    Reasoning,
    ReasoningDelta,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)

__all__ = [
    "EventRewrite",
    "Patch",
    "decoded_events",
    "each_chunk",
    "map_ndjson",
    "map_sse_data",
    "rename_calls",
    "request_body",
    "response_body",
    "response_events",
    "salvage_partial_json",
    "stream_bytes",
    "typed_error",
]

Patch = dict[str, Any]
"""``dataclasses.replace`` keyword arguments: adapter field -> its wrapped function."""

EventRewrite = Callable[[list[StreamEvent], Sequence[Tool]], list[StreamEvent]]
"""A rewrite of one whole reply's events (the conversation's tools given, for name maps)."""


# --------------------------------------------------------------------------------------------
# Requests and errors
# --------------------------------------------------------------------------------------------


def request_body(adapter: Adapter, rewrite: Callable[[JSONObject], JSONObject]) -> Patch:
    """``request_to_wire`` whose body (a deep copy) goes through ``rewrite``."""
    real = adapter.request_to_wire

    def request_to_wire(request: Any) -> WireRequest:
        wire = real(request)
        return WireRequest(
            method=wire.method,
            path=wire.path,
            body=rewrite(copy.deepcopy(wire.body)),
            headers=wire.headers,
            stream=wire.stream,
            schema_changes=wire.schema_changes,
            notes=wire.notes,
        )

    return {"request_to_wire": request_to_wire}


def typed_error(adapter: Adapter, rewrite: Callable[[ErrorInfo], ErrorInfo]) -> Patch:
    """``error_from_wire`` whose typed error goes through ``rewrite``."""
    real = adapter.error_from_wire

    def error_from_wire(status: int, headers: Mapping[str, str], body: Any) -> ProviderError:
        return ProviderError(rewrite(real(status, headers, body).info))

    return {"error_from_wire": error_from_wire}


# --------------------------------------------------------------------------------------------
# Wire bytes and bodies on the way in
# --------------------------------------------------------------------------------------------


def response_body(adapter: Adapter, rewrite: Callable[[Any], Any]) -> Patch:
    """``response_from_wire`` fed ``rewrite`` of (a deep copy of) the body."""
    real = adapter.response_from_wire

    def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
        return real(rewrite(copy.deepcopy(body)), tools=tools)

    return {"response_from_wire": response_from_wire}


def stream_bytes(adapter: Adapter, rewrite: Callable[[bytes], bytes]) -> Patch:
    """``stream_from_wire`` fed ``rewrite`` of the whole stream (read to its end first)."""
    real = adapter.stream_from_wire

    def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
        data = rewrite(b"".join(chunks))
        yield from real([data] if data else [], tools=tools)

    return {"stream_from_wire": stream_from_wire}


def each_chunk(adapter: Adapter, rewrite: Callable[[bytes], bytes]) -> Patch:
    """``stream_from_wire`` fed ``rewrite`` of every network chunk on its own."""
    real = adapter.stream_from_wire

    def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
        yield from real((rewrite(chunk) for chunk in chunks), tools=tools)

    return {"stream_from_wire": stream_from_wire}


_SSE_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n|\r\r)|.+\Z", re.DOTALL)
_DATA_LINE = re.compile(rb"^data: ?(.*?)(\r\n|\n|\r|\Z)", re.MULTILINE)


def map_sse_data(data: bytes, rewrite: Callable[[Any], Any | None]) -> bytes:
    """Each SSE event whose ``data:`` line holds a JSON value, with that value replaced by
    ``rewrite(value)`` (None drops the event). Other events and lines are kept byte for byte."""
    out: list[bytes] = []
    for match in _SSE_EVENT.finditer(data):
        event = match.group(0)
        line = _DATA_LINE.search(event)
        if line is None:
            out.append(event)
            continue
        try:
            value = orjson.loads(line.group(1))
        except orjson.JSONDecodeError:
            out.append(event)
            continue
        new = rewrite(value)
        if new is None:
            continue
        out.append(event[: line.start(1)] + orjson.dumps(new) + event[line.end(1) :])
    return b"".join(out)


def map_ndjson(data: bytes, rewrite: Callable[[Any], Any]) -> bytes:
    """Each NDJSON line holding a JSON value, replaced by ``rewrite(value)``; others kept."""
    out: list[bytes] = []
    for line in data.splitlines(keepends=True):
        body = line.rstrip(b"\r\n")
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        out.append(orjson.dumps(rewrite(value)) + line[len(body) :])
    return b"".join(out)


# --------------------------------------------------------------------------------------------
# Decoded events on the way out
# --------------------------------------------------------------------------------------------


def response_events(response: Response) -> list[StreamEvent]:
    """The events whose fold is ``response`` (``fold(response_events(r), provider_details=
    r.provider_details) == r`` for every response ``fold`` made)."""
    events: list[StreamEvent] = []
    index = 0
    for part in response.parts:
        if isinstance(part, Text):
            events.append(TextDelta(part.text))
        elif isinstance(part, Reasoning):
            if part.redacted is not None:
                events.append(
                    ReasoningDelta(redacted=part.redacted, provider_details=part.provider_details, source=part.source)
                )
            else:
                events.append(
                    ReasoningDelta(
                        part.text, signature=part.signature, provider_details=part.provider_details, source=part.source
                    )
                )
        elif isinstance(part, ToolCall):
            events.append(ToolCallStart(part.id, part.name, index, part.provider_details))
            index += 1
            if part.arguments_raw:
                events.append(ToolCallChunk(part.id, part.arguments_raw))
            events.append(ToolCallEnd(part.id, part.arguments_raw, part.arguments, part.arguments_error))
    if response.usage is not None:
        events.append(UsageEvent(response.usage))
    if response.error is not None:
        events.append(ErrorEvent(response.error))
    if response.finish_reason is not None:
        events.append(Finish(response.finish_reason, response.provider_details.get("finish_reason")))
    return events


def decoded_events(adapter: Adapter, rewrite: EventRewrite) -> Patch:
    """Both decoders, their events rewritten by ``rewrite`` (a stream is read to its end first)."""
    real_response = adapter.response_from_wire
    real_stream = adapter.stream_from_wire

    def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
        response = real_response(body, tools=tools)
        details = {k: v for k, v in response.provider_details.items() if k != "finish_reason"}
        return fold(rewrite(response_events(response), tools), provider_details=details)

    def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
        yield from rewrite(list(real_stream(chunks, tools=tools)), tools)

    return {"response_from_wire": response_from_wire, "stream_from_wire": stream_from_wire}


def rename_calls(events: list[StreamEvent], rename: Callable[[ToolCallStart], tuple[str, str]]) -> list[StreamEvent]:
    """Every call given ``rename(start) -> (id, name)``, consistently on its start, chunks and end."""
    ids: dict[str, str] = {}
    out: list[StreamEvent] = []
    for event in events:
        if isinstance(event, ToolCallStart):
            new_id, name = rename(event)
            ids[event.tool_call_id] = new_id
            out.append(ToolCallStart(new_id, name, event.index, event.provider_details))
        elif isinstance(event, ToolCallChunk):
            out.append(ToolCallChunk(ids.get(event.tool_call_id, event.tool_call_id), event.tool_call_arguments_chunk))
        elif isinstance(event, ToolCallEnd):
            call_id = ids.get(event.tool_call_id, event.tool_call_id)
            out.append(ToolCallEnd(call_id, event.tool_call_arguments_complete, event.arguments, event.arguments_error))
        else:
            out.append(event)
    return out


# --------------------------------------------------------------------------------------------
# Partial JSON salvage (what "repair" libraries such as partial-json do)
# --------------------------------------------------------------------------------------------

_CLOSERS = {"{": "}", "[": "]"}


def _closed(prefix: str) -> str | None:
    """``prefix`` with its open string and brackets closed, or None when it ends mid-escape."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in prefix:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif ch in "}]" and stack:
            stack.pop()
    if escaped:
        return None
    return prefix + ('"' if in_string else "") + "".join(reversed(stack))


def salvage_partial_json(text: str) -> JSONObject:
    """The longest prefix of ``text`` that becomes a JSON object once its open string and brackets
    are closed, parsed; ``{}`` when none does."""
    for cut in range(len(text), 0, -1):
        candidate = _closed(text[:cut])
        if candidate is None:
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}
