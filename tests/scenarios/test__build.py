"""Tests for the values the loader builds (``conformance.scenarios._build``, through ``load_scenario``):
the ``expect`` defaults of docs/scenarios.md, content items, tools, wire expectations, and the
YAML the loader accepts (anchors, merge keys, dates as strings)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from conformance.errors import ScenarioError
from conformance.model import (
    Audio,
    Image,
    Message,
    Reasoning,
    ReasoningSettings,
    Resource,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)
from conformance.scenarios.loader import load_scenario
from conformance.scenarios.values import (
    Expectation,
    ExpectedCall,
    ExpectedError,
    ExpectedReasoning,
    Fault,
    McpTools,
    Scenario,
    ScriptedCall,
    TextExpectation,
    ToolResultSpec,
    WireExpectation,
)

HEAD = """\
schema_version: 1
behavior: "b"
source: "s"
"""
REPO = Path(__file__).resolve().parents[2]
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def load(tmp_path: Path, body: str) -> Scenario:
    path = tmp_path / "scenarios" / "case.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(body), encoding="utf-8")
    return load_scenario(path)


def test_raw_arguments_that_are_not_an_object_expect_an_arguments_error(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: [{name: getTime}]
        turns:
          - user: "yesterday?"
            reply:
              tool_calls:
                - name: getTime
                  arguments_raw: '{"offset_ms": -86'
        """,
    )
    (turn,) = scenario.turns
    assert turn.reply.tool_calls == (ScriptedCall(name="getTime", arguments=None, arguments_raw='{"offset_ms": -86'),)
    assert turn.reply.finish == "tool_calls"
    assert turn.expect == Expectation(
        tool_calls=(ExpectedCall(name="getTime", arguments=None, arguments_error=True),),
        text=None,
        finish_reason=None,  # malformed arguments: no finish expectation
    )


@pytest.mark.parametrize(
    ("raw", "arguments"),
    [
        ('{"offset_ms": -86400000}', {"offset_ms": -86400000}),
        ("", {}),  # empty text means no arguments (wire-formats.md E3)
        ("  ", {}),
        ('{"big": 12345678901234567890}', {"big": 12345678901234567890}),
    ],
)
def test_raw_arguments_that_parse_to_an_object_expect_it_exactly(
    tmp_path: Path, raw: str, arguments: dict[str, object]
) -> None:
    scenario = load(
        tmp_path,
        f"""\
        tools: []
        turns:
          - user: "go"
            reply:
              tool_calls: [{{name: getTime, arguments_raw: '{raw}'}}]
        """,
    )
    expect = scenario.turns[0].expect
    assert expect.tool_calls == (ExpectedCall(name="getTime", arguments=arguments, match="exact"),)
    assert expect.finish_reason == "tool_calls"


@pytest.mark.parametrize("raw", ["[1, 2]", "not json", '{"a": 1}{"b": 2}', '{"a": NaN}', '"text"', "null"], ids=repr)
def test_raw_arguments_errors(tmp_path: Path, raw: str) -> None:
    quoted = raw.replace("'", "''")
    scenario = load(
        tmp_path,
        f"""\
        tools: []
        turns:
          - user: "go"
            reply:
              tool_calls: [{{name: f, arguments_raw: '{quoted}'}}]
        """,
    )
    assert scenario.turns[0].reply.tool_calls[0].arguments_raw == raw
    assert scenario.turns[0].expect.tool_calls == (ExpectedCall(name="f", arguments_error=True),)


def test_a_fault_leaves_only_what_expect_states(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: []
        turns:
          - user: "go"
            reply:
              fault: {kind: rate_limit, retry_after: 2}
            expect:
              error: {kind: rate_limit, status: 429, retry_after: 2}
          - user: "again"
            reply:
              text: "partial"
              fault: {kind: error_event, after: 3}
            expect:
              text: {contains: "part"}
              error: {kind: server}
        modes: [stream]
        """,
    )
    first, second = scenario.turns
    assert first.reply.fault == Fault(kind="rate_limit", retry_after=2.0)
    assert isinstance(first.reply.fault.retry_after, float)
    assert first.expect == Expectation(error=ExpectedError(kind="rate_limit", status=429, retry_after=2.0))
    assert second.reply.fault == Fault(kind="error_event", after=3)
    assert second.expect == Expectation(
        text=TextExpectation(value="part", mode="contains"), error=ExpectedError(kind="server")
    )
    assert scenario.modes == ("stream",)


def test_explicit_expect_replaces_each_default(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: [{name: get_weather, inputSchema: {type: object, properties: {city: {type: string}}}}]
        turns:
          - user: "Weather in Paris and Berlin?"
            reply:
              text: "Checking."
              reasoning: "Two cities, two calls."
              tool_calls:
                - {name: get_weather, arguments: {city: Paris, unit: c}}
                - {name: get_weather, arguments: {city: Berlin}}
              finish: length
              quirks: [ping]
            expect:
              tool_calls:
                - {name: get_weather, arguments: {city: Paris}, match: subset}
                - name: get_weather
                  match: schema
                  arguments: {type: object, required: [city]}
              finish_reason: tool_calls
              events: [tool_call_start, tool_call_chunk, tool_call_end, finish]
              reasoning: []
        """,
    )
    (turn,) = scenario.turns
    assert turn.reply.finish == "length"
    assert turn.reply.reasoning == "Two cities, two calls."
    assert turn.reply.quirks == ("ping",)
    assert turn.reply.tool_calls[0].arguments_raw == '{"city":"Paris","unit":"c"}'
    assert turn.expect == Expectation(
        tool_calls=(
            ExpectedCall(name="get_weather", arguments={"city": "Paris"}, match="subset"),
            ExpectedCall(name="get_weather", arguments={"type": "object", "required": ["city"]}, match="schema"),
        ),
        text=TextExpectation(value="Checking.", mode="exact"),  # not stated: from the reply
        finish_reason="tool_calls",
        events=("tool_call_start", "tool_call_chunk", "tool_call_end", "finish"),
        reasoning=(),  # stated: no reasoning part, whatever the reply plays
    )


def test_content_items_tools_and_wire(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        f"""\
        system: "Be brief."
        tool_choice: {{name: snapshot}}
        parallel_tool_calls: false
        max_tokens: 256
        requires: [images_in_tool_results, tool_choice_named]
        tags: [content]
        modes: [stream, non_stream]
        wires: [anthropic, openai_chat]
        tools:
          - name: snapshot
            title: "Snapshot"
            outputSchema: {{type: object}}
            annotations: {{readOnlyHint: true}}
        turns:
          - user:
              - {{type: text, text: "Look:"}}
              - {{type: image, data: "{PNG_1X1}", mimeType: image/png}}
            reply:
              tool_calls: [{{name: snapshot, arguments: {{}}}}, {{name: snapshot, arguments: {{}}}}]
            tool_results:
              - call: 1
                isError: true
                content:
                  - {{type: audio, data: "UklGRg==", mimeType: audio/wav}}
                  - {{type: resource, resource: {{uri: "file:///a.txt", mimeType: text/plain, text: "hi"}}}}
                  - {{type: resource, resource: {{uri: "file:///b.bin", blob: "AAE="}}}}
              - call: 0
                content: "ok"
          - reply: {{text: "Done."}}
        wire:
          openai_chat:
            - turn: 0
              present: ["$.tools[0].function.parameters"]
              absent: ["$.parallel_tool_calls"]
              equal: {{"$.tool_choice.function.name": snapshot, "$.max_tokens": 256}}
          anthropic:
            - equal: {{'$["tool_choice"]["type"]': tool}}
        """,
    )
    assert scenario.id == "case"
    assert scenario.system == "Be brief."
    assert scenario.tool_choice == "snapshot"
    assert scenario.parallel_tool_calls is False
    assert scenario.max_tokens == 256
    assert scenario.requires == frozenset({"images_in_tool_results", "tool_choice_named"})
    assert scenario.tags == ("content",)
    assert scenario.modes == ("non_stream", "stream")
    assert scenario.wires == ("anthropic", "openai_chat")
    assert scenario.tools == (
        Tool(
            name="snapshot",
            title="Snapshot",
            input_schema={"type": "object"},
            output_schema={"type": "object"},
            annotations={"readOnlyHint": True},
        ),
    )
    first = scenario.turns[0]
    assert first.user == (Text(text="Look:"), Image(media_type="image/png", data=PNG_1X1))
    assert first.tool_results == (
        ToolResultSpec(
            call=1,
            is_error=True,
            content=(
                Audio(media_type="audio/wav", data="UklGRg=="),
                Resource(uri="file:///a.txt", media_type="text/plain", text="hi"),
                Resource(uri="file:///b.bin", blob="AAE="),
            ),
        ),
        ToolResultSpec(call=0, content=(Text(text="ok"),)),
    )
    assert scenario.wire == (
        WireExpectation(
            adapter="openai_chat",
            turn=0,
            present=("$.tools[0].function.parameters",),
            absent=("$.parallel_tool_calls",),
            equal={"$.tool_choice.function.name": "snapshot", "$.max_tokens": 256},
        ),
        WireExpectation(adapter="anthropic", equal={'$["tool_choice"]["type"]': "tool"}),
    )


def test_anchors_merge_keys_and_dates(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools:
          - &weather
            name: get_weather
            inputSchema: {type: object}
          - <<: *weather
            name: get_forecast
        turns:
          - user: &question "Weather on 2023-05-22?"
            reply:
              tool_calls: [{name: get_weather, arguments: {date: 2023-05-22, days: 1}}]
            tool_results: [{content: "sunny"}]
          - user: *question
            reply: {text: "Sunny."}
        """,
    )
    assert [t.name for t in scenario.tools] == ["get_weather", "get_forecast"]
    assert scenario.tools[1].input_schema == {"type": "object"}
    assert scenario.turns[0].reply.tool_calls[0].arguments == {"date": "2023-05-22", "days": 1}
    assert scenario.turns[1].user == (Text(text="Weather on 2023-05-22?"),)


@pytest.mark.parametrize(
    ("body", "pointer", "phrase", "hint"),
    [
        ("text: no", "/turns/0/reply/text", "expected a string, got a boolean", "quote the value"),
        ("text: 12", "/turns/0/reply/text", "expected a string, got an integer", "quote the value"),
        ("tool_calls: {name: f}", "/turns/0/reply/tool_calls", "expected a list, got a mapping", ""),
        ("text: .nan", "/turns/0/reply/text", ".nan is not a JSON number", "quote it"),
        ("finish: tool_call", "/turns/0/reply/finish", "'tool_call' is not allowed", "did you mean 'tool_calls'?"),
    ],
)
def test_reply_value_problems(tmp_path: Path, body: str, pointer: str, phrase: str, hint: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load(
            tmp_path,
            f"""\
            tools: []
            turns:
              - user: "go"
                reply:
                  {body}
            """,
        )
    problem = next(p for p in caught.value.problems if phrase in p.message)
    assert problem.pointer == pointer
    lines = (tmp_path / "scenarios" / "case.yaml").read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines) if body in text)
    value = body.split(": ", 1)[1]
    assert (problem.line, problem.column) == (line + 1, lines[line].index(value) + 1)
    assert hint in problem.hint


def test_recursive_and_exploding_aliases_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="recursive structure"):
        load(tmp_path, "tools: &t [*t]\nturns: []\n")
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for n, name in enumerate("bcdef"):
        previous = "abcdef"[n]
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    with pytest.raises(ScenarioError, match="expands to too many nodes: past the limit yaml_nodes="):
        load(tmp_path, "\n".join(levels) + "\n")


def test_tools_from_an_mcp_server(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tool_choice: {name: getTime}
        tools:
          mcp:
            command: ["{python}", -m, conformance, mcp-server]
            args: [--verbose]
            env: {CONFORMANCE_FIXED_NOW_MS: "1684800000000"}
            cwd: ../server
            timeout: 2.5
            select: [noop_24, getTime]
        turns:
          - user: "yesterday?"
            reply:
              tool_calls: [{name: getTime, arguments: {offset_ms: -86400000}}, {name: not_listed_yet, arguments: {}}]
            tool_results: mcp
          - reply: {text: "Monday."}
        """,
    )
    # tool names are unknown until the server runs: tool_choice and the calls are not checked against tools
    assert scenario.tools == ()
    assert scenario.tool_choice == "getTime"
    assert scenario.mcp == McpTools(
        command=("{python}", "-m", "conformance", "mcp-server"),
        args=("--verbose",),
        env={"CONFORMANCE_FIXED_NOW_MS": "1684800000000"},
        cwd="../server",
        timeout=2.5,
        select=("noop_24", "getTime"),
    )
    first, second = scenario.turns
    assert first.mcp_results is True
    assert first.tool_results == ()
    assert second.mcp_results is False
    assert [c.name for c in first.expect.tool_calls or ()] == ["getTime", "not_listed_yet"]


def test_mcp_defaults_and_scripted_results_with_mcp_tools(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: {mcp: {command: [my-server]}}
        turns:
          - user: "go"
            reply: {tool_calls: [{name: f, arguments: {}}]}
            tool_results: [{content: "scripted"}]
          - reply: {text: "ok"}
        """,
    )
    assert scenario.mcp == McpTools(command=("my-server",), args=(), env={}, cwd=None, timeout=120.0, select=None)
    assert scenario.turns[0].mcp_results is False
    assert scenario.turns[0].tool_results == (ToolResultSpec(call=0, content=(Text(text="scripted"),)),)


def test_tool_results_mcp_answers_every_call_of_its_turn(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: {mcp: {command: [my-server]}}
        turns:
          - user: "go"
            reply: {tool_calls: [{name: f, arguments: {}}, {name: g, arguments: {}}, {name: h, arguments: {}}]}
            tool_results: mcp
          - reply: {text: "ok"}
        """,
    )
    assert scenario.turns[0].mcp_results is True


@pytest.mark.parametrize(
    ("tools", "pointer", "phrase"),
    [
        ("{mcp: {command: []}}", "/tools/mcp/command", "the list is empty"),
        ("{mcp: {command: [x], timeout: 0}}", "/tools/mcp/timeout", "0 is out of range"),
        ("{mcp: {command: [x], select: []}}", "/tools/mcp/select", "the list is empty"),
        ("{mcp: {command: [x], select: [a, a]}}", "/tools/mcp/select", 'the list repeats "a"'),
        ("{mcp: {command: [x], env: {N: 1}}}", "/tools/mcp/env/N", "expected a string, got an integer"),
        ("{mcp: {command: x}}", "/tools/mcp/command", "expected a list, got a string"),
        ("{mpc: {command: [x]}}", "/tools/mpc", "unknown key 'mpc'"),
        ("getTime", "/tools", "a string does not fit here"),
    ],
)
def test_mcp_tools_value_problems(tmp_path: Path, tools: str, pointer: str, phrase: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load(tmp_path, f'tools: {tools}\nturns:\n  - user: "go"\n    reply: {{text: "ok"}}\n')
    assert any(p.pointer == pointer and phrase in p.message for p in caught.value.problems), caught.value


# --------------------------------------------------------------------------------------------
# issue 28: reasoning settings, cache breakpoints, redacted and interleaved reasoning, history
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "value", "derived"),
    [
        ("{effort: low}", ReasoningSettings(effort="low"), {"reasoning_effort"}),
        ("{budget_tokens: 2048}", ReasoningSettings(budget_tokens=2048), {"reasoning_budget"}),
        ("{enabled: false}", ReasoningSettings(enabled=False), {"reasoning_off"}),
        (
            "{enabled: true, effort: high, budget_tokens: 4000}",
            ReasoningSettings(effort="high", budget_tokens=4000),
            {"reasoning_effort", "reasoning_budget"},
        ),
    ],
)
def test_reasoning_settings_become_values_and_the_capabilities_they_need(
    tmp_path: Path, settings: str, value: ReasoningSettings, derived: set[str]
) -> None:
    scenario = load(
        tmp_path,
        f"""\
        reasoning: {settings}
        requires: [streaming]
        tools: []
        turns:
          - user: "Think."
            reply: {{text: "Done."}}
        """,
    )
    assert scenario.reasoning == value
    assert scenario.requires == frozenset({"streaming", *derived})


def test_cache_control_targets_are_kept_in_order_and_need_the_capability(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        system: "Be brief."
        cache_control: [system, messages, tools]
        tools: [{name: getTime}]
        turns:
          - user: "Time?"
            reply: {text: "Noon."}
        """,
    )
    assert scenario.cache_control == ("system", "messages", "tools")
    assert scenario.requires == frozenset({"cache_control"})


def test_a_scenario_without_the_new_keys_has_none_of_their_values(tmp_path: Path) -> None:
    scenario = load(tmp_path, 'tools: []\nturns:\n  - user: "Hi."\n    reply: {text: "Hello."}\n')
    assert (scenario.reasoning, scenario.cache_control, scenario.history, scenario.requires) == (
        None,
        (),
        (),
        frozenset(),
    )
    assert scenario.turns[0].expect.reasoning is None  # no reasoning played: not checked


def test_expected_reasoning_defaults_to_each_block_played_in_order(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: [{name: a}, {name: b}]
        turns:
          - user: "Go."
            reply:
              reasoning: "first the plan"
              tool_calls:
                - {name: a, arguments: {}}
                - {name: b, arguments: {}, reasoning: "now b"}
            tool_results: [{content: "1"}, {content: "2"}]
          - reply:
              reasoning: "hidden"
              reasoning_redacted: true
              text: "Done."
          - user: "Again?"
            reply:
              reasoning: "hidden"
              text: "No."
            expect:
              reasoning: [{redacted: true}, {text: "hidden"}]
        """,
    )
    first, second, third = scenario.turns
    assert first.reply.tool_calls[1].reasoning == "now b"
    assert first.reply.tool_calls[0].reasoning is None
    assert first.expect.reasoning == (ExpectedReasoning(text="first the plan"), ExpectedReasoning(text="now b"))
    assert second.reply.reasoning_redacted is True
    assert second.expect.reasoning == (ExpectedReasoning(text=None, redacted=True),)
    assert third.expect.reasoning == (ExpectedReasoning(text=None, redacted=True), ExpectedReasoning(text="hidden"))


def test_history_becomes_unified_messages(tmp_path: Path) -> None:
    scenario = load(
        tmp_path,
        """\
        tools: [{name: get_weather}]
        history:
          - {role: user, text: "Oslo?"}
          - role: assistant
            reasoning:
              - {text: "look it up", signature: "c2ln", source: anthropic}
              - {redacted: "ZGF0YQ=="}
            text: "Checking."
            tool_calls:
              - {id: toolu_1, name: get_weather, arguments: {city: Oslo}}
          - role: tool
            results:
              - {call_id: toolu_1, content: "-2°C", isError: false}
          - {role: assistant, text: "Cold."}
        turns:
          - user: "Bergen?"
            reply: {text: "Rain."}
        """,
    )
    assert scenario.history == (
        Message(role="user", parts=(Text(text="Oslo?"),)),
        Message(
            role="assistant",
            parts=(
                Reasoning(text="look it up", signature="c2ln", source="anthropic"),
                Reasoning(redacted="ZGF0YQ=="),
                Text(text="Checking."),
                ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Oslo"}, arguments_raw='{"city":"Oslo"}'),
            ),
        ),
        # the result names the call it answers: Gemini and Ollama key results by name
        Message(role="tool", parts=(ToolResult(call_id="toolu_1", content=(Text(text="-2°C"),), name="get_weather"),)),
        Message(role="assistant", parts=(Text(text="Cold."),)),
    )
    assert scenario.requires == frozenset()


def test_the_fingerprint_of_a_scenario_without_the_new_keys_is_what_its_cassettes_hold() -> None:
    """The new keys change the fingerprint only of scenarios that use them: a bundled scenario written
    before them still matches the ``scenario_sha256`` its cassettes were recorded with."""
    scenario = load_scenario(REPO / "scenarios" / "basic" / "get_time.yaml")
    recorded = yaml.safe_load((REPO / "cassettes" / "openai_chat" / "basic" / "get_time.yaml").read_text("utf-8"))
    assert recorded["provenance"]["scenario_sha256"] == scenario.fingerprint
