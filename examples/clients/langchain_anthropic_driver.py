"""Driver for langchain-anthropic 1.7.10 (``ChatAnthropic``), in its own virtualenv.

``ChatAnthropic(base_url=server, max_retries=0)`` (``base_url`` is the alias of
``anthropic_api_url``) with the tools bound by ``bind_tools``: ``tool_choice`` in its documented
spellings (``"auto"``, ``"any"`` for required, a tool name, the ``{"type": "none"}`` dict passed
through), ``parallel_tool_calls``. The history becomes LangChain messages: ``AIMessage`` content
blocks for thinking (with its signature) and text, ``tool_calls`` (``invalid_tool_calls`` for
arguments that did not parse), ``ToolMessage`` with ``status="error"`` for a failed result (which
langchain-anthropic sends as ``is_error``). Non-streamed turns use ``ainvoke``; streamed turns
``astream``, whose content blocks and ``tool_call_chunks`` become stream events, the chunks summed as
LangChain sums them: each call ends with the summed message's own parse of its arguments.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage, ToolMessage

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import ANTHROPIC_FINISH, StreamCalls, finish_reason
from _langchain import audio_gaps, ends, mcp_artifact, mcp_blocks, needs_mcp_mapping
from anthropic_driver import error_info as sdk_error_info

from conformance.clients.contract import Call, SimpleClient
from conformance.model import (
    ErrorInfo,
    Finish,
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

CHOICE = {"auto": "auto", "required": "any", "none": {"type": "none"}}


def _marked(block: dict[str, Any], cache_control: Any) -> dict[str, Any]:
    """``block`` with the caller's cache breakpoint: ChatAnthropic keeps ``cache_control`` on a text block, a
    system block and an Anthropic-format tool, and hoists it from a tool result's block onto the tool_result
    (chat_models.py:348-368, 507; "Prompt caching" in the ChatAnthropic docs,
    https://python.langchain.com/docs/integrations/chat/anthropic/#prompt-caching)."""
    return block | {"cache_control": dict(cache_control)} if cache_control else block


def _blocks(items: tuple[Any, ...]) -> str | list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Text):
            blocks.append(_marked({"type": "text", "text": item.text}, item.cache_control))
        elif isinstance(item, Resource) and item.text is not None:
            blocks.append({"type": "text", "text": item.text})
        elif isinstance(item, Image) and item.data is not None:
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": item.media_type, "data": item.data}}
            )
        elif isinstance(item, Image) and item.url:
            blocks.append({"type": "image", "source": {"type": "url", "url": item.url}})
    if len(blocks) == 1 and blocks[0]["type"] == "text" and "cache_control" not in blocks[0]:
        return blocks[0]["text"]
    return blocks


def _result(result: ToolResult) -> str | list[dict[str, Any]]:
    """A tool result's content, its breakpoint on its last block (which ChatAnthropic hoists onto the tool_result);
    an MCP result with more than text as the blocks LangChain's MCP adapters build (_langchain.py, ``mcp_blocks``)."""
    content = mcp_blocks(result) if needs_mcp_mapping(result) else _blocks(result.content)
    if not result.cache_control:
        return content
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return [*blocks[:-1], _marked(blocks[-1], result.cache_control)] if blocks else blocks


def _assistant(parts: tuple[Any, ...], wire: str) -> AIMessage:
    content: list[dict[str, Any]] = []
    for p in parts:
        if isinstance(p, Reasoning) and p.source not in (None, wire):
            # another provider's reasoning, in LangChain's own cross-provider form (the standard ``reasoning``
            # content block, langchain_core.messages.content.ReasoningContentBlock): ChatAnthropic decides
            content.append({"type": "reasoning", "reasoning": p.text})
        elif isinstance(p, Reasoning) and p.redacted is not None:
            content.append({"type": "redacted_thinking", "data": p.redacted})
        elif isinstance(p, Reasoning):
            content.append({"type": "thinking", "thinking": p.text, "signature": p.signature or ""})
        elif isinstance(p, Text):
            content.append({"type": "text", "text": p.text})
        elif isinstance(p, ToolCall) and p.arguments is not None:
            # in its place among the blocks, as the AIMessage ChatAnthropic returns holds it (its content keeps the
            # answer's blocks in order, tool_use included): "If a tool_call with the same id as a tool_use content
            # block exists, the tool_call is preferred" there (chat_models.py:797-799), so thinking between calls
            # stays between them
            content.append({"type": "tool_use", "id": p.id, "name": p.name, "input": p.arguments})
    calls = [p for p in parts if isinstance(p, ToolCall)]
    return AIMessage(
        content=content,  # type: ignore[arg-type]
        tool_calls=[
            {"id": c.id, "name": c.name, "args": c.arguments, "type": "tool_call"}
            for c in calls
            if c.arguments is not None
        ],
        invalid_tool_calls=[
            {"id": c.id, "name": c.name, "args": c.arguments_raw, "error": c.arguments_error}
            for c in calls
            if c.arguments is None
        ],
    )


def _messages(call: Call) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    if call.system and call.system_cache_control:
        system = _marked({"type": "text", "text": call.system}, call.system_cache_control)
        out.append(SystemMessage(content=[system]))  # type: ignore[list-item]
    elif call.system:
        out.append(SystemMessage(content=call.system))
    for message in call.messages:
        if message.role == "user":
            out.append(HumanMessage(content=_blocks(message.parts)))  # type: ignore[arg-type]
        elif message.role == "assistant":
            out.append(_assistant(message.parts, call.wire))
        else:
            for r in message.parts:
                if isinstance(r, ToolResult):
                    status = "error" if r.is_error else "success"
                    artifact = mcp_artifact(r)  # the structured content the MCP adapters keep beside (never sent)
                    content = _result(r)
                    out.append(ToolMessage(content=content, artifact=artifact, tool_call_id=r.call_id, status=status))  # type: ignore[arg-type]
    return out


def _model(call: Call) -> Any:
    kwargs: dict[str, Any] = {"max_tokens": call.max_tokens} if call.max_tokens is not None else {}
    chat = ChatAnthropic(
        model=call.model,
        base_url=call.base_url,
        api_key=call.api_key,
        max_retries=0,  # the suite counts requests per turn: a hidden retry would eat the next turn's answer
        timeout=call.timeout,
        streaming=call.stream,
        **kwargs,
        **_thinking(call),
    )
    if not call.tools:
        return chat
    bind: dict[str, Any] = {}
    if call.tool_choice is not None:
        bind["tool_choice"] = CHOICE.get(call.tool_choice, call.tool_choice)
    if call.parallel_tool_calls is not None:
        bind["parallel_tool_calls"] = call.parallel_tool_calls
    tools = [
        _marked(
            {"name": t.name, "description": t.description or "", "input_schema": dict(t.input_schema)},
            t.cache_control,
        )
        for t in call.tools
    ]
    return chat.bind_tools(tools, **bind)


def _thinking(call: Call) -> dict[str, Any]:
    """The caller's reasoning settings as ChatAnthropic's fields: ``thinking`` (Anthropic's own dict, passed as
    given: ``{"type": "disabled"}``, ``{"type": "enabled", "budget_tokens": N}``; chat_models.py:1476) and
    ``effort`` ("Configures output_config.effort", chat_models.py:1526-1535)."""
    settings = call.reasoning
    if settings is None:
        return {}
    if not settings.enabled:
        return {"thinking": {"type": "disabled"}}
    out: dict[str, Any] = {}
    if settings.budget_tokens is not None:
        out["thinking"] = {"type": "enabled", "budget_tokens": settings.budget_tokens}
    if settings.effort is not None:
        out["effort"] = settings.effort
    return out


def _response(message: AIMessage, wire: str) -> Response:
    """The message's content blocks in their order, each ``tool_use`` block as the call LangChain parsed from it
    (``tool_calls``, or ``invalid_tool_calls`` for arguments that did not parse), so thinking between two calls
    stays between them; calls without a block of their own follow."""
    calls: dict[str, ToolCall] = {}
    for c in message.tool_calls:
        args = c["args"]
        calls[c["id"] or ""] = ToolCall(
            id=c["id"] or "", name=c["name"], arguments=args, arguments_raw=json.dumps(args)
        )
    for c in message.invalid_tool_calls:
        calls[c["id"] or ""] = ToolCall(
            id=c["id"] or "", name=c["name"] or "", arguments_raw=c["args"] or "", arguments_error=c["error"]
        )
    parts: list[Any] = []
    blocks = message.content if isinstance(message.content, list) else [{"type": "text", "text": message.content}]
    for block in blocks:
        if isinstance(block, str):
            parts.append(Text(text=block))
        elif block.get("type") == "thinking":
            parts.append(Reasoning(text=block.get("thinking", ""), signature=block.get("signature"), source=wire))
        elif block.get("type") == "redacted_thinking":
            parts.append(Reasoning(redacted=block.get("data"), source=wire))
        elif block.get("type") == "text" and block.get("text"):
            parts.append(Text(text=block["text"]))
        elif block.get("type") == "tool_use" and block.get("id") in calls:
            parts.append(calls.pop(block["id"]))
    parts += calls.values()
    raw_reason = message.response_metadata.get("stop_reason")
    has_calls = any(isinstance(p, ToolCall) for p in parts)
    return Response(parts=tuple(parts), finish_reason=finish_reason(ANTHROPIC_FINISH, raw_reason, has_calls=has_calls))


async def _events(model: Any, messages: list[BaseMessage], wire: str) -> AsyncIterator[StreamEvent]:
    calls = StreamCalls()  # keyed by the chunk's index
    reason: str | None = None
    gathered: AIMessageChunk | None = None
    async for chunk in model.astream(messages):
        # LangChain collects a stream by summing its chunks (``AIMessageChunk.__add__`` merges the tool call
        # chunks of one index: reference.langchain.com/python/langchain-core/messages/tool/ToolCallChunk);
        # the sum's ``tool_calls`` are the calls a user runs
        gathered = chunk if gathered is None else gathered + chunk
        blocks = chunk.content if isinstance(chunk.content, list) else [{"type": "text", "text": chunk.content}]
        for block in blocks:
            if isinstance(block, str) and block:
                yield TextDelta(block)
            elif not isinstance(block, dict):
                continue
            elif block.get("type") == "text" and block.get("text"):
                yield TextDelta(block["text"])
            elif block.get("type") == "thinking" and (block.get("thinking") or block.get("signature")):
                yield ReasoningDelta(block.get("thinking", ""), signature=block.get("signature") or None, source=wire)
            elif block.get("type") == "redacted_thinking":
                yield ReasoningDelta(redacted=block.get("data"), source=wire)
        for c in chunk.tool_call_chunks:
            for event in calls.piece(c.get("index") or 0, c.get("id") or "", c.get("name") or "", c.get("args") or ""):
                yield event
        reason = chunk.response_metadata.get("stop_reason") or reason
    for event in ends(calls, gathered):
        yield event
    if reason is not None:  # a finish only where LangChain gave Anthropic's stop reason
        yield Finish(finish_reason(ANTHROPIC_FINISH, reason, has_calls=calls.any), reason)


async def complete(call: Call) -> Response | AsyncIterator[StreamEvent]:
    model = _model(call)
    if call.stream:
        return _events(model, _messages(call), call.wire)
    return _response(await model.ainvoke(_messages(call)), call.wire)


def error_info(exc: BaseException) -> ErrorInfo | None:
    # langchain-anthropic raises LangChain's classified errors, each also the anthropic SDK's class
    # (chat_models.py:1217-1260: ``AnthropicRateLimitError(anthropic.RateLimitError, ModelRateLimitError)`` ...;
    # ``_handle_anthropic_api_error``, chat_models.py:1289), and lets an SDK error it does not classify out
    # as the SDK raised it: the kinds are the anthropic driver's, and LangChain's own ``ContextOverflowError``
    # (more specific than the SDK's ``BadRequestError`` it also is) is ``context_length``.
    info = sdk_error_info(exc)
    if info is not None and isinstance(exc, ContextOverflowError):
        return replace(info, kind="context_length")
    return info


CLIENT = SimpleClient(
    name="langchain-anthropic",
    wires={
        "anthropic": frozenset(
            "streaming parallel_tool_calls disable_parallel_tool_calls system_prompt call_ids reasoning_replay"
            " tool_choice_auto tool_choice_none tool_choice_required tool_choice_named images_in_tool_results"
            " is_error_in_tool_results reasoning_effort reasoning_budget reasoning_off cache_control".split()
        )
    },
    complete=complete,
    error_info=error_info,
    known_gaps=audio_gaps("anthropic"),
    # ``bind_tools`` converts with ``convert_to_anthropic_tool``, which passes an Anthropic-format tool through
    # as given (chat_models.py:3226): names and schemas are left to the caller.
    # MCP tool results reach a LangChain user as the MCP adapters' standard content blocks (_langchain.py),
    # which the integration writes to its wire (ChatAnthropic's _format_messages, chat_models.py:716):
    # it takes on what the blocks become there.
    duties=frozenset({"transport", "tool_results"}),
)
