"""Tests for ``conformance.mcp_bridge.server``: the bundled MCP server's tools, in process.

The server is driven through the SDK's in-memory ``mcp.Client(server)`` (no subprocess, about a
millisecond per call; docs/toolchain.md §4), speaking the real protocol: ``tools/list`` pages,
``tools/call`` results and JSON-RPC errors. The stdio transport is covered in test_client.py.
Expected shapes follow the MCP spec 2025-11-25 server/tools and utilities/pagination.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, MCPError

from conformance.mcp_bridge import _fixtures, _fixtures_progress, _fixtures_results
from conformance.mcp_bridge.server import DEFAULT_PAGE_SIZE, FIXED_NOW_ENV, NOOP_TOOL_COUNT, build_server

NOW = 1_684_713_600_000  # 2023-05-22T00:00:00Z in epoch ms
T = TypeVar("T")
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
    *_fixtures_progress.TOOL_NAMES,
    *_fixtures_results.TOOL_NAMES,
]


def run(body: Callable[[Client], Awaitable[T]], **options: Any) -> T:
    """Run ``body`` against a fresh in-process server."""

    async def main() -> T:
        async with Client(build_server(now_ms=lambda: float(NOW), **options)) as client:
            return await body(client)

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:  # the client's task group wraps what the body raised
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ``tools/call`` result as wire JSON."""

    async def body(client: Client) -> dict[str, Any]:
        result = await client.call_tool(name, arguments or {})
        wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return wire

    return run(body)


def text_of(wire: dict[str, Any]) -> str:
    assert [block["type"] for block in wire["content"]] == ["text"]
    text: str = wire["content"][0]["text"]
    return text


async def all_pages(client: Client) -> list[list[dict[str, Any]]]:
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        result = await client.list_tools(cursor=cursor)
        pages.append([t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in result.tools])
        cursor = result.next_cursor
        if cursor is None:
            return pages


# ---------------------------------------------------------------------------------- tools/list


def test_the_list_takes_several_pages_and_holds_every_tool() -> None:
    pages = run(all_pages)
    names = [tool["name"] for page in pages for tool in page]
    noops = [f"noop_{i:02d}" for i in range(1, NOOP_TOOL_COUNT + 1)]
    assert names == FIXTURE_TOOLS + noops
    assert len(pages) == -(-len(names) // DEFAULT_PAGE_SIZE) >= 3
    assert all(len(page) == DEFAULT_PAGE_SIZE for page in pages[:-1])


def test_the_page_size_is_configurable() -> None:
    pages = run(all_pages, page_size=7)
    total = len(FIXTURE_TOOLS) + NOOP_TOOL_COUNT
    assert [len(page) for page in pages] == [7] * (total // 7) + ([total % 7] if total % 7 else [])


def test_an_invalid_cursor_is_invalid_params() -> None:
    # utilities/pagination: invalid cursors SHOULD result in an error with code -32602
    async def body(client: Client) -> None:
        await client.list_tools(cursor="bogus")

    with pytest.raises(MCPError) as caught:
        run(body)
    assert caught.value.code == -32602
    assert "Invalid cursor: 'bogus'" in caught.value.message

    async def past_end(client: Client) -> None:
        await client.list_tools(cursor="offset:999")

    with pytest.raises(MCPError, match="past the end"):
        run(past_end)


def test_tool_definitions_carry_schemas_titles_and_annotations() -> None:
    tools = {tool["name"]: tool for page in run(all_pages) for tool in page}
    get_time = tools["getTime"]
    assert get_time["title"] == "Current time"
    assert get_time["inputSchema"]["properties"]["offset_ms"]["type"] == "number"
    assert get_time["annotations"] == {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
    assert "outputSchema" not in get_time  # plain text result
    weather = tools["get_weather"]
    assert weather["inputSchema"]["required"] == ["city"]
    assert set(weather["outputSchema"]["properties"]) == {"city", "condition", "temperature_c", "humidity_pct"}
    search = tools["search_codebase"]["inputSchema"]
    assert set(search["properties"]) == {"pattern", "fileType", "caseSensitive", "maxResults"}
    assert search["required"] == ["pattern"]
    assert search["properties"]["maxResults"]["maximum"] == 100
    content = tools["get_file_content"]["inputSchema"]
    assert set(content["properties"]) == {"path", "startLine", "endLine"}
    assert all(tool["description"] for tool in tools.values())


# ---------------------------------------------------------------------------------- tools/call


def test_get_time_is_now_plus_the_offset_as_text() -> None:
    assert call("getTime", {"offset_ms": -86_400_000}) == {
        "content": [{"type": "text", "text": str(NOW - 86_400_000)}],
        "isError": False,
        "resultType": "complete",
        "_meta": call("getTime")["_meta"],
    }
    assert text_of(call("getTime")) == str(NOW)


def test_an_unknown_tool_is_a_protocol_error() -> None:
    # spec server/tools "Error Handling": example protocol error
    with pytest.raises(MCPError) as caught:
        call("invalid_tool_name")
    assert (caught.value.code, caught.value.message) == (-32602, "Unknown tool: invalid_tool_name")


def test_bad_arguments_are_a_tool_error() -> None:
    # spec 2025-11-25: input validation errors are tool execution errors (isError)
    wire = call("getTime", {"offset_ms": "soon"})
    assert wire["isError"] is True
    assert "offset_ms" in text_of(wire)


def test_weather_is_structured_and_an_unknown_city_is_a_tool_error() -> None:
    wire = call("get_weather", {"city": "  paris "})
    expected = {"city": "Paris", "condition": "sunny", "temperature_c": 21.0, "humidity_pct": 40}
    assert wire["structuredContent"] == expected
    assert json.loads(text_of(wire)) == expected  # spec: structured content also as serialized JSON text
    bad = call("get_weather", {"city": "Atlantis"})
    assert bad["isError"] is True
    assert "unknown city: 'Atlantis'; known cities: Paris, London, Tokyo, New York, San Francisco" in text_of(bad)


def test_search_codebase_formats_path_line_text() -> None:
    found = text_of(call("search_codebase", {"pattern": "TODO", "fileType": "ts"}))
    assert found == "web/src/api.ts:3:   // TODO: handle HTTP errors"
    capped = text_of(call("search_codebase", {"pattern": "import", "maxResults": 1}))
    assert capped == "src/weather_app/clock.py:1: import time"
    assert text_of(call("search_codebase", {"pattern": "todo", "caseSensitive": True})) == "No matches for 'todo'."
    bad = call("search_codebase", {"pattern": "("})
    assert bad["isError"] is True and "invalid pattern '('" in text_of(bad)
    too_many = call("search_codebase", {"pattern": "x", "maxResults": 0})
    assert too_many["isError"] is True


def test_get_file_content_returns_the_asked_lines() -> None:
    lines = _fixtures.FAKE_FILES["src/weather_app/clock.py"].splitlines()
    assert text_of(call("get_file_content", {"path": "src/weather_app/clock.py"})) == "\n".join(lines)
    assert text_of(call("get_file_content", {"path": "src/weather_app/clock.py", "startLine": 4, "endLine": 6})) == (
        "\n".join(lines[3:6])
    )
    missing = call("get_file_content", {"path": "secrets.txt"})
    assert missing["isError"] is True and "no such file: 'secrets.txt'; files: README.md" in text_of(missing)
    backwards = call("get_file_content", {"path": "README.md", "startLine": 3, "endLine": 2})
    assert backwards["isError"] is True and "bad line range 3-2: README.md has 4 lines" in text_of(backwards)


def test_explode_is_a_tool_error_without_the_exception_text() -> None:
    # mcp 2.x keeps an unexpected exception's message on the server (docs/toolchain.md §4)
    wire = call("explode")
    assert wire["isError"] is True
    assert text_of(wire) == "Error executing tool explode"


def test_slow_tool_sleeps() -> None:
    assert text_of(call("slow_tool", {"seconds": 0.01})) == "slept 0.01 s"


def test_render_chart_is_a_png_image() -> None:
    wire = call("render_chart", {"values": [1, 2]})
    [block] = wire["content"]
    assert block["type"] == "image" and block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]) == _fixtures.png_bar_chart([1.0, 2.0])


def test_mixed_content_has_one_block_of_each_type() -> None:
    wire = call("mixed_content")
    assert [block["type"] for block in wire["content"]] == ["text", "resource", "resource", "resource_link", "audio"]
    assert wire["content"][1]["resource"]["text"] == "# weather-app\n"
    assert base64.b64decode(wire["content"][2]["resource"]["blob"]) == b"\x00\x01\x02"
    assert wire["content"][3]["name"] == "clock.py"
    assert base64.b64decode(wire["content"][4]["data"]) == _fixtures.wav_silence()


def test_enable_bonus_tool_adds_a_tool() -> None:
    async def body(client: Client) -> tuple[list[str], str]:
        await client.call_tool("enable_bonus_tool", {})
        names = [tool["name"] for page in await all_pages(client) for tool in page]
        bonus = await client.call_tool("bonus_tool", {})
        text = bonus.model_dump(by_alias=True, mode="json")["content"][0]["text"]
        return names, text

    names, text = run(body)
    assert names[-1] == "bonus_tool"
    assert text == "bonus!"


def test_noop_tools_answer() -> None:
    assert text_of(call("noop_24")) == "noop_24: ok"


def test_a_page_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="page_size must be >= 1"):
        build_server(page_size=0)


def test_a_bad_fixed_now_is_a_clear_startup_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "conformance", "mcp-server"],
        env={"PATH": "/usr/bin:/bin", FIXED_NOW_ENV: "yesterday"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert f"{FIXED_NOW_ENV} must be an integer (epoch milliseconds), got 'yesterday'" in proc.stderr
