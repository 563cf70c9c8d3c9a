"""``hermes``: Qwen2.5 / Hermes ``<tool_call>`` calls through a prompt on the chat wire.

Expected prompt text is the Qwen2.5-Instruct chat template's (``tokenizer_config.json``
``chat_template``: the ``# Tools`` section, ``tool | tojson`` lines, the ``<tool_call>`` rendering of
assistant calls, consecutive ``tool`` messages as one user turn of ``<tool_response>`` blocks), which
is also Qwen-Agent ``nous_fncall_prompt.py`` ``FN_CALL_TEMPLATE``. Reply shapes follow
wire-formats.md §6b and E10/E21 (single-quoted pseudo-JSON as in Hermes' own ``sys_prompt.yml``).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import get_adapter, hermes
from conformance.adapters.base import synthetic_call_id
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import (
    Finish,
    Message,
    Request,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from tests.adapters._prompt_wire import body, check_reply, coalesce, events, split_events, sse

WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = Tool(name="get_time")  # no description, default schema

TOOLS_BLOCK = (
    "# Tools\n\n"
    "You may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
    '{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",'
    ' "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}\n'
    '{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}\n'
    "</tools>\n\n"
    "For each function call, return a json object with function name and arguments within"
    " <tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)


def user(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


def cid(name: str, raw: str, ordinal: int = 0) -> str:
    return synthetic_call_id("hermes", ordinal, name, raw)


def call(name: str, arguments: dict, ordinal: int = 0) -> ToolCall:
    raw = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=cid(name, raw, ordinal), name=name, arguments=arguments, arguments_raw=raw)


# --------------------------------------------------------------------------------------------
# The adapter value
# --------------------------------------------------------------------------------------------


def test_registered_and_rides_on_the_chat_wire() -> None:
    assert get_adapter("hermes") is hermes.ADAPTER
    assert hermes.ADAPTER.wire_format == "openai_chat"
    assert hermes.ADAPTER.capabilities == {
        "streaming",
        "parallel_tool_calls",
        "system_prompt",
        "tool_choice_auto",
        "tool_choice_none",
    }


# --------------------------------------------------------------------------------------------
# Requests: the template text
# --------------------------------------------------------------------------------------------


def test_tools_are_the_template_section_after_the_system_prompt() -> None:
    wire = hermes.request_to_wire(
        Request(model="qwen2.5", system="Answer briefly.", messages=(user("Paris?"),), tools=(WEATHER, TIME))
    )
    assert wire.path == "/v1/chat/completions"
    assert wire.body == {
        "model": "qwen2.5",
        "messages": [
            {"role": "system", "content": "Answer briefly.\n\n" + TOOLS_BLOCK},
            {"role": "user", "content": "Paris?"},
        ],
    }


def test_without_a_system_prompt_the_tools_section_is_the_system_message() -> None:
    wire = hermes.request_to_wire(Request(messages=(user("hi"),), tools=(WEATHER, TIME), stream=True))
    assert wire.body["messages"][0] == {"role": "system", "content": TOOLS_BLOCK}
    assert wire.body["stream"] is True and wire.stream


@pytest.mark.parametrize(
    "request_", [Request(messages=(user("hi"),)), Request(messages=(user("hi"),), tools=(WEATHER,), tool_choice="none")]
)
def test_no_tools_section_without_tools_or_with_choice_none(request_: Request) -> None:
    assert hermes.request_to_wire(request_).body["messages"] == [{"role": "user", "content": "hi"}]


def test_no_native_tool_fields_are_sent() -> None:
    request = Request(messages=(user("hi"),), tools=(WEATHER,), tool_choice="auto", parallel_tool_calls=True)
    assert set(hermes.request_to_wire(request).body) == {"messages"}


@pytest.mark.parametrize("choice", ["required", "get_weather"])
def test_forced_tool_choice_raises(choice: str) -> None:
    with pytest.raises(UnsupportedContentError):
        hermes.request_to_wire(Request(messages=(user("hi"),), tools=(WEATHER,), tool_choice=choice))


def test_history_is_rendered_as_the_template_renders_it() -> None:
    paris, rome = call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Rome"}, 1)
    messages = (
        user("Weather in Paris and Rome?"),
        Message(role="assistant", parts=(Text(text="Checking both."), paris, rome)),
        Message(
            role="tool",
            parts=(  # out of order on purpose: the wire matches results by position
                ToolResult(call_id=rome.id, content=(Text(text="unknown city"),), is_error=True),
                ToolResult(call_id=paris.id, content=(Text(text="18C"),)),
            ),
        ),
    )
    wire = hermes.request_to_wire(Request(messages=messages))
    assert wire.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": 'Checking both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            '</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>',
        },
        {
            "role": "user",
            "content": "<tool_response>\n18C\n</tool_response>\n<tool_response>\nError: unknown city\n</tool_response>",
        },
    ]


def test_results_that_do_not_answer_the_calls_by_position_raise() -> None:
    paris = call("get_weather", {"city": "Paris"})
    messages = (
        user("x"),
        Message(role="assistant", parts=(paris,)),
        Message(role="tool", parts=(ToolResult(call_id="other"),)),
    )
    with pytest.raises(UnsupportedContentError, match="by position"):
        hermes.request_to_wire(Request(messages=messages))


# --------------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------------


def conversation() -> Request:
    """Two turns built the way the runner builds them: the replayed calls are the parsed ones."""
    first = hermes.response_from_wire(
        body(
            'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
            "<tool_call>\n{'name': 'get_time', 'arguments': {}}\n</tool_call>"
        )
    )
    paris, clock = first.tool_calls
    return Request(
        model="qwen2.5",
        system="Be brief.",
        tools=(WEATHER, TIME),
        max_tokens=200,
        messages=(
            user("Weather and time?"),
            Message(role="assistant", parts=first.parts),
            Message(
                role="tool",
                parts=(
                    ToolResult(call_id=paris.id, content=(Text(text="18C"),), name="get_weather"),
                    ToolResult(call_id=clock.id, content=(Text(text="no clock"),), is_error=True, name="get_time"),
                ),
            ),
            Message(role="assistant", parts=(Text(text="18C; the clock failed."),)),
            user("Thanks"),
        ),
    )


def test_unified_wire_unified_is_the_identity() -> None:
    request = conversation()
    assert hermes.request_from_wire(hermes.request_to_wire(request).body) == request


def test_wire_unified_wire_is_the_identity() -> None:
    wire = hermes.request_to_wire(conversation()).body
    assert hermes.request_to_wire(hermes.request_from_wire(wire)).body == wire


def test_the_id_of_a_replayed_call_is_the_id_it_had_in_the_response() -> None:
    request = conversation()
    replayed = hermes.request_from_wire(hermes.request_to_wire(request).body).messages[1]
    assert [p.id for p in replayed.parts if isinstance(p, ToolCall)] == [
        c.id for c in request.messages[1].parts if isinstance(c, ToolCall)
    ]


def test_a_malformed_call_is_replayed_as_received() -> None:
    bad = hermes.response_from_wire(body('<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>'))
    request = Request(messages=(user("x"), Message(role="assistant", parts=bad.parts)))
    wire = hermes.request_to_wire(request).body
    assert (
        wire["messages"][1]["content"] == '<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>'
    )
    assert hermes.request_from_wire(wire) == request


def test_a_broken_tools_section_is_reported() -> None:
    content = TOOLS_BLOCK.replace('{"type": "function", "function": {"name": "get_time"', "{oops")
    with pytest.raises(WireFormatError, match="tool line 2"):
        hermes.request_from_wire({"messages": [{"role": "system", "content": content}]})


# --------------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------------

SINGLE = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
PARALLEL = SINGLE + '\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
TEXT_AND_CALL = "Let me look that up.\n" + SINGLE
THINK = '<think>\nShould I <tool_call>{"name": "get_time"}</tool_call>? No.\n</think>\n\n' + SINGLE
MALFORMED = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"\n</tool_call>'
INCOMPLETE = 'One moment.\n<tool_call>\n{"name": "get_weather", "arguments": {"ci'
PSEUDO = (
    "<tool_call>\n{'name': 'get_weather', 'arguments': {'city': 'Paris', 'metric': True, 'note': None}}\n</tool_call>"
)
TEXT_ONLY = "The weather is fine. A literal <tool_response> tag and <think stay text."
REPLIES = [SINGLE, PARALLEL, TEXT_AND_CALL, THINK, MALFORMED, INCOMPLETE, PSEUDO, TEXT_ONLY]


def test_single_call() -> None:
    response = check_reply(hermes, SINGLE)
    assert response.parts == (call("get_weather", {"city": "Paris"}),)
    assert (response.finish_reason, response.provider_details["finish_reason"]) == ("tool_calls", "stop")


def test_parallel_calls() -> None:
    response = check_reply(hermes, PARALLEL)
    assert response.parts == (call("get_weather", {"city": "Paris"}), call("get_time", {}, 1))


def test_text_then_call() -> None:
    assert check_reply(hermes, TEXT_AND_CALL).parts == (
        Text(text="Let me look that up."),
        call("get_weather", {"city": "Paris"}),
    )


def test_calls_inside_think_are_text() -> None:
    response = check_reply(hermes, THINK)
    assert response.parts == (
        Text(text='<think>\nShould I <tool_call>{"name": "get_time"}</tool_call>? No.\n</think>\n'),
        call("get_weather", {"city": "Paris"}),
    )


def test_malformed_json_is_an_arguments_error_with_the_raw_text() -> None:
    (bad,) = check_reply(hermes, MALFORMED).tool_calls
    raw = '{"city": "Paris"'  # the arguments' text; the whole block is kept for replay
    assert (bad.id, bad.name, bad.arguments, bad.arguments_raw) == (cid("get_weather", raw), "get_weather", None, raw)
    assert bad.provider_details == {"call_text": '{"name": "get_weather", "arguments": {"city": "Paris"'}
    assert bad.arguments_error and bad.arguments_error.startswith("malformed call")


def test_incomplete_at_the_end_of_the_stream() -> None:
    response = check_reply(hermes, INCOMPLETE)
    text, bad = response.parts
    assert text == Text(text="One moment.")
    assert isinstance(bad, ToolCall) and bad.arguments is None
    assert bad.arguments_error == "the call was never closed (no </tool_call>)"
    assert bad.arguments_raw == '{"ci'


def test_cut_by_length_says_so() -> None:
    (bad,) = check_reply(hermes, INCOMPLETE, finish="length").tool_calls
    assert bad.arguments_error == "the response was cut by the length limit"
    assert hermes.response_from_wire(body(INCOMPLETE, "length")).finish_reason == "length"


def test_single_quoted_pseudo_json() -> None:
    response = check_reply(hermes, PSEUDO)
    assert response.parts == (call("get_weather", {"city": "Paris", "metric": True, "note": None}),)


def test_text_only_reply() -> None:
    response = check_reply(hermes, TEXT_ONLY)
    assert response.parts == (Text(text=TEXT_ONLY),) and response.finish_reason == "stop"


def test_stream_that_breaks_ends_the_open_call_and_reports_the_error() -> None:
    out = list(hermes.stream_from_wire([sse(["<tool_call>\n", '{"name": "get_time"'], finish=None, done=False)]))
    assert lifecycle_problems(out) == []
    end = next(e for e in out if isinstance(e, ToolCallEnd))
    assert end.arguments is None and end.arguments_error and "stream failed" in end.arguments_error
    assert out[-1] == Finish("error")


def test_text_leaves_before_the_stream_ends() -> None:
    seen: list[str] = []

    def chunks():  # the second half is produced only after the first events were read
        data = sse(["Hello there, ", "<tool_call>\n", '{"name": "get_time"}\n</tool_call>'])
        half = data.index(b"<tool_call>")
        yield data[:half]
        seen.append("second half requested")
        yield data[half:]

    stream = hermes.stream_from_wire(chunks())
    assert next(stream) == TextDelta("Hello there, ")
    assert seen == []
    rest = list(stream)
    assert isinstance(rest[0], ToolCallStart) and rest[0].tool_call_name == "get_time"


def test_native_tool_calls_next_to_prompt_calls_are_numbered_together() -> None:
    native = {"id": "call_native", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    response = hermes.response_from_wire(body(SINGLE, "tool_calls", tool_calls=[native]))
    assert [c.id for c in response.tool_calls] == [cid("get_weather", '{"city": "Paris"}'), "call_native"]
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": SINGLE}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **native}]}, "finish_reason": "tool_calls"}]},
    ]
    data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"
    out = list(hermes.stream_from_wire([data]))
    assert lifecycle_problems(out) == []
    assert [(e.tool_call_id, e.index) for e in out if isinstance(e, ToolCallStart)] == [
        (cid("get_weather", '{"city": "Paris"}'), 0),
        ("call_native", 1),
    ]
    assert fold(out).parts == response.parts


@pytest.mark.parametrize("reply", REPLIES)
def test_every_split_gives_the_same_events(reply: str) -> None:
    check_reply(hermes, reply)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(REPLIES), st.lists(st.integers(min_value=1, max_value=300), max_size=10))
def test_random_splits_give_the_same_events(reply: str, cuts: list[int]) -> None:
    split = split_events(hermes, reply, [c % len(reply) for c in cuts if c % len(reply)])
    assert lifecycle_problems(split) == []
    assert coalesce(split) == coalesce(events(hermes, [reply]))
    assert fold(split).parts == hermes.response_from_wire(body(reply)).parts


def test_error_responses_are_the_chat_wire_errors() -> None:
    error = hermes.error_from_wire(
        429, {"retry-after": "2"}, b'{"error": {"message": "slow", "code": "rate_limit_exceeded"}}'
    )
    assert (error.kind, error.status, error.retry_after) == ("rate_limit", 429, 2.0)


def test_tools_to_wire_lists_the_prompt_lines() -> None:
    assert hermes.tools_to_wire([TIME]).tools == [
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    ]
    assert hermes.tools_to_wire([]).tools == []
