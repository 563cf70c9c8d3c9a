"""``qwen``: Qwen-Agent's ``✿FUNCTION✿`` calls through a prompt on the chat wire.

Expected prompt text is what Qwen-Agent renders (``qwen_agent/llm/fncall_prompts/
qwen_fncall_prompt.py``: ``FN_CALL_TEMPLATE`` ``en``/``zh``/``*_parallel``,
``get_function_description``, ``preprocess_fncall_messages``; ``function_calling.py``: the stop
words and ``simulate_response_completion_with_chat``), written out here by hand from that source.
Reply parsing follows ``postprocess_fncall_messages`` (wire-formats.md §6a, E21).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import get_adapter, qwen
from conformance.adapters.base import synthetic_call_id
from conformance.assembly import fold, lifecycle_problems
from conformance.errors import UnsupportedContentError, UsageError
from conformance.model import Message, Request, Text, Tool, ToolCall, ToolResult
from tests.adapters._prompt_wire import body, check_reply, coalesce, events, split_events

WEATHER = Tool(
    name="get_weather",
    title="Weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
CODE = Tool(name="code_interpreter", description="Runs Python", input_schema={"type": "object"})

DESCRIPTIONS_EN = (
    "### Weather\n\n"
    'get_weather: Current weather for a city Parameters: {"type": "object", "properties": {"city": {"type":'
    ' "string"}}} Format the arguments as a JSON object.\n\n'
    "### code_interpreter\n\n"
    'code_interpreter: Runs Python Parameters: {"type": "object"} Enclose the code within triple backticks (`)'
    " at the beginning and end of the code."
)
EN = (
    "# Tools\n\n## You have access to the following tools:\n\n"
    + DESCRIPTIONS_EN
    + "\n\n## When you need to call a tool, please insert the following command in your reply, which can be called"
    " zero or multiple times according to your needs:\n\n"
    "✿FUNCTION✿: The tool to use, should be one of [get_weather,code_interpreter]\n"
    "✿ARGS✿: The input of the tool\n"
    "✿RESULT✿: Tool results\n"
    "✿RETURN✿: Reply based on tool results. Images need to be rendered as ![](url)"
)
EN_PARALLEL = (
    "# Tools\n\n## You have access to the following tools:\n\n"
    + DESCRIPTIONS_EN
    + "\n\n## Insert the following command in your reply when you need to call N tools in parallel:\n\n"
    "✿FUNCTION✿: The name of tool 1, should be one of [get_weather,code_interpreter]\n"
    "✿ARGS✿: The input of tool 1\n"
    "✿FUNCTION✿: The name of tool 2\n"
    "✿ARGS✿: The input of tool 2\n"
    "...\n"
    "✿FUNCTION✿: The name of tool N\n"
    "✿ARGS✿: The input of tool N\n"
    "✿RESULT✿: The result of tool 1\n"
    "✿RESULT✿: The result of tool 2\n"
    "...\n"
    "✿RESULT✿: The result of tool N\n"
    "✿RETURN✿: Reply based on tool results. Images need to be rendered as ![](url)"
)
DESCRIPTIONS_ZH = (
    "### Weather\n\n"
    'get_weather: Current weather for a city 输入参数：{"type": "object", "properties": {"city": {"type":'
    ' "string"}}} 此工具的输入应为JSON对象。\n\n'
    "### code_interpreter\n\n"
    'code_interpreter: Runs Python 输入参数：{"type": "object"} 此工具的输入应为Markdown代码块。'
)
ZH = (
    "# 工具\n\n## 你拥有如下工具：\n\n"
    + DESCRIPTIONS_ZH
    + "\n\n## 你可以在回复中插入零次、一次或多次以下命令以调用工具：\n\n"
    "✿FUNCTION✿: 工具名称，必须是[get_weather,code_interpreter]之一。\n"
    "✿ARGS✿: 工具输入\n"
    "✿RESULT✿: 工具结果\n"
    "✿RETURN✿: 根据工具结果进行回复，需将图片用![](url)渲染出来"
)
ZH_PARALLEL = (
    "# 工具\n\n## 你拥有如下工具：\n\n" + DESCRIPTIONS_ZH + "\n\n## 你可以在回复中插入以下命令以并行调用N个工具：\n\n"
    "✿FUNCTION✿: 工具1的名称，必须是[get_weather,code_interpreter]之一\n"
    "✿ARGS✿: 工具1的输入\n"
    "✿FUNCTION✿: 工具2的名称\n"
    "✿ARGS✿: 工具2的输入\n"
    "...\n"
    "✿FUNCTION✿: 工具N的名称\n"
    "✿ARGS✿: 工具N的输入\n"
    "✿RESULT✿: 工具1的结果\n"
    "✿RESULT✿: 工具2的结果\n"
    "...\n"
    "✿RESULT✿: 工具N的结果\n"
    "✿RETURN✿: 根据工具结果进行回复，需将图片用![](url)渲染出来"
)


def user(text: str) -> Message:
    return Message(role="user", parts=(Text(text=text),))


def call(name: str, raw: str, arguments: dict, ordinal: int = 0) -> ToolCall:
    return ToolCall(id=synthetic_call_id("qwen", ordinal, name, raw), name=name, arguments=arguments, arguments_raw=raw)


def system_of(request: Request) -> str:
    return qwen.request_to_wire(request).body["messages"][0]["content"]


# --------------------------------------------------------------------------------------------
# The adapter value
# --------------------------------------------------------------------------------------------


def test_registered_and_rides_on_the_chat_wire() -> None:
    assert get_adapter("qwen") is qwen.ADAPTER
    assert qwen.ADAPTER.wire_format == "openai_chat"
    assert "tool_choice_required" not in qwen.ADAPTER.capabilities
    assert "disable_parallel_tool_calls" not in qwen.ADAPTER.capabilities
    assert {"streaming", "parallel_tool_calls", "system_prompt"} <= qwen.ADAPTER.capabilities


# --------------------------------------------------------------------------------------------
# Requests: the templates
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "parallel", "expected"),
    [("en", None, EN), ("en", True, EN_PARALLEL), ("zh", None, ZH), ("zh", True, ZH_PARALLEL)],
)
def test_the_four_templates(language: str, parallel: bool | None, expected: str) -> None:
    request = Request(
        messages=(user("hi"),),
        tools=(WEATHER, CODE),
        parallel_tool_calls=parallel,
        provider_details={"language": language},
    )
    assert system_of(request) == expected


def test_the_tools_follow_the_system_prompt_after_a_blank_line() -> None:
    assert system_of(Request(system="Be brief.", messages=(user("hi"),), tools=(WEATHER, CODE))) == "Be brief.\n\n" + EN


def test_the_language_is_detected_from_system_and_user_messages() -> None:
    assert system_of(Request(messages=(user("巴黎天气怎么样？"),), tools=(WEATHER, CODE))) == ZH
    assert (
        system_of(Request(system="用中文回答", messages=(user("hi"),), tools=(WEATHER, CODE))) == "用中文回答\n\n" + ZH
    )


def test_an_unknown_language_option_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="'en' or 'zh'"):
        qwen.request_to_wire(Request(messages=(user("hi"),), tools=(WEATHER,), provider_details={"language": "fr"}))


def test_the_stop_words_go_with_every_request_and_no_native_tool_fields() -> None:
    wire = qwen.request_to_wire(Request(model="qwen2", messages=(user("hi"),), tools=(WEATHER,), stream=True))
    assert wire.body["stop"] == ["✿RESULT✿", "✿RETURN✿"]
    assert set(wire.body) == {"model", "messages", "stream", "stop"}


@pytest.mark.parametrize(
    "request_",
    [
        Request(messages=(user("hi"),), tools=(WEATHER,), tool_choice="required"),
        Request(messages=(user("hi"),), tools=(WEATHER,), tool_choice="get_weather"),
        Request(messages=(user("hi"),), tools=(WEATHER,), parallel_tool_calls=False),
    ],
)
def test_what_a_prompt_cannot_enforce_raises(request_: Request) -> None:
    with pytest.raises(UnsupportedContentError):
        qwen.request_to_wire(request_)


PARIS = call("get_weather", '{"city": "Paris"}', {"city": "Paris"})
ROME = call("get_weather", '{"city": "Rome"}', {"city": "Rome"}, 1)


def test_history_is_one_assistant_message_continued_in_the_user_turn() -> None:
    """preprocess_fncall_messages, then simulate_response_completion_with_chat."""
    messages = (
        user("Paris and Rome?"),
        Message(role="assistant", parts=(Text(text="Checking."), PARIS, ROME)),
        Message(
            role="tool",
            parts=(
                ToolResult(call_id=ROME.id, content=(Text(text="no data"),), is_error=True),
                ToolResult(call_id=PARIS.id, content=(Text(text="18C"),)),
            ),
        ),
    )
    wire = qwen.request_to_wire(Request(messages=messages))
    assert wire.body["messages"] == [
        {
            "role": "user",
            "content": "Paris and Rome?\n\nChecking.\n"
            '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}\n'
            '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Rome"}\n'
            "✿RESULT✿: 18C\n✿RESULT✿: Error: no data\n✿RETURN✿",
        }
    ]


def test_a_finished_exchange_stays_an_assistant_message() -> None:
    messages = (
        user("Paris?"),
        Message(role="assistant", parts=(PARIS,)),
        Message(role="tool", parts=(ToolResult(call_id=PARIS.id, content=(Text(text="18C"),)),)),
        Message(role="assistant", parts=(Text(text="It is 18C."),)),
        Message(role="assistant", parts=(ROME,)),
        Message(role="tool", parts=(ToolResult(call_id=ROME.id, content=(Text(text="20C"),)),)),
        Message(role="assistant", parts=(Text(text="Rome is 20C."),)),
        user("Thanks"),
    )
    wire = qwen.request_to_wire(Request(messages=messages))
    assert wire.body["messages"][1] == {
        "role": "assistant",
        "content": '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}\n✿RESULT✿: 18C\n✿RETURN✿: It is 18C.\n'
        '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Rome"}\n✿RESULT✿: 20C\n✿RETURN✿: Rome is 20C.',
    }


def test_code_arguments_get_a_newline_before_the_fence() -> None:
    code = call("code_interpreter", "```py\nprint(1)\n```", {})
    code = replace(code, arguments=None, arguments_error="invalid JSON")
    wire = qwen.request_to_wire(Request(messages=(user("run"), Message(role="assistant", parts=(code,)))))
    assert wire.body["messages"][0]["content"] == "run\n\n✿FUNCTION✿: code_interpreter\n✿ARGS✿: \n```py\nprint(1)\n```"


def test_results_without_the_calls_before_them_raise() -> None:
    with pytest.raises(UnsupportedContentError):
        qwen.request_to_wire(Request(messages=(user("x"), Message(role="tool", parts=(ToolResult(call_id="a"),)))))


# --------------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------------


def conversation(**changes: object) -> Request:
    first = qwen.response_from_wire(
        body('Let me check.\n✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}\n✿ARGS✿: {"city": "Rome"}')
    )
    paris, rome = first.tool_calls
    request = Request(
        model="qwen-max",
        system="Be brief.",
        tools=(WEATHER, CODE),
        parallel_tool_calls=True,
        messages=(
            user("Paris and Rome?"),
            Message(role="assistant", parts=first.parts),
            Message(
                role="tool",
                parts=(
                    ToolResult(call_id=paris.id, content=(Text(text="18C"),), name="get_weather"),
                    ToolResult(call_id=rome.id, content=(Text(text="down"),), is_error=True, name="get_weather"),
                ),
            ),
        ),
    )
    return replace(request, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "request_",
    [
        conversation(),
        conversation(parallel_tool_calls=None, provider_details={"language": "zh"}),
        conversation(
            messages=(
                *conversation().messages,
                Message(role="assistant", parts=(Text(text="18C; Rome failed."),)),
                user("ok"),
            )
        ),
        conversation(messages=(user("巴黎？"),), system=None),
    ],
    ids=["continued", "zh-option", "finished", "zh-detected"],
)
def test_unified_wire_unified_is_the_identity(request_: Request) -> None:
    wire = qwen.request_to_wire(request_).body
    assert qwen.request_from_wire(wire) == request_
    assert qwen.request_to_wire(qwen.request_from_wire(wire)).body == wire


def test_replayed_calls_keep_their_response_ids() -> None:
    request = conversation()
    back = qwen.request_from_wire(qwen.request_to_wire(request).body)
    assert back.messages[1].parts[1:] == request.messages[1].parts[1:]


# --------------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------------

SINGLE = '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}'
SEVERAL_ARGS = SINGLE + '\n✿ARGS✿: {"city": "Rome"}'
TWO_FUNCTIONS = SINGLE + "\n✿FUNCTION✿: code_interpreter\n✿ARGS✿: ```py\nprint(1)\n```"
TEXT_AND_CALL = "I will check the weather.\n" + SINGLE
CONTINUED = ": It is 18C in Paris."
THINK = "<think>\nmaybe ✿FUNCTION✿: get_weather\n</think>\n\n" + SINGLE
MALFORMED = '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": Paris}'
COMMENTED = '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"} <!-- this is an example comment -->'
NO_ARGS = "✿FUNCTION✿: get_time"
RESULT_WRITTEN = SINGLE + "\n✿RESULT✿: 18C\n✿RETURN✿: It is 18C."
REPLIES = [
    SINGLE,
    SEVERAL_ARGS,
    TWO_FUNCTIONS,
    TEXT_AND_CALL,
    CONTINUED,
    THINK,
    MALFORMED,
    COMMENTED,
    NO_ARGS,
    RESULT_WRITTEN,
]


def test_single_call() -> None:
    response = check_reply(qwen, SINGLE)
    assert response.parts == (PARIS,)
    assert (response.finish_reason, response.provider_details["finish_reason"]) == ("tool_calls", "stop")


def test_several_args_after_one_function_are_several_calls() -> None:
    assert check_reply(qwen, SEVERAL_ARGS).parts == (PARIS, ROME)


def test_two_functions() -> None:
    code_raw = "```py\nprint(1)\n```"
    first, second = check_reply(qwen, TWO_FUNCTIONS).tool_calls
    assert first == PARIS
    assert (second.name, second.arguments_raw, second.arguments) == ("code_interpreter", code_raw, None)
    assert second.id == synthetic_call_id("qwen", 1, "code_interpreter", code_raw)
    assert second.arguments_error


def test_text_then_call() -> None:
    assert check_reply(qwen, TEXT_AND_CALL).parts == (Text(text="I will check the weather."), PARIS)


def test_the_colon_of_a_continued_return_is_dropped() -> None:
    response = check_reply(qwen, CONTINUED)
    assert response.parts == (Text(text="It is 18C in Paris."),) and response.finish_reason == "stop"
    assert check_reply(qwen, ":)").parts == (Text(text=")"),)  # as Qwen-Agent does


def test_calls_inside_think_are_text() -> None:
    assert check_reply(qwen, THINK).parts == (Text(text="<think>\nmaybe ✿FUNCTION✿: get_weather\n</think>\n"), PARIS)


def test_malformed_arguments_keep_the_raw_text() -> None:
    (bad,) = check_reply(qwen, MALFORMED).tool_calls
    assert (bad.arguments, bad.arguments_raw) == (None, '{"city": Paris}')
    assert bad.arguments_error and bad.arguments_error.startswith("invalid JSON")


def test_a_trailing_comment_after_the_arguments_is_ignored() -> None:
    (ok,) = check_reply(qwen, COMMENTED).tool_calls
    assert ok.arguments == {"city": "Paris"}
    assert ok.arguments_raw == '{"city": "Paris"} <!-- this is an example comment -->'


def test_a_function_without_args_is_an_error() -> None:
    (bad,) = check_reply(qwen, NO_ARGS).tool_calls
    assert (bad.name, bad.arguments, bad.arguments_error) == ("get_time", None, "the call has no ✿ARGS✿ line")


def test_incomplete_at_the_end_of_the_stream() -> None:
    (cut,) = check_reply(qwen, '✿FUNCTION✿: get_weather\n✿ARGS✿: {"ci', finish="length").tool_calls
    assert (cut.arguments, cut.arguments_raw, cut.arguments_error) == (
        None,
        '{"ci',
        "the response was cut by the length limit",
    )


def test_results_the_model_writes_itself_stay_text() -> None:
    response = check_reply(qwen, RESULT_WRITTEN)
    assert response.parts == (PARIS, Text(text="\n✿RESULT✿: 18C\n✿RETURN✿: It is 18C."))


def test_a_function_without_a_name_stays_text() -> None:
    reply = "✿FUNCTION✿: \n✿ARGS✿: {}"
    assert check_reply(qwen, reply).parts == (Text(text=reply),)


def test_text_leaves_at_once() -> None:
    stream = qwen.stream_from_wire(iter([b'data: {"choices": [{"index": 0, "delta": {"content": "Hi there"}}]}\n\n']))
    assert next(stream).text == "Hi there"  # type: ignore[union-attr]


@pytest.mark.parametrize("reply", REPLIES)
def test_every_split_gives_the_same_events(reply: str) -> None:
    check_reply(qwen, reply)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(REPLIES), st.lists(st.integers(min_value=1, max_value=300), max_size=10))
def test_random_splits_give_the_same_events(reply: str, cuts: list[int]) -> None:
    split = split_events(qwen, reply, [c % len(reply) for c in cuts if c % len(reply)])
    assert lifecycle_problems(split) == []
    assert coalesce(split) == coalesce(events(qwen, [reply]))
    assert fold(split).parts == qwen.response_from_wire(body(reply)).parts


def test_tools_to_wire_gives_the_qwen_agent_function_dicts() -> None:
    assert qwen.tools_to_wire([WEATHER]).tools == [
        {
            "name": "get_weather",
            "name_for_human": "Weather",
            "description": "Current weather for a city",
            "parameters": json.loads(json.dumps(WEATHER.input_schema)),
        }
    ]


def test_error_responses_are_the_chat_wire_errors() -> None:
    assert qwen.error_from_wire(500, {}, b"boom").kind == "server"


TRICKY = Tool(
    name="docs.search",
    title="Search the docs",
    description='Query text. Parameters: {"x": 1} are examples.\n\n### Usage\n\nplain: no',  # markdown inside
    input_schema={"type": "object", "properties": {"q": {"description": " Parameters: {} Format the arguments"}}},
)


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("tools", [(TRICKY, Tool(name="plain")), (CODE, TRICKY), (Tool(name="plain", description=""),)])
def test_descriptions_that_look_like_the_template_read_back(language: str, tools: tuple[Tool, ...]) -> None:
    request = Request(messages=(user("hi"),), tools=tools, provider_details={"language": language})
    back = qwen.request_from_wire(qwen.request_to_wire(request).body)
    expected = tuple(replace(t, description=t.description or None) for t in tools)  # "" reads back as None
    assert back.tools == expected
    assert back.provider_details == ({"language": "zh"} if language == "zh" else {})
