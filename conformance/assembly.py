"""The one fold from stream events to a ``Response``, and the event-lifecycle validator.

Every adapter turns a non-streamed body into the same events a stream would give and folds
them here, so a feature cannot work in one mode and fail in the other (after pydantic-ai's
``_parts_manager.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    Finish,
    FinishReason,
    Part,
    Reasoning,
    ReasoningDelta,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageEvent,
)

__all__ = ["fold", "lifecycle_problems"]


@dataclass
class _OpenCall:
    position: int
    start: ToolCallStart
    chunks: list[str] = field(default_factory=list)


def fold(events: Iterable[StreamEvent], *, provider_details: Mapping[str, Any] | None = None) -> Response:
    """Fold normalized events into one ``Response``.

    Consecutive text deltas make one ``Text`` part; a call takes its place in ``parts`` at its
    ``tool_call_start`` and is filled in at its ``tool_call_end``. A call that never ended is
    kept with an ``arguments_error`` (the lifecycle validator reports the adapter bug).
    """
    parts: list[Part | None] = []
    text: list[str] = []
    reasoning: list[str] = []
    reasoning_open = False
    reasoning_source: str | None = None
    calls: dict[str, _OpenCall] = {}
    finish: FinishReason | None = None
    provider_reason: str | None = None
    usage: Usage | None = None
    error: ErrorInfo | None = None

    def close_text() -> None:
        if text:
            parts.append(Text(text="".join(text)))
            text.clear()

    def close_reasoning(signature: str | None = None, details: Mapping[str, Any] | None = None) -> None:
        nonlocal reasoning_open, reasoning_source
        if reasoning_open:
            parts.append(
                Reasoning(
                    text="".join(reasoning),
                    signature=signature,
                    source=reasoning_source,
                    provider_details=details or {},
                )
            )
            reasoning.clear()
            reasoning_open = False
            reasoning_source = None

    for ev in events:
        if isinstance(ev, ToolCallChunk):  # first: most events of a tool-call stream are chunks
            if (open_call := calls.get(ev.tool_call_id)) is not None:
                open_call.chunks.append(ev.tool_call_arguments_chunk)
        elif isinstance(ev, TextDelta):
            if ev.text:
                close_reasoning()
                text.append(ev.text)
        elif isinstance(ev, ReasoningDelta):
            close_text()
            if ev.redacted is not None:
                close_reasoning()
                parts.append(Reasoning(redacted=ev.redacted, source=ev.source, provider_details=ev.provider_details))
                continue
            reasoning_open = True
            reasoning_source = reasoning_source or ev.source
            reasoning.append(ev.text)
            if ev.signature is not None or ev.provider_details:
                close_reasoning(ev.signature, ev.provider_details)
        elif isinstance(ev, ToolCallStart):
            close_text()
            close_reasoning()
            calls[ev.tool_call_id] = _OpenCall(len(parts), ev)
            parts.append(None)
        elif isinstance(ev, ToolCallEnd):
            if (open_call := calls.pop(ev.tool_call_id, None)) is not None:
                parts[open_call.position] = ToolCall(
                    id=ev.tool_call_id,
                    name=open_call.start.tool_call_name,
                    arguments=ev.arguments,
                    arguments_raw=ev.tool_call_arguments_complete,
                    arguments_error=ev.arguments_error,
                    provider_details=open_call.start.provider_details,
                )
        elif isinstance(ev, Finish):
            finish = ev.reason
            provider_reason = ev.provider_reason
        elif isinstance(ev, UsageEvent):
            usage = ev.usage
        elif isinstance(ev, ErrorEvent):
            error = ev.error
        else:
            assert_never(ev)
    close_text()
    close_reasoning()
    for open_call in calls.values():
        parts[open_call.position] = ToolCall(
            id=open_call.start.tool_call_id,
            name=open_call.start.tool_call_name,
            arguments=None,
            arguments_raw="".join(open_call.chunks),
            arguments_error="the call never ended",
            provider_details=open_call.start.provider_details,
        )
    if finish is None and error is not None:
        finish = "error"
    details = dict(provider_details or {})
    if provider_reason is not None:
        details.setdefault("finish_reason", provider_reason)
    return Response(
        parts=tuple(p for p in parts if p is not None),
        finish_reason=finish,
        usage=usage,
        error=error,
        provider_details=details,
    )


def lifecycle_problems(events: Iterable[StreamEvent]) -> list[str]:
    """Check the stream invariants; return one line per violation (empty when all hold).

    Per call: ``tool_call_start`` before its chunks before its ``tool_call_end``; ids unique and
    stable; ``index`` counts 0, 1, ... in start order; the chunks concatenate to
    ``tool_call_arguments_complete``; exactly one of ``arguments`` / ``arguments_error`` set;
    every call ends before ``finish``. Stream: exactly one ``finish``, and it is the last event;
    no empty text deltas.
    """
    problems: list[str] = []
    open_calls: dict[str, list[str]] = {}
    seen: set[str] = set()
    finished_at: int | None = None
    n_calls = 0
    for i, ev in enumerate(events):
        where = f"event {i} ({ev.type})"
        if finished_at is not None:
            problems.append(f"{where}: event after finish (event {finished_at})")
        if isinstance(ev, ToolCallStart):
            if ev.tool_call_id in seen:
                problems.append(f"{where}: tool_call_id {ev.tool_call_id!r} started twice")
            if not ev.tool_call_id:
                problems.append(f"{where}: empty tool_call_id")
            if not ev.tool_call_name:
                problems.append(f"{where}: empty tool_call_name")
            if ev.index != n_calls:
                problems.append(f"{where}: index {ev.index}, expected {n_calls}")
            n_calls += 1
            seen.add(ev.tool_call_id)
            open_calls[ev.tool_call_id] = []
        elif isinstance(ev, ToolCallChunk):
            if ev.tool_call_id not in open_calls:
                problems.append(f"{where}: chunk for a call that is not open: {ev.tool_call_id!r}")
            else:
                open_calls[ev.tool_call_id].append(ev.tool_call_arguments_chunk)
        elif isinstance(ev, ToolCallEnd):
            chunks = open_calls.pop(ev.tool_call_id, None)
            if chunks is None:
                problems.append(f"{where}: end for a call that is not open: {ev.tool_call_id!r}")
                continue
            if "".join(chunks) != ev.tool_call_arguments_complete:
                problems.append(f"{where}: chunks of {ev.tool_call_id!r} do not concatenate to the complete arguments")
            if (ev.arguments is None) == (ev.arguments_error is None):
                problems.append(f"{where}: exactly one of arguments / arguments_error must be set")
        elif isinstance(ev, Finish):
            for call_id in open_calls:
                problems.append(f"{where}: finish while call {call_id!r} is still open")
            open_calls.clear()
            if finished_at is None:
                finished_at = i
        elif isinstance(ev, TextDelta) and not ev.text:
            problems.append(f"{where}: empty text delta")
    for call_id in open_calls:
        problems.append(f"end of stream: call {call_id!r} never ended")
    if finished_at is None:
        problems.append("end of stream: no finish event")
    return problems
