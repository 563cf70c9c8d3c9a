"""The bundled server's result-shape tools: one tool per kind of ``tools/call`` result (issue 31, point 2).

Each tool answers with one shape of MCP result, so that a scenario can follow it to the model on
every wire (``scenarios/mcp/result_*.yaml``; the rule each wire follows is docs/mcp.md, "What the
model receives"). Shapes and the spec text they rest on (MCP 2025-11-25, server/tools,
https://modelcontextprotocol.io/specification/2025-11-25/server/tools):

- ``get_air_quality(city)``: ``structuredContent`` only, no content block, with an ``outputSchema``
  ("Structured content is returned as a JSON object in the ``structuredContent`` field of a result";
  the text fallback is only a SHOULD). ``get_weather`` (server.py) is the other half: structured
  content with its serialized JSON as text.
- ``reserve_table(restaurant, time, party_size)``: a tool error (``isError: true``) whose content
  carries the message and whose ``structuredContent`` carries the details ("Tool Execution
  Errors").
- ``find_file(name)``: a ``resource_link`` only ("Resource Links": uri, name, description,
  mimeType, size).
- ``open_file(path)``: an embedded text resource ("Embedded Resources", ``TextResourceContents``).
- ``download_artifact()``: an embedded binary resource (``BlobResourceContents``, base64 ``blob``).
- ``text_to_speech(text)``: audio only ("Audio Content": base64 ``data``, ``mimeType``).
- ``speak(text)``: a text block, then audio.
- ``get_stock_quote(symbol)``: ``structuredContent`` that does NOT match the tool's ``outputSchema``
  (a price sent as a string where the schema says number). "Servers MUST provide structured
  results that conform to this schema. Clients SHOULD validate structured results against this
  schema": the SDK's client refuses it (``ClientSession.validate_tool_result`` raises
  ``RuntimeError("Invalid structured content returned by tool ...")``, mcp 2.x
  ``client/session.py``), which the bridge turns into an error result on the ``client`` channel.
  The SDK's own server would refuse to send it from a typed return value; a tool that returns a
  ``CallToolResult`` is checked by the server with pydantic's lax validation only
  (``FuncMetadata.convert_result``, ``mcpserver/utilities/func_metadata.py``), which turns the
  string "187.20" into a number for the check and sends the result as it was built: a server that
  validates loosely and publishes a strict schema, a real way for this defect to reach clients.

``register(app)`` adds the tools to the bundled server (``server.build_server``, which lets
``TOOL_NAMES`` through its tool gate). Every answer is deterministic.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Annotated, TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import Field

from conformance.mcp_bridge import _fixtures

__all__ = [
    "AIR_QUALITY",
    "ARTIFACT_BYTES",
    "ARTIFACT_URI",
    "FREE_TIMES",
    "STOCK_QUOTE",
    "TOOL_NAMES",
    "AirQuality",
    "StockQuote",
    "mime_type",
    "register",
]

TOOL_NAMES = (
    "get_air_quality",
    "reserve_table",
    "find_file",
    "open_file",
    "download_artifact",
    "text_to_speech",
    "speak",
    "get_stock_quote",
)
"""The tools ``register`` adds, in the order ``tools/list`` shows them."""

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
_REPO_URI = "file:///repo/"


class AirQuality(TypedDict):
    """``get_air_quality``'s structured result (its ``outputSchema``)."""

    city: str
    aqi: int
    category: str


AIR_QUALITY: Mapping[str, AirQuality] = {
    "paris": AirQuality(city="Paris", aqi=42, category="good"),
    "london": AirQuality(city="London", aqi=55, category="moderate"),
    "tokyo": AirQuality(city="Tokyo", aqi=38, category="good"),
}
"""Known cities (lower case) -> their air quality."""

FREE_TIMES = ("19:00", "21:30")
"""The times ``reserve_table`` offers instead: every table is taken at the time asked."""


class StockQuote(TypedDict):
    """``get_stock_quote``'s published ``outputSchema`` (``price`` is a number)."""

    symbol: str
    price: float
    currency: str


STOCK_QUOTE = {"symbol": "ACME", "price": "187.20", "currency": "USD"}
"""What ``get_stock_quote`` sends as ``structuredContent``: ``price`` is a string, which the
published schema (``"type": "number"``) refuses."""

ARTIFACT_URI = "file:///repo/dist/weather_app-1.2.0.tar.gz"
"""The uri of ``download_artifact``'s embedded blob."""

_MIME_TYPES = {".md": "text/markdown", ".py": "text/x-python", ".ts": "text/x-typescript"}


def mime_type(path: str) -> str:
    """The mime type the tools give a fake repository file (by its extension; text/plain otherwise)."""
    return next((m for ext, m in _MIME_TYPES.items() if path.endswith(ext)), "text/plain")


ARTIFACT_BYTES = (
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03+OM,\xc9H-\x8aO,(P0\xd43\xd23\xe0\x02\x006B\xae\x17\x12\x00\x00\x00"
)
"""``download_artifact``'s bytes: a gzip file of ``weather_app 1.2.0\\n`` (``gzip.compress(..., compresslevel=9,
mtime=0)``, written out so that no zlib version changes them), 38 bytes."""


def _repo_file(path: str) -> str:
    try:
        return _fixtures.FAKE_FILES[path]
    except KeyError:
        raise ToolError(f"no such file: {path!r}; files: {', '.join(sorted(_fixtures.FAKE_FILES))}") from None


def register(app: MCPServer) -> None:
    """Add the result-shape tools (``TOOL_NAMES``) to ``app``."""

    def get_air_quality(
        city: Annotated[str, Field(description="City name, e.g. Paris")],
    ) -> Annotated[CallToolResult, AirQuality]:
        quality = AIR_QUALITY.get(city.strip().lower())
        if quality is None:
            known = ", ".join(q["city"] for q in AIR_QUALITY.values())
            raise ToolError(f"unknown city: {city!r}; known cities: {known}")
        return CallToolResult(content=[], structured_content=dict(quality))

    app.add_tool(
        get_air_quality,
        name="get_air_quality",
        title="Air quality",
        description="Current air quality index (AQI) for a city, as structured data only.",
        annotations=_READ_ONLY,
    )

    def reserve_table(
        restaurant: Annotated[str, Field(description="Restaurant name")],
        time: Annotated[str, Field(description="Time of day, HH:MM")],
        party_size: Annotated[int, Field(ge=1, le=20, description="Number of guests")] = 2,
    ) -> CallToolResult:
        details = {"error": "fully_booked", "restaurant": restaurant, "time": time, "free_times": list(FREE_TIMES)}
        message = f"No table for {party_size} at {time} at {restaurant}; free times: {', '.join(FREE_TIMES)}"
        return CallToolResult(
            content=[TextContent(type="text", text=message)], structured_content=details, is_error=True
        )

    app.add_tool(
        reserve_table,
        name="reserve_table",
        description="Reserve a table at a restaurant.",
    )

    def find_file(name: Annotated[str, Field(description="File name, e.g. clock.py")]) -> CallToolResult:
        paths = sorted(p for p in _fixtures.FAKE_FILES if p.rsplit("/", 1)[-1] == name)
        if not paths:
            raise ToolError(f"no file named {name!r} in the repository")
        path = paths[0]
        link = ResourceLink(
            type="resource_link",
            uri=_REPO_URI + path,
            name=name,
            description=f"{path} in the weather-app repository",
            mime_type=mime_type(path),
            size=len(_fixtures.FAKE_FILES[path].encode()),
        )
        return CallToolResult(content=[link])

    app.add_tool(
        find_file,
        name="find_file",
        description="Find a repository file by name; answers with a link to it (the file is read on request).",
        annotations=_READ_ONLY,
    )

    def open_file(
        path: Annotated[str, Field(description="Repository-relative path, e.g. src/weather_app/clock.py")],
    ) -> CallToolResult:
        contents = TextResourceContents(uri=_REPO_URI + path, mime_type=mime_type(path), text=_repo_file(path))
        return CallToolResult(content=[EmbeddedResource(type="resource", resource=contents)])

    app.add_tool(
        open_file,
        name="open_file",
        description="A repository file, embedded as a resource.",
        annotations=_READ_ONLY,
    )

    def download_artifact() -> CallToolResult:
        contents = BlobResourceContents(
            uri=ARTIFACT_URI,
            mime_type="application/gzip",
            blob=base64.b64encode(ARTIFACT_BYTES).decode(),
        )
        return CallToolResult(content=[EmbeddedResource(type="resource", resource=contents)])

    app.add_tool(
        download_artifact,
        name="download_artifact",
        description="The latest release archive of weather-app, embedded as a binary resource.",
        annotations=_READ_ONLY,
    )

    def audio() -> AudioContent:
        return AudioContent(
            type="audio", data=base64.b64encode(_fixtures.wav_silence()).decode(), mime_type="audio/wav"
        )

    def text_to_speech(text: Annotated[str, Field(description="The text to read out")]) -> CallToolResult:
        return CallToolResult(content=[audio()])

    app.add_tool(
        text_to_speech,
        name="text_to_speech",
        description="The text read out, as a WAV recording.",
        annotations=_READ_ONLY,
    )

    def speak(text: Annotated[str, Field(description="The text to read out")]) -> CallToolResult:
        caption = TextContent(type="text", text=f"Recorded {len(text)} characters as audio/wav.")
        return CallToolResult(content=[caption, audio()])

    app.add_tool(
        speak,
        name="speak",
        description="The text read out, as a caption and a WAV recording.",
        annotations=_READ_ONLY,
    )

    def get_stock_quote(
        symbol: Annotated[str, Field(description="Ticker symbol, e.g. ACME")],
    ) -> Annotated[CallToolResult, StockQuote]:
        quote = {**STOCK_QUOTE, "symbol": symbol.upper()}
        text = TextContent(type="text", text=json.dumps(quote))
        return CallToolResult(content=[text], structured_content=quote)

    app.add_tool(
        get_stock_quote,
        name="get_stock_quote",
        description="The latest price of a stock.",
        annotations=_READ_ONLY,
    )
