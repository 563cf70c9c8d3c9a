"""Which recorded answer of a cassette a request gets, when the emulator plays a cassette (pure).

A black-box client is served a scenario's recorded answers (``Emulator.play_cassette``). The
answer is chosen by what the request says, never by arrival order: its wire (from the path), its
turn (the assistant messages in its history, read with the reference adapter of that wire, as the
emulator counts turns when it plays a script) and its stream mode (the body's ``stream`` flag, or
Gemini's ``:streamGenerateContent`` path). A client that retries a request therefore gets the same
answer again instead of the next turn's, and Gemini paths holding any model name under ``/v1`` or
``/v1beta`` are the same endpoint. The recorded requests are read the same way, so a cassette
indexes itself: (wire, turn, stream) -> the first interaction with those.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from conformance.adapters import detect_adapter, for_format
from conformance.traffic.cassettes import Cassette, Interaction, RecordedResponse, is_streaming
from conformance.traffic.replay import split_stream_body

__all__ = ["CassettePlay", "PlayedAnswer", "is_stream_request", "request_turn", "served_pieces"]


def is_stream_request(wire: str, path: str, body: Mapping[str, Any]) -> bool:
    """Does this request ask for a stream? Gemini by its path; Ollama unless ``stream: false``
    (it streams by default, wire-formats.md §5d); the others by ``stream: true``."""
    if wire == "gemini":
        return urlsplit(path).path.endswith(":streamGenerateContent")
    if wire == "ollama":
        return body.get("stream") is not False
    return body.get("stream") is True


def request_turn(wire: str, path: str, body: Mapping[str, Any]) -> int:
    """The turn a request is: the assistant messages in its history (raises when the body is not
    that wire's request)."""
    request = for_format(wire).request_from_wire(body, path=path)
    return sum(1 for message in request.messages if message.role == "assistant")


@dataclass(frozen=True, kw_only=True)
class PlayedAnswer:
    """What the emulator answered one request with while playing a cassette."""

    request: int
    """The request's number (``ReceivedRequest.number``: its place since the start or the last cassette)."""
    wire: str
    turn: int | None
    """The turn read from the request (None: it could not be read)."""
    stream: bool
    interaction: int | None
    """The cassette interaction played (None: none matched, an error was answered)."""
    status: int
    body: bytes
    """The body served (a stream's chunks joined)."""
    chunks: tuple[bytes, ...] = ()
    seconds: float = 0.0
    """The server's own time on the request: reading it, choosing the answer (up to its first byte
    written; writing is the socket's)."""
    refused: str | None = None
    """Why the recorded answer was not served (a redirect that would send the client off the
    loopback server, answered with an error instead): the suite's problem with the cassette, never
    the client's."""


@dataclass(frozen=True)
class CassettePlay:
    """A cassette indexed by (wire, turn, stream mode) of its recorded requests."""

    cassette: Cassette
    answers: Mapping[tuple[str, int, bool], Interaction] = field(default_factory=dict)
    response_turns: Mapping[str, int] = field(default_factory=dict)
    """The Responses ids the recorded answers carry -> their turn: a request naming one as its
    ``previous_response_id`` (a stateful client sends only the new items) continues from that turn,
    as when the emulator plays a script."""

    @classmethod
    def of(cls, cassette: Cassette) -> CassettePlay:
        answers: dict[tuple[str, int, bool], Interaction] = {}
        response_turns: dict[str, int] = {}
        for interaction in cassette.interactions:
            if interaction.response is None or not isinstance(interaction.request.json, dict):
                continue
            path = interaction.request.uri
            wire = detect_adapter(path)
            if wire is None:
                continue
            try:
                turn = request_turn(wire, urlsplit(path).path, interaction.request.json)
            except Exception:  # a recorded request its own wire cannot read: never played
                continue
            answers.setdefault((wire, turn, is_streaming(interaction)), interaction)
            if wire == "openai_responses" and (response_id := _response_id(interaction.response)) is not None:
                response_turns.setdefault(response_id, turn)
        return cls(cassette, answers, response_turns)

    def turn(self, wire: str, path: str, body: Mapping[str, Any]) -> int:
        """The turn a request is: ``request_turn``, continued from the turn of the recorded Responses
        answer its ``previous_response_id`` names."""
        turn = request_turn(wire, path, body)
        previous = body.get("previous_response_id") if wire == "openai_responses" else None
        if isinstance(previous, str) and previous in self.response_turns:
            turn += self.response_turns[previous] + 1
        return turn

    def answer(self, wire: str, turn: int, stream: bool) -> Interaction | None:
        return self.answers.get((wire, turn, stream))

    def describe(self, wire: str, stream: bool) -> str:
        """The turns the cassette holds for a wire and mode (for the error a miss gets)."""
        turns = sorted(t for (w, t, s) in self.answers if w == wire and s == stream)
        mode = "streamed" if stream else "non-streamed"
        return f"{self.cassette.path} holds {mode} {wire} turns {turns or 'none'}"


def _response_id(response: RecordedResponse) -> str | None:
    """The id of a recorded Responses answer: its body's ``id``, or its stream's ``response.created``."""
    if isinstance(response.json, dict):
        found = response.json.get("id")
        return found if isinstance(found, str) else None
    for piece in served_pieces(response, stream=True):
        for line in piece.splitlines():
            if not line.startswith(b"data:"):
                continue
            try:
                event = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(event, dict) and isinstance(event.get("response"), dict):
                found = event["response"].get("id")
                return found if isinstance(found, str) else None
    return None


def served_pieces(response: RecordedResponse, *, stream: bool) -> list[bytes]:
    """The body in the pieces it is sent in: the recorded chunks of a stream (its SSE events or
    NDJSON lines when the chunks were not kept), else the whole body."""
    if not stream:
        return [response.body]
    if response.chunks:
        return list(response.chunks)
    return split_stream_body(response.body) if response.body else []
