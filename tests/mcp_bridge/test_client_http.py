"""``McpSession`` over Streamable HTTP against small hostile loopback servers (issue 31 point 1).

Each server here speaks just enough of MCP 2025-11-25 Streamable HTTP (basic/transports) to get
a session going (``initialize`` answered as JSON with an ``Mcp-Session-Id``, notifications
answered ``202``, ``tools/list``), then misbehaves on ``tools/call`` in one way: it never answers,
answers forever (an SSE stream that trickles comments), streams more than the byte bound, drops
the session (``404``), resets the connection, or redirects to another host. Every case must end
in a typed error naming the URL, within the call timeout, with bounded memory: the bound is
checked by bytes (how much the server managed to send before the client hung up), never by
wall time. Headers carry ``${VAR}`` values from the environment and never show them.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.errors import McpRemoteRefusedError, McpServerError, McpTimeoutError
from conformance.mcp_bridge import _http
from conformance.mcp_bridge.client import McpServerSpec, McpSession
from conformance.mcp_bridge.trust import effective_mcp, is_loopback_url, refusal
from conformance.scenarios.values import McpTools, Scenario

SESSION_ID = "hostile-session-1"
TOOL = {"name": "probe", "description": "A probe.", "inputSchema": {"type": "object", "properties": {}}}


class _Hostile(BaseHTTPRequestHandler):
    """One JSON-RPC message per POST; ``tools/call`` behaves as the server's ``mode`` says."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _json(self, status: int, body: object, session: bool = True) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if session:
            self.send_header("Mcp-Session-Id", SESSION_ID)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # no server-initiated stream
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self) -> None:
        self.server.deleted += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if self.server.mode in ("html", "not_found"):  # not an MCP endpoint at all
            body = b"<html>a web page</html>"
            self.send_response(200 if self.server.mode == "html" else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.server.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
        method, ident = message.get("method"), message.get("id")
        if ident is None:  # a notification
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "hostile", "version": "0"},
            }
            self._json(200, {"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "tools/list":
            self._json(200, {"jsonrpc": "2.0", "id": ident, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            getattr(self, f"_call_{self.server.mode}")(ident)
        else:
            self._json(200, {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}})

    def _call_ok(self, ident: object) -> None:
        result = {"content": [{"type": "text", "text": "fine"}], "isError": False}
        self._json(200, {"jsonrpc": "2.0", "id": ident, "result": result})

    def _call_hang(self, ident: object) -> None:
        self.server.stop.wait(60)

    def _stream(self, content_type: str, chunk: bytes, limit: int) -> None:
        """Write ``chunk`` again and again (chunked) until the client hangs up or ``limit`` bytes."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Mcp-Session-Id", SESSION_ID)
        self.end_headers()
        try:
            while self.server.sent < limit and not self.server.stop.is_set():
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                self.server.sent += len(chunk)
                if self.server.pause:
                    self.server.stop.wait(self.server.pause)
        except OSError:  # the client hung up: what we wanted
            self.server.hung_up = True

    def _call_trickle(self, ident: object) -> None:  # an SSE stream of comments, never an answer
        self._stream("text/event-stream", b": still working\n\n", limit=10**9)

    def _call_flood_json(self, ident: object) -> None:  # JSON whitespace without end
        self._stream("application/json", b" " * 65536, limit=self.server.flood_limit)

    def _call_flood_sse(self, ident: object) -> None:  # many small valid SSE events
        note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
        event = b"event: message\ndata: " + note + b"\n\n"
        self._stream("text/event-stream", event * 256, limit=self.server.flood_limit)

    def _call_drop(self, ident: object) -> None:  # the session is gone (spec: 404 for a terminated session)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _call_reset(self, ident: object) -> None:
        self.close_connection = True
        self.connection.shutdown(2)

    def _call_redirect(self, ident: object) -> None:
        self.send_response(307)
        self.send_header("Location", f"http://127.0.0.2:{self.server.server_address[1]}/elsewhere")
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    modes: ClassVar[tuple[str, ...]] = ("ok", "hang", "trickle", "flood_json", "flood_sse", "drop", "reset", "redirect")

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Hostile)
        self.mode = mode
        self.stop = threading.Event()
        self.sent = 0
        self.hung_up = False
        self.pause = 0.01 if mode == "trickle" else 0.0
        self.flood_limit = 64 * 1024 * 1024  # the server's own bound: a test never streams forever
        self.deleted = 0
        self.headers_seen: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[_Server]:
    server = _Server(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()


def _call(server: _Server, *, timeout: float = 2.0) -> McpServerError:
    with McpSession(McpServerSpec(url=server.url), timeout=30.0) as session:
        assert [t.name for t in session.list_tools()] == ["probe"]
        with pytest.raises(McpServerError) as caught:
            session.call_tool("probe", {}, timeout=timeout)
    return caught.value


@pytest.mark.parametrize("hostile", ["ok"], indirect=True)
def test_a_plain_server_answers_and_the_session_is_deleted_on_close(hostile: _Server) -> None:
    with McpSession(McpServerSpec(url=hostile.url), timeout=30.0) as session:
        result = session.call_tool("probe", {}, call_id="c1")
        assert [getattr(c, "text", None) for c in result.content] == ["fine"]
    assert hostile.deleted == 1  # the session ends with DELETE (spec: Session Management)
    assert all(h.get("mcp-session-id") == SESSION_ID for h in hostile.headers_seen[1:])


@pytest.mark.parametrize("hostile", ["hang", "trickle"], indirect=True)
def test_a_server_that_never_answers_is_a_timeout_naming_the_url(hostile: _Server) -> None:
    error = _call(hostile, timeout=1.0)
    assert isinstance(error, McpTimeoutError)
    assert hostile.url in str(error) and "tools/call probe" in str(error)


@pytest.mark.parametrize("hostile", ["flood_json", "flood_sse"], indirect=True)
def test_a_server_streaming_without_end_is_cut_at_the_byte_bound(
    hostile: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_http, "MAX_RESPONSE_BYTES", 1024 * 1024)
    error = _call(hostile, timeout=30.0)
    assert not isinstance(error, McpTimeoutError)
    assert "1,048,576 bytes" in str(error) and "MAX_RESPONSE_BYTES" in str(error)
    assert _http.shown_url(hostile.url) in str(error)
    # The client stopped reading at the bound: the server got no further than the bound plus what
    # the socket buffers hold (a few MiB on Linux), far below its own 64 MiB limit.
    assert hostile.sent < 16 * 1024 * 1024


@pytest.mark.parametrize("hostile", ["drop"], indirect=True)
def test_a_dropped_session_is_a_server_error_naming_the_url(hostile: _Server) -> None:
    error = _call(hostile)
    assert "ended the MCP session" in str(error) and "Mcp-Session-Id" in str(error)
    assert hostile.url in str(error)


@pytest.mark.parametrize("hostile", ["reset"], indirect=True)
def test_a_reset_connection_is_a_server_error_naming_the_url(hostile: _Server) -> None:
    error = _call(hostile)
    assert not isinstance(error, McpTimeoutError)
    assert hostile.url in str(error)


@pytest.mark.parametrize("hostile", ["redirect"], indirect=True)
def test_a_redirect_to_another_host_is_not_followed(hostile: _Server) -> None:
    error = _call(hostile)
    assert "127.0.0.2" in str(error) and "not followed" in str(error)
    assert len(hostile.headers_seen) == 4  # initialize, initialized, tools/list, tools/call: no second call


@pytest.mark.parametrize(
    ("hostile", "said"),
    [("html", "answered with text/html, neither JSON nor an SSE stream"), ("not_found", "answered HTTP 404")],
    indirect=["hostile"],
)
def test_a_url_that_is_no_mcp_endpoint_is_named_so(hostile: _Server, said: str) -> None:
    with pytest.raises(McpServerError) as caught, McpSession(McpServerSpec(url=hostile.url), timeout=30.0):
        pass
    assert said in str(caught.value) and hostile.url in str(caught.value) and "start-up" in str(caught.value)


@pytest.mark.parametrize("hostile", ["ok"], indirect=True)
def test_headers_come_from_the_environment_and_never_show(hostile: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("H1_TEST_TOKEN", "s3cr3t-value")
    spec = McpServerSpec(url=hostile.url, headers={"Authorization": "Bearer ${H1_TEST_TOKEN}"})
    with McpSession(spec, timeout=30.0) as session:
        session.call_tool("probe", {})
        assert "s3cr3t" not in session.describe()
    assert {h.get("authorization") for h in hostile.headers_seen} == {"Bearer s3cr3t-value"}

    monkeypatch.delenv("H1_TEST_TOKEN")
    with pytest.raises(McpServerError) as caught, McpSession(spec, timeout=30.0):
        pass
    assert "H1_TEST_TOKEN" in str(caught.value) and "Authorization" in str(caught.value)
    assert "s3cr3t" not in str(caught.value)


def test_nothing_listening_is_a_server_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_http.free_port()}/mcp"
    with pytest.raises(McpServerError) as caught, McpSession(McpServerSpec(url=url), timeout=10.0):
        pass
    assert url in str(caught.value) and "cannot connect" in str(caught.value)


def test_a_command_that_never_listens_is_stopped_after_the_start_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    spec = McpServerSpec(command=[sys.executable, "-c", code], url="http://127.0.0.1:{port}/mcp")
    with pytest.raises(McpServerError) as caught, McpSession(spec, timeout=1.0):
        pass
    assert "did not accept connections within 1 s" in str(caught.value)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # stopped with the session (and reaped)
        os.kill(pid, 0)


def test_a_command_that_exits_is_named_with_its_status() -> None:
    spec = McpServerSpec(command=[sys.executable, "-c", "raise SystemExit(4)"], url="http://127.0.0.1:{port}/mcp")
    with pytest.raises(McpServerError) as caught, McpSession(spec, timeout=30.0):
        pass
    assert "exited with status 4" in str(caught.value)


def test_only_loopback_urls_run_without_the_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_loopback_url("http://127.0.0.1:{port}/mcp") and is_loopback_url("http://[::1]:8000/mcp")
    assert is_loopback_url("http://localhost/mcp") and is_loopback_url("http://127.9.9.9/mcp")
    assert not is_loopback_url("https://mcp.example.com/mcp") and not is_loopback_url("http://10.0.0.1/mcp")
    path = tmp_path / "remote.yaml"
    scenario = Scenario(
        id="x/remote", path=path, behavior="b", source="s", mcp=McpTools(url="https://mcp.example.com/mcp")
    )
    monkeypatch.delenv("CONFORMANCE_ALLOW_REMOTE_MCP", raising=False)
    refused = refusal(scenario)
    assert isinstance(refused, McpRemoteRefusedError)
    assert "https://mcp.example.com/mcp" in str(refused) and "--allow-remote-mcp" in str(refused)
    assert str(path) in str(refused)
    monkeypatch.setenv("CONFORMANCE_ALLOW_REMOTE_MCP", "1")
    assert refusal(scenario) is None
    local = Scenario(id="x/local", path=path, behavior="b", source="s", mcp=McpTools(url="http://127.0.0.1:9/mcp"))
    monkeypatch.delenv("CONFORMANCE_ALLOW_REMOTE_MCP")
    assert refusal(local) is None  # a loopback URL with no command: nothing to allow


def test_the_http_transport_moves_only_the_bundled_server() -> None:
    bundled = McpTools(command=("{python}", "-m", "conformance", "mcp-server"))
    moved = effective_mcp(bundled, "http")
    assert moved.url == "http://127.0.0.1:{port}/mcp"
    assert moved.args == ("--transport", "http", "--port", "{port}")
    assert effective_mcp(bundled, "stdio") is bundled
    other = McpTools(command=("npx", "-y", "some-server"))
    assert effective_mcp(other, "http") is other
