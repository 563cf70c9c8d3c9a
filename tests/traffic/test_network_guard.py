"""Tests for ``conformance.traffic.network_guard``: the network guard the repo-level conftest turns on for every
test. These tests do not enter the guard themselves: they prove the autouse fixture is active."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from _loopback import LoopbackServer, Reply

from conformance.errors import NetworkBlockedError, TransportError
from conformance.traffic.network_guard import connect_log, is_loopback, network_guard


@pytest.mark.parametrize("address", [("10.255.255.1", 80), ("93.184.215.14", 443), ("2001:db8::1", 443, 0, 0)])
def test_connect_beyond_loopback_is_blocked(address: tuple[object, ...]) -> None:
    family = socket.AF_INET6 if ":" in str(address[0]) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock, pytest.raises(NetworkBlockedError) as caught:
        sock.connect(address)
    assert str(address[0]) in str(caught.value)
    assert "only loopback" in str(caught.value)
    assert not isinstance(caught.value, OSError)  # clients must not treat it as a retryable network error


def test_connect_ex_and_name_lookups_are_blocked() -> None:
    with socket.socket() as sock, pytest.raises(NetworkBlockedError):
        sock.connect_ex(("10.255.255.1", 80))
    with pytest.raises(NetworkBlockedError, match=r"example\.com"):
        socket.getaddrinfo("example.com", 443)
    with pytest.raises(NetworkBlockedError, match=r"example\.com"):
        socket.create_connection(("example.com", 80))


def test_httpx_to_a_public_host_fails_loudly() -> None:
    with httpx.Client() as client, pytest.raises(NetworkBlockedError, match=r"example\.com"):
        client.get("https://example.com/")


def test_the_transport_does_not_hide_the_block() -> None:
    from conformance.adapters.base import WireRequest
    from conformance.traffic.transport import Transport

    with Transport("http://10.255.255.1", wire="openai_chat") as transport, pytest.raises(NetworkBlockedError):
        transport.send(WireRequest(path="/v1/chat/completions", body={}))
    assert issubclass(NetworkBlockedError, TransportError)


def test_loopback_is_allowed() -> None:
    routes = {("GET", "/"): [Reply(headers=[("content-type", "text/plain")], body=b"ok")]}
    with LoopbackServer(routes) as server, connect_log() as connects:
        assert httpx.get(server.base_url + "/").text == "ok"
        assert httpx.get(server.base_url.replace("127.0.0.1", "localhost") + "/").text == "ok"
    assert connects and connects[0][0] in ("127.0.0.1", "::1")


def test_unix_sockets_are_allowed(tmp_path: Path) -> None:
    address = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
        server.bind(address)
        server.listen(1)
        client.connect(address)
        peer, _ = server.accept()
        with peer:
            client.sendall(b"x")
            assert peer.recv(1) == b"x"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("example.com", False),
        ("localhost.example.com", False),
        (None, False),
    ],
)
def test_is_loopback(host: object, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_the_guard_restores_the_socket_functions() -> None:
    before = (socket.socket.connect, socket.getaddrinfo, socket.create_connection)
    with network_guard():
        assert socket.socket.connect is not before[0]
    assert (socket.socket.connect, socket.getaddrinfo, socket.create_connection) == before


# ---- what the patches do not see: the audit hook (issue 27, point 2) ---------------------------


def test_the_c_level_socket_class_is_blocked_too() -> None:
    """``_socket.socket`` is the class ``socket.socket`` derives from: its ``connect`` bypasses the
    patched method, not the audit hook."""
    import _socket

    raw = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    raw.settimeout(1)
    try:
        with pytest.raises(NetworkBlockedError, match=r"192\.0\.2\.1:9 \(connect\)"):
            raw.connect(("192.0.2.1", 9))
        with pytest.raises(NetworkBlockedError):
            raw.connect_ex(("192.0.2.1", 9))
    finally:
        raw.close()


def test_datagrams_beyond_loopback_are_blocked_and_loopback_ones_go() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as to,
    ):
        with pytest.raises(NetworkBlockedError, match=r"192\.0\.2\.1:53 \(sendto\)"):
            udp.sendto(b"query", ("192.0.2.1", 53))
        with pytest.raises(NetworkBlockedError, match=r"sendmsg"):
            udp.sendmsg([b"query"], [], 0, ("192.0.2.1", 53))
        to.bind(("127.0.0.1", 0))
        udp.sendto(b"local", to.getsockname())
        assert to.recv(16) == b"local"


def test_every_refusal_is_kept_naming_the_address() -> None:
    from conformance.traffic.network_guard import refusal_mark, refused_since

    mark = refusal_mark()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, pytest.raises(NetworkBlockedError):
        udp.sendto(b"x", ("198.51.100.7", 123))
    with pytest.raises(NetworkBlockedError):
        socket.getaddrinfo("telemetry.example.com", 443)
    assert refused_since(mark) == ["198.51.100.7:123 (sendto)", "telemetry.example.com (name lookup)"]
    assert refused_since(refusal_mark()) == []


def test_python_children_are_guarded_and_their_refusals_read_back() -> None:
    """``guard_children``: a Python process started inside the block installs the same guard at start
    (its ``sitecustomize``), and what it refused is read back here."""
    import subprocess
    import sys

    from conformance.traffic.network_guard import guard_children, refusal_mark, refused_since

    code = (
        "import _socket\ns = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)\ns.sendto(b'x', ('203.0.113.5', 9))\n"
    )
    with guard_children():
        mark = refusal_mark()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        refused = refused_since(mark)
    assert done.returncode != 0 and "NetworkBlockedError" in done.stderr
    assert [r.partition(", pid")[0] for r in refused] == ["203.0.113.5:9 (sendto"]
    outside = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ.get('CONFORMANCE_NETWORK_LOG'))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert outside.stdout.strip() == "None"  # the environment is restored after the block
