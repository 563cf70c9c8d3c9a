"""``translation.tool_list`` (``conformance.checks.tool_list``): after the MCP server's
``notifications/tools/list_changed``, each request offers exactly the list the bridge held at its turn.

Judged on the bundled ``mcp/tools_*`` scenarios replayed from their cassettes (the bundled server's
dynamic toolset, ``conformance.mcp_bridge._fixtures_dynamic``): the reference adapters pass, and an
adapter that keeps the first request's tools (the self-test's ``stale_tool_list`` bug) fails with a
finding naming the tool and the turn after which the server changed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.run.runner import RunOptions, run_pair
from conformance.scenarios.loader import load_scenario
from conformance.selftest import MUTANTS
from conformance.verdicts import CaseResult, CheckVerdict

REPO = Path(__file__).resolve().parents[2]
OPTIONS = RunOptions(cassette_dir=REPO / "cassettes")


def _cases(scenario: str, adapter: str = "anthropic", *, stale: bool = False) -> list[CaseResult]:
    loaded = load_scenario(REPO / "scenarios" / "mcp" / f"{scenario}.yaml", root=REPO / "scenarios")
    chosen = MUTANTS["anthropic~stale_tool_list"].adapter() if stale else get_adapter(adapter)
    return run_pair(loaded, chosen, OPTIONS)


def _verdict(case: CaseResult, check: str = "translation.tool_list") -> CheckVerdict:
    (found,) = [v for v in case.checks if v.check == check]
    return found


@pytest.mark.parametrize(
    "adapter", ["anthropic", "hermes"]
)  # a native wire, a prompt format (tools in the system prompt)
def test_the_reference_adapters_offer_the_new_list(adapter: str) -> None:
    for case in _cases("tools_added", adapter):
        assert case.status == "pass", case.message
        assert _verdict(case).status == "pass"


def test_a_stale_added_list_fails_naming_the_tool_the_server_added() -> None:
    for case in _cases("tools_added", stale=True):
        found = _verdict(case)
        assert found.status == "fail"
        messages = [(f.turn, f.path, f.message) for f in found.findings]
        assert messages == [
            (
                turn,
                "tools['refund_order']",
                "does not offer 'refund_order', which the MCP server lists (added by the MCP server after turn 0:"
                " notifications/tools/list_changed)",
            )
            for turn in (1, 2)
        ]


def test_a_stale_list_that_keeps_a_removed_tool_fails_naming_it() -> None:
    for case in _cases("tools_removed", stale=True):
        found = _verdict(case)
        assert found.status == "fail"
        first = found.findings[0]
        assert (first.turn, first.actual) == (1, "legacy_search")
        assert first.message == (
            "offers 'legacy_search', which the MCP server no longer lists (removed by the MCP server after turn 0:"
            " notifications/tools/list_changed): the request keeps an old tool list"
        )


def test_a_stale_schema_fails_with_the_new_schema_expected() -> None:
    for case in _cases("tool_schema_changed", stale=True):
        found = _verdict(case)
        assert found.status == "fail"
        first = found.findings[0]
        assert first.path == "tools['price_quote'].input_schema" and first.turn == 1
        assert first.expected["required"] == ["sku", "currency"] and first.actual["required"] == ["sku"]
        # the cache prefix is not blamed for the server's change
        prefix = _verdict(case, "roundtrip.cache_prefix")
        assert all(f.kind == "note" for f in prefix.findings)
