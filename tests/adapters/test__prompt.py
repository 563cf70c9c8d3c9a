"""The shared machinery of the prompt adapters: lenient parsing, the tag state machines, the
request helpers and the event plumbing over the chat wire.

Facts behind the expectations: wire-formats.md §6 and §10 E10/E21 (Qwen-Agent
``nous_fncall_prompt.py`` / ``qwen_fncall_prompt.py``, NousResearch Hermes-Function-Calling's
``ast.literal_eval`` fallback), §1c/§1d for the chat wire.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import _prompt
from conformance.adapters._prompt_parse import QwenParser, TagParser, arguments_text, parse_call_body, parse_lenient
from conformance.adapters.base import synthetic_call_id
from conformance.assembly import lifecycle_problems
from conformance.errors import UnsupportedContentError
from conformance.model import (
    Finish,
    Image,
    Message,
    Request,
    Resource,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from tests.adapters._prompt_wire import coalesce


def tags() -> TagParser:
    return TagParser("t", "<tool_call>", "</tool_call>")


def run(parser: TagParser | QwenParser, pieces: list[str], error: str | None = None) -> list[StreamEvent]:
    out: list[StreamEvent] = []
    for piece in pieces:
        out += parser.feed(piece)
    return out + parser.close(error)


def call_events(
    name: str, raw: str, arguments: dict | None, why: str | None = None, ordinal: int = 0, call_text: str | None = None
) -> list:
    call_id = synthetic_call_id("t", ordinal, name, raw)
    chunk = [ToolCallChunk(call_id, raw)] if raw else []
    details = {"call_text": call_text} if call_text is not None else {}
    return [ToolCallStart(call_id, name, ordinal, details), *chunk, ToolCallEnd(call_id, raw, arguments, why)]


# --------------------------------------------------------------------------------------------
# Lenient parsing (E21)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"city": "Paris"}', {"city": "Paris"}),
        ("", {}),
        ("{'city': 'Paris', 'days': 3}", {"city": "Paris", "days": 3}),  # Hermes sys_prompt.yml style
        ("{'ok': True, 'none': None, 'n': -2.5}", {"ok": True, "none": None, "n": -2.5}),
        ("{'ok': true, 'x': null, 'l': ['a', (1, 2)]}", {"ok": True, "x": None, "l": ["a", [1, 2]]}),
        ('"{\\"city\\": \\"Paris\\"}"', {"city": "Paris"}),  # an object sent as a JSON string
        ('{"city": "Paris"}}', {"city": "Paris"}),  # one closing brace too many
        ('{"a": 1} <!-- this is an example comment -->', {"a": 1}),  # qwen_fncall_prompt.py hotfix case
        ('{"big": 123456789012345678901234567890}', {"big": 123456789012345678901234567890}),
    ],
)
def test_lenient_arguments(raw: str, expected: dict) -> None:
    assert parse_lenient(raw) == (expected, None)


@pytest.mark.parametrize(
    "raw",
    [
        '{"city": "Par',
        "[1, 2]",
        "{'a': __import__('os')}",  # parsed, never evaluated
        "{'a': 1e999}",
        '{"a": NaN}',
        "{1: 'x'}",
        "{'a': 1} {'b': 2}",
    ],
)
def test_lenient_arguments_refuse_what_is_not_an_object(raw: str) -> None:
    arguments, why = parse_lenient(raw)
    assert arguments is None and why


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"name": "f", "arguments": {"a": 1}}', ("f", {"a": 1}, None)),
        ("{'name': 'f', 'arguments': {'a': 1}}", ("f", {"a": 1}, None)),
        ('{"arguments": {"a": 1}, "name": "f"}', ("f", {"a": 1}, None)),
        ('{"name": "f", "parameters": {"a": 1}}', ("f", {"a": 1}, None)),
        ('{"name": "f"}', ("f", {}, None)),
        ('{"name": "f", "arguments": "{\\"a\\": 1}"}', ("f", {"a": 1}, None)),
        ('{"name": "f", "arguments": [1]}', ("f", None, "arguments are a JSON array, not an object")),
    ],
)
def test_call_bodies(text: str, expected: tuple) -> None:
    assert parse_call_body(text) == expected


def test_a_malformed_call_keeps_its_name_when_it_can_be_read() -> None:
    name, arguments, why = parse_call_body('{"name": "get_weather", "arguments": {"city": "Par')
    assert (name, arguments) == ("get_weather", None)
    assert why and why.startswith("malformed call: invalid JSON")


@pytest.mark.parametrize("text", ["", "garbage", '{"arguments": {}}', "[]", '{"name": ""}'])
def test_a_call_without_a_name_has_none(text: str) -> None:
    assert parse_call_body(text)[0] == ""


# --------------------------------------------------------------------------------------------
# The tag machine
# --------------------------------------------------------------------------------------------


def test_text_leaves_at_once_and_only_a_possible_tag_start_is_held() -> None:
    parser = tags()
    assert parser.feed("Hello ") == [TextDelta("Hello ")]
    assert parser.feed("world <tool_c") == [TextDelta("world ")]  # "<tool_c" may start a tag
    assert parser.feed("ar") == [TextDelta("<tool_car")]  # it did not
    assert parser.feed("\n") == []  # a newline may belong to a following tag
    assert parser.close() == [TextDelta("\n")]


def test_a_call_leaves_whole_at_its_closing_tag() -> None:
    parser = tags()
    assert parser.feed('<tool_call>\n{"name": "f", "arguments": {"a": 1}') == []
    raw = '{"a": 1}'
    assert parser.feed("}\n</tool_call>") == call_events("f", raw, {"a": 1})
    assert parser.calls == 1


def test_newlines_around_blocks_belong_to_the_tags() -> None:
    reply = (
        'Checking.\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "g"}\n</tool_call>\nDone.'
    )
    out = run(tags(), [reply])
    assert out[0] == TextDelta("Checking.")
    assert out[-1] == TextDelta("Done.")
    assert [e.tool_call_name for e in out if isinstance(e, ToolCallStart)] == ["f", "g"]


def test_calls_inside_think_are_not_parsed() -> None:
    reply = '<think>maybe <tool_call>{"name": "f"}</tool_call>?</think>No call.'
    out = run(tags(), [reply])
    assert coalesce(out) == [TextDelta(reply)]
    assert not any(isinstance(e, ToolCallStart) for e in out)


def test_a_call_after_think_is_parsed() -> None:
    out = run(tags(), ['<think>x</think>\n<tool_call>{"name": "f"}</tool_call>'])
    assert coalesce(out)[0] == TextDelta("<think>x</think>")
    assert isinstance(out[-3], ToolCallStart)


def test_an_unclosed_call_ends_with_an_arguments_error_and_its_raw_text() -> None:
    body = '{"name": "f", "arguments": {"a": 1}}'
    assert run(tags(), [f"<tool_call>\n{body}\n"]) == call_events(
        "f", '{"a": 1}', None, "the call was never closed (no </tool_call>)", call_text=body
    )


def test_the_caller_names_why_an_open_call_ended() -> None:
    out = run(tags(), ['<tool_call>{"name": "f", "arguments": {"a"'], error="cut by length")
    assert out[0].provider_details == {"call_text": '{"name": "f", "arguments": {"a"'}
    assert out[-1] == ToolCallEnd(out[0].tool_call_id, '{"a"', None, "cut by length")


@pytest.mark.parametrize(
    ("body", "raw"),
    [
        ('{"name": "f", "arguments": {"unit": celsius}}', '{"unit": celsius}'),  # the call's own } dropped
        ('{"name": "f", "arguments": {"path": "a}b", "startLi', '{"path": "a}b", "startLi'),  # cut: kept as cut
        ('{"name": "f", "arguments": "{\\"a\\": 1"}', '{"a": 1'),  # a string value: the string itself
        ('{"name": "f", "arguments": [1, 2]}', "[1, 2]"),
        ("{'name': 'f', 'parameters': {'a': b}}", "{'a': b}"),
        ('{"name": "f", "argu', '{"name": "f", "argu'),  # no arguments key: the whole body
    ],
)
def test_the_raw_text_of_unreadable_arguments_is_the_arguments_value(body: str, raw: str) -> None:
    assert arguments_text(body) == raw


def test_a_block_without_a_tool_name_stays_text() -> None:
    reply = "a\n<tool_call>not json</tool_call>\nb"
    assert coalesce(run(tags(), [reply])) == [TextDelta(reply)]


def test_an_unclosed_block_without_a_name_stays_text() -> None:
    assert coalesce(run(tags(), ["x <tool_call>{"])) == [TextDelta("x <tool_call>{")]


def test_ids_depend_on_the_call_and_its_position_only() -> None:
    twice = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>' * 2
    first, second = [e.tool_call_id for e in run(tags(), [twice]) if isinstance(e, ToolCallStart)]
    assert first != second
    assert first == synthetic_call_id("t", 0, "f", '{"a": 1}')
    again = [e.tool_call_id for e in run(tags(), ["text first ", twice]) if isinstance(e, ToolCallStart)]
    assert again == [first, second]


REPLIES = [
    "plain text, no tags at all <tool and < think",
    'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n'
    "<tool_call>\n{'name': 'b', 'arguments': {'x': True}}\n</tool_call>\nok",
    '<think>\n<tool_call>{"name": "no"}</tool_call>\n</think>\n\n'
    '<tool_call>{"name": "yes", "arguments": {"s": "</tool_call"}}</tool_call>',
    'x<tool_call>{"name": "f", "arguments": {"a": [1, 2}}</tool_call>y<tool_call>junk</tool_call>\n\nz',
    '<tool_call>{"name": "f", "arguments": {"a": 1}',
]


@pytest.mark.parametrize("reply", REPLIES)
def test_tag_machine_gives_the_same_events_however_the_text_is_split(reply: str) -> None:
    expected = coalesce(run(tags(), [reply]))
    assert lifecycle_problems([*expected, Finish("stop")]) == []
    for cut in range(len(reply) + 1):
        assert coalesce(run(tags(), [reply[:cut], reply[cut:]])) == expected, cut
    assert coalesce(run(tags(), list(reply))) == expected


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(REPLIES), st.lists(st.integers(min_value=0, max_value=200), max_size=12))
def test_tag_machine_random_splits(reply: str, cuts: list[int]) -> None:
    bounds = sorted({0, len(reply), *(c % (len(reply) + 1) for c in cuts)})
    pieces = [reply[a:b] for a, b in itertools.pairwise(bounds)]
    assert coalesce(run(tags(), pieces)) == coalesce(run(tags(), [reply]))


def test_history_text_parses_to_parts() -> None:
    parts = _prompt.parse_text('Sure.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>', tags())
    assert parts == (
        Text(text="Sure."),
        ToolCall(id=synthetic_call_id("t", 0, "f", '{"a": 1}'), name="f", arguments={"a": 1}, arguments_raw='{"a": 1}'),
    )


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------

TOOL = Tool(name="f", description="F", input_schema={"type": "object"})


@pytest.mark.parametrize("choice", ["required", "f"])
def test_forced_tool_choice_is_refused(choice: str) -> None:
    with pytest.raises(UnsupportedContentError, match="cannot be forced"):
        _prompt.check_request(Request(tools=(TOOL,), tool_choice=choice), "x")


def test_parallel_off_is_refused_because_it_cannot_be_enforced() -> None:
    with pytest.raises(UnsupportedContentError, match="parallel_tool_calls=false"):
        _prompt.check_request(Request(tools=(TOOL,), parallel_tool_calls=False), "x")


@pytest.mark.parametrize(
    ("request_", "with_tools"),
    [
        (Request(tools=(TOOL,)), True),
        (Request(tools=(TOOL,), tool_choice="auto", parallel_tool_calls=True), True),
        (Request(tools=(TOOL,), tool_choice="none"), False),
        (Request(), False),
    ],
)
def test_the_tools_go_into_the_prompt_unless_there_are_none_or_choice_is_none(
    request_: Request, with_tools: bool
) -> None:
    assert _prompt.check_request(request_, "x") is with_tools


@pytest.mark.parametrize(
    ("system", "merged"), [(None, "B"), ("", "\n\nB"), ("S", "S\n\nB"), ("S\n\nB0", "S\n\nB0\n\nB")]
)
def test_system_and_block_split_back(system: str | None, merged: str) -> None:
    assert _prompt.merge_system(system, "B") == merged
    assert _prompt.split_system(merged, "B") == (system, "B")


def test_results_are_put_in_call_order() -> None:
    calls = [ToolCall(id="a", name="f"), ToolCall(id="b", name="g")]
    results = [ToolResult(call_id="b"), ToolResult(call_id="a")]
    assert [r.call_id for r in _prompt.ordered_results(results, calls, "x")] == ["a", "b"]


@pytest.mark.parametrize("ids", [["a"], ["a", "b", "c"], ["a", "a"], ["a", "z"]])
def test_results_that_do_not_answer_each_call_once_are_refused(ids: list[str]) -> None:
    calls = [ToolCall(id="a", name="f"), ToolCall(id="b", name="g")]
    with pytest.raises(UnsupportedContentError, match="by position"):
        _prompt.ordered_results([ToolResult(call_id=i) for i in ids], calls, "x")


def test_result_text_refuses_images() -> None:
    assert _prompt.result_text(ToolResult(call_id="a", content=(Text(text="a"), Text(text="b"))), "x") == "a\nb"
    assert _prompt.result_text(ToolResult(call_id="a", content=(Resource(uri="u", text="r"),)), "x") == "r"
    assert _prompt.result_text(ToolResult(call_id="a", content=(Text(text="no"),), is_error=True), "x") == "Error: no"
    with pytest.raises(UnsupportedContentError, match="image"):
        _prompt.result_text(ToolResult(call_id="a", content=(Image(media_type="image/png", data="AA=="),)), "x")


def test_the_stop_words_are_not_kept_as_an_extra_field() -> None:
    plain = Request(model="m", messages=(Message(role="user", parts=(Text(text="hi"),)),))
    wire = _prompt.wire_request(plain, system=None, messages=plain.messages, stop=("<x>",))
    assert wire.body == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stop": ["<x>"]}
    assert _prompt.read_request(wire.body, stop=("<x>",)) == plain
    other = json.loads(json.dumps({**wire.body, "stop": ["END"]}))
    assert _prompt.read_request(other, stop=("<x>",)).provider_details == {"extra": {"stop": ["END"]}}
