"""The tools the official MCP conformance suite's server scenarios call (``--profile conformance-suite``).

The suite is the npm package ``@modelcontextprotocol/conformance`` (pinned in
``examples/mcp_conformance/package.json``; ``scripts/mcp_conformance_suite.py`` runs it). Each of
its server scenarios connects over Streamable HTTP, calls one tool by a fixed name and checks the
answer; the names, arguments and answers below are the ones its scenario descriptions ask for
(``src/scenarios/server/tools.ts``, ``json-schema-2020-12.ts``, ``elicitation-defaults.ts`` and
``elicitation-enums.ts`` at tag ``v0.1.16``), with the texts of its reference server
(``examples/servers/typescript/everything-server.ts`` at the same tag), so that a check reads the
same answer from ours:

- ``test_simple_text``, ``test_image_content`` (a 1x1 PNG), ``test_audio_content`` (a WAV,
  ``audio/wav``), ``test_embedded_resource`` (``test://embedded-resource``, ``text/plain``),
  ``test_multiple_content_types`` (text, image, embedded JSON resource);
- ``test_tool_with_logging``: three ``notifications/message`` at ``info`` ("Tool execution started",
  "Tool processing data", "Tool execution completed"), 50 ms apart, at or above the level the
  client set with ``logging/setLevel``;
- ``test_error_handling``: an ``isError`` result carrying its message;
- ``test_tool_with_progress``: ``notifications/progress`` 0, 50 and 100 of 100, 50 ms apart, on the
  request's ``progressToken`` (none without one);
- ``test_sampling(prompt)``: asks the client ``sampling/createMessage`` and answers
  ``LLM response: <its text>``;
- ``test_elicitation(message)``, ``test_elicitation_sep1034_defaults`` (a default for each
  primitive type, SEP-1034), ``test_elicitation_sep1330_enums`` (the five enum forms, SEP-1330):
  ask the client ``elicitation/create`` with those schemas and report its answer;
- ``json_schema_2020_12_tool``: its ``inputSchema`` as listed keeps ``$schema`` (2020-12),
  ``$defs`` and ``additionalProperties: false`` (SEP-1613).

Three things the bundled server does not do by itself, done here by one middleware
(``_SuiteGate``, only under this profile): ``logging/setLevel`` is answered (``MCPServer`` has no
handler for it, so the suite's ``setLoggingLevel`` would get "Method not found") and the
``logging`` capability is declared in ``initialize`` (2025-11-25 server/utilities/logging: "Servers
that emit log message notifications MUST declare the logging capability"); and
``json_schema_2020_12_tool``'s ``inputSchema`` is listed as written, as the reference server's own
``tools/list`` handler does (the SDK would list the schema pydantic derives from the function).

The suite's client reads only the first page of ``tools/list`` (``client.listTools()``), so these
tools come first in the list, the JSON Schema tool first of all: the ``json-schema-2020-12``
scenario looks for it there.
"""

from __future__ import annotations

import base64
import json
import warnings
import weakref
from typing import Annotated, Any

import anyio
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    INVALID_PARAMS,
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, Field

from conformance.mcp_bridge import _fixtures

__all__ = [
    "JSON_SCHEMA_2020_12_INPUT_SCHEMA",
    "PROFILE",
    "TOOL_NAMES",
    "register",
]

PROFILE = "conformance-suite"
"""The ``conformance mcp-server --profile`` value that adds these tools."""

TOOL_NAMES = (
    "json_schema_2020_12_tool",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_error_handling",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
)
"""The tools ``register`` adds, in their order in ``tools/list``."""

JSON_SCHEMA_2020_12_INPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
"""``json_schema_2020_12_tool``'s ``inputSchema``, as the suite's scenario shows it (SEP-1613)."""

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, lowest first (2025-11-25 server/utilities/logging, "Log Levels")."""
_STEP_SECONDS = 0.05
"""The pause between two log or progress notifications (the suite's "~50ms")."""
_PNG_1X1 = _fixtures.png_bar_chart([1.0], bar_width=1, height=1)
_WAV = _fixtures.wav_silence(milliseconds=10)


class _Address(BaseModel):
    street: str | None = None
    city: str | None = None


class _SuiteGate:
    """Middleware: answers ``logging/setLevel`` (and declares ``logging``), remembers each session's
    level (keyed by its ``initialize`` params, the one object a connection keeps: the SDK builds a
    ``ServerSession`` per request), and lists ``json_schema_2020_12_tool`` with its 2020-12 schema."""

    def __init__(self) -> None:
        self.levels: dict[int, str] = {}
        """``id`` of a connection's ``initialize`` params (a pydantic model: not hashable) -> its level,
        dropped when the params are."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "logging/setLevel":
            level = (ctx.params or {}).get("level")
            if level not in _LOG_LEVELS:
                raise MCPError(INVALID_PARAMS, f"Invalid log level: {level!r} (one of {', '.join(_LOG_LEVELS)})")
            connection = ctx.session.client_params  # one per connection (a session is one per request)
            if connection is not None:
                if id(connection) not in self.levels:
                    weakref.finalize(connection, self.levels.pop, id(connection), None)
                self.levels[id(connection)] = str(level)
            return {}
        result = await call_next(ctx)
        if ctx.method not in ("initialize", "tools/list"):
            return result
        body = (
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if isinstance(result, BaseModel)
            else result
        )
        if not isinstance(body, dict):
            return result
        if ctx.method == "initialize":
            capabilities = body.get("capabilities")
            if isinstance(capabilities, dict):
                capabilities.setdefault("logging", {})
            return body
        for tool in body.get("tools", []):
            if isinstance(tool, dict) and tool.get("name") == "json_schema_2020_12_tool":
                tool["inputSchema"] = json.loads(json.dumps(JSON_SCHEMA_2020_12_INPUT_SCHEMA))
        return body

    def sends(self, connection: object, level: str) -> bool:
        """Whether a message at ``level`` goes to the client whose ``initialize`` params are
        ``connection`` (every level until it sets one)."""
        wanted = self.levels.get(id(connection), "debug") if connection is not None else "debug"
        return _LOG_LEVELS.index(level) >= _LOG_LEVELS.index(wanted)


def _elicited(action: str, content: object) -> str:
    return f"action={action}, content={json.dumps(content or {}, separators=(',', ':'))}"


def register(app: MCPServer) -> None:
    """Add the suite's tools to ``app`` (before the bundled ones: the suite reads one page) and the
    middleware they need. ``TOOL_NAMES`` lists them."""
    gate = _SuiteGate()
    app.middleware.append(gate)

    def add(fn: Any, name: str, description: str) -> None:
        app.add_tool(fn, name=name, description=description, structured_output=False)

    def json_schema_2020_12_tool(name: str | None = None, address: _Address | None = None) -> str:
        arguments: dict[str, Any] = {}
        if name is not None:
            arguments["name"] = name
        if address is not None:
            arguments["address"] = address.model_dump(exclude_none=True)
        return f"JSON Schema 2020-12 tool called with: {json.dumps(arguments, separators=(',', ':'))}"

    add(
        json_schema_2020_12_tool,
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    )

    def test_simple_text() -> str:
        return "This is a simple text response for testing."

    add(test_simple_text, "test_simple_text", "Tests simple text content response")

    def test_image_content() -> list[ContentBlock]:
        return [ImageContent(type="image", data=base64.b64encode(_PNG_1X1).decode(), mime_type="image/png")]

    add(test_image_content, "test_image_content", "Tests image content response")

    def test_audio_content() -> list[ContentBlock]:
        return [AudioContent(type="audio", data=base64.b64encode(_WAV).decode(), mime_type="audio/wav")]

    add(test_audio_content, "test_audio_content", "Tests audio content response")

    def test_embedded_resource() -> list[ContentBlock]:
        return [
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
                ),
            )
        ]

    add(test_embedded_resource, "test_embedded_resource", "Tests embedded resource content response")

    def test_multiple_content_types() -> list[ContentBlock]:
        return [
            TextContent(type="text", text="Multiple content types test:"),
            ImageContent(type="image", data=base64.b64encode(_PNG_1X1).decode(), mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
                ),
            ),
        ]

    add(
        test_multiple_content_types,
        "test_multiple_content_types",
        "Tests response with multiple content types (text, image, resource)",
    )

    async def test_tool_with_logging(ctx: Context) -> str:
        connection = ctx.session.client_params
        for i, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if i:
                await anyio.sleep(_STEP_SECONDS)
            if gate.sends(connection, "info"):
                with warnings.catch_warnings():  # logging is deprecated only from 2026-07-28 on (SEP-2577)
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await ctx.info(message)
        return "Tool with logging executed successfully"

    add(test_tool_with_logging, "test_tool_with_logging", "Tests tool that emits log messages during execution")

    def test_error_handling() -> str:
        raise ToolError("This tool intentionally returns an error for testing")

    add(test_error_handling, "test_error_handling", "Tests error response handling")

    async def test_tool_with_progress(ctx: Context) -> str:
        for i, progress in enumerate((0, 50, 100)):
            if i:
                await anyio.sleep(_STEP_SECONDS)
            await ctx.report_progress(progress, 100, f"Completed step {progress} of 100")
        meta = ctx.request_context.meta
        token = getattr(meta, "progress_token", None) if meta is not None else None
        return str(token if token is not None else 0)

    add(test_tool_with_progress, "test_tool_with_progress", "Tests tool that reports progress notifications")

    async def test_sampling(
        prompt: Annotated[str, Field(description="The prompt to send to the LLM")], ctx: Context
    ) -> str:
        with warnings.catch_warnings():  # sampling is deprecated only from 2026-07-28 on (SEP-2577)
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await ctx.session.create_message(
                [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
                max_tokens=100,
                related_request_id=ctx.request_id,
            )
        content = result.content
        text = content.text if isinstance(content, TextContent) else "No response"
        return f"LLM response: {text}"

    add(test_sampling, "test_sampling", "Tests server-initiated sampling (LLM completion request)")

    async def elicit(ctx: Context, message: str, schema: dict[str, Any]) -> tuple[str, object]:
        result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        return result.action, result.content

    async def test_elicitation(
        message: Annotated[str, Field(description="The message to show the user")], ctx: Context
    ) -> str:
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        action, content = await elicit(ctx, message, schema)
        return f"User response: {_elicited(action, content)}"

    add(test_elicitation, "test_elicitation", "Tests server-initiated elicitation (user input request)")

    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": True},
            },
            "required": [],
        }
        action, content = await elicit(ctx, "Please review and update the form fields with defaults", schema)
        return f"Elicitation completed: {_elicited(action, content)}"

    add(
        test_elicitation_sep1034_defaults,
        "test_elicitation_sep1034_defaults",
        "Tests elicitation with default values per SEP-1034",
    )

    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        titled = [{"const": f"value{i}", "title": title} for i, title in enumerate(("First", "Second", "Third"), 1)]
        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [{**t, "title": f"{t['title']} Option"} for t in titled],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": [{**t, "title": f"{t['title']} Choice"} for t in titled]},
                },
            },
            "required": [],
        }
        action, content = await elicit(ctx, "Please select options from the enum fields", schema)
        return f"Elicitation completed: {_elicited(action, content)}"

    add(
        test_elicitation_sep1330_enums,
        "test_elicitation_sep1330_enums",
        "Tests elicitation with enum schema improvements per SEP-1330",
    )
