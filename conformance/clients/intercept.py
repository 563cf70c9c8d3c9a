"""In-process interception, for a client that cannot take a base URL (``conformance certify --intercept``).

The client calls the provider's real address (``PROVIDER_URLS``); vcrpy, patched into httpx, httpx2
(the official SDKs' fork), requests, aiohttp and urllib3, answers in-process from the scenario's
cassette (read through ``conformance.traffic.replay.VcrSerializer``), so no socket to a provider is
ever opened: a request the cassette cannot answer raises vcrpy's
``CannotOverwriteExistingCassetteException`` in the client. Answers are matched as the loopback
server matches them, by (wire, turn, stream mode) read from the request (a vcrpy matcher over
``conformance.emulator._cassette``), never by order, and replayed as often as asked (a retry gets the
same answer). Every request vcrpy answered, or could not, is captured for the checks.

What this mode cannot do, said in each case it touches: vcrpy hands a stream to the client as one
body, so **chunk boundaries are not kept**; and it cannot break a stream, so the scenarios whose
recorded stream broke (``response.interrupted``) are UNSUPPORTED here (the loopback mode plays them).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from conformance.adapters import detect_adapter
from conformance.clients.evidence import SentRequest
from conformance.emulator._cassette import CassettePlay, is_stream_request, request_turn
from conformance.traffic.cassettes import Cassette

__all__ = ["CHUNKS_NOTE", "PROVIDER_URLS", "Interception", "breaks_streams", "intercepting"]

PROVIDER_URLS = {
    "openai_chat": "https://api.openai.com",
    "openai_responses": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "ollama": "http://localhost:11434",
}
"""The address a call names in this mode (a client that takes a base URL is given this one)."""

CHUNKS_NOTE = "vcrpy interception: the stream reached the client as one body (chunk boundaries not kept)"


def breaks_streams(cassette: Cassette) -> bool:
    """Does the cassette hold a stream that broke when recorded (which vcrpy cannot replay broken)?"""
    return any(i.response is not None and i.response.interrupted for i in cassette.interactions)


def _key(method: str, uri: str, body: Any) -> tuple[str, int, bool] | None:
    path = urlsplit(uri).path
    wire = detect_adapter(path)
    if wire is None or method.upper() != "POST":
        return None
    try:
        parsed = json.loads(body) if isinstance(body, bytes | str) and body else None
        if not isinstance(parsed, dict):
            return None
        return wire, request_turn(wire, path, parsed), is_stream_request(wire, uri, parsed)
    except Exception:  # not that wire's request: it matches nothing
        return None


def _same_turn(r1: Any, r2: Any) -> None:
    """vcrpy matcher: the same (wire, turn, stream mode); raises ``AssertionError`` when not."""
    k1, k2 = _key(r1.method, r1.uri, r1.body), _key(r2.method, r2.uri, r2.body)
    if k1 is None or k1 != k2:
        raise AssertionError(f"(wire, turn, stream) {k1} != {k2}")


@dataclass
class Interception:
    """The requests the client sent while intercepted, oldest first."""

    play: CassettePlay
    sent: list[SentRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> int:
        with self.lock:
            return len(self.sent)

    def sent_since(self, before: int) -> list[SentRequest]:
        with self.lock:
            return self.sent[before:]

    def note(self, request: Any, answered: bool) -> None:
        key = _key(request.method, request.uri, request.body)
        try:
            body = json.loads(request.body) if request.body else None
        except ValueError:
            body = None
        interaction = self.play.answer(*key) if key is not None and answered else None
        response = interaction.response if interaction is not None else None
        split = urlsplit(request.uri)
        sent = SentRequest(
            method=request.method,
            path=split.path + (f"?{split.query}" if split.query else ""),
            headers=_headers(request.headers),
            body=body,
            stream=key[2] if key is not None else False,
            status=response.status if response is not None else None,
            response_body=response.body if response is not None else b"",
            answered_turn=key[1] if key is not None else None,
            interaction=interaction.index if interaction is not None else None,
        )
        with self.lock:
            self.sent.append(sent)


def _headers(headers: Any) -> tuple[tuple[str, str], ...]:
    """A vcrpy request's headers (its ``HeadersDict``: one value per name, ``str`` or ``bytes`` as the
    patched library gave them) as (lower-cased name, text) pairs."""
    return tuple(
        (str(name).lower(), value.decode("latin-1") if isinstance(value, bytes) else str(value))
        for name, value in (headers or {}).items()
    )


@contextlib.contextmanager
def intercepting(cassette: Cassette) -> Iterator[Interception]:
    """Answer every HTTP request of this process from ``cassette`` until the block ends."""
    import vcr  # type: ignore[import-untyped]

    from conformance.traffic.replay import VcrSerializer

    capture = Interception(play=CassettePlay.of(cassette))
    recorder = vcr.VCR()
    recorder.register_serializer("conformance", VcrSerializer())
    recorder.register_matcher("conformance_turn", _same_turn)
    with recorder.use_cassette(
        cassette.path,
        serializer="conformance",
        record_mode="none",
        match_on=["conformance_turn"],
        allow_playback_repeats=True,
    ) as played:
        can_play, play = played.can_play_response_for, played.play_response

        def can_play_response_for(request: Any) -> bool:
            answered = bool(can_play(request))
            if not answered:
                capture.note(request, answered=False)
            return answered

        def play_response(request: Any) -> Any:
            response = play(request)
            capture.note(request, answered=True)
            return response

        played.can_play_response_for = can_play_response_for
        played.play_response = play_response
        yield capture
