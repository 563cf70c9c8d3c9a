"""Tests of ``conformance.adapters._openai_responses_items`` (Responses ``input`` items <-> messages).

Item shapes follow openai-python ``types/responses`` (``EasyInputMessageParam``,
``ResponseFunctionToolCallParam``, ``ResponseReasoningItemParam``, ``function_call_output``) as
summarised in wire-formats.md §2b. The adapter-level round trips are in ``test_openai_responses.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.adapters._openai_responses_items import (
    ERROR_PREFIX,
    items_from_message,
    messages_from_items,
    reasoning_text,
    without,
)
from conformance.adapters.base import NameMap
from conformance.errors import WireFormatError
from conformance.model import Message, Reasoning, Text, ToolCall, ToolResult

NAMES = NameMap()


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def _output(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def test_runs_of_items_group_into_turns() -> None:
    items = [
        {"role": "user", "content": "a"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"role": "assistant", "content": "b"},
        _call("c1"),
        _call("c2"),
        _output("c1", "x"),
        _output("c2", "y"),
        {"role": "user", "content": "c"},
        {"role": "user", "content": "d"},
    ]
    messages = messages_from_items(items, NAMES)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "user", "user"]
    assert [p.kind for p in messages[1].parts] == ["reasoning", "text", "tool_call", "tool_call"]
    assert [p.call_id for p in messages[2].parts if isinstance(p, ToolResult)] == ["c1", "c2"]
    back = [item for m in messages for item in items_from_message(m, NAMES)]
    assert back == items


def test_fresh_assistant_text_joins_into_one_easy_message() -> None:
    message = Message(
        role="assistant", parts=(Text(text="a"), Text(text="b"), ToolCall(id="c", name="f", arguments={}))
    )
    items = items_from_message(message, NAMES)
    assert items[0] == {"role": "assistant", "content": "ab"}
    assert items[1] == {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}


def test_reasoning_text_joins_summaries_then_content() -> None:
    item = {
        "summary": [{"type": "summary_text", "text": "s1"}, {"type": "summary_text", "text": "s2"}],
        "content": [{"type": "reasoning_text", "text": "r1"}],
    }
    assert reasoning_text(item) == "s1\n\ns2\n\nr1"
    assert reasoning_text({"summary": []}) == ""


def test_reasoning_signature_overrides_the_items_encrypted_content() -> None:
    part = Reasoning(signature="new", provider_details={"item": {"type": "reasoning", "id": "rs_1", "summary": []}})
    item, _ = items_from_message(Message(role="assistant", parts=(part, Text(text="ok"))), NAMES)
    assert item == {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "new"}


def test_error_prefix_and_unknown_roles() -> None:
    assert ERROR_PREFIX == "Error: "
    (message,) = messages_from_items([_output("c", "Error: boom")], NAMES)
    assert message.parts == (ToolResult(call_id="c", content=(Text(text="boom"),), is_error=True),)
    with pytest.raises(WireFormatError):
        messages_from_items([{"role": "critic", "content": "x"}], NAMES)
    assert without({"a": 1, "b": 2, "c": 3}, "a", "c") == {"b": 2}
