"""``translation.tool_list``: each request offers exactly the tools the bridge held at that turn.

An MCP server may change its tool list between turns (MCP 2025-11-25 server/tools, "List Changed
Notification": servers send ``notifications/tools/list_changed`` "When the list of available tools
changes"; the client then lists again). The bridge follows it (``conformance.run.conversation``:
``ConversationOutcome.tool_changes``; each ``TurnOutcome.request.tools`` is the list it held when
that turn's request was made), and the request must carry that list: every tool by name, in order,
each with its description and input schema as the wire carries them (a schema the adapter reports
as changed, Gemini E15, by name only, as ``translation.tool_definitions`` does). An adapter or a
client that keeps offering the old list (a tool the server removed, an old schema, no added tool)
FAILs, each finding naming the tool and the turn after which the server changed it.

Judged only on cases whose tool list changed (``tool_changes`` not empty); the first request of every
case is ``translation.tool_definitions``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conformance.checks._common import CaseContext, verdict
from conformance.checks._meaning import canonical_schema, input_schema
from conformance.model import Tool
from conformance.run.conversation import ToolListChange
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["check_tool_list"]

_CHECK = "translation.tool_list"


def check_tool_list(ctx: CaseContext) -> CheckVerdict | None:
    """``translation.tool_list``; None when the case's tool list never changed (or offers no tools)."""
    changes = ctx.outcome.tool_changes
    if not changes or ctx.scenario.tool_choice == "none":
        return None
    canonical = canonical_schema if ctx.client is not None else input_schema
    findings: list[Finding] = []
    for position, turn in enumerate(ctx.outcome.turns):
        held = turn.request.tools
        sent = ctx.read_back(position).tools
        changed = {change.tool for change in turn.wire.schema_changes}
        findings += _differences(
            held, sent, changed, canonical, [c for c in changes if c.after_turn < turn.turn], turn.turn
        )
    return verdict(_CHECK, findings)


def _why(name: str, changes: Sequence[ToolListChange], what: str) -> str:
    for change in reversed(changes):
        if name in getattr(change, what):
            return f" ({what} by the MCP server after turn {change.after_turn}: notifications/tools/list_changed)"
    return ""


def _differences(
    held: Sequence[Tool],
    sent: Sequence[Tool],
    changed: set[str],
    canonical: Callable[[Mapping[str, Any] | None], Any],
    before: Sequence[ToolListChange],
    turn: int,
) -> list[Finding]:
    findings: list[Finding] = []
    held_names = [t.name for t in held]
    sent_by_name: Mapping[str, Tool] = {t.name: t for t in sent}
    for tool in sent:
        if tool.name not in held_names:
            findings.append(
                Finding(
                    check=_CHECK,
                    message=f"offers {tool.name!r}, which the MCP server no longer lists"
                    f"{_why(tool.name, before, 'removed')}: the request keeps an old tool list",
                    path=f"tools[{tool.name!r}]",
                    expected=None,
                    actual=tool.name,
                    turn=turn,
                )
            )
    for tool in held:
        got = sent_by_name.get(tool.name)
        if got is None:
            findings.append(
                Finding(
                    check=_CHECK,
                    message=f"does not offer {tool.name!r}, which the MCP server lists"
                    f"{_why(tool.name, before, 'added')}",
                    path=f"tools[{tool.name!r}]",
                    expected=tool.name,
                    actual=None,
                    turn=turn,
                )
            )
            continue
        if (tool.description or "") != (got.description or ""):
            findings.append(
                Finding(
                    check=_CHECK,
                    message=f"offers {tool.name!r} with another description than the MCP server's list"
                    f"{_why(tool.name, before, 'changed')}",
                    path=f"tools[{tool.name!r}].description",
                    expected=tool.description or "",
                    actual=got.description or "",
                    turn=turn,
                )
            )
        if tool.name not in changed and canonical(tool.input_schema) != canonical(got.input_schema):
            findings.append(
                Finding(
                    check=_CHECK,
                    message=f"offers {tool.name!r} with another input schema than the MCP server's list"
                    f"{_why(tool.name, before, 'changed')}: the request keeps an old schema",
                    path=f"tools[{tool.name!r}].input_schema",
                    expected=dict(tool.input_schema),
                    actual=dict(got.input_schema),
                    turn=turn,
                )
            )
    if not findings and [t.name for t in sent] != held_names:
        findings.append(
            Finding(
                check=_CHECK,
                message="offers the MCP server's tools in another order than its list",
                path="$.tools",
                expected=held_names,
                actual=[t.name for t in sent],
                turn=turn,
            )
        )
    return findings
