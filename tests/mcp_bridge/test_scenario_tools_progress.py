"""Tests for ``conformance.mcp_bridge.scenario_tools``'s progress options (issue 31, point 4), end to end.

The bundled scenarios ``mcp/progress_resets_timeout`` (a slow tool that keeps reporting progress,
``reset_timeout_on_progress: true``) and ``mcp/progress_silent_timeout`` (the same length, silent)
replayed from their cassettes through the runner: the honest bridge passes both and the case says
what progress came; a bridge that ignores progress (the executor built without
``reset_timeout_on_progress``, the mutant of issue 31's "Done means") times the first out, and the
case fails naming the tool result the model received instead of the one recorded. The executor
alone: it passes the scenario's options to the session and keeps the progress of a call that
timed out with its timeout result.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.mcp_bridge._convert import MCP_KEY
from conformance.mcp_bridge._fixtures_progress import step_message
from conformance.mcp_bridge.scenario_tools import McpExecutor, open_scenario_tools
from conformance.model import Text, ToolCall
from conformance.run.runner import RunOptions, run_pair
from conformance.scenarios.loader import load_scenario
from conformance.scenarios.values import McpTools

REPO_ROOT = Path(__file__).resolve().parents[2]
RESETS = REPO_ROOT / "scenarios" / "mcp" / "progress_resets_timeout.yaml"
SILENT = REPO_ROOT / "scenarios" / "mcp" / "progress_silent_timeout.yaml"
CASSETTES = REPO_ROOT / "cassettes"


def _run(path: Path, adapter: str = "anthropic") -> list[tuple[str, str, str]]:
    cases = run_pair(load_scenario(path), get_adapter(adapter), RunOptions(cassette_dir=CASSETTES, timeout=120))
    return [(case.mode, case.status, case.message) for case in cases]


def test_the_scenarios_say_what_they_test() -> None:
    resets, silent = load_scenario(RESETS), load_scenario(SILENT)
    assert resets.mcp is not None and silent.mcp is not None
    assert resets.mcp.reset_timeout_on_progress and silent.mcp.reset_timeout_on_progress
    assert resets.mcp.timeout == silent.mcp.timeout == 2
    # same length: 12 steps of 0.25 s outlast the 2 s timeout; only progress tells them apart
    (resets_call,) = resets.turns[0].reply.tool_calls if resets.turns[0].reply else ()
    (silent_call,) = silent.turns[0].reply.tool_calls if silent.turns[0].reply else ()
    assert resets_call.arguments == {"steps": 12, "interval": 0.25}
    assert silent_call.arguments == {"steps": 12, "interval": 0.25, "report": False}
    assert resets.mcp.timeout < 12 * 0.25


def test_the_bridge_passes_both_and_the_case_says_what_progress_came() -> None:
    resets = _run(RESETS)
    assert [(mode, status) for mode, status, _ in resets] == [("non_stream", "pass"), ("stream", "pass")]
    for _, _, message in resets:
        assert "MCP tools/call slow_progress (" in message
        assert f"12 progress notifications, last 12/12 '{step_message(12, 12)}'" in message
    silent = _run(SILENT)
    assert [(mode, status, message) for mode, status, message in silent] == [
        ("non_stream", "pass", ""),
        ("stream", "pass", ""),
    ]


def test_a_bridge_that_ignores_progress_times_out_the_progress_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    honest = McpExecutor.for_tools

    def ignoring_progress(session: object, mcp: McpTools) -> McpExecutor:
        return honest(session, replace(mcp, reset_timeout_on_progress=False))  # type: ignore[arg-type]

    monkeypatch.setattr(McpExecutor, "for_tools", staticmethod(ignoring_progress))
    cases = run_pair(load_scenario(RESETS), get_adapter("anthropic"), RunOptions(cassette_dir=CASSETTES, timeout=120))
    assert [(case.mode, case.status) for case in cases] == [("non_stream", "fail"), ("stream", "fail")]
    for case in cases:
        actual = [str(finding.actual) for check in case.checks if check.status == "fail" for finding in check.findings]
        assert any("MCP tool call timed out after 2 s" in text for text in actual), case.checks


def test_the_executor_keeps_the_progress_of_a_call_that_timed_out() -> None:
    scenario = load_scenario(RESETS)
    assert scenario.mcp is not None
    with open_scenario_tools(scenario, start_timeout=60) as (_, executor):
        assert executor.reset_timeout_on_progress and executor.max_total_timeout == 10
        stingy = McpExecutor(executor.session, timeout=1.0)  # no reset: 3 steps of 0.6 s outlast it
        result = stingy(ToolCall(id="call_1", name="slow_progress", arguments={"steps": 3, "interval": 0.6}))
        assert result.is_error and result.content == (Text(text="MCP tool call timed out after 1 s"),)
        mcp = result.provider_details[MCP_KEY]
        assert mcp["error_channel"] == "client"
        assert mcp.get("progress", [])[:1] in ([], [{"progress": 1.0, "total": 3.0, "message": step_message(1, 3)}])
        capped = McpExecutor(executor.session, timeout=1.0, reset_timeout_on_progress=True, max_total_timeout=1.5)
        result = capped(ToolCall(id="call_2", name="slow_progress", arguments={"steps": 100, "interval": 0.1}))
        assert result.content == (Text(text="MCP tool call timed out after 1.5 s"),)  # the maximum ran out
        result = executor(ToolCall(id="call_3", name="slow_progress", arguments={"steps": 12, "interval": 0.25}))
        assert result.content == (Text(text="done: 12 steps of 0.25 s"),)  # the scenario's own options: it finishes
