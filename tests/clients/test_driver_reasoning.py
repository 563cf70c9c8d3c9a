"""What the official-SDK drivers hand their SDK for issue 28: the caller's reasoning settings as the SDK's own
parameters, cache breakpoints on the blocks the caller marked, reasoning sent back as the SDK returned it and
another wire's reasoning left out (docs/clients.md, "Reasoning and cache breakpoints").

Expected values are the SDKs' own parameter shapes: anthropic ``types/thinking_config_*_param.py``,
``output_config_param.py`` and ``cache_control_ephemeral_param.py``; openai ``types/shared/reasoning_effort.py``
and ``responses/response_create_params.py`` (``include``, ``store``); google-genai ``types.ThinkingConfig``;
ollama ``_types.py`` (``think``). An SDK that is not installed skips its tests; the end-to-end certification of
the same drivers over the bundled cassettes is ``test_sdk_drivers.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.clients.contract import Call
from conformance.model import Message, Reasoning, ReasoningSettings, Text, Tool, ToolCall, ToolResult

CLIENTS = Path(__file__).resolve().parents[2] / "examples" / "clients"
EPHEMERAL = {"type": "ephemeral"}
ANTHROPIC_SIG = "EqQBCkgIBRABGAIiQHrVq3vE0pXJ2m8y"
GEMINI_SIG = "CiQB0e2Kb9xR4tWq7mZ1vN3pL8sY2kD6"


def _driver(stem: str, sdk: str) -> ModuleType:
    pytest.importorskip(sdk)
    name = f"_issue28_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, CLIENTS / f"{stem}_driver.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _call(wire: str, *, messages: tuple[Message, ...] = (), **extra: Any) -> Call:
    user = Message(role="user", parts=(Text(text="Weather in Oslo?"),))
    return Call(wire=wire, base_url="http://127.0.0.1:9", api_key="k", model="m", messages=(user, *messages), **extra)


def _loop(reasoning: tuple[Reasoning, ...], **call: Any) -> tuple[Message, ...]:
    """An assistant turn (its reasoning, then a call) and the call's result."""
    assistant = Message(
        role="assistant",
        parts=(*reasoning, ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo"}, **call)),
    )
    return assistant, Message(role="tool", parts=(ToolResult(call_id="c1", content=(Text(text="-2°C"),)),))


# ---- anthropic --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (ReasoningSettings(enabled=False), {"thinking": {"type": "disabled"}}),
        (ReasoningSettings(budget_tokens=2048), {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        (ReasoningSettings(effort="low"), {"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}}),
    ],
)
def test_anthropic_reasoning_settings_are_the_sdks_thinking_and_output_config(
    settings: ReasoningSettings, expected: dict[str, Any]
) -> None:
    kwargs = _driver("anthropic", "anthropic")._kwargs(_call("anthropic", reasoning=settings))
    assert {k: kwargs[k] for k in ("thinking", "output_config") if k in kwargs} == expected


def test_anthropic_cache_breakpoints_stay_on_the_blocks_the_caller_marked() -> None:
    result = ToolResult(call_id="c1", content=(Text(text="-2°C"),), cache_control=EPHEMERAL)
    history = (
        Message(role="assistant", parts=(ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo"}),)),
        Message(role="tool", parts=(result,)),
    )
    call = _call(
        "anthropic",
        messages=history,
        system="Be brief.",
        system_cache_control=EPHEMERAL,
        tools=(Tool(name="get_weather", cache_control=EPHEMERAL),),
    )
    kwargs = _driver("anthropic", "anthropic")._kwargs(call)
    assert kwargs["system"] == [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]
    assert kwargs["tools"][0]["cache_control"] == EPHEMERAL
    assert kwargs["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "-2°C",
        "cache_control": EPHEMERAL,
    }


def test_anthropic_sends_its_own_thinking_back_in_order_and_leaves_another_wires_out() -> None:
    reasoning = (
        Reasoning(text="plan", signature=ANTHROPIC_SIG, source="anthropic"),
        Reasoning(redacted="opaque", source="anthropic"),
        Reasoning(text="gemini's", signature=GEMINI_SIG, source="gemini"),
    )
    kwargs = _driver("anthropic", "anthropic")._kwargs(_call("anthropic", messages=_loop(reasoning)))
    assert [b["type"] for b in kwargs["messages"][1]["content"]] == ["thinking", "redacted_thinking", "tool_use"]
    assert kwargs["messages"][1]["content"][0]["signature"] == ANTHROPIC_SIG


# ---- openai -----------------------------------------------------------------------------------


def test_openai_chat_sends_the_reasoning_fields_back_as_the_sdk_kept_them() -> None:
    details = [{"type": "reasoning.text", "text": "r", "signature": "S", "format": "anthropic-claude-v1", "index": 0}]
    own = Reasoning(
        text="r", source="openai_chat", provider_details={"fields": {"reasoning": "r", "reasoning_details": details}}
    )
    other = Reasoning(text="anthropic's", signature=ANTHROPIC_SIG, source="anthropic")
    kwargs = _driver("openai", "openai")._chat_kwargs(_call("openai_chat", messages=_loop((other, own))))
    assistant = kwargs["messages"][1]
    assert assistant["reasoning"] == "r" and assistant["reasoning_details"] == details
    assert "reasoning_content" not in assistant  # anthropic's reasoning is left out


def test_openai_chat_streamed_reasoning_details_merge_by_index() -> None:
    """OpenRouter streams one detail in pieces of one index, the signature on the last (the emulator's
    ``reasoning_details`` quirk, as recorded in ``reasoning/chat_reasoning_details``)."""
    merged: list[Any] = []
    merge = _driver("openai", "openai")._merge_details
    piece = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
    merge(merged, [piece | {"text": "Beach"}])
    merge(merged, [piece | {"text": " weather"}])
    merge(merged, [piece | {"signature": "S"}])
    assert merged == [piece | {"text": "Beach weather", "signature": "S"}]


@pytest.mark.parametrize(
    ("settings", "effort"),
    [(ReasoningSettings(enabled=False), "none"), (ReasoningSettings(effort="high"), "high")],
)
def test_openai_reasoning_effort_on_both_wires(settings: ReasoningSettings, effort: str) -> None:
    driver = _driver("openai", "openai")
    assert driver._chat_kwargs(_call("openai_chat", reasoning=settings))["reasoning_effort"] == effort
    responses = driver._responses_kwargs(_call("openai_responses", reasoning=settings))
    assert responses["reasoning"] == {"effort": effort}
    stateless = {"store": False, "include": ["reasoning.encrypted_content"]} if settings.enabled else {}
    assert {k: responses[k] for k in ("store", "include") if k in responses} == stateless


def test_openai_responses_reasoning_items_go_back_before_the_item_they_preceded() -> None:
    def item(n: int) -> Reasoning:
        raw = {"id": f"rs_{n}", "type": "reasoning", "summary": [], "encrypted_content": f"gAAA{n}"}
        return Reasoning(signature=f"gAAA{n}", source="openai_responses", provider_details={"item": raw})

    assistant = Message(
        role="assistant",
        parts=(
            item(1),
            ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo"}),
            item(2),
            ToolCall(id="c2", name="get_time", arguments={"city": "Oslo"}),
        ),
    )
    results = Message(role="tool", parts=(ToolResult(call_id="c1"), ToolResult(call_id="c2")))
    items = _driver("openai", "openai")._responses_input(_call("openai_responses", messages=(assistant, results)))
    assert [i.get("id") or i.get("call_id") or i.get("role") for i in items] == [
        "user",
        "rs_1",
        "c1",
        "rs_2",
        "c2",
        "c1",
        "c2",
    ]


# ---- google-genai -----------------------------------------------------------------------------


def test_gemini_signatures_go_back_on_their_parts_and_another_wires_reasoning_is_left_out() -> None:
    own_part = Reasoning(signature=GEMINI_SIG, source="gemini", provider_details={"thought": False})
    assistant = Message(
        role="assistant",
        parts=(
            Reasoning(text="plan", signature=GEMINI_SIG, source="gemini"),
            Reasoning(text="anthropic's", signature=ANTHROPIC_SIG, source="anthropic"),
            ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo"}),
            own_part,
        ),
    )
    contents = _driver("google_genai", "google.genai")._contents(_call("gemini", messages=(assistant,)))
    parts = contents[1].parts
    assert [(p.thought, p.text, p.function_call is not None) for p in parts] == [
        (True, "plan", False),
        (None, None, True),
        (None, "", False),  # the signature's own empty text part, not a thought
    ]
    assert parts[0].thought_signature == parts[2].thought_signature != None  # noqa: E711


def test_gemini_thinking_config() -> None:
    config = _driver("google_genai", "google.genai")._thinking
    off = config(_call("gemini", reasoning=ReasoningSettings(enabled=False)))
    assert (off.thinking_budget, off.include_thoughts) == (0, None)
    low = config(_call("gemini", reasoning=ReasoningSettings(effort="low", budget_tokens=512)))
    assert (low.include_thoughts, low.thinking_level.value, low.thinking_budget) == (True, "LOW", 512)


# ---- ollama -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "think"),
    [
        (ReasoningSettings(enabled=False), False),
        (ReasoningSettings(), True),
        (ReasoningSettings(effort="high"), "high"),
    ],
)
def test_ollama_think(settings: ReasoningSettings, think: object) -> None:
    assert _driver("ollama", "ollama")._kwargs(_call("ollama", reasoning=settings))["think"] == think


def test_ollama_sends_its_thinking_back_and_leaves_another_wires_out() -> None:
    reasoning = (Reasoning(text="hmm", source="ollama"), Reasoning(text="anthropic's", source="anthropic"))
    messages = _driver("ollama", "ollama")._messages(_call("ollama", messages=_loop(reasoning)))
    assert messages[1]["thinking"] == "hmm"
