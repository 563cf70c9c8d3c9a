"""Test support: the network guard (no socket beyond loopback while the test suite runs).

``network_guard()`` is a context manager that patches ``socket.socket.connect``/``connect_ex`` and
``socket.getaddrinfo``/``socket.create_connection``: a connect to an address outside loopback
(``127.0.0.0/8``, ``::1``) or a name lookup for anything but ``localhost`` raises
``NetworkBlockedError`` naming the address. Unix sockets are allowed. ``NetworkBlockedError`` is
not an ``OSError``, so httpx and SDKs do not turn it into a retryable connection error: the test
fails loudly at the line that tried. The repo-level ``conftest.py`` turns it on for every test.

``connect_log()`` records every connect attempt (allowed or not), for tests proving that replay
opens no socket at all.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from conformance.errors import NetworkBlockedError

__all__ = ["connect_log", "is_loopback", "network_guard"]

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: Any) -> bool:
    """Whether ``host`` (an IP literal or a name) is a loopback address; ``localhost`` counts."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%", 1)[0].lower()
    if name in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _check_address(family: int, address: Any) -> None:
    if family == getattr(socket, "AF_UNIX", object()):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not is_loopback(host):
        raise NetworkBlockedError(
            f"network access to {address!r} is blocked while tests run: only loopback (127.0.0.1, ::1) is "
            "allowed; replay from a cassette or point the client at the emulator"
        )


@contextmanager
def network_guard() -> Iterator[None]:
    """Block every non-loopback connect and name lookup inside the block (re-entrant)."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo
    original_create_connection = socket.create_connection

    def connect(self: socket.socket, address: Any) -> None:
        _check_address(self.family, address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self.family, address)
        return original_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (None, "", b"", "0.0.0.0", "::"):  # unspecified addresses resolve for bind()
            _check_address(socket.AF_INET, (host, 0))
        return original_getaddrinfo(host, *args, **kwargs)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        _check_address(socket.AF_INET, address)
        return original_create_connection(address, *args, **kwargs)

    patches: list[tuple[Any, str, Callable[..., Any]]] = [
        (socket.socket, "connect", connect),
        (socket.socket, "connect_ex", connect_ex),
        (socket, "getaddrinfo", getaddrinfo),
        (socket, "create_connection", create_connection),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, replacement in patches:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


@contextmanager
def connect_log() -> Iterator[list[Any]]:
    """Record the address of every ``socket.connect``/``connect_ex`` attempt inside the block."""
    seen: list[Any] = []
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> None:
        seen.append(address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        seen.append(address)
        return original_connect_ex(self, address)

    setattr(socket.socket, "connect", connect)  # noqa: B010 - mypy refuses a method assignment
    setattr(socket.socket, "connect_ex", connect_ex)  # noqa: B010
    try:
        yield seen
    finally:
        setattr(socket.socket, "connect", original_connect)  # noqa: B010
        setattr(socket.socket, "connect_ex", original_connect_ex)  # noqa: B010
