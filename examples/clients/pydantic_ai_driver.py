"""Driver for pydantic-ai-slim 2.68.0 (extras openai, anthropic, google), in its own virtualenv.

It drives pydantic-ai at its model-request level (``pydantic_ai.direct.model_request`` and
``model_request_stream``), below the Agent: the history becomes pydantic-ai's own messages
(``ModelRequest`` with ``SystemPromptPart``/``UserPromptPart``/``ToolReturnPart``, ``ModelResponse``
with ``TextPart``/``ThinkingPart``/``ToolCallPart`` and their ``tool_call_id``), the tools
``ToolDefinition``s. An MCP tool result becomes the ``ToolReturnPart`` content pydantic-ai's own MCP toolset
builds (``_mcp_content``). A failed tool result is a ``ToolReturnPart`` with ``outcome='retried'``: what
pydantic-ai's MCP toolset builds for an ``isError`` result (``tool_error_behavior='retry'``, its
default; ``RetryPromptPart`` is deprecated in 2.x, ``messages.py``). Models: ``OpenAIChatModel``,
``AnthropicModel`` and ``GoogleModel``, each with a provider given ``base_url`` and an SDK client
whose retries are off. Pydantic-AI's ``OllamaModel`` speaks Ollama's OpenAI-compatible ``/v1``
API, not the native ``/api/chat`` wire, so the ollama wire is not declared. Streams: pydantic-ai's
part start/delta events become stream events; a part's provider data (Gemini thought signatures,
the provider name) rides in ``provider_details["pydantic_ai"]`` so the next turn replays it.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pydantic_core
from anthropic import AsyncAnthropic
from google.genai.types import HttpRetryOptions
from openai import AsyncOpenAI
from pydantic_ai import exceptions as exc_
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.messages import (
    BinaryContent,
    BinaryImage,
    CachePoint,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import finish_reason, kind_for_class, parsed, tool_call

from conformance.clients.contract import Call, SimpleClient
from conformance.model import (
    Audio,
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
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)

KEY = "pydantic_ai"
PROVIDERS = {
    "anthropic": "anthropic",
    "gemini": "google",
    "openai_chat": "openai",
    "openai_responses": "openai",
    "ollama": "ollama",
}
"""The pydantic-ai provider name of each wire (its providers' ``name``: providers/anthropic.py:131, google.py:139-141
"persisted in ModelMessage.provider_name and checked during history replay", openai.py:51, ollama.py:38): a
``ThinkingPart`` and a ``ModelResponse`` name the provider that produced them, which is how pydantic-ai decides
what of another provider's reasoning it sends (https://ai.pydantic.dev/thinking)."""
FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "error": "error",
}


def _model(call: Call) -> Model:
    # the suite counts requests per turn: a hidden retry would eat the next turn's answer (max_retries=0,
    # attempts=1 here, and ModelSettings.max_retries=0 below)
    if call.wire == "openai_chat":
        client = AsyncOpenAI(base_url=call.base_url + "/v1", api_key=call.api_key, max_retries=0)
        return OpenAIChatModel(call.model, provider=OpenAIProvider(openai_client=client))
    if call.wire == "anthropic":
        client = AsyncAnthropic(base_url=call.base_url, api_key=call.api_key, max_retries=0)
        return AnthropicModel(call.model, provider=AnthropicProvider(anthropic_client=client))
    provider = GoogleProvider(api_key=call.api_key, base_url=call.base_url, retry_options=HttpRetryOptions(attempts=1))
    return GoogleModel(call.model, provider=provider)


def _items(items: tuple[Any, ...]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, Text):
            out.append(item.text)
            if (
                item.cache_control
            ):  # "a cache point marker ... inserted into UserPromptPart.content" (messages.py CachePoint)
                out.append(_cache_point(item.cache_control))
        elif isinstance(item, Image) and item.data is not None:
            out.append(BinaryContent(data=base64.b64decode(item.data), media_type=item.media_type))
        elif isinstance(item, Image) and item.url:
            out.append(ImageUrl(url=item.url))
        elif isinstance(item, Resource) and item.text is not None:
            out.append(item.text)
    return out


def _mcp_block(item: Any) -> Any:
    """One MCP content block as pydantic-ai's MCP toolset maps it for a tool return
    (``_map_mcp_tool_result``, pydantic_ai/mcp.py:2216-2247, pydantic-ai-slim 2.68.0): a text that looks like JSON
    parsed (``pydantic_core.from_json``), else as it came; an image a ``BinaryImage``, audio a ``BinaryContent``; an
    embedded resource its text or its blob as ``BinaryContent`` (``application/octet-stream`` without a mime type,
    ``_resource_content_to_pai``, mcp.py:2290-2302); a resource link its uri (mcp.py:2241-2244: "fall back to
    returning the URI")."""
    if isinstance(item, Text):
        ok, value = parsed(item.text, pydantic_core.from_json) if item.text.startswith(("[", "{")) else (False, None)
        return value if ok else item.text  # not JSON: the text as it came, as pydantic-ai does
    if isinstance(item, Image) and item.data is not None:
        return BinaryImage(data=base64.b64decode(item.data), media_type=item.media_type)
    if isinstance(item, Audio):
        return BinaryContent(data=base64.b64decode(item.data), media_type=item.media_type)
    if isinstance(item, Resource) and item.text is not None:
        return item.text
    if isinstance(item, Resource) and item.blob is not None:
        blob = BinaryContent(data=base64.b64decode(item.blob), media_type=item.media_type or "application/octet-stream")
        return BinaryContent.narrow_type(blob)
    if isinstance(item, Resource):
        return item.uri
    raise ValueError(f"an image given by URL ({item.url}) is no MCP content block")  # MCP images carry data


def _mcp_content(result: ToolResult) -> Any:
    """What pydantic-ai's MCP toolset hands the model layer for an MCP result (``_map_mcp_call_tool_result``,
    pydantic_ai/mcp.py:2185-2213): the structured content when every block is text (the spec's serialized copy;
    ``{"result": x}``, the MCP SDK's wrapper of a non-object, as ``x``), else the blocks mapped, one as itself.
    An ``isError`` result becomes the retry message, the structured content preferred
    (``prefer_structured=True``, mcp.py:1686-1694: ``ToolReturnPart.model_response_str(wrap_if_error=False)``)."""
    mcp = result.provider_details.get("mcp", {})
    structured = mcp.get("structured_content") if isinstance(mcp, dict) else None
    if structured is not None and (result.is_error or all(isinstance(i, Text) for i in result.content)):
        content: Any = (
            structured["result"] if isinstance(structured, dict) and list(structured) == ["result"] else structured
        )
    else:
        mapped = [_mcp_block(item) for item in result.content]
        content = mapped[0] if len(mapped) == 1 else mapped
    if not result.is_error:
        return content
    if structured is None and not result.content:
        return f"Tool {result.name!r} returned an error"
    message = ToolReturnPart(tool_name=result.name or "", content=content).model_response_str(wrap_if_error=False)
    return message or f"Tool {result.name!r} returned an error"


def _cache_point(cache_control: Any) -> CachePoint:
    ttl = cache_control.get("ttl")
    return CachePoint(ttl=ttl) if ttl in ("5m", "1h") else CachePoint()


def _saved(part: Any) -> dict[str, Any]:
    return dict(part.provider_details.get(KEY, {}))


def _messages(call: Call, model: Model) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    system = [SystemPromptPart(content=call.system)] if call.system else []
    for message in call.messages:
        if message.role == "user":
            items = _items(message.parts)
            content = items[0] if len(items) == 1 and isinstance(items[0], str) else items
            prompt = UserPromptPart(content=content)
            if out and isinstance(out[-1], ModelRequest):  # after tool returns: the same request, as pydantic-ai does
                out[-1] = ModelRequest(parts=[*out[-1].parts, prompt])
            else:
                out.append(ModelRequest(parts=[*system, prompt]))
            system = []
        elif message.role == "tool":
            returns = []
            for r in message.parts:
                if isinstance(r, ToolResult):
                    content = _mcp_content(r)
                    outcome = "retried" if r.is_error else "success"
                    returns.append(
                        ToolReturnPart(tool_name=r.name or "", content=content, tool_call_id=r.call_id, outcome=outcome)
                    )
            out.append(ModelRequest(parts=returns))
        else:
            parts: list[Any] = []
            # the provider that answered: the one the driver kept, else the one that produced its reasoning (a
            # caller's history from another wire), else this wire's
            provider_name = next(
                (PROVIDERS.get(p.source, p.source) for p in message.parts if isinstance(p, Reasoning) and p.source),
                model.system,
            )
            for p in message.parts:
                saved = _saved(p)
                provider_name = saved.pop("provider_name", None) or provider_name
                details = saved.get("provider_details")
                if isinstance(p, Text) or (isinstance(p, Reasoning) and saved.get("text_part")):
                    parts.append(TextPart(content=p.text, provider_details=details))
                elif isinstance(p, Reasoning):
                    parts.append(
                        ThinkingPart(
                            content=p.text,
                            signature=p.redacted if p.redacted is not None else p.signature,
                            id=saved.get("id") or (REDACTED if p.redacted is not None else None),
                            provider_name=saved.get("part_provider_name")
                            or (PROVIDERS.get(p.source, p.source) if p.source else provider_name),
                            provider_details=details,
                        )
                    )
                elif isinstance(p, ToolCall):
                    args = p.arguments_raw if p.arguments_raw else p.arguments
                    parts.append(
                        ToolCallPart(
                            tool_name=p.name, args=args, tool_call_id=p.id, id=saved.get("id"), provider_details=details
                        )
                    )
            out.append(ModelResponse(parts=parts, provider_name=provider_name, model_name=call.model))
    return out


def _parameters(call: Call) -> ModelRequestParameters:
    tools = [
        ToolDefinition(name=t.name, description=t.description, parameters_json_schema=dict(t.input_schema))
        for t in call.tools
    ]
    return ModelRequestParameters(function_tools=tools)


def _settings(call: Call) -> ModelSettings:
    settings = ModelSettings(max_retries=0, timeout=call.timeout, framing_announcement="never")
    settings.update(_reasoning_settings(call))  # type: ignore[typeddict-item]
    settings.update(_cache_settings(call))  # type: ignore[typeddict-item]
    if call.max_tokens is not None:
        settings["max_tokens"] = call.max_tokens
    if call.parallel_tool_calls is not None:
        settings["parallel_tool_calls"] = call.parallel_tool_calls
    if call.tool_choice in ("auto", "none", "required"):
        settings["tool_choice"] = call.tool_choice
    elif call.tool_choice is not None:
        settings["tool_choice"] = [call.tool_choice]
    return settings


def _reasoning_settings(call: Call) -> dict[str, Any]:
    """The caller's reasoning settings as pydantic-ai's model settings: the unified ``thinking`` (settings.py:612-630:
    ``False`` turns it off, an effort level), and a token budget in the provider's own setting, which pydantic-ai
    documents for Anthropic (``anthropic_thinking``, Anthropic's ``{"type": "enabled", "budget_tokens": N}``) and
    Gemini (``google_thinking_config``, ``thinking_budget``); https://ai.pydantic.dev/thinking."""
    settings = call.reasoning
    if settings is None:
        return {}
    if not settings.enabled:
        return {"thinking": False}
    out: dict[str, Any] = {}
    if settings.effort is not None:
        out["thinking"] = settings.effort
    if settings.budget_tokens is not None and call.wire == "anthropic":
        out["anthropic_thinking"] = {"type": "enabled", "budget_tokens": settings.budget_tokens}
    elif settings.budget_tokens is not None and call.wire == "gemini":
        out["google_thinking_config"] = {"thinking_budget": settings.budget_tokens}
    return out


def _ttl(cache_control: Any) -> bool | str:
    ttl = cache_control.get("ttl")
    return ttl if ttl in ("5m", "1h") else True


def _cache_settings(call: Call) -> dict[str, Any]:
    """The caller's cache breakpoints on tools, system and a tool result as pydantic-ai's Anthropic settings
    (models/anthropic/__init__.py:609-642): ``anthropic_cache_tool_definitions`` ("the last tool ... will have
    cache_control set"), ``anthropic_cache_instructions`` ("the last system prompt"), ``anthropic_cache_messages``
    ("the last message content block", where the caller marked a tool result of the last message); a user text
    gets a ``CachePoint`` in its content instead (``_items``)."""
    if call.wire != "anthropic":
        return {}
    out: dict[str, Any] = {}
    marked = [t.cache_control for t in call.tools if t.cache_control]
    if marked:
        out["anthropic_cache_tool_definitions"] = _ttl(marked[-1])
    if call.system_cache_control:
        out["anthropic_cache_instructions"] = _ttl(call.system_cache_control)
    last = call.messages[-1].parts if call.messages else ()
    results = [r.cache_control for r in last if isinstance(r, ToolResult) and r.cache_control]
    if results:
        out["anthropic_cache_messages"] = _ttl(results[-1])
    return out


def _tool_call(part: ToolCallPart, keep: dict[str, Any]) -> ToolCall:
    args = part.args
    details = {KEY: keep}
    if isinstance(args, dict):  # already an object (as Gemini sends them)
        return ToolCall(
            id=part.tool_call_id,
            name=part.tool_name,
            arguments=args,
            arguments_raw=json.dumps(args),
            provider_details=details,
        )
    return tool_call(part.tool_call_id, part.tool_name, args or "", details=details)


def _keep(response: ModelResponse, part: Any) -> dict[str, Any]:
    keep: dict[str, Any] = {"provider_name": response.provider_name}
    if getattr(part, "provider_details", None):
        keep["provider_details"] = part.provider_details
    if getattr(part, "id", None):
        keep["id"] = part.id
    if isinstance(part, ThinkingPart):
        keep["part_provider_name"] = part.provider_name
    return keep


REDACTED = "redacted_thinking"
"""The ``ThinkingPart.id`` pydantic-ai gives Anthropic's redacted thinking, whose data it keeps as the part's
``signature`` (models/anthropic/__init__.py:2426, sent back as a redacted_thinking block at 3374-3377)."""


def _reasoning(part: ThinkingPart, keep: dict[str, Any], wire: str) -> Reasoning:
    if part.id == REDACTED:
        return Reasoning(redacted=part.signature or "", source=wire, provider_details={KEY: keep})
    return Reasoning(text=part.content, signature=part.signature, source=wire, provider_details={KEY: keep})


def _response(response: ModelResponse, wire: str) -> Response:
    parts: list[Any] = []
    for part in response.parts:
        keep = _keep(response, part)
        if isinstance(part, TextPart):
            parts.append(Text(text=part.content, provider_details={KEY: keep}))
        elif isinstance(part, ThinkingPart):
            parts.append(_reasoning(part, keep, wire))
        elif isinstance(part, ToolCallPart):
            parts.append(_tool_call(part, keep))
    # pydantic-ai gives no normalized reason for a reason outside its set (Anthropic pause_turn, Gemini OTHER:
    # messages.py FinishReason): "other", as the stream below reads it
    reason = finish_reason(FINISH, response.finish_reason) if response.finish_reason else "other"
    return Response(parts=tuple(parts), finish_reason=reason)


def _part_end(part: Any, response: ModelResponse, wire: str) -> list[StreamEvent]:
    """A complete part (``PartEndEvent``) closes its block: a thinking part with its signature and what pydantic-ai
    keeps on it (its id, provider name and details: the Chat field it came in, a Gemini signature), so the next
    turn hands pydantic-ai its own part back; a text part that carries provider data and no text (Gemini's
    signature on an empty part of its own) the same way, marked to go back as a text part. A text delta has no
    slot for a signature that rides on text."""
    keep = _keep(response, part)
    if isinstance(part, ThinkingPart) and part.id == REDACTED:
        return [ReasoningDelta(redacted=part.signature or "", provider_details={KEY: keep}, source=wire)]
    if isinstance(part, ThinkingPart):
        return [ReasoningDelta("", signature=part.signature, provider_details={KEY: keep}, source=wire)]
    if isinstance(part, TextPart) and not part.content and part.provider_details:
        return [ReasoningDelta("", provider_details={KEY: keep | {"text_part": True}}, source=wire)]
    return []


async def _events(call: Call) -> AsyncIterator[StreamEvent]:
    model = _model(call)
    async with model_request_stream(
        model, _messages(call, model), model_settings=_settings(call), model_request_parameters=_parameters(call)
    ) as stream:
        calls: dict[int, str] = {}
        chunked: set[str] = set()  # calls whose argument text arrived in pieces (Gemini sends whole objects)
        async for event in stream:
            if isinstance(event, PartStartEvent):
                part = event.part
                if isinstance(part, TextPart) and part.content:
                    yield TextDelta(part.content)
                elif isinstance(part, ThinkingPart) and part.content:
                    yield ReasoningDelta(part.content, source=call.wire)
                elif isinstance(part, ToolCallPart):
                    calls[event.index] = part.tool_call_id
                    keep = {KEY: _keep(stream.get(), part)}
                    yield ToolCallStart(part.tool_call_id, part.tool_name, len(calls) - 1, provider_details=keep)
                    if isinstance(part.args, str) and part.args:
                        chunked.add(part.tool_call_id)
                        yield ToolCallChunk(part.tool_call_id, part.args)
            elif isinstance(event, PartDeltaEvent):
                delta = event.delta
                if isinstance(delta, TextPartDelta) and delta.content_delta:
                    yield TextDelta(delta.content_delta)
                elif isinstance(delta, ThinkingPartDelta) and delta.content_delta:
                    yield ReasoningDelta(delta.content_delta, source=call.wire)
                elif isinstance(delta, ToolCallPartDelta) and isinstance(delta.args_delta, str) and delta.args_delta:
                    chunked.add(calls[event.index])
                    yield ToolCallChunk(calls[event.index], delta.args_delta)
            elif isinstance(event, PartEndEvent):
                for e in _part_end(event.part, stream.get(), call.wire):
                    yield e
        final = _response(stream.get(), call.wire)
    for part in final.tool_calls:
        if part.id not in chunked and part.arguments_raw:
            yield ToolCallChunk(part.id, part.arguments_raw)
        yield ToolCallEnd(part.id, part.arguments_raw, part.arguments, part.arguments_error)
    yield Finish(final.finish_reason or "other", stream.get().finish_reason)


async def complete(call: Call) -> Response | AsyncIterator[StreamEvent]:
    if call.stream:
        return _events(call)
    model = _model(call)
    response = await model_request(
        model, _messages(call, model), model_settings=_settings(call), model_request_parameters=_parameters(call)
    )
    return _response(response, call.wire)


ERRORS: tuple[tuple[type[BaseException], ErrorKind], ...] = (
    (exc_.ModelContextWindowExceededError, "context_length"),
    (exc_.ModelRateLimitError, "rate_limit"),
    (exc_.ModelQuotaExceededError, "rate_limit"),
    (exc_.ModelOverloadedError, "overloaded"),
    (exc_.ModelUnavailableError, "overloaded"),
    (exc_.ModelServerError, "server"),
    (exc_.ModelAuthenticationError, "auth"),
    (exc_.ModelNotFoundError, "not_found"),
    (exc_.ModelRequestRejectedError, "invalid_request"),
    (exc_.ModelTimeoutError, "server"),
    (exc_.ModelConnectionError, "stream_incomplete"),
    (exc_.ModelRequestTimeout, "server"),
    (exc_.ModelAPIError, "unknown"),
    (exc_.UnexpectedModelBehavior, "malformed_response"),
    # "Error caused by a usage mistake by the application developer" (exceptions.py:307): raised before any request,
    # e.g. a setting the model's profile does not take (anthropic_thinking with a budget on an adaptive-only model)
    (exc_.UserError, "invalid_request"),
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    kind = kind_for_class(exc, ERRORS)
    if kind is None:
        return None
    status = getattr(exc, "status_code", None)
    code = getattr(exc, "provider_error_code", None) or getattr(exc, "provider_error_type", None)
    retry_after = getattr(exc, "retry_after", None)  # pydantic-ai reads the headers itself
    return ErrorInfo(kind=kind, message=str(exc), status=status, retry_after=retry_after, code=code)


# reasoning: thinking parts replayed from the history, the unified ``thinking`` setting (an effort, off) on every
# model, a token budget in the Anthropic and Google settings, Anthropic's cache settings and CachePoint
# (https://ai.pydantic.dev/thinking, settings.py:612-650, models/anthropic/__init__.py:603-660, messages.py CachePoint)
COMMON = frozenset(
    "streaming parallel_tool_calls system_prompt tool_choice_auto tool_choice_none tool_choice_required"
    " tool_choice_named reasoning_replay reasoning_effort reasoning_off".split()
)
CLIENT = SimpleClient(
    name="pydantic-ai",
    wires={
        "openai_chat": COMMON | {"disable_parallel_tool_calls", "call_ids"},
        "anthropic": COMMON
        | {
            "disable_parallel_tool_calls",
            "call_ids",
            "images_in_tool_results",
            "is_error_in_tool_results",
            "reasoning_budget",
            "cache_control",
        },
        "gemini": COMMON | {"images_in_tool_results", "is_error_in_tool_results", "reasoning_budget"},
    },
    complete=complete,
    error_info=error_info,
    # Each model's profile names "the transformer to use to make JSON schemas for tools and structured output
    # compatible with the model" (profiles/__init__.py:255): OpenAIJsonSchemaTransformer (profiles/openai.py:673),
    # AnthropicJsonSchemaTransformer (providers/anthropic.py:159), GoogleJsonSchemaTransformer
    # (profiles/google.py:288). Tool names go out as given (a function's name, or an MCP toolset's with its
    # optional ``tool_prefix``): nothing maps them to what a provider accepts. On OpenAI Chat it also promises
    # to read what OpenAI-compatible servers send outside the wire's rules: a stream without a finish reason
    # ("OpenAI-compatible APIs do not consistently guarantee the field", the profile's
    # openai_chat_streaming_requires_finish_reason, profiles/openai.py:339-344) and malformed chunks
    # (models/openai/_chat_streaming.py:101-104); nothing of the kind for Anthropic or Gemini.
    # A Chat stream that ends without a finish reason is read as 'stop' unless the profile asks otherwise, by
    # design (profiles/openai.py:339-344, pydantic/pydantic-ai#6610): known, with the flag that changes it.
    known_gaps={
        f"openai_chat:{check}@errors/stream_no_terminator": (
            "pydantic-ai reads a Chat stream that ends without a finish reason as complete ('stop') by default, as"
            " documented (profiles/openai.py:339-344, pydantic/pydantic-ai#6610); a caller who needs the error sets"
            " the profile's openai_chat_streaming_requires_finish_reason=True"
        )
        for check in ("recovery.provider_error", "recovery.broken_stream", "streaming.events")
    }
    | {
        f"anthropic:{check}@mcp/result_{scenario}": (
            "pydantic-ai refuses a tool return Anthropic cannot take, before sending: audio raises NotImplementedError"
            " ('Unsupported binary content type in Anthropic tool returns', models/anthropic/__init__.py:3905), a"
            " blob other than an image, a PDF or plain text RuntimeError ('Unsupported binary content media type for"
            " Anthropic', 3857): it says so, by design, rather than send a placeholder"
        )
        for check in ("client.typed_errors", "client.one_request")
        for scenario in ("audio", "text_and_audio", "embedded_blob")
    }
    | {
        f"{wire}:{check}@reasoning/cross_wire_history*": (
            "pydantic-ai re-renders another provider's thinking as text without its signature, by design"
            " (render_replayed_thinking, _thinking_part.py:41-76): in the assistant turn between <think> tags on"
            " Chat (models/openai/_chat_model.py:917-931), in a user turn between <assistant_thinking> tags on"
            " Anthropic (models/anthropic/__init__.py:3364-3389); no signature goes out, so nothing the provider"
            " verifies (roundtrip.reasoning_replay passes), but the conversation's text differs from the caller's"
        )
        for wire, check in (
            ("openai_chat", "roundtrip.request"),
            ("openai_chat", "client.recorded_request"),
            ("anthropic", "roundtrip.request"),
            ("anthropic", "client.recorded_request"),
            ("anthropic", "translation.wire_paths"),
        )
    }
    | {
        f"openai_chat:{check}@reasoning/chat_reasoning_details": (
            "OpenRouter's reasoning_details are read and replayed by pydantic-ai's OpenRouterModel, not by the"
            " OpenAIChatModel certified here (models/_reasoning_details.py:1-7, models/openrouter.py:514-520;"
            " OpenAIChatModel reads reasoning/reasoning_content only, models/openai/_chat_model.py:726-759)"
        )
        for check in ("roundtrip.reasoning_replay", "translation.wire_paths")
    }
    | {
        f"{wire}:translation.tool_result_content@mcp/result_structured_error": (
            "pydantic-ai sends an MCP result's structuredContent instead of its text blocks whenever every block is"
            " text, by design: the texts are taken for the JSON serialization the MCP spec asks for beside it"
            " (_map_mcp_call_tool_result, pydantic_ai/mcp.py:2187-2192); a server whose text says something else"
            " (here the error message) has that text replaced by the structured values"
        )
        for wire in ("openai_chat", "anthropic", "gemini")
    }
    | {
        f"{wire}:{check}@mcp/result_{scenario}": (
            "pydantic-ai sends a tool-returned file the wire's tool result cannot carry (a Chat tool message takes"
            " text only; Gemini's functionResponse.parts some MIME types) as an ordinary part of a user message after"
            " the results, framed by <pyai:tool_result ... file_id> tags, with 'See file <id>.' in the result, by"
            " design (_relocates_tool_files, models/__init__.py:888-893, set at models/openai/_chat_model.py:205 and"
            " models/google.py:675; GoogleModel._map_tool_return, models/google.py:1503-1554): that user message is"
            " no message of the caller's"
        )
        for wire in ("openai_chat", "gemini")
        for check in ("roundtrip.request", "client.recorded_request")
        for scenario in ("audio", "text_and_audio", "embedded_blob")
    },
    # It maps MCP tool results itself: its MCP toolset turns a CallToolResult into the tool return's content
    # (_map_mcp_call_tool_result, pydantic_ai/mcp.py:2185-2247; the driver hands each result over the same way,
    # _mcp_content) and each model writes that content to its wire (text, and files where the API takes them).
    duties={
        "openai_chat": frozenset({"transport", "tool_schemas", "tool_results", "quirks"}),
        "anthropic": frozenset({"transport", "tool_schemas", "tool_results"}),
        "gemini": frozenset({"transport", "tool_schemas", "tool_results"}),
    },
    # documented behaviour, data rather than a failure: pydantic_ai/profiles/openai.py OpenAIJsonSchemaTransformer
    schema_rewrites={
        "openai_chat": "OpenAI strict mode where the schema allows it: additionalProperties false on every object, "
        "every property required"
    },
)
