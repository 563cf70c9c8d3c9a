"""Tests for ``conformance.mcp_bridge._convert``: MCP wire shapes <-> unified values.

Every input is a JSON example from the MCP specification 2025-11-25, server/tools
(https://modelcontextprotocol.io/specification/2025-11-25/server/tools: "Listing Tools",
"Tool Result", "Output Schema", "Error Handling"), or a variation on one that the text calls out.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.mcp_bridge._convert import (
    MCP_KEY,
    client_error_result,
    content_from_wire,
    content_to_wire,
    error_channel,
    protocol_error_result,
    tool_from_wire,
    tool_result_from_wire,
    tool_result_to_wire,
    tool_to_wire,
    tools_page_from_wire,
)
from conformance.model import Audio, Image, Resource, Text, Tool, ToolResult

# spec "Listing Tools", Response.result
LIST_RESULT: dict[str, Any] = {
    "tools": [
        {
            "name": "get_weather",
            "title": "Weather Information Provider",
            "description": "Get current weather information for a location",
            "inputSchema": {
                "type": "object",
                "properties": {"location": {"type": "string", "description": "City name or zip code"}},
                "required": ["location"],
            },
            "icons": [{"src": "https://example.com/weather-icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        }
    ],
    "nextCursor": "next-page-cursor",
}

# spec "Output Schema", example tool
OUTPUT_SCHEMA_TOOL: dict[str, Any] = {
    "name": "get_weather_data",
    "title": "Weather Data Retriever",
    "description": "Get current weather data for a location",
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name or zip code"}},
        "required": ["location"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "Temperature in celsius"},
            "conditions": {"type": "string", "description": "Weather conditions description"},
            "humidity": {"type": "number", "description": "Humidity percentage"},
        },
        "required": ["temperature", "conditions", "humidity"],
    },
}

# spec "Tool Result": one block of each type, as printed there
TEXT: dict[str, Any] = {"type": "text", "text": "Tool result text"}
IMAGE: dict[str, Any] = {
    "type": "image",
    "data": "base64-encoded-data",
    "mimeType": "image/png",
    "annotations": {"audience": ["user"], "priority": 0.9},
}
AUDIO: dict[str, Any] = {"type": "audio", "data": "base64-encoded-audio-data", "mimeType": "audio/wav"}
RESOURCE_LINK: dict[str, Any] = {
    "type": "resource_link",
    "uri": "file:///project/src/main.rs",
    "name": "main.rs",
    "description": "Primary application entry point",
    "mimeType": "text/x-rust",
}
EMBEDDED: dict[str, Any] = {
    "type": "resource",
    "resource": {
        "uri": "file:///project/src/main.rs",
        "mimeType": "text/x-rust",
        "text": 'fn main() {\n    println!("Hello world!");\n}',
        "annotations": {"audience": ["user", "assistant"], "priority": 0.7, "lastModified": "2025-05-03T14:30:00Z"},
    },
}


# ---------------------------------------------------------------------------------- tools


def test_a_listed_tool_keeps_every_field() -> None:
    tools, cursor = tools_page_from_wire(LIST_RESULT)
    assert cursor == "next-page-cursor"
    assert tools == (
        Tool(
            name="get_weather",
            title="Weather Information Provider",
            description="Get current weather information for a location",
            input_schema=LIST_RESULT["tools"][0]["inputSchema"],
            provider_details={MCP_KEY: {"icons": LIST_RESULT["tools"][0]["icons"]}},
        ),
    )


def test_output_schema_and_annotations_map_to_their_fields() -> None:
    wire = {**OUTPUT_SCHEMA_TOOL, "annotations": {"title": "Weather", "readOnlyHint": True, "openWorldHint": True}}
    tool = tool_from_wire(wire)
    assert tool.output_schema == OUTPUT_SCHEMA_TOOL["outputSchema"]
    assert tool.annotations == {"title": "Weather", "readOnlyHint": True, "openWorldHint": True}
    assert tool.provider_details == {}


def test_a_tool_without_input_schema_accepts_any_object() -> None:
    # spec: for tools with no parameters, `{"type": "object"}` accepts any object
    assert tool_from_wire({"name": "ping"}).input_schema == {"type": "object"}


@pytest.mark.parametrize("wire", [LIST_RESULT["tools"][0], OUTPUT_SCHEMA_TOOL])
def test_tools_round_trip(wire: dict[str, Any]) -> None:
    assert tool_to_wire(tool_from_wire(wire)) == wire


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"inputSchema": {"type": "object"}}, "non-empty string `name`"),
        ({"name": "x", "inputSchema": None}, "`inputSchema` must be an object"),
        ({"name": "x", "outputSchema": []}, "`outputSchema` must be an object"),
        ({"name": "x", "annotations": "ro"}, "`annotations` must be an object"),
        ({"name": "x", "description": 3}, "`description` must be a string"),
    ],
)
def test_malformed_tools_are_named(wire: dict[str, Any], message: str) -> None:
    with pytest.raises(WireFormatError, match=message):
        tool_from_wire(wire, where="tools/list page 0 item 3")


def test_a_last_page_has_no_cursor_and_a_bad_page_is_an_error() -> None:
    assert tools_page_from_wire({"tools": []}) == ((), None)
    with pytest.raises(WireFormatError, match="page 2: `tools` must be an array"):
        tools_page_from_wire({"tool": []}, page=2)
    with pytest.raises(WireFormatError, match="`nextCursor` must be a string"):
        tools_page_from_wire({"tools": [], "nextCursor": 7})


# ---------------------------------------------------------------------------------- content


def test_each_content_type_maps_to_its_item() -> None:
    assert content_from_wire(TEXT) == Text(text="Tool result text")
    assert content_from_wire(IMAGE) == Image(media_type="image/png", data="base64-encoded-data")
    assert content_from_wire(AUDIO) == Audio(media_type="audio/wav", data="base64-encoded-audio-data")
    assert content_from_wire(RESOURCE_LINK) == Resource(uri="file:///project/src/main.rs", media_type="text/x-rust")
    assert content_from_wire(EMBEDDED) == Resource(
        uri="file:///project/src/main.rs", media_type="text/x-rust", text=EMBEDDED["resource"]["text"]
    )
    blob = {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"}}
    assert content_from_wire(blob) == Resource(uri="file:///a.bin", blob="AAEC")


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "text"}, "`text` must be a string"),
        ({"type": "image", "data": "x"}, "`mimeType` must be a string"),
        ({"type": "resource", "resource": {"uri": "u"}}, "exactly one of `text` or `blob`"),
        ({"type": "resource", "resource": {"uri": "u", "text": "a", "blob": "b"}}, "exactly one of"),
        ({"type": "resource"}, "needs a `resource` object"),
        ({"type": "resource_link", "name": "n"}, "`uri` must be a string"),
    ],
)
def test_malformed_blocks_are_named(block: dict[str, Any], message: str) -> None:
    with pytest.raises(WireFormatError, match=message):
        content_from_wire(block, where="content[1]")


def test_an_unknown_block_type_is_unsupported_not_dropped() -> None:
    with pytest.raises(UnsupportedContentError, match=r"'video' is not supported; known types: text, image"):
        content_from_wire({"type": "video", "data": "x"})


def test_an_image_known_only_by_url_has_no_mcp_form() -> None:
    with pytest.raises(UnsupportedContentError, match="MCP images carry base64 `data`"):
        content_to_wire(Image(media_type="image/png", url="https://example.com/a.png"))


def test_a_resource_link_without_a_name_is_named_by_its_uri() -> None:
    assert content_to_wire(Resource(uri="file:///x.txt")) == {
        "type": "resource_link",
        "uri": "file:///x.txt",
        "name": "file:///x.txt",
    }


# ---------------------------------------------------------------------------------- results


def test_a_result_with_every_content_type_round_trips() -> None:
    wire = {"content": [TEXT, IMAGE, AUDIO, RESOURCE_LINK, EMBEDDED], "isError": False}
    result = tool_result_from_wire(copy.deepcopy(wire), call_id="call_1", name="demo")
    assert result.call_id == "call_1"
    assert result.name == "demo"
    assert [item.kind for item in result.content] == ["text", "image", "audio", "resource", "resource"]
    assert result.is_error is False
    assert error_channel(result) is None
    extras = result.provider_details[MCP_KEY]["content_extras"]
    assert extras == {
        "1": {"annotations": {"audience": ["user"], "priority": 0.9}},
        "3": {"name": "main.rs", "description": "Primary application entry point"},
        "4": {"resource": {"annotations": EMBEDDED["resource"]["annotations"]}},
    }
    assert tool_result_to_wire(result) == wire


def test_structured_content_and_meta_ride_along() -> None:
    # spec "Output Schema": example valid response
    wire = {
        "content": [{"type": "text", "text": '{"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}'}],
        "structuredContent": {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65},
        "_meta": {"trace": "abc"},
    }
    result = tool_result_from_wire(wire)
    assert result.provider_details[MCP_KEY] == {
        "structured_content": {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65},
        "meta": {"trace": "abc"},
    }
    assert tool_result_to_wire(result) == {**wire, "isError": False}


def test_is_error_is_the_tool_channel() -> None:
    # spec "Error Handling": example tool execution error (input validation)
    text = "Invalid departure date: must be in the future. Current date is 08/08/2025."
    result = tool_result_from_wire({"content": [{"type": "text", "text": text}], "isError": True})
    assert result.is_error is True
    assert result.content == (Text(text=text),)
    assert error_channel(result) == "tool"


def test_the_completed_result_marker_is_not_data_but_other_envelope_keys_are() -> None:
    plain = tool_result_from_wire({"content": [], "resultType": "complete"})
    assert plain.provider_details == {}
    odd = tool_result_from_wire({"content": [], "resultType": "input_required", "x-vendor": 1})
    assert odd.provider_details[MCP_KEY]["extra"] == {"resultType": "input_required", "x-vendor": 1}


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({}, "result `content` must be an array"),
        ({"content": [], "isError": "yes"}, "`isError` must be a boolean"),
        ({"content": ["text"]}, r"content\[0\]: a content block must be an object"),
    ],
)
def test_malformed_results_are_named(wire: dict[str, Any], message: str) -> None:
    with pytest.raises(WireFormatError, match=message):
        tool_result_from_wire(wire, name="getTime")


# ---------------------------------------------------------------------------------- error channels


def test_a_protocol_error_is_an_error_result_on_its_own_channel() -> None:
    # spec "Error Handling": example protocol error
    result = protocol_error_result(code=-32602, message="Unknown tool: invalid_tool_name", call_id="c9", name="x")
    assert result.is_error is True
    assert result.call_id == "c9"
    assert result.content == (Text(text="MCP protocol error -32602 (invalid params): Unknown tool: invalid_tool_name"),)
    assert error_channel(result) == "protocol"
    assert result.provider_details[MCP_KEY]["error"] == {"code": -32602, "message": "Unknown tool: invalid_tool_name"}


def test_protocol_error_labels_follow_json_rpc() -> None:
    # https://www.jsonrpc.org/specification#error_object
    def text(code: int) -> str:
        item = protocol_error_result(code=code, message="m", data={"k": 1}).content[0]
        assert isinstance(item, Text)
        return item.text

    assert text(-32601) == "MCP protocol error -32601 (method not found): m"
    assert text(-32603) == "MCP protocol error -32603 (internal error): m"
    assert text(-32050) == "MCP protocol error -32050 (server error): m"
    assert text(42) == "MCP protocol error 42 (error): m"
    assert protocol_error_result(code=1, message="m", data={"k": 1}).provider_details[MCP_KEY]["error"]["data"] == {
        "k": 1
    }


def test_a_protocol_error_has_no_result_form() -> None:
    with pytest.raises(UnsupportedContentError, match="came from a JSON-RPC error"):
        tool_result_to_wire(protocol_error_result(code=-32602, message="Unknown tool: x"))


def test_a_client_rejection_is_its_own_channel() -> None:
    result = client_error_result(reason="Invalid structured content returned by tool t", name="t")
    assert result.is_error is True
    assert error_channel(result) == "client"


def test_a_result_not_from_mcp_has_no_channel() -> None:
    assert error_channel(ToolResult(call_id="c", is_error=True)) is None
    assert error_channel(ToolResult(call_id="c", provider_details={MCP_KEY: {"error_channel": "x"}})) is None
