"""A hostile HTTP server on 127.0.0.1 that writes raw bytes (issue 27, live recording bounds).

``RawServer(answer)`` accepts connections on an ephemeral port, reads each request (its head, then
``content-length`` bytes of body) and calls ``answer(peer)``, which writes whatever it likes
through ``peer.send``: a status line one byte at a time, a body that never ends, a gzip bomb,
broken framing. The connection is closed when ``answer`` returns (one request per connection).

``sent`` counts the bytes every answer wrote, ``requests`` the requests read and ``active`` the
answers still running; ``idle(timeout)`` waits until none is. ``peer.send`` raises ``OSError``
once the client has gone away, so an endless answer ends as soon as its client hangs up; an
endless answer also ends when the server stops (``peer.stopped``).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Peer", "RawServer", "chunk", "deflate_bomb", "gzip_bomb_answer", "head"]


def head(status: str = "200 OK", headers: list[tuple[str, str]] | None = None) -> bytes:
    """A status line and headers, ending with the blank line."""
    lines = [f"HTTP/1.1 {status}"] + [f"{name}: {value}" for name, value in headers or []]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    """One chunk of a ``Transfer-Encoding: chunked`` body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


@dataclass
class Peer:
    """One request as read, and the way to answer it."""

    server: RawServer
    sock: socket.socket
    number: int
    """Which request of the server this is (0, 1, ...)."""
    head: bytes
    body: bytes
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def streamed(self) -> bool:
        return isinstance(self.json, dict) and bool(self.json.get("stream"))

    @property
    def stopped(self) -> bool:
        return self.server.stopping.is_set()

    def send(self, data: bytes) -> None:
        """Write ``data`` (counted in ``server.sent``); ``OSError`` once the client is gone."""
        self.sock.sendall(data)
        with self.server.lock:
            self.server.sent += len(data)

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when the server stops."""
        self.server.stopping.wait(seconds)


class RawServer:
    def __init__(self, answer: Callable[[Peer], None], *, max_head: int = 1 << 20) -> None:
        self.answer = answer
        self.max_head = max_head
        self.lock = threading.Lock()
        self.sent = 0
        self.requests = 0
        self.active = 0
        self.errors: list[str] = []
        """Exceptions of ``answer`` other than the client going away (a broken test server)."""
        self.stopping = threading.Event()
        self._idle = threading.Condition(self.lock)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._thread = threading.Thread(target=self._accept, daemon=True, name="raw-server")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(10)
        self.idle(10)

    def idle(self, timeout: float) -> bool:
        """Wait until no answer is running (at most ``timeout`` seconds); whether none is."""
        with self._idle:
            return self._idle.wait_for(lambda: self.active == 0, timeout)

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self.lock:
                self.active += 1
            threading.Thread(target=self._serve, args=(sock,), daemon=True, name="raw-answer").start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            sock.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data and len(data) < self.max_head:
                piece = sock.recv(65536)
                if not piece:
                    return
                data += piece
            request_head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in request_head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(body) < length:
                piece = sock.recv(65536)
                if not piece:
                    return
                body += piece
            with self.lock:
                number = self.requests
                self.requests += 1
            self.answer(Peer(self, sock, number, request_head, body))
        except OSError:
            pass  # the client went away: what an endless answer waits for
        except Exception as exc:  # a broken answer: the test says so
            with self.lock:
                self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            with contextlib.suppress(OSError):
                sock.close()
            with self._idle:
                self.active -= 1
                self._idle.notify_all()


def deflate_bomb(total: int, *, gzip: bool = True) -> bytes:
    """One gzip (or zlib) member of ``total`` zero bytes, about ``total / 1000`` bytes long, built in
    milliseconds: after a full flush the compressor starts each MiB afresh, so one MiB's bytes are
    repeated (the trailer is left out: a decoder reaches it only after inflating everything)."""
    import zlib

    mib = b"\0" * (1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31 if gzip else 15)
    first = compressor.compress(mib) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(mib) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(mib) + compressor.flush(zlib.Z_FULL_FLUSH) == again
    return first + again * (total // len(mib) - 1)


def gzip_bomb_answer(inflated: int) -> Callable[[Peer], None]:
    """A server's answer: a JSON body, gzip-encoded, that inflates to ``inflated`` bytes (about a
    thousandth of that on the wire), sent until the client hangs up at its bound."""
    bomb = deflate_bomb(inflated)

    def answer(peer: Peer) -> None:
        headers = [("content-type", "application/json"), ("content-encoding", "gzip")]
        peer.send(head(headers=[*headers, ("content-length", str(len(bomb)))]))
        with contextlib.suppress(OSError):  # the client hangs up at its bound
            peer.send(bomb)

    return answer
