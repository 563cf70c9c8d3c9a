"""Tests for ``conformance.mcp_bridge._fixtures_results``: each result-shape tool of the bundled
server answers ``tools/call`` with the one shape it stands for, as the MCP 2025-11-25 spec spells
the blocks (server/tools, "Tool Result"), and ``get_stock_quote``'s structured content fails its
own published ``outputSchema``, which the SDK's client refuses."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client

from conformance.mcp_bridge import _fixtures, _fixtures_results
from conformance.mcp_bridge._fixtures_results import ARTIFACT_BYTES, ARTIFACT_URI, STOCK_QUOTE, TOOL_NAMES
from conformance.mcp_bridge.server import build_server


def served(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """The server's ``tools/call`` result as wire JSON, before any client judges it."""

    async def main() -> dict[str, Any]:
        result = await build_server().call_tool(name, arguments or {})
        wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return wire

    wire = anyio.run(main)
    wire.pop("_meta", None)
    wire.pop("resultType", None)
    return wire


def called(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` through the SDK's client (after listing every page, so that the client knows
    each tool's ``outputSchema``), as wire JSON: how the bridge sees it."""

    async def main() -> dict[str, Any]:
        async with Client(build_server()) as client:
            cursor = None
            while True:
                page = await client.list_tools(cursor=cursor)
                cursor = page.next_cursor
                if cursor is None:
                    break
            result = await client.call_tool(name, arguments)
            wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return wire

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:  # the client's task group wraps what the body raised
        error: BaseException = group
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        raise error from None


def listed() -> dict[str, dict[str, Any]]:
    async def main() -> dict[str, dict[str, Any]]:
        tools = await build_server().list_tools()
        return {t.name: t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools}

    return anyio.run(main)


def test_every_tool_is_listed_in_order_before_the_padding() -> None:
    names = list(listed())
    assert names[names.index(TOOL_NAMES[0]) :][: len(TOOL_NAMES)] == list(TOOL_NAMES)
    assert names[-1] == "noop_24"


def test_structured_content_only_has_no_content_block_and_matches_its_schema() -> None:
    wire = served("get_air_quality", {"city": "Paris"})
    assert wire == {
        "content": [],
        "structuredContent": {"city": "Paris", "aqi": 42, "category": "good"},
        "isError": False,
    }
    schema = listed()["get_air_quality"]["outputSchema"]
    jsonschema.validate(wire["structuredContent"], schema)
    assert list(wire["structuredContent"]) == ["city", "aqi", "category"]  # the order the rule's JSON keeps


def test_an_unknown_city_is_a_tool_error() -> None:
    wire = called("get_air_quality", {"city": "Atlantis"})
    assert wire["isError"] is True
    assert "unknown city: 'Atlantis'; known cities: Paris, London, Tokyo" in wire["content"][0]["text"]


def test_a_tool_error_carries_its_message_as_text_and_its_details_as_structured_content() -> None:
    wire = served("reserve_table", {"restaurant": "Chez Marie", "time": "20:00", "party_size": 4})
    assert wire["isError"] is True
    assert wire["content"] == [
        {"type": "text", "text": "No table for 4 at 20:00 at Chez Marie; free times: 19:00, 21:30"}
    ]
    assert wire["structuredContent"] == {
        "error": "fully_booked",
        "restaurant": "Chez Marie",
        "time": "20:00",
        "free_times": ["19:00", "21:30"],
    }
    assert "outputSchema" not in listed()["reserve_table"]


def test_a_resource_link_names_the_file_with_its_type_and_size() -> None:
    wire = served("find_file", {"name": "clock.py"})
    content = _fixtures.FAKE_FILES["src/weather_app/clock.py"]
    assert wire["content"] == [
        {
            "type": "resource_link",
            "uri": "file:///repo/src/weather_app/clock.py",
            "name": "clock.py",
            "description": "src/weather_app/clock.py in the weather-app repository",
            "mimeType": "text/x-python",
            "size": len(content.encode()),
        }
    ]
    assert called("find_file", {"name": "nope.py"})["isError"] is True


def test_an_embedded_text_resource_holds_the_file() -> None:
    wire = served("open_file", {"path": "README.md"})
    assert wire["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "file:///repo/README.md",
                "mimeType": "text/markdown",
                "text": _fixtures.FAKE_FILES["README.md"],
            },
        }
    ]
    assert called("open_file", {"path": "missing.txt"})["isError"] is True


def test_an_embedded_blob_is_a_fixed_gzip_file() -> None:
    wire = served("download_artifact")
    [block] = wire["content"]
    assert block["type"] == "resource"
    assert block["resource"]["uri"] == ARTIFACT_URI
    assert block["resource"]["mimeType"] == "application/gzip"
    assert base64.b64decode(block["resource"]["blob"]) == ARTIFACT_BYTES
    assert len(ARTIFACT_BYTES) == 38  # the size scenarios/mcp/result_embedded_blob.yaml states
    assert gzip.decompress(ARTIFACT_BYTES) == b"weather_app 1.2.0\n"


def test_audio_alone_and_after_a_caption() -> None:
    wav = base64.b64encode(_fixtures.wav_silence()).decode()
    assert served("text_to_speech", {"text": "Good morning"})["content"] == [
        {"type": "audio", "data": wav, "mimeType": "audio/wav"}
    ]
    assert served("speak", {"text": "Good morning"})["content"] == [
        {"type": "text", "text": "Recorded 12 characters as audio/wav."},
        {"type": "audio", "data": wav, "mimeType": "audio/wav"},
    ]
    assert len(_fixtures.wav_silence()) == 444  # the size scenarios/mcp/result_*audio.yaml state


def test_the_stock_quote_breaks_its_own_output_schema() -> None:
    wire = served("get_stock_quote", {"symbol": "acme"})
    assert wire["isError"] is False
    assert wire["structuredContent"] == STOCK_QUOTE
    assert json.loads(wire["content"][0]["text"]) == STOCK_QUOTE
    schema = listed()["get_stock_quote"]["outputSchema"]
    assert schema["properties"]["price"]["type"] == "number"
    with pytest.raises(jsonschema.ValidationError, match=r"'187\.20' is not of type 'number'"):
        jsonschema.validate(wire["structuredContent"], schema)


def test_the_sdk_client_refuses_the_mismatching_result() -> None:
    # mcp ClientSession.validate_tool_result: "Clients SHOULD validate structured results against this schema"
    with pytest.raises(RuntimeError, match=r"^Invalid structured content returned by tool get_stock_quote: '187\.20'"):
        called("get_stock_quote", {"symbol": "ACME"})
    assert called("get_air_quality", {"city": "Paris"})["structuredContent"]["aqi"] == 42  # a valid one passes


def test_the_mime_type_follows_the_extension() -> None:
    assert _fixtures_results.mime_type("a/b.py") == "text/x-python"
    assert _fixtures_results.mime_type("web/src/api.ts") == "text/x-typescript"
    assert _fixtures_results.mime_type("README.md") == "text/markdown"
    assert _fixtures_results.mime_type("LICENSE") == "text/plain"
