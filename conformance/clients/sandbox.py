"""The network of a ``certify --python`` child: a namespace of its own, and a relay to the suite's server.

On Linux the child enters a new network namespace at its very start (``enter_namespace``), before a
thread exists and before the driver is loaded: ``unshare(CLONE_NEWNET)`` as root, else
``unshare(CLONE_NEWUSER | CLONE_NEWNET)`` mapping its own user and group ids; then it brings its own
``lo`` up. In there the only route is loopback, so every process the driver starts (``curl``, a
Python run with ``-I``, C code opening sockets by itself) finds any other address unreachable
(``ENETUNREACH`` at once: nothing leaves the machine). Where neither call is allowed (no user
namespaces, not Linux) the child keeps the audit-hook guard alone
(``conformance.traffic.network_guard``) and says why.

The namespace's loopback is its own: the suite's server listening on ``127.0.0.1:PORT`` of the host
is not there. ``ChildRelay`` (in the child) listens on each loopback ``host:port`` of a call's
``base_url`` inside the namespace and hands every connection it accepts to the suite through a Unix
socket bound to a path (such a socket is reached by its path from any network namespace), first a
line naming the address; ``RelayServer`` (in the suite, in the child's private 0700 folder)
connects to that address on the host's loopback, and only to the ports of the base URLs the
suite itself sent (``allow``), then copies bytes both ways, 64 KiB at a time: a stream goes through
as it comes, never kept whole. Nothing is opened beyond loopback and the one Unix socket.

Only the standard library is imported here: the child imports this module in the other interpreter.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import struct
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "MAX_RELAYED",
    "NAMESPACE",
    "NETWORK_ENV",
    "ChildRelay",
    "NamespaceBroken",
    "RelayServer",
    "enter_namespace",
    "loopback_addresses",
]

NETWORK_ENV = "CONFORMANCE_CHILD_NETWORK"
"""In the child's environment: the path of the suite's relay socket (the child then enters a network
namespace), or ``guard`` (the suite asked for the audit-hook guard alone). The child removes it from
its environment, so the processes the driver starts do not see it."""

NAMESPACE = "namespace"
"""What ``enter_namespace`` returns when the child has a network namespace of its own."""

MAX_RELAYED = 256
"""Connections relayed at once per child (each holds two threads); one more is closed at once."""

_PR_SET_DUMPABLE = 4

_CHUNK = 1 << 16
_HEADER = 300
"""Bytes the relay's first line may take (``HOST PORT``)."""

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


class NamespaceBroken(Exception):
    """The process is in a new network namespace but could not make it usable (its ids unmapped, its
    loopback down), and cannot go back: it must end, and the suite start it again with the guard
    alone."""


def enter_namespace() -> str:
    """Move this process into a network namespace of its own with ``lo`` up: ``NAMESPACE``, or
    ``guard: WHY`` where no namespace can be made (this process is then where it was);
    ``NamespaceBroken`` where one was made but is not usable. Call it before any thread starts (a
    user namespace needs a single-threaded process)."""
    if not sys.platform.startswith("linux"):
        return f"guard: no network namespaces on {sys.platform}"
    try:
        import ctypes
        import fcntl
    except ImportError as exc:  # an interpreter built without them
        return f"guard: {exc}"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNET) != 0:
        first = os.strerror(ctypes.get_errno())
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
            second = os.strerror(ctypes.get_errno())
            return f"guard: a network namespace could not be created (unshare: {first}; in a user namespace: {second})"
        libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # a process that changed its ids: its /proc files stay its own
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError as exc:
            raise NamespaceBroken(f"the user namespace's ids could not be mapped ({exc})") from None
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            name = struct.pack("16sh", b"lo", 0)
            flags = struct.unpack("16sh", fcntl.ioctl(sock, _SIOCGIFFLAGS, name))[1]
            fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))
    except OSError as exc:
        raise NamespaceBroken(f"the namespace's loopback could not be brought up ({exc})") from None
    return NAMESPACE


def _write(path: str, text: str) -> None:
    """One write of ``text`` to a ``/proc`` file (a map is taken whole from one write)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def loopback_addresses(base_url: str) -> list[tuple[str, int]]:
    """The loopback addresses a client given ``base_url`` connects to: its host and port when the
    host is a loopback literal, ``127.0.0.1`` and ``::1`` for ``localhost``; nothing otherwise."""
    try:
        parts = urlsplit(base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return []
    host = (parts.hostname or "").lower()
    if host in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return [("127.0.0.1", port), ("::1", port)]
    return [(host, port)] if _loopback_literal(host) else []


def _loopback_literal(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# ---- the copy of one connection ----------------------------------------------------------------


def _splice(a: socket.socket, b: socket.socket, done: threading.Semaphore | None = None) -> None:
    """Copy ``a`` to ``b`` and ``b`` to ``a`` (two daemon threads, 64 KiB at a time) until both ends
    said they are done; then close both (and release ``done``)."""
    left = [2]
    lock = threading.Lock()

    def finish() -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.close()
            if done is not None:
                done.release()

    def copy(source: socket.socket, target: socket.socket) -> None:
        try:
            while True:
                chunk = source.recv(_CHUNK)
                if not chunk:
                    target.shutdown(socket.SHUT_WR)
                    break
                target.sendall(chunk)
        except OSError:  # one end reset: the other is cut too
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
        finally:
            finish()

    started = 0
    try:
        for source, target in ((a, b), (b, a)):
            threading.Thread(target=copy, args=(source, target), name="conformance-relay", daemon=True).start()
            started += 1
    except RuntimeError:  # no thread to be had (a memory limit): this connection is cut, the next may pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        for _ in range(2 - started):
            finish()


# ---- the child's side --------------------------------------------------------------------------


class ChildRelay:
    """In the child's namespace: listens on the loopback addresses of the calls' base URLs and
    relays each connection to the suite's ``RelayServer`` at ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._served: dict[tuple[str, int], socket.socket] = {}
        self._slots = threading.Semaphore(MAX_RELAYED)

    def serve(self, base_url: str) -> list[str]:
        """Listen on the loopback addresses of ``base_url`` not served yet; what could not be (one
        line each, for the child's output)."""
        problems: list[str] = []
        for address in loopback_addresses(base_url):
            if address in self._served:
                continue
            family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
            try:
                listener = socket.socket(family, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind(address)
                listener.listen(1024)
            except OSError as exc:
                listener.close()
                if family == socket.AF_INET6 and address[0] == "::1":
                    continue  # no IPv6 here: localhost is 127.0.0.1 alone
                problems.append(f"conformance: cannot relay {address[0]}:{address[1]} in the namespace: {exc}")
                continue
            self._served[address] = listener
            threading.Thread(
                target=self._accept, args=(listener, address), name="conformance-relay-accept", daemon=True
            ).start()
        return problems

    def _accept(self, listener: socket.socket, address: tuple[str, int]) -> None:
        header = f"{address[0]} {address[1]}\n".encode("ascii")
        while True:
            try:
                inner, _ = listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                inner.close()
                continue
            outer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                outer.connect(self.path)
                outer.sendall(header)
            except OSError:
                for s in (inner, outer):
                    s.close()
                self._slots.release()
                continue
            _splice(inner, outer, self._slots)

    def close(self) -> None:
        for listener in self._served.values():
            with contextlib.suppress(OSError):
                listener.close()
        self._served.clear()


# ---- the suite's side --------------------------------------------------------------------------


class RelayServer:
    """In the suite: a Unix socket at ``folder/relay.sock`` (``folder`` private to this user)
    accepting the child's relayed connections, each connected to the loopback address its first
    line names, if ``allow`` allowed that port; anything else is closed at once."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "relay.sock")
        self._allowed: set[int] = set()
        self._slots = threading.Semaphore(MAX_RELAYED)
        self._closed = False
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(self.path)  # OSError: a path too long for a Unix socket
            os.chmod(self.path, 0o600)
            self._listener.listen(1024)
        except OSError:
            self._listener.close()
            raise
        self._thread: threading.Thread | None = None

    def allow(self, base_url: str) -> None:
        """Relay connections to the loopback ports of ``base_url`` (a call the suite sends). The
        accepting thread starts with the first call, not before: a client that only said hello
        (``certify --jobs N``'s first, before its workers are forked) leaves no thread behind."""
        self._allowed.update(port for _host, port in loopback_addresses(base_url))
        if self._thread is None:
            self._thread = threading.Thread(target=self._accept, name="conformance-relay-server", daemon=True)
            self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                inner, _ = self._listener.accept()
            except OSError:
                return
            if self._closed:
                inner.close()
                return
            if not self._slots.acquire(blocking=False):
                inner.close()
                continue
            try:
                threading.Thread(target=self._open, args=(inner,), name="conformance-relay-open", daemon=True).start()
            except RuntimeError:  # no thread to be had: this connection is cut, the next may pass
                inner.close()
                self._slots.release()

    def _open(self, inner: socket.socket) -> None:
        outer: socket.socket | None = None
        try:
            inner.settimeout(10)
            host, port = self._header(inner)
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            outer = socket.socket(family, socket.SOCK_STREAM)
            outer.settimeout(10)
            outer.connect((host, port))
            inner.settimeout(None)
            outer.settimeout(None)
        except (OSError, ValueError):
            for s in (inner, outer):
                if s is not None:
                    s.close()
            self._slots.release()
            return
        _splice(inner, outer, self._slots)

    def _header(self, inner: socket.socket) -> tuple[str, int]:
        """The first line, ``HOST PORT``: a loopback literal and an allowed port (``ValueError``)."""
        line = b""
        while not line.endswith(b"\n"):
            chunk = inner.recv(1)
            if not chunk or len(line) >= _HEADER:
                raise ValueError("no header")
            line += chunk
        host, _, port_text = line.decode("ascii").strip().partition(" ")
        port = int(port_text)
        if not _loopback_literal(host) or port not in self._allowed:
            raise ValueError(f"{host}:{port} is not the suite's server")
        return host, port

    def close(self) -> None:
        """Stop accepting; the relayed connections end with their ends."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()
