"""Tests for ``conformance.mcp_bridge.client``: a real stdio session with the bundled server.

End to end over stdio (``python -m conformance mcp-server`` as a child process): paginated
``tools/list``, results on both error channels, timeouts, ``notifications/tools/list_changed``,
and the server's lifetime: gone after a normal exit, an exception, KeyboardInterrupt, or when the
client process is SIGKILLed. Processes are found through /proc (Linux).
Expected shapes follow the MCP spec 2025-11-25 server/tools; expected data comes from the
fixture module the server serves (``_fixtures``).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conformance.errors import McpServerError, McpTimeoutError, UsageError
from conformance.mcp_bridge import _fixtures, _fixtures_progress, _fixtures_results
from conformance.mcp_bridge._convert import MCP_KEY, error_channel
from conformance.mcp_bridge.client import JUNK_LIMIT, JUNK_SHOWN, McpServerSpec, McpSession
from conformance.mcp_bridge.server import FIXED_NOW_ENV, NOOP_TOOL_COUNT
from conformance.model import Audio, Image, Resource, Text

NOW = 1_684_713_600_000
REPO_ROOT = Path(__file__).resolve().parents[2]
# cwd: `python -m conformance` finds the package from the repository even when it is not installed
BUNDLED = McpServerSpec(
    command=[sys.executable, "-m", "conformance", "mcp-server"], env={FIXED_NOW_ENV: str(NOW)}, cwd=str(REPO_ROOT)
)
FIXTURE_TOOLS = [
    "getTime",
    "get_weather",
    "search_codebase",
    "get_file_content",
    "explode",
    "slow_tool",
    "render_chart",
    "mixed_content",
    "enable_bonus_tool",
    "exit_server",
]

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds processes through /proc (Linux)")


@pytest.fixture(scope="module")
def session() -> Iterator[McpSession]:
    with McpSession(BUNDLED, timeout=30.0) as opened:
        yield opened


# ---------------------------------------------------------------------------------- /proc helpers


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a process, None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), fields[0]


def server_pids(parent: int) -> set[int]:
    """Children of ``parent`` running ``conformance mcp-server``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        stat = _stat(int(entry.name))
        if stat is not None and stat[0] == parent and b"mcp-server" in cmdline:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[1] != "Z"  # a zombie is dead, only not yet reaped


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@contextmanager
def client_child(mode: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A client process with an open session (tests/mcp_bridge/_session_child.py) and its server's
    pid; both are killed on the way out whatever happened."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_bridge._session_child", mode],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    servers: set[int] = set()
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        if line.strip() != "READY":
            proc.kill()
            pytest.fail(f"the client child did not get ready: {line!r} {proc.communicate()[1]}")
        servers = server_pids(proc.pid)
        assert len(servers) == 1, servers
        yield proc, next(iter(servers))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGUSR1)  # the child dumps its threads' stacks to stderr
            time.sleep(0.5)
            proc.kill()
            print(proc.communicate()[1][-4000:])
        for pid in servers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------- the session


def test_initialize_reports_the_server(session: McpSession) -> None:
    assert session.server_info["name"] == "conformance-fixture"
    assert session.protocol_version == "2025-11-25"  # ClientSession's handshake version (toolchain.md §4)
    assert session.instructions


def test_list_tools_follows_every_page(session: McpSession) -> None:
    names = [tool.name for tool in session.list_tools()]
    assert names[: len(FIXTURE_TOOLS)] == FIXTURE_TOOLS
    assert [n for n in names if n.startswith("noop_")] == [f"noop_{i:02d}" for i in range(1, NOOP_TOOL_COUNT + 1)]
    assert len(names) == len(set(names)) >= 3 * 10  # the server sends 10 per page


def test_listed_tools_are_unified_tools(session: McpSession) -> None:
    tools = {tool.name: tool for tool in session.tools}
    get_time = tools["getTime"]
    assert get_time.title == "Current time"
    assert get_time.input_schema["properties"]["offset_ms"]["type"] == "number"
    assert get_time.annotations == {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
    assert get_time.output_schema is None
    weather = tools["get_weather"]
    assert weather.output_schema is not None and weather.output_schema["required"] == [
        "city",
        "condition",
        "temperature_c",
        "humidity_pct",
    ]


def test_get_time(session: McpSession) -> None:
    result = session.call_tool("getTime", {"offset_ms": -86_400_000}, call_id="call_1")
    assert result.call_id == "call_1"
    assert result.name == "getTime"
    assert result.content == (Text(text=str(NOW - 86_400_000)),)
    assert result.is_error is False
    assert error_channel(result) is None


def test_structured_results_keep_their_structured_content(session: McpSession) -> None:
    result = session.call_tool("get_weather", {"city": "Tokyo"})
    assert result.is_error is False
    assert result.provider_details[MCP_KEY]["structured_content"] == {
        "city": "Tokyo",
        "condition": "cloudy",
        "temperature_c": 18.0,
        "humidity_pct": 65,
    }


def test_an_unknown_city_is_a_tool_error(session: McpSession) -> None:
    result = session.call_tool("get_weather", {"city": "Atlantis"})
    assert result.is_error is True
    assert error_channel(result) == "tool"
    [item] = result.content
    assert isinstance(item, Text) and "unknown city: 'Atlantis'" in item.text


def test_explode_is_a_tool_error(session: McpSession) -> None:
    result = session.call_tool("explode")
    assert result.is_error is True
    assert error_channel(result) == "tool"
    assert result.content == (Text(text="Error executing tool explode"),)


def test_the_server_logs_a_failing_tool_in_plain_lines(session: McpSession) -> None:
    # With rich installed (a dependency since the progress bar), the SDK's own logging set-up renders
    # every failing tool's traceback in boxes, ~0.3 s of the server's time per call: the bundled
    # server sets plain lines up first (serve_stdio).
    session.call_tool("explode")
    deadline = time.monotonic() + 10
    while "RuntimeError: explode" not in session.stderr_tail(200) and time.monotonic() < deadline:
        time.sleep(0.05)
    tail = session.stderr_tail(200)
    assert "Traceback (most recent call last):" in tail
    assert "RuntimeError: explode: this tool always fails" in tail
    assert not set("╭╰│") & set(tail)


def test_an_unknown_tool_is_on_the_protocol_channel(session: McpSession) -> None:
    result = session.call_tool("invalid_tool_name", {}, call_id="call_9")
    assert result.is_error is True
    assert error_channel(result) == "protocol"
    assert result.provider_details[MCP_KEY]["error"] == {"code": -32602, "message": "Unknown tool: invalid_tool_name"}
    assert result.content == (Text(text="MCP protocol error -32602 (invalid params): Unknown tool: invalid_tool_name"),)
    assert result.call_id == "call_9"


def test_an_image_tool_gives_image_content(session: McpSession) -> None:
    result = session.call_tool("render_chart", {"values": [2, 7, 1]})
    [image] = result.content
    assert isinstance(image, Image)
    assert image.media_type == "image/png"
    assert image.data is not None and base64.b64decode(image.data) == _fixtures.png_bar_chart([2.0, 7.0, 1.0])


def test_every_content_type_arrives(session: McpSession) -> None:
    result = session.call_tool("mixed_content")
    text, embedded, blob, link, audio = result.content
    assert text == Text(text="Report for weather-app")
    assert embedded == Resource(uri="file:///repo/README.md", media_type="text/markdown", text="# weather-app\n")
    assert blob == Resource(uri="file:///repo/logo.bin", media_type="application/octet-stream", blob="AAEC")
    assert link == Resource(uri="file:///repo/src/weather_app/clock.py", media_type="text/x-python")
    assert result.provider_details[MCP_KEY]["content_extras"]["3"] == {"name": "clock.py"}
    assert isinstance(audio, Audio) and audio.media_type == "audio/wav"
    assert base64.b64decode(audio.data) == _fixtures.wav_silence()


def test_a_slow_tool_times_out_and_the_session_stays_usable(session: McpSession) -> None:
    started = time.monotonic()
    with pytest.raises(McpTimeoutError, match=r"tools/call slow_tool: no answer from the MCP server within 1 s"):
        session.call_tool("slow_tool", {"seconds": 120}, timeout=1.0)
    assert time.monotonic() - started < 60  # ended by the timeout, not by the tool
    assert session.call_tool("getTime").content == (Text(text=str(NOW)),)


def test_arguments_are_optional_and_copied(session: McpSession) -> None:
    arguments = {"pattern": "TODO", "fileType": "ts"}
    result = session.call_tool("search_codebase", arguments)
    assert result.content == (Text(text="web/src/api.ts:3:   // TODO: handle HTTP errors"),)
    assert arguments == {"pattern": "TODO", "fileType": "ts"}


# ---------------------------------------------------------------------------------- lifecycle


@needs_proc
def test_list_changed_refreshes_the_tools_and_close_stops_the_server() -> None:
    before = server_pids(os.getpid())
    with McpSession(BUNDLED, timeout=30.0) as session:
        [server] = server_pids(os.getpid()) - before
        assert "bonus_tool" not in {tool.name for tool in session.tools}
        session.call_tool("enable_bonus_tool")
        assert wait_until(lambda: session.list_changed_count == 1, 5)
        assert "bonus_tool" in {tool.name for tool in session.tools}
        assert session.call_tool("bonus_tool").content == (Text(text="bonus!"),)
    assert session.closed
    assert not alive(server)


@needs_proc
@pytest.mark.parametrize("raised", [RuntimeError, KeyboardInterrupt])
def test_the_server_stops_when_the_block_raises(raised: type[BaseException]) -> None:
    before = server_pids(os.getpid())
    with pytest.raises(raised), McpSession(BUNDLED, timeout=30.0):
        [server] = server_pids(os.getpid()) - before
        raise raised("stop")
    assert not alive(server)


@needs_proc
def test_a_killed_client_leaves_no_server() -> None:
    with client_child("wait") as (proc, server):
        assert alive(server)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert wait_until(lambda: not alive(server), 10), f"the MCP server {server} outlived its SIGKILLed client"


@needs_proc
def test_ctrl_c_during_a_call_stops_client_and_server() -> None:
    with client_child("block") as (proc, server):
        time.sleep(0.3)  # let the call reach the server
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode != 0
        assert "KeyboardInterrupt" in stderr
        assert wait_until(lambda: not alive(server), 10)


def test_a_server_that_exits_at_start_is_an_error_with_its_stderr() -> None:
    spec = McpServerSpec(command=[sys.executable, "-c", "import sys; sys.stderr.write('fatal: no config\\n'); exit(3)"])
    with pytest.raises(McpServerError) as caught:
        McpSession(spec, timeout=10.0).open()
    assert caught.value.stderr_tail == "fatal: no config"
    assert "the MCP server closed the connection" in str(caught.value)
    assert "fatal: no config" in str(caught.value)


def test_a_missing_command_is_an_error() -> None:
    with pytest.raises(McpServerError, match="no-such-mcp-server-xyz"):
        McpSession(McpServerSpec(command=["no-such-mcp-server-xyz"]), timeout=10.0).open()


def test_a_server_that_never_answers_times_out_at_start() -> None:
    spec = McpServerSpec(command=["sh", "-c", "echo hello; exec sleep 60"])
    with pytest.raises(McpTimeoutError) as caught:
        McpSession(spec, timeout=1.0).open()
    assert "start-up (spawn and initialize): no answer from the MCP server within 1 s" in str(caught.value)
    # the usual cause: logging to stdout, which stdio reserves for JSON-RPC
    assert "not JSON-RPC (an MCP stdio server must log to stderr): 'hello'" in str(caught.value)


def test_a_server_dying_mid_call_is_an_error_with_its_stderr() -> None:
    with McpSession(BUNDLED, timeout=30.0) as session:
        with pytest.raises(McpServerError, match="tools/call exit_server: the MCP server closed the connection"):
            session.call_tool("exit_server", {"code": 4})
        assert "exit_server: exiting with status 4 as asked" in session.stderr_tail()
        with pytest.raises(McpServerError):
            session.call_tool("getTime")


def test_misuse_is_a_usage_error() -> None:
    session = McpSession(BUNDLED)
    with pytest.raises(UsageError, match="not open"):
        session.call_tool("getTime")
    session.close()
    with pytest.raises(UsageError, match="is closed"):
        session.list_tools()
    with pytest.raises(UsageError, match="opens once"):
        session.open()
    with pytest.raises(UsageError, match="timeout must be positive"):
        McpSession(BUNDLED, timeout=0)


def test_a_spec_needs_a_command_and_strings() -> None:
    with pytest.raises(UsageError, match="needs a command"):
        McpServerSpec(command=[])
    with pytest.raises(UsageError, match="must be strings"):
        McpServerSpec(command=["server"], args=[3])  # type: ignore[list-item]
    spec = McpServerSpec(command="npx", args=["-y", "server x"], env={"K": "v"})
    assert spec.argv == ("npx", "-y", "server x")
    assert spec.describe() == "npx -y 'server x'"


# ---------------------------------------------------------------------------------- stdout garbage (issue 27)

_GARBAGE = {
    "lines-then-serves": "os.write(1, b'not json-rpc: a log line\\n' * 100_000)",
    "lines-then-hangs": "os.write(1, b'not json-rpc: a log line\\n' * 100_000); time.sleep(600)",
    "binary-then-serves": "os.write(1, bytes(range(256)) * 4_000)",
    "endless": "while True: os.write(1, b'garbage ' * 64 + b'\\n')",
}
_GARBAGE_CLIENT = """
import json, sys
from conformance.mcp_bridge.client import JUNK_LIMIT, JUNK_SHOWN, McpServerSpec, McpSession
spec = McpServerSpec(command=[sys.executable, sys.argv[1]], cwd=sys.argv[2])
try:
    with McpSession(spec, timeout=30.0) as session:
        outcome = {"tools": len(session.list_tools())}
except Exception as exc:
    outcome = {"error": type(exc).__name__, "message": str(exc)}
print("OUTCOME " + json.dumps(outcome))
"""


def _garbage_server(tmp_path: Path, garbage: str) -> Path:
    """A tiny MCP server: it writes ``garbage`` to stdout, then (if it gets there) is the bundled server."""
    script = tmp_path / "garbage_server.py"
    script.write_text(
        "import os, sys, time\n"
        f"{garbage}\n"
        f"os.environ[{FIXED_NOW_ENV!r}] = '{NOW}'\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'conformance', 'mcp-server'])\n"
    )
    return script


@pytest.mark.parametrize("kind", list(_GARBAGE))
def test_a_server_flooding_stdout_with_garbage_is_summarised_within_bounded_output(tmp_path: Path, kind: str) -> None:
    script = _garbage_server(tmp_path, _GARBAGE[kind])
    child = subprocess.run(
        [sys.executable, "-c", _GARBAGE_CLIENT, str(script), str(REPO_ROOT)],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=300,  # a safety net: the session stops reading the server at its 1001st garbage line
    )
    assert len(child.stdout) + len(child.stderr) < 64 * 1024, child.stderr[:2000]
    outcome = json.loads(child.stdout.decode().rpartition("OUTCOME ")[2])
    assert outcome["error"] == "McpServerError", outcome
    assert f"more than {JUNK_LIMIT} lines to stdout that are not JSON-RPC" in outcome["message"]
    assert str(script) in outcome["message"]  # the server's command
    console = child.stderr.decode()
    assert console.count("wrote a line to stdout that is not JSON-RPC") == JUNK_SHOWN
    assert f"{script}: more than {JUNK_LIMIT} lines on stdout that are not JSON-RPC" in console
    assert "Traceback" not in console


def test_a_few_stray_stdout_lines_are_logged_counted_and_the_session_works(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = _garbage_server(tmp_path, "os.write(1, b''.join(b'stray log line %d\\n' % n for n in range(20)))")
    spec = McpServerSpec(command=[sys.executable, str(script)], cwd=str(REPO_ROOT))
    with caplog.at_level(logging.WARNING), McpSession(spec, timeout=30.0) as session:
        fixture_tools = 10 + len(_fixtures_progress.TOOL_NAMES) + len(_fixtures_results.TOOL_NAMES)
        assert len(session.list_tools()) == fixture_tools + NOOP_TOOL_COUNT
        assert session.call_tool("getTime").content == (Text(text=str(NOW)),)
    ours = [r.getMessage() for r in caplog.records if r.name == "conformance.mcp_bridge"]
    assert ours[:JUNK_SHOWN] == [
        f"MCP server {spec.describe()} wrote a line to stdout that is not JSON-RPC (an MCP stdio server must log "
        f"to stderr): 'stray log line {n}'"
        for n in range(JUNK_SHOWN)
    ]
    assert ours[JUNK_SHOWN:] == [
        f"MCP server {spec.describe()}: and {20 - JUNK_SHOWN} more lines on stdout that were not JSON-RPC"
    ]
    assert not [r for r in caplog.records if r.name.startswith("mcp.")]  # no traceback per line from the SDK
