"""What the LangChain drivers share: a streamed call ended with LangChain's own parse of its arguments, and an
MCP tool result as LangChain's MCP adapters hand it to a ``ToolMessage``.

Imported by ``langchain_openai_driver`` and ``langchain_anthropic_driver`` (each in its own virtualenv, both
with ``langchain_core``), beside ``_convert``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from _convert import StreamCalls
from langchain_core.messages import AIMessageChunk
from langchain_core.messages.content import create_file_block, create_image_block, create_text_block

from conformance.model import Audio, Image, Resource, StreamEvent, Text, ToolResult

__all__ = ["audio_gaps", "ends", "mcp_artifact", "mcp_blocks", "needs_mcp_mapping"]

_ADAPTERS = "langchain_mcp_adapters/tools.py, langchain-mcp-adapters 0.3.2 (cc0f2843)"
"""Where LangChain maps an MCP result (the package its docs name for MCP tools,
https://docs.langchain.com/oss/python/langchain/mcp; not installed beside the integration: mirrored here)."""


def needs_mcp_mapping(result: ToolResult) -> bool:
    """Does an MCP result carry more than text (a block of another type, or structured content)? Such a result
    reaches a LangChain user through the MCP adapters' mapping (``mcp_blocks``); a result of text alone is what a
    LangChain tool returning a string gives, and goes as the driver's plain text."""
    mcp = result.provider_details.get("mcp")
    structured = isinstance(mcp, dict) and "structured_content" in mcp
    return structured or any(not isinstance(item, Text) for item in result.content)


def mcp_blocks(result: ToolResult) -> list[dict[str, Any]]:
    """The ``ToolMessage`` content LangChain's MCP adapters build for an MCP result
    (``_convert_mcp_content_to_lc_block`` and ``_convert_call_tool_result``, tools.py:175-283 of
    ``_ADAPTERS``): each block as a standard content block
    (``create_text_block``, ``create_image_block``, ``create_file_block``), in order: text and embedded text as
    text; an image as a base64 image; a resource link as an image (``image/*``) or a file by url; an embedded blob
    as a base64 image or file. Audio is refused as the adapters refuse it ("AudioContent conversion to LangChain
    content blocks is not yet supported", tools.py:197-202: ``NotImplementedError``, which ends the agent's run).
    An ``isError`` result keeps its blocks (``_handle_mcp_tool_error``, tools.py:122-158: an empty one is the
    text "MCP tool returned an error with empty content.", tools.py:96)."""
    blocks: list[dict[str, Any]] = []
    for item in result.content:
        mime = item.media_type or None if isinstance(item, Image | Audio | Resource) else None
        if isinstance(item, Text):
            blocks.append(dict(create_text_block(text=item.text)))
        elif isinstance(item, Image) and item.data is not None:
            blocks.append(dict(create_image_block(base64=item.data, mime_type=item.media_type)))
        elif isinstance(item, Audio):
            raise NotImplementedError(
                "AudioContent conversion to LangChain content blocks is not yet supported. Received audio with mime"
                f" type: {item.media_type} (the MCP adapters' own words, {_ADAPTERS}:197-202)"
            )
        elif isinstance(item, Resource) and item.text is not None:
            blocks.append(dict(create_text_block(text=item.text)))
        elif isinstance(item, Resource) and item.blob is not None and mime and mime.startswith("image/"):
            blocks.append(dict(create_image_block(base64=item.blob, mime_type=mime)))
        elif isinstance(item, Resource) and item.blob is not None:
            blocks.append(dict(create_file_block(base64=item.blob, mime_type=mime)))
        elif isinstance(item, Resource) and mime and mime.startswith("image/"):
            blocks.append(dict(create_image_block(url=item.uri, mime_type=mime)))
        elif isinstance(item, Resource):
            blocks.append(dict(create_file_block(url=item.uri, mime_type=mime)))
        else:
            raise ValueError(f"an image given by URL ({item.url}) is no MCP content block")  # MCP images carry data
    if result.is_error and not blocks:
        blocks.append(dict(create_text_block(text="MCP tool returned an error with empty content.")))
    return blocks


def mcp_artifact(result: ToolResult) -> dict[str, Any] | None:
    """The ``ToolMessage`` artifact the MCP adapters keep: ``{"structured_content": ...}`` (``MCPToolArtifact``,
    tools.py:161-172, 276-283), for the application, never sent to the model; an ``isError`` result has none
    (tools.py:273-274 raise before it is read)."""
    mcp = result.provider_details.get("mcp")
    if result.is_error or not isinstance(mcp, dict) or "structured_content" not in mcp:
        return None
    return {"structured_content": mcp["structured_content"]}


def ends(calls: StreamCalls, gathered: AIMessageChunk | None) -> Iterator[StreamEvent]:
    """Each streamed call ended with LangChain's own parse of its merged arguments: the gathered message's
    ``tool_calls``/``invalid_tool_calls`` come from ``init_tool_calls`` over its merged ``tool_call_chunks``,
    one chunk at a time, so a message of that one chunk gives that call's verdict (messages/ai.py)."""
    for merged in gathered.tool_call_chunks if gathered is not None else ():
        one = AIMessageChunk(content="", tool_call_chunks=[merged])
        if one.tool_calls:
            yield from calls.end_parsed(merged.get("index") or 0, one.tool_calls[0]["args"])
        else:
            error = one.invalid_tool_calls[0].get("error") or "LangChain lists it in invalid_tool_calls"
            yield from calls.end_parsed(merged.get("index") or 0, None, error)


def audio_gaps(wire: str) -> dict[str, str]:
    """Known gaps: an MCP result with audio ends the turn before any request, as the MCP adapters document it."""
    reason = (
        "LangChain's MCP adapters do not convert MCP audio: 'AudioContent conversion to LangChain content blocks is"
        f" not yet supported' (NotImplementedError, {_ADAPTERS}:197-202), raised before any request"
    )
    return {f"{wire}:{check}@mcp/result_*audio": reason for check in ("client.typed_errors", "client.one_request")}
