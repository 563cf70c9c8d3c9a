"""Tests for ``conformance.mcp_bridge._fixtures_dynamic``: the bundled server's toolset that changes
between turns, in process (the SDK's in-memory ``mcp.Client``) and over stdio.

Expected behaviour follows the MCP spec 2025-11-25 server/tools: "List Changed Notification" (a
server whose list changes sends ``notifications/tools/list_changed``; the client lists again) and
"Error Handling" (an unknown tool is the protocol error -32602; invalid arguments are a tool error).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp import types as mcp_types

from conformance.mcp_bridge import _fixtures_dynamic as dynamic
from conformance.mcp_bridge.client import McpServerSpec, McpSession
from conformance.mcp_bridge.server import build_server
from conformance.model import Text

DYNAMIC_ENV = {dynamic.TOOLSET_ENV: dynamic.DYNAMIC}


def _in_process(steps: Any) -> Any:
    """Run ``steps(client, notes)`` against a fresh in-process server; ``notes`` collects the
    notifications the client received, in order."""

    async def main() -> Any:
        notes: list[str] = []

        async def handler(message: object) -> None:
            notes.append(type(message).__name__)

        async with Client(build_server(), message_handler=handler) as client:
            return await steps(client, notes)

    return anyio.run(main)


async def _names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


def test_without_the_variable_the_default_list_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(dynamic.TOOLSET_ENV, raising=False)

    async def steps(client: Client, notes: list[str]) -> list[str]:
        names: list[str] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [tool.name for tool in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                return names

    names = _in_process(steps)
    assert "getTime" in names and not set(names) & dynamic.TOOL_NAMES


def test_a_new_session_lists_the_initial_toolset_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(dynamic.TOOLSET_ENV, dynamic.DYNAMIC)

    async def steps(client: Client, notes: list[str]) -> list[Any]:
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in (await client.list_tools()).tools]

    tools = _in_process(steps)
    assert [t["name"] for t in tools] == list(dynamic.INITIAL)
    price = tools[-1]
    assert price["inputSchema"] == {
        "type": "object",
        "properties": {"sku": {"type": "string", "description": "The product's SKU, e.g. SKU-42"}},
        "required": ["sku"],
    }


def test_each_change_notifies_before_its_result_and_the_next_list_is_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(dynamic.TOOLSET_ENV, dynamic.DYNAMIC)

    async def steps(client: Client, notes: list[str]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        result = await client.call_tool("enable_refunds", {})
        seen["added_text"], seen["added_notes"] = result.content[0].text, list(notes)  # type: ignore[union-attr]
        seen["after_add"] = await _names(client)
        await client.call_tool("retire_legacy_search", {})
        seen["after_remove"] = await _names(client)
        await client.call_tool("set_currency_required", {})
        listed = {t.name: t for t in (await client.list_tools()).tools}
        seen["schema"] = listed["price_quote"].input_schema
        again = await client.call_tool("enable_refunds", {})  # no change: no notification
        seen["again"] = again.content[0].text  # type: ignore[union-attr]
        seen["notes"] = list(notes)
        return seen

    seen = _in_process(steps)
    assert seen["added_text"] == "refund_order is now available"
    assert seen["added_notes"] == ["ToolListChangedNotification"]  # already there when the result came
    assert seen["after_add"] == [*dynamic.INITIAL, "refund_order"]
    assert seen["after_remove"] == [n for n in dynamic.INITIAL if n != "legacy_search"] + ["refund_order"]
    assert seen["schema"]["required"] == ["sku", "currency"]
    assert seen["schema"]["properties"]["currency"]["enum"] == list(dynamic.CURRENCIES)
    assert seen["again"] == "refund_order is already available"
    assert seen["notes"] == ["ToolListChangedNotification"] * 3


def test_a_removed_or_hidden_tool_is_the_protocol_error_and_bad_arguments_a_tool_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(dynamic.TOOLSET_ENV, dynamic.DYNAMIC)

    async def steps(client: Client, notes: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("refund_order", "getTime"):  # not added yet; a default tool, hidden
            try:
                await client.call_tool(name, {"order_id": "A-1"})
            except MCPError as exc:
                out[name] = (exc.code, exc.message)
        await client.call_tool("set_currency_required", {})
        bad = await client.call_tool("price_quote", {"sku": "SKU-42"})
        out["bad"] = (bad.is_error, bad.content[0].text)  # type: ignore[union-attr]
        good = await client.call_tool("price_quote", {"sku": "SKU-42", "currency": "USD"})
        out["good"] = (good.is_error, good.content[0].text)  # type: ignore[union-attr]
        return out

    out = _in_process(steps)
    assert out["refund_order"] == (mcp_types.INVALID_PARAMS, "Unknown tool: refund_order")
    assert out["getTime"] == (mcp_types.INVALID_PARAMS, "Unknown tool: getTime")
    assert out["bad"] == (True, "invalid arguments for price_quote: arguments: 'currency' is a required property")
    assert out["good"] == (False, "SKU-42: 21.06 USD")  # 19.5 EUR x 1.08


def test_over_stdio_each_process_is_a_session_with_its_own_list() -> None:
    spec = McpServerSpec(command=[sys.executable, "-m", "conformance", "mcp-server"], env=DYNAMIC_ENV)
    with McpSession(spec, timeout=30.0) as first, McpSession(spec, timeout=30.0) as second:
        assert [t.name for t in first.tools] == list(dynamic.INITIAL)
        result = first.call_tool("enable_refunds")
        assert result.content == (Text(text="refund_order is now available"),)
        assert first.list_changed_count == 1  # the notification came before the result
        assert [t.name for t in first.tools] == [*dynamic.INITIAL, "refund_order"]
        assert [t.name for t in second.tools] == list(dynamic.INITIAL)
        assert second.list_changed_count == 0


@pytest.mark.parametrize("toolset", [dynamic.DYNAMIC, None])
def test_the_dynamic_toolset_declares_that_its_list_changes(toolset: str | None) -> None:
    # "servers that declared the listChanged capability SHOULD send a notification" (server/tools); on
    # 2025-11-25 the flag is the server's to set (the SDK's MCPServer says false unless told)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    env = {k: v for k, v in os.environ.items() if k != dynamic.TOOLSET_ENV}
    if toolset is not None:
        env[dynamic.TOOLSET_ENV] = toolset
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "mcp-server"],
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert answer["result"]["capabilities"]["tools"] == {"listChanged": toolset is not None}


def test_over_http_each_mcp_session_of_one_server_has_its_own_list(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    argv = [sys.executable, "-m", "conformance", "mcp-server", "--transport", "http", "--port", "0"]
    server = subprocess.Popen(
        [*argv, "--port-file", str(port_file)],
        env={**os.environ, **DYNAMIC_ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # a safety net: the port file appears once the server listens
            if port_file.is_file() and port_file.read_text().strip():
                break
            assert server.poll() is None, "the server exited before it listened"
            time.sleep(0.1)
        spec = McpServerSpec(url=f"http://127.0.0.1:{port_file.read_text().strip()}/mcp")
        with McpSession(spec, timeout=30.0) as first, McpSession(spec, timeout=30.0) as second:
            first.call_tool("enable_refunds")
            assert first.list_changed_count == 1  # on the POST's own stream, before the result
            assert [t.name for t in first.tools] == [*dynamic.INITIAL, "refund_order"]
            assert [t.name for t in second.tools] == list(dynamic.INITIAL)  # keyed by Mcp-Session-Id
    finally:
        server.terminate()
        server.wait(timeout=30)
