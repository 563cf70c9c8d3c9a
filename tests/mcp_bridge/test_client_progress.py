"""Tests for ``conformance.mcp_bridge.client``'s progress and cancellation (issue 31, point 4).

Over stdio, end to end: the bundled server's ``slow_progress`` (``_fixtures_progress``) reports
progress when a call carries a ``progressToken``; a hand-written server (``_late_server.py``)
answers a call only once the client cancels it. What must hold comes from MCP 2025-11-25:
basic/utilities/progress (``progressToken`` in ``_meta``; ``notifications/progress`` with
``progress``, ``total``, ``message``), basic/lifecycle "Timeouts" (cancel a request past its
timeout; progress MAY reset the clock; a maximum bounds it regardless) and
basic/utilities/cancellation (``notifications/cancelled`` with ``requestId`` and ``reason``; "the
sender of the cancellation notification SHOULD ignore any response to the request that arrives
afterward"). Timings are fractions of a second with wide margins; no test asserts a duration.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.errors import McpTimeoutError
from conformance.mcp_bridge._convert import MCP_KEY
from conformance.mcp_bridge._fixtures_progress import step_message
from conformance.mcp_bridge.client import McpServerSpec, McpSession
from conformance.mcp_bridge.progress import ProgressLog, ProgressUpdate
from conformance.mcp_bridge.server import FIXED_NOW_ENV
from conformance.model import Text

NOW = 1_684_713_600_000
REPO_ROOT = Path(__file__).resolve().parents[2]
BUNDLED = McpServerSpec(
    command=[sys.executable, "-m", "conformance", "mcp-server"], env={FIXED_NOW_ENV: str(NOW)}, cwd=str(REPO_ROOT)
)
LATE = McpServerSpec(command=[sys.executable, str(Path(__file__).with_name("_late_server.py"))], cwd=str(REPO_ROOT))
# slow_progress takes STEPS x INTERVAL = 2.4 s > TIMEOUT, with a notification every 0.8 s < TIMEOUT
STEPS, INTERVAL, TIMEOUT = 3, 0.8, 2.0


@pytest.fixture(scope="module")
def session() -> Iterator[McpSession]:
    with McpSession(BUNDLED, timeout=30.0) as opened:
        yield opened


def test_a_call_asks_for_progress_and_keeps_it_with_its_result(session: McpSession) -> None:
    log = ProgressLog()
    result = session.call_tool("slow_progress", {"steps": 3, "interval": 0}, call_id="call_1", log=log)
    assert result.content == (Text(text="done: 3 steps of 0 s"),) and not result.is_error
    expected = [{"progress": float(n), "total": 3.0, "message": step_message(n, 3)} for n in (1, 2, 3)]
    assert result.provider_details[MCP_KEY]["progress"] == expected
    assert log.count == 3 and log.expired is None


def test_a_result_without_progress_has_none(session: McpSession) -> None:
    result = session.call_tool("slow_progress", {"steps": 2, "interval": 0, "report": False})
    assert "progress" not in result.provider_details.get(MCP_KEY, {})


def test_progress_restarts_the_timeout_when_asked(session: McpSession) -> None:
    log = ProgressLog()
    arguments = {"steps": STEPS, "interval": INTERVAL}
    result = session.call_tool("slow_progress", arguments, timeout=TIMEOUT, reset_timeout_on_progress=True, log=log)
    assert result.content == (Text(text=f"done: {STEPS} steps of {INTERVAL:g} s"),)
    assert log.count == STEPS and log.expired is None


def test_without_reset_the_same_call_times_out_and_keeps_what_came(session: McpSession) -> None:
    log = ProgressLog()
    with pytest.raises(McpTimeoutError, match=r"tools/call slow_progress: no answer from the MCP server within 2 s"):
        session.call_tool("slow_progress", {"steps": STEPS, "interval": INTERVAL}, timeout=TIMEOUT, log=log)
    assert log.expired is not None and log.expired.kind == "timeout" and log.expired.seconds == TIMEOUT
    assert log.count < STEPS  # what came before the timeout (the first step's, at any sane load) is kept
    assert log.updates[:1] in ([], [ProgressUpdate(progress=1.0, total=float(STEPS), message=step_message(1, STEPS))])
    assert session.call_tool("getTime").content == (Text(text=str(NOW)),)  # the session goes on


def test_a_silent_call_of_the_same_length_times_out_even_with_reset(session: McpSession) -> None:
    log = ProgressLog()
    with pytest.raises(McpTimeoutError, match=r"no answer from the MCP server within 2 s"):
        session.call_tool(
            "slow_progress",
            {"steps": STEPS, "interval": INTERVAL, "report": False},
            timeout=TIMEOUT,
            reset_timeout_on_progress=True,
            log=log,
        )
    assert log.count == 0 and log.expired is not None and log.expired.kind == "timeout"


def test_progress_forever_stops_at_the_maximum(session: McpSession) -> None:
    log = ProgressLog()
    with pytest.raises(McpTimeoutError, match=r"within the call's maximum of 1.5 s \(max_total_timeout\)"):
        session.call_tool(
            "slow_progress",
            {"steps": 100, "interval": 0.1},  # 10 s of steady progress
            timeout=TIMEOUT,
            reset_timeout_on_progress=True,
            max_total_timeout=1.5,
            log=log,
        )
    assert log.expired is not None and log.expired.kind == "max_total" and log.count >= 1


def _cancelled_line(session: McpSession) -> str:
    deadline = time.monotonic() + 30  # a safety net: the server writes the line before its late answer
    while "CANCELLED" not in session.stderr_tail() and time.monotonic() < deadline:
        time.sleep(0.02)
    return session.stderr_tail()


def test_a_call_past_its_timeout_is_cancelled_and_its_late_answer_ignored() -> None:
    with McpSession(LATE, timeout=30.0) as session:
        log = ProgressLog()
        with pytest.raises(McpTimeoutError, match=r"tools/call late: no answer and no progress .* within 0.5 s"):
            session.call_tool("late", {}, timeout=0.5, reset_timeout_on_progress=True, log=log)
        assert log.updates == [ProgressUpdate(progress=1.0, total=2.0, message="half way")]
        found = re.search(r"CANCELLED held=(\S+) requestId=(\S+) reason=(.+)", _cancelled_line(session))
        assert found is not None, session.stderr_tail()
        held, cancelled, reason = found.groups()
        assert held == cancelled and reason.strip() not in ("", "None")  # the spec's requestId and reason
        # the late answer ("late answer") arrived after the cancel: the next call gets its own answer
        result = session.call_tool("echo", {"text": "hi"}, call_id="call_2")
        assert result.content == (Text(text="echo hi"),) and result.call_id == "call_2"
        assert session.call_tool("echo", {"text": "again"}).content == (Text(text="echo again"),)
