"""Pure conversions between MCP wire shapes and the unified model (no I/O, no ``mcp`` import).

Everything here works on the JSON the MCP specification defines (camelCase keys: ``inputSchema``,
``isError``, ``mimeType``, ``nextCursor``), not on the SDK's pydantic models: the client edge dumps
an SDK result with ``model_dump(by_alias=True, mode="json", exclude_none=True)`` and hands the dict
over. That keeps this module testable from spec examples and immune to SDK renames (mcp 1.x used
camelCase attributes, 2.x snake_case).
Spec: https://modelcontextprotocol.io/specification/2025-11-25/server/tools

Two error channels stay apart (spec "Error Handling"):

- a **tool error**: a successful ``tools/call`` result with ``isError: true``; the model is meant to
  read it and recover. ``ToolResult.is_error`` is True and ``error_channel(result) == "tool"``.
- a **protocol error**: a JSON-RPC error response (unknown tool ``-32602``, malformed request,
  server failure). ``protocol_error_result`` turns it into a ``ToolResult`` with ``is_error`` True,
  a text saying it was a protocol error, and ``error_channel(result) == "protocol"``.

A third, ``"client"``, marks a result the MCP client refused (structured content that fails the
tool's ``outputSchema``, or a result shape the client cannot use).

MCP-only data rides in ``provider_details["mcp"]`` (``MCP_KEY``): tool ``icons``/``_meta``/
``execution``; result ``structuredContent`` (as ``structured_content``), ``_meta`` (as ``meta``);
per content block the keys the unified items have no field for (``annotations``, ``_meta``, a
resource link's ``name``/``title``/..., and under ``resource`` those of an embedded resource's
contents), in ``content_extras`` keyed by the block's index as a string. Nothing is dropped:
``tool_result_to_wire(tool_result_from_wire(w))`` gives ``w`` back, with ``isError`` spelled out
and without the 2026-07-28 envelope marker ``resultType: "complete"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Required, TypeAlias, TypedDict, cast

from conformance.errors import UnsupportedContentError, WireFormatError
from conformance.model import Audio, ContentItem, Image, Resource, Text, Tool, ToolResult

__all__ = [
    "ERROR_CHANNELS",
    "JSONRPC_ERROR_NAMES",
    "MCP_KEY",
    "ErrorChannel",
    "McpCallToolResultWire",
    "McpContentWire",
    "McpToolWire",
    "client_error_result",
    "content_from_wire",
    "content_to_wire",
    "error_channel",
    "protocol_error_result",
    "tool_from_wire",
    "tool_result_from_wire",
    "tool_result_to_wire",
    "tool_to_wire",
    "tools_page_from_wire",
]

MCP_KEY = "mcp"
"""The ``provider_details`` key under which MCP-only data rides."""

ErrorChannel: TypeAlias = Literal["tool", "protocol", "client"]
ERROR_CHANNELS: tuple[ErrorChannel, ...] = ("tool", "protocol", "client")

JSONRPC_ERROR_NAMES: Mapping[int, str] = {
    -32700: "parse error",
    -32600: "invalid request",
    -32601: "method not found",
    -32602: "invalid params",
    -32603: "internal error",
}
"""Standard JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object)."""


class McpToolWire(TypedDict, total=False):
    """A ``tools/list`` item (spec ``Tool``)."""

    name: Required[str]
    title: str
    description: str
    inputSchema: Required[dict[str, Any]]
    outputSchema: dict[str, Any]
    annotations: dict[str, Any]
    icons: list[dict[str, Any]]
    execution: dict[str, Any]
    _meta: dict[str, Any]


class McpContentWire(TypedDict, total=False):
    """One content block: ``text``, ``image``, ``audio``, ``resource`` or ``resource_link``."""

    type: Required[str]
    text: str
    data: str
    mimeType: str
    resource: dict[str, Any]
    uri: str
    name: str
    title: str
    description: str
    size: int
    icons: list[dict[str, Any]]
    annotations: dict[str, Any]
    _meta: dict[str, Any]


class McpCallToolResultWire(TypedDict):
    """A ``tools/call`` result (spec ``CallToolResult``)."""

    content: list[McpContentWire]
    isError: NotRequired[bool]
    structuredContent: NotRequired[Any]
    _meta: NotRequired[dict[str, Any]]


# The tool keys the unified Tool has a field for; any other key rides in provider_details.
_TOOL_FIELDS = frozenset({"name", "title", "description", "inputSchema", "outputSchema", "annotations"})
# Per block type, the keys the unified item carries; the rest go to content_extras.
_CONTENT_FIELDS: Mapping[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "image": frozenset({"type", "data", "mimeType"}),
    "audio": frozenset({"type", "data", "mimeType"}),
    "resource": frozenset({"type", "resource"}),
    "resource_link": frozenset({"type", "uri", "mimeType"}),
}
_RESOURCE_CONTENTS_FIELDS = frozenset({"uri", "mimeType", "text", "blob"})
_RESULT_KEYS = frozenset({"content", "isError", "structuredContent", "_meta"})
# Result envelope keys with no meaning for a completed call (2026-07-28 adds resultType "complete").
_IGNORED_RESULT_ITEMS = frozenset({("resultType", "complete")})


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def tool_from_wire(wire: Mapping[str, Any], *, where: str = "tool") -> Tool:
    """A ``tools/list`` item as a unified ``Tool``; MCP-only keys ride in ``provider_details["mcp"]``."""
    name = wire.get("name")
    if not isinstance(name, str) or not name:
        raise WireFormatError(f"{where}: an MCP tool needs a non-empty string `name`, got {name!r}")
    schema = wire.get("inputSchema", {"type": "object"})
    if not isinstance(schema, Mapping):
        raise WireFormatError(f"{where} ({name}): `inputSchema` must be an object, got {type(schema).__name__}")
    output_schema = wire.get("outputSchema")
    if output_schema is not None and not isinstance(output_schema, Mapping):
        raise WireFormatError(f"{where} ({name}): `outputSchema` must be an object")
    annotations = wire.get("annotations")
    if annotations is not None and not isinstance(annotations, Mapping):
        raise WireFormatError(f"{where} ({name}): `annotations` must be an object")
    extras = {k: v for k, v in wire.items() if k not in _TOOL_FIELDS}
    return Tool(
        name=name,
        description=_optional_str(wire, "description", where),
        input_schema=dict(schema),
        title=_optional_str(wire, "title", where),
        output_schema=dict(output_schema) if output_schema is not None else None,
        annotations=dict(annotations) if annotations is not None else None,
        provider_details={MCP_KEY: extras} if extras else {},
    )


def tool_to_wire(tool: Tool) -> McpToolWire:
    """A unified ``Tool`` as a ``tools/list`` item (the inverse of ``tool_from_wire``)."""
    wire: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        wire["title"] = tool.title
    if tool.description is not None:
        wire["description"] = tool.description
    wire["inputSchema"] = dict(tool.input_schema)
    if tool.output_schema is not None:
        wire["outputSchema"] = dict(tool.output_schema)
    if tool.annotations is not None:
        wire["annotations"] = dict(tool.annotations)
    wire.update(tool.provider_details.get(MCP_KEY, {}))
    return cast(McpToolWire, wire)


def tools_page_from_wire(wire: Mapping[str, Any], *, page: int = 0) -> tuple[tuple[Tool, ...], str | None]:
    """One ``tools/list`` result: its tools and its ``nextCursor`` (None on the last page)."""
    items = wire.get("tools")
    if not isinstance(items, list):
        raise WireFormatError(f"tools/list page {page}: `tools` must be an array, got {type(items).__name__}")
    cursor = wire.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise WireFormatError(f"tools/list page {page}: `nextCursor` must be a string, got {cursor!r}")
    tools = tuple(tool_from_wire(item, where=f"tools/list page {page} item {i}") for i, item in enumerate(items))
    return tools, cursor


# --------------------------------------------------------------------------------------------
# Content blocks
# --------------------------------------------------------------------------------------------


def content_from_wire(block: Mapping[str, Any], *, where: str = "content") -> ContentItem:
    """One MCP content block as a unified content item (extras are the caller's to keep)."""
    kind = block.get("type")
    if kind == "text":
        return Text(text=_required_str(block, "text", where))
    if kind == "image":
        return Image(media_type=_required_str(block, "mimeType", where), data=_required_str(block, "data", where))
    if kind == "audio":
        return Audio(media_type=_required_str(block, "mimeType", where), data=_required_str(block, "data", where))
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, Mapping):
            raise WireFormatError(f"{where}: an embedded resource needs a `resource` object")
        text = _optional_str(resource, "text", where)
        blob = _optional_str(resource, "blob", where)
        if (text is None) == (blob is None):
            raise WireFormatError(f"{where}: an embedded resource needs exactly one of `text` or `blob`")
        return Resource(
            uri=_required_str(resource, "uri", where),
            media_type=_optional_str(resource, "mimeType", where),
            text=text,
            blob=blob,
        )
    if kind == "resource_link":
        return Resource(uri=_required_str(block, "uri", where), media_type=_optional_str(block, "mimeType", where))
    raise UnsupportedContentError(
        f"{where}: MCP content block type {kind!r} is not supported; known types: {', '.join(_CONTENT_FIELDS)}"
    )


def content_to_wire(item: ContentItem, extras: Mapping[str, Any] | None = None) -> McpContentWire:
    """A unified content item as an MCP content block; ``extras`` are merged back in.

    A ``Resource`` with neither ``text`` nor ``blob`` is a ``resource_link`` (its ``name`` comes
    from ``extras``, else the URI). An image known only by URL has no MCP form.
    """
    more = dict(extras or {})
    wire: dict[str, Any]
    if isinstance(item, Text):
        wire = {"type": "text", "text": item.text}
    elif isinstance(item, Image):
        if item.data is None:
            raise UnsupportedContentError(
                f"an image given by URL ({item.url}) has no MCP form: MCP images carry base64 `data`"
            )
        wire = {"type": "image", "data": item.data, "mimeType": item.media_type}
    elif isinstance(item, Audio):
        wire = {"type": "audio", "data": item.data, "mimeType": item.media_type}
    elif item.text is None and item.blob is None:
        wire = {"type": "resource_link", "uri": item.uri, "name": more.pop("name", item.uri)}
        if item.media_type is not None:
            wire["mimeType"] = item.media_type
    else:
        resource: dict[str, Any] = {"uri": item.uri}
        if item.media_type is not None:
            resource["mimeType"] = item.media_type
        if item.text is not None:
            resource["text"] = item.text
        else:
            resource["blob"] = item.blob
        resource.update(more.pop("resource", {}))
        wire = {"type": "resource", "resource": resource}
    wire.update(more)
    return cast(McpContentWire, wire)


# --------------------------------------------------------------------------------------------
# Tool results and errors
# --------------------------------------------------------------------------------------------


def tool_result_from_wire(wire: Mapping[str, Any], *, call_id: str = "", name: str | None = None) -> ToolResult:
    """A ``tools/call`` result as a unified ``ToolResult`` (``isError`` -> the ``tool`` channel)."""
    where = f"tools/call {name}" if name else "tools/call"
    blocks = wire.get("content")
    if not isinstance(blocks, list):
        raise WireFormatError(f"{where}: result `content` must be an array, got {type(blocks).__name__}")
    is_error = wire.get("isError", False)
    if not isinstance(is_error, bool):
        raise WireFormatError(f"{where}: result `isError` must be a boolean, got {is_error!r}")
    content: list[ContentItem] = []
    content_extras: dict[str, Any] = {}
    for i, block in enumerate(blocks):
        block_where = f"{where} content[{i}]"
        if not isinstance(block, Mapping):
            raise WireFormatError(f"{block_where}: a content block must be an object")
        content.append(content_from_wire(block, where=block_where))
        known = _CONTENT_FIELDS[str(block["type"])]
        extra = {k: v for k, v in block.items() if k not in known}
        if block["type"] == "resource":  # the spec puts resource annotations inside `resource`
            inner = {k: v for k, v in block["resource"].items() if k not in _RESOURCE_CONTENTS_FIELDS}
            if inner:
                extra["resource"] = inner
        if extra:
            content_extras[str(i)] = extra
    mcp: dict[str, Any] = {}
    if is_error:
        mcp["error_channel"] = "tool"
    if "structuredContent" in wire:
        mcp["structured_content"] = wire["structuredContent"]
    if "_meta" in wire:
        mcp["meta"] = wire["_meta"]
    if content_extras:
        mcp["content_extras"] = content_extras
    other = {
        k: v
        for k, v in wire.items()
        if k not in _RESULT_KEYS and (k, v) not in _IGNORED_RESULT_ITEMS  # an odd resultType is kept
    }
    if other:
        mcp["extra"] = other
    return ToolResult(
        call_id=call_id,
        name=name,
        content=tuple(content),
        is_error=is_error,
        provider_details={MCP_KEY: mcp} if mcp else {},
    )


def tool_result_to_wire(result: ToolResult) -> McpCallToolResultWire:
    """A unified ``ToolResult`` as a ``tools/call`` result (the inverse of ``tool_result_from_wire``).

    A result from the ``protocol`` channel has no result form: it was a JSON-RPC error.
    """
    mcp = result.provider_details.get(MCP_KEY, {})
    if mcp.get("error_channel") == "protocol":
        raise UnsupportedContentError(
            f"tool result {result.call_id!r} came from a JSON-RPC error, not a tools/call result; "
            "build the error response from provider_details['mcp']['error'] instead"
        )
    extras = mcp.get("content_extras", {})
    wire: dict[str, Any] = dict(mcp.get("extra", {}))
    wire["content"] = [content_to_wire(item, extras.get(str(i))) for i, item in enumerate(result.content)]
    wire["isError"] = result.is_error
    if "structured_content" in mcp:
        wire["structuredContent"] = mcp["structured_content"]
    if "meta" in mcp:
        wire["_meta"] = mcp["meta"]
    return cast(McpCallToolResultWire, wire)


def protocol_error_result(
    *, code: int, message: str, data: Any = None, call_id: str = "", name: str | None = None
) -> ToolResult:
    """A JSON-RPC error answering ``tools/call``, as an ``is_error`` result on the ``protocol`` channel.

    The text names the channel and the code, so a model (or a reader of a report) can tell it
    from a tool's own error text.
    """
    label = JSONRPC_ERROR_NAMES.get(code, "server error" if -32099 <= code <= -32000 else "error")
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return ToolResult(
        call_id=call_id,
        name=name,
        content=(Text(text=f"MCP protocol error {code} ({label}): {message}"),),
        is_error=True,
        provider_details={MCP_KEY: {"error_channel": "protocol", "error": error}},
    )


def client_error_result(*, reason: str, call_id: str = "", name: str | None = None) -> ToolResult:
    """A result the MCP client refused (e.g. structured content failing ``outputSchema``)."""
    return ToolResult(
        call_id=call_id,
        name=name,
        content=(Text(text=f"MCP client rejected the tool result: {reason}"),),
        is_error=True,
        provider_details={MCP_KEY: {"error_channel": "client", "error": {"message": reason}}},
    )


def error_channel(result: ToolResult) -> ErrorChannel | None:
    """Which channel reported the failure (None for a successful result, or one not from MCP)."""
    channel = result.provider_details.get(MCP_KEY, {}).get("error_channel")
    return cast(ErrorChannel, channel) if channel in ERROR_CHANNELS else None


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _required_str(wire: Mapping[str, Any], key: str, where: str) -> str:
    value = wire.get(key)
    if not isinstance(value, str):
        raise WireFormatError(f"{where}: `{key}` must be a string, got {value!r}"[:300])
    return value


def _optional_str(wire: Mapping[str, Any], key: str, where: str) -> str | None:
    value = wire.get(key)
    if value is not None and not isinstance(value, str):
        raise WireFormatError(f"{where}: `{key}` must be a string, got {value!r}"[:300])
    return value
