"""A ``certify --python`` child's network (``conformance.clients.sandbox``): on Linux it has a network
namespace of its own, so what the driver starts (``curl``, a Python run with ``-I``, which the audit
hook never sees) finds no route off the machine, while the suite's server on loopback is relayed to
it (a stream as it comes); the relay reaches the ports the suite sent and nothing else; what the
child prints costs no disk and no memory beyond its tail."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.clients.contract import Call
from conformance.clients.remote import RemoteClient
from conformance.model import Response, Text

OFF_MACHINE = ("192.0.2.1", 80)
"""TEST-NET-1: no host answers there on the internet; a machine with a default route still sends the
SYN out (here the gateway answers it with a reset: 'connection refused')."""

ENETUNREACH = 101

_PROBE = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.unshare(0x40000000) == 0 or libc.unshare(0x10000000 | 0x40000000) == 0 else 1)
"""


def _namespaces_here() -> bool:
    """Whether a process of this machine may make a network namespace (as root, or in a user
    namespace); asked of a throwaway process."""
    if not sys.platform.startswith("linux"):
        return False
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, timeout=30, check=False)
    return done.returncode == 0


needs_namespaces = pytest.mark.skipif(not _namespaces_here(), reason="no network namespaces on this machine")

ESCAPE = '''
import os
import shutil
import subprocess
import sys

from conformance.model import Response, Text

RAW = """
import socket, sys
s = socket.socket()
s.settimeout(5)
print(s.connect_ex((sys.argv[1], int(sys.argv[2]))))
"""


class Escape:
    """A library whose call starts processes the audit hook cannot see: a Python with -I and curl."""

    name = "escape"
    wires = {"openai_chat": frozenset()}

    def complete(self, call):
        host, port = call.scenario.split(":")
        raw = subprocess.run(
            [sys.executable, "-I", "-c", RAW, host, port], capture_output=True, text=True, timeout=30
        )
        lines = ["python -I: " + (raw.stdout.strip() or raw.stderr.strip()[-200:])]
        if shutil.which("curl"):
            curl = subprocess.run(
                ["curl", "-v", "--max-time", "5", f"http://{host}:{port}/"],
                capture_output=True, text=True, timeout=30,
            )
            why = [line for line in curl.stderr.splitlines() if "connect" in line.lower()][:1]
            lines.append(f"curl: {curl.returncode} {' '.join(why)[-200:]}")
        return Response(parts=(Text(text="\\n".join(lines)),), finish_reason="stop")

    def error_info(self, exc):
        return None


client = Escape()
'''


def _driver(tmp_path: Path, source: str, name: str = "driver") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return f"{path}:client"


def _call(scenario: str = "", *, base_url: str = "http://127.0.0.1:1", timeout: float = 20.0) -> Call:
    return Call(
        wire="openai_chat",
        base_url=base_url,
        api_key="fake",
        model="m1",
        scenario=scenario,
        stream=False,
        timeout=timeout,
    )


def _text(result: object) -> str:
    assert isinstance(result, Response), result
    return "".join(p.text for p in result.parts if isinstance(p, Text))


@contextlib.contextmanager
def _listener() -> Iterator[tuple[socket.socket, list[bytes]]]:
    """A loopback server of the host that answers every connection with one HTTP response and keeps
    what each connection sent."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(128)
    seen: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    seen.append(conn.recv(4096))
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server, seen
    finally:
        server.close()


# --------------------------------------------------------------------------------------------
# No route off the machine


@needs_namespaces
def test_the_child_says_it_has_a_network_namespace(tmp_path: Path) -> None:
    with RemoteClient(_driver(tmp_path, ESCAPE), sys.executable, start_timeout=30) as remote:
        assert remote.network == "namespace"


@needs_namespaces
def test_processes_the_guard_cannot_see_find_no_route_off_the_machine(tmp_path: Path) -> None:
    """``python -I`` (no ``sitecustomize``: the audit hook is not there) and ``curl`` connect to an
    address beyond loopback: unreachable at once, the packet never leaves (before: the SYN went out
    and the gateway's reset came back)."""
    with RemoteClient(_driver(tmp_path, ESCAPE), sys.executable, start_timeout=30) as remote:
        text = _text(remote.complete(_call("{}:{}".format(*OFF_MACHINE))))
    assert f"python -I: {ENETUNREACH}" in text, text
    if shutil.which("curl"):
        assert "curl: 7 " in text and "network is unreachable" in text.lower(), text


@needs_namespaces
def test_a_loopback_port_the_suite_did_not_send_is_not_reached(tmp_path: Path) -> None:
    """A driver reaching for another service on the host's loopback (not the suite's server) finds
    nothing listening in its namespace; the host's service never sees a connection."""
    with _listener() as (other, seen), RemoteClient(_driver(tmp_path, ESCAPE), sys.executable) as remote:
        port = other.getsockname()[1]
        text = _text(remote.complete(_call(f"127.0.0.1:{port}")))
    assert "python -I: 111" in text, text  # ECONNREFUSED: nothing listens on that port in the namespace
    assert seen == []


# --------------------------------------------------------------------------------------------
# The relay to the suite's server

RELAYED = '''
import socket
import urllib.request
from urllib.parse import urlsplit

from conformance.model import Response, Text


class Relayed:
    """Reads the first piece of a stream, asks the server (second connection) for the rest, reads it."""

    name = "relayed"
    wires = {"openai_chat": frozenset()}

    def complete(self, call):
        address = urlsplit(call.base_url)
        with socket.create_connection((address.hostname, address.port), timeout=call.timeout) as sock:
            sock.sendall(b"GET /stream HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n")
            got = b""
            while b"first" not in got:
                piece = sock.recv(65536)
                if not piece:
                    break
                got += piece
            urllib.request.urlopen(call.base_url + "/more", timeout=call.timeout).read()
            while True:
                piece = sock.recv(65536)
                if not piece:
                    break
                got += piece
        return Response(parts=(Text(text=got.decode(errors="replace")),), finish_reason="stop")

    def error_info(self, exc):
        return None


client = Relayed()
'''


def test_a_stream_goes_through_the_relay_as_it_comes(tmp_path: Path) -> None:
    """The server sends the rest of a stream only once the driver, having read its first piece,
    asked for it on a second connection: a relay keeping a body whole would wait for ever."""
    more = threading.Event()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    def answer(conn: socket.socket) -> None:
        with conn:
            request = conn.recv(4096)
            if request.startswith(b"GET /more"):
                more.set()
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: first\n\n")
            if more.wait(30):
                conn.sendall(b"data: " + b"x" * (1 << 20) + b"\n\ndata: last\n\n")

    threading.Thread(target=serve, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.getsockname()[1]}"
    try:
        with RemoteClient(_driver(tmp_path, RELAYED), sys.executable, start_timeout=30) as remote:
            text = _text(remote.complete(_call(base_url=base_url, timeout=40)))
    finally:
        server.close()
    assert more.is_set()
    assert text.endswith("data: " + "x" * (1 << 20) + "\n\ndata: last\n\n"), text[-100:]


def test_the_relay_connects_only_to_the_ports_the_suite_sent(tmp_path: Path) -> None:
    """``RelayServer`` refuses a first line naming another port or a host beyond loopback: the
    connection is closed and nothing is connected to."""
    from conformance.clients.sandbox import RelayServer

    with _listener() as (allowed, seen_allowed), _listener() as (other, seen_other):
        folder = Path(tempfile.mkdtemp(prefix="relay-", dir="/tmp"))
        relay = RelayServer(folder)
        try:
            relay.allow(f"http://127.0.0.1:{allowed.getsockname()[1]}/v1")

            def ask(header: str) -> bytes:
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.settimeout(10)
                    sock.connect(relay.path)
                    sock.sendall(header.encode() + b"GET / HTTP/1.1\r\n\r\n")
                    got = b""
                    with contextlib.suppress(ConnectionResetError):  # closed before reading what was sent
                        while piece := sock.recv(4096):
                            got += piece
                    return got

            assert ask(f"127.0.0.1 {allowed.getsockname()[1]}\n").endswith(b"ok")
            assert ask(f"127.0.0.1 {other.getsockname()[1]}\n") == b""
            assert ask(f"192.0.2.1 {allowed.getsockname()[1]}\n") == b""
            assert ask("no header at all") == b""
        finally:
            relay.close()
            shutil.rmtree(folder)
        assert len(seen_allowed) == 1 and seen_other == []


def test_the_guard_alone_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``CONFORMANCE_CHILD_NETWORK=guard``: no namespace (the host's loopback, as before), and the
    child says so."""
    monkeypatch.setenv("CONFORMANCE_CHILD_NETWORK", "guard")
    with _listener() as (other, seen), RemoteClient(_driver(tmp_path, ESCAPE), sys.executable) as remote:
        assert remote.network.startswith("guard: ")
        text = _text(remote.complete(_call(f"127.0.0.1:{other.getsockname()[1]}")))
    assert "python -I: 0" in text and seen, text  # the host's loopback service was reached


@needs_namespaces
@pytest.mark.skipif(os.geteuid() != 0, reason="runs a process as another user: needs root")
def test_a_user_without_privileges_gets_a_namespace_through_a_user_namespace(tmp_path: Path) -> None:
    """Where ``unshare(CLONE_NEWNET)`` is refused (not root), the child makes a user namespace with
    its own ids mapped, and its loopback is up."""
    code = textwrap.dedent(
        """
        import ctypes, encodings.idna, fcntl, os, socket  # imported while their files can be read
        from conformance.clients.sandbox import enter_namespace
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        print(enter_namespace())
        s = socket.socket(); s.settimeout(5)
        print(s.connect_ex(("192.0.2.1", 80)))
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
        print(socket.create_connection(s.getsockname(), timeout=5).getpeername()[0])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    if "Operation not permitted" in done.stdout and "user namespace" in done.stdout:
        pytest.skip(f"no user namespaces for an unprivileged user here: {done.stdout.strip()}")
    assert done.stdout.split() == ["namespace", str(ENETUNREACH), "127.0.0.1"], done.stdout + done.stderr


# --------------------------------------------------------------------------------------------
# What the child prints

PRINTER = """
import sys

from conformance.model import Response, Text


class Printer:
    name = "printer"
    wires = {"openai_chat": frozenset()}

    def complete(self, call):
        line = "y" * 1023 + "\\n"
        for _ in range(64 * 1024):  # 64 MiB
            sys.stdout.write(line)
        sys.stdout.flush()
        print("the last line", flush=True)
        return Response(parts=(Text(text="done"),), finish_reason="stop")

    def error_info(self, exc):
        return None


client = Printer()
"""


def test_a_driver_printing_without_end_costs_no_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """64 MiB printed in one turn: the turn answers, nothing this process holds open under its
    temporary folder grew past a MiB (the output was a file there: 64 MiB), and the tail is kept."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with RemoteClient(_driver(tmp_path, PRINTER), sys.executable, start_timeout=30) as remote:
        assert _text(remote.complete(_call())) == "done"
        sizes = {}
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
                if target.startswith(str(scratch)):
                    sizes[target] = os.stat(f"/proc/self/fd/{fd}").st_size
        assert all(size < 1 << 20 for size in sizes.values()), sizes
        assert remote._output_tail().endswith("the last line")


BROKEN_NAMESPACE = """#!{python}
import json
import os
import sys

if not os.environ.get("CONFORMANCE_CHILD_NETWORK", "").startswith("guard"):
    answers = int(sys.argv[sys.argv.index("--fds") + 1].split(",")[1])
    message = {{"v": 1, "type": "fatal", "message": "no network namespace: lo stayed down",
               "network": "guard: lo stayed down"}}  # as conformance.clients.child writes it
    os.write(answers, json.dumps(message).encode() + b"\\n")
    sys.exit(2)
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def test_a_namespace_that_cannot_be_made_usable_gives_a_child_with_the_guard_alone(tmp_path: Path) -> None:
    """A child stuck in a namespace it could not make usable (its loopback down) says so and ends; the
    suite starts another with the guard alone, which says why, and its turns are answered."""
    python = tmp_path / "python"
    python.write_text(BROKEN_NAMESPACE.format(python=sys.executable), encoding="utf-8")
    python.chmod(0o755)
    with RemoteClient(_driver(tmp_path, ESCAPE), str(python), start_timeout=30) as remote:
        assert remote.network == "guard: lo stayed down"
        assert _text(remote.complete(_call("127.0.0.1:1"))).startswith("python -I: 111")


@pytest.mark.parametrize("network", ["namespace", "guard"])
def test_certify_says_in_one_line_when_the_driver_has_the_guard_alone(
    network: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.cli import main

    if network == "namespace" and not _namespaces_here():
        pytest.skip("no network namespaces on this machine")
    if network == "guard":
        monkeypatch.setenv("CONFORMANCE_CHILD_NETWORK", "guard")
    driver = tmp_path / "minimal.py"
    driver.write_text(
        (Path(__file__).resolve().parents[2] / "examples" / "clients" / "minimal_openai_driver.py").read_text()
    )
    code = main(
        [
            "certify",
            "--client",
            f"{driver}:CLIENT",
            "--python",
            sys.executable,
            "--scenarios",
            "basic/single_call",
            "--format",
            "",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    assert "cases: " in captured.out and "fail" not in captured.out.split("cases: ")[1].split("\n")[0], captured.out
    lines = [line for line in captured.err.splitlines() if "network" in line]
    if network == "guard":
        why = "guard: $CONFORMANCE_CHILD_NETWORK asked for the guard alone"
        assert lines == [f"conformance certify: the driver's network: {why} (docs/clients.md)"], captured.err
    else:
        assert lines == [], captured.err


MANY = """
import socket
from urllib.parse import urlsplit

from conformance.model import Response, Text


class Many:
    name = "many"
    wires = {"openai_chat": frozenset()}

    def complete(self, call):
        address = urlsplit(call.base_url)
        socks = [socket.create_connection((address.hostname, address.port), timeout=20) for _ in range(100)]
        for n, sock in enumerate(socks):
            sock.sendall(f"GET /{n} HTTP/1.1\\r\\n\\r\\n".encode())
        answered = 0
        for sock in socks:
            with sock:
                got = b""
                while piece := sock.recv(4096):
                    got += piece
                answered += got.endswith(b"ok")
        return Response(parts=(Text(text=str(answered)),), finish_reason="stop")

    def error_info(self, exc):
        return None


client = Many()
"""


def test_a_hundred_connections_at_once_go_through_the_relay(tmp_path: Path) -> None:
    with _listener() as (server, seen), RemoteClient(_driver(tmp_path, MANY), sys.executable) as remote:
        base_url = f"http://127.0.0.1:{server.getsockname()[1]}"
        assert _text(remote.complete(_call(base_url=base_url, timeout=60))) == "100"
    assert sorted(seen) == sorted(f"GET /{n} HTTP/1.1\r\n\r\n".encode() for n in range(100))


# --------------------------------------------------------------------------------------------
# A driver command (``certify --command``) has the same sandbox

COMMAND_DRIVER = r'''
"""A driver in any language: the raw protocol (docs/protocol.md), the standard library only."""
import json
import os
import socket
import sys
from urllib.parse import urlsplit

read_fd, write_fd = (int(n) for n in os.environ["CONFORMANCE_PROTOCOL_FDS"].split(","))
out = os.fdopen(write_fd, "wb", buffering=0)


def send(message):
    out.write(json.dumps({"v": 1, **message}).encode() + b"\n")


send({"type": "hello", "name": "raw", "wires": {"openai_chat": []}})
for line in os.fdopen(read_fd, "rb"):
    message = json.loads(line)
    host, port = message["call"]["scenario"].split(":")
    off = socket.socket()
    off.settimeout(5)
    said = [f"off: {off.connect_ex((host, int(port)))}"]
    base = urlsplit(message["call"]["base_url"])
    with socket.create_connection((base.hostname, base.port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        said.append("base: " + sock.recv(4096).decode(errors="replace").rsplit("\n", 1)[-1])
    text = " ".join(said)
    send({"type": "response", "id": message["id"], "response": {"parts": [{"kind": "text", "text": text}]}})
'''


@needs_namespaces
def test_a_driver_command_reaches_the_suites_server_and_nothing_off_the_machine(tmp_path: Path) -> None:
    """docs/protocol.md: a driver command's bounds are a Python driver's, the network namespace too:
    its base URL's port is relayed to the suite's server, an address beyond loopback is unreachable.
    ``python -I`` stands for a driver in another language: no ``sitecustomize``, so no audit hook."""
    script = tmp_path / "driver.py"
    script.write_text(COMMAND_DRIVER, encoding="utf-8")
    with _listener() as (server, seen), RemoteClient.of_command(f"{sys.executable} -I {script}") as remote:
        assert remote.network == "namespace"
        base = f"http://127.0.0.1:{server.getsockname()[1]}"
        text = _text(remote.complete(_call("{}:{}".format(*OFF_MACHINE), base_url=base)))
    assert text == f"off: {ENETUNREACH} base: ok", text
    assert seen and seen[0].startswith(b"GET / HTTP/1.0")
