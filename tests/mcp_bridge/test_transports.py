"""The bundled MCP server over both transports (issue 31 point 1).

``conformance mcp-server --transport http --port 0`` serves the same tools over Streamable HTTP
(MCP 2025-11-25, basic/transports): the URL is printed on stdout, the session id comes with the
``initialize`` answer (``Mcp-Session-Id``) and a ``DELETE`` ends the session. The client side is the
SDK's own ``streamable_http_client`` here, so the server is judged by the SDK, not by our bridge.

Then the whole bridge: ``conformance run`` over every scenario that takes its tools from an MCP
server (the list read at run time: scenarios land while others work), with the default (reference)
adapters, once with ``--mcp-transport stdio`` and once with ``http``: every case has the same
verdict over both, the HTTP run served them from Streamable HTTP (its report's ``commands``), and
no case of it is an ERROR of the MCP server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conformance.cli import main
from conformance.mcp_bridge.server import DEFAULT_PAGE_SIZE, FIXED_NOW_ENV, HTTP_PATH, LISTENING_PREFIX
from conformance.scenarios import bundled
from conformance.scenarios.loader import load_scenarios

NOW = 1_684_713_600_000


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``conformance mcp-server --transport http --port 0``: its URL and its port file."""
    port_file = tmp_path_factory.mktemp("mcp-http") / "port"
    argv = [sys.executable, "-m", "conformance", "mcp-server", "--transport", "http", "--port", "0"]
    process = subprocess.Popen(
        [*argv, "--port-file", str(port_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, FIXED_NOW_ENV: str(NOW)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # one line, printed once the socket listens
        assert line.startswith(LISTENING_PREFIX), line
        yield line[len(LISTENING_PREFIX) :].strip(), port_file
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_the_bundled_server_serves_its_tools_over_streamable_http(http_server: tuple[str, Path]) -> None:
    url, port_file = http_server
    assert url.startswith("http://127.0.0.1:") and url.endswith(HTTP_PATH)
    assert url == f"http://127.0.0.1:{port_file.read_text().strip()}{HTTP_PATH}"

    async def main() -> tuple[int, str | None, object, str]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.list_tools()
            weather = await session.call_tool("get_weather", {"city": "Paris"})
            clock = await session.call_tool("getTime", {"offset_ms": 0})
            text = clock.content[0].text if clock.content[0].type == "text" else ""
            return len(first.tools), first.next_cursor, weather.structured_content, text

    count, cursor, structured, now = anyio.run(main)
    assert count == DEFAULT_PAGE_SIZE and cursor is not None  # paged as over stdio
    assert structured == {"city": "Paris", "condition": "sunny", "temperature_c": 21.0, "humidity_pct": 40}
    assert now == str(NOW)


def test_the_http_server_refuses_a_host_that_is_not_loopback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "mcp-server", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--host" in done.stderr and "0.0.0.0" in done.stderr


def _verdicts(report_dir: Path) -> tuple[dict[str, str], dict[str, str], list[dict[str, Any]]]:
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    statuses = {case["id"]: case["status"] for case in report["cases"]}
    messages = {case["id"]: case.get("message") or "" for case in report["cases"]}
    return statuses, messages, report["commands"]


GREEN = {"pass", "unsupported", "xfail"}


def test_every_mcp_scenario_passes_over_streamable_http_as_over_stdio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded = load_scenarios([bundled.scenarios_dir()])
    ids = sorted(s.id for s in loaded.scenarios if s.mcp is not None)
    assert len(ids) >= 6  # the MCP scenarios of issue 26 at least
    argv = ["run", *(w for i in ids for w in ("--scenarios", i)), "--quiet", "-j", "2"]
    http_dir = tmp_path / "http"
    main([*argv, "--mcp-transport", "http", "--report-dir", str(http_dir)])
    err = capsys.readouterr().err
    assert f"--mcp-transport http: {len(ids)} scenario(s) run the bundled MCP server over http" in err

    over_http, messages, http_commands = _verdicts(http_dir)
    assert len(over_http) >= 16 * len(ids) - 32  # 8 adapters x 2 modes, less a few wires a scenario skips
    assert not [case for case, message in messages.items() if "MCP server" in message]
    assert {c["transport"] for c in http_commands} == {"http"}
    assert {c["url"] for c in http_commands} == {"http://127.0.0.1:{port}/mcp"}
    assert http_commands and {c["scenario"] for c in http_commands} <= set(ids)  # those that ran a server
    if set(over_http.values()) <= GREEN:
        return
    # Not green: the same cases must be red over stdio (a scenario still being written, a cassette
    # not yet recorded), so that nothing here is the transport's doing.
    stdio_dir = tmp_path / "stdio"
    main([*argv, "--report-dir", str(stdio_dir)])
    over_stdio, _, stdio_commands = _verdicts(stdio_dir)
    assert {c["transport"] for c in stdio_commands} == {"stdio"}
    assert over_http == over_stdio
