"""Streamable HTTP plumbing for MCP sessions: bounded responses, headers, ports, the server process.

The session itself speaks the SDK's ``streamable_http_client`` (``conformance.mcp_bridge.client``);
this module holds what the SDK leaves to its caller (MCP 2025-11-25, basic/transports, "Streamable
HTTP"):

- **Bounded bytes.** The SDK caps one SSE event (``max_sse_event_size``, 1 MiB by default) but reads
  a JSON response whole (``StreamableHTTPTransport._handle_json_response``: ``response.aread()``), and
  an SSE stream of small events for as long as it lasts. ``BoundedTransport`` wraps httpx's transport
  and cuts every response body past ``MAX_RESPONSE_BYTES`` (a ``ResponseTooLarge``, noted in
  ``overflow`` so the session can name the bound), so a server streaming gigabytes costs at most that.
- **No proxy, no redirect elsewhere.** The client ignores ``HTTP(S)_PROXY`` (``trust_env=False``): a
  loopback server is reached directly. Redirects are the SDK's: it follows one only within the
  endpoint's origin and answers any other with an error naming the location
  (``mcp.shared._httpx_utils.stream_within_origin``).
- **Headers** (``resolve_headers``): ``${VAR}`` in a value is read from the environment when the session
  opens; a missing variable is an error naming the variable, never the value.
- **``{port}``** (``free_port``, ``with_port``): one free loopback port, put into the command line and
  the URL, so a server the bridge starts listens where the session connects.
- **The server process** (``HttpServerProcess``): a command started beside a URL runs behind the same
  parent-death guard as a stdio server (``_spawn``), in its own process group, stderr to a
  ``StderrLog``; ``wait_ready`` polls the URL's TCP port until it accepts or the start timeout ends;
  ``stop`` sends SIGTERM to the group, waits ``STOP_GRACE`` seconds, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from urllib.parse import urlsplit

import httpx2

from conformance.mcp_bridge._spawn import StderrLog, guarded_argv

__all__ = [
    "MAX_RESPONSE_BYTES",
    "PORT_PLACEHOLDER",
    "STOP_GRACE",
    "BoundedTransport",
    "HttpServerProcess",
    "MissingVariableError",
    "ResponseTooLarge",
    "free_port",
    "is_loopback",
    "resolve_headers",
    "shown_url",
    "with_port",
]

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""Bytes one HTTP response from an MCP server may carry (a JSON answer or a whole SSE stream)."""
PORT_PLACEHOLDER = "{port}"
"""In ``command``/``args``/``url``: a free loopback port chosen when the server starts."""
STOP_GRACE = 2.0
"""Seconds a server started for a URL has to exit after SIGTERM before SIGKILL."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_POLL_SECONDS = 0.05


class MissingVariableError(KeyError):
    """A header names ``${VAR}`` and the environment has no ``VAR``."""

    def __init__(self, header: str, variable: str) -> None:
        super().__init__(variable)
        self.header = header
        self.variable = variable


def resolve_headers(headers: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``headers`` with every ``${VAR}`` replaced by the environment's ``VAR`` (``MissingVariableError``
    naming the header and the variable when it is not set)."""
    env = os.environ if environ is None else environ
    resolved: dict[str, str] = {}
    for name, template in headers.items():

        def value(match: re.Match[str], header: str = name) -> str:
            variable = match.group(1)
            if variable not in env:
                raise MissingVariableError(header, variable)
            return env[variable]

        resolved[name] = _VARIABLE.sub(value, template)
    return resolved


def is_loopback(url: str) -> bool:
    """Is ``url``'s host a loopback address (127.0.0.0/8, ::1) or ``localhost``?"""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def shown_url(url: str) -> str:
    """``url`` as errors and reports show it: without userinfo, query or fragment (they can carry secrets)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "(an unreadable URL)"
    return f"{parts.scheme}://{netloc}{parts.path}"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the system's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def with_port(words: Sequence[str], port: int) -> tuple[str, ...]:
    """``words`` with ``{port}`` replaced by ``port``."""
    return tuple(word.replace(PORT_PLACEHOLDER, str(port)) for word in words)


class ResponseTooLarge(httpx2.ReadError):
    """A response body went past the bound; raised while reading it."""


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, owner: BoundedTransport, what: str) -> None:
        self._inner = inner
        self._owner = owner
        self._what = what

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._owner.max_bytes:
                message = f"{self._what}: the response went past {self._owner.max_bytes:,} bytes and was cut"
                self._owner.overflow = message
                raise ResponseTooLarge(message)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """httpx's transport, each response body cut past ``max_bytes`` (``overflow`` says which)."""

    def __init__(self, *, max_bytes: int | None = None) -> None:
        self.max_bytes = MAX_RESPONSE_BYTES if max_bytes is None else max_bytes
        self.overflow: str | None = None
        """The first response that went past the bound, described; None while none has."""
        self._inner = httpx2.AsyncHTTPTransport(trust_env=False)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        what = f"{request.method} {shown_url(str(request.url))}"
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_BoundedStream(stream, self, what),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class HttpServerProcess:
    """A server command started for a URL (``command`` + ``url``): started, awaited, stopped."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None, stderr: StderrLog) -> None:
        self.argv = tuple(argv)
        self.stderr = stderr
        self.process = subprocess.Popen(  # the trust gate decided this command may run
            guarded_argv(self.argv),
            stdin=subprocess.DEVNULL,
            stdout=stderr.file,  # a server's banner and logs go with its stderr, never to our console
            stderr=stderr.file,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )

    def wait_ready(self, url: str, *, timeout: float) -> str | None:
        """Wait until ``url``'s port accepts connections; None when it does, else why not (the
        process exited, or ``timeout`` seconds passed)."""
        parts = urlsplit(url)
        host = parts.hostname or "127.0.0.1"
        port = parts.port or (443 if parts.scheme == "https" else 80)
        deadline = time.monotonic() + timeout
        while True:
            code = self.process.poll()
            if code is not None:
                return f"the server command exited with status {code} before {shown_url(url)} answered"
            try:
                with socket.create_connection((host, port), timeout=min(1.0, max(0.01, deadline - time.monotonic()))):
                    return None
            except OSError:
                pass
            if time.monotonic() >= deadline:
                return f"{shown_url(url)} did not accept connections within {timeout:g} s of starting the server"
            time.sleep(_POLL_SECONDS)

    def stop(self) -> None:
        """SIGTERM to the process group, ``STOP_GRACE`` seconds, then SIGKILL."""
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
        self._signal(signal.SIGKILL)  # what the server left behind in its group

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)
