"""Secrets echoed by a server, for the scrubbing tests (tests/traffic) and ``scripts/secret_leaks.py``.

``SECRETS``: fakes shaped like the providers' documented keys (OpenAI ``sk-`` and ``sk-proj-``,
Anthropic ``sk-ant-api03-``, Google ``AIza`` of 39 characters), which the client never sent (the
scrubber must know them by shape), and tokens with no shape that the client did send (a bearer
token in ``authorization``, a ``cookie``) or the server set (``set-cookie``), which the scrubber
must know by name. ``WIRES``: each wire's real stream framing (wire-formats.md) of a short text
answer that echoes the secret: OpenAI Chat, Responses and Anthropic SSE (``\\n\\n``, with
``event:`` lines where the wire has them), Gemini SSE (``\\r\\n\\r\\n``) and Gemini's JSON-array
stream, Ollama NDJSON.

``exchanges(wire, secret)`` is one recorded ``Exchange`` per split offset of the streamed body
(every offset: the chunk holding it is cut there), plus one with every character its own chunk,
plus one stream that is not UTF-8 (stored whole, as ``!!binary``); each also carries the secret (quoted as the
answer quotes it) in the URL (percent-encoded as usual, and every byte percent-encoded), in a
response header, and split across two values of a repeated one.
``leaks(text, secret)``: whether ``text`` holds the secret or any 8 characters of it in a row, as is
or percent-decoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from conformance.traffic.cassettes import load_cassette
from conformance.traffic.transport import Exchange

__all__ = [
    "CHANNELS",
    "SECRETS",
    "WIRES",
    "Secret",
    "Wire",
    "exchanges",
    "leaks",
    "leaks_in_file",
    "split_at",
    "written",
]

NGRAM = 8


@dataclass(frozen=True)
class Secret:
    kind: str
    value: str
    echo: str
    """How the server's text answer quotes it (``{}`` is the secret)."""
    request_headers: tuple[tuple[str, str], ...] = ()
    """How the client sent it (then the recorder knows it by name)."""
    response_headers: tuple[tuple[str, str], ...] = ()


SECRETS = (
    Secret("openai", "sk-" + "T3BlbkFJ" + "q8Zx4RmW2vNc7LpK9sYd3HfGbJ6tA1eU5oXiCr0wVnMhQ", "your key {} is wrong"),
    Secret(
        "openai_proj",
        "sk-proj-" + "Xy7_Qw-3Rt9Lm2Np8Kb5Vc1Zx4As6Df0Gh" + "T3BlbkFJ" + "Jk-8Lp_2Mn7Bv4Cx1Za9Sd3Fg",
        "GET /v1/models?key%3D{}",  # a percent-encoded byte right before the key
    ),
    Secret(
        "anthropic",
        "sk-ant-api03-" + "Hq7vR2mX9pL4kT8nW3cZ6bY1dF5gJ0sA-eU_iO7rQ2wE4tY6uI8oP3aS5dF9gH1jK" + "AA",
        "invalid x-api-key: {}",
    ),
    Secret("google", "AIza" + "SyD4-x9Qm2Lr7Kp1Vn8Bw3Ct6Zf0Hj5_Gs", "API key not valid:\t{}."),
    Secret(
        "bearer_sent",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "token {} expired",
        request_headers=(
            (
                "authorization",
                "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ),
        ),
    ),
    Secret("bearer_echo", "ya29.a0AfB_byC9x-Lm3Qr8Tz1Vw5Nk7Hj2Pd4Gs6", "send Authorization: Bearer {} next time"),
    Secret(
        "cookie",
        "Zq8w-Xk3vT9pRb7mLc2nYh5sJd1fG4",
        "session {} seen",
        request_headers=(("cookie", "theme=dark; session=Zq8w-Xk3vT9pRb7mLc2nYh5sJd1fG4"),),
    ),
    Secret(
        "set_cookie",
        "Wm4t_Hq7pXr2Kd9sVb3cNf6yLj1a",
        "sid {} issued",
        response_headers=(("set-cookie", "sid=Wm4t_Hq7pXr2Kd9sVb3cNf6yLj1a; Path=/; HttpOnly"),),
    ),
)


@dataclass(frozen=True)
class Wire:
    name: str
    """The wire format (an adapter name); ``gemini_array`` is Gemini without ``alt=sse``."""
    path: str
    content_type: str
    events: Callable[[str], list[bytes]]
    """The stream of a text answer ``text``, one event (or line, or array element) per piece."""


def _sse(payloads: list[dict[str, Any]], *, names: list[str] | None = None, end: str = "\n\n") -> list[bytes]:
    out = []
    for n, payload in enumerate(payloads):
        head = f"event: {names[n]}\n" if names else ""
        out.append(f"{head}data: {json.dumps(payload, separators=(',', ':'))}{end}".encode())
    return out


def _openai_chat(text: str) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": "c1",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return [*_sse([chunk({"content": text}, None), chunk({}, "stop")]), b"data: [DONE]\n\n"]


def _openai_responses(text: str) -> list[bytes]:
    delta = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "delta": text}
    done = {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}
    return _sse([delta, done], names=["response.output_text.delta", "response.completed"])


def _anthropic(text: str) -> list[bytes]:
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
    return _sse([delta, {"type": "message_stop"}], names=["content_block_delta", "message_stop"])


def _gemini_payloads(text: str) -> list[dict[str, Any]]:
    def part(words: str, finish: dict[str, str]) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": words}]}, "index": 0, **finish}]}

    return [part(text, {}), part("", {"finishReason": "STOP"})]


def _gemini(text: str) -> list[bytes]:
    return _sse(_gemini_payloads(text), end="\r\n\r\n")


def _gemini_array(text: str) -> list[bytes]:
    first, last = (json.dumps(p) for p in _gemini_payloads(text))
    return [f"[{first}".encode(), f",\r\n{last}".encode(), b"]"]


def _ollama(text: str) -> list[bytes]:
    lines = [
        {"model": "m", "message": {"role": "assistant", "content": text}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
    return [json.dumps(line).encode() + b"\n" for line in lines]


WIRES = (
    Wire("openai_chat", "/v1/chat/completions", "text/event-stream", _openai_chat),
    Wire("openai_responses", "/v1/responses", "text/event-stream", _openai_responses),
    Wire("anthropic", "/v1/messages", "text/event-stream", _anthropic),
    Wire("gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", "text/event-stream", _gemini),
    Wire("gemini_array", "/v1beta/models/m:streamGenerateContent", "application/json", _gemini_array),
    Wire("ollama", "/api/chat", "application/x-ndjson", _ollama),
)


def split_at(events: list[bytes], offset: int) -> list[bytes]:
    """``events`` with the one that holds byte ``offset`` of their join cut there (no empty pieces)."""
    out: list[bytes] = []
    start = 0
    for event in events:
        end = start + len(event)
        if start < offset < end:
            out += [event[: offset - start], event[offset - start :]]
        else:
            out.append(event)
        start = end
    return out


def _percent_all(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


def exchanges(wire: Wire, secret: Secret) -> Iterator[tuple[str, Exchange]]:
    """(label, exchange): one per split offset of the body (label ``offset N``), one with every
    character its own chunk, one stream that is not UTF-8."""
    echo = secret.echo.format(secret.value)
    events = wire.events(echo)
    body = b"".join(events)
    cut = echo.index(secret.value) + len(secret.value) // 2
    headers = (
        ("content-type", wire.content_type),
        ("x-echo", echo),
        ("x-echo-split", echo[:cut]),
        ("x-echo-split", echo[cut:]),
        *secret.response_headers,
    )
    sep = "&" if "?" in wire.path else "?"
    url = f"http://127.0.0.1:8080{wire.path}{sep}q={quote(echo)}&e={_percent_all(echo)}"
    request_headers = (("content-type", "application/json"), *secret.request_headers)
    request = json.dumps({"stream": True, "note": "hello"}).encode()

    def exchange(chunks: list[bytes], response: bytes = body) -> Exchange:
        return Exchange(
            method="POST",
            url=url,
            request_headers=request_headers,
            request_body=request,
            stream=True,
            status=200,
            response_headers=headers,
            response_body=response,
            chunks=tuple(chunks),
        )

    for offset in range(1, len(body)):
        yield f"offset {offset}", exchange(split_at(events, offset))
    yield "every character a chunk", exchange([c.encode() for c in body.decode()])
    binary = b"\xff\xfe" + body
    yield "not UTF-8", exchange([binary[: len(binary) // 2], binary[len(binary) // 2 :]], binary)


def leaks(text: str, secret: str) -> bool:
    """Whether ``text`` holds ``secret`` or 8 of its characters in a row, as is or percent-decoded."""
    decoded = unquote(text)
    grams = {secret[i : i + NGRAM] for i in range(len(secret) - NGRAM + 1)}
    return any(g in text or g in decoded for g in grams)


CHANNELS = ("url", "headers", "body")


def written(path: Path) -> tuple[str, list[dict[str, str]]]:
    """A cassette's text, and per interaction what it holds when read back, by channel (``url``,
    ``headers`` of both sides, ``body``: request body, response body gunzipped, chunks joined)."""
    text = path.read_text(encoding="utf-8")
    views = []
    for interaction in load_cassette(path).interactions:
        response = interaction.response
        assert response is not None
        chunks = "".join(c.decode("utf-8", "replace") for c in (response.chunks or ()))
        views.append(
            {
                "url": interaction.request.uri,
                "headers": repr(interaction.request.headers) + repr(response.headers),
                "body": "\n".join([repr(interaction.request.body), response.body.decode("utf-8", "replace"), chunks]),
            }
        )
    return text, views


def leaks_in_file(path: Path, secret: str) -> bool:
    """Whether the file at ``path`` (any file a command wrote) leaks ``secret``."""
    return leaks(path.read_bytes().decode("utf-8", "replace"), secret)
