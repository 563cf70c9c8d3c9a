"""The conversation driver, over a real loopback socket, with OpenAI Chat Completions wire bodies.

Wire facts (OpenAI API reference, "Chat Completions > Create" and the function-calling guide):
a tool call comes back as ``choices[0].message.tool_calls[{id, type: "function", function: {name,
arguments}}]`` with ``finish_reason: "tool_calls"``; the result goes back as a ``{"role": "tool",
"tool_call_id": <id>, "content": ...}`` message after the assistant message that holds the calls.
Streams are ``data: {chunk}`` SSE events ending with ``data: [DONE]``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from conformance.adapters import get_adapter
from conformance.emulator import Emulator, EmulatorScript
from conformance.errors import McpServerError
from conformance.model import Image, Message, Reasoning, ReasoningSettings, Text, Tool, ToolCall, ToolResult
from conformance.run.conversation import (
    FollowsToolList,
    ToolListChange,
    build_request,
    run_conversation,
    tool_list_change,
)
from conformance.scenarios.values import Expectation, Reply, Scenario, ScriptedCall, ToolResultSpec, Turn
from conformance.traffic.transport import Transport
from tests._loopback import LoopbackServer
from tests._loopback import Reply as HttpReply

PATH = ("POST", "/v1/chat/completions")
GET_TIME = Tool(
    name="getTime",
    description="Get the current time in milliseconds since the Unix epoch, shifted by offset_ms.",
    input_schema={"type": "object", "properties": {"offset_ms": {"type": "number"}}, "required": ["offset_ms"]},
)


def _scenario(*, results: tuple[ToolResultSpec, ...] | None = None) -> Scenario:
    call = ScriptedCall(name="getTime", arguments={"offset_ms": -86400000}, arguments_raw='{"offset_ms":-86400000}')
    return Scenario(
        id="basic/get_time",
        path=Path("scenarios/basic/get_time.yaml"),
        behavior="getTime round trip",
        source="seed",
        tools=(GET_TIME,),
        turns=(
            Turn(
                index=0,
                user=(Text(text="请告诉我昨天的日期是什么时候?"),),
                reply=Reply(tool_calls=(call,), finish="tool_calls"),
                expect=Expectation(),
                tool_results=results
                if results is not None
                else (ToolResultSpec(call=0, content=(Text(text="1684713600000"),)),),
            ),
            Turn(index=1, reply=Reply(text="昨天是2023年5月22日。"), expect=Expectation()),
        ),
    )


def _completion(message: dict[str, object], finish: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
    ).encode()


CALL_BODY = _completion(
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "getTime", "arguments": '{"offset_ms": -86400000}'},
            }
        ],
    },
    "tool_calls",
)
TEXT_BODY = _completion({"role": "assistant", "content": "昨天是2023年5月22日。"}, "stop")
JSON = [("content-type", "application/json")]


def test_two_turns_feed_the_result_back_with_the_decoded_call_id() -> None:
    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY), HttpReply(headers=JSON, body=TEXT_BODY)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(_scenario(), get_adapter("openai_chat"), transport, mode="non_stream")
    assert outcome.stopped is None
    assert [t.status for t in outcome.turns] == [200, 200]
    first = outcome.turns[0].response
    assert first is not None and first.finish_reason == "tool_calls"
    (call,) = [p for p in first.parts if isinstance(p, ToolCall)]
    assert (call.id, call.name, call.arguments) == ("call_abc", "getTime", {"offset_ms": -86400000})
    second = json.loads(server.requests[1].body)
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["user", "assistant", "tool"]
    assert second["messages"][1]["tool_calls"][0]["id"] == "call_abc"
    assert second["messages"][2]["tool_call_id"] == "call_abc"
    assert "1684713600000" in json.dumps(second["messages"][2]["content"])
    last = outcome.turns[1].response
    assert last is not None and last.finish_reason == "stop"
    assert [p.text for p in last.parts if isinstance(p, Text)] == ["昨天是2023年5月22日。"]


def test_a_provider_error_stops_the_conversation_with_its_kind_and_retry_after() -> None:
    body = json.dumps(
        {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    ).encode()
    routes = {PATH: [HttpReply(status=429, headers=[*JSON, ("retry-after", "2")], body=body)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(_scenario(), get_adapter("openai_chat"), transport, mode="non_stream")
    assert len(outcome.turns) == 1
    error = outcome.turns[0].error
    assert error is not None and (error.kind, error.status, error.retry_after) == ("rate_limit", 429, 2.0)
    assert outcome.stopped is not None and outcome.stopped.startswith("turn 0: provider error rate_limit")


def test_a_body_that_is_not_json_is_a_malformed_response() -> None:
    routes = {PATH: [HttpReply(headers=JSON, body=b"<html>oops</html>")]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(_scenario(), get_adapter("openai_chat"), transport, mode="non_stream")
    error = outcome.turns[0].error
    assert error is not None and error.kind == "malformed_response"


def test_a_result_for_a_call_the_adapter_did_not_decode_stops_with_a_reason() -> None:
    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY)]}
    results = (ToolResultSpec(call=1, content=(Text(text="x"),)),)
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(_scenario(results=results), get_adapter("openai_chat"), transport, mode="non_stream")
    assert outcome.stopped == "turn 0: the scenario answers call #1 but the adapter decoded 1 tool call(s)"
    assert len(server.requests) == 1


def _sse(*events: dict[str, object]) -> list[bytes]:
    return [f"data: {json.dumps(e)}\n\n".encode() for e in events]


FIRST_CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "gpt-4.1-mini",
    "choices": [
        {
            "index": 0,
            "delta": {
                "role": "assistant",
                "tool_calls": [
                    {"index": 0, "id": "call_abc", "type": "function", "function": {"name": "getTime", "arguments": ""}}
                ],
            },
            "finish_reason": None,
        }
    ],
}
ARGS_CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "gpt-4.1-mini",
    "choices": [
        {
            "index": 0,
            "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"offset_ms"'}}]},
            "finish_reason": None,
        }
    ],
}


def test_a_stream_cut_mid_call_ends_with_an_error_and_no_valid_call() -> None:
    routes = {
        PATH: [
            HttpReply(headers=[("content-type", "text/event-stream")], pieces=_sse(FIRST_CHUNK, ARGS_CHUNK), cut=True)
        ]
    }
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(_scenario(), get_adapter("openai_chat"), transport, mode="stream")
    turn = outcome.turns[0]
    assert turn.transport_error is not None and "StreamInterruptedError" in turn.transport_error
    assert turn.error is not None and turn.error.kind == "stream_incomplete"
    assert turn.response is not None
    calls = [p for p in turn.response.parts if isinstance(p, ToolCall)]
    assert all(c.arguments is None and c.arguments_error for c in calls)
    assert [e.type for e in turn.events][:2] == ["tool_call_start", "tool_call_chunk"]
    assert json.loads(server.requests[0].body)["stream"] is True


# ------------------------------------------------------------------------- tool_results: mcp


def _mcp_scenario() -> Scenario:
    scenario = _scenario()
    first, second = scenario.turns
    return replace(scenario, turns=(replace(first, tool_results=(), mcp_results=True), second))


def test_an_mcp_turn_is_answered_by_the_executor_with_the_decoded_call() -> None:
    seen: list[ToolCall] = []

    def executor(call: ToolCall) -> ToolResult:
        seen.append(call)
        # the executor's own id and name are replaced by the decoded call's
        return ToolResult(call_id="", name="whatever", content=(Text(text="unknown city"),), is_error=True)

    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY), HttpReply(headers=JSON, body=TEXT_BODY)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(
            _mcp_scenario(), get_adapter("openai_chat"), transport, mode="non_stream", executor=executor
        )
    assert outcome.stopped is None
    assert [(c.id, c.name, c.arguments) for c in seen] == [("call_abc", "getTime", {"offset_ms": -86400000})]
    (result,) = outcome.history[2].parts
    assert result == ToolResult(call_id="call_abc", name="getTime", content=(Text(text="unknown city"),), is_error=True)
    second = json.loads(server.requests[1].body)
    assert second["messages"][2]["role"] == "tool"
    assert second["messages"][2]["tool_call_id"] == "call_abc"
    assert "unknown city" in json.dumps(second["messages"][2]["content"])


def test_an_mcp_turn_without_an_executor_stops_before_the_next_request() -> None:
    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(_mcp_scenario(), get_adapter("openai_chat"), transport, mode="non_stream")
    assert outcome.stopped is not None
    assert outcome.stopped.startswith("turn 0: the scenario feeds back MCP results (tool_results: mcp)")
    assert "no MCP executor" in outcome.stopped
    assert len(server.requests) == 1


def test_an_executor_that_fails_stops_the_conversation_with_its_error() -> None:
    def executor(call: ToolCall) -> ToolResult:
        raise McpServerError("tools/call getTime: the MCP server closed the connection", command="srv", stderr_tail="x")

    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(
            _mcp_scenario(), get_adapter("openai_chat"), transport, mode="non_stream", executor=executor
        )
    assert outcome.stopped is not None
    assert outcome.stopped.startswith("turn 0: MCP tools/call getTime (call #0) failed: tools/call getTime: the MCP")
    assert "(server: srv)" in outcome.stopped
    assert len(server.requests) == 1 and len(outcome.turns) == 1


def test_scripted_results_never_call_the_executor() -> None:
    def executor(call: ToolCall) -> ToolResult:
        raise AssertionError("a scripted turn must not reach the executor")

    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY), HttpReply(headers=JSON, body=TEXT_BODY)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(
            _scenario(), get_adapter("openai_chat"), transport, mode="non_stream", executor=executor
        )
    assert outcome.stopped is None
    assert "1684713600000" in json.dumps(json.loads(server.requests[1].body)["messages"][2]["content"])


def test_every_default_model_is_one_its_provider_serves_today() -> None:
    """The defaults name the page that shows each model served, and none is past a retirement date
    its provider announced: on that day this test fails, naming the model to replace."""
    import datetime

    from conformance.run.conversation import DEFAULT_MODELS, MODEL_CHOICES

    today = datetime.date.today().isoformat()
    assert (
        set(MODEL_CHOICES)
        == set(DEFAULT_MODELS)
        == {"openai_chat", "openai_responses", "anthropic", "gemini", "ollama"}
    )
    for wire, choice in MODEL_CHOICES.items():
        assert choice.source.startswith("https://"), wire
        assert datetime.date.fromisoformat(choice.checked) <= datetime.date.today()
        assert choice.retires is None or choice.retires > today, (
            f"{choice.name} ({wire}) retires on {choice.retires}: choose a model {choice.family} serves now,"
            " update MODEL_CHOICES and re-record (conformance record --emulator)"
        )


# --------------------------------------------------------------------------------------------
# issue 28: the request carries the scenario's history, reasoning settings and cache breakpoints
# --------------------------------------------------------------------------------------------

EPHEMERAL_MARK = {"type": "ephemeral"}  # anthropic-sdk-python types/cache_control_ephemeral_param.py
HISTORY = (
    Message(role="user", parts=(Text(text="Oslo?"),)),
    Message(
        role="assistant",
        parts=(Reasoning(text="look it up", signature="c2ln", source="anthropic"), Text(text="Snow.")),
    ),
)


def _with(**changes: object) -> Scenario:
    return replace(_scenario(), **changes)  # type: ignore[arg-type]


def test_the_history_comes_first_and_the_settings_ride_every_request() -> None:
    scenario = _with(history=HISTORY, reasoning=ReasoningSettings(effort="low"))
    asked = (Message(role="user", parts=(Text(text="Bergen?"),)),)
    request = build_request(scenario, asked, model="m", stream=False)
    assert request.messages == (*HISTORY, *asked)
    assert request.reasoning == ReasoningSettings(effort="low")
    assert request.system_cache_control is None
    assert all(tool.cache_control is None for tool in request.tools)


def test_cache_breakpoints_go_on_the_last_tool_the_system_and_the_newest_block() -> None:
    other = Tool(name="other")
    scenario = _with(
        system="Be brief.", tools=(GET_TIME, other), cache_control=("tools", "system", "messages"), history=HISTORY
    )
    call = ToolCall(id="c1", name="getTime", arguments={})
    results = Message(
        role="tool",
        parts=(ToolResult(call_id="c1", content=(Text(text="1"),)), ToolResult(call_id="c2", content=())),
    )
    messages = [Message(role="user", parts=(Text(text="Time?"),)), Message(role="assistant", parts=(call,)), results]
    request = build_request(scenario, messages, model="m", stream=True)
    assert [tool.cache_control for tool in request.tools] == [None, EPHEMERAL_MARK]
    assert request.system_cache_control == EPHEMERAL_MARK
    last = request.messages[-1]
    assert [part.cache_control for part in last.parts if isinstance(part, ToolResult)] == [None, EPHEMERAL_MARK]
    assert request.messages[:-1] == (*HISTORY, *messages[:-1])  # no other block is marked
    assert messages[-1] is results  # the conversation itself is left as it was


def test_the_breakpoint_skips_a_trailing_image_and_a_message_with_nothing_to_mark() -> None:
    scenario = _with(cache_control=("messages",))
    image = Image(media_type="image/png", data="AAAA")
    request = build_request(
        scenario, [Message(role="user", parts=(Text(text="What is this?"), image))], model="m", stream=False
    )
    assert request.messages[-1].parts == (Text(text="What is this?", cache_control=EPHEMERAL_MARK), image)
    only_image = Message(role="user", parts=(image,))
    assert build_request(scenario, [only_image], model="m", stream=False).messages == (only_image,)


def test_no_system_prompt_no_system_breakpoint() -> None:
    request = build_request(_with(cache_control=("system",)), (), model="m", stream=False)
    assert request.system is None and request.system_cache_control is None


def test_a_history_with_assistant_turns_is_played_from_the_scenarios_turn_0() -> None:
    """The emulator counts a request's turn by its assistant messages: those of the history are turns
    already answered, so turn 0 still gets turn 0's reply (EmulatorScript.from_scenario)."""
    scenario = _with(history=HISTORY)
    with Emulator() as emulator, Transport(emulator.base_url, wire="openai_chat", api_key="k") as transport:
        emulator.set_script(EmulatorScript.from_scenario(scenario))
        outcome = run_conversation(scenario, get_adapter("openai_chat"), transport, mode="non_stream")
    assert outcome.stopped is None
    first, second = outcome.turns
    assert first.response is not None and [c.name for c in first.response.tool_calls] == ["getTime"]
    assert second.response is not None and second.response.text == "昨天是2023年5月22日。"
    sent = first.wire.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "Snow."


# ---- tool lists that change between turns (issue 31 point 3) ----------------------------------

GET_DATE = Tool(name="getDate", description="Today's date.", input_schema={"type": "object"})


class _Following:
    """An executor whose server adds ``getDate`` on the first call (``FollowsToolList``): its session
    opens with the conversation and ends with it."""

    def __init__(self) -> None:
        self.events: list[str] = []

    @contextlib.contextmanager
    def conversation(self) -> Iterator[tuple[Tool, ...] | None]:
        self.events.append("open")
        try:
            yield (GET_TIME,)
        finally:
            self.events.append("close")

    def changed_tools(self) -> tuple[Tool, ...] | None:
        self.events.append("changed?")
        return (GET_TIME, GET_DATE) if self.events.count("call") == 1 else None

    def __call__(self, call: ToolCall) -> ToolResult:
        self.events.append("call")
        return ToolResult(call_id="", content=(Text(text="1684713600000"),))


def test_the_next_request_offers_the_list_the_server_announced() -> None:
    executor = _Following()
    routes = {PATH: [HttpReply(headers=JSON, body=CALL_BODY), HttpReply(headers=JSON, body=TEXT_BODY)]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as transport:
        outcome = run_conversation(
            _mcp_scenario(), get_adapter("openai_chat"), transport, mode="non_stream", executor=executor
        )
    assert outcome.stopped is None
    assert executor.events == ["open", "call", "changed?", "close"]  # the last turn has no calls to follow
    sent = [[t["function"]["name"] for t in json.loads(r.body)["tools"]] for r in server.requests]
    assert sent == [["getTime"], ["getTime", "getDate"]]
    assert [t.request.tools for t in outcome.turns] == [(GET_TIME,), (GET_TIME, GET_DATE)]
    assert outcome.tool_changes == (ToolListChange(after_turn=0, added=("getDate",), tools=(GET_TIME, GET_DATE)),)


def test_a_list_change_names_what_was_added_removed_and_redefined() -> None:
    wider = replace(GET_TIME, input_schema={"type": "object", "properties": {"offset_ms": {"type": "integer"}}})
    change = tool_list_change((GET_TIME, GET_DATE), (wider,), after_turn=2)
    assert (change.added, change.removed, change.changed) == ((), ("getDate",), ("getTime",))
    assert change.describe() == "removed getDate; changed getTime"
    assert tool_list_change((GET_TIME,), (GET_TIME,), after_turn=0).describe() == "the same tools listed again"


def test_a_plain_executor_keeps_the_scenarios_tools() -> None:
    assert not isinstance(lambda call: call, FollowsToolList)
