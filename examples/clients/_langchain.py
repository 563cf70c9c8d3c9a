"""What the LangChain drivers share: a streamed call ended with LangChain's own parse of its arguments.

Imported by ``langchain_openai_driver`` and ``langchain_anthropic_driver`` (each in its own virtualenv, both
with ``langchain_core``), beside ``_convert``.
"""

from __future__ import annotations

from collections.abc import Iterator

from _convert import StreamCalls
from langchain_core.messages import AIMessageChunk

from conformance.model import StreamEvent

__all__ = ["ends"]


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
