"""The bundled server's ``conformance-suite`` profile (``conformance.mcp_bridge._fixtures_suite``), in process.

Each test mirrors one server scenario of the official MCP conformance suite
(``@modelcontextprotocol/conformance`` 0.1.16, ``src/scenarios/server/*.ts`` at tag ``v0.1.16``):
the same tool, the same arguments, the same checks, through the SDK's in-memory ``mcp.Client`` over
the 2025-11-25 handshake the suite's client speaks (``mode="legacy"``). They run without Node; the
``mcp_conformance`` tier (tests/scripts/test_mcp_conformance_suite.py) runs the suite itself over
Streamable HTTP.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, MCPError, types
from mcp.client.context import ClientRequestContext

from conformance.mcp_bridge._fixtures_suite import JSON_SCHEMA_2020_12_INPUT_SCHEMA, PROFILE, TOOL_NAMES
from conformance.mcp_bridge.server import DEFAULT_PAGE_SIZE, PROFILES, build_server

T = TypeVar("T")


def run(body: Callable[[Client], Awaitable[T]], *, profile: str = PROFILE, **options: Any) -> T:
    """Run ``body`` against a fresh in-process server with the suite's profile."""

    async def main() -> T:
        async with Client(build_server(profile=profile), mode="legacy", **options) as client:
            return await body(client)

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:  # the client's task group wraps what the body raised
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


def call(name: str, arguments: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    async def body(client: Client) -> dict[str, Any]:
        result = await client.call_tool(name, arguments or {})
        wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return wire

    return run(body, **options)


def first_page(profile: str = PROFILE) -> list[dict[str, Any]]:
    """What the suite's ``client.listTools()`` reads: one page."""

    async def body(client: Client) -> list[dict[str, Any]]:
        result = await client.list_tools()
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in result.tools]

    return run(body, profile=profile)


# -- server-initialize, tools-list, json-schema-2020-12 ----------------------------------------------


def test_the_handshake_declares_tools_and_logging() -> None:
    """server-initialize connects; the server declares ``logging`` because it sends log messages
    (2025-11-25 server/utilities/logging: servers that emit them MUST declare it)."""

    async def body(client: Client) -> dict[str, Any]:
        caps = client.session.server_capabilities  # type: ignore[union-attr]
        assert caps is not None
        dumped: dict[str, Any] = caps.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    capabilities = run(body)
    assert "tools" in capabilities and capabilities["logging"] == {}


def test_the_suites_tools_come_first_on_the_first_page_with_name_description_and_schema() -> None:
    page = first_page()
    assert len(page) == DEFAULT_PAGE_SIZE  # the list is still paged: the suite reads this page only
    assert [tool["name"] for tool in page] == list(TOOL_NAMES[:DEFAULT_PAGE_SIZE])
    for tool in page:  # tools-list: name, description, inputSchema for each
        assert tool["name"] and tool["description"] and tool["inputSchema"]["type"] == "object"


def test_the_json_schema_tool_keeps_its_2020_12_keywords() -> None:
    """json-schema-2020-12 (SEP-1613): $schema, $defs.address and additionalProperties false as listed."""
    [tool] = [t for t in first_page() if t["name"] == "json_schema_2020_12_tool"]
    schema = tool["inputSchema"]
    assert schema == JSON_SCHEMA_2020_12_INPUT_SCHEMA
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "address" in schema["$defs"] and schema["additionalProperties"] is False
    wire = call("json_schema_2020_12_tool", {"name": "Ada", "address": {"city": "Paris"}})
    assert wire["content"] == [
        {"type": "text", "text": 'JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"Paris"}}'}
    ]


def test_the_default_profile_is_unchanged() -> None:
    assert PROFILES == ("default", "conformance-suite")
    names = [tool["name"] for tool in first_page("default")]
    assert not set(names) & set(TOOL_NAMES)
    assert names[0] == "getTime"
    with pytest.raises(MCPError, match="Unknown tool: test_simple_text"):  # not there by default
        call("test_simple_text", profile="default")
    with pytest.raises(ValueError, match="profile must be one of default, conformance-suite"):
        build_server(profile="everything")


# -- tools-call-* -----------------------------------------------------------------------------------


def test_simple_text() -> None:
    assert call("test_simple_text")["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]


def test_image_and_audio_content() -> None:
    """tools-call-image: data and mimeType; tools-call-audio: mimeType exactly audio/wav."""
    [image] = call("test_image_content")["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    [audio] = call("test_audio_content")["content"]
    assert audio["type"] == "audio" and audio["mimeType"] == "audio/wav"
    wav = base64.b64decode(audio["data"])
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"


def test_embedded_resource_and_mixed_content() -> None:
    [block] = call("test_embedded_resource")["content"]
    assert block == {
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    }
    content = call("test_multiple_content_types")["content"]
    assert [b["type"] for b in content] == ["text", "image", "resource"]
    assert json.loads(content[2]["resource"]["text"]) == {"test": "data", "value": 123}


def test_error_handling_is_an_is_error_result_with_its_message() -> None:
    """tools-call-error: ``isError`` and a text first block (the SDK's ToolError text names the tool)."""
    wire = call("test_error_handling")
    assert wire["isError"] is True
    message = "Error executing tool test_error_handling: This tool intentionally returns an error for testing"
    assert wire["content"] == [{"type": "text", "text": message}]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # logging: from 2026-07-28 on
def test_logging_sends_three_info_messages_at_the_level_set() -> None:
    """tools-call-with-logging: setLevel debug, then at least 3 notifications/message during the call;
    logging-set-level: the request is answered. A level above info silences them."""

    def logs(level: types.LoggingLevel) -> list[Any]:
        received: list[Any] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            received.append((params.level, params.data))

        async def body(client: Client) -> None:
            await client.set_logging_level(level)
            await client.call_tool("test_tool_with_logging", {})

        run(body, logging_callback=on_log)
        return received

    assert logs("debug") == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]
    assert logs("warning") == []


def test_progress_is_reported_0_50_100_of_100() -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async def body(client: Client) -> dict[str, Any]:
        result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return wire

    wire = run(body)
    assert [(p, t) for p, t, _ in updates] == [(0, 100), (50, 100), (100, 100)]
    assert updates[1][2] == "Completed step 50 of 100"
    assert wire["content"][0]["type"] == "text"


def test_sampling_asks_the_client_and_answers_with_its_text() -> None:
    asked: list[types.CreateMessageRequestParams] = []

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="This is a test response from the client"),
            model="test-model",
            stop_reason="endTurn",
        )

    wire = call("test_sampling", {"prompt": "Test prompt for sampling"}, sampling_callback=sample)
    [params] = asked
    assert params.max_tokens == 100
    assert params.messages[0].content == types.TextContent(type="text", text="Test prompt for sampling")
    assert wire["content"] == [{"type": "text", "text": "LLM response: This is a test response from the client"}]


def elicited(tool: str, arguments: dict[str, Any], answer: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``requestedSchema`` the tool sends, and its text once the client accepts ``answer``."""
    schemas: list[dict[str, Any]] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        schemas.append(params.requested_schema)
        return types.ElicitResult(action="accept", content=answer)

    wire = call(tool, arguments, elicitation_callback=elicit)
    [schema] = schemas
    [block] = wire["content"]
    return schema, block["text"]


def test_elicitation_asks_the_client_for_username_and_email() -> None:
    schema, text = elicited(
        "test_elicitation",
        {"message": "Please provide your information"},
        {"username": "testuser", "email": "test@example.com"},
    )
    assert schema["required"] == ["username", "email"]
    assert text == 'User response: action=accept, content={"username":"testuser","email":"test@example.com"}'


def test_elicitation_sep1034_has_a_default_for_each_primitive_type() -> None:
    schema, text = elicited("test_elicitation_sep1034_defaults", {}, {"name": "Jane Smith", "age": 25})
    props = schema["properties"]
    assert (props["name"]["type"], props["name"]["default"]) == ("string", "John Doe")
    assert (props["age"]["type"], props["age"]["default"]) == ("integer", 30)
    assert (props["score"]["type"], props["score"]["default"]) == ("number", 95.5)
    assert props["status"]["default"] == "active" and props["status"]["default"] in props["status"]["enum"]
    assert (props["verified"]["type"], props["verified"]["default"]) == ("boolean", True)
    assert text.startswith("Elicitation completed: action=accept, content=")


def test_elicitation_sep1330_has_the_five_enum_forms() -> None:
    schema, _ = elicited("test_elicitation_sep1330_enums", {}, {"untitledSingle": "option1"})
    props = schema["properties"]
    untitled = props["untitledSingle"]
    assert untitled["type"] == "string" and untitled["enum"] and "oneOf" not in untitled and "enumNames" not in untitled
    titled = props["titledSingle"]
    assert "enum" not in titled and all(
        isinstance(o["const"], str) and isinstance(o["title"], str) for o in titled["oneOf"]
    )
    legacy = props["legacyEnum"]
    assert len(legacy["enumNames"]) == len(legacy["enum"]) == 3
    assert props["untitledMulti"]["type"] == "array" and props["untitledMulti"]["items"]["enum"]
    multi = props["titledMulti"]["items"]["anyOf"]
    assert props["titledMulti"]["type"] == "array" and all({"const", "title"} <= set(o) for o in multi)
