"""Driver for pydantic-ai-slim 2.68.0 (extras openai, anthropic, google), in its own virtualenv.

It drives pydantic-ai at its model-request level (``pydantic_ai.direct.model_request`` and
``model_request_stream``), below the Agent: the history becomes pydantic-ai's own messages
(``ModelRequest`` with ``SystemPromptPart``/``UserPromptPart``/``ToolReturnPart``, ``ModelResponse``
with ``TextPart``/``ThinkingPart``/``ToolCallPart`` and their ``tool_call_id``), the tools
``ToolDefinition``s. A failed tool result is a ``ToolReturnPart`` with ``outcome='retried'``: what
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

from anthropic import AsyncAnthropic
from google.genai.types import HttpRetryOptions
from openai import AsyncOpenAI
from pydantic_ai import exceptions as exc_
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
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
from _convert import finish_reason, kind_for_class, tool_call

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
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)

KEY = "pydantic_ai"
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
        elif isinstance(item, Image) and item.data is not None:
            out.append(BinaryContent(data=base64.b64decode(item.data), media_type=item.media_type))
        elif isinstance(item, Image) and item.url:
            out.append(ImageUrl(url=item.url))
        elif isinstance(item, Resource) and item.text is not None:
            out.append(item.text)
    return out


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
                    items = _items(r.content)
                    content = items[0] if len(items) == 1 else items
                    outcome = "retried" if r.is_error else "success"
                    returns.append(
                        ToolReturnPart(tool_name=r.name or "", content=content, tool_call_id=r.call_id, outcome=outcome)
                    )
            out.append(ModelRequest(parts=returns))
        else:
            parts: list[Any] = []
            provider_name = model.system  # the provider that answered: this wire's
            for p in message.parts:
                saved = _saved(p)
                provider_name = saved.pop("provider_name", None) or provider_name
                details = saved.get("provider_details")
                if isinstance(p, Text):
                    parts.append(TextPart(content=p.text, provider_details=details))
                elif isinstance(p, Reasoning):
                    parts.append(
                        ThinkingPart(
                            content=p.text,
                            signature=p.signature,
                            id=saved.get("id"),
                            provider_name=saved.get("part_provider_name") or provider_name,
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
    if call.max_tokens is not None:
        settings["max_tokens"] = call.max_tokens
    if call.parallel_tool_calls is not None:
        settings["parallel_tool_calls"] = call.parallel_tool_calls
    if call.tool_choice in ("auto", "none", "required"):
        settings["tool_choice"] = call.tool_choice
    elif call.tool_choice is not None:
        settings["tool_choice"] = [call.tool_choice]
    return settings


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


def _response(response: ModelResponse) -> Response:
    parts: list[Any] = []
    for part in response.parts:
        keep = _keep(response, part)
        if isinstance(part, TextPart):
            parts.append(Text(text=part.content, provider_details={KEY: keep}))
        elif isinstance(part, ThinkingPart):
            parts.append(Reasoning(text=part.content, signature=part.signature, provider_details={KEY: keep}))
        elif isinstance(part, ToolCallPart):
            parts.append(_tool_call(part, keep))
    # pydantic-ai gives no normalized reason for a reason outside its set (Anthropic pause_turn, Gemini OTHER:
    # messages.py FinishReason): "other", as the stream below reads it
    reason = finish_reason(FINISH, response.finish_reason) if response.finish_reason else "other"
    return Response(parts=tuple(parts), finish_reason=reason)


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
                    yield ReasoningDelta(part.content)
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
                elif isinstance(delta, ThinkingPartDelta) and (delta.content_delta or delta.signature_delta):
                    yield ReasoningDelta(delta.content_delta or "", signature=delta.signature_delta)
                elif isinstance(delta, ToolCallPartDelta) and isinstance(delta.args_delta, str) and delta.args_delta:
                    chunked.add(calls[event.index])
                    yield ToolCallChunk(calls[event.index], delta.args_delta)
        final = _response(stream.get())
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
    return _response(response)


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
)


def error_info(exc: BaseException) -> ErrorInfo | None:
    kind = kind_for_class(exc, ERRORS)
    if kind is None:
        return None
    status = getattr(exc, "status_code", None)
    code = getattr(exc, "provider_error_code", None) or getattr(exc, "provider_error_type", None)
    retry_after = getattr(exc, "retry_after", None)  # pydantic-ai reads the headers itself
    return ErrorInfo(kind=kind, message=str(exc), status=status, retry_after=retry_after, code=code)


COMMON = frozenset(
    "streaming parallel_tool_calls system_prompt tool_choice_auto tool_choice_none tool_choice_required"
    " tool_choice_named reasoning_replay".split()
)
CLIENT = SimpleClient(
    name="pydantic-ai",
    wires={
        "openai_chat": (COMMON - {"reasoning_replay"}) | {"disable_parallel_tool_calls", "call_ids"},
        "anthropic": COMMON
        | {"disable_parallel_tool_calls", "call_ids", "images_in_tool_results", "is_error_in_tool_results"},
        "gemini": COMMON | {"images_in_tool_results", "is_error_in_tool_results"},
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
    },
    duties={
        "openai_chat": frozenset({"transport", "tool_schemas", "quirks"}),
        "anthropic": frozenset({"transport", "tool_schemas"}),
        "gemini": frozenset({"transport", "tool_schemas"}),
    },
    # documented behaviour, data rather than a failure: pydantic_ai/profiles/openai.py OpenAIJsonSchemaTransformer
    schema_rewrites={
        "openai_chat": "OpenAI strict mode where the schema allows it: additionalProperties false on every object, "
        "every property required"
    },
)
