"""The HTTP edge: send a ``WireRequest`` to a provider (or the emulator) with httpx, and keep a log.

A ``Transport`` is the one object the runner and the recorder pass around. It joins the base URL
and the request path, places the API key the way the wire format expects it (``auth_headers``),
sends non-streamed (``send`` -> ``HTTPResponse``) or streamed requests (``stream`` -> a
``StreamResponse`` whose ``chunks()`` yields the raw bytes as they arrive), and appends every
exchange it made to ``exchanges`` (request method/URL/headers/body, response status/headers/body
bytes and the chunk boundaries) so checks can assert on the wire and the recorder can write it.

httpx exceptions never leave this module: ``_translate`` maps them into ``conformance.errors``
(``TransportConnectError``, ``TransportTimeoutError``, ``StreamInterruptedError``,
``TransportError``). A stream broken mid-way is still logged, with the bytes that did arrive and
``error`` set.

Bodies are decoded here, not by httpx: ``gzip`` and ``deflate`` (the encodings asked for in
``accept-encoding``; any other is passed through as httpx does without its optional decoders),
inflated at most ``_STEP`` bytes at a time. With ``max_body`` (``record --max-body``) a body whose
decoded size passes that many bytes raises ``TransportError`` as soon as it does, so a 4 MB gzip
bomb is cut at the bound instead of being inflated whole; the exchange is logged with its status,
``error`` set and no body, and ``too_large`` says what happened.

Replay plugs in below httpx: pass ``backend=`` an ``httpx.BaseTransport`` (``conformance.traffic.recorder``
has one serving a cassette), and no socket is opened.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Any

import httpx

from conformance.adapters.base import WireRequest
from conformance.errors import (
    StreamInterruptedError,
    TransportConnectError,
    TransportError,
    TransportTimeoutError,
    UsageError,
)

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_TIMEOUT",
    "STREAM_EXTENSION",
    "WIRE_AUTH",
    "Exchange",
    "HTTPResponse",
    "StreamResponse",
    "Transport",
    "auth_headers",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds for connect, read, write and pool (a read timeout is per chunk, not per stream)."""

ACCEPT_ENCODING = "gzip, deflate"
"""The encodings the transport asks for and decodes itself, as they arrive (bounded)."""

_STEP = 64 * 1024
"""Decoded bytes one step of inflating may produce: a bomb is counted as it inflates."""

STREAM_EXTENSION = "conformance.stream"
"""The httpx request extension that tells a replay backend whether the caller streams."""

WIRE_AUTH: Mapping[str, str] = {
    "openai_chat": "authorization",
    "openai_responses": "authorization",
    "ollama": "authorization",
    "anthropic": "x-api-key",
    "gemini": "x-goog-api-key",
}
"""The header that carries the API key, per wire format (wire-formats.md; ``Bearer`` for authorization)."""


def auth_headers(wire: str, api_key: str | None) -> dict[str, str]:
    """The header carrying ``api_key`` for ``wire``; empty when there is no key.

    openai_chat / openai_responses / ollama: ``Authorization: Bearer KEY``; anthropic:
    ``x-api-key: KEY`` (its ``anthropic-version`` comes with the ``WireRequest``); gemini:
    ``x-goog-api-key: KEY``. Raises ``UsageError`` for an unknown wire format.
    """
    try:
        name = WIRE_AUTH[wire]
    except KeyError:
        raise UsageError(f"unknown wire format {wire!r}; valid ones: {', '.join(sorted(WIRE_AUTH))}") from None
    if not api_key:
        return {}
    return {name: f"Bearer {api_key}" if name == "authorization" else api_key}


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One request/response as it went over the wire (secrets included: scrub before writing)."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    """As sent by httpx, lower-cased names, in order."""
    request_body: bytes
    stream: bool
    """Whether the caller streamed the response."""
    status: int | None = None
    """None when no response arrived (connect error, timeout before the headers)."""
    response_headers: tuple[tuple[str, str], ...] = ()
    response_body: bytes = b""
    """The body as received (decoded from gzip/deflate by httpx)."""
    chunks: tuple[bytes, ...] = ()
    """The body's pieces in arrival order (streams only)."""
    error: str | None = None
    """What broke the exchange, when something did (``StreamInterruptedError: ...``)."""

    @property
    def request_json(self) -> Any:
        """The request body parsed as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.request_body) if self.request_body else None
        except ValueError:
            return None


@dataclass(frozen=True, kw_only=True)
class HTTPResponse:
    """A non-streamed response."""

    status: int
    headers: Mapping[str, str]
    """Lower-cased names; repeated headers joined with ``", "``."""
    body: bytes


@dataclass(kw_only=True)
class StreamResponse:
    """A streamed response: status and headers now, the body through ``chunks()``.

    Use it as a context manager (``with transport.stream(req) as response``); the exchange is
    logged when the body has been read or the response is closed.
    """

    status: int
    headers: Mapping[str, str]
    _response: httpx.Response
    _done: Any
    _url: str
    _max_body: int | None = None
    _too_large: Callable[[str], TransportError] | None = None
    _received: list[bytes] = field(default_factory=list)
    _closed: bool = False

    def chunks(self) -> Iterator[bytes]:
        """The raw body bytes, piece by piece as they arrive. Raises ``StreamInterruptedError``
        or ``TransportTimeoutError`` when the body breaks (what arrived is still logged), and
        ``TransportError`` past ``max_body`` (what arrived is dropped)."""
        try:
            for piece in _decoded(self._response, self._max_body):
                self._received.append(piece)
                yield piece
        except _TooLarge as exc:
            self._received.clear()  # a body past the bound is not kept: memory stays at the bound
            error = self._too_large(str(exc)) if self._too_large else TransportError(str(exc), url=self._url)
            self._finish(f"{type(error).__name__}: {error}")
            raise error from None
        except httpx.HTTPError as exc:
            error = _translate(exc, self._url)
            self._finish(f"{type(error).__name__}: {error}")
            raise error from exc
        self._finish(None)

    def read(self) -> bytes:
        """The whole remaining body."""
        return b"".join(self.chunks())

    def close(self) -> None:
        self._finish(None)

    def _finish(self, error: str | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._response.close()
        self._done(tuple(self._received), error)

    def __enter__(self) -> StreamResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# The transport
# --------------------------------------------------------------------------------------------


class Transport:
    """Sends ``WireRequest``s to one base URL for one wire format, and logs every exchange.

    ``base_url`` is what the path is appended to (``http://127.0.0.1:PORT`` or
    ``https://api.openai.com``; no trailing slash needed). ``headers`` are extra headers sent with
    every request (an ``openai-organization``); ``backend`` replaces httpx's network transport
    (replay). The API key is kept only in the headers sent; ``exchanges`` hold what was sent, so
    scrub before writing them anywhere.
    """

    def __init__(
        self,
        base_url: str,
        *,
        wire: str,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        backend: httpx.BaseTransport | None = None,
        max_body: int | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.wire = wire
        self._auth = auth_headers(wire, api_key)
        self._headers = dict(headers or {})
        self.max_body = max_body
        """Decoded bytes one response body may have (None: no bound)."""
        self.too_large: str | None = None
        """The first body cut at ``max_body``: which request and the bound (None: none was)."""
        self.exchanges: list[Exchange] = []
        # No cookie jar: a ``set-cookie`` from one response must not ride along on the next request.
        jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        self._client = httpx.Client(
            timeout=timeout, transport=backend, follow_redirects=False, trust_env=False, cookies=jar
        )

    def url(self, request: WireRequest) -> str:
        """The full URL of ``request``."""
        path = request.path if request.path.startswith("/") else f"/{request.path}"
        return f"{self.base_url}{path}"

    def send(self, request: WireRequest) -> HTTPResponse:
        """Send ``request`` and read the whole response (any status; errors are not raised).
        ``TransportError`` when the body passes ``max_body``."""
        built = self._build(request, stream=False)
        url = str(built.url)
        response: httpx.Response | None = None
        try:
            response = self._client.send(built, stream=True)
            body = b"".join(_decoded(response, self.max_body))
        except _TooLarge as exc:
            error = self._cut(built, str(exc))
            self._log(built, stream=False, response=response, error=f"{type(error).__name__}: {error}")
            raise error from None
        except httpx.HTTPError as exc:  # logged as before the body was read here: no response
            error = _translate(exc, url)
            self._log(built, stream=False, error=f"{type(error).__name__}: {error}")
            raise error from exc
        finally:
            if response is not None:
                response.close()
        headers = _headers(response.headers)
        self._log(built, stream=False, response=response, body=body)
        return HTTPResponse(status=response.status_code, headers=dict(_joined(headers)), body=body)

    def stream(self, request: WireRequest) -> StreamResponse:
        """Send ``request`` and return once the status and headers are in; read ``chunks()``."""
        built = self._build(request, stream=True)
        url = str(built.url)
        try:
            response = self._client.send(built, stream=True)
        except httpx.HTTPError as exc:
            error = _translate(exc, url)
            self._log(built, stream=True, error=f"{type(error).__name__}: {error}")
            raise error from exc

        def done(chunks: tuple[bytes, ...], error: str | None) -> None:
            self._log(built, stream=True, response=response, body=b"".join(chunks), chunks=chunks, error=error)

        return StreamResponse(
            status=response.status_code,
            headers=dict(_joined(_headers(response.headers))),
            _response=response,
            _done=done,
            _url=url,
            _max_body=self.max_body,
            _too_large=lambda detail: self._cut(built, detail),
        )

    def _cut(self, built: httpx.Request, detail: str) -> TransportError:
        """The error of a body cut at ``max_body``; the first one is kept in ``too_large``."""
        what = f"{built.method} {built.url.path}: {detail}"
        self.too_large = self.too_large or what
        return TransportError(detail, url=str(built.url))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Transport:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _build(self, request: WireRequest, *, stream: bool) -> httpx.Request:
        body = json.dumps(request.body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream" if stream else "application/json",
            "accept-encoding": ACCEPT_ENCODING,
        }
        headers.update(self._headers)
        headers.update({k.lower(): v for k, v in request.headers.items()})
        headers.update(self._auth)
        return self._client.build_request(
            request.method, self.url(request), content=body, headers=headers, extensions={STREAM_EXTENSION: stream}
        )

    def _log(
        self,
        built: httpx.Request,
        *,
        stream: bool,
        response: httpx.Response | None = None,
        body: bytes = b"",
        chunks: tuple[bytes, ...] = (),
        error: str | None = None,
    ) -> None:
        self.exchanges.append(
            Exchange(
                method=built.method,
                url=str(built.url),
                request_headers=_headers(built.headers),
                request_body=built.content,
                stream=stream,
                status=response.status_code if response is not None else None,
                response_headers=_headers(response.headers) if response is not None else (),
                response_body=body,
                chunks=chunks,
                error=error,
            )
        )


class _TooLarge(Exception):
    """A body past ``max_body`` (its message says so); becomes a ``TransportError`` in ``Transport``."""


class _Inflater:
    """One ``gzip`` or ``deflate`` layer, as httpx decodes it (a first ``deflate`` piece that is not
    zlib-wrapped is raw deflate; bytes after the first gzip member are ignored), giving at most
    ``_STEP`` bytes per step so the caller counts the size as it grows."""

    def __init__(self, gzip: bool) -> None:
        self.gzip = gzip
        self.first = True
        self.inflate = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        first, self.first = self.first, False
        try:
            piece = self.inflate.decompress(data, _STEP)
        except zlib.error as exc:
            if first and not self.gzip:
                self.inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                yield from self.feed(data)
                return
            raise httpx.DecodingError(f"content-encoding {'gzip' if self.gzip else 'deflate'}: {exc}") from exc
        while True:
            if piece:
                yield piece
            if not self.inflate.unconsumed_tail or self.inflate.eof:  # bytes after the end are ignored
                return
            try:
                piece = self.inflate.decompress(self.inflate.unconsumed_tail, _STEP)
            except zlib.error as exc:
                raise httpx.DecodingError(f"content-encoding {'gzip' if self.gzip else 'deflate'}: {exc}") from exc

    def flush(self) -> Iterator[bytes]:
        try:
            rest = self.inflate.flush()
        except zlib.error as exc:  # pragma: no cover - zlib's flush does not raise on a short body
            raise httpx.DecodingError(str(exc)) from exc
        for start in range(0, len(rest), _STEP):
            yield rest[start : start + _STEP]


def _decoded(response: httpx.Response, max_body: int | None) -> Iterator[bytes]:
    """The body of ``response`` decoded (its ``content-encoding`` layers of gzip and deflate, last
    applied first; others passed through, as httpx does), piece by piece as the raw bytes arrive.
    Raises ``_TooLarge`` as soon as the decoded size passes ``max_body``."""
    layers = [
        _Inflater(gzip=value == "gzip")
        for value in (v.strip().lower() for v in reversed(response.headers.get_list("content-encoding", True)))
        if value in ("gzip", "deflate")
    ]
    pieces: Iterable[bytes] = (raw for raw in response.iter_raw() if raw)
    for layer in layers:
        pieces = _through(layer, pieces)
    total = 0
    for piece in pieces:
        total += len(piece)
        if max_body is not None and total > max_body:
            raise _TooLarge(f"the response body passed {max_body:,} bytes (decoded size; the bound on one body)")
        yield piece


def _through(layer: _Inflater, pieces: Iterable[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        yield from layer.feed(piece)
    yield from layer.flush()


def _headers(headers: httpx.Headers) -> tuple[tuple[str, str], ...]:
    return tuple((k.lower(), v) for k, v in headers.multi_items())


def _joined(headers: tuple[tuple[str, str], ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in headers:
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _translate(exc: httpx.HTTPError, url: str) -> TransportError:
    """The ``conformance.errors`` class for an httpx exception (the translation seam)."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return TransportTimeoutError(f"timed out: {type(exc).__name__}: {detail}", url=url)
    if isinstance(exc, httpx.ConnectError):
        return TransportConnectError(f"cannot connect: {detail}", url=url)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.DecodingError):
        return StreamInterruptedError(f"the response broke off: {type(exc).__name__}: {detail}", url=url)
    return TransportError(f"HTTP transport failed: {type(exc).__name__}: {detail}", url=url)
