"""Tests for ``conformance.mcp_bridge.scenario_tools`` when a scenario's calls change its server's tool
list (``tools.mcp.list_changes``): each conversation on a session of its own, the new list after
``notifications/tools/list_changed``, select filtering it, and a call to a tool no longer listed never
sent. End to end over stdio with the bundled server's dynamic toolset
(``conformance.mcp_bridge._fixtures_dynamic``, MCP spec 2025-11-25 server/tools "List Changed
Notification")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.mcp_bridge import _fixtures_dynamic as dynamic
from conformance.mcp_bridge._convert import error_channel
from conformance.mcp_bridge.scenario_tools import McpPool, not_offered_result, open_scenario_tools
from conformance.model import Text, ToolCall
from conformance.scenarios.loader import load_scenario

REPO = Path(__file__).resolve().parents[2]
ADDED = load_scenario(REPO / "scenarios" / "mcp" / "tools_added.yaml", root=REPO / "scenarios")
AFTER_ADD = [*dynamic.INITIAL, "refund_order"]


def _call(name: str, arguments: dict[str, object] | None = None) -> ToolCall:
    return ToolCall(id="call_1", name=name, arguments=arguments if arguments is not None else {})


def test_each_conversation_has_its_own_session_and_follows_the_list() -> None:
    with open_scenario_tools(ADDED, start_timeout=60) as (ready, executor):
        assert [t.name for t in ready.tools] == list(dynamic.INITIAL)
        assert executor.follows_list_changes
        with executor.conversation() as tools:
            first = executor.session
            assert [t.name for t in tools or ()] == list(dynamic.INITIAL)
            assert executor.changed_tools() is None  # nothing announced yet
            assert executor(_call("enable_refunds")).content == (Text(text="refund_order is now available"),)
            changed = executor.changed_tools()
            assert [t.name for t in changed or ()] == AFTER_ADD
            assert executor.changed_tools() is None  # announced once
            assert executor(_call("refund_order", {"order_id": "A-1"})).content == (Text(text="order A-1 refunded"),)
        assert first.closed  # the conversation's session ends with it
        with executor.conversation() as tools:
            assert executor.session is not first
            assert [t.name for t in tools or ()] == list(dynamic.INITIAL)  # a new session: the first list again
            refused = executor(_call("refund_order", {"order_id": "A-1"}))
        assert refused == not_offered_result(_call("refund_order", {"order_id": "A-1"}))
        assert error_channel(refused) == "client"
        assert executor.calls == 2  # the refused call never reached the server


def test_select_filters_the_new_list_in_its_order() -> None:
    assert ADDED.mcp is not None
    scenario = replace(ADDED, mcp=replace(ADDED.mcp, select=("retire_legacy_search", "legacy_search")))
    with open_scenario_tools(scenario, start_timeout=60) as (ready, executor), executor.conversation() as tools:
        assert (
            [t.name for t in ready.tools] == [t.name for t in tools or ()] == ["retire_legacy_search", "legacy_search"]
        )
        executor(_call("retire_legacy_search"))
        assert [t.name for t in executor.changed_tools() or ()] == ["retire_legacy_search"]
        assert executor(_call("legacy_search", {"query": "x"})).is_error


def test_the_pool_never_shares_a_session_whose_list_changes() -> None:
    with McpPool(start_timeout=60) as pool:
        pool.prestart([ADDED])
        ready, executor = pool.open(ADDED)
        assert not pool._starts  # no shared server for it
        assert [t.name for t in ready.tools] == list(dynamic.INITIAL)
        with executor.conversation():
            executor(_call("enable_refunds"))
            assert [t.name for t in executor.changed_tools() or ()] == AFTER_ADD
        _, other = pool.open(ADDED)
        with other.conversation() as tools:  # another pair: its own session, the first list
            assert [t.name for t in tools or ()] == list(dynamic.INITIAL)


def test_a_session_no_conversation_used_ends_with_the_pool() -> None:
    with McpPool(start_timeout=60) as pool:
        _, executor = pool.open(ADDED)  # its pair's cases ended before a conversation ran
        first = executor.session
        assert not first.closed
    assert first.closed
