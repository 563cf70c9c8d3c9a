"""Driver for langchain-openai 1.7.4 (``ChatOpenAI``), in its own virtualenv.

``ChatOpenAI(base_url=server + "/v1", max_retries=0)`` with the tools bound by ``bind_tools``
(``tool_choice``, ``parallel_tool_calls``); the history becomes LangChain messages
(``SystemMessage``, ``HumanMessage``, ``AIMessage`` with ``tool_calls`` (and
``invalid_tool_calls`` for a call whose arguments did not parse), ``ToolMessage`` with
``tool_call_id`` and ``status="error"`` for a failed result). Non-streamed turns use ``ainvoke``;
streamed turns ``astream``, whose ``AIMessageChunk.tool_call_chunks`` and text become stream events,
the chunks summed as LangChain sums them. LangChain parses arguments itself (the summed message's
``tool_calls``, with ``parse_partial_json``): a call that did not parse is in ``invalid_tool_calls``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _convert import CHAT_FINISH, StreamCalls, finish_reason
from _langchain import audio_gaps, ends, mcp_artifact, mcp_blocks, needs_mcp_mapping
from openai_driver import error_info as sdk_error_info

from conformance.clients.contract import Call, SimpleClient
from conformance.model import (
    ErrorInfo,
    Finish,
    Image,
    Reasoning,
    Resource,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolResult,
)


def _blocks(items: tuple[Any, ...]) -> str | list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Text):
            blocks.append({"type": "text", "text": item.text})
        elif isinstance(item, Resource) and item.text is not None:
            blocks.append({"type": "text", "text": item.text})
        elif isinstance(item, Image):
            url = item.url or f"data:{item.media_type};base64,{item.data}"
            blocks.append({"type": "image_url", "image_url": {"url": url}})
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _messages(call: Call) -> list[BaseMessage]:
    out: list[BaseMessage] = [SystemMessage(content=call.system)] if call.system else []
    for message in call.messages:
        if message.role == "user":
            out.append(HumanMessage(content=_blocks(message.parts)))
        elif message.role == "assistant":
            calls = [p for p in message.parts if isinstance(p, ToolCall)]
            out.append(
                AIMessage(
                    content=_assistant_content(message.parts),
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
            )
        else:
            for r in message.parts:
                if isinstance(r, ToolResult) and needs_mcp_mapping(r):
                    # an MCP result with more than text: the ToolMessage LangChain's MCP adapters build (_langchain.py)
                    status = "error" if r.is_error else "success"
                    content: Any = mcp_blocks(r)
                    artifact = mcp_artifact(r)
                    out.append(ToolMessage(content=content, artifact=artifact, tool_call_id=r.call_id, status=status))
                elif isinstance(r, ToolResult):
                    status = "error" if r.is_error else "success"
                    out.append(ToolMessage(content=_blocks(r.content), tool_call_id=r.call_id, status=status))
    return out


def _assistant_content(parts: tuple[Any, ...]) -> Any:
    """An assistant message's text, with its reasoning as LangChain's own cross-provider form: a ``reasoning``
    content block (langchain_core.messages.content.ReasoningContentBlock), whatever wire produced it. ChatOpenAI
    surfaces no reasoning of its own to keep (base.py:1-12: ``reasoning_content`` and ``reasoning_details`` "are
    not extracted or preserved"), so this is the form a LangChain user has; ChatOpenAI decides what to send."""
    text = "".join(p.text for p in parts if isinstance(p, Text))
    reasoning = [{"type": "reasoning", "reasoning": p.text} for p in parts if isinstance(p, Reasoning) and p.text]
    if not reasoning:
        return text
    return [*reasoning, *([{"type": "text", "text": text}] if text else [])]


def _model(call: Call) -> Any:
    chat = ChatOpenAI(
        model=call.model,
        base_url=call.base_url + "/v1",
        api_key=call.api_key,
        max_retries=0,  # the suite counts requests per turn: a hidden retry would eat the next turn's answer
        timeout=call.timeout,
        max_tokens=call.max_tokens,
        streaming=call.stream,
        # "Constrains effort on reasoning for reasoning models. For use with the Chat Completions API"
        # (base.py:950; minimal, low, medium, high): no documented off or token budget
        reasoning_effort=call.reasoning.effort if call.reasoning is not None else None,
    )
    if not call.tools:
        return chat
    kwargs: dict[str, Any] = {}
    if call.tool_choice is not None:
        kwargs["tool_choice"] = call.tool_choice
    if call.parallel_tool_calls is not None:
        kwargs["parallel_tool_calls"] = call.parallel_tool_calls
    tools = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description or "", "parameters": dict(t.input_schema)},
        }
        for t in call.tools
    ]
    return chat.bind_tools(tools, **kwargs)


def _response(message: AIMessage) -> Response:
    parts: list[Any] = []
    text = message.text
    if text:
        parts.append(Text(text=text))
    raw = {c.get("id"): c["function"].get("arguments") or "" for c in message.additional_kwargs.get("tool_calls", [])}
    for c in message.tool_calls:
        parts.append(
            ToolCall(id=c["id"] or "", name=c["name"], arguments=c["args"], arguments_raw=raw.get(c["id"]) or "")
        )
    for c in message.invalid_tool_calls:
        parts.append(
            ToolCall(id=c["id"] or "", name=c["name"] or "", arguments_raw=c["args"] or "", arguments_error=c["error"])
        )
    raw_reason = message.response_metadata.get("finish_reason")
    has_calls = any(isinstance(p, ToolCall) for p in parts)
    return Response(parts=tuple(parts), finish_reason=finish_reason(CHAT_FINISH, raw_reason, has_calls=has_calls))


async def _events(model: Any, messages: list[BaseMessage]) -> AsyncIterator[StreamEvent]:
    calls = StreamCalls()  # keyed by the chunk's index
    reason: str | None = None
    gathered: AIMessageChunk | None = None
    async for chunk in model.astream(messages):
        # LangChain collects a stream by summing its chunks (``AIMessageChunk.__add__`` merges the tool call
        # chunks of one index: reference.langchain.com/python/langchain-core/messages/tool/ToolCallChunk);
        # the sum's ``tool_calls`` are the calls a user runs
        gathered = chunk if gathered is None else gathered + chunk
        if chunk.text:
            yield TextDelta(chunk.text)
        for c in chunk.tool_call_chunks:
            for event in calls.piece(c.get("index") or 0, c.get("id") or "", c.get("name") or "", c.get("args") or ""):
                yield event
        reason = chunk.response_metadata.get("finish_reason") or reason
    for event in ends(calls, gathered):
        yield event
    if reason is not None:  # a finish only where LangChain gave its reason
        yield Finish(finish_reason(CHAT_FINISH, reason, has_calls=calls.any), reason)


async def complete(call: Call) -> Response | AsyncIterator[StreamEvent]:
    model = _model(call)
    if call.stream:
        return _events(model, _messages(call))
    return _response(await model.ainvoke(_messages(call)))


def error_info(exc: BaseException) -> ErrorInfo | None:
    # langchain-openai raises LangChain's classified errors, each also the openai SDK's class
    # (chat_models/base.py:660-720: ``OpenAIRateLimitError(openai.RateLimitError, ModelRateLimitError)`` ...),
    # and lets an SDK error it does not classify out as the SDK raised it: the kinds are the openai
    # driver's, and LangChain's own ``ContextOverflowError`` (more specific than the SDK's
    # ``BadRequestError`` it also is) is ``context_length``.
    info = sdk_error_info(exc)
    if info is not None and isinstance(exc, ContextOverflowError):
        return replace(info, kind="context_length")
    return info


CLIENT = SimpleClient(
    name="langchain-openai",
    wires={
        "openai_chat": frozenset(
            "streaming parallel_tool_calls disable_parallel_tool_calls system_prompt call_ids tool_choice_auto"
            " tool_choice_none tool_choice_required tool_choice_named reasoning_effort".split()
        )
    },
    complete=complete,
    error_info=error_info,
    # Reasoning fields outside OpenAI's spec are neither read nor sent back, by design: "Non-standard response
    # fields added by third-party providers (e.g., reasoning_content, reasoning_details) are not extracted or
    # preserved ... use the corresponding provider-specific LangChain package instead (e.g., ChatDeepSeek,
    # ChatOpenRouter)" (langchain_openai/chat_models/base.py:1-12; reading: _convert_dict_to_message, base.py:220-262;
    # sending: a standard ``reasoning`` block is dropped for Chat Completions, chat_models/_compat.py:185-186), and
    # the maintainers decline to change it (langchain-ai/langchain#35411: "Please use langchain-deepseek,
    # langchain-openrouter, or other compatible provider"). So ``reasoning_replay`` is not declared: the scenarios
    # that judge what goes back are UNSUPPORTED.
    known_gaps={
        f"{check}@{scenarios}": (
            "ChatOpenAI neither reads nor sends back reasoning_content/reasoning/reasoning_details, as its module"
            " documents (langchain_openai/chat_models/base.py:1-12); use ChatDeepSeek or ChatOpenRouter"
        )
        for check, scenarios in (
            ("roundtrip.reasoning", "*"),
            ("roundtrip.reasoning_replay", "*"),
        )
    }
    | audio_gaps("openai_chat")
    | {
        f"openai_chat:{check}@mcp/result_resource_link": (
            "LangChain refuses a file block given by URL on Chat Completions before sending: 'OpenAI Chat Completions"
            " does not support file URLs.' (ValueError, langchain_core/messages/block_translators/openai.py:128); the"
            " MCP adapters make a resource link such a block (_langchain.py)"
        )
        for check in ("client.typed_errors", "client.one_request")
    },
    # ``bind_tools`` takes "any tool definition handled by convert_to_openai_tool" (chat_models/base.py:2526):
    # a format conversion; an OpenAI-format tool goes out as given, so names and schemas are left to the caller.
    # MCP tool results reach a LangChain user as the MCP adapters' standard content blocks (_langchain.py),
    # which the integration writes to its wire (ChatOpenAI's _convert_message_to_dict, chat_models/base.py:476):
    # it takes on what the blocks become there.
    duties=frozenset({"transport", "tool_results"}),
)
