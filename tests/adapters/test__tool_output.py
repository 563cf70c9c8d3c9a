"""The tool-result rule (``conformance.adapters._tool_output``) and every reference adapter applying it.

Results are spec-shaped: ``tools/call`` results as the MCP specification 2025-11-25 (server/tools,
"Tool Result") spells them, converted by the bridge (``_convert.tool_result_from_wire``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.adapters import adapter_names, get_adapter
from conformance.adapters._tool_output import (
    LINK_PREFIX,
    PLACEHOLDER_PREFIX,
    WIRE_CARRIES,
    block_kind,
    carried_kinds,
    left_out_note,
    model_view,
    placeholder_text,
    request_view,
    resource_link_text,
    structured_text,
)
from conformance.checks.tool_output import result_findings
from conformance.mcp_bridge._convert import tool_result_from_wire
from conformance.model import Audio, Image, Message, Request, Resource, Text, Tool, ToolCall, ToolResult
from conformance.verdicts import Finding

WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="  # a 44-byte WAV header
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=="
WEATHER = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}

RESULTS: dict[str, dict[str, Any]] = {  # spec 2025-11-25 server/tools examples, one per block type
    "text": {"content": [{"type": "text", "text": "Current weather in New York: 72°F"}], "isError": False},
    "structured_and_text": {
        "content": [{"type": "text", "text": json.dumps(WEATHER)}],
        "structuredContent": WEATHER,
    },
    "structured_only": {"content": [], "structuredContent": WEATHER},
    "resource_link": {
        "content": [
            {
                "type": "resource_link",
                "uri": "file:///project/src/main.rs",
                "name": "main.rs",
                "description": "Primary application entry point",
                "mimeType": "text/x-rust",
            }
        ]
    },
    "embedded_text": {
        "content": [
            {
                "type": "resource",
                "resource": {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust", "text": "fn main() {}"},
            }
        ]
    },
    "embedded_blob": {
        "content": [
            {
                "type": "resource",
                "resource": {"uri": "file:///a.bin", "mimeType": "application/octet-stream", "blob": "AAEC"},
            }
        ]
    },
    "image": {
        "content": [{"type": "text", "text": "a chart"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]
    },
    "audio": {
        "content": [{"type": "text", "text": "a sound"}, {"type": "audio", "data": WAV, "mimeType": "audio/wav"}]
    },
    "is_error": {
        "content": [{"type": "text", "text": "Invalid departure date: must be in the future."}],
        "isError": True,
    },
}


def _result(kind: str) -> ToolResult:
    return tool_result_from_wire(RESULTS[kind], call_id="call_1", name="get_weather")


def _conversation(result: ToolResult) -> Request:
    call = ToolCall(id="call_1", name="get_weather", arguments={}, arguments_raw="{}")
    return Request(
        model="m",
        tools=(Tool(name="get_weather", description="Weather", input_schema={"type": "object", "properties": {}}),),
        messages=(
            Message(role="user", parts=(Text(text="Weather?"),)),
            Message(role="assistant", parts=(call,)),
            Message(role="tool", parts=(result,)),
        ),
    )


def _defects(findings: list[Finding]) -> list[Finding]:
    """The findings that fail the check (a placeholder's note is kept as a ``note`` finding)."""
    return [f for f in findings if f.kind == "defect"]


# --------------------------------------------------------------------------------------------
# The rule
# --------------------------------------------------------------------------------------------


def test_structured_content_with_a_text_block_is_sent_once() -> None:
    result = _result("structured_and_text")
    assert model_view(result, carries={"text"}).items == result.content


def test_structured_content_alone_goes_first_as_its_compact_json() -> None:
    view = model_view(_result("structured_only"), carries={"text"})
    assert view.items == (Text(text='{"temperature":22.5,"conditions":"Partly cloudy","humidity":65}'),)
    assert structured_text({"é": [1, 2]}) == '{"é":[1,2]}'  # compact, non-ASCII kept
    assert view.notes == ()


def test_structured_content_goes_before_the_other_blocks() -> None:
    wire = {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}], "structuredContent": {"n": 1}}
    view = model_view(tool_result_from_wire(wire, call_id="c"), carries={"text", "image"})
    assert view.items == (Text(text='{"n":1}'), Image(media_type="image/png", data=PNG))


def test_a_resource_link_is_a_text_giving_the_link() -> None:
    view = model_view(_result("resource_link"), carries={"text"})
    link = {
        "uri": "file:///project/src/main.rs",
        "name": "main.rs",
        "description": "Primary application entry point",
        "mimeType": "text/x-rust",
    }
    assert view.items == (Text(text=LINK_PREFIX + json.dumps(link, separators=(",", ":"))),)
    assert view.notes == ()  # a link is given, not left out
    assert resource_link_text(Resource(uri="https://x/y")) == 'Resource link: {"uri":"https://x/y"}'


def test_an_embedded_text_resource_is_sent_as_it_is() -> None:
    result = _result("embedded_text")
    assert model_view(result, carries={"text"}).items == result.content


@pytest.mark.parametrize("kind", ["audio", "embedded_blob", "image"])
def test_a_block_the_slot_cannot_carry_is_a_placeholder_and_a_note(kind: str) -> None:
    result = _result(kind)
    index = len(result.content) - 1
    item = result.content[index]
    view = model_view(result, carries={"text"}, wire="openai_chat")
    assert view.items[index] == Text(text=placeholder_text(item))
    assert view.items[:index] == result.content[:index]
    assert view.notes == (left_out_note(result, index, item, "openai_chat"),)
    assert view.replaced == ((index, block_kind(item)),)
    assert f"tool result call_1 (get_weather) content[{index}]" in view.notes[0]


def test_the_placeholder_says_type_mime_type_uri_and_size() -> None:
    assert placeholder_text(Audio(media_type="audio/wav", data=WAV)) == (
        PLACEHOLDER_PREFIX + '{"type":"audio","mimeType":"audio/wav","size":44}'
    )
    blob = Resource(uri="file:///a.bin", media_type="application/octet-stream", blob="AAEC")
    assert placeholder_text(blob) == (
        PLACEHOLDER_PREFIX + '{"type":"resource","uri":"file:///a.bin","mimeType":"application/octet-stream","size":3}'
    )
    with pytest.raises(ValueError):
        placeholder_text(Text(text="x"))


@pytest.mark.parametrize("kind", ["audio", "image", "embedded_blob"])
def test_a_block_the_slot_carries_is_sent_as_it_is(kind: str) -> None:
    result = _result(kind)
    view = model_view(result, carries={"text", "image", "audio", "blob"})
    assert view.items == result.content and view.notes == ()


def test_request_view_keeps_a_request_without_anything_to_change() -> None:
    request = _conversation(_result("text"))
    assert request_view(request, carries={"text"}, wire="openai_chat") == (request, ())


def test_images_are_carried_only_with_the_capability() -> None:
    assert carried_kinds("anthropic", {"images_in_tool_results"}) == {"text", "image"}
    assert carried_kinds("anthropic", set()) == {"text"}
    assert carried_kinds("unknown_wire") == {"text"}


@pytest.mark.parametrize("name", adapter_names())
def test_each_reference_adapter_declares_what_its_slot_carries(name: str) -> None:
    adapter = get_adapter(name)
    assert carried_kinds(adapter.traffic_format, adapter.capabilities) == WIRE_CARRIES[adapter.traffic_format]


# --------------------------------------------------------------------------------------------
# Every reference adapter applies it: what it sends reads back as the view, notes included
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(RESULTS))
@pytest.mark.parametrize("name", adapter_names())
def test_every_adapter_sends_the_view_and_says_what_it_left_out(name: str, kind: str) -> None:
    adapter = get_adapter(name)
    carries = WIRE_CARRIES[adapter.traffic_format]
    request = _conversation(_result(kind))
    wire = adapter.request_to_wire(request)
    back = adapter.request_from_wire(wire.body, path=wire.path, tools=request.tools)
    [sent] = [p for m in back.messages for p in m.parts if isinstance(p, ToolResult)]
    view = model_view(_result(kind), carries=carries, wire=adapter.traffic_format)
    found = result_findings(_result(kind), sent, carries=carries, wire=adapter.traffic_format, notes=wire.notes)
    assert _defects(found) == []
    assert [f.message for f in found] == list(view.notes)  # each note shown with the case
    assert wire.notes == view.notes
    if kind == "audio" or kind == "embedded_blob":
        assert wire.notes and "sent as a text placeholder" in wire.notes[0]
    # wire -> unified -> wire: the read-back is already the view, so it goes out the same
    assert adapter.request_to_wire(back).body == wire.body


def test_audio_on_the_chat_wire_reaches_the_body_as_the_placeholder() -> None:
    result = _result("audio")
    wire = get_adapter("openai_chat").request_to_wire(_conversation(result))
    assert wire.body["messages"][-1]["content"] == [
        {"type": "text", "text": "a sound"},
        {"type": "text", "text": placeholder_text(result.content[1])},
    ]


def test_structured_only_on_each_native_wire_is_its_json() -> None:
    text = structured_text(WEATHER)
    bodies = {
        name: get_adapter(name).request_to_wire(_conversation(_result("structured_only"))).body
        for name in WIRE_CARRIES
        if name in adapter_names()
    }
    assert bodies["openai_chat"]["messages"][-1]["content"] == text
    assert bodies["openai_responses"]["input"][-1]["output"] == text
    assert bodies["anthropic"]["messages"][-1]["content"][0]["content"] == text
    assert bodies["gemini"]["contents"][-1]["parts"][0]["functionResponse"]["response"] == {"result": text}
    assert bodies["ollama"]["messages"][-1]["content"] == text


def test_an_image_is_a_block_on_the_wires_that_carry_it() -> None:
    result = _result("image")
    anthropic = get_adapter("anthropic").request_to_wire(_conversation(result))
    assert anthropic.body["messages"][-1]["content"][0]["content"][1]["type"] == "image"
    assert anthropic.notes == ()
    ollama = get_adapter("ollama").request_to_wire(_conversation(result))
    assert ollama.body["messages"][-1]["content"] == "a chart" + placeholder_text(result.content[1])
    assert ollama.notes == (left_out_note(result, 1, result.content[1], "ollama"),)
