"""Progress and timeouts of one ``tools/call``: the pure deadline logic (no I/O, no ``mcp`` import).

MCP 2025-11-25, basic/lifecycle "Timeouts": "Implementations SHOULD establish timeouts for all sent
requests [...] When the request has not received a success or error response within the timeout
period, the sender SHOULD issue a cancellation notification for that request and stop waiting for a
response." and "Implementations MAY choose to reset the timeout clock when receiving a progress
notification corresponding to the request, as this implies that work is actually happening.
However, implementations SHOULD always enforce a maximum timeout, regardless of progress
notifications". The names follow the TypeScript SDK's ``RequestOptions`` (``resetTimeoutOnProgress``,
``maxTotalTimeout``), which a scenario spells ``reset_timeout_on_progress`` / ``max_total_timeout``.

MCP 2025-11-25, basic/utilities/progress: a request asks for progress with ``_meta.progressToken``;
the receiver MAY send ``notifications/progress`` with ``progressToken``, ``progress`` (which "MUST
increase with each notification"), an optional ``total`` and an optional ``message``.

``CallDeadline`` is the clock of one call, a value: ``deadline`` is when it expires, ``after_progress``
the clock after a notification, ``expiry`` which bound ran out. Times are seconds on any monotonic
clock the caller passes in (the bridge passes the event loop's; the tests a fake one)::

    policy = ProgressPolicy(timeout=1.0, reset_on_progress=True)         # max_total: 10 s (10 x timeout)
    clock = CallDeadline(policy=policy, started=100.0)                   # deadline 101.0
    clock = clock.after_progress(100.8)                                  # deadline 101.8
    clock.expiry(101.8)                                                  # Expiry(kind="timeout", seconds=1.0)

``ProgressLog`` keeps what arrived for one call (bounded: the first ``PROGRESS_KEPT - 1`` and the
latest, and a count), for ``ToolResult.provider_details["mcp"]["progress"]`` (``as_json``) and the
case's report (``progress_notes``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from conformance.errors import UsageError
from conformance.model import Message, ToolResult

__all__ = [
    "DEFAULT_MAX_TOTAL_FACTOR",
    "PROGRESS_KEPT",
    "CallDeadline",
    "Expiry",
    "ProgressLog",
    "ProgressPolicy",
    "ProgressUpdate",
    "progress_notes",
    "progress_summary",
]

DEFAULT_MAX_TOTAL_FACTOR = 10.0
"""With ``reset_on_progress`` and no ``max_total``, a call may take at most this many times its
``timeout`` in all (the spec's "maximum timeout, regardless of progress notifications")."""

PROGRESS_KEPT = 100
"""Progress notifications kept per call (the first 99 and the latest); the rest are only counted."""

_MESSAGE_CHARS = 200
_MCP_KEY = "mcp"  # conformance.mcp_bridge._convert.MCP_KEY


@dataclass(frozen=True, kw_only=True)
class ProgressPolicy:
    """How long one call may take: ``timeout`` seconds, restarted by each progress notification when
    ``reset_on_progress``; never more than ``total_limit`` in all."""

    timeout: float
    """Seconds without an answer (and, with ``reset_on_progress``, without progress) before the call is cancelled."""
    reset_on_progress: bool = False
    """A ``notifications/progress`` for the call restarts ``timeout`` (``resetTimeoutOnProgress``)."""
    max_total: float | None = None
    """Seconds the call may take in all, progress or not (None: ``DEFAULT_MAX_TOTAL_FACTOR`` x ``timeout``
    with ``reset_on_progress``; ``timeout`` without)."""

    def __post_init__(self) -> None:
        if not self.timeout > 0 or math.isinf(self.timeout):
            raise UsageError(f"the MCP call timeout must be a positive number of seconds, got {self.timeout}")
        if self.max_total is not None and (not self.max_total > 0 or math.isinf(self.max_total)):
            raise UsageError(f"max_total_timeout must be a positive number of seconds, got {self.max_total}")

    @property
    def total_limit(self) -> float:
        """Seconds the call may take in all, whatever progress it reports."""
        if self.reset_on_progress:
            return self.max_total if self.max_total is not None else DEFAULT_MAX_TOTAL_FACTOR * self.timeout
        return self.timeout if self.max_total is None else min(self.timeout, self.max_total)


@dataclass(frozen=True, kw_only=True)
class Expiry:
    """Which bound a call ran out of: ``timeout`` (no answer, and no progress when progress resets it,
    within ``seconds``) or ``max_total`` (the call's maximum, ``seconds`` in all)."""

    kind: Literal["timeout", "max_total"]
    seconds: float
    progress_count: int = 0
    """How many progress notifications had arrived."""
    reset_on_progress: bool = False
    """Whether progress restarted the call's timeout."""

    def describe(self) -> str:
        """Why the call was given up, for an error message (``tools/call NAME: ...`` before it)."""
        times = f"{self.progress_count} time{'' if self.progress_count == 1 else 's'}"
        if self.kind == "max_total":
            return (
                f"no answer from the MCP server within the call's maximum of {self.seconds:g} s (max_total_timeout),"
                f" though it reported progress {times}"
            )
        if self.progress_count and not self.reset_on_progress:
            return (
                f"no answer from the MCP server within {self.seconds:g} s (it reported progress {times};"
                " progress does not restart this call's timeout: reset_timeout_on_progress)"
            )
        if self.progress_count:
            return (
                f"no answer and no progress from the MCP server within {self.seconds:g} s"
                f" (after {self.progress_count} progress notification{'' if self.progress_count == 1 else 's'})"
            )
        return f"no answer from the MCP server within {self.seconds:g} s"


@dataclass(frozen=True, kw_only=True)
class CallDeadline:
    """The clock of one call: started at ``started``, last restarted by progress at ``last_progress``."""

    policy: ProgressPolicy
    started: float
    last_progress: float | None = None
    progress_count: int = 0

    @property
    def deadline(self) -> float:
        """When the call expires (same clock as ``started``)."""
        limit = self.started + self.policy.total_limit
        if self.policy.reset_on_progress and self.last_progress is not None:
            return min(limit, self.last_progress + self.policy.timeout)
        return min(limit, self.started + self.policy.timeout)

    def after_progress(self, now: float) -> CallDeadline:
        """The clock after a progress notification at ``now`` (restarted only with ``reset_on_progress``)."""
        last = self.last_progress
        if self.policy.reset_on_progress:  # a clock never runs backwards
            last = max(now, self.started if last is None else last)
        return replace(self, last_progress=last, progress_count=self.progress_count + 1)

    def expiry(self, now: float) -> Expiry | None:
        """The bound the call ran out of at ``now``, None while it may go on."""
        if now < self.deadline:
            return None
        total = self.policy.total_limit
        if now >= self.started + total and (self.policy.reset_on_progress or total < self.policy.timeout):
            kind: Literal["timeout", "max_total"] = "max_total"
            seconds = total
        else:
            kind, seconds = "timeout", self.policy.timeout
        return Expiry(
            kind=kind,
            seconds=seconds,
            progress_count=self.progress_count,
            reset_on_progress=self.policy.reset_on_progress,
        )


@dataclass(frozen=True, kw_only=True)
class ProgressUpdate:
    """One ``notifications/progress`` for a call: ``progress``, ``total`` and ``message`` as sent."""

    progress: float
    total: float | None = None
    message: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The notification's fields, as the spec spells them (absent ones left out)."""
        out: dict[str, Any] = {"progress": self.progress}
        if self.total is not None:
            out["total"] = self.total
        if self.message is not None:
            out["message"] = self.message
        return out


class ProgressLog:
    """What arrived for one call, bounded (``PROGRESS_KEPT``), and why it was given up (``expired``).

    The bridge's session appends to it from the event-loop thread while the call runs; the caller
    reads it once the call has ended."""

    def __init__(self) -> None:
        self.updates: list[ProgressUpdate] = []
        """The first ``PROGRESS_KEPT - 1`` updates and the latest."""
        self.count = 0
        """Every update that arrived."""
        self.expired: Expiry | None = None
        """Set when the call ran out of time."""

    def add(self, update: ProgressUpdate) -> None:
        self.count += 1
        if len(self.updates) < PROGRESS_KEPT:
            self.updates.append(update)
        else:
            self.updates[-1] = update

    def as_json(self) -> list[dict[str, Any]]:
        """``provider_details["mcp"]["progress"]``: each kept update's fields."""
        return [update.as_json() for update in self.updates]

    def attach(self, result: ToolResult) -> ToolResult:
        """``result`` with this progress in ``provider_details["mcp"]`` (``progress``, and ``progress_count``
        when more arrived than were kept); ``result`` itself when none arrived."""
        if not self.count:
            return result
        mcp = dict(result.provider_details.get(_MCP_KEY) or {})
        mcp["progress"] = self.as_json()
        if self.count > len(self.updates):
            mcp["progress_count"] = self.count
        return replace(result, provider_details={**result.provider_details, _MCP_KEY: mcp})


def _number(value: float) -> str:
    return f"{value:g}"


def progress_summary(name: str, call_id: str, progress: Sequence[Mapping[str, Any]], count: int | None = None) -> str:
    """One line for a report: what ``tools/call name`` (``call_id``) reported, from its kept updates.

    ``progress`` is ``provider_details["mcp"]["progress"]``; ``count`` how many arrived (default: as many)."""
    total = len(progress) if count is None else count
    if not progress:
        return f"MCP tools/call {name} ({call_id}): no progress notifications"
    last = progress[-1]
    shown = _number(float(last.get("progress", 0)))
    if isinstance(last.get("total"), int | float):
        shown += f"/{_number(float(last['total']))}"
    message = last.get("message")
    if isinstance(message, str) and message:
        cut = message if len(message) <= _MESSAGE_CHARS else message[:_MESSAGE_CHARS] + "..."
        shown += f" {cut!r}"
    return f"MCP tools/call {name} ({call_id}): {total} progress notification{'' if total == 1 else 's'}, last {shown}"


def progress_notes(messages: Iterable[Message]) -> list[str]:
    """``progress_summary`` of each tool result in ``messages`` (a conversation's history) whose
    ``provider_details["mcp"]`` holds progress, in order: what a case's report says of them."""
    out: list[str] = []
    for message in messages:
        for part in message.parts:
            if not isinstance(part, ToolResult):
                continue
            mcp = part.provider_details.get(_MCP_KEY)
            if not isinstance(mcp, Mapping):
                continue
            progress, count = mcp.get("progress"), mcp.get("progress_count")
            if isinstance(progress, list) and progress:
                count = count if isinstance(count, int) else None
                out.append(progress_summary(part.name or "?", part.call_id, progress, count))
    return out
