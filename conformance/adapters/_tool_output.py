"""What the model receives for a tool result: the one rule every adapter applies (issue 31, point 2).

Pure functions over ``conformance.model.ToolResult``; no I/O. Each adapter turns every tool result of
a request into the rule's view (``request_view``) before it writes the wire, and adds the view's
notes to ``WireRequest.notes``; ``translation.tool_result_content`` (``conformance.checks.tool_output``)
checks that what a request carries, read back by the adapter, is that view. docs/mcp.md ("What the
model receives") states the rule with the table ``WIRE_CARRIES`` drives.

The rule rests on the MCP specification 2025-11-25, server/tools
(https://modelcontextprotocol.io/specification/2025-11-25/server/tools, "Structured Content"):
"For backwards compatibility, a tool that returns structured content SHOULD also return the
serialized JSON in a TextContent block"; and "Tool Execution Errors" are reported in the result
(``isError: true``) with the message in its content.

1. The model receives the result's content blocks, in order.
2. ``structuredContent`` (``provider_details["mcp"]["structured_content"]``): when the content has a
   ``text`` block, nothing more is sent (that text is its serialized JSON, per the spec: not sent
   twice). When it has none, one text block holding the compact JSON
   (``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, ``structured_text``) goes first.
3. Text blocks and embedded text resources: their text. ``isError`` travels as each wire does
   today (Anthropic ``is_error``, Gemini ``response.error``, an ``Error: `` prefix elsewhere).
4. A ``resource_link`` becomes one text block giving the link (``resource_link_text``): the model
   can ask for the resource by its uri.
5. A block the wire's tool-result slot cannot carry (``WIRE_CARRIES``) becomes a text placeholder
   saying what was left out (``placeholder_text``: type, mime type, uri, size), and the request's
   notes get one line naming the result and the block (``left_out_note``): never dropped silently,
   never raised.

What each wire's tool-result slot carries, and the source of each fact (``WIRE_CARRIES``):

- ``openai_chat``: text only. ``ChatCompletionToolMessageParam.content`` is
  ``str | Iterable[ChatCompletionContentPartTextParam]`` (openai 3.57.0,
  ``types/chat/chat_completion_tool_message_param.py``); wire-formats.md §1b.
- ``openai_responses``: text and images. ``FunctionCallOutput.output`` is a string or a list of
  ``input_text`` / ``input_image`` / ``input_file`` (``types/responses/response_input_item_param.py``,
  ``response_function_call_output_item_param.py``; wire-formats.md §2b). ``input_file`` could carry
  an embedded blob (a file by ``file_data``), but it has no field for the resource's uri, so the
  read-back could not tell the block: blobs take a placeholder. No audio type.
- ``anthropic``: text and images. ``ToolResultBlockParam.content`` is ``str`` or text, image,
  search_result, document, tool_reference and browser_state blocks (anthropic 2.14.0,
  ``types/tool_result_block_param.py``). ``DocumentBlockParam`` takes PDFs and plain text, not
  an arbitrary blob, and no audio type exists: blobs and audio take a placeholder.
- ``gemini``: text (``functionResponse.response``) and images (``functionResponse.parts[].inlineData``,
  ``FunctionResponsePart``; google-genai 3.6.1 ``types.py``; wire-formats.md §4b). ``FunctionResponseBlob``
  takes "the IANA standard MIME type of the source data", but the sources here document images
  only in a function response (wire-formats.md §4b: "Images in tool results", model support per
  version unverified); audio and other blobs there are not documented, so they take a placeholder.
- ``ollama``: text only. ``Message.content`` is a string; ``Message.images`` exists, but its use
  in a ``tool`` message is template-dependent (ollama 0.6.3 ``_types.py``; wire-formats.md §8).
- prompt formats (``qwen``, ``hermes``, ``function_call``): text only (the result is written into
  the prompt text).

An image is carried only where the adapter also declares ``images_in_tool_results``
(``carried_kinds``): an adapter that does not, takes the placeholder on any wire.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from conformance.model import Audio, ContentItem, Image, Message, Request, Resource, Text, ToolResult

__all__ = [
    "KINDS",
    "LINK_PREFIX",
    "PLACEHOLDER_PREFIX",
    "WIRE_CARRIES",
    "ModelView",
    "block_kind",
    "carried_kinds",
    "left_out_note",
    "model_view",
    "placeholder_text",
    "request_view",
    "resource_link_text",
    "structured_text",
]

KINDS = ("text", "image", "audio", "blob")
"""The block kinds a tool-result slot may carry: ``text`` (text blocks, embedded text resources and
every text the rule makes), ``image``, ``audio`` and ``blob`` (an embedded binary resource)."""

WIRE_CARRIES: Mapping[str, frozenset[str]] = {
    "openai_chat": frozenset({"text"}),
    "openai_responses": frozenset({"text", "image"}),
    "anthropic": frozenset({"text", "image"}),
    "gemini": frozenset({"text", "image"}),
    "ollama": frozenset({"text"}),
    "qwen": frozenset({"text"}),
    "hermes": frozenset({"text"}),
    "function_call": frozenset({"text"}),
}
"""Traffic format (a wire format, or a prompt format) -> what its tool-result slot carries (sources in
the module docstring). A format not listed carries text only."""

LINK_PREFIX = "Resource link: "
"""The start of ``resource_link_text``."""

PLACEHOLDER_PREFIX = "Content left out (this API's tool results cannot carry it): "
"""The start of ``placeholder_text``."""


@dataclass(frozen=True, kw_only=True)
class ModelView:
    """A tool result as the model receives it on one wire."""

    items: tuple[ContentItem, ...]
    """The content sent, in order: text (and embedded text resources), and the media the wire carries."""
    notes: tuple[str, ...] = ()
    """One line per block replaced by a placeholder (``left_out_note``)."""
    replaced: tuple[tuple[int, str], ...] = ()
    """``(index in the result's content, kind)`` of each block replaced by a placeholder."""


def carried_kinds(traffic_format: str, capabilities: Collection[str] = ("images_in_tool_results",)) -> frozenset[str]:
    """What the tool-result slot of ``traffic_format`` carries for an adapter with ``capabilities``:
    ``WIRE_CARRIES``, without ``image`` unless the adapter declares ``images_in_tool_results``."""
    kinds = WIRE_CARRIES.get(traffic_format, frozenset({"text"}))
    return kinds if "images_in_tool_results" in capabilities else kinds - {"image"}


def block_kind(item: ContentItem) -> str:
    """``text``, ``image``, ``audio``, ``blob`` (embedded binary resource) or ``resource_link``."""
    if isinstance(item, Resource):
        if item.text is not None:
            return "text"
        return "blob" if item.blob is not None else "resource_link"
    return item.kind


def structured_text(value: Any) -> str:
    """``structuredContent`` as the text the rule sends when the content has no text block: compact
    JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def resource_link_text(item: Resource, extras: Mapping[str, Any] | None = None) -> str:
    """A ``resource_link`` block as text: ``Resource link: `` and the compact JSON of its fields, in this
    order where present: ``uri``, ``name``, ``title``, ``description``, ``mimeType``, ``size``
    (``extras`` are the block's keys the unified ``Resource`` has no field for: ``name``...,
    ``provider_details["mcp"]["content_extras"][<index>]``)."""
    extras = extras or {}
    link: dict[str, Any] = {"uri": item.uri}
    for key in ("name", "title", "description"):
        if isinstance(extras.get(key), str):
            link[key] = extras[key]
    if item.media_type is not None:
        link["mimeType"] = item.media_type
    if isinstance(extras.get("size"), int):
        link["size"] = extras["size"]
    return LINK_PREFIX + structured_text(link)


def placeholder_text(item: ContentItem) -> str:
    """The text sent in place of a block the wire cannot carry: ``PLACEHOLDER_PREFIX`` and the compact
    JSON of its ``type`` (the MCP block type), ``uri`` (resources), ``mimeType`` and ``size`` (decoded
    bytes of its base64 data)."""
    shown: dict[str, Any]
    if isinstance(item, Resource):
        shown = {"type": "resource", "uri": item.uri}
        data = item.blob
    elif isinstance(item, Image | Audio):
        shown = {"type": item.kind}
        data = item.data
        if isinstance(item, Image) and item.url is not None:
            shown["url"] = item.url
    else:  # text is always carried
        raise ValueError("text needs no placeholder")
    if item.media_type:
        shown["mimeType"] = item.media_type
    if data is not None:
        shown["size"] = _decoded_size(data)
    return PLACEHOLDER_PREFIX + structured_text(shown)


def left_out_note(result: ToolResult, index: int, item: ContentItem, wire: str) -> str:
    """The request note for a block replaced by its placeholder: names the result, the block and why."""
    kind = block_kind(item)
    what = "an embedded binary resource" if kind == "blob" else kind
    media_type = None if isinstance(item, Text) else item.media_type
    mime = f" ({media_type})" if media_type else ""
    tool = f" ({result.name})" if result.name else ""
    return (
        f"{what}{mime} in tool result {result.call_id}{tool} content[{index}] sent as a text placeholder: "
        f"{wire} tool results cannot carry {what}"
    )


def model_view(result: ToolResult, *, carries: Collection[str], wire: str = "") -> ModelView:
    """The rule (module docstring) applied to ``result`` for a slot that carries ``carries``
    (``KINDS``; text is always carried). ``wire`` names the API in the notes."""
    mcp = result.provider_details.get("mcp", {})
    extras = mcp.get("content_extras", {}) if isinstance(mcp, Mapping) else {}
    items: list[ContentItem] = []
    notes: list[str] = []
    replaced: list[tuple[int, str]] = []
    has_text = any(isinstance(item, Text) for item in result.content)
    if isinstance(mcp, Mapping) and "structured_content" in mcp and not has_text:
        items.append(Text(text=structured_text(mcp["structured_content"])))
    for index, item in enumerate(result.content):
        kind = block_kind(item)
        if kind == "text":
            items.append(item)
        elif kind == "resource_link":
            assert isinstance(item, Resource)
            extra = extras.get(str(index)) if isinstance(extras, Mapping) else None
            items.append(Text(text=resource_link_text(item, extra if isinstance(extra, Mapping) else None)))
        elif kind in carries:
            items.append(item)
        else:
            items.append(Text(text=placeholder_text(item)))
            notes.append(left_out_note(result, index, item, wire or "this API"))
            replaced.append((index, kind))
    return ModelView(items=tuple(items), notes=tuple(notes), replaced=tuple(replaced))


def request_view(request: Request, *, carries: Collection[str], wire: str) -> tuple[Request, tuple[str, ...]]:
    """``request`` with every tool result replaced by its ``model_view`` (the same object where
    nothing changes), and the views' notes in order. An adapter calls this first in ``request_to_wire``."""
    notes: list[str] = []
    messages: list[Message] = []
    changed = False
    for message in request.messages:
        parts = list(message.parts)
        for position, part in enumerate(parts):
            if not isinstance(part, ToolResult):
                continue
            view = model_view(part, carries=carries, wire=wire)
            notes += view.notes
            if view.items != part.content:
                parts[position] = replace(part, content=view.items)
        if parts != list(message.parts):
            changed = True
            message = replace(message, parts=tuple(parts))
        messages.append(message)
    return (replace(request, messages=tuple(messages)) if changed else request), tuple(notes)


def _decoded_size(data: str) -> int:
    """Bytes the base64 ``data`` decodes to, counted from its length (nothing is decoded)."""
    text = data.strip()
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))
