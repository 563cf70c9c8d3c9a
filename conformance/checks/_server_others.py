"""The ``server.*`` rules of the Anthropic Messages, Gemini and Ollama wires, whole and streamed.

Anthropic (wire-formats.md §3c-d; anthropic-sdk-python ``types/message.py``, ``_streaming.py``,
``lib/streaming/_messages.py``):

- framing: every event named by an ``event:`` line equal to its data's ``type`` (the SDK skips an
  event without one, ``anthropic/_streaming.py`` ``if sse.event is None: continue``); ``message_start``
  first; a block's ``content_block_start`` before its deltas and ``content_block_stop`` after them;
  ``message_delta`` after the last block's stop and before ``message_stop``, which ends the stream.
  ``ping`` may come anywhere; an event type the SDK does not know is ignored (§3d).
- ids: the message ``id``; block indices 0, 1, 2 ... in the order the blocks start (the SDK's
  accumulator reads ``content[event.index]``); each ``tool_use`` id present and unique.
- arguments: a tool_use block's ``input`` is an object; streamed, its ``input_json_delta``
  ``partial_json`` joined parse as one (all empty means ``{}``, §3d), unless ``max_tokens`` cut it.
- finish: ``stop_reason`` ``tool_use`` when tool_use blocks came back (or ``max_tokens``, which may
  cut one), and not ``tool_use`` without them; a whole answer always has one (the Messages API
  reference: non-null in non-streaming mode); streamed, ``message_delta`` carries it.
- usage: ``input_tokens`` and ``output_tokens`` (whole; streamed, ``message_start``'s usage and
  ``message_delta``'s cumulative ``output_tokens``).

Gemini (§4c-d; google-genai ``types.GenerateContentResponse``):

- framing: SSE ``data:`` events (with ``alt=sse``), or one JSON array; no ``[DONE]``; the last chunk's
  candidates carry a ``finishReason``.
- ids: ``responseId`` (optional) the same on every chunk; a ``functionCall.id`` is optional, and
  unique when given.
- arguments: ``functionCall.args`` an object when given (absent means none, §4c).
- finish: each candidate of a whole answer, and of the last chunk, has a ``finishReason``.
- usage: ``usageMetadata`` present (streamed: the last chunk that has it), ``totalTokenCount`` =
  ``promptTokenCount`` + ``candidatesTokenCount`` + ``thoughtsTokenCount`` + ``toolUsePromptTokenCount``
  (absent counts are 0; §4c: the total includes thoughts).

Ollama (§5c-d; ollama-python ``ChatResponse``):

- framing: NDJSON lines; the last one ``done: true``, none before it, nothing after it.
- ids: none on the wire; a tool call ``id``, when sent, unique.
- arguments: ``function.arguments`` an object (the SDK types it a mapping).
- finish: the final object has ``done: true`` and a ``done_reason``.
- usage: the final object's ``prompt_eval_count``/``eval_count`` (Ollama's ``api.Metrics`` omits a
  zero count, so one may be absent; both absent is a defect).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.checks._server_read import (
    Collector,
    Frame,
    dict_of,
    int_of,
    is_text,
    judge_arguments,
    judge_call_id,
    list_of,
    quote,
)

__all__ = ["anthropic_stream", "anthropic_whole", "gemini_stream", "gemini_whole", "ollama_stream", "ollama_whole"]


# --------------------------------------------------------------------------------------------
# Anthropic
# --------------------------------------------------------------------------------------------


def _anthropic_finish(out: Collector, path: str, stop: Any, tool_uses: int, *, whole: bool) -> None:
    out.judge("server.finish")
    if stop is None:
        out.add(
            "server.finish",
            path,
            "no stop_reason "
            + ("on a whole answer (the API sends one unless streaming)" if whole else "in message_delta"),
            expected="a stop reason",
            remedy="send stop_reason (end_turn, tool_use, max_tokens ...)",
        )
    elif tool_uses and stop not in ("tool_use", "max_tokens", "pause_turn"):
        out.add(
            "server.finish",
            path,
            f"stop_reason {stop!r} with {tool_uses} tool_use block(s): a turn that calls tools stops with tool_use",
            expected="tool_use",
            actual=stop,
            remedy="say tool_use when the content carries tool_use blocks",
        )
    elif not tool_uses and stop == "tool_use":
        out.add(
            "server.finish",
            path,
            "stop_reason tool_use, but the content carries no tool_use block",
            expected="end_turn",
            actual=stop,
        )


def _anthropic_usage(out: Collector, path: str, usage: Any, keys: tuple[str, ...]) -> None:
    out.judge("server.usage")
    usage = dict_of(usage)
    for key in keys:
        if int_of(usage.get(key)) is None:
            out.add(
                "server.usage",
                f"{path}.{key}",
                f"usage.{key} missing (anthropic-sdk-python types/usage.py requires it)",
                expected="an integer",
                actual=usage.get(key),
                remedy="report input_tokens and output_tokens",
            )


def anthropic_whole(value: Any, request: Mapping[str, Any], out: Collector) -> None:
    """A whole Messages answer."""
    body = dict_of(value)
    out.judge("server.ids", "server.arguments", "server.finish", "server.usage")
    if not is_text(body.get("id")):
        out.add("server.ids", "$.id", "the message has no id", expected="an id", actual=body.get("id"))
    seen: dict[str, str] = {}
    uses = 0
    for i, block in enumerate(list_of(body.get("content"))):
        block = dict_of(block)
        if block.get("type") == "tool_use":
            uses += 1
            judge_call_id(out, f"$.content[{i}].id", block.get("id"), seen)
            if not isinstance(block.get("input"), Mapping):
                out.add(
                    "server.arguments",
                    f"$.content[{i}].input",
                    "a tool_use input that is not an object",
                    expected="an object",
                    actual=quote(repr(block.get("input")), 120),
                )
    _anthropic_finish(out, "$.stop_reason", body.get("stop_reason"), uses, whole=True)
    _anthropic_usage(out, "$.usage", body.get("usage"), ("input_tokens", "output_tokens"))


def anthropic_stream(frames: Sequence[Frame], request: Mapping[str, Any], out: Collector) -> None:
    """A streamed Messages answer."""
    out.judge("server.framing", "server.ids", "server.arguments", "server.finish", "server.usage")
    events = [f for f in frames if isinstance(f.value, Mapping) and f.value.get("type") != "error"]
    for frame in events:
        kind = frame.value.get("type")
        if frame.event is None:
            out.add(
                "server.framing",
                f"stream[{frame.index}].event",
                f"a {kind!r} event without an event: line: anthropic-sdk-python skips such events"
                " (anthropic/_streaming.py)",
                expected=kind,
                remedy="send event: <type> before each data: line",
            )
        elif frame.event != kind:
            out.add(
                "server.framing",
                f"stream[{frame.index}].event",
                f"event: {frame.event} but the data's type is {kind!r}",
                expected=kind,
                actual=frame.event,
            )
    events = [f for f in events if f.value.get("type") != "ping"]
    if not events:
        out.add("server.framing", "stream[0]", "a stream without a single event", expected="message_start")
        return
    if events[0].value.get("type") != "message_start":
        out.add(
            "server.framing",
            f"{events[0].path}.type",
            "the first event is not message_start",
            expected="message_start",
            actual=events[0].value.get("type"),
        )
    stop = next((f for f in events if f.value.get("type") == "message_stop"), None)
    if stop is None:
        out.add(
            "server.framing",
            f"stream[{len(frames)}]",
            "the stream ends without message_stop",
            expected="message_stop",
            remedy="end the stream with event: message_stop",
        )
    else:
        rest = [f for f in frames[stop.index + 1 :] if dict_of(f.value).get("type") != "ping"]
        if rest:
            out.add(
                "server.framing",
                f"stream[{rest[0].index}]",
                f"an event after message_stop ({quote(rest[0].data, 80)})",
                expected="nothing after message_stop",
                actual=quote(rest[0].data, 80),
            )
    blocks: dict[int, dict[str, Any]] = {}
    seen: dict[str, str] = {}
    delta: Frame | None = None
    start_usage: Any = None
    for frame in events:
        event = frame.value
        kind = event.get("type")
        index = int_of(event.get("index"))
        if kind == "message_start":
            message = dict_of(event.get("message"))
            start_usage = message.get("usage")
            if not is_text(message.get("id")):
                path = f"{frame.path}.message.id"
                out.add("server.ids", path, "the message has no id", expected="an id", actual=message.get("id"))
        elif kind == "content_block_start" and index is not None:
            block = dict_of(event.get("content_block"))
            if index in blocks:
                path = f"{frame.path}.index"
                out.add("server.ids", path, f"block index {index} started twice", expected=len(blocks), actual=index)
                continue
            if index != len(blocks):
                out.add(
                    "server.ids",
                    f"{frame.path}.index",
                    f"block index {index} where {len(blocks)} is next: blocks are numbered from 0 in order"
                    " (the SDK's accumulator reads content[index])",
                    expected=len(blocks),
                    actual=index,
                )
            if delta is not None:
                words = "a block starts after message_delta"
                out.add("server.framing", f"{frame.path}.type", words, expected="no block after message_delta")
            blocks[index] = {"type": block.get("type"), "path": frame.path, "json": [], "stopped": False}
            if block.get("type") == "tool_use":
                judge_call_id(out, f"{frame.path}.content_block.id", block.get("id"), seen)
        elif kind in ("content_block_delta", "content_block_stop") and index is not None:
            if index not in blocks:
                out.add(
                    "server.framing",
                    f"{frame.path}.index",
                    f"{kind} for block {index} before its content_block_start",
                    expected="content_block_start first",
                    actual=index,
                )
                continue
            block = blocks[index]
            if block["stopped"]:
                out.add(
                    "server.framing",
                    f"{frame.path}.index",
                    f"{kind} for block {index} after its content_block_stop",
                    expected="nothing after content_block_stop",
                    actual=index,
                )
            if kind == "content_block_stop":
                block["stopped"] = True
            else:
                part = dict_of(event.get("delta"))
                if part.get("type") == "input_json_delta" and isinstance(part.get("partial_json"), str):
                    block["json"].append(part["partial_json"])
        elif kind == "message_delta":
            open_blocks = [i for i, b in blocks.items() if not b["stopped"]]
            if open_blocks:
                out.add(
                    "server.framing",
                    f"{frame.path}.type",
                    f"message_delta while block {open_blocks[0]} has no content_block_stop",
                    expected="content_block_stop first",
                    actual=kind,
                )
            delta = frame
        elif kind == "message_stop" and delta is None:
            out.add(
                "server.framing",
                f"{frame.path}.type",
                "message_stop without a message_delta before it (the stop_reason and final usage come in it)",
                expected="message_delta",
                actual=kind,
            )
    stop_reason = dict_of(dict_of(delta.value).get("delta")).get("stop_reason") if delta else None
    uses = [b for b in blocks.values() if b["type"] == "tool_use"]
    if stop_reason != "max_tokens":
        for block in uses:
            joined = "".join(block["json"])
            judge_arguments(out, f"{block['path']}.partial_json", joined or "{}")
    if delta is not None:
        _anthropic_finish(out, f"{delta.path}.delta.stop_reason", stop_reason, len(uses), whole=False)
        _anthropic_usage(out, f"{delta.path}.usage", dict_of(delta.value).get("usage"), ("output_tokens",))
    else:
        out.judge("server.finish")
    if start_usage is not None or events[0].value.get("type") == "message_start":
        _anthropic_usage(out, f"{events[0].path}.message.usage", start_usage, ("input_tokens", "output_tokens"))


# --------------------------------------------------------------------------------------------
# Gemini
# --------------------------------------------------------------------------------------------


def _gemini_calls(out: Collector, prefix: str, body: Mapping[str, Any], seen: dict[str, str]) -> None:
    out.judge("server.ids", "server.arguments")
    for c, candidate in enumerate(list_of(body.get("candidates"))):
        parts = list_of(dict_of(dict_of(candidate).get("content")).get("parts"))
        for p, part in enumerate(parts):
            call = dict_of(part).get("functionCall")
            if not isinstance(call, Mapping):
                continue
            path = f"{prefix}.candidates[{c}].content.parts[{p}].functionCall"
            if call.get("id") is not None:
                judge_call_id(out, f"{path}.id", call.get("id"), seen)
            if "args" in call and not isinstance(call.get("args"), Mapping):
                out.add(
                    "server.arguments",
                    f"{path}.args",
                    "functionCall.args is not an object",
                    expected="an object",
                    actual=quote(repr(call.get("args")), 120),
                )


def _gemini_finish(out: Collector, prefix: str, body: Mapping[str, Any], what: str) -> None:
    out.judge("server.finish")
    candidates = list_of(body.get("candidates"))
    if not candidates:
        out.add(
            "server.finish",
            f"{prefix}.candidates",
            f"{what} has no candidate",
            expected="a candidate with a finishReason",
        )
    for c, candidate in enumerate(candidates):
        if not dict_of(candidate).get("finishReason"):
            out.add(
                "server.finish",
                f"{prefix}.candidates[{c}].finishReason",
                f"{what}'s candidate has no finishReason",
                expected="a finish reason (STOP, MAX_TOKENS ...)",
                remedy="send finishReason on the last chunk of each candidate",
            )


def _gemini_usage(out: Collector, path: str, usage: Any) -> None:
    out.judge("server.usage")
    if not isinstance(usage, Mapping):
        out.add("server.usage", path, "no usageMetadata", expected="usageMetadata", remedy="report the token counts")
        return
    total = int_of(usage.get("totalTokenCount"))
    keys = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "toolUsePromptTokenCount")
    parts = [int_of(usage.get(k)) or 0 for k in keys]
    if total is not None and total != sum(parts):
        out.add(
            "server.usage",
            f"{path}.totalTokenCount",
            f"totalTokenCount {total} is not the sum of {', '.join(keys)} ({' + '.join(map(str, parts))})",
            expected=sum(parts),
            actual=total,
            remedy="totalTokenCount counts the prompt, the candidates, the thoughts and the tool-use prompt",
        )


def gemini_whole(value: Any, request: Mapping[str, Any], out: Collector) -> None:
    """A whole generateContent answer."""
    body = dict_of(value)
    _gemini_calls(out, "$", body, {})
    _gemini_finish(out, "$", body, "the answer")
    _gemini_usage(out, "$.usageMetadata", body.get("usageMetadata"))


def gemini_stream(frames: Sequence[Frame], request: Mapping[str, Any], out: Collector) -> None:
    """A streamed generateContent answer (SSE or one JSON array)."""
    out.judge("server.framing", "server.ids", "server.arguments", "server.finish", "server.usage")
    for frame in frames:
        if frame.data == "[DONE]":
            out.add(
                "server.framing",
                f"stream[{frame.index}]",
                "data: [DONE] on a Gemini stream: the wire has none, and google-genai parses every data line as JSON",
                expected="no [DONE]",
                actual="[DONE]",
            )
    chunks = [f for f in frames if isinstance(f.value, Mapping) and not f.value.get("error")]
    if not chunks:
        out.add("server.framing", "stream[0]", "a stream without a single chunk", expected="a chunk")
        return
    response_id: str | None = None
    seen: dict[str, str] = {}
    for frame in chunks:
        rid = frame.value.get("responseId")
        if rid is not None:
            if response_id is None:
                response_id = rid
            elif rid != response_id:
                out.add(
                    "server.ids",
                    f"{frame.path}.responseId",
                    f"the responseId changes from {response_id!r} to {rid!r} within one stream",
                    expected=response_id,
                    actual=rid,
                )
        _gemini_calls(out, frame.path, frame.value, seen)
    _gemini_finish(out, chunks[-1].path, chunks[-1].value, "the last chunk")
    with_usage = [f for f in chunks if f.value.get("usageMetadata") is not None]
    if with_usage:
        _gemini_usage(out, f"{with_usage[-1].path}.usageMetadata", with_usage[-1].value.get("usageMetadata"))
    else:
        _gemini_usage(out, f"{chunks[-1].path}.usageMetadata", None)


# --------------------------------------------------------------------------------------------
# Ollama
# --------------------------------------------------------------------------------------------


def _ollama_final(out: Collector, prefix: str, body: Mapping[str, Any]) -> None:
    out.judge("server.finish", "server.usage")
    if body.get("done") is not True:
        words = "the final object does not say done: true"
        out.add("server.finish", f"{prefix}.done", words, expected=True, actual=body.get("done"))
    if not is_text(body.get("done_reason")):
        out.add(
            "server.finish",
            f"{prefix}.done_reason",
            "the final object has no done_reason (stop, length)",
            expected="a done reason",
            actual=body.get("done_reason"),
        )
    if "prompt_eval_count" not in body and "eval_count" not in body:
        out.add(
            "server.usage",
            f"{prefix}.eval_count",
            "neither prompt_eval_count nor eval_count on the final object",
            expected="the token counts",
            remedy="report prompt_eval_count and eval_count on the done object",
        )


def _ollama_calls(out: Collector, prefix: str, body: Mapping[str, Any], seen: dict[str, str]) -> None:
    out.judge("server.ids", "server.arguments")
    for k, call in enumerate(list_of(dict_of(body.get("message")).get("tool_calls"))):
        call = dict_of(call)
        path = f"{prefix}.message.tool_calls[{k}]"
        if call.get("id") is not None:
            judge_call_id(out, f"{path}.id", call.get("id"), seen)
        arguments = dict_of(call.get("function")).get("arguments")
        if not isinstance(arguments, Mapping):
            out.add(
                "server.arguments",
                f"{path}.function.arguments",
                "function.arguments is not an object (Ollama sends the arguments as a JSON object)",
                expected="an object",
                actual=quote(json.dumps(arguments), 120),
            )


def ollama_whole(value: Any, request: Mapping[str, Any], out: Collector) -> None:
    """A whole /api/chat answer (``stream: false``)."""
    body = dict_of(value)
    _ollama_calls(out, "$", body, {})
    _ollama_final(out, "$", body)


def ollama_stream(frames: Sequence[Frame], request: Mapping[str, Any], out: Collector) -> None:
    """A streamed /api/chat answer (NDJSON)."""
    out.judge("server.framing", "server.ids", "server.arguments", "server.finish", "server.usage")
    lines = [f for f in frames if isinstance(f.value, Mapping) and not f.value.get("error")]
    if not lines:
        out.add("server.framing", "stream[0]", "a stream without a single line", expected="a line")
        return
    done = next((f for f in lines if f.value.get("done") is True), None)
    if done is None:
        out.add(
            "server.framing",
            f"stream[{len(frames)}]",
            "the stream ends without a line that says done: true",
            expected="done: true",
            remedy="end the stream with the done object",
        )
    elif done.index != frames[-1].index:
        after = frames[done.index + 1]
        out.add(
            "server.framing",
            f"stream[{after.index}]",
            f"a line after the done line ({quote(after.data, 80)})",
            expected="nothing after done: true",
            actual=quote(after.data, 80),
        )
    seen: dict[str, str] = {}
    for frame in lines:
        _ollama_calls(out, frame.path, frame.value, seen)
    if done is not None:
        _ollama_final(out, done.path, done.value)
