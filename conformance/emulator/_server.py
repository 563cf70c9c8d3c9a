"""The emulator's HTTP server: the I/O edge of ``conformance.emulator``.

A stdlib ``ThreadingHTTPServer`` bound to 127.0.0.1 only, speaking HTTP/1.1: a whole body goes
out with ``Content-Length``, a stream with ``Transfer-Encoding: chunked``, one HTTP chunk per SSE
event or NDJSON line, each written with its own ``send`` (Nagle off) so clients see real chunk
boundaries. No ``Date`` header and no clock anywhere: the same script answers the same request
with the same bytes.

A request is routed by its path (``conformance.adapters.detect_adapter``), decoded with that
adapter's ``request_from_wire`` only to count its assistant messages (the turn index) and read
the model, then answered from the script's reply for that turn by the wire's encoder module
(``_openai_chat`` ...), with the reply's fault applied (docs/emulator.md has the table). A chat
request from a prompt adapter (``_prompt_formats.detect_format``: its system prompt describes the
tools) is decoded with that adapter instead and answered as text in its format. Whatever
goes wrong with one request (an unreadable body, an exception in an encoder, a client that hangs
up) is answered or logged; the server keeps serving.

**Hostile load and bodies.** The listen backlog is ``BACKLOG`` (the kernel queues a burst of
hundreds of connections until they are accepted) and every connection gets its own thread. A body
whose JSON nests past ``nesting_depth`` (``conformance.limits``, the bound cassettes have) is
answered with a 400 in the wire's error shape before any parser recurses into it. A cassette's
recorded redirect to anywhere but this server is never served: it is answered with
``REFUSED_REDIRECT_STATUS`` naming the cassette and the interaction (``PlayedAnswer.refused``), so a
client following redirects never leaves loopback.

**The request log is bounded**, so a long-running emulator keeps a flat memory: ``requests`` and
``played`` hold only the newest ``max_requests`` entries (default ``DEFAULT_MAX_REQUESTS``), their
bodies together at most ``max_log_bytes`` (default ``DEFAULT_MAX_LOG_BYTES``; the oldest entries go
first, and a request body longer than that is kept cut, ``ReceivedRequest.truncated``). Every
request keeps its ``number`` (counted since the start or the last ``play_cassette``), ``received``
counts them all, and ``requests_since`` gives those still kept from a number on.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import socket
import socketserver
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast
from urllib.parse import parse_qs, urljoin, urlsplit

from conformance.adapters import detect_adapter, for_format
from conformance.adapters.openai_responses import resolve_item_references
from conformance.emulator import _anthropic, _gemini, _ollama, _openai_chat, _openai_responses, _prompt_formats
from conformance.emulator._cassette import CassettePlay, PlayedAnswer, is_stream_request, served_pieces
from conformance.emulator._openai_chat import openai_error
from conformance.emulator._refusals import Refusal, not_json, refusal
from conformance.emulator._scenario_book import Ambiguous, Found, ScenarioBook, known_quirks_only
from conformance.emulator._wire import DEFAULT_AFTER, ErrorAnswer, Headers, WireContext, WireEncoder
from conformance.errors import UsageError
from conformance.limits import ENV_VAR as LIMITS_ENV_VAR
from conformance.limits import current as current_limits
from conformance.model import Request
from conformance.scenarios.values import HTTP_FAULTS, STREAM_FAULTS, Reply, Scenario
from conformance.traffic.cassettes import Cassette
from conformance.traffic.network_guard import is_loopback
from conformance.traffic.safe_yaml import nests_deeper

__all__ = [
    "BACKLOG",
    "DEFAULT_MAX_LOG_BYTES",
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_REPLY",
    "ENCODERS",
    "ERROR_QUIRKS",
    "REFUSED_REDIRECT_STATUS",
    "Emulator",
    "EmulatorScript",
    "PlayedAnswer",
    "ReceivedRequest",
]

logger = logging.getLogger("conformance.emulator")

ENCODERS: Mapping[str, WireEncoder] = {
    "openai_chat": _openai_chat,
    "openai_responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "ollama": _ollama,
}
"""Wire format -> its encoder module."""

DEFAULT_REPLY = Reply(text="Hello from the conformance emulator.")
"""What every turn gets when no script is set (so any client can be pointed at the emulator)."""

_ENDPOINTS = {
    "openai_chat": "POST /v1/chat/completions",
    "openai_responses": "POST /v1/responses",
    "anthropic": "POST /v1/messages",
    "gemini": "POST /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse",
    "ollama": "POST /api/chat",
}
_MAX_BODY = 64 * 1024 * 1024
DEFAULT_MAX_REQUESTS = 1000
"""Requests (and played answers) the emulator keeps by default: the newest."""
DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024
"""Body bytes the kept requests and played answers hold together by default."""
BACKLOG = 1024
"""Connections the kernel holds for the server before it accepts them (``listen``'s backlog,
capped by ``net.core.somaxconn``): a burst of hundreds of clients connecting at once is queued,
not dropped to wait for SYN retransmits (the stdlib default is 5)."""
REFUSED_REDIRECT_STATUS = 502
"""The status a cassette's redirect off this server is answered with instead (``PlayedAnswer.refused``)."""
_MAX_NOTES = 1000
_MAX_RESPONSE_IDS = 10_000
_NOT_REPLAYED = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection", "date"})


@dataclass(frozen=True, kw_only=True)
class EmulatorScript:
    """The replies the emulator plays, one per turn (turn = assistant messages in the request)."""

    scenario_id: str
    """Names the script in errors and seeds every id (sha256 of scenario id, turn, index)."""
    replies: tuple[Reply, ...]

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> EmulatorScript:
        """The script playing ``scenario``'s turns. The assistant messages of its ``history`` (sent
        before turn 0) count as turns already answered: each takes a place no request reaches."""
        answered = sum(1 for message in scenario.history if message.role == "assistant")
        return cls(scenario_id=scenario.id, replies=(Reply(),) * answered + tuple(t.reply for t in scenario.turns))


_DEFAULT_SCRIPT = EmulatorScript(scenario_id="default", replies=(DEFAULT_REPLY,))


@dataclass(frozen=True, kw_only=True)
class ReceivedRequest:
    """A request the emulator received (for tests)."""

    method: str
    path: str
    """Path and query as sent."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-cased names."""
    body: bytes = b""
    """The body as received, or its first ``max_log_bytes`` when it was longer (``truncated``)."""
    number: int = 0
    """Its place among the requests received since the start or the last ``play_cassette``, from 0
    (``PlayedAnswer.request`` names it), kept when older requests leave the log."""
    size: int = 0
    """The body's length as received."""

    @property
    def truncated(self) -> bool:
        """Was the body longer than the log keeps (``body`` is its start)?"""
        return self.size > len(self.body)


class _BadRequest(Exception):
    """A request the emulator answers with a 400 in the wire's error shape."""


class _Refused(Exception):
    """A request a provider refuses (``_refusals``), answered as that provider answers it."""

    def __init__(self, found: Refusal) -> None:
        super().__init__(found.message)
        self.refusal = found


class Emulator:
    """The loopback provider emulator: a real HTTP/1.1 server on 127.0.0.1 in a daemon thread.

    Use it as a context manager (``with Emulator(port=0) as emu: emu.base_url``), or call
    ``start()`` and ``close()``. Every wire is served from ``base_url`` by path. ``max_requests``
    and ``max_log_bytes`` bound what ``requests`` and ``played`` keep (the module docstring).
    """

    def __init__(
        self,
        port: int = 0,
        *,
        script: EmulatorScript | None = None,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        max_log_bytes: int = DEFAULT_MAX_LOG_BYTES,
    ) -> None:
        if max_requests < 0 or max_log_bytes < 0:
            raise UsageError(
                f"the emulator's request log needs max_requests >= 0 and max_log_bytes >= 0 (got {max_requests} "
                f"and {max_log_bytes}); 0 keeps nothing"
            )
        self.max_requests = max_requests
        self.max_log_bytes = max_log_bytes
        self._lock = threading.Lock()
        self._script = script
        self._requests: deque[ReceivedRequest] = deque()
        self._received = 0
        self._kept_bytes = 0
        self._log: deque[str] = deque(maxlen=_MAX_NOTES)
        self._responses: dict[str, tuple[str, int]] = {}  # Responses ids -> (scenario id, turn), newest last
        self._play: CassettePlay | None = None
        self._book: ScenarioBook | None = None
        self._scripts: dict[str, EmulatorScript] = {}  # scenario id -> its script (play_scenarios)
        self._played: deque[PlayedAnswer] = deque()
        self._server = _Server(port, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="conformance-emulator", daemon=True
        )
        self._started = False
        self._closed = False

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: every wire is served from this root."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Emulator:
        if not self._started:
            self._started = True
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, drop open connections and free the port."""
        if self._closed:
            return
        self._closed = True
        if self._started:
            self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()
        if self._started:
            self._thread.join(timeout=10)

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- script and records ----------------------------------------------------------------

    def set_script(self, script: EmulatorScript | None) -> None:
        """Play ``script`` from now on; ``None`` goes back to the default reply."""
        with self._lock:
            self._script = script

    def play_scenarios(self, scenarios: Sequence[Scenario] | None) -> ScenarioBook | None:
        """With no script set, answer each request from the scenario it belongs to, read from the
        request itself (``_scenario_book``: its system prompt, first user message, tools, tool choice
        and reasoning settings as the wire's reference adapter reads them), at the turn its history
        says; a request that matches none gets the default reply, one that matches scenarios whose
        replies differ a 400 naming them. ``None`` stops. Returns the book (``skipped``: what a wire
        cannot carry)."""
        book = ScenarioBook.of(scenarios, tuple(ENCODERS)) if scenarios is not None else None
        scripts = {s.id: EmulatorScript.from_scenario(s) for s in scenarios or ()}
        with self._lock:
            self._book = book
            self._scripts = scripts
        return book

    @property
    def validating(self) -> bool:
        """Does the emulator refuse what a provider refuses (``_refusals``)? Only when it plays no
        script: a scripted run judges the client, whose checks give better evidence than a 400."""
        with self._lock:
            return self._script is None and self._play is None

    def play_cassette(self, cassette: Cassette | None) -> None:
        """Answer from now on with ``cassette``'s recorded answers (``conformance.emulator._cassette``:
        chosen by the request's wire, turn and stream mode, sent with their recorded chunk
        boundaries, a stream that broke when recorded broken again); ``None`` goes back to the
        script. The requests, played answers and notes recorded so far are cleared."""
        play = CassettePlay.of(cassette) if cassette is not None else None
        with self._lock:
            self._play = play
            self._requests.clear()
            self._played.clear()
            self._log.clear()
            self._received = 0
            self._kept_bytes = 0

    @property
    def played(self) -> list[PlayedAnswer]:
        """The answers given while playing a cassette, oldest first (a copy)."""
        with self._lock:
            return list(self._played)

    @property
    def script(self) -> EmulatorScript | None:
        with self._lock:
            return self._script

    @property
    def requests(self) -> list[ReceivedRequest]:
        """The requests received so far that the log still keeps, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def received(self) -> int:
        """How many requests were received since the start or the last ``play_cassette`` (kept or not)."""
        with self._lock:
            return self._received

    def requests_since(self, number: int) -> list[ReceivedRequest]:
        """The kept requests whose ``number`` is ``number`` or more, oldest first."""
        with self._lock:
            return [r for r in self._requests if r.number >= number]

    @property
    def log(self) -> list[str]:
        """Notes about what was asked and not done (unknown quirks, stream faults on whole bodies)."""
        with self._lock:
            return list(self._log)

    def _note(self, message: str) -> None:
        logger.info("%s", message)
        with self._lock:
            self._log.append(message)

    # ---- answering -------------------------------------------------------------------------

    def _handle(self, handler: _Handler) -> None:
        handler.started = time.perf_counter()
        raw_path = handler.path
        try:
            body = _read_body(handler)
        except _BadRequest as exc:
            handler.close_connection = True
            _send_whole(handler, *_generic_error(400, str(exc)))
            return
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            number = self._received
            self._received += 1
            kept = body if len(body) <= self.max_log_bytes else body[: self.max_log_bytes]
            self._requests.append(
                ReceivedRequest(
                    method=handler.command, path=raw_path, headers=headers, body=kept, number=number, size=len(body)
                )
            )
            self._kept_bytes += len(kept)
            self._trim()
            play = self._play
        url = urlsplit(raw_path)
        wire = detect_adapter(url.path)
        if wire is None or wire not in ENCODERS:
            served = "; ".join(_ENDPOINTS.values())
            _send_whole(handler, *_generic_error(404, f"no emulated endpoint at POST {url.path} (served: {served})"))
            return
        encoder = ENCODERS[wire]
        too_deep = _too_deep(body)
        if too_deep is not None:  # refused before any parser recurses into it
            status, error_headers, error = encoder.invalid_request(too_deep, _bare_context(wire, raw_path))
            if play is not None:
                self._record_play(handler, number, wire, None, False, None, status, error)
            _send_whole(handler, status, error_headers, error)
            return
        if play is not None:
            self._play_answer(handler, play, number, wire, encoder, body)
            return
        try:
            ctx, reply = self._plan(wire, raw_path, body)
        except _BadRequest as exc:
            _send_whole(handler, *encoder.invalid_request(str(exc), _bare_context(wire, raw_path)))
            return
        except _Refused as exc:
            _send_whole(handler, *_refusal_answer(encoder, exc.refusal, _bare_context(wire, raw_path)))
            return
        self._answer(handler, encoder, ctx, reply)

    def _play_answer(
        self, handler: _Handler, play: CassettePlay, number: int, wire: str, encoder: WireEncoder, body: bytes
    ) -> None:
        """Answer with the cassette's recorded answer for this request's (wire, turn, stream mode)."""
        raw_path = handler.path
        stream = False
        turn: int | None = None
        try:
            parsed = json.loads(body) if body else None
            if not isinstance(parsed, dict):
                raise ValueError("the request body is not a JSON object")
            stream = is_stream_request(wire, raw_path, parsed)
            if wire == "openai_responses":  # a stored item named by id: the item this case's answers gave
                parsed = dict(resolve_item_references(parsed, [p.body for p in self.played]))
            turn = play.turn(wire, urlsplit(raw_path).path, parsed)
        except Exception as exc:  # the body is not that wire's request: the client's defect, answered
            status, headers, error = encoder.invalid_request(
                f"cannot read the request as {wire}: {exc}", _bare_context(wire, raw_path)
            )
            self._record_play(handler, number, wire, None, stream, None, status, error)
            _send_whole(handler, status, headers, error)
            return
        interaction = play.answer(wire, turn, stream)
        if interaction is None or interaction.response is None:
            message = (
                f"no recorded answer for this request (turn {turn}, read as the assistant messages in its history): "
                f"{play.describe(wire, stream)}"
            )
            status, headers, error = encoder.invalid_request(message, _bare_context(wire, raw_path))
            self._record_play(handler, number, wire, turn, stream, None, status, error)
            _send_whole(handler, status, headers, error)
            return
        response = interaction.response
        elsewhere = self._redirect_elsewhere(handler, response.status, response.headers)
        if elsewhere is not None:
            message = (
                f"{play.cassette.path}, interaction {interaction.index}: the recorded answer is a {response.status} "
                f"redirect to {elsewhere}, which would send the client off this loopback server; it is not served. "
                "Record the cassette again, or edit that interaction to the answer the redirect led to"
            )
            self._note(message)
            status, headers, error = encoder.invalid_request(message, _bare_context(wire, raw_path))
            status = REFUSED_REDIRECT_STATUS
            self._record_play(handler, number, wire, turn, stream, interaction.index, status, error, refused=message)
            _send_whole(handler, status, headers, error)
            return
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _NOT_REPLAYED]
        pieces = served_pieces(response, stream=stream and response.status < 400)
        self._record_play(
            handler, number, wire, turn, stream, interaction.index, response.status, b"".join(pieces), pieces
        )
        if stream and response.status < 400:
            _send_stream(handler, headers, pieces, cut=response.interrupted is not None)
        else:
            _send_whole(handler, response.status, headers, response.body)

    def _record_play(
        self,
        handler: _Handler,
        number: int,
        wire: str,
        turn: int | None,
        stream: bool,
        interaction: int | None,
        status: int,
        body: bytes,
        chunks: list[bytes] | None = None,
        refused: str | None = None,
    ) -> None:
        answer = PlayedAnswer(
            refused=refused,
            seconds=time.perf_counter() - handler.started,
            request=number,
            wire=wire,
            turn=turn,
            stream=stream,
            interaction=interaction,
            status=status,
            body=body,
            chunks=tuple(chunks or ()),
        )
        with self._lock:
            self._played.append(answer)
            self._kept_bytes += _played_bytes(answer)
            self._trim()

    def _redirect_elsewhere(self, handler: _Handler, status: int, headers: Mapping[str, str]) -> str | None:
        """Where a recorded redirect would send the client, when that is not this server (its own
        ``http://`` host and port on loopback, or a relative ``Location``); None when it stays here
        or the answer is no redirect."""
        if not 300 <= status < 400:
            return None
        location = next((value for name, value in headers.items() if name.lower() == "location"), None)
        if location is None:
            return None
        target = urlsplit(urljoin(f"{self.base_url}{handler.path}", location.strip()))
        try:
            port = target.port if target.port is not None else {"http": 80, "https": 443}.get(target.scheme)
        except ValueError:  # a port that is not a number
            port = None
        if target.scheme == "http" and is_loopback(target.hostname or "") and port == self.port:
            return None
        return repr(location)

    def _trim(self) -> None:
        """Drop the oldest requests and played answers past ``max_requests`` or ``max_log_bytes`` (lock held)."""
        while len(self._requests) > self.max_requests:
            self._kept_bytes -= len(self._requests.popleft().body)
        while len(self._played) > self.max_requests:
            self._kept_bytes -= _played_bytes(self._played.popleft())
        while self._kept_bytes > self.max_log_bytes and (self._requests or self._played):
            older_request = bool(self._requests) and (
                not self._played or self._requests[0].number <= self._played[0].request
            )
            if older_request:
                self._kept_bytes -= len(self._requests.popleft().body)
            else:
                self._kept_bytes -= _played_bytes(self._played.popleft())

    def _plan(self, wire: str, raw_path: str, body: bytes) -> tuple[WireContext, Reply]:
        """The context and the reply for a request, or ``_BadRequest`` saying why there is none."""
        try:
            parsed = json.loads(body) if body else None
        except ValueError as exc:
            raise _Refused(not_json(wire, body, exc)) from exc  # the provider's own words for it
        if not isinstance(parsed, dict):
            raise _BadRequest(f"the request body must be a JSON object (a {wire} request)")
        prompt = _prompt_formats.detect_format(parsed) if wire == "openai_chat" else None
        reader = prompt or wire  # a prompt format's history holds its calls and results as text
        validating = self.validating and prompt is None
        try:
            request = for_format(reader).request_from_wire(parsed, path=raw_path)
        except Exception as exc:  # any adapter complaint: the request is not that wire's shape
            found = refusal(wire, parsed, None) if validating else None
            if found is not None:  # what the provider says of it (a schema that is not an object)
                raise _Refused(found) from exc
            raise _BadRequest(f"cannot read the request as {reader}: {exc}") from exc
        if validating and (found := refusal(wire, parsed, request)) is not None:
            raise _Refused(found)
        turn = sum(1 for message in request.messages if message.role == "assistant")
        script = self.script or self._played_scenario(wire, request, turn, prompt) or _DEFAULT_SCRIPT
        previous = parsed.get("previous_response_id") if wire == "openai_responses" else None
        if isinstance(previous, str):
            with self._lock:
                seen = self._responses.get(previous)
                if seen is not None and self._script is None and seen[0] in self._scripts:
                    script = self._scripts[seen[0]]  # play_scenarios: the scenario that response played
            if seen is not None and seen[0] == script.scenario_id:
                turn += seen[1] + 1  # a stateful Responses client sends only the new items
        url = urlsplit(raw_path)
        stream = _is_stream(wire, url.path, parsed)
        sse = "sse" in parse_qs(url.query).get("alt", [])
        tool_names = tuple(t.name for t in request.tools)
        ctx = WireContext(
            wire=wire,
            scenario_id=script.scenario_id,
            turn=turn,
            model=request.model,
            stream=stream,
            request=parsed,
            tool_names=tool_names,
            sse=sse,
            prompt_format=prompt,
        )
        if script is _DEFAULT_SCRIPT:
            reply = DEFAULT_REPLY
        elif turn >= len(script.replies):
            raise _BadRequest(
                f"scenario {script.scenario_id!r} has {len(script.replies)} turn(s) but this request is turn {turn} "
                f"(it holds {turn} assistant message(s)); the conversation went past the script"
            )
        else:
            reply = script.replies[turn]
        if prompt is not None:
            ignored = sorted(set(reply.quirks) - _prompt_formats.KNOWN_QUIRKS)
            if ignored:
                self._note(
                    f"{ctx.scenario_id} turn {turn}: quirk(s) {', '.join(ignored)} have no effect on a {prompt} "
                    "prompt-format reply (its calls are text), ignored"
                )
            reply = _prompt_formats.prompt_reply(prompt, reply, parsed)
        return ctx, reply

    def _played_scenario(self, wire: str, request: Request, turn: int, prompt: str | None) -> EmulatorScript | None:
        """``play_scenarios``: the script of the scenario this request belongs to, None for none
        (the default reply), or ``_BadRequest`` when it matches scenarios whose replies differ."""
        with self._lock:
            book, scripts = self._book, self._scripts
        if book is None or prompt is not None:
            return None
        found = book.find(wire, request, turn, same=_same_content)
        if isinstance(found, Ambiguous):
            raise _BadRequest(
                f"this request matches scenarios {' and '.join(repr(s) for s in found.scenario_ids)} (the same first "
                f"request) and the rest of it does not tell them apart, but their replies for turn {found.turn} "
                "differ; "
                "play one of them (conformance emulator --scenario ID) or leave the other out of --play-scenarios"
            )
        if isinstance(found, Found):
            if found.also and self._shape_differs(wire, turn, found):
                others = ", ".join(map(repr, found.also))
                self._note(
                    f"{wire} turn {turn}: the request matches {found.scenario.id!r} and {others} (the same request "
                    f"so far, the same reply in other provider quirks); answered as {found.scenario.id!r}"
                )
            return scripts[found.scenario.id]
        return None

    def _shape_differs(self, wire: str, turn: int, found: Found) -> bool:
        """Do the scenarios ``found`` names play their common reply in different shapes on ``wire``
        (quirks the wire knows)?"""
        encoder = ENCODERS[wire]
        known = encoder.KNOWN_QUIRKS | SERVER_QUIRKS | ERROR_QUIRKS.get(wire, frozenset())
        with self._lock:
            scripts = [self._scripts[i] for i in (found.scenario.id, *found.also)]
        shapes = {
            tuple(known_quirks_only(s.replies[turn], known).quirks) if turn < len(s.replies) else None for s in scripts
        }
        return len(shapes) > 1

    def _answer(self, handler: _Handler, encoder: WireEncoder, ctx: WireContext, reply: Reply) -> None:
        unknown = sorted(set(reply.quirks) - encoder.KNOWN_QUIRKS - SERVER_QUIRKS - ERROR_QUIRKS.get(ctx.wire, set()))
        if unknown:
            self._note(
                f"{ctx.scenario_id} turn {ctx.turn}: quirk(s) {', '.join(unknown)} unknown for {ctx.wire}, ignored "
                f"(known: {', '.join(sorted(encoder.KNOWN_QUIRKS))})"
            )
        fault = reply.fault
        if fault is not None and fault.kind in HTTP_FAULTS and fault.kind != "malformed_body":
            _send_whole(handler, *_retry_delay_form(encoder.error_response(fault, ctx), reply.quirks, ctx.wire))
            return
        if ctx.wire == "openai_responses":
            with self._lock:
                self._responses[_openai_responses.response_id(ctx)] = (ctx.scenario_id, ctx.turn)
                if len(self._responses) > _MAX_RESPONSE_IDS:  # the oldest id a client may still continue from goes
                    del self._responses[next(iter(self._responses))]
        headers = encoder.response_headers(ctx)
        if not ctx.stream:
            if fault is not None and fault.kind in STREAM_FAULTS:
                self._note(f"{ctx.scenario_id} turn {ctx.turn}: fault {fault.kind} applies to streams; answered whole")
            body = encoder.dump_body(encoder.response_body(reply, ctx))
            if fault is not None and fault.kind == "malformed_body":
                body = body[: len(body) // 2]  # a 200 whose body is not JSON: the document stops half-way
            _send_whole(handler, 200, headers, body)
            return
        events, cut = _stream_plan(encoder, reply, ctx)
        if "unterminated_last_event" in reply.quirks and events and not cut:
            events[-1] = _unterminated(events[-1])
        _send_stream(handler, headers, events, cut=cut)


SERVER_QUIRKS = frozenset({"unterminated_last_event"})
"""Quirks every wire knows: ``unterminated_last_event`` sends the stream's last event without the
blank line that ends it (an NDJSON stream: its last line without the newline), as servers and
proxies that close right after the final ``data:`` line do (openai/openai-node#2725,
google-gemini/gemini-cli#29059): a client that never flushes its SSE decoder at the end of the
body loses that event (for Gemini the one with ``finishReason``)."""


ERROR_QUIRKS: Mapping[str, frozenset[str]] = {
    "openai_chat": frozenset({"retry_after_ms"}),
    "openai_responses": frozenset({"retry_after_ms"}),
    "anthropic": frozenset({"retry_after_ms"}),
    "gemini": frozenset({"retry_delay_in_body"}),
}
"""Quirks of an error answer, per wire (the form its retry delay takes): ``retry_after_ms`` adds
``retry-after-ms`` with the exact delay and rounds ``retry-after`` up to whole seconds, as Azure
OpenAI sends them (the OpenAI and Anthropic SDKs read ``retry-after-ms`` first);
``retry_delay_in_body`` drops ``retry-after``, leaving only ``RetryInfo.retryDelay`` in the body, as
the Gemini API sends a 429."""


def _retry_delay_form(answer: ErrorAnswer, quirks: tuple[str, ...], wire: str) -> ErrorAnswer:
    """``answer`` with its retry delay in the form the quirks ask (``ERROR_QUIRKS``)."""
    status, headers, body = answer
    known = ERROR_QUIRKS.get(wire, frozenset())
    delay = next((value for name, value in headers if name.lower() == "retry-after"), None)
    if delay is None:
        return answer
    if "retry_after_ms" in quirks and "retry_after_ms" in known:
        seconds = float(delay)
        rest = [(n, v) for n, v in headers if n.lower() != "retry-after"]
        whole = str(math.ceil(seconds))
        headers = [*rest, ("retry-after", whole), ("retry-after-ms", str(round(seconds * 1000)))]
    if "retry_delay_in_body" in quirks and "retry_delay_in_body" in known:
        headers = [(n, v) for n, v in headers if n.lower() != "retry-after"]
    return status, headers, body


def _played_bytes(answer: PlayedAnswer) -> int:
    return len(answer.body) + sum(map(len, answer.chunks))


def _unterminated(event: bytes) -> bytes:
    for end in (b"\r\n\r\n", b"\n\n", b"\r\r"):
        if event.endswith(end):
            return event[: -len(end) // 2]  # one line end left: the event's blank line is missing
    return event.rstrip(b"\r\n")  # an NDJSON line: no newline after it


def _stream_plan(encoder: WireEncoder, reply: Reply, ctx: WireContext) -> tuple[list[bytes], bool]:
    """The events to send for a streamed reply with its fault applied, and whether to drop the
    connection after them. The wire's terminator is never sent by a breaking fault: ``after`` is
    capped at the events before it."""
    events = encoder.stream_events(reply, ctx)
    fault = reply.fault
    if fault is None or fault.kind not in (*STREAM_FAULTS, "malformed_body"):
        return events, False
    body = len(events) - encoder.terminal_event_count(reply, ctx)
    after = fault.after if fault.after is not None else DEFAULT_AFTER.get(fault.kind, body)
    n = max(0, min(after, body))
    if fault.kind == "disconnect":
        return events[:n], True
    if fault.kind == "no_terminator":
        return events[:n], False
    if fault.kind == "error_event":
        return [
            *events[:n],
            encoder.stream_error_event(ctx, position=n),
            *encoder.stream_error_tail(ctx, position=n),
        ], False
    # malformed_body: an event whose data is not JSON, in the middle of an otherwise whole stream
    return [*events[:n], encoder.malformed_event(ctx, position=n), *events[n:]], False


def _is_stream(wire: str, path: str, body: Mapping[str, Any]) -> bool:
    if wire == "gemini":
        return path.endswith(":streamGenerateContent")
    if wire == "ollama":
        return body.get("stream") is not False  # Ollama streams by default (§5d)
    return body.get("stream") is True


def _bare_context(wire: str, raw_path: str) -> WireContext:
    """The context of a request that could not be read (for its error answer)."""
    url = urlsplit(raw_path)
    stream = wire == "gemini" and url.path.endswith(":streamGenerateContent")
    sse = "sse" in parse_qs(url.query).get("alt", [])
    return WireContext(wire=wire, scenario_id="", turn=0, model="", stream=stream, sse=sse)


def _too_deep(body: bytes) -> str | None:
    """Why a request body is refused for its nesting (past ``nesting_depth``, the bound cassettes
    have: a parser would exhaust the stack on it), or None."""
    limit = current_limits().nesting_depth
    if not nests_deeper(body, limit):
        return None
    return (
        f"the request body nests JSON more than {limit} levels deep (the limit nesting_depth={limit}); "
        f"no provider request does: send a shallower body, or start the emulator with {LIMITS_ENV_VAR}=nesting_depth=N "
        "(docs/limits.md)"
    )


def _same_content(a: Reply, b: Reply) -> bool:
    """Are two replies the same answer (text, reasoning, calls, finish, fault), whatever provider
    quirks shape them (``play_scenarios``: either is a right answer to the request)?"""
    return replace(a, quirks=()) == replace(b, quirks=())


def _refusal_answer(encoder: WireEncoder, found: Refusal, ctx: WireContext) -> ErrorAnswer:
    """A provider's refusal in the wire's error shape: OpenAI's envelope with its ``param`` and
    ``code``, the other wires' invalid-request body (``invalid_request``) with the status."""
    _, headers, body = encoder.invalid_request(found.message, ctx)
    if ctx.wire in ("openai_chat", "openai_responses"):
        body = openai_error(found.message, "invalid_request_error", param=found.param, code=found.code)
    return found.status, headers, body


def _generic_error(status: int, message: str) -> ErrorAnswer:
    """An error for a request no wire claims (OpenAI's envelope, the most widely understood)."""
    code = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}.get(status, "server_error")
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return status, [("content-type", "application/json")], json.dumps({"error": error}).encode()


# --------------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------------


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if "chunked" in handler.headers.get("transfer-encoding", "").lower():
        return _read_chunked(handler)
    try:
        length = int(handler.headers.get("content-length") or 0)
    except ValueError as exc:
        raise _BadRequest("the Content-Length header is not a number") from exc
    if length < 0 or length > _MAX_BODY:
        raise _BadRequest(f"a request body of {length} bytes is not accepted")
    return handler.rfile.read(length) if length else b""


def _read_chunked(handler: BaseHTTPRequestHandler) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = handler.rfile.readline(1024)
        try:
            size = int(line.split(b";", 1)[0].strip() or b"x", 16)
        except ValueError as exc:
            raise _BadRequest("a malformed chunk in a chunked request body") from exc
        if size == 0:
            while handler.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        total += size
        if total > _MAX_BODY:
            raise _BadRequest("the chunked request body is too large")
        parts.append(handler.rfile.read(size))
        handler.rfile.readline(1024)


def _send_whole(handler: BaseHTTPRequestHandler, status: int, headers: Headers, body: bytes) -> None:
    handler.send_response_only(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("content-length", str(len(body)))
    if handler.close_connection:  # tell the client, or it may reuse the connection being closed
        handler.send_header("connection", "close")
    handler.end_headers()
    handler.wfile.write(body)
    logger.debug("%s %s -> %d (%d bytes)", handler.command, handler.path, status, len(body))


def _send_stream(handler: BaseHTTPRequestHandler, headers: Headers, events: list[bytes], *, cut: bool) -> None:
    """A 200 with a chunked body, one HTTP chunk per event; ``cut`` drops the connection without
    the terminating ``0`` chunk (the client sees an incomplete chunked body)."""
    handler.send_response_only(200)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    try:
        for event in events:
            if event:  # an empty chunk would end the body
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        if cut:
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
        else:
            handler.wfile.write(b"0\r\n\r\n")
    except OSError as exc:  # the client went away: nothing more to send
        handler.close_connection = True
        logger.debug("client left during a stream: %s", exc)
    logger.debug(
        "%s %s -> 200 stream (%d events%s)", handler.command, handler.path, len(events), ", cut" if cut else ""
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "conformance-emulator"
    sys_version = ""
    disable_nagle_algorithm = True
    started = 0.0
    """When the request began to be read (``time.perf_counter``)."""
    timeout = 120  # an idle keep-alive connection is dropped after this

    @property
    def owner(self) -> Emulator:
        return cast("_Server", self.server).owner

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s - " + format, self.address_string(), *args)

    def do_POST(self) -> None:
        try:
            self.owner._handle(self)
        except OSError as exc:
            self.close_connection = True
            logger.debug("connection error while answering %s: %s", self.path, exc)
        except Exception:  # a bug in an encoder must not take the server down
            logger.exception("the emulator failed to answer %s %s", self.command, self.path)
            self.close_connection = True
            with contextlib.suppress(OSError):
                _send_whole(self, *_generic_error(500, "the emulator failed to answer this request (see its log)"))

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path not in ("", "/"):
            _send_whole(self, *_generic_error(404, f"no emulated endpoint at GET {path}; POST to: {_ENDPOINTS}"))
            return
        script = self.owner.script
        index = {
            "emulator": "conformance",
            "scenario": script.scenario_id if script is not None else None,
            "turns": len(script.replies) if script is not None else None,
            "endpoints": _ENDPOINTS,
        }
        _send_whole(self, 200, [("content-type", "application/json")], json.dumps(index, indent=2).encode())

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (a bad request line, an unsupported method) as JSON, not HTML."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # an unreadable request line: answer with a status line anyway
            self.request_version = "HTTP/1.1"
        with contextlib.suppress(OSError):
            _send_whole(self, *_generic_error(code, message or explain or f"HTTP {code}"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = BACKLOG

    def __init__(self, port: int, owner: Emulator) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind asks DNS for the host's FQDN; the address is all we need
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.debug("error on a connection from %s", client_address, exc_info=True)
