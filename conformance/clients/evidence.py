"""What a black-box case saw of the client, turn by turn (values the ``client.*`` checks read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.clients.invoke import TurnResult
from conformance.traffic.cassettes import RecordedRequest

__all__ = ["ClientTurn", "SentRequest"]


@dataclass(frozen=True, kw_only=True)
class SentRequest:
    """One HTTP request the client really sent, as the server received it, and what it was answered."""

    method: str
    path: str
    """The request target as sent: the path and its query string (``?alt=sse``, Gemini's ``?key=``)."""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """The request's headers as received, names lower-cased, in order (the API key among them: never
    shown; ``client.request_headers`` judges them)."""
    body: Any
    """The body parsed as JSON (None when it is not JSON)."""
    stream: bool
    """The stream mode the request asked for (read from it as a provider would)."""
    status: int | None
    response_body: bytes = b""
    """What the server answered (a stream's chunks joined)."""
    answered_turn: int | None
    """The turn read from the request (its assistant messages); None when it could not be read."""
    interaction: int | None = None
    """The cassette interaction whose recorded answer it got (its index; None: none matched)."""


@dataclass(frozen=True, kw_only=True)
class ClientTurn:
    """One turn of a black-box case."""

    turn: int
    asked_stream: bool
    """What the ``Call`` asked for."""
    sent: tuple[SentRequest, ...]
    """The requests to the wire's endpoint (the turn's own)."""
    result: TurnResult
    side: tuple[SentRequest, ...] = ()
    """Requests to other endpoints (model info, ``/api/show``): not the turn's request, not judged."""
    recorded: RecordedRequest | None = None
    """The cassette's recorded request whose answer the turn's request (the last sent) got: what
    ``client.recorded_request`` compares it with, both read back (None: no recorded answer matched)."""
    api_key: str = field(default="", repr=False)
    """The API key the turn's ``Call`` carried: ``client.request_headers`` looks for where the client
    sent it (a finding says where, never what it is; empty: not judged)."""
