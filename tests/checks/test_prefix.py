"""``roundtrip.cache_prefix`` (``conformance.checks.prefix``): each request's cacheable prefix (tools, then
system, then the earlier messages, in the wire's order) is the previous request's, extended."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.checks._common import CaseContext
from conformance.checks.prefix import check_cache_prefix, prefix_elements
from conformance.model import Request, Response
from conformance.run.conversation import ConversationOutcome, ToolListChange, TurnOutcome
from conformance.scenarios.values import Scenario
from conformance.verdicts import CheckVerdict


def _case(wire: str, bodies: list[dict[str, Any]], *, client: bool = False) -> CaseContext:
    turns = tuple(
        TurnOutcome(
            turn=n,
            request=Request(),
            wire=WireRequest(path="/x", body=body),
            status=200,
            response=Response(parts=(), finish_reason="stop"),
        )
        for n, body in enumerate(bodies)
    )
    clients = None
    if client:
        from conformance.clients.evidence import ClientTurn
        from conformance.clients.invoke import TurnResult

        clients = tuple(
            ClientTurn(turn=n, asked_stream=False, sent=(), result=TurnResult(returned="response"))
            for n in range(len(bodies))
        )
    return CaseContext(
        scenario=Scenario(id="s", behavior="", source="", path="s.yaml"),  # type: ignore[arg-type]
        adapter=get_adapter(wire),
        mode="non_stream",
        outcome=ConversationOutcome(scenario="s", adapter=wire, mode="non_stream", turns=turns),
        client=clients,
    )


def _verdict(wire: str, bodies: list[dict[str, Any]], **kw: Any) -> CheckVerdict:
    found = check_cache_prefix(_case(wire, bodies, **kw))
    assert found is not None
    return found


_TOOLS = [{"name": "a", "input_schema": {}}, {"name": "b", "input_schema": {}}]
_M0 = {"role": "user", "content": "Weather?"}
_M1 = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}]}
_M2 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "8"}]}


@pytest.mark.parametrize("client", [False, True])
def test_a_request_that_extends_the_previous_one_passes(client: bool) -> None:
    first = {"tools": _TOOLS, "system": "Be brief.", "messages": [_M0]}
    second = {"tools": _TOOLS, "system": "Be brief.", "messages": [_M0, _M1, _M2], "max_tokens": 99}
    assert _verdict("anthropic", [first, second], client=client).status == "pass"


def test_reordered_tools_fail_at_the_first_tool_that_moved() -> None:
    first = {"tools": _TOOLS, "messages": [_M0]}
    second = {"tools": list(reversed(_TOOLS)), "messages": [_M0, _M1, _M2]}
    found = _verdict("anthropic", [first, second])
    assert found.status == "fail"
    [finding] = found.findings
    assert (finding.path, finding.expected, finding.actual, finding.turn) == ("$.tools[0].name", "a", "b", 1)
    assert "request 0 -> 1" in finding.message


def test_a_rewritten_earlier_message_fails_with_its_path() -> None:
    first = {"messages": [_M0, _M1, _M2]}
    rewritten = {**_M1, "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}}]}
    second = {"messages": [_M0, rewritten, _M2, {"role": "assistant", "content": "ok"}]}
    [finding] = _verdict("anthropic", [first, second]).findings
    assert finding.path == "$.messages[1].content[0].input.x"


def test_cache_control_markers_and_a_string_content_as_one_text_block_are_the_same_prefix() -> None:
    """The incremental pattern moves the breakpoint to the newest block (Anthropic prompt caching docs);
    ``content`` as a string is one text block (anthropic-sdk-python ``types/message_param.py``)."""
    marked = {"role": "user", "content": [{"type": "text", "text": "Weather?", "cache_control": {"type": "ephemeral"}}]}
    first = {"tools": [{**_TOOLS[0], "cache_control": {"type": "ephemeral"}}], "system": "S", "messages": [marked]}
    second = {"tools": [_TOOLS[0]], "system": [{"type": "text", "text": "S"}], "messages": [_M0, _M1]}
    assert _verdict("anthropic", [first, second]).status == "pass"


def test_gemini_signatures_compare_as_bytes_and_system_instruction_in_either_spelling() -> None:
    part = {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "ab+/"}
    first = {"systemInstruction": {"parts": [{"text": "S"}]}, "contents": [{"role": "model", "parts": [part]}]}
    second = {
        "system_instruction": {"parts": [{"text": "S"}]},
        "contents": [{"role": "model", "parts": [{**part, "thoughtSignature": "ab-_"}]}, {"role": "user", "parts": []}],
    }
    assert _verdict("gemini", [first, second]).status == "pass"
    second["contents"][0]["parts"][0]["thoughtSignature"] = "AAAA"  # type: ignore[index]
    assert _verdict("gemini", [first, second]).status == "fail"


def test_a_shorter_request_and_a_dropped_message_fail() -> None:
    first = {"messages": [{"role": "system", "content": "S"}, _M0, _M1]}
    second = {"messages": [{"role": "system", "content": "S"}, _M1]}
    [finding] = _verdict("openai_chat", [first, second]).findings
    assert finding.path.startswith("$.messages[1]")


def test_a_reasoning_item_re_serialised_moves_the_prefix() -> None:
    rs = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    first = {"instructions": "S", "input": [{"role": "user", "content": "Q"}, rs]}
    second = {"instructions": "S", "input": [{"role": "user", "content": "Q"}, {**rs, "encrypted_content": "gAAB"}]}
    [finding] = _verdict("openai_responses", [first, second]).findings
    assert finding.path == "$.input[1].encrypted_content"
    chained = {"previous_response_id": "resp_1", "input": [{"role": "user", "content": "more"}]}
    assert check_cache_prefix(_case("openai_responses", [first, chained])) is None


def test_the_last_message_continued_in_place_is_a_note_not_a_defect() -> None:
    """Qwen-Agent's ``simulate_response_completion_with_chat`` appends the assistant's continuation to
    the last user message: the prefix holds up to the end of its old text."""
    first = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]}
    second = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q\n\nmore"}]}
    found = _verdict("openai_chat", [first, second])
    assert found.status == "pass" and [f.kind for f in found.findings] == ["note"]
    third = {
        "messages": [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "Q"},
            {"role": "user", "content": "x"},
        ]
    }
    assert _verdict("openai_chat", [second, third]).status == "fail"


def test_single_request_cases_and_hostile_bodies_give_no_crash() -> None:
    assert check_cache_prefix(_case("anthropic", [{"messages": [_M0]}])) is None
    hostile = [{"messages": 3, "tools": None, "system": {"x": [1] * 5}}, {"messages": [None, "x"], "tools": "t"}]
    for wire in ("anthropic", "openai_chat", "openai_responses", "gemini", "ollama"):
        check_cache_prefix(_case(wire, hostile))
    assert prefix_elements("unknown", {}) is None
    big = {"messages": [{"role": "assistant", "content": "x" * 1_000_000}]}
    moved = {"messages": [{"role": "assistant", "content": "y" * 1_000_000}, _M0]}
    [finding] = _verdict("ollama", [big, moved]).findings
    assert len(str(finding.expected)) < 400


# ---- a toolset the MCP server changed (issue 31 point 3) ----------------------------------------


def test_a_toolset_the_server_changed_moves_the_prefix_with_a_note_not_a_failure() -> None:
    tool = {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}
    added = {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}}
    user = {"role": "user", "content": "hi"}
    call: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": []}
    bodies: list[dict[str, Any]] = [
        {"tools": [tool], "messages": [user]},
        {"tools": [added, tool], "messages": [user, call]},  # the new list puts b first: the prefix moved at once
        {"tools": [added, tool], "messages": [user, {"role": "user", "content": "edited"}]},  # a real move after
    ]
    ctx = _case("openai_chat", bodies)
    change = ToolListChange(after_turn=0, added=("b",))
    ctx = replace(ctx, outcome=replace(ctx.outcome, tool_changes=(change,)))
    found = check_cache_prefix(ctx)
    assert found is not None and found.status == "fail"
    note, move = found.findings
    assert note.kind == "note" and note.turn == 1
    assert note.message.startswith(
        "request 0 -> 1: the toolset changed after turn 0 (notifications/tools/list_changed: added b): the MCP"
        " server changed the tools"
    )
    assert "not the client's doing" in note.message
    assert move.kind == "defect" and move.turn == 2 and move.path.startswith("$.messages[1].")  # the next pair judged


def test_without_a_change_of_the_next_pair_the_note_alone_passes() -> None:
    tool = {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}
    bodies: list[dict[str, Any]] = [
        {"tools": [tool], "messages": [{"role": "user", "content": "hi"}]},
        {"messages": []},
    ]
    ctx = _case("openai_chat", bodies)
    ctx = replace(ctx, outcome=replace(ctx.outcome, tool_changes=(ToolListChange(after_turn=0, removed=("a",)),)))
    found = check_cache_prefix(ctx)
    assert found is not None and found.status == "pass"
    assert [f.kind for f in found.findings] == ["note"]
