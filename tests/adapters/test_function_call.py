"""``function_call``: the generic ``<function_call>{json}</function_call>`` prompt format.

There is no upstream spec (wire-formats.md §6c); the expected texts below are the contract the
module docstring describes: §6c's recommended shape (``<function_call>{"name", "arguments"}``, one
block per call; results as ``<function_result>{"name", "content"}`` blocks; the result opener as
stop sequence), with ``"is_error": true`` carrying failed results.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import function_call, get_adapter
from conformance.adapters.base import synthetic_call_id
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import UnsupportedContentError
from conformance.model import Message, Request, Text, Tool, ToolCall, ToolResult
from tests.adapters._prompt_wire import body, check_reply, coalesce, events, split_events

WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
TIME = Tool(name="get_time")

BLOCK = (
    "# Tools\n\n"
    "You can call the tools below. Each line inside <tools></tools> describes one tool as JSON: its name, its"
    " description and the JSON Schema of its arguments.\n"
    "<tools>\n"
    '{"name": "get_weather", "description": "Current weather for a city", "parameters": {"type": "object",'
    ' "properties": {"city": {"type": "string"}}}}\n'
    '{"name": "get_time", "parameters": {"type": "object"}}\n'
    "</tools>\n\n"
    "To call a tool, write a <function_call></function_call> block holding a JSON object with the tool name and"
    " its arguments:\n"
    '<function_call>{"name": <tool-name>, "arguments": <arguments-json-object>}</function_call>\n'
    "Write one block per call; several blocks call several tools. Then stop: the results come back in"
    " <function_result></function_result> blocks, in the order of your calls."
)


def user(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


def call(name: str, arguments: dict, ordinal: int = 0) -> ToolCall:
    raw = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(
        id=synthetic_call_id("function_call", ordinal, name, raw), name=name, arguments=arguments, arguments_raw=raw
    )


def test_registered_and_rides_on_the_chat_wire() -> None:
    assert get_adapter("function_call") is function_call.ADAPTER
    assert function_call.ADAPTER.wire_format == "openai_chat"
    assert "is_error_in_tool_results" in function_call.ADAPTER.capabilities
    assert "tool_choice_required" not in function_call.ADAPTER.capabilities


def test_the_rendered_template() -> None:
    wire = function_call.request_to_wire(Request(system="Be brief.", messages=(user("hi"),), tools=(WEATHER, TIME)))
    assert wire.body == {
        "messages": [{"role": "system", "content": "Be brief.\n\n" + BLOCK}, {"role": "user", "content": "hi"}],
        "stop": ["<function_result>"],
    }


def test_the_docstring_shows_the_template() -> None:
    doc = " ".join((function_call.__doc__ or "").split())
    for line in BLOCK.split("\n"):
        if line and not line.startswith("{"):
            assert " ".join(line.split()) in doc, line


def test_history_calls_and_results_with_the_error_flag() -> None:
    paris, clock = call("get_weather", {"city": "Paris"}), call("get_time", {}, 1)
    messages = (
        user("Weather and time?"),
        Message(role="assistant", parts=(paris, clock)),
        Message(
            role="tool",
            parts=(
                ToolResult(call_id=clock.id, content=(Text(text="no clock"),), is_error=True, name="get_time"),
                ToolResult(call_id=paris.id, content=(Text(text="18C"),), name="get_weather"),
            ),
        ),
    )
    wire = function_call.request_to_wire(Request(messages=messages, tools=(WEATHER, TIME)))
    assert wire.body["messages"][2:] == [
        {
            "role": "assistant",
            "content": '<function_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</function_call>\n'
            '<function_call>{"name": "get_time", "arguments": {}}</function_call>',
        },
        {
            "role": "user",
            "content": '<function_result>{"name": "get_weather", "content": "18C"}</function_result>\n'
            '<function_result>{"name": "get_time", "content": "no clock", "is_error": true}</function_result>',
        },
    ]
    request = Request(messages=messages, tools=(WEATHER, TIME))
    back = function_call.request_from_wire(wire.body)
    assert back.messages[2] == Message(role="tool", parts=(messages[2].parts[1], messages[2].parts[0]))
    assert back.messages[:2] == request.messages[:2] and back.tools == request.tools


def conversation() -> Request:
    first = function_call.response_from_wire(
        body('On it.\n<function_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</function_call>')
    )
    (paris,) = first.tool_calls
    return Request(
        model="llama",
        tools=(WEATHER, TIME),
        messages=(
            user("Paris?"),
            Message(role="assistant", parts=first.parts),
            Message(
                role="tool", parts=(ToolResult(call_id=paris.id, content=(Text(text="18C"),), name="get_weather"),)
            ),
            Message(role="assistant", parts=(Text(text="18C."),)),
            user("Thanks"),
        ),
    )


def test_round_trips_are_the_identity() -> None:
    request = conversation()
    wire = function_call.request_to_wire(request).body
    assert function_call.request_from_wire(wire) == request
    assert function_call.request_to_wire(function_call.request_from_wire(wire)).body == wire


def test_forced_choice_raises() -> None:
    with pytest.raises(UnsupportedContentError):
        function_call.request_to_wire(Request(messages=(user("x"),), tools=(WEATHER,), tool_choice="required"))


SINGLE = '<function_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</function_call>'
PARALLEL = SINGLE + '\n<function_call>{"name": "get_time", "arguments": {}}</function_call>'
TEXT_AND_CALL = "Checking.\n" + SINGLE + "\nBack soon."
THINK = '<think><function_call>{"name": "get_time"}</function_call></think>' + SINGLE
MALFORMED = '<function_call>{"name": "get_weather", "arguments": {"city": Paris}}</function_call>'
TRAILING_COMMA = '<function_call>{"name": "get_weather", "arguments": {"city": "Paris",},}</function_call>'
INCOMPLETE = '<function_call>{"name": "get_weather", "argu'
PSEUDO = "<function_call>{'name': 'get_weather', 'arguments': {'city': 'Paris'}}</function_call>"
NESTED = '<function_call>{"name": "get_weather", "arguments": {"city": "}</function_call>{"}}</function_call>'
REPLIES = [SINGLE, PARALLEL, TEXT_AND_CALL, THINK, MALFORMED, INCOMPLETE, PSEUDO, TRAILING_COMMA]


def test_single_and_parallel() -> None:
    assert check_reply(function_call, SINGLE).parts == (call("get_weather", {"city": "Paris"}),)
    assert check_reply(function_call, PARALLEL).tool_calls == (
        call("get_weather", {"city": "Paris"}),
        call("get_time", {}, 1),
    )


def test_text_around_calls_is_kept() -> None:
    response = check_reply(function_call, TEXT_AND_CALL)
    assert response.parts == (Text(text="Checking."), call("get_weather", {"city": "Paris"}), Text(text="Back soon."))
    assert response.finish_reason == "tool_calls"


def test_calls_inside_think_are_text() -> None:
    response = check_reply(function_call, THINK)
    assert response.parts == (
        Text(text='<think><function_call>{"name": "get_time"}</function_call></think>'),
        call("get_weather", {"city": "Paris"}),
    )


def test_malformed_and_incomplete_calls_keep_their_text() -> None:
    (bad,) = check_reply(function_call, MALFORMED).tool_calls
    assert (bad.arguments, bad.arguments_raw) == (None, '{"city": Paris}')
    assert bad.arguments_error and bad.arguments_error.startswith("malformed call: invalid JSON")
    (cut,) = check_reply(function_call, INCOMPLETE).tool_calls
    assert (cut.name, cut.arguments_raw) == ("get_weather", '{"name": "get_weather", "argu')
    assert cut.arguments_error == "the call was never closed (no </function_call>)"


def test_single_quoted_pseudo_json_and_trailing_commas_are_read() -> None:
    assert check_reply(function_call, PSEUDO).parts == (call("get_weather", {"city": "Paris"}),)
    assert check_reply(function_call, TRAILING_COMMA).parts == (call("get_weather", {"city": "Paris"}),)


def test_a_closing_tag_inside_a_json_string_ends_the_block() -> None:
    """The tag is matched on text, not JSON: the first closing tag ends the call (the rest is text)."""
    response = check_reply(function_call, NESTED)
    assert response.tool_calls[0].arguments is None
    assert response.parts[-1] == Text(text='{"}}</function_call>')


@pytest.mark.parametrize("reply", REPLIES)
def test_every_split_gives_the_same_events(reply: str) -> None:
    check_reply(function_call, reply)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(REPLIES), st.lists(st.integers(min_value=1, max_value=300), max_size=10))
def test_random_splits_give_the_same_events(reply: str, cuts: list[int]) -> None:
    split = split_events(function_call, reply, [c % len(reply) for c in cuts if c % len(reply)])
    assert lifecycle_problems(split) == []
    assert coalesce(split) == coalesce(events(function_call, [reply]))
    assert fold(split).parts == function_call.response_from_wire(body(reply)).parts


def test_error_responses_are_the_chat_wire_errors() -> None:
    assert (
        function_call.error_from_wire(401, {}, {"error": {"message": "bad key", "code": "invalid_api_key"}}).kind
        == "auth"
    )
