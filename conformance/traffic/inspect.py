"""Recorded traffic decoded with the reference adapters, and shown (``conformance inspect``).

For every interaction of every cassette: pick the adapter from the URL (``detect_adapter``),
decode the request, then the provider error (status >= 400), the stream (folded with
``assembly.fold``) or the plain response. Nothing here crashes on bad traffic: a failing adapter
function, an endpoint no adapter serves, a malformed interaction, each becomes one line in that
interaction's ``problems``, and a file that cannot be read is reported and skipped.

Pure except for ``load_cassette`` and the environment's secrets the renderers scrub by default.
``render_json`` gives the machine contract other tools read
(keys below never renamed, only added to); ``render_text`` is for people::

    {"cassettes": [{"path": ..., "problems": [...], "interactions": [{
        "index": 0, "method": "POST", "uri": ..., "adapter": "anthropic" | null, "status": 200,
        "streaming": true,
        "request": {"tools": [...], "tool_choice": "auto" | "none" | "required" | {"name": ...} | null,
                    "model": ..., "stream": ..., "decoded": true | false},
        "response": {"text": ..., "tool_calls": [{"id", "name", "arguments", "arguments_error",
                     "arguments_raw"}], "finish_reason": ..., "provider_finish_reason": ...} | null,
        "error": {"kind", "status", "message", "retry_after", "code"} | null,
        "usage": {...} | null, "messages": [...], "events": [...] | null,
        "problems": [...], "notes": [...]}]}],
     "summary": {...}}
"""

from __future__ import annotations

import dataclasses
import json
import os
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from conformance.adapters import detect_adapter, get_adapter
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import CassetteError, ProviderError, UsageError, WireFormatError
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    Finish,
    Image,
    Message,
    Reasoning,
    ReasoningDelta,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageEvent,
)
from conformance.traffic.cassettes import Interaction, is_streaming, iter_cassette_files, load_cassette
from conformance.traffic.scrub import environment_secrets, known_scrubber

__all__ = [
    "CassetteReport",
    "InspectReport",
    "InteractionReport",
    "inspect_cassette",
    "inspect_paths",
    "render_json",
    "render_text",
    "report_to_json",
]


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class InteractionReport:
    """One interaction, decoded."""

    index: int
    method: str
    uri: str
    adapter: str | None
    """The adapter that decoded it; None when no adapter serves the endpoint."""
    status: int | None
    """The response status; None when the interaction has no response."""
    streaming: bool
    request: Request | None = None
    response: Response | None = None
    """The folded stream or the plain response; None for an error status or a failure."""
    events: tuple[StreamEvent, ...] | None = None
    """The normalized stream events (streams only)."""
    error: ErrorInfo | None = None
    """The provider error: from an error status, or one reported inside a stream."""
    problems: tuple[str, ...] = ()
    """What could not be decoded, and why (any problem makes the exit code 1)."""
    notes: tuple[str, ...] = ()
    """Expected oddities that are not problems (a request the provider itself rejected as invalid)."""


@dataclass(frozen=True, kw_only=True)
class CassetteReport:
    """One cassette file, inspected (or the reason it could not be read)."""

    path: str
    interactions: tuple[InteractionReport, ...] = ()
    problems: tuple[str, ...] = ()
    """File-level problems; a file that could not be read has exactly one, and no interactions."""
    readable: bool = True


@dataclass(frozen=True, kw_only=True)
class InspectReport:
    """Every cassette inspected, in order."""

    cassettes: tuple[CassetteReport, ...]

    @property
    def exit_code(self) -> int:
        """0 when every file was read and nothing had problems, else 1."""
        for cassette in self.cassettes:
            if cassette.problems or any(i.problems for i in cassette.interactions):
                return 1
        return 0


# --------------------------------------------------------------------------------------------
# Inspecting
# --------------------------------------------------------------------------------------------


def inspect_paths(paths: Iterable[str | os.PathLike[str]]) -> InspectReport:
    """Inspect the cassette files under ``paths`` (directories are searched recursively).

    Raises ``UsageError`` when a path is empty or cannot be searched (a name too long for the file
    system, ...) and when the paths hold no cassette file at all.
    """
    paths = list(paths)
    if any(not os.fspath(p).strip() for p in paths):
        raise UsageError("an empty PATH: give cassette files or folders")
    for path in paths:
        try:
            os.lstat(path)
        except FileNotFoundError:
            raise UsageError(
                f"{_short(os.fspath(path))}: no such file or folder (check the PATH; `conformance record` writes "
                "cassettes)"
            ) from None
        except (OSError, ValueError):  # said below, by the search, with the reason
            pass
    try:
        files = list(iter_cassette_files(paths))
    except (OSError, ValueError) as exc:
        where = getattr(exc, "filename", None)
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"{_short(str(where)) + ': ' if where else ''}{reason} (check the PATH arguments)") from exc
    if not files:
        raise UsageError("no cassette files (*.yaml, *.yml) found under the given paths")
    return InspectReport(cassettes=tuple(inspect_cassette(f) for f in files))


def inspect_cassette(path: str | os.PathLike[str]) -> CassetteReport:
    """Inspect one cassette file; a file that cannot be read gives a report saying why."""
    name = os.fspath(path)
    try:
        cassette = load_cassette(name)
    except CassetteError as exc:
        return CassetteReport(path=name, problems=(str(exc),), readable=False)
    except Exception as exc:  # a bad file costs only itself
        return CassetteReport(path=name, problems=(f"{name}: cannot be read: {_describe(exc)}",), readable=False)
    interactions = tuple(_inspect_safely(name, i) for i in cassette.interactions)
    return CassetteReport(path=name, interactions=interactions, problems=cassette.problems)


def _inspect_safely(path: str, interaction: Interaction) -> InteractionReport:
    """``_inspect_interaction``, with an unexpected failure reported as a problem of that interaction."""
    try:
        return _inspect_interaction(path, interaction)
    except Exception as exc:
        return InteractionReport(
            index=interaction.index,
            method=interaction.request.method,
            uri=interaction.request.uri,
            adapter=None,
            status=None,
            streaming=False,
            problems=(f"{path}: interaction {interaction.index}: cannot be inspected: {_describe(exc)}",),
        )


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _inspect_interaction(path: str, interaction: Interaction) -> InteractionReport:
    problems = list(interaction.problems)
    where = f"{path}: interaction {interaction.index}"
    recorded = interaction.request
    response = interaction.response
    streaming = is_streaming(interaction)
    body = recorded.json if isinstance(recorded.json, Mapping) else None
    try:
        urlsplit(recorded.uri)
    except ValueError as exc:  # http://[::1 and the like
        problems.append(f"{where}: the request URI {_short(recorded.uri)!r} is not a URL ({exc}); fix or re-record it")
        return InteractionReport(
            index=interaction.index,
            method=recorded.method,
            uri=recorded.uri,
            adapter=None,
            status=response.status if response is not None else None,
            streaming=streaming,
            problems=tuple(problems),
        )
    name = detect_adapter(recorded.uri, body)
    base = InteractionReport(
        index=interaction.index,
        method=recorded.method,
        uri=recorded.uri,
        adapter=name,
        status=response.status if response is not None else None,
        streaming=streaming,
    )
    if name is None:
        endpoint = f"{recorded.method} {urlsplit(recorded.uri).path}".strip()
        problems.append(f"{where}: no adapter serves {endpoint} (not an LLM chat endpoint this suite decodes)")
        return dataclasses.replace(base, problems=tuple(problems))
    try:
        adapter = get_adapter(name)
    except Exception as exc:
        problems.append(f"{where}: the {name} adapter cannot be loaded: {_describe(exc)}")
        return dataclasses.replace(base, problems=tuple(problems))

    request: Request | None = None
    notes: list[str] = []
    if body is None:
        problems.append(f"{where}: the request body is not a JSON object, so it cannot be decoded")
    else:
        try:
            request = adapter.request_from_wire(body, path=_path_and_query(recorded.uri))
        except WireFormatError as exc:
            status = response.status if response is not None else None
            if status in _REJECTED:
                # The adapter judged the body invalid and so did the provider (e.g. dd-trace-py's
                # anthropic_completion_error sends ``"messages": ["Invalid content"]``): not a problem.
                notes.append(f"{where}: the request does not decode ({_describe(exc)}); the provider rejected it too")
            else:
                problems.append(f"{where}: {name}.request_from_wire failed: {_describe(exc)}")
        except Exception as exc:
            problems.append(f"{where}: {name}.request_from_wire failed: {_describe(exc)}")
    tools = request.tools if request is not None else ()

    decoded: Response | None = None
    events: tuple[StreamEvent, ...] | None = None
    error: ErrorInfo | None = None
    if response is None:
        pass
    elif response.status >= 400:
        try:
            provider_error = adapter.error_from_wire(response.status, response.headers, response.body)
        except Exception as exc:
            problems.append(f"{where}: {name}.error_from_wire failed: {_describe(exc)}")
        else:
            if isinstance(provider_error, ProviderError):
                error = provider_error.info
            else:
                problems.append(f"{where}: {name}.error_from_wire returned {type(provider_error).__name__}")
    elif streaming:
        try:
            events = tuple(adapter.stream_from_wire([response.body], tools=tools))
            decoded = fold(events)
        except Exception as exc:
            problems.append(f"{where}: {name}.stream_from_wire failed: {_describe(exc)}")
            events = None
        else:
            problems.extend(f"{where}: stream events: {p}" for p in lifecycle_problems(events))
            error = decoded.error
    elif not isinstance(response.json, Mapping):
        problems.append(f"{where}: the response body is not a JSON object, so it cannot be decoded")
    else:
        try:
            decoded = adapter.response_from_wire(response.json, tools=tools)
        except Exception as exc:
            problems.append(f"{where}: {name}.response_from_wire failed: {_describe(exc)}")
        else:
            error = decoded.error
    return dataclasses.replace(
        base,
        request=request,
        response=decoded,
        events=events,
        error=error,
        problems=tuple(problems),
        notes=tuple(notes),
    )


_REJECTED = frozenset({400, 422})
"""Statuses by which a provider says the request itself was invalid."""


def _path_and_query(uri: str) -> str:
    parts = urlsplit(uri)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path


def _describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` of the innermost frame, to find the failing code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    at = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{at}"


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def report_to_json(report: InspectReport) -> dict[str, Any]:
    """The report as JSON-ready data (the contract in the module docstring)."""
    cassettes = [
        {
            "path": c.path,
            "problems": list(c.problems),
            "interactions": [_interaction_json(i) for i in c.interactions],
        }
        for c in report.cassettes
    ]
    interactions = [i for c in report.cassettes for i in c.interactions]
    summary = {
        "cassettes": len(report.cassettes),
        "unreadable": sum(not c.readable for c in report.cassettes),
        "interactions": len(interactions),
        "with_problems": sum(bool(i.problems) for i in interactions),
        "exit_code": report.exit_code,
    }
    return {"cassettes": cassettes, "summary": summary}


def render_json(report: InspectReport, *, secrets: Iterable[str] | None = None) -> str:
    """The report as JSON text, scrubbed (``_scrubbed``)."""
    text = json.dumps(report_to_json(report), indent=2, ensure_ascii=False, default=_json_default)
    return _scrubbed(text, secrets)


def _scrubbed(text: str, secrets: Iterable[str] | None) -> str:
    """``text`` without key shapes and ``secrets`` (by default the process's: the provider key variables
    and any variable named like a key, ``environment_secrets``), in any spelling: a cassette recorded
    elsewhere may hold a key, and what ``inspect`` prints must not."""
    known = environment_secrets(os.environ) if secrets is None else tuple(secrets)
    return known_scrubber(tuple(sorted(set(known)))).text(text)


def _interaction_json(i: InteractionReport) -> dict[str, Any]:
    response = i.response
    return {
        "index": i.index,
        "method": i.method,
        "uri": i.uri,
        "adapter": i.adapter,
        "status": i.status,
        "streaming": i.streaming,
        "request": _request_json(i.request),
        "response": _response_json(response) if response is not None else None,
        "error": _error_json(i.error) if i.error is not None else None,
        "usage": _usage_json(response.usage) if response is not None and response.usage is not None else None,
        "messages": _messages_json(i.request) if i.request is not None else [],
        "events": [_event_json(e) for e in i.events] if i.events is not None else None,
        "problems": list(i.problems),
        "notes": list(i.notes),
    }


def _request_json(request: Request | None) -> dict[str, Any]:
    # Always an object, so readers can index it; ``decoded`` is false (and the rest empty) when
    # the request could not be decoded (the interaction's problems or notes say why).
    if request is None:
        return {"tools": [], "tool_choice": None, "model": None, "stream": None, "decoded": False}
    choice = request.tool_choice
    return {
        "tools": [t.name for t in request.tools],
        "tool_choice": choice if choice in (None, "auto", "none", "required") else {"name": choice},
        "model": request.model,
        "stream": request.stream,
        "decoded": True,
    }


def _response_json(response: Response) -> dict[str, Any]:
    return {
        "text": response.text,
        "tool_calls": [
            {
                "id": c.id,
                "name": c.name,
                "arguments": c.arguments,
                "arguments_error": c.arguments_error,
                "arguments_raw": c.arguments_raw,
            }
            for c in response.tool_calls
        ],
        "finish_reason": response.finish_reason,
        "provider_finish_reason": response.provider_details.get("finish_reason"),
    }


def _error_json(error: ErrorInfo) -> dict[str, Any]:
    return {
        "kind": error.kind,
        "status": error.status,
        "message": error.message,
        "retry_after": error.retry_after,
        "code": error.code,
    }


def _usage_json(usage: Usage) -> dict[str, Any]:
    return {f.name: getattr(usage, f.name) for f in dataclasses.fields(usage) if f.name != "kind"}


def _messages_json(request: Request) -> list[dict[str, Any]]:
    summary: list[dict[str, Any]] = []
    if request.system is not None:
        summary.append({"role": "system", "parts": ["text"], "tool_calls": [], "tool_results": []})
    for message in request.messages:
        summary.append(
            {
                "role": message.role,
                "parts": [p.kind for p in message.parts],
                "tool_calls": [p.name for p in message.parts if isinstance(p, ToolCall)],
                "tool_results": [
                    {"call_id": p.call_id, "is_error": p.is_error} for p in message.parts if isinstance(p, ToolResult)
                ],
            }
        )
    return summary


def _event_json(event: StreamEvent) -> dict[str, Any]:
    data: dict[str, Any] = {"type": event.type}
    for f in dataclasses.fields(event):
        if f.name != "type":
            data[f.name] = _plain(getattr(event, f.name))
    return data


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "kind"}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------

_TEXT_LIMIT = 300
_CHUNK_LIMIT = 40


def render_text(report: InspectReport, *, secrets: Iterable[str] | None = None) -> str:
    """The report for people: one block per interaction, then a summary line; scrubbed like ``render_json``."""
    return _scrubbed(_text(report), secrets)


def _text(report: InspectReport) -> str:
    lines: list[str] = []
    for cassette in report.cassettes:
        lines.append(cassette.path)
        for problem in cassette.problems:
            lines.append(f"  problem: {problem}")
        for interaction in cassette.interactions:
            lines.extend(_interaction_text(interaction))
        lines.append("")
    data = report_to_json(report)["summary"]
    lines.append(
        f"{data['cassettes']} cassette(s), {data['unreadable']} unreadable; {data['interactions']} interaction(s), "
        f"{data['with_problems']} with problems"
    )
    return "\n".join(lines)


def _interaction_text(i: InteractionReport) -> list[str]:
    out = [f"  #{i.index} {i.method} {i.uri}"]
    status = "no response" if i.status is None else str(i.status)
    stream = "streaming" if i.streaming else "not streaming"
    out.append(f"    adapter: {i.adapter or '-'}; status: {status}; {stream}")
    if i.request is not None:
        request = i.request
        tools = ", ".join(t.name for t in request.tools) or "-"
        choice = request.tool_choice if request.tool_choice is not None else "default"
        out.append(f"    request: model {request.model or '-'}; tools: {tools}; tool_choice: {choice}")
        out.append(f"    messages: {_messages_text(request)}")
    if i.response is not None:
        out.extend(_response_text(i.response))
    if i.events is not None:
        out.append(f"    events ({len(i.events)}):")
        out.extend(f"      {_event_text(e)}" for e in i.events)
    if i.error is not None:
        e = i.error
        retry = f"; retry after {e.retry_after:g} s" if e.retry_after is not None else ""
        code = f" [{e.code}]" if e.code else ""
        out.append(f"    error: {e.kind}{code} (HTTP {e.status if e.status is not None else '-'}): {e.message}{retry}")
    out.extend(f"    problem: {p}" for p in i.problems)
    out.extend(f"    note: {n}" for n in i.notes)
    return out


def _messages_text(request: Request) -> str:
    items = ["system"] if request.system is not None else []
    items.extend(_message_text(m) for m in request.messages)
    return "; ".join(items) or "-"


def _message_text(message: Message) -> str:
    parts: list[str] = []
    for p in message.parts:
        if isinstance(p, ToolCall):
            parts.append(f"tool_call {p.name}")
        elif isinstance(p, ToolResult):
            parts.append(f"tool_result {p.call_id}" + (" (error)" if p.is_error else ""))
        elif isinstance(p, Text | Image | Reasoning):
            parts.append(p.kind)
    return f"{message.role}: {', '.join(parts) or 'empty'}"


def _response_text(response: Response) -> list[str]:
    out: list[str] = []
    if response.text:
        out.append(f"    text: {_quote(response.text, _TEXT_LIMIT)}")
    for call in response.tool_calls:
        if call.arguments_error is None:
            arguments = json.dumps(call.arguments, ensure_ascii=False)
        else:
            arguments = f"<{call.arguments_error}> raw {_quote(call.arguments_raw, _TEXT_LIMIT)}"
        out.append(f"    tool call {call.id} {call.name} {arguments}")
    reason = response.finish_reason or "-"
    raw = response.provider_details.get("finish_reason")
    out.append(f"    finish: {reason}" + (f" (provider: {raw})" if raw is not None else ""))
    if response.usage is not None:
        out.append(f"    usage: {_usage_text(response.usage)}")
    return out


def _usage_text(usage: Usage) -> str:
    fields = _usage_json(usage)
    return ", ".join(f"{k.removesuffix('_tokens')} {v}" for k, v in fields.items() if v is not None) or "-"


def _event_text(event: StreamEvent) -> str:
    if isinstance(event, TextDelta):
        return f"text_delta {_quote(event.text, _CHUNK_LIMIT)}"
    if isinstance(event, ReasoningDelta):
        extra = " +signature" if event.signature else ""
        extra += " +redacted" if event.redacted else ""
        return f"reasoning_delta {_quote(event.text, _CHUNK_LIMIT)}{extra}"
    if isinstance(event, ToolCallStart):
        return f"tool_call_start #{event.index} {event.tool_call_id} {event.tool_call_name}"
    if isinstance(event, ToolCallChunk):
        return f"tool_call_chunk {event.tool_call_id} {_quote(event.tool_call_arguments_chunk, _CHUNK_LIMIT)}"
    if isinstance(event, ToolCallEnd):
        if event.arguments_error is not None:
            return f"tool_call_end {event.tool_call_id} error: {event.arguments_error}"
        return f"tool_call_end {event.tool_call_id} {_abbreviate(json.dumps(event.arguments), _CHUNK_LIMIT * 2)}"
    if isinstance(event, Finish):
        return f"finish {event.reason}" + (f" ({event.provider_reason})" if event.provider_reason else "")
    if isinstance(event, UsageEvent):
        return f"usage {_usage_text(event.usage)}"
    if isinstance(event, ErrorEvent):
        return f"error {event.error.kind}: {_abbreviate(event.error.message, _TEXT_LIMIT)}"
    return repr(event)  # pragma: no cover - every event type is handled above


def _quote(text: str, limit: int) -> str:
    return json.dumps(_abbreviate(text, limit), ensure_ascii=False)


def _abbreviate(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
