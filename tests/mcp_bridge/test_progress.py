"""Tests for ``conformance.mcp_bridge.progress``: one call's deadline with a fake clock (no sleeps).

The rules come from MCP 2025-11-25: basic/lifecycle "Timeouts" (a timeout per request; "MAY choose
to reset the timeout clock when receiving a progress notification"; "SHOULD always enforce a
maximum timeout, regardless of progress notifications") and basic/utilities/progress (the
notification's ``progress``, optional ``total`` and ``message``).
"""

from __future__ import annotations

import pytest

from conformance.errors import UsageError
from conformance.mcp_bridge.progress import (
    DEFAULT_MAX_TOTAL_FACTOR,
    PROGRESS_KEPT,
    CallDeadline,
    Expiry,
    ProgressLog,
    ProgressPolicy,
    ProgressUpdate,
    progress_notes,
    progress_summary,
)
from conformance.model import Message, Text, ToolResult

START = 1000.0


def clock(timeout: float, *, reset: bool = False, max_total: float | None = None) -> CallDeadline:
    return CallDeadline(
        policy=ProgressPolicy(timeout=timeout, reset_on_progress=reset, max_total=max_total), started=START
    )


def test_without_reset_progress_does_not_move_the_deadline() -> None:
    call = clock(1.0)
    for now in (START + 0.3, START + 0.6, START + 0.9):
        call = call.after_progress(now)
    assert call.deadline == START + 1.0
    assert call.expiry(START + 0.99) is None
    assert call.expiry(START + 1.0) == Expiry(kind="timeout", seconds=1.0, progress_count=3)


def test_with_reset_each_notification_restarts_the_timeout() -> None:
    call = clock(1.0, reset=True)
    assert call.deadline == START + 1.0
    for step in range(1, 5):  # a slow tool reporting every 0.6 s: 2.4 s in all, never 1 s silent
        now = START + 0.6 * step
        assert call.expiry(now) is None
        call = call.after_progress(now)
        assert call.deadline == pytest.approx(now + 1.0)
    assert call.progress_count == 4


def test_a_silent_call_of_the_same_length_times_out_at_the_timeout() -> None:
    call = clock(1.0, reset=True)
    assert call.expiry(START + 0.6) is None
    expired = call.expiry(START + 1.0)
    assert expired == Expiry(kind="timeout", seconds=1.0, progress_count=0, reset_on_progress=True)
    assert expired.describe() == "no answer from the MCP server within 1 s"


def test_progress_forever_is_bounded_by_the_maximum() -> None:
    call = clock(1.0, reset=True, max_total=3.0)
    now = START
    while call.expiry(now) is None:
        call = call.after_progress(now)
        now += 0.5  # a server that never stops reporting
    assert now == START + 3.0
    assert call.deadline == START + 3.0
    expired = call.expiry(now)
    assert expired is not None and expired.kind == "max_total" and expired.seconds == 3.0
    assert expired.describe() == (
        "no answer from the MCP server within the call's maximum of 3 s (max_total_timeout),"
        " though it reported progress 6 times"
    )


def test_the_default_maximum_is_a_stated_multiple_of_the_timeout() -> None:
    assert ProgressPolicy(timeout=2.0, reset_on_progress=True).total_limit == DEFAULT_MAX_TOTAL_FACTOR * 2.0
    assert ProgressPolicy(timeout=2.0).total_limit == 2.0  # without reset the timeout is the bound
    assert ProgressPolicy(timeout=2.0, max_total=0.5).total_limit == 0.5  # a smaller maximum still bounds
    assert clock(2.0, max_total=0.5).expiry(START + 0.5) == Expiry(kind="max_total", seconds=0.5)


def test_a_notification_from_the_past_never_moves_the_deadline_back() -> None:
    call = clock(1.0, reset=True).after_progress(START + 0.8).after_progress(START + 0.2)
    assert call.deadline == START + 1.8


@pytest.mark.parametrize(
    ("progress_count", "reset", "words"),
    [
        (2, True, "no answer and no progress from the MCP server within 1 s (after 2 progress notifications)"),
        (1, False, "within 1 s (it reported progress 1 time; progress does not restart this call's timeout"),
    ],
)
def test_the_reason_says_what_progress_came(progress_count: int, reset: bool, words: str) -> None:
    expiry = Expiry(kind="timeout", seconds=1.0, progress_count=progress_count, reset_on_progress=reset)
    assert words in expiry.describe()


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan")])
def test_a_policy_needs_positive_finite_seconds(bad: float) -> None:
    with pytest.raises(UsageError, match="timeout must be a positive number"):
        ProgressPolicy(timeout=bad)
    with pytest.raises(UsageError, match="max_total_timeout must be a positive number"):
        ProgressPolicy(timeout=1.0, max_total=bad)


def test_the_log_keeps_the_first_and_the_latest_and_counts_them_all() -> None:
    log = ProgressLog()
    for step in range(1, 1001):  # a server flooding notifications
        log.add(ProgressUpdate(progress=float(step), total=1000.0))
    assert log.count == 1000
    assert len(log.updates) == PROGRESS_KEPT
    assert log.updates[0].progress == 1.0 and log.updates[-1].progress == 1000.0
    result = log.attach(ToolResult(call_id="c1", name="t", provider_details={"mcp": {"meta": {"k": 1}}}))
    mcp = result.provider_details["mcp"]
    assert mcp["meta"] == {"k": 1} and mcp["progress_count"] == 1000 and len(mcp["progress"]) == PROGRESS_KEPT


def test_a_log_without_progress_leaves_the_result_as_it_is() -> None:
    result = ToolResult(call_id="c1", name="t", content=(Text(text="ok"),))
    assert ProgressLog().attach(result) is result


def test_an_update_spells_the_notification_fields() -> None:
    assert ProgressUpdate(progress=1.0).as_json() == {"progress": 1.0}
    assert ProgressUpdate(progress=2.0, total=4.0, message="step 2 of 4").as_json() == {
        "progress": 2.0,
        "total": 4.0,
        "message": "step 2 of 4",
    }


def test_the_report_notes_name_each_call_that_reported_progress() -> None:
    log = ProgressLog()
    for step in (1, 2):
        log.add(ProgressUpdate(progress=float(step), total=2.0, message=f"step {step} of 2"))
    reported = log.attach(ToolResult(call_id="call_1", name="slow_progress"))
    silent = ToolResult(call_id="call_2", name="getTime")
    history = (Message(role="user", parts=(Text(text="go"),)), Message(role="tool", parts=(reported, silent)))
    assert progress_notes(history) == [
        "MCP tools/call slow_progress (call_1): 2 progress notifications, last 2/2 'step 2 of 2'"
    ]
    assert progress_summary("t", "c", [{"progress": 5}], count=7) == (
        "MCP tools/call t (c): 7 progress notifications, last 5"
    )
