"""Tests for ``conformance.scenarios.values``: the JSON path syntax of wire expectations
(docs/scenarios.md, "JSON paths": ``$`` then ``.key``, ``[N]``, ``["key"]`` or ``['key']`` steps)
and the constants the loader and the schema share."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.scenarios.values import (
    FAULT_KINDS,
    HTTP_FAULTS,
    MODES,
    STREAM_FAULTS,
    Scenario,
    json_path_get,
    parse_json_path,
)

# An OpenAI chat completions request body (platform.openai.com/docs/api-reference/chat/create).
BODY = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "请告诉我昨天的日期是什么时候?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "getTime",
                "parameters": {"type": "object", "properties": {"offset_ms": {"type": "number"}}},
            },
        }
    ],
    "tool_choice": "required",
    "stream_options": None,
    "x.with.dots": {"a b": 1, 'quo"te': 2},
}


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("$", ()),
        ("$.tools", ("tools",)),
        ("$.tools[0]", ("tools", 0)),
        ("$.tools[10].function.name", ("tools", 10, "function", "name")),
        ('$["x.with.dots"]', ("x.with.dots",)),
        ("$['x.with.dots']['a b']", ("x.with.dots", "a b")),
        ('$["x.with.dots"]["quo\\"te"]', ("x.with.dots", 'quo"te')),
        ('$["back\\\\slash"]', ("back\\slash",)),
        ("$.$ref", ("$ref",)),
        ("$.retry-after_ms", ("retry-after_ms",)),
        ("$.a.b.c", ("a", "b", "c")),
        ('$[""]', ("",)),
    ],
)
def test_parse_json_path(path: str, steps: tuple[str | int, ...]) -> None:
    assert parse_json_path(path) == steps


@pytest.mark.parametrize(
    ("path", "position"),
    [
        ("tools[0]", None),
        ("", None),
        (".tools", None),
        ("$..tools", 1),
        ("$.tools[-1]", 7),
        ("$.tools[*]", 7),
        ("$.tools[0", 7),
        ("$.0", 1),
        ("$.-a", 1),
        ("$[tools]", 1),
        ('$["open', 1),
        ("$.tools ", 7),
        ("$tools", 1),
    ],
)
def test_parse_json_path_rejects(path: str, position: int | None) -> None:
    with pytest.raises(ValueError) as caught:
        parse_json_path(path)
    message = str(caught.value)
    assert repr(path) in message
    if position is None:
        assert "must start with '$'" in message
    else:
        assert f"at character {position}" in message


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        ("$", True, BODY),
        ("$.tool_choice", True, "required"),
        ("$.tools[0].function.name", True, "getTime"),
        ("$.tools[0].function.parameters.properties.offset_ms", True, {"type": "number"}),
        ("$.messages[0].content", True, "请告诉我昨天的日期是什么时候?"),
        ("$.stream_options", True, None),  # present with a null value is present
        ('$["x.with.dots"]["a b"]', True, 1),
        ("$.x.with.dots", False, None),  # dots are steps, not part of the key
        ("$.parallel_tool_calls", False, None),
        ("$.tools[1]", False, None),
        ("$.tools.function", False, None),  # a key step into a list
        ("$.model[0]", False, None),  # an index step into a string
        ("$.tool_choice.name", False, None),
        ("$.stream_options.include_usage", False, None),
    ],
)
def test_json_path_get(path: str, found: bool, value: object) -> None:
    assert json_path_get(BODY, path) == (found, value)


def test_json_path_get_index_steps_need_a_list() -> None:
    assert json_path_get({"0": "zero"}, "$[0]") == (False, None)
    assert json_path_get({"0": "zero"}, '$["0"]') == (True, "zero")
    assert json_path_get([["a", "b"]], "$[0][1]") == (True, "b")


def test_json_path_get_raises_on_bad_syntax() -> None:
    with pytest.raises(ValueError, match="must start with"):
        json_path_get(BODY, "tools")


def test_fault_vocabulary() -> None:
    """The faults of the emulator contract: six answered instead of a response, three that break a stream."""
    assert set(FAULT_KINDS) == HTTP_FAULTS | STREAM_FAULTS
    assert not HTTP_FAULTS & STREAM_FAULTS
    assert sorted(STREAM_FAULTS) == ["disconnect", "error_event", "no_terminator"]
    assert len(FAULT_KINDS) == len(set(FAULT_KINDS)) == 9
    assert MODES == ("non_stream", "stream")


def test_wires_limits_the_wire_formats_a_scenario_runs_on() -> None:
    every = Scenario(id="x", path=Path("x.yaml"), behavior="b", source="s")
    assert every.wire_excluded("qwen", "openai_chat") is None
    one = dataclasses.replace(every, wires=("openai_responses",))
    assert one.wire_excluded("openai_responses", "openai_responses") is None
    assert one.wire_excluded("qwen", "openai_chat") == (
        "the scenario runs only on the openai_responses wire (wires:), where its provider shape exists;"
        " qwen speaks openai_chat"
    )
    two = dataclasses.replace(every, wires=("openai_chat", "gemini"))
    assert two.wire_excluded("hermes", "openai_chat") is None
    assert "only on the wires openai_chat, gemini (wires:)" in (two.wire_excluded("ollama", "ollama") or "")
