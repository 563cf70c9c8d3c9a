"""``roundtrip.cache_prefix``: each request's cacheable prefix is the previous request's, extended.

Providers cache a prompt by its prefix: Anthropic ``tools``, then ``system``, then ``messages`` up to a
breakpoint (https://platform.claude.com/docs/en/build-with-claude/prompt-caching), OpenAI and Gemini
automatically, by the longest prefix already seen. A library that reorders tools, rewrites an
earlier message or re-serialises a reasoning payload moves the prefix and pays full price on every
request (litellm #34248, #17479; pydantic-ai #6528). For every pair of consecutive requests of a
multi-turn case, adapters and black-box clients alike, the elements of request k's prefix must be
the first elements of request k+1's, in order and equal after JSON parsing. Per wire, in its order:

- ``anthropic``: each tool, ``system``, each message;
- ``openai_chat`` (and the prompt adapters over it): each tool, each message;
- ``openai_responses``: each tool, ``instructions``, each ``input`` item (a request continuing with
  ``previous_response_id`` holds no history: the pair is not judged);
- ``gemini``: each tool, ``systemInstruction`` (or ``system_instruction``), each ``contents`` entry;
- ``ollama``: each tool, each message.

Compared as the provider reads them: ``cache_control`` keys are left out at every depth (the
incremental pattern moves the breakpoint to the newest block every turn); an Anthropic ``content`` or
``system`` string is the one text block it stands for (anthropic-sdk-python ``types/message_param.py``:
``content: Union[str, Iterable[...]]``); a Gemini ``thoughtSignature`` is the bytes its base64 stands for
where the table says so (``signature as bytes``, docs/equivalences.md); and an Anthropic assistant
turn's thinking blocks are left out of both sides once a new user text turn follows it in the later
request, where the table accepts that (``thinking omitted after user text``). A finding names the
first position where the prefix moved (``$.messages[3].content[0].text``), the request pair, and
the value before and after.

A toolset the MCP server changed between two requests (``notifications/tools/list_changed``,
``ConversationOutcome.tool_changes``: the tools come first in every wire's prefix) moves the prefix
by the server's doing, not the client's: whatever follows the tools (and, on the prompt formats, the
system prompt they are rendered into) cannot be read from the cache, so the pair is not judged, and a
note says why (``the toolset changed after turn 0 (notifications/tools/list_changed: added
refund_order)``); whether the request carries the new list is ``translation.tool_list``'s. The pairs
before and after the change are judged as always.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.checks._common import CaseContext, diff_findings, json_list, same_json, verdict
from conformance.checks.equivalences import bundled_table, replay_rule
from conformance.checks.reasoning import clip, signature_bytes
from conformance.run.conversation import ToolListChange
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["check_cache_prefix", "prefix_elements"]

_CHECK = "roundtrip.cache_prefix"

_SECTIONS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "anthropic": (("tools",), ("system",), ("messages",)),
    "openai_chat": (("tools",), ("messages",)),
    "openai_responses": (("tools",), ("instructions",), ("input",)),
    "gemini": (("tools",), ("systemInstruction", "system_instruction"), ("contents",)),
    "ollama": (("tools",), ("messages",)),
}
"""Per wire, the prefix's sections in order; a section is the first of its keys the body has. A list
is one element per item, anything else one element."""


def prefix_elements(
    wire: str, body: Mapping[str, Any], *, signatures_as_bytes: bool = False
) -> list[tuple[str, Any]] | None:
    """The cacheable prefix of a request body on ``wire``: (JSON path, value as compared), in order;
    None when the wire has no known prefix."""
    sections = _SECTIONS.get(wire)
    if sections is None:
        return None
    out: list[tuple[str, Any]] = []
    for keys in sections:
        key = next((k for k in keys if k in body), None)
        if key is None or body[key] is None:
            continue
        value = body[key]
        if wire == "openai_responses" and key == "input" and isinstance(value, str):
            value = [{"role": "user", "content": value}]
        if wire == "anthropic" and key == "system" and isinstance(value, str):
            value = [{"type": "text", "text": value}]
        if isinstance(value, list) and key in _LISTED:
            out += [(f"$.{key}[{n}]", _normal(wire, item, signatures_as_bytes)) for n, item in enumerate(value)]
        else:
            out.append((f"$.{key}", _normal(wire, value, signatures_as_bytes)))
    return out


_LISTED = frozenset({"tools", "messages", "input", "contents"})
"""The sections whose items are elements of their own (the system prompt is one element)."""


def _canonical(path: str) -> str:
    """A path with Gemini's snake_case section spelled as the camelCase one (both are accepted, WF E32)."""
    return path.replace("$.system_instruction", "$.systemInstruction", 1)


def _normal(wire: str, value: Any, as_bytes: bool, depth: int = 0) -> Any:
    if depth > 200:
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "cache_control":
                continue
            if as_bytes and key in ("thoughtSignature", "thought_signature") and signature_bytes(item) is not None:
                out[key] = {"bytes": signature_bytes(item).hex()}  # type: ignore[union-attr]
            elif wire == "anthropic" and key == "content" and isinstance(item, str) and depth == 0:
                out[key] = [{"type": "text", "text": item}]
            else:
                out[key] = _normal(wire, item, as_bytes, depth + 1)
        return out
    if isinstance(value, list):
        return [_normal(wire, item, as_bytes, depth + 1) for item in value]
    return value


def _without_thinking(element: Any) -> Any:
    if not isinstance(element, dict) or not isinstance(element.get("content"), list):
        return element
    kept = [b for b in element["content"] if not (isinstance(b, dict) and b.get("type") in _THINKING)]
    return {**element, "content": kept}


_THINKING = ("thinking", "redacted_thinking")


def _closed(body: Mapping[str, Any]) -> set[int]:
    """The indexes of the assistant messages a user message with more than tool results follows."""
    messages = json_list(body.get("messages"))
    out: set[int] = set()
    later_user_text = False
    for n in range(len(messages) - 1, -1, -1):
        m = messages[n]
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant" and later_user_text:
            out.add(n)
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        if m.get("role") == "user" and (
            isinstance(content, str)
            or any(not (isinstance(b, dict) and b.get("type") == "tool_result") for b in blocks)
        ):
            later_user_text = True
    return out


def check_cache_prefix(ctx: CaseContext) -> CheckVerdict | None:
    """``roundtrip.cache_prefix``: None for a case with fewer than two requests, or a wire with no prefix."""
    wire = ctx.adapter.wire_format
    if wire not in _SECTIONS:
        return None
    table = ctx.equivalences or bundled_table()
    as_bytes = replay_rule(table, "signature as bytes", wire) is not None
    omitted = replay_rule(table, "thinking omitted after user text", wire) is not None
    bodies = [(t.turn, t.wire.body) for t in ctx.outcome.turns if isinstance(t.wire.body, dict)]
    if len(bodies) < 2:
        return None
    findings: list[Finding] = []
    ran = False
    changes = ctx.outcome.tool_changes
    for (k, before), (j, after) in itertools.pairwise(bodies):
        if wire == "openai_responses" and (
            after.get("previous_response_id") is not None or before.get("previous_response_id") is not None
        ):
            continue
        old = prefix_elements(wire, before, signatures_as_bytes=as_bytes) or []
        new = prefix_elements(wire, after, signatures_as_bytes=as_bytes) or []
        ran = True
        moved = [c for c in changes if k <= c.after_turn < j]
        if moved:  # the server changed the toolset, which comes first: nothing after it can be cached
            findings.append(_toolset_note(moved, k, j))
            continue
        closed = _closed(after) if wire == "anthropic" and omitted else set()
        finding = _first_move(old, new, closed, k, j)
        if finding is not None:
            findings.append(finding)
    return verdict(_CHECK, findings) if ran else None


def _toolset_note(moved: Sequence[ToolListChange], k: int, j: int) -> Finding:
    why = "; ".join(
        f"the toolset changed after turn {c.after_turn} (notifications/tools/list_changed: {c.describe()})"
        for c in moved
    )
    return Finding(
        check=_CHECK,
        message=f"request {k} -> {j}: {why}: the MCP server changed the tools, which come first in the prefix"
        " (or in the system prompt a prompt format renders them into), so the provider's cache cannot hold"
        " across this pair; not the client's doing (the pair is not judged; the new tools are"
        " translation.tool_list's)",
        path="$.tools",
        expected=[t.name for t in moved[-1].tools],
        turn=j,
        kind="note",
    )


def _continued(old: Any, new: Any) -> bool:
    """Is ``new`` the message ``old`` with text appended to its string ``content``, nothing else changed?"""
    if not isinstance(old, dict) or not isinstance(new, dict) or old.keys() != new.keys():
        return False
    before, after = old.get("content"), new.get("content")
    return (
        isinstance(before, str)
        and isinstance(after, str)
        and after.startswith(before)
        and all(same_json(v, new[key]) for key, v in old.items() if key != "content")
    )


def _first_move(
    old: Sequence[tuple[str, Any]], new: Sequence[tuple[str, Any]], closed: set[int], k: int, j: int
) -> Finding | None:
    for n, (path, value) in enumerate(old):
        if n >= len(new):
            return Finding(
                check=_CHECK,
                message=f"request {j} is shorter than request {k}'s prefix: {path} of request {k} is not sent again",
                path=path,
                expected=clip(value),
                actual=None,
                turn=j,
            )
        there, got = new[n]
        same_place = _canonical(there) == _canonical(path)
        if same_place and path.startswith("$.messages[") and int(path[11:-1]) in closed:
            value, got = _without_thinking(value), _without_thinking(got)
        if same_place and same_json(value, got):
            continue
        if same_place and n == len(old) - 1 and _continued(value, got):
            return Finding(
                check=_CHECK,
                message=f"request {k} -> {j}: the last message of request {k} is continued in place (its text"
                " extended, as Qwen-Agent's simulate_response_completion_with_chat does): the prefix holds up to"
                " the end of its old text",
                path=f"{path}.content",
                expected=clip(value.get("content")),
                actual=clip(got.get("content")),
                turn=j,
                kind="note",
            )
        where = f"request {k} -> {j}: "
        if not same_place:
            return Finding(
                check=_CHECK,
                message=f"{where}the prefix moved: request {j} has {there} where request {k} had {path}"
                " (a tool or message added, removed or reordered before it)",
                path=there,
                expected=clip(value),
                actual=clip(got),
                turn=j,
            )
        first = diff_findings(_CHECK, value, got, prefix=there, turn=j)
        spot = first[0] if first else None
        return Finding(
            check=_CHECK,
            message=f"{where}the prefix moved at {spot.path if spot else path}: "
            f"request {j} does not send request {k}'s {path} again as it was ({spot.message if spot else 'differs'})",
            path=spot.path if spot else path,
            expected=clip(spot.expected if spot else value),
            actual=clip(spot.actual if spot else got),
            turn=j,
        )
    return None
