"""The bundled server's slow tool that reports progress: ``slow_progress(steps, interval, report)``.

``slow_progress`` works for ``steps`` x ``interval`` seconds; after each step it sends
``notifications/progress`` (``progress`` = the step, ``total`` = ``steps``, ``message`` =
``step N of M``) when the call asked for progress (``_meta.progressToken``: MCP 2025-11-25,
basic/utilities/progress; the SDK's ``Context.report_progress`` sends nothing without a token),
and ``report: false`` keeps it silent for the same length. A client that restarts a call's timeout
on progress (the spec's lifecycle "Timeouts": "MAY choose to reset the timeout clock when
receiving a progress notification") sees it finish where the timeout alone would end it.
Scenarios: ``scenarios/mcp/progress_resets_timeout.yaml``, ``progress_silent_timeout.yaml``.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

__all__ = ["MAX_INTERVAL", "MAX_STEPS", "TOOL_NAMES", "register", "step_message"]

TOOL_NAMES = ("slow_progress",)
"""The tools ``register`` adds."""

MAX_STEPS = 100
"""Most steps one call may take."""
MAX_INTERVAL = 10.0
"""Longest step, in seconds."""


def step_message(step: int, steps: int) -> str:
    """The ``message`` of the progress notification after ``step`` of ``steps``."""
    return f"step {step} of {steps}"


def register(app: MCPServer) -> None:
    """Add ``slow_progress`` to ``app``."""

    async def slow_progress(
        ctx: Context,
        steps: Annotated[int, Field(ge=1, le=MAX_STEPS, description="How many steps to work")] = 4,
        interval: Annotated[float, Field(ge=0, le=MAX_INTERVAL, description="Seconds per step")] = 0.25,
        report: Annotated[bool, Field(description="Send a progress notification after each step")] = True,
    ) -> str:
        for step in range(1, steps + 1):
            await anyio.sleep(interval)
            if report:
                await ctx.report_progress(step, steps, step_message(step, steps))
        return f"done: {steps} steps of {interval:g} s"

    app.add_tool(
        slow_progress,
        name="slow_progress",
        description=(
            "Works for steps x interval seconds and reports progress after each step"
            " (notifications/progress: step, steps, 'step N of M'); report: false works as long, silently."
        ),
        structured_output=False,
    )
