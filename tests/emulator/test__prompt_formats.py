"""The emulator's prompt formats (Qwen-Agent ``✿FUNCTION✿``, Hermes ``<tool_call>``, ``<function_call>``).

Expected texts come from the templates the adapters cite, transcribed below: the Qwen2.5-Instruct
``chat_template`` (assistant branch: ``'\\n' + content``, then per call ``'\\n<tool_call>\\n{"name": "'
+ name + '", "arguments": ' + (arguments | tojson) + '}\\n</tool_call>'``, with transformers'
``tojson`` = ``json.dumps(x, ensure_ascii=False)``), Qwen-Agent ``qwen_fncall_prompt.py``
(``FN_NAME``/``FN_ARGS``, ``preprocess_fncall_messages``, ``postprocess_fncall_messages``,
``FN_STOP_WORDS``) and ``conformance.adapters.function_call``'s documented template.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from _emulator_http import check_fault, sse_blocks

from conformance.adapters import get_adapter
from conformance.adapters.base import load_json_body
from conformance.assembly import fold, lifecycle_problems
from conformance.emulator import Emulator, EmulatorScript
from conformance.emulator._prompt_formats import (
    KNOWN_QUIRKS,
    PROMPT_FORMATS,
    continues_exchange,
    detect_format,
    pieces,
    prompt_reply,
    render_text,
)
from conformance.model import ErrorEvent, Message, Request, Response, StreamEvent, Text, Tool, ToolCall, ToolResult
from conformance.scenarios.values import Fault, Reply, ScriptedCall

WEATHER = ScriptedCall(
    name="get_weather", arguments={"city": "Paris", "days": 3}, arguments_raw='{"city":"Paris","days":3}'
)
TIME = ScriptedCall(name="get_time", arguments={}, arguments_raw="{}")
MALFORMED = ScriptedCall(name="get_weather", arguments_raw='{"city": "Paris", "unit": celsius}')
ESCAPED = ScriptedCall(name="get_weather", arguments_raw='{"city": "\\u5317\\u4eac"}')
EMPTY = ScriptedCall(name="get_time", arguments_raw="")
TOOLS = (
    Tool(
        name="get_weather",
        description="Current weather for a city.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    Tool(name="get_time", description="The time now.", input_schema={"type": "object", "properties": {}}),
)

FN_NAME, FN_ARGS, FN_RESULT, FN_EXIT = "✿FUNCTION✿", "✿ARGS✿", "✿RESULT✿", "✿RETURN✿"


def tojson(value: Any) -> str:
    """transformers' chat-template ``tojson`` (``chat_template_utils._compile_jinja_template``)."""
    return json.dumps(value, ensure_ascii=False)


def qwen25_assistant(content: str | None, calls: Sequence[tuple[str, str]]) -> str:
    """What the Qwen2.5-Instruct template writes after ``<|im_start|>assistant`` (up to
    ``<|im_end|>``) for ``content`` and ``(name, arguments-as-tojson)`` calls."""
    out = "\n" + content if content else ""
    for name, arguments in calls:
        out += '\n<tool_call>\n{"name": "' + name + '", "arguments": ' + arguments + "}\n</tool_call>"
    return out


def qwen_agent_postprocess(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Qwen-Agent ``postprocess_fncall_messages`` for one reply text: (answer text, calls)."""
    if text.startswith(": "):
        text = text[2:]
    elif text.startswith(":"):
        text = text[1:]
    i = text.find(f"{FN_NAME}:")
    if i < 0:
        return text.strip(), []
    answer = text[:i].lstrip("\n").rstrip()
    calls = []
    for part in text[i:].split(f"{FN_NAME}:"):
        if not part:
            continue
        part = part.removesuffix("\n")
        at = part.find(f"{FN_ARGS}:")
        name = part[:at].strip()
        calls += [(name, args.strip()) for args in part[at + len(FN_ARGS) + 1 :].split(f"{FN_ARGS}:")]
    return answer, calls


def request(
    adapter: str, *, system: str | None = None, messages: Sequence[Message] = (), **more: Any
) -> dict[str, Any]:
    """The chat body ``adapter`` sends."""
    history = tuple(messages) or (Message(role="user", parts=(Text(text="Weather in Paris?"),)),)
    unified = Request(model="qwen2.5-7b-instruct", system=system, messages=history, tools=TOOLS, **more)
    return dict(get_adapter(adapter).request_to_wire(unified).body)


# --------------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
def test_each_adapters_request_is_detected_as_its_format(fmt: str) -> None:
    assert detect_format(request(fmt)) == fmt
    assert detect_format(request(fmt, system="You are terse.")) == fmt


@pytest.mark.parametrize(
    ("more", "user"),
    [({"parallel_tool_calls": True}, "Weather in Paris?"), ({}, "巴黎天气怎么样？")],
    ids=["en_parallel", "zh"],
)
def test_every_qwen_template_variant_is_detected(more: dict[str, Any], user: str) -> None:
    body = request("qwen", messages=(Message(role="user", parts=(Text(text=user),)),), **more)
    assert detect_format(body) == "qwen"


QWEN_AGENT_SYSTEM = (  # FN_CALL_TEMPLATE['en'] with one tool (qwen_fncall_prompt.py)
    "# Tools\n\n## You have access to the following tools:\n\n### get_weather\n\nget_weather: Weather. Parameters:"
    ' {"type": "object"} Format the arguments as a JSON object.\n\n## When you need to call a tool, please insert the'
    " following command in your reply, which can be called zero or multiple times according to your needs:\n\n"
    f"{FN_NAME}: The tool to use, should be one of [get_weather]\n{FN_ARGS}: The input of the tool\n"
    f"{FN_RESULT}: Tool results\n{FN_EXIT}: Reply based on tool results. Images need to be rendered as ![](url)"
)
QWEN25_SYSTEM = (  # the Qwen2.5-Instruct chat_template's tools section
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function"
    ' signatures within <tools></tools> XML tags:\n<tools>\n{"type": "function", "function": {"name": "get_weather"}}'
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within"
    ' <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}'
    "\n</tool_call>"
)


@pytest.mark.parametrize(("system", "fmt"), [(QWEN_AGENT_SYSTEM, "qwen"), (QWEN25_SYSTEM, "hermes")])
def test_the_upstream_templates_system_text_is_detected(system: str, fmt: str) -> None:
    body = {"model": "m", "messages": [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]}
    assert detect_format(body) == fmt
    parts = [{"type": "text", "text": system[:40]}, {"type": "text", "text": system[40:]}]
    assert detect_format({"messages": [{"role": "system", "content": parts}]}) == fmt


def test_the_tools_block_appended_last_wins_over_the_callers_own_text() -> None:
    caller = "Never write <function_call></function_call> blocks; write a <function_call></function_call> block only"
    assert detect_format(request("hermes", system=caller)) == "hermes"
    assert detect_format(request("function_call", system=QWEN25_SYSTEM)) == "function_call"


def test_native_and_plain_requests_are_not_prompt_formats() -> None:
    native = dict(get_adapter("openai_chat").request_to_wire(Request(model="m", messages=(), tools=TOOLS)).body)
    native["messages"] = [{"role": "system", "content": QWEN25_SYSTEM}]
    assert detect_format(native) is None  # a tools field: the native API
    assert detect_format({"model": "m", "messages": [{"role": "user", "content": "hi"}]}) is None
    assert detect_format({}) is None


def test_without_a_tools_block_the_stop_words_or_the_history_decide() -> None:
    user = {"role": "user", "content": "hi"}
    assert detect_format({"messages": [user], "stop": [FN_RESULT, FN_EXIT]}) == "qwen"  # FN_STOP_WORDS
    assert detect_format({"messages": [user], "stop": ["<function_result>"]}) == "function_call"
    call = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    history = [user, {"role": "assistant", "content": call}, {"role": "user", "content": "<tool_response>\n1\n"}]
    assert detect_format({"messages": history}) == "hermes"


def test_a_qwen_request_continuing_an_exchange_is_recognised() -> None:
    call = ToolCall(id="c", name="get_time", arguments={}, arguments_raw="{}")
    history = (
        Message(role="user", parts=(Text(text="Time?"),)),
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResult(call_id="c", content=(Text(text="12:00"),)),)),
    )
    body = request("qwen", messages=history)
    assert body["messages"][-1]["content"].endswith(f"{FN_RESULT}: 12:00\n{FN_EXIT}")  # ': ' trimmed upstream
    assert continues_exchange(body)
    assert not continues_exchange(request("qwen"))


# --------------------------------------------------------------------------------------------
# Rendering, against the templates
# --------------------------------------------------------------------------------------------


def test_hermes_text_is_the_qwen25_template_assistant_turn() -> None:
    reply = Reply(text="Let me check.", tool_calls=(WEATHER, TIME), finish="tool_calls")
    expected = qwen25_assistant("Let me check.", [("get_weather", tojson(WEATHER.arguments)), ("get_time", "{}")])
    assert render_text("hermes", reply) == expected.removeprefix("\n")
    only_call = Reply(tool_calls=(WEATHER,), finish="tool_calls")
    assert render_text("hermes", only_call) == qwen25_assistant(None, [("get_weather", tojson(WEATHER.arguments))])[1:]


def test_hermes_raw_arguments_are_written_where_the_arguments_go() -> None:
    assert render_text("hermes", Reply(tool_calls=(MALFORMED,))) == qwen25_assistant(
        None, [("get_weather", '{"city": "Paris", "unit": celsius}')]
    ).removeprefix("\n")
    assert '"arguments": {"city": "\\u5317\\u4eac"}}' in render_text("hermes", Reply(tool_calls=(ESCAPED,)))
    # an empty argument text (E3) is what tojson writes for the empty string
    assert render_text("hermes", Reply(tool_calls=(EMPTY,))) == qwen25_assistant(None, [("get_time", tojson(""))])[1:]


def test_function_call_text_follows_its_template() -> None:
    reply = Reply(text="Checking.", tool_calls=(WEATHER, MALFORMED), finish="tool_calls")
    assert render_text("function_call", reply) == (
        "Checking.\n"
        '<function_call>{"name": "get_weather", "arguments": ' + tojson(WEATHER.arguments) + "}</function_call>\n"
        '<function_call>{"name": "get_weather", "arguments": {"city": "Paris", "unit": celsius}}</function_call>'
    )


def test_qwen_text_is_what_qwen_agent_reads_back() -> None:
    reply = Reply(text="Let me check.", tool_calls=(WEATHER, TIME, MALFORMED), finish="tool_calls")
    text = render_text("qwen", reply)
    # preprocess_fncall_messages writes "✿FUNCTION✿: name\n✿ARGS✿: args" per call, "\n" between; the
    # model's "\n" before the stop word ✿RESULT✿ stays in the text
    assert text == (
        f"Let me check.\n{FN_NAME}: get_weather\n{FN_ARGS}: {tojson(WEATHER.arguments)}\n{FN_NAME}: get_time\n"
        f'{FN_ARGS}: {{}}\n{FN_NAME}: get_weather\n{FN_ARGS}: {{"city": "Paris", "unit": celsius}}\n'
    )
    assert qwen_agent_postprocess(text) == (
        "Let me check.",
        [("get_weather", tojson(WEATHER.arguments)), ("get_time", "{}"), ("get_weather", MALFORMED.arguments_raw)],
    )
    assert not any(word in text for word in (FN_RESULT, FN_EXIT))  # stop words never reach the reply


def test_a_qwen_reply_continuing_an_exchange_starts_with_the_colon_the_model_completes() -> None:
    continuing = {"messages": [{"role": "user", "content": f"Time?\n\n{FN_NAME}: t\n{FN_ARGS}: {{}}\n{FN_EXIT}"}]}
    text = render_text("qwen", Reply(text="It is noon."), continuing)
    assert text == ": It is noon."
    assert qwen_agent_postprocess(text) == ("It is noon.", [])
    assert render_text("hermes", Reply(text="It is noon."), continuing) == "It is noon."


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
def test_a_reply_cut_by_length_stops_inside_its_last_call(fmt: str) -> None:
    cut = ScriptedCall(name="get_file", arguments_raw='{"path": "src/a.ts", "startLi')
    text = render_text(fmt, Reply(text="Reading.", tool_calls=(cut,), finish="length"))
    assert text.endswith('{"path": "src/a.ts", "startLi')
    assert text.startswith("Reading.\n")


def test_prompt_reply_is_text_only_with_finish_stop_and_keeps_the_fault() -> None:
    fault = Fault(kind="disconnect", after=3)
    reply = Reply(
        text="x",
        reasoning="r",
        tool_calls=(WEATHER,),
        finish="tool_calls",
        fault=fault,
        quirks=("ping", "reasoning_content"),
    )
    out = prompt_reply("hermes", reply)
    assert (out.tool_calls, out.finish, out.fault, out.reasoning) == ((), "stop", fault, "r")
    assert out.text == render_text("hermes", reply)
    assert out.quirks == ("reasoning_content",)
    assert frozenset({"reasoning_content"}) == KNOWN_QUIRKS
    assert prompt_reply("qwen", Reply(text="cut", finish="length")).finish == "length"
    assert prompt_reply("qwen", Reply(text="x", finish="content_filter")).finish == "content_filter"
    with pytest.raises(ValueError, match="unknown prompt format"):
        render_text("xml", Reply(text="no calls"))


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
def test_each_adapter_decodes_the_rendered_text_to_the_scripted_calls(fmt: str) -> None:
    reply = Reply(text="Let me check.", tool_calls=(WEATHER, TIME, ESCAPED), finish="tool_calls")
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": render_text(fmt, reply)}}]}
    body["choices"][0]["finish_reason"] = "stop"
    response = get_adapter(fmt).response_from_wire(body)
    assert response.text == "Let me check."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", WEATHER.arguments),
        ("get_time", {}),
        ("get_weather", {"city": "北京"}),
    ]
    assert response.finish_reason == "tool_calls"


# --------------------------------------------------------------------------------------------
# Stream pieces
# --------------------------------------------------------------------------------------------

MARKERS = {
    "qwen": (FN_NAME, FN_ARGS),
    "hermes": ("<tool_call>", "</tool_call>"),
    "function_call": ("<function_call>", "</function_call>"),
}


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
def test_stream_pieces_split_every_marker(fmt: str) -> None:
    text = render_text(fmt, Reply(text="Sure, 北京 🌤 now.", tool_calls=(WEATHER, TIME), finish="tool_calls"))
    cut = pieces(text)
    assert "".join(cut) == text and all(cut)
    bounds = set()
    position = 0
    for piece in cut:
        position += len(piece)
        bounds.add(position)
    for marker in MARKERS[fmt]:
        at = text.find(marker)
        assert at != -1
        while at != -1:
            assert any(at < b < at + len(marker) for b in bounds), (marker, at, cut)
            at = text.find(marker, at + 1)


# --------------------------------------------------------------------------------------------
# Over HTTP
# --------------------------------------------------------------------------------------------


def exchange(
    client: httpx.Client, fmt: str, body: dict[str, Any], *, stream: bool
) -> tuple[int, Any, list[Any], Response | None, list[StreamEvent]]:
    """Send ``body`` as ``fmt`` would; (status, wire body or data payloads, events, response)."""
    adapter = get_adapter(fmt)
    body = {**body, "stream": True} if stream else body
    answer = client.post("/v1/chat/completions", json=body)
    if answer.status_code >= 400:
        return answer.status_code, answer.json(), [], None, []
    if not stream:
        parsed = load_json_body(answer.content)
        return 200, parsed, [], adapter.response_from_wire(parsed, tools=TOOLS), []
    blocks = sse_blocks(answer.content)
    data = [b[6:-2].decode() for b in blocks]
    events = list(adapter.stream_from_wire([answer.content], tools=TOOLS))
    return 200, None, [d if d == "[DONE]" else json.loads(d) for d in data], fold(events), events


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
def test_a_call_reply_is_sent_as_text_with_finish_stop(emu: Emulator, client: httpx.Client, fmt: str) -> None:
    reply = Reply(text="Let me check.", tool_calls=(WEATHER,), finish="tool_calls")
    emu.set_script(EmulatorScript(scenario_id=f"prompt/{fmt}", replies=(reply,)))
    status, body, _, response, _ = exchange(client, fmt, request(fmt), stream=False)
    message = body["choices"][0]["message"]
    assert (status, message["content"], body["choices"][0]["finish_reason"]) == (
        200,
        render_text(fmt, reply),
        "stop",
    )
    assert "tool_calls" not in message
    assert response is not None and response.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("get_weather", WEATHER.arguments)]


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
def test_a_streamed_call_reply_arrives_as_small_content_deltas(emu: Emulator, client: httpx.Client, fmt: str) -> None:
    reply = Reply(text="Let me check.", tool_calls=(WEATHER, TIME), finish="tool_calls")
    emu.set_script(EmulatorScript(scenario_id=f"prompt/{fmt}", replies=(reply,)))
    _, _, data, response, events = exchange(client, fmt, request(fmt), stream=True)
    chunks = [d for d in data if d != "[DONE]"]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    contents = [d["content"] for d in deltas if d.get("content")]
    assert "".join(contents) == render_text(fmt, reply)
    assert contents == pieces(render_text(fmt, reply))
    assert not any("tool_calls" in d for d in deltas)
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert data[-1] == "[DONE]"
    assert lifecycle_problems(events) == []
    assert response is not None and response.finish_reason == "tool_calls"
    assert [c.name for c in response.tool_calls] == ["get_weather", "get_time"]


def history(fmt: str, rounds: int) -> list[Message]:
    """``rounds`` user question -> call -> result -> answer exchanges, then a new question."""
    messages: list[Message] = []
    for n in range(rounds):
        call = ToolCall(id=f"c{n}", name="get_time", arguments={}, arguments_raw="{}")
        messages += [
            Message(role="user", parts=(Text(text=f"Question {n}?"),)),
            Message(role="assistant", parts=(Text(text="Checking."), call)),
            Message(role="tool", parts=(ToolResult(call_id=f"c{n}", content=(Text(text=f"{n}:00"),)),)),
            Message(role="assistant", parts=(Text(text=f"Answer {n}."),)),
        ]
    return messages


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
@pytest.mark.parametrize(("cut", "turn"), [(1, 0), (3, 1), (5, 2), (7, 3)])
def test_the_turn_counts_the_assistant_turns_as_the_format_writes_them(
    emu: Emulator, client: httpx.Client, fmt: str, cut: int, turn: int
) -> None:
    """Qwen-Agent merges a call, its result and the answer into one assistant message (or into the
    last user message); the turn is still the number of unified assistant messages."""
    replies = tuple(Reply(text=f"reply {n}") for n in range(4))
    emu.set_script(EmulatorScript(scenario_id=f"prompt/turns/{fmt}", replies=replies))
    messages = [*history(fmt, 2), Message(role="user", parts=(Text(text="Again?"),))][:cut]
    _, _, _, response, _ = exchange(client, fmt, request(fmt, messages=messages), stream=False)
    assert response is not None and response.text == f"reply {turn}"


@pytest.mark.parametrize("fmt", PROMPT_FORMATS)
@pytest.mark.parametrize(
    ("kind", "stream"),
    [
        ("rate_limit", False),
        ("server_error", True),
        ("malformed_body", True),
        ("disconnect", True),
        ("error_event", True),
    ],
)
def test_faults_work_unchanged(emu: Emulator, client: httpx.Client, fmt: str, kind: str, stream: bool) -> None:
    from _emulator_http import Outcome

    reply = Reply(
        text="Let me look that up for you.",
        tool_calls=(WEATHER,),
        finish="tool_calls",
        fault=Fault(kind=kind, retry_after=7 if kind == "rate_limit" else None),  # type: ignore[arg-type]
    )
    emu.set_script(EmulatorScript(scenario_id=f"prompt/faults/{kind}", replies=(reply,)))
    adapter = get_adapter(fmt)
    body = {**request(fmt), "stream": stream}
    with client.stream("POST", "/v1/chat/completions", json=body) as answer:
        outcome = Outcome(status=answer.status_code, headers=answer.headers)
        try:
            outcome.chunks = list(answer.iter_raw())
        except httpx.TransportError as exc:
            outcome.broken = str(exc)
    outcome.body = b"".join(outcome.chunks)
    if outcome.status >= 400:
        outcome.error = adapter.error_from_wire(outcome.status, outcome.headers, outcome.body).info
    else:
        outcome.events = list(adapter.stream_from_wire(outcome.chunks, tools=TOOLS))
        outcome.error = next((e.error for e in outcome.events if isinstance(e, ErrorEvent)), None)
        # a call still open when the stream broke is never surfaced as a valid call
        assert all(c.arguments is None for c in fold(outcome.events).tool_calls)
    check_fault(outcome, fmt, kind)


def test_native_call_quirks_are_noted_as_without_effect(emu: Emulator, client: httpx.Client) -> None:
    reply = Reply(tool_calls=(WEATHER,), finish="tool_calls", quirks=("index_offset", "reasoning_content"))
    emu.set_script(EmulatorScript(scenario_id="prompt/quirks", replies=(reply,)))
    before = len(emu.log)
    exchange(client, "hermes", request("hermes"), stream=True)
    notes = emu.log[before:]
    assert len(notes) == 1 and "index_offset" in notes[0] and "hermes" in notes[0]
    assert "reasoning_content" not in notes[0]


def test_the_answer_is_deterministic(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="prompt/same", replies=(Reply(tool_calls=(WEATHER,)),)))
    body = {**request("qwen"), "stream": True}
    first = client.post("/v1/chat/completions", json=body).content
    assert client.post("/v1/chat/completions", json=body).content == first
