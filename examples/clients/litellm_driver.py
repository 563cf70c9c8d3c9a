"""Driver for LiteLLM 1.110.2 (``litellm.acompletion``), in its own virtualenv.

LiteLLM takes OpenAI Chat messages for every provider and translates them itself, so the history
is written once in the OpenAI shape (what a LiteLLM user writes) and the provider is picked by the
model prefix: ``openai/`` (``api_base`` = server + ``/v1``), ``anthropic/`` (server root: LiteLLM
appends ``/v1/messages``), ``gemini/`` (``api_base`` = server + ``/v1beta``: LiteLLM builds
``{api_base}/models/{model}:generateContent``, ``:streamGenerateContent?alt=sse`` when streaming,
``litellm_core_utils/url_utils.py`` ``join_api_base`` via ``vertex_llm_base._check_custom_proxy``)
and ``ollama_chat/`` (server root: ``/api/chat``). A failed tool result is passed the way a user
would mark it, ``is_error: True`` on the tool message; whether LiteLLM forwards it is what the suite
checks. Streams are LiteLLM's OpenAI-style chunks, turned into stream events one delta at a time.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the cost map from GitHub at import

import litellm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import (
    ANTHROPIC_FINISH,
    CHAT_FINISH,
    GEMINI_FINISH,
    StreamCalls,
    finish_reason,
    kind_for_class,
    retry_after,
    tool_call,
)

from conformance.clients.contract import Call, SimpleClient
from conformance.model import (
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    Image,
    Reasoning,
    ReasoningDelta,
    Resource,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolResult,
)

PREFIX = {"openai_chat": ("openai", "/v1"), "anthropic": ("anthropic", ""), "gemini": ("gemini", "/v1beta")}
PREFIX["ollama"] = ("ollama_chat", "")


def _image_url(image: Image) -> dict[str, Any]:
    url = image.url or f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _content(items: tuple[Any, ...]) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Text) and item.cache_control:
            # LiteLLM's documented prompt-caching form: a content block with Anthropic's marker
            # (https://docs.litellm.ai/docs/completion/prompt_caching)
            parts.append({"type": "text", "text": item.text, "cache_control": dict(item.cache_control)})
        elif isinstance(item, Text):
            parts.append({"type": "text", "text": item.text})
        elif isinstance(item, Image):
            parts.append(_image_url(item))
        elif isinstance(item, Resource) and item.text is not None:
            parts.append({"type": "text", "text": item.text})
    if all(p["type"] == "text" and "cache_control" not in p for p in parts):
        return "".join(p["text"] for p in parts) if len(parts) <= 1 else parts
    return parts


def _reasoning(message: Any) -> dict[str, Any]:
    """The reasoning fields of an assistant message in LiteLLM's own form, as a user appending the message
    LiteLLM gave sends them back (https://docs.litellm.ai/docs/reasoning_content: ``reasoning_content`` and
    ``thinking_blocks`` on the message; "pass the thinking_blocks back" with the tool results): what LiteLLM
    gave where the driver kept it (``provider_details["litellm"]``), else the parts in that form, whatever
    wire produced them (LiteLLM decides what goes to the provider)."""
    parts = [p for p in message.parts if isinstance(p, Reasoning)]
    saved = next((p.provider_details["litellm"] for p in message.parts if "litellm" in p.provider_details), None)
    if isinstance(saved, dict):
        return dict(saved)
    if not parts:
        return {}
    out: dict[str, Any] = {}
    if text := "".join(p.text for p in parts):
        out["reasoning_content"] = text
    blocks = [
        {"type": "thinking", "thinking": r.text, "signature": r.signature}
        if r.redacted is None
        else {"type": "redacted_thinking", "data": r.redacted}
        for r in parts
        if r.signature is not None or r.redacted is not None
    ]
    if blocks:
        out["thinking_blocks"] = blocks
    return out


def _thinking(call: Call) -> dict[str, Any]:
    """The caller's reasoning settings as LiteLLM's documented parameters (https://docs.litellm.ai/docs/reasoning_content):
    ``reasoning_effort`` ("low", "medium", "high", "none" to turn it off, mapped per provider) and, for a token
    budget, ``thinking={"type": "enabled", "budget_tokens": N}`` (Anthropic's form, which LiteLLM maps to Gemini's
    ``thinkingBudget`` too)."""
    settings = call.reasoning
    if settings is None:
        return {}
    if not settings.enabled:
        return {"reasoning_effort": "none"}
    out: dict[str, Any] = {}
    if settings.effort is not None:
        out["reasoning_effort"] = settings.effort
    if settings.budget_tokens is not None:
        out["thinking"] = {"type": "enabled", "budget_tokens": settings.budget_tokens}
    return out


def _messages(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if call.system and call.system_cache_control:
        block = {"type": "text", "text": call.system, "cache_control": dict(call.system_cache_control)}
        out.append({"role": "system", "content": [block]})
    elif call.system:
        out.append({"role": "system", "content": call.system})
    for message in call.messages:
        if message.role == "user":
            out.append({"role": "user", "content": _content(message.parts)})
        elif message.role == "assistant":
            text = "".join(p.text for p in message.parts if isinstance(p, Text))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [p for p in message.parts if isinstance(p, ToolCall)]
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments_raw or json.dumps(c.arguments or {})},
                    }
                    for c in calls
                ]
            entry |= _reasoning(message)
            out.append(entry)
        else:
            for result in message.parts:
                if isinstance(result, ToolResult):
                    tool: dict[str, Any] = {
                        "role": "tool",
                        "tool_call_id": result.call_id,
                        "content": _content(result.content),
                    }
                    if result.cache_control:
                        # a tool message's own cache_control is the tool_result's breakpoint (LiteLLM's
                        # "PROMPT CACHING CHECK", litellm_core_utils/prompt_templates/factory.py:1934-1964)
                        tool["cache_control"] = dict(result.cache_control)
                    if result.name:
                        tool["name"] = result.name
                    if result.is_error:
                        tool["is_error"] = True
                    out.append(tool)
    return out


def _kwargs(call: Call) -> dict[str, Any]:
    provider, suffix = PREFIX[call.wire]
    kwargs: dict[str, Any] = {
        "model": f"{provider}/{call.model}",
        "api_base": call.base_url + suffix,
        "api_key": call.api_key,
        "messages": _messages(call),
        "stream": call.stream,
        "timeout": call.timeout,
        # the suite counts requests per turn: a hidden retry would eat the next turn's answer
        "num_retries": 0,
        "max_retries": 0,
        **_thinking(call),
    }
    if call.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": dict(t.input_schema)},
                # a tool's cache breakpoint rides on the tool (https://docs.litellm.ai/docs/completion/prompt_caching)
                **({"cache_control": dict(t.cache_control)} if t.cache_control else {}),
            }
            for t in call.tools
        ]
    if call.tool_choice in ("auto", "none", "required"):
        kwargs["tool_choice"] = call.tool_choice
    elif call.tool_choice is not None:
        kwargs["tool_choice"] = {"type": "function", "function": {"name": call.tool_choice}}
    if call.parallel_tool_calls is not None:
        kwargs["parallel_tool_calls"] = call.parallel_tool_calls
    if call.max_tokens is not None:
        kwargs["max_tokens"] = call.max_tokens
    return kwargs


NATIVE_FINISH: dict[str, FinishReason] = {**ANTHROPIC_FINISH, **GEMINI_FINISH}
"""The provider's own finish reason, where LiteLLM keeps it beside its OpenAI-style one: "when the original
provider value differs from the mapped value, it is preserved in provider_specific_fields['native_finish_reason']"
(https://docs.litellm.ai/docs/completion/output, "Native Finish Reason"); Anthropic's kept raw stop reasons in the
message's provider_specific_fields['stop_reason'] (litellm/llms/anthropic/common_utils.py, _STOP_REASONS_KEPT_RAW)."""


def _native(*holders: Any) -> str | None:
    """The provider's own finish reason, in the ``provider_specific_fields`` of any of ``holders``."""
    for holder in holders:
        fields = getattr(holder, "provider_specific_fields", None) or {}
        native = fields.get("native_finish_reason") or fields.get("stop_reason")
        if isinstance(native, str) and native:
            return native
    return None


def _finish(choice: Any, message: Any, has_calls: bool, native: str | None = None) -> tuple[FinishReason, str | None]:
    """The unified reason: the provider's own where LiteLLM kept it, else LiteLLM's (with the calls)."""
    native = native or _native(choice, message)
    if native:
        return finish_reason(NATIVE_FINISH, native, has_calls=has_calls), native
    return finish_reason(CHAT_FINISH, choice.finish_reason, has_calls=has_calls), choice.finish_reason


def _response(answer: Any, wire: str) -> Response:
    choice = answer.choices[0]
    message = choice.message
    parts: list[Any] = [
        Reasoning(text=b.get("thinking", ""), signature=b.get("signature"), redacted=b.get("data"), source=wire)
        for b in getattr(message, "thinking_blocks", None) or ()
    ]
    if not parts and getattr(message, "reasoning_content", None):
        parts.append(Reasoning(text=message.reasoning_content, source=wire))
    saved = _saved(message)
    if parts and saved:
        parts[0] = replace(parts[0], provider_details={"litellm": saved})
    if message.content:
        parts.append(Text(text=message.content))
    for c in message.tool_calls or ():
        parts.append(tool_call(c.id, c.function.name, c.function.arguments or ""))
    reason, _raw = _finish(choice, message, any(isinstance(p, ToolCall) for p in parts))
    return Response(parts=tuple(parts), finish_reason=reason)


def _saved(message: Any) -> dict[str, Any]:
    """The reasoning fields of the message LiteLLM gave, as it gave them: the two it documents on an assistant
    message, ``reasoning_content`` and ``thinking_blocks`` ("LiteLLM will standardize the reasoning_content in the
    response and thinking_blocks in the assistant message", https://docs.litellm.ai/docs/reasoning_content)."""
    fields = ("reasoning_content", "thinking_blocks")
    return {k: v for k in fields if (v := getattr(message, k, None))}


async def _events(stream: Any, wire: str) -> AsyncIterator[StreamEvent]:
    calls = StreamCalls()  # keyed by the delta's index
    last: Any = None  # the chunk choice that carried the finish reason
    native: str | None = None
    async for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        if getattr(delta, "reasoning_content", None):
            yield ReasoningDelta(delta.reasoning_content, source=wire)
        for block in getattr(delta, "thinking_blocks", None) or ():
            if block.get("signature") or block.get("data"):
                yield ReasoningDelta(signature=block.get("signature"), redacted=block.get("data"), source=wire)
        if delta.content:
            yield TextDelta(delta.content)
        for c in delta.tool_calls or ():
            for event in calls.piece(c.index, c.id, c.function.name, c.function.arguments or ""):
                yield event
        native = _native(chunk, choice, delta) or native  # a stream keeps it on the chunk that carried it
        if choice.finish_reason:
            last = choice
    for event in calls.end_all():
        yield event
    if last is not None:
        reason, raw = _finish(last, last.delta, calls.any, native)
        yield Finish(reason, raw)


async def complete(call: Call) -> Response | AsyncIterator[StreamEvent]:
    litellm.suppress_debug_info = True
    answer = await litellm.acompletion(**_kwargs(call))
    return _events(answer, call.wire) if call.stream else _response(answer, call.wire)


# LiteLLM's documented exception classes (docs.litellm.ai/docs/exception_mapping: "LiteLLM maps exceptions
# across all providers to their OpenAI counterparts"), most specific first: the kind is what the class
# means. A stream that breaks raises ``MidStreamFallbackError``, a ``ServiceUnavailableError``
# (exceptions.py:1267): a user catching the documented classes meets a 503-kind error whatever broke,
# so that is what the driver reports (never the exception LiteLLM wrapped inside it), and no
# ``status_code`` is read to change a class's kind.
ERRORS: tuple[tuple[type[BaseException], ErrorKind], ...] = (
    (litellm.ContextWindowExceededError, "context_length"),
    (litellm.RateLimitError, "rate_limit"),
    (litellm.ServiceUnavailableError, "overloaded"),
    (litellm.AuthenticationError, "auth"),
    (litellm.PermissionDeniedError, "permission"),
    (litellm.NotFoundError, "not_found"),
    (litellm.BadRequestError, "invalid_request"),
    (litellm.UnprocessableEntityError, "invalid_request"),
    (litellm.InternalServerError, "server"),
    (litellm.Timeout, "server"),
    (litellm.APIConnectionError, "server"),
    (litellm.APIError, "server"),
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    kind = kind_for_class(exc, ERRORS)
    if kind is None:
        return None
    # ``status_code`` is one of the attributes the exception-mapping doc lists; the headers are the
    # provider's, which LiteLLM keeps on ``litellm_response_headers`` (exceptions.py) or the response.
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    return ErrorInfo(
        kind=kind, message=str(exc), status=getattr(exc, "status_code", None), retry_after=retry_after(headers)
    )


COMMON = frozenset(
    "streaming parallel_tool_calls system_prompt tool_choice_auto tool_choice_none tool_choice_required"
    " tool_choice_named".split()
)
REASONING = frozenset({"reasoning_replay", "reasoning_effort", "reasoning_off"})
CLIENT = SimpleClient(
    name="litellm",
    # reasoning_replay, reasoning_effort and reasoning_off on every wire (reasoning_content / thinking_blocks,
    # reasoning_effort: https://docs.litellm.ai/docs/reasoning_content); a token budget (``thinking``) on Anthropic
    # and Gemini, the providers that document one; cache_control on Anthropic (completion/prompt_caching)
    wires={
        "openai_chat": COMMON | REASONING | {"disable_parallel_tool_calls", "call_ids"},
        "anthropic": COMMON
        | REASONING
        | {"disable_parallel_tool_calls", "call_ids", "images_in_tool_results", "reasoning_budget", "cache_control"},
        # no reasoning_budget on Gemini: LiteLLM sends a budget to Gemini 2.5 only and, on Gemini 3 and later, leaves
        # it out with a warning ("Gemini 3 and later set reasoning by thinking level, not budget ... Send
        # reasoning_effort", llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:222-225, :1673-1696)
        "gemini": COMMON | REASONING,
        "ollama": frozenset("streaming parallel_tool_calls system_prompt tool_choice_auto".split()) | REASONING,
    },
    complete=complete,
    error_info=error_info,
    # LiteLLM promises "a single, unified interface to call 100+ LLM providers ... using the OpenAI format"
    # (README); where that format allows what a provider refuses, its source maps it (1.110.2):
    # - anthropic: tool names ("Anthropic requires tool names to match ^[a-zA-Z0-9_-]{1,128}$ ... must be
    #   replaced before the request is sent", llms/anthropic/chat/transformation.py:167, mapped back on the
    #   answer) and input schemas (sanitize_input_schema_for_anthropic, "into the shape Anthropic accepts",
    #   litellm_core_utils/prompt_templates/common_utils.py:1001);
    # - gemini: schemas ("OPENAI accepts JSON Schema, Google accepts OpenAPI schema": build_vertex_schema,
    #   llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:1269); names go out as given;
    # - openai_chat (the format itself) and ollama ("pass tools directly", llms/ollama/chat/transformation.py:189):
    #   the tools go out as given.
    duties={
        "openai_chat": frozenset({"transport"}),
        "anthropic": frozenset({"transport", "tool_names", "tool_schemas"}),
        "gemini": frozenset({"transport", "tool_schemas"}),
        "ollama": frozenset({"transport"}),
    },
    # Its Gemini schema mapping gives an array without items `items: {type: object}`: "Vertex requires `items`
    # whenever `type == "array"`" (litellm/llms/vertex_ai/common_utils.py:947-965); Gemini answers 400
    # "items: missing field" otherwise.
    schema_rewrites={"gemini": "an array schema without items gets items {type: object} (vertex_ai/common_utils.py)"},
    request_differences={
        "gemini:$.tools[*].input_schema*.items*": "LiteLLM adds items to an array schema without it, which Gemini"
        " requires (litellm/llms/vertex_ai/common_utils.py:947-965)"
    },
)
