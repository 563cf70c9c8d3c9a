"""The bundled MCP server over both transports (issue 31 point 1).

``conformance mcp-server --transport http --port 0`` serves the same tools over Streamable HTTP
(MCP 2025-11-25, basic/transports): the URL is printed on stdout, the session id comes with the
``initialize`` answer (``Mcp-Session-Id``) and a ``DELETE`` ends the session. The client side is the
SDK's own ``streamable_http_client`` here, so the server is judged by the SDK, not by our bridge.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conformance.mcp_bridge.server import DEFAULT_PAGE_SIZE, FIXED_NOW_ENV, HTTP_PATH, LISTENING_PREFIX

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
