"""Wire builders and invariance checks shared by the prompt-adapter tests.

Bodies and chunks have the documented OpenAI Chat shapes (wire-formats.md §1c/§1d; openai-python
``chat_completion.py``, ``chat_completion_chunk.py``): the model's text travels in
``choices[0].message.content`` or in ``delta.content`` fragments, then a ``finish_reason``, then
``data: [DONE]``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from conformance.assembly import fold, lifecycle_problems
from conformance.model import Response, StreamEvent, TextDelta

__all__ = ["body", "check_reply", "coalesce", "events", "split_events", "sse"]


def body(content: str | None, finish: str = "stop", **message: Any) -> dict[str, Any]:
    """A non-streamed ``chat.completion``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "qwen2.5-7b-instruct",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content, **message}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
    }


def sse(deltas: Sequence[str], finish: str | None = "stop", *, done: bool = True) -> bytes:
    """A ``stream: true`` reply whose text arrives as ``deltas``."""
    chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]} for d in deltas]
    if finish is not None:
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}})
    lines = [json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", **c}) for c in chunks]
    lines += ["[DONE]"] if done else []
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def events(adapter: ModuleType, deltas: Sequence[str], finish: str | None = "stop") -> list[StreamEvent]:
    return list(adapter.stream_from_wire([sse(deltas, finish)]))


def coalesce(stream: Sequence[StreamEvent]) -> list[StreamEvent]:
    """Adjacent text deltas joined: what does not depend on where the text was split."""
    out: list[StreamEvent] = []
    for event in stream:
        if isinstance(event, TextDelta) and out and isinstance(out[-1], TextDelta):
            out[-1] = TextDelta(out[-1].text + event.text)
        else:
            out.append(event)
    return out


def split_events(adapter: ModuleType, reply: str, cuts: Sequence[int], finish: str = "stop") -> list[StreamEvent]:
    bounds = [0, *sorted(set(cuts)), len(reply)]
    return events(adapter, [reply[a:b] for a, b in itertools.pairwise(bounds) if b > a], finish)


def check_reply(adapter: ModuleType, reply: str, finish: str = "stop") -> Response:
    """Every invariant of one reply; returns the non-streamed response.

    - the one-delta stream follows the lifecycle and folds to the non-streamed response;
    - every 2-way split and the one-character stream give the same events once adjacent text
      deltas are joined, and each follows the lifecycle;
    - splitting the SSE *bytes* of the one-character stream anywhere changes nothing at all.
    """
    response = adapter.response_from_wire(body(reply, finish))
    whole = events(adapter, [reply], finish)
    assert lifecycle_problems(whole) == [], whole
    folded = fold(whole)
    assert (folded.parts, folded.finish_reason, folded.usage) == (
        response.parts,
        response.finish_reason,
        response.usage,
    )
    expected = coalesce(whole)
    for cut in range(1, len(reply)):
        split = split_events(adapter, reply, [cut], finish)
        assert lifecycle_problems(split) == [], (cut, split)
        assert coalesce(split) == expected, (cut, reply[:cut], reply[cut:])
    single = events(adapter, list(reply), finish)
    assert coalesce(single) == expected
    raw = sse(list(reply), finish)
    assert list(adapter.stream_from_wire(raw[i : i + 1] for i in range(len(raw)))) == single
    return response
