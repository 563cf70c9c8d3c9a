"""A scenario's recorded answers as a respx router, for the tests of your own httpx code.

An edge module: its I/O goes through respx (patched into httpx's transport layer) and the disk
(the cassette). ``router(scenario_id, wire)`` gives a ``respx.MockRouter`` that answers POST
requests to the provider's endpoint with the scenario's recorded answers, as the loopback emulator
plays a cassette (``conformance.emulator._cassette``; docs/pytest.md, "conformance_server"): the
answer is chosen by what the request says, its turn (the assistant messages in its history, read
with the wire's reference adapter) and its stream mode, never by arrival order, so a retry gets the
same answer again::

    with router("basic/get_time", "openai_chat") as mock:
        ...  # your code sends to https://api.openai.com/v1/chat/completions
        sent = [json.loads(call.request.content) for call in mock.calls]  # inside: respx clears them on exit

Anything it cannot answer raises in the client's call, naming the scenario, the turn and what to
do: another path (``UsageError``), a stream asked of a ``non_stream`` router or the reverse
(``UsageError``), a turn past the recorded conversation (``UsageError``), a turn the scenario has
but the cassette lacks (``ReplayMissError``, with the ``conformance record`` line), a body that is
not the wire's request (``WireFormatError``), more than ``max_requests`` requests (``UsageError``).
No socket is opened: respx answers in-process, and another host is respx's own "not mocked" error.

Facts it relies on (respx 0.23.1, httpx 0.28.1; measured by tests/test_respx.py):

- respx's default mocker (``respx/mocks.py``, ``HTTPCoreMocker.from_sync_httpx_response``) hands the
  side effect's ``httpx.Response.stream`` to httpcore as the response content, and
  ``Router.resolve`` (``respx/router.py``) pre-reads only an ``httpx.ByteStream``: a stream of our
  own reaches the client piece by piece, sync and async. **Chunk boundaries are kept** for
  ``iter_raw``/``iter_bytes()`` (and their async forms), except that **an empty recorded chunk never
  arrives** (httpx's ``ByteChunker`` in ``httpx/_decoders.py`` yields nothing for ``b""``);
  ``iter_text`` keeps them too, except where a chunk ends inside a UTF-8 character (its incremental
  decoder holds those bytes for the next piece); ``iter_lines`` and ``iter_bytes(chunk_size=N)``
  re-cut by design.
- A side effect that raises (``respx/models.py``, ``Route._call_side_effect``) has its exception
  re-raised unchanged in the client's call, and the request is still in ``mock.calls`` (with no
  response); an exception raised while the body streams reaches the client as it is.
- ``MockRouter.__exit__`` (``stop``) rolls the routes back and **clears ``calls``**: read what the
  client sent inside the ``with`` block.
- The recorded headers are served without ``content-length``, ``content-encoding``,
  ``transfer-encoding``, ``connection`` and ``date``, as the emulator serves them (httpx sets the
  length of a whole body; a cassette's bodies are stored decoded). A stream that broke while it was
  recorded (``response.interrupted``) is served up to where it broke and then raises
  ``httpx.RemoteProtocolError``, as ``conformance.traffic.replay`` does.

respx is an optional dependency (``pip install 'conformance[respx]'``): only a test suite that
already uses respx needs it, and it is imported when ``router`` is called.
"""

from __future__ import annotations

import difflib
import json
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

import httpx

from conformance.adapters import detect_adapter
from conformance.clients.intercept import PROVIDER_URLS
from conformance.emulator._cassette import CassettePlay, is_stream_request, served_pieces
from conformance.errors import CassetteNotFoundError, ReplayMissError, UsageError, WireFormatError
from conformance.traffic.cassettes import Cassette, Interaction, load_cassette
from conformance.traffic.recorder import record_command

if TYPE_CHECKING:
    import respx

__all__ = ["DEFAULT_MAX_REQUESTS", "ENDPOINTS", "Mode", "router"]

Mode = Literal["non_stream", "stream"]
"""Which recorded answers a router plays: the non-streamed or the streamed ones."""

DEFAULT_MAX_REQUESTS = 100
"""Requests one router answers at most: a client caught in a retry loop meets an error instead of
growing respx's call log without end."""

ENDPOINTS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/{model}:generateContent (stream: :streamGenerateContent?alt=sse)",
    "ollama": "/api/chat",
}
"""Wire -> the path its router answers (POST), under the base URL (default
``conformance.clients.intercept.PROVIDER_URLS``, the provider's real address)."""

_NOT_SERVED = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection", "date"})


def router(
    scenario_id: str,
    wire: str,
    *,
    mode: Mode = "non_stream",
    cassette_dir: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    max_requests: int = DEFAULT_MAX_REQUESTS,
) -> respx.MockRouter:
    """A respx router answering ``wire``'s endpoint with the recorded answers of ``scenario_id``
    (the cassette ``<cassette_dir>/<wire>/<scenario_id>.yaml``; default: the bundled cassettes).

    Enter it (``with router(...) as mock:``, or use it as a decorator as ``respx.mock(...)``); the
    client's requests to ``base_url`` (default: the provider's real address, ``PROVIDER_URLS``)
    get the answers of ``mode``, turn by turn. ``mock.calls`` holds what the client sent (until the
    block ends). Raises ``UsageError`` for an unknown wire or mode or when respx is missing,
    ``CassetteNotFoundError`` (with the nearest scenario ids and the record command) for a missing
    cassette, ``ReplayMissError`` when the cassette holds no answer in ``mode``.
    """
    try:
        import respx
    except ModuleNotFoundError as exc:
        raise UsageError(
            "conformance.respx needs respx, which is not installed: pip install 'conformance[respx]'"
        ) from exc
    if wire not in ENDPOINTS:
        raise UsageError(f"unknown wire {wire!r} for conformance.respx.router: choose one of {', '.join(ENDPOINTS)}")
    if mode not in get_args(Mode):
        raise UsageError(f"unknown mode {mode!r}: choose 'non_stream' or 'stream'")
    if max_requests < 1:
        raise UsageError(f"max_requests must be 1 or more, not {max_requests}")
    base = (base_url or PROVIDER_URLS[wire]).rstrip("/")
    player = _Player(
        scenario_id=scenario_id,
        wire=wire,
        stream=mode == "stream",
        play=CassettePlay.of(_cassette(scenario_id, wire, cassette_dir)),
        base=base,
        max_requests=max_requests,
    )
    mock = respx.MockRouter(assert_all_mocked=True)
    mock.route(url__startswith=base + "/", name=f"conformance {wire} {scenario_id}").mock(side_effect=player)
    return mock


def _cassette(scenario_id: str, wire: str, cassette_dir: str | os.PathLike[str] | None) -> Cassette:
    """The scenario's cassette for ``wire``; a missing one names the nearest scenario ids there."""
    if cassette_dir is None:
        from conformance.scenarios import bundled

        folder = bundled.cassettes_dir() / wire
    else:
        folder = Path(cassette_dir) / wire
    path = folder / f"{scenario_id}.yaml"
    if not path.is_file():
        known = [p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.yaml")]
        near = difflib.get_close_matches(scenario_id, known, n=3)
        nearest = f" (nearest: {', '.join(near)})" if near else ""
        raise CassetteNotFoundError(
            f"{path}: no {wire} cassette for scenario {scenario_id}{nearest}; "
            f"record it with `{record_command(wire, scenario_id)}`"
        )
    return load_cassette(path)


class _Player:
    """The route's side effect: one request -> its recorded answer, or an error naming what to do."""

    def __init__(
        self, *, scenario_id: str, wire: str, stream: bool, play: CassettePlay, base: str, max_requests: int
    ) -> None:
        self.scenario_id = scenario_id
        self.wire = wire
        self.stream = stream
        self.play = play
        self.base = base
        self.max_requests = max_requests
        self._answered = 0
        self._lock = threading.Lock()
        turns = {t for (w, t, _) in play.answers if w == wire}
        self.last_turn = max(turns, default=-1)
        if not any(w == wire and s == stream for (w, _, s) in play.answers):
            raise ReplayMissError(
                play.cassette.path,
                f"any {self._mode_words(stream)} request of scenario {scenario_id} "
                f"({play.describe(wire, stream)}; mode={'non_stream' if stream else 'stream'} plays the others)",
                command=record_command(wire, scenario_id),
            )

    @staticmethod
    def _mode_words(stream: bool) -> str:
        return "streamed" if stream else "non-streamed"

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self._answered += 1
            count = self._answered
        where = f"scenario {self.scenario_id} ({self.wire}, mode={'stream' if self.stream else 'non_stream'})"
        if count > self.max_requests:
            raise UsageError(
                f"{where}: the client sent more than {self.max_requests} requests (max_requests); "
                "a retry loop? Check mock.calls, or pass a larger max_requests"
            )
        path = request.url.path
        if request.method != "POST" or detect_adapter(path) != self.wire:
            raise UsageError(
                f"{where}: the router answers POST {self.base}{ENDPOINTS[self.wire]}, "
                f"the client sent {request.method} {request.url}: point the client at that endpoint "
                f"(base_url={self.base!r}), or build the router for the wire it speaks"
            )
        try:
            body = json.loads(request.content) if request.content else None
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
            stream = is_stream_request(self.wire, str(request.url), body)
            turn = self.play.turn(self.wire, path, body)
        except Exception as exc:
            raise WireFormatError(
                f"{where}: cannot read the client's request to {path} as {self.wire} ({exc}), so its turn "
                f"is unknown; send the {self.wire} request body (mock.calls[-1].request.content is what was sent)"
            ) from exc
        if stream != self.stream:
            asked, other = ("a stream", "stream") if stream else ("a whole body", "non_stream")
            raise UsageError(
                f"{where}: the client asked for {asked} on turn {turn}, and this router plays the "
                f"{self._mode_words(self.stream)} answers: build it with mode={other!r}, "
                "or have the client ask as the router plays"
            )
        interaction = self.play.answer(self.wire, turn, stream)
        if interaction is None or interaction.response is None:
            if turn > self.last_turn:
                raise UsageError(
                    f"{where}: the client sent a request for turn {turn} ({turn} assistant messages in its "
                    f"history), past the recorded conversation (turns 0-{self.last_turn}; turn {self.last_turn}'s "
                    "answer is the last): stop the client after the last answer, or check the history it "
                    "sends (mock.calls)"
                )
            raise ReplayMissError(
                self.play.cassette.path,
                f"{request.method} {path} ({self._mode_words(stream)}, turn {turn}) of scenario "
                f"{self.scenario_id}: {self.play.describe(self.wire, stream)}",
                command=record_command(self.wire, self.scenario_id),
            )
        return _response(interaction, stream=stream)


def _response(interaction: Interaction, *, stream: bool) -> httpx.Response:
    """The recorded answer: a stream in its recorded pieces (an error status as a whole body, as the
    emulator sends it), else the whole body."""
    recorded = interaction.response
    assert recorded is not None
    # as bytes: httpx encodes a str header as ASCII and raises on any other character, which a
    # cassette (untrusted input) may hold (conformance.traffic.replay does the same)
    headers = [(_raw(k), _raw(v)) for k, v in recorded.headers.items() if k.lower() not in _NOT_SERVED]
    if stream and recorded.status < 400:
        pieces = served_pieces(recorded, stream=True)
        return httpx.Response(recorded.status, headers=headers, stream=_Pieces(pieces, recorded.interrupted))
    return httpx.Response(recorded.status, headers=headers, content=recorded.body)


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class _Pieces(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A recorded stream, one recorded chunk per piece, for sync and async clients; a stream that
    broke when recorded breaks again after its last piece."""

    def __init__(self, pieces: list[bytes], interrupted: str | None) -> None:
        self._pieces = pieces
        self._interrupted = interrupted

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces
        self._break()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece
        self._break()

    def _break(self) -> None:
        if self._interrupted is not None:
            raise httpx.RemoteProtocolError(f"replayed interruption: {self._interrupted}")
