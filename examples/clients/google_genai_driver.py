"""Driver for the official ``google-genai`` Python SDK (3.6), sync client, on the Gemini API wire.

``client.models.generate_content(...)`` (or ``generate_content_stream``) with
``HttpOptions(base_url=call.base_url)``. The MCP tools go through the SDK's own MCP translation
(``google.genai._mcp_utils.mcp_to_gemini_tool``, what ``tools=[mcp_session]`` uses: JSON Schema
filtered to the supported subset, then ``Schema.from_json_schema``), merged into one ``Tool``.
In 3.6.1 that translation raises ``AttributeError`` on a boolean ``additionalProperties``
(``_filter_to_supported_schema`` recurses into ``false``): a finding, not a driver bug.
Each streamed ``GenerateContentResponse`` chunk becomes events: text parts text deltas, thought
parts reasoning deltas, a ``function_call`` part (Gemini sends each call whole) a start, one chunk
of its compact JSON and an end, and the candidate's ``finish_reason`` the finish. A call without an
``id`` (the Gemini API usually sends none) gets ``call_<n>``, marked ``synthetic_id``, and its
result is matched by name. ``thought_signature`` bytes ride in ``provider_details`` (base64) and
are replayed on the part they came on.

The SDK raises ``errors.ClientError`` (4xx) / ``ServerError`` (5xx) with ``code``, ``status`` and
the error JSON, also for an ``{"error": ...}`` chunk inside a 200 stream.
Run: ``conformance certify --client examples/clients/google_genai_driver.py:CLIENT``.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
from google import genai
from google.genai import _mcp_utils, errors, types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import (
    GEMINI_FINISH,
    dumps,
    finish_call,
    finish_reason,
    kind_for_code,
    kind_for_status,
    own_reasoning,
    result_images,
    result_text,
    retry_after,
)

from conformance.clients.contract import Call, Completion, SimpleClient
from conformance.model import (
    ErrorInfo,
    Finish,
    FinishReason,
    Part,
    Reasoning,
    ReasoningDelta,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)


def _signature(details: Any) -> bytes | None:
    """The bytes the SDK's ``Part.thought_signature`` takes, from the base64 the driver kept (either alphabet)."""
    value = details.get("thought_signature") if details else None
    if not isinstance(value, str):
        return None
    padded = value + "=" * (-len(value) % 4)
    return base64.urlsafe_b64decode(padded) if "-" in value or "_" in value else base64.b64decode(padded)


def _contents(call: Call) -> list[types.Content]:
    out: list[types.Content] = []
    for message in call.messages:
        parts: list[types.Part] = []
        for part in message.parts:
            if isinstance(part, Text):
                parts.append(types.Part(text=part.text, thought_signature=_signature(part.provider_details)))
            elif isinstance(part, Reasoning):
                if not own_reasoning(part, call.wire):
                    continue  # another provider's reasoning: Gemini cannot verify it, a user leaves it out
                signature = (
                    part.signature if part.signature is not None else part.provider_details.get("thought_signature")
                )
                thought = None if part.provider_details.get("thought") is False else True
                parts.append(
                    types.Part(
                        text=part.text, thought=thought, thought_signature=_signature({"thought_signature": signature})
                    )
                )
            elif isinstance(part, ToolCall):
                fc = types.FunctionCall(
                    id=None if part.provider_details.get("synthetic_id") else part.id,
                    name=part.name,
                    args=part.arguments or {},
                )
                parts.append(types.Part(function_call=fc, thought_signature=_signature(part.provider_details)))
            elif isinstance(part, ToolResult):
                parts.append(types.Part(function_response=_function_response(part, call)))
        out.append(types.Content(role="model" if message.role == "assistant" else "user", parts=parts))
    return out


def _function_response(result: ToolResult, call: Call) -> types.FunctionResponse:
    text = result_text(result)
    images = [
        types.FunctionResponsePart(
            inline_data=types.FunctionResponseBlob(mime_type=i.media_type, data=base64.b64decode(i.data or ""))
        )
        for i in result_images(result)
    ]
    return types.FunctionResponse(
        id=result.call_id if _real_id(call, result.call_id) else None,
        name=result.name or "",
        response={"error": text} if result.is_error else {"result": text},
        parts=images or None,
    )


def _real_id(call: Call, call_id: str) -> bool:
    """Did the server itself send this id (not a synthetic ``call_<n>``)?"""
    for message in call.messages:
        for part in message.parts:
            if isinstance(part, ToolCall) and part.id == call_id:
                return not part.provider_details.get("synthetic_id")
    return False


def _config(call: Call) -> types.GenerateContentConfig:
    tools: list[Any] = []
    if call.tools:
        declarations: list[types.FunctionDeclaration] = []
        for tool in call.tools:
            mcp_tool = SimpleNamespace(
                name=tool.name, description=tool.description, inputSchema=dict(tool.input_schema)
            )
            declarations += _mcp_utils.mcp_to_gemini_tool(mcp_tool).function_declarations or []  # type: ignore[arg-type]
        tools = [types.Tool(function_declarations=declarations)]
    tool_config = None
    if call.tool_choice is not None:
        modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
        mode = modes.get(call.tool_choice, "ANY")
        names = None if call.tool_choice in modes else [call.tool_choice]
        tool_config = types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode(mode), allowed_function_names=names
            )
        )
    return types.GenerateContentConfig(
        system_instruction=call.system,
        tools=tools or None,
        tool_config=tool_config,
        max_output_tokens=call.max_tokens,
        thinking_config=_thinking(call),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def _thinking(call: Call) -> types.ThinkingConfig | None:
    """The caller's reasoning settings as the SDK's ``ThinkingConfig`` (types.py:6132-6159): off is
    ``thinking_budget=0`` ("0 is DISABLED"); on, ``include_thoughts=True`` (the thought summaries come back, to
    be sent back with their signatures) with an effort as ``thinking_level`` (``ThinkingLevel``: MINIMAL, LOW,
    MEDIUM, HIGH) and a budget as ``thinking_budget``; https://ai.google.dev/gemini-api/docs/thinking."""
    settings = call.reasoning
    if settings is None:
        return None
    if not settings.enabled:
        return types.ThinkingConfig(thinking_budget=0)
    level = types.ThinkingLevel(settings.effort.upper()) if settings.effort is not None else None
    return types.ThinkingConfig(include_thoughts=True, thinking_budget=settings.budget_tokens, thinking_level=level)


def _client(call: Call) -> genai.Client:
    # attempts=1: the suite counts requests per turn; a hidden retry is a finding and would take
    # the next turn's recorded answer.
    options = types.HttpOptions(
        base_url=call.base_url,
        timeout=int(call.timeout * 1000),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=call.api_key, http_options=options)


def _details(part: types.Part, **extra: Any) -> dict[str, Any]:
    details = dict(extra)
    if part.thought_signature:
        details["thought_signature"] = base64.b64encode(part.thought_signature).decode()
    return details


def _finish(reason: Any, has_calls: bool) -> tuple[FinishReason, str]:
    raw = str(getattr(reason, "value", reason))
    return finish_reason(GEMINI_FINISH, raw, has_calls=has_calls), raw


def _call_of(part: types.Part, position: int) -> ToolCall:
    fc = part.function_call
    assert fc is not None
    args = dict(fc.args) if fc.args is not None else {}
    synthetic = not fc.id
    return ToolCall(
        id=fc.id or f"call_{position}",
        name=fc.name or "",
        arguments=args,
        arguments_raw=dumps(args),
        provider_details=_details(part, **({"synthetic_id": True} if synthetic else {})),
    )


def _signature_of(part: types.Part) -> str | None:
    return base64.b64encode(part.thought_signature).decode() if part.thought_signature else None


def _thought(part: types.Part) -> Reasoning:
    """A thought part: its text, and its ``thought_signature`` (base64) as the signature, replayed on a thought
    part again."""
    details = _details(part)
    return Reasoning(
        text=part.text or "", signature=details.get("thought_signature"), source="gemini", provider_details=details
    )


def _response(response: types.GenerateContentResponse) -> Response:
    parts: list[Part] = []
    candidate = response.candidates[0] if response.candidates else None
    if candidate is None:
        return Response(finish_reason="other")
    for part in (candidate.content.parts if candidate.content else None) or ():
        if part.function_call is not None:
            parts.append(_call_of(part, sum(isinstance(p, ToolCall) for p in parts)))
        elif part.text is not None and part.thought:
            parts.append(_thought(part))
        elif not part.text and part.thought_signature:  # a signed empty text part: the signature alone
            parts.append(Reasoning(signature=_signature_of(part), source="gemini", provider_details={"thought": False}))
        elif part.text is not None:
            parts.append(Text(text=part.text, provider_details=_details(part)))
    reason, raw = _finish(candidate.finish_reason, any(isinstance(p, ToolCall) for p in parts))
    return Response(parts=tuple(parts), finish_reason=reason, provider_details={"finish_reason": raw})


def _events(chunks: Iterator[types.GenerateContentResponse]) -> Iterator[StreamEvent]:
    position = 0
    thinking = False  # a thought block is open (its parts came without a signature)
    for chunk in chunks:
        candidate = chunk.candidates[0] if chunk.candidates else None
        if candidate is None:
            continue
        for part in (candidate.content.parts if candidate.content else None) or ():
            if part.function_call is not None:
                tc = _call_of(part, position)
                thinking = False
                yield ToolCallStart(tc.id, tc.name, position, provider_details=tc.provider_details)
                yield ToolCallChunk(tc.id, tc.arguments_raw)
                yield ToolCallEnd(tc.id, tc.arguments_raw, tc.arguments)
                position += 1
            elif part.thought:
                thought = _thought(part)
                yield ReasoningDelta(
                    text=thought.text,
                    signature=thought.signature,
                    provider_details=thought.provider_details,
                    source="gemini",
                )
                thinking = thought.signature is None  # a signature ends the thought block
            elif part.thought_signature:
                # A signed text part (often empty and trailing, or a part of its own after a call): a text delta
                # has no slot for provider data, so the text streams and the signature follows as a block of
                # its own, replayed as a signed empty text part (what the reference adapter's decoder does,
                # conformance/adapters/gemini.py; https://ai.google.dev/gemini-api/docs/thought-signatures)
                if part.text:
                    yield TextDelta(part.text)
                if thinking:  # keep the open thought block apart from this signature
                    yield ReasoningDelta(provider_details={"thought": True}, source="gemini")
                yield ReasoningDelta(
                    signature=_signature_of(part), provider_details={"thought": False}, source="gemini"
                )
                thinking = False
            elif part.text:
                yield TextDelta(part.text)
                thinking = False
        if candidate.finish_reason is not None:
            reason, raw = _finish(candidate.finish_reason, position > 0)
            yield Finish(reason, raw)


def _send(client: genai.Client, call: Call) -> Completion:
    if call.stream:
        # The client must outlive the stream (a collected ``genai.Client`` closes its HTTP client):
        # finish_call closes it once the events are drained.
        return _events(
            client.models.generate_content_stream(model=call.model, contents=_contents(call), config=_config(call))
        )
    return _response(client.models.generate_content(model=call.model, contents=_contents(call), config=_config(call)))


def complete(call: Call) -> Completion:
    completion: Completion = finish_call(_client(call), lambda client: _send(client, call))
    return completion


def _retry_delay(details: Any) -> float | None:
    """RetryInfo's ``retryDelay`` ("2s") in the error JSON."""
    error = details.get("error") if isinstance(details, dict) else None
    for item in (error.get("details") if isinstance(error, dict) else None) or ():
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return float(delay[:-1])
            except ValueError:
                return None
    return None


def error_info(exc: BaseException) -> ErrorInfo | None:
    if isinstance(exc, errors.APIError):
        # The SDK types its errors by field, not by class (``ClientError`` for any 4xx, ``ServerError`` for
        # any 5xx; README "Error Handling" reads ``e.code``): the RPC ``status`` it documents beside the
        # HTTP ``code`` names the kind. The retry delay is the response's header or the RetryInfo that
        # Google documents in the error JSON, which the SDK hands over unchanged as ``details``.
        headers = getattr(exc.response, "headers", None)
        code = exc.status if isinstance(exc.status, str) else None
        return ErrorInfo(
            kind=kind_for_code(code) or kind_for_status(exc.code),
            message=str(exc.message or exc),
            status=exc.code,
            retry_after=retry_after(dict(headers) if headers is not None else None) or _retry_delay(exc.details),
            code=code,
        )
    if isinstance(exc, errors.UnknownApiResponseError):  # a streamed chunk that is not JSON
        return ErrorInfo(kind="malformed_response", message=str(exc)[:500])
    # Transport errors are the HTTP client's own classes: "transport exceptions you catch (TimeoutException,
    # ConnectError, HTTPError) must come from the active HTTP client package", httpx2 by default (README,
    # "Major version 3 changes"); a body that broke off is its RemoteProtocolError or ReadError.
    if isinstance(exc, (httpx2.RemoteProtocolError, httpx2.ReadError)):
        return ErrorInfo(kind="stream_incomplete", message=str(exc)[:500])
    return None


CLIENT = SimpleClient(
    name=f"google-genai {genai.__version__}",
    wires={
        "gemini": frozenset(
            {
                "streaming",
                "parallel_tool_calls",
                "tool_choice_auto",
                "tool_choice_none",
                "tool_choice_required",
                "tool_choice_named",
                "images_in_tool_results",
                "system_prompt",
                # thought parts and signatures go back on the parts they came on; ThinkingConfig carries all three
                "reasoning_replay",
                "reasoning_effort",
                "reasoning_budget",
                "reasoning_off",
            }
        )
    },
    complete=complete,
    error_info=error_info,
    # An SDK transports. Its MCP translation filters a schema to the supported subset but promises no
    # mapping of names or schemas to what the API accepts (README "Model Context Protocol (MCP) support
    # (experimental)"), so those duties are left to its caller.
    duties=frozenset({"transport"}),
    # A stream the server closes before a chunk with a finishReason ends without an error, by design: "Errors
    # are never invented: a stream that only ever ended cleanly returns normally" (google/genai/_extra_utils.py,
    # StreamContinuation.end_hop, lines 1035-1037).
    known_gaps={
        f"{check}@errors/stream_no_terminator": (
            "google-genai returns normally from a stream that ended cleanly without a finishReason, as its"
            " StreamContinuation documents (google/genai/_extra_utils.py:1035-1037): check the last chunk's"
            " finish_reason yourself"
        )
        for check in ("recovery.provider_error", "recovery.broken_stream", "streaming.events", "streaming.lifecycle")
    },
)

__all__ = ["CLIENT"]
