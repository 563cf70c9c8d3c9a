"""``translation.tool_result_content``: each tool result reaches the model as the rule says.

The rule (``conformance.adapters._tool_output``; docs/mcp.md, "What the model receives"): the result's
blocks in order; ``structuredContent`` without a text block goes first as its compact JSON; a
``resource_link`` as a text giving the link; a block the wire's tool-result slot cannot carry as a text
placeholder, said in the request's notes. Per tool result a request sends (the first request that
sends it), the result read back from the body (``request_from_wire``) is compared with the rule's view
of the result the conversation fed back:

- its text (text blocks and embedded text resources joined, whitespace aside: wires with one content
  string join items) must be the view's, where a placeholder may be worded the adapter's own way but
  must say something (a block dropped silently FAILs);
- its images (and, where a wire carries them, audio and binary resources) must be the view's, in order;
- each block replaced by a placeholder must have a note in ``WireRequest.notes`` naming the result's
  call id and ``content[<index>]`` (else ``audio in result call_1 sent as text without a note``); the
  note is kept as a ``note`` finding, so the report shows what the model did not receive.

The findings name the cause when it is one of the known ones: a ``structuredContent``-only result sent
without its JSON, a text block (the spec's text fallback) dropped, a resource link not given. A
black-box client (``conformance certify``) is held to what the spec asks and nothing of our wording
(``client_findings``): a library that writes a result its own way (the blocks as their JSON, an
``{"error": ...}`` object, texts as a JSON list, an image moved into a user message) has given the model
what the server returned; only a loss FAILs: a text block, the JSON of a ``structuredContent`` without
text, a resource link's uri, or a block of any other kind that reaches the request in no form at all.
The check never raises; it runs where a turn sends tool results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from conformance.adapters._tool_output import (
    block_kind,
    carried_kinds,
    model_view,
    resource_link_text,
    structured_text,
)
from conformance.checks._common import CaseContext, verdict
from conformance.model import Audio, ContentItem, Image, Message, Request, Resource, Text, ToolResult
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CHECK", "check_tool_result_content", "client_findings", "result_findings"]

CHECK = "translation.tool_result_content"


def check_tool_result_content(ctx: CaseContext) -> CheckVerdict | None:
    """The verdict over every tool result the case's requests sent; None when none sent one."""
    carries = carried_kinds(ctx.adapter.traffic_format, ctx.adapter.capabilities)
    findings: list[Finding] = []
    seen: set[str] = set()
    for turn in ctx.outcome.turns:
        sent = [
            p for m in turn.request.messages for p in m.parts if isinstance(p, ToolResult) and p.call_id not in seen
        ]
        if not sent:
            continue
        whole = ctx.read_back(turn.turn)
        back = _read_back_results(whole, turn.request)
        for result in sent:
            seen.add(result.call_id)
            if result.call_id not in back:  # a result missing from the request: roundtrip.request says so
                continue
            path, read = back[result.call_id]
            if ctx.client is not None:
                findings += client_findings(result, read, whole, turn=turn.turn, path=path)
                continue
            findings += result_findings(
                result,
                read,
                carries=carries,
                wire=ctx.adapter.traffic_format,
                notes=None if ctx.client is not None else turn.wire.notes,
                turn=turn.turn,
                path=path,
            )
    if not seen:
        return None
    return verdict(CHECK, findings)


def _read_back_results(back: Request, request: Request) -> dict[str, tuple[str, ToolResult]]:
    """Call id of each result ``request`` holds -> (its content's path in the read-back, the result read
    back): by call id; by position where the wire keeps no ids (prompt formats number their results)."""
    found = [
        (f"$.messages[{mi}].parts[{pi}].content", p)
        for mi, m in enumerate(back.messages)
        for pi, p in enumerate(m.parts)
        if isinstance(p, ToolResult)
    ]
    ids = [p.call_id for m in request.messages for p in m.parts if isinstance(p, ToolResult)]
    by_id = {p.call_id: (path, p) for path, p in found}
    if set(ids) <= set(by_id) or len(ids) != len(found):
        return by_id
    return dict(zip(ids, found, strict=True))


def result_findings(
    result: ToolResult,
    sent: ToolResult,
    *,
    carries: Collection[str],
    wire: str,
    notes: Sequence[str] | None,
    turn: int | None = None,
    path: str = "",
) -> list[Finding]:
    """What is wrong with ``sent`` (a result read back from a request) as the rule's view of ``result``
    on a slot carrying ``carries``; ``notes``: the request's notes (None: not judged); ``path``: where
    ``sent``'s content is in the read-back request (``$.messages[2].parts[0].content``)."""
    view = model_view(result, carries=carries, wire=wire)
    where = f"tool result {result.call_id}"
    path = path or f"{where} content"
    findings: list[Finding] = []
    text = _squeezed("".join(_text_of(i) for i in sent.content))
    replaced = {index for index, _ in view.replaced}
    pattern = "".join(  # a placeholder may be worded the adapter's way, but must say something
        "(.+?)" if index in replaced else re.escape(_squeezed(_text_of(item)))
        for index, item in _positioned(result, view.items)
        if _is_text(item)
    )
    if re.fullmatch(pattern, text, re.DOTALL) is None:
        findings += _text_causes(result, text, where, path, turn) or [
            Finding(
                check=CHECK,
                message=f"{where}: the text sent is not the rule's view of the result (docs/mcp.md)",
                path=path,
                expected=" ".join(_text_of(i) for i in view.items if _is_text(i))[:500],
                actual=" ".join(_text_of(i) for i in sent.content if _is_text(i))[:500],
                turn=turn,
            )
        ]
    expected_media = [_media(i) for i in view.items if not _is_text(i)]
    actual_media = [_media(i) for i in sent.content if not _is_text(i)]
    if expected_media != actual_media:
        findings.append(
            Finding(
                check=CHECK,
                message=f"{where}: the media sent differ from the result's (a block the wire carries must reach it)",
                path=path,
                expected=[m[:2] for m in expected_media],
                actual=[m[:2] for m in actual_media],
                turn=turn,
            )
        )
    if notes is not None:
        for index, kind in view.replaced:
            said = [note for note in notes if result.call_id in note and f"content[{index}]" in note]
            if said:  # shown with the case: what the model did not receive, and why
                findings.append(Finding(check=CHECK, message=said[0], path=f"{path}[{index}]", turn=turn, kind="note"))
                continue
            what = "an embedded binary resource" if kind == "blob" else kind
            findings.append(
                Finding(
                    check=CHECK,
                    message=f"{what} in result {result.call_id} sent as text without a note",
                    path=f"{path}[{index}]",
                    expected=f"a line in WireRequest.notes naming {result.call_id} content[{index}]",
                    actual=list(notes),
                    turn=turn,
                )
            )
    return findings


def client_findings(
    result: ToolResult,
    sent: ToolResult,
    request: Request,
    *,
    turn: int | None = None,
    path: str = "",
) -> list[Finding]:
    """What a black-box client lost of ``result`` (read back as ``sent`` from ``request``): each text block,
    the JSON of a ``structuredContent`` without text (its values, in any spelling), a resource link's uri,
    and every other block in some form (a media item anywhere in the request, or its data, uri or mime
    type in its text: a placeholder saying what was left out). Wording, wrapping and placement are the
    library's (module docstring)."""
    where = f"tool result {result.call_id}"
    path = path or f"{where} content"
    text = "".join(_text_of(i) for i in sent.content)
    elsewhere = _request_text(request)
    media = {_b64(_media(i)[2]) for m in request.messages for p in m.parts for i in _items(p) if not _is_text(i)}
    media |= {_b64(d) for m in request.messages for d in _raw_media(m)}
    findings: list[Finding] = []
    mcp = result.provider_details.get("mcp", {})
    mcp = mcp if isinstance(mcp, dict) else {}
    if "structured_content" in mcp and not any(isinstance(i, Text) for i in result.content):
        missing = [leaf for leaf in _leaves(mcp["structured_content"]) if not _holds(text, leaf)]
        if missing:
            findings.append(
                Finding(
                    check=CHECK,
                    message=f"{where}: its structuredContent (no text block beside it) did not reach the model",
                    path=path,
                    expected=structured_text(mcp["structured_content"])[:500],
                    actual=text[:500],
                    turn=turn,
                )
            )
    for index, item in enumerate(result.content):
        kind = block_kind(item)
        if _is_text(item):
            if not _holds(text, _text_of(item)):
                findings.append(
                    Finding(
                        check=CHECK,
                        message=f"{where}: the text of content[{index}] was dropped",
                        path=f"{path}[{index}]",
                        expected=_text_of(item)[:500],
                        actual=text[:500],
                        turn=turn,
                    )
                )
            continue
        data = _media(item)[2]
        if kind == "resource_link" and isinstance(item, Resource):
            if not _holds(text, item.uri):
                findings.append(
                    Finding(
                        check=CHECK,
                        message=f"{where}: the resource link content[{index}] ({item.uri}) was not given to the model",
                        path=f"{path}[{index}]",
                        expected=item.uri,
                        actual=text[:500],
                        turn=turn,
                    )
                )
            continue
        uri = item.uri if isinstance(item, Resource) else None
        mime = _media(item)[1]
        if _b64(data) in media or any(_holds(elsewhere, mark) for mark in (data, uri, mime) if mark):
            continue  # the block itself, or a text saying what was left out (its uri or type, as a placeholder)
        findings.append(
            Finding(
                check=CHECK,
                message=f"{where}: the {kind} block content[{index}] reached the model in no form (dropped silently)",
                path=f"{path}[{index}]",
                expected=f"{kind} {_media(item)[1] or ''}".strip(),
                actual=text[:500],
                turn=turn,
            )
        )
    return findings


def _items(part: object) -> Sequence[ContentItem]:
    if isinstance(part, ToolResult):
        return part.content
    return (part,) if isinstance(part, Text | Image | Audio | Resource) else ()


def _request_text(request: Request) -> str:
    return "".join(_text_of(i) for m in request.messages for p in m.parts for i in _items(p))


def _leaves(value: Any) -> Iterator[str]:
    """The scalar values of a JSON value, as text (strings as they are, others as JSON)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value
    else:
        yield json.dumps(value)


def _holds(haystack: str, needle: str) -> bool:
    """``needle`` is in ``haystack`` as it is or JSON-escaped once or twice, whitespace aside: a client that
    writes a block as its JSON and then the result's blocks as a JSON list (the AI SDK's MCP client,
    ``mcpToModelOutput``, then its OpenAI Chat or Google provider) escapes a resource's text twice."""
    hay = _squeezed(haystack)
    forms = [needle]
    for ascii_only in (True, False):
        once = json.dumps(needle, ensure_ascii=ascii_only)[1:-1]
        forms += [once, json.dumps(once, ensure_ascii=ascii_only)[1:-1]]
    return any(_squeezed(form) in hay for form in forms)


def _text_causes(result: ToolResult, text: str, where: str, path: str, turn: int | None) -> list[Finding]:
    """The known causes of a text that is not the view: structured JSON missing, a text block dropped,
    a resource link not given."""
    findings: list[Finding] = []
    mcp = result.provider_details.get("mcp", {})
    has_text = any(isinstance(i, Text) for i in result.content)
    if isinstance(mcp, dict) and "structured_content" in mcp and not has_text:
        wanted = structured_text(mcp["structured_content"])
        if _squeezed(wanted) not in text:
            findings.append(
                Finding(
                    check=CHECK,
                    message=f"{where}: its structuredContent (no text block beside it) was sent without its JSON",
                    path=path,
                    expected=wanted[:500],
                    actual=text[:500],
                    turn=turn,
                )
            )
    extras = mcp.get("content_extras", {}) if isinstance(mcp, dict) else {}
    for index, item in enumerate(result.content):
        kind = block_kind(item)
        if kind == "text" and _squeezed(_text_of(item)) not in text:
            findings.append(
                Finding(
                    check=CHECK,
                    message=f"{where}: the text of content[{index}] was dropped"
                    + (" (the text fallback of its structuredContent)" if "structured_content" in mcp else ""),
                    path=f"{path}[{index}]",
                    expected=_text_of(item)[:500],
                    actual=text[:500],
                    turn=turn,
                )
            )
        elif kind == "resource_link" and isinstance(item, Resource) and _squeezed(item.uri) not in text:
            extra = extras.get(str(index)) if isinstance(extras, dict) else None
            findings.append(
                Finding(
                    check=CHECK,
                    message=f"{where}: the resource link content[{index}] ({item.uri}) was not given to the model",
                    path=f"{path}[{index}]",
                    expected=resource_link_text(item, extra if isinstance(extra, dict) else None),
                    actual=text[:500],
                    turn=turn,
                )
            )
    return findings


def _positioned(result: ToolResult, items: Sequence[ContentItem]) -> list[tuple[int, ContentItem]]:
    """The view's items with the index of the block each came from (-1: the structured JSON put first)."""
    offset = len(items) - len(result.content)
    return [(position - offset, item) for position, item in enumerate(items)]


def _is_text(item: ContentItem) -> bool:
    return isinstance(item, Text) or (isinstance(item, Resource) and item.text is not None)


def _text_of(item: ContentItem) -> str:
    if isinstance(item, Text):
        return item.text
    if isinstance(item, Resource) and item.text is not None:
        return item.text
    return ""


def _media(item: ContentItem) -> tuple[str, str | None, str | None]:
    """``(kind, mime type, data or url)`` of a non-text block."""
    if isinstance(item, Image):
        return ("image", item.media_type or None, item.data if item.data is not None else item.url)
    if isinstance(item, Audio):
        return ("audio", item.media_type, item.data)
    assert isinstance(item, Resource)
    return ("resource", item.media_type, item.blob if item.blob is not None else item.uri)


def _raw_media(message: Message) -> Iterator[str]:
    """The data of the media parts a reader kept verbatim in ``message`` (``raw_parts``): Gemini's
    ``inlineData`` that is no image (both spellings, E32), OpenAI Chat's ``input_audio`` and ``file`` parts
    (wire-formats.md §1b), e.g. the audio and blobs pydantic-ai moves into a user message after the results
    (``pydantic_ai/models/google.py:1503-1554``)."""
    raw = message.provider_details.get("raw_parts")
    for entry in raw if isinstance(raw, list) else ():
        part = entry[1] if isinstance(entry, list | tuple) and len(entry) == 2 else None
        if not isinstance(part, dict):
            continue
        inline = part.get("inlineData") or part.get("inline_data") or part.get("input_audio")
        if isinstance(inline, dict) and isinstance(inline.get("data"), str):
            yield inline["data"]
        file_data = (part.get("file") or {}).get("file_data") if isinstance(part.get("file"), dict) else None
        if isinstance(file_data, str):  # OpenAI Chat's file part: a data URL
            yield file_data.partition(";base64,")[2]


def _b64(data: str | None) -> str | None:
    """``data`` in one base64 alphabet, unpadded: the same bytes in base64url (google-genai serializes bytes so,
    and the Gemini API reads both: proto3 JSON "Either standard or URL-safe base64 encoding with/without paddings
    are accepted", https://protobuf.dev/programming-guides/json/) compare equal; a URL passes unchanged."""
    if data is None or "://" in data or data.startswith("data:"):
        return data
    return data.replace("-", "+").replace("_", "/").rstrip("=")


def _squeezed(text: str) -> str:
    """``text`` without whitespace (wires join a result's texts with nothing, a newline or a space)."""
    return "".join(text.split())
