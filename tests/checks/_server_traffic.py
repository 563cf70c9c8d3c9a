"""Real answers as ``ServerExchange`` values, and the small byte surgery the mutation tests do on them.

The answers are recorded traffic: ``tests/realworld/cassettes`` (real OpenAI, Anthropic, Gemini and
Ollama, byte for byte), ``cassettes/<wire>`` (the emulator's answers) and ``cassettes/live`` (a real
llama.cpp server). A recording whose headers were stripped (MANIFEST dialect 7) gets the wire's
Content-Type back, since the recorder, not the server, dropped it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from conformance.checks.server import ServerExchange
from conformance.traffic.cassettes import is_streaming, load_cassette

ROOT = Path(__file__).resolve().parents[2]
REALWORLD = ROOT / "tests" / "realworld" / "cassettes"
EMULATOR = ROOT / "cassettes"
WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
ENDPOINTS = {
    "openai_chat": "/chat/completions",
    "openai_responses": "/responses",
    "anthropic": "/messages",
    "gemini": "enerateContent",
    "ollama": "/api/chat",
}


def _content_type(wire: str, stream: bool, body: bytes) -> str:
    if not stream or (wire == "gemini" and body.lstrip().startswith(b"[")):
        return "application/json"
    return "application/x-ndjson" if wire == "ollama" else "text/event-stream"


def exchanges(path: Path, wire: str, *, statuses: tuple[int, ...] = (200,)) -> Iterator[ServerExchange]:
    """Each interaction of the cassette at ``path`` on ``wire``'s endpoint answered with one of ``statuses``."""
    for interaction in load_cassette(path).interactions:
        response = interaction.response
        if response is None or response.status not in statuses or ENDPOINTS[wire] not in interaction.request.uri:
            continue
        stream = is_streaming(interaction)
        headers = dict(response.headers) or {"content-type": _content_type(wire, stream, response.body)}
        yield ServerExchange(
            wire=wire,
            stream=stream,
            request=interaction.request.body or b"",
            status=response.status,
            headers=headers,
            body=response.body,
            turn=interaction.index,
        )


def one(path: Path, wire: str, index: int = 0, **kw: Any) -> ServerExchange:
    return list(exchanges(path, wire, **kw))[index]


def sse_events(body: bytes) -> list[tuple[str | None, str]]:
    """The (event name, data) of each SSE event, read naively (CRLF made LF, split at blank lines)."""
    out: list[tuple[str | None, str]] = []
    for block in body.replace(b"\r\n", b"\n").decode().split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            out.append((name, "\n".join(data)))
    return out


def sse_body(events: list[tuple[str | None, str]]) -> bytes:
    return "".join((f"event: {n}\n" if n else "") + f"data: {d}\n\n" for n, d in events).encode()


def edit_stream(exchange: ServerExchange, edit: Any) -> ServerExchange:
    """``exchange`` with its SSE events passed through ``edit(list of (name, parsed data or "[DONE]"))``."""
    events = [(n, d if d == "[DONE]" else json.loads(d)) for n, d in sse_events(exchange.body)]
    events = edit(events)
    body = sse_body([(n, d if isinstance(d, str) else json.dumps(d)) for n, d in events])
    return replace(exchange, body=body)


def edit_body(exchange: ServerExchange, edit: Any) -> ServerExchange:
    value = json.loads(exchange.body)
    edit(value)
    return replace(exchange, body=json.dumps(value).encode())


def edit_lines(exchange: ServerExchange, edit: Any) -> ServerExchange:
    """An NDJSON stream's objects passed through ``edit(list)``."""
    lines = [json.loads(line) for line in exchange.body.split(b"\n") if line.strip()]
    lines = edit(lines)
    return replace(exchange, body=b"".join(json.dumps(line).encode() + b"\n" for line in lines))
