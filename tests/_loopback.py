"""A tiny scripted HTTP server on 127.0.0.1 (ephemeral port) for transport and recorder tests.

``LoopbackServer(routes)`` serves ``routes[(method, path)]`` = a list of ``Reply`` played in order
(the last one repeats). A streamed reply is sent with ``Transfer-Encoding: chunked``, one HTTP
chunk per piece; ``cut`` closes the socket after the pieces without the terminating chunk (a
broken stream). Every request is kept in ``requests`` (method, raw path, headers, body).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "Reply", "SeenRequest"]


@dataclass
class Reply:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    pieces: list[bytes] | None = None
    """Send the body chunked, one HTTP chunk per piece."""
    cut: bool = False
    hold: threading.Event | None = None
    """Wait for this event before answering (a silent server)."""


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class LoopbackServer:
    def __init__(self, routes: dict[tuple[str, str], list[Reply]], *, gate: threading.Event | None = None) -> None:
        self.routes = routes
        self.gate = gate
        """When set, a streamed reply waits for it after its first piece."""
        self.requests: list[SeenRequest] = []
        self._counts: dict[tuple[str, str], int] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                owner._serve(self)

            def do_GET(self) -> None:
                owner._serve(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        path = handler.path.split("?", 1)[0]
        self.requests.append(
            SeenRequest(handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body)
        )
        key = (handler.command, path)
        replies = self.routes.get(key)
        if not replies:
            handler.send_response(404)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", "2")
            handler.end_headers()
            handler.wfile.write(b"{}")
            return
        n = self._counts.get(key, 0)
        self._counts[key] = n + 1
        reply = replies[min(n, len(replies) - 1)]
        if reply.hold is not None:
            reply.hold.wait(30)
            return
        handler.send_response(reply.status)
        for name, value in reply.headers:
            handler.send_header(name, value)
        if reply.pieces is None:
            handler.send_header("content-length", str(len(reply.body)))
            handler.end_headers()
            handler.wfile.write(reply.body)
            return
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        for n, piece in enumerate(reply.pieces):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
            if n == 0 and self.gate is not None:
                self.gate.wait(30)
        if reply.cut:
            handler.wfile.write(b"40\r\nshort")
            handler.wfile.flush()
            handler.close_connection = True
            return
        handler.wfile.write(b"0\r\n\r\n")
