"""What a black-box case saw of the client, turn by turn (values the ``client.*`` checks read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.clients.invoke import TurnResult

__all__ = ["ClientTurn", "SentRequest"]


@dataclass(frozen=True, kw_only=True)
class SentRequest:
    """One HTTP request the client really sent, as the server received it, and what it was answered."""

    method: str
    path: str
    body: Any
    """The body parsed as JSON (None when it is not JSON)."""
    stream: bool
    """The stream mode the request asked for (read from it as a provider would)."""
    status: int | None
    response_body: bytes = b""
    """What the server answered (a stream's chunks joined)."""
    answered_turn: int | None
    """The turn read from the request (its assistant messages); None when it could not be read."""


@dataclass(frozen=True, kw_only=True)
class ClientTurn:
    """One turn of a black-box case."""

    turn: int
    asked_stream: bool
    """What the ``Call`` asked for."""
    sent: tuple[SentRequest, ...]
    result: TurnResult
